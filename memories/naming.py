"""Pure helpers for entity names: normalization, keys, pronouns and relationship terms."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

SPEAKER_PRONOUNS = frozenset({"i", "me", "my", "mine", "myself", "eu", "user", "the user", "speaker"})
RELATIONSHIP_TERMS = frozenset({
    "wife", "husband", "girlfriend", "boyfriend", "partner", "spouse", "mom", "mother", "dad", "father",
    "brother", "sister", "son", "daughter", "friend", "best friend", "boss", "coworker", "colleague",
    "manager", "grandma", "grandmother", "grandpa", "grandfather", "aunt", "uncle", "cousin", "kids",
    "children", "parents", "family", "amigo", "amiga",
})
_HONORIFICS = re.compile(r"^(mr|mrs|ms|miss|mx|dr|doctor|prof|professor)\.?\s+", re.IGNORECASE)
_MAN, _WOMAN = frozenset({"mr"}), frozenset({"mrs", "ms", "miss"})
_GENDERED_TITLES = _MAN | _WOMAN
_TITLE_KINDS = (_GENDERED_TITLES, frozenset({"dr", "prof"}))
_NON_WORD = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")


# Letters that are no base letter plus a mark, so decomposing leaves them whole: a writer without
# the key types "Lukasz" for "Łukasz", "Soren" for "Søren", "Aeron" for "Æron". Folded like accents.
# (A data migration, 0009_fold_letters, folds the aliases and keys stored before this table.)
LETTER_FOLDS = {"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "æ": "ae",
                "Æ": "Ae", "œ": "oe", "Œ": "Oe", "ß": "ss", "þ": "th", "Þ": "Th", "ħ": "h", "Ħ": "H", "ı": "i"}
_LETTER_TABLE = str.maketrans(LETTER_FOLDS)

# The bodies of regular expressions' character classes for a lower-case and a capital letter
# (Python's `re` has no \p{Ll}): the Latin letters of Latin-1, Latin Extended-A and -B and Latin
# Extended Additional, so "łódź", "brașov", "đà nẵng", "Şule" and "Ștefan" read as words as "lodz"
# and "Sule" do
_LATIN_BEYOND_LATIN1 = [chr(c) for c in (*range(0x100, 0x250), *range(0x1E00, 0x1F00))]
LOWER_LETTERS = "a-zß-öø-ÿ" + "".join(c for c in _LATIN_BEYOND_LATIN1 if c.islower())
UPPER_LETTERS = "A-ZÀ-ÖØ-Þ" + "".join(c for c in _LATIN_BEYOND_LATIN1 if c.isupper())


def strip_accents(text: str) -> str:
    """"Łukasz Wójcik" → "Lukasz Wojcik": marks dropped and mark-less letters folded."""
    if text.isascii():
        return text
    return _strip_marks(text.translate(_LETTER_TABLE))


_POSSESSIVE_S = re.compile(r"(?<=\w)['’]S\b")


def title_case(text: str) -> str:
    """"brackenbury's" → "Brackenbury's", "o'brien" → "O'Brien": `str.title()` without a capital S after
    a possessive's apostrophe."""
    return _POSSESSIVE_S.sub(lambda m: m.group().lower(), text.title())


def normalize_alias(name: str) -> str:
    """"São  Paulo!" → "sao paulo": the form aliases are stored and matched in."""
    # the same names and fact texts are compared again on every write: short ones are cached
    return _normalize_cached(name) if len(name) <= 256 else _normalize(name)


@lru_cache(maxsize=8192)
def _normalize_cached(name: str) -> str:
    return _normalize(name)


def _normalize(name: str, fold_letters: bool = True) -> str:
    text = (strip_accents(name) if fold_letters else _strip_marks(name)).casefold()
    text = _NON_WORD.sub(" ", text.replace("'s ", " ").replace("’s ", " "))
    return _SPACES.sub(" ", text).strip()


def unfolded_alias(name: str) -> str:
    """The normal form before mark-less letters were folded ("łukasz", not "lukasz"): the form a
    forget tombstone written then digested, so it must keep matching."""
    return normalize_alias(name) if name.isascii() else _normalize(name, fold_letters=False)


def _strip_marks(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def slugify(name: str) -> str:
    return normalize_alias(name).replace(" ", "_") or "unnamed"


def entity_key(entity_type: str, name: str) -> str:
    """"person:okafor" for "Dr. Okafor" and "Okafor": a title is no part of the key, except one
    that says who of a couple is meant before a lone surname ("person:mr_lee", "person:mrs_lee";
    "Mrs. Ana Lima" is "person:ana_lima")."""
    name = name.strip()
    title = _HONORIFICS.match(name)
    kept = title is not None and title.group(1).lower() in _GENDERED_TITLES and len(name[title.end():].split()) == 1
    return f"{normalize_type(entity_type)}:{slugify(name if kept else _HONORIFICS.sub('', name))}"


def normalize_type(entity_type: str) -> str:
    value = (entity_type or "concept").strip().lower()
    return re.sub(r"\s+", "_", value) or "concept"


def is_speaker_reference(name: str) -> bool:
    """"I", "me", "my", or a bare relationship term ("girlfriend") — both mean the speaker."""
    norm = normalize_alias(name)
    bare = norm.removeprefix("my ").strip()
    return norm in SPEAKER_PRONOUNS or norm in RELATIONSHIP_TERMS or bare in RELATIONSHIP_TERMS


def ngrams(text: str, max_len: int = 4) -> set[str]:
    """Every run of 1..max_len words of the normalized text: the word-boundary candidates that
    an alias lookup compares against."""
    words = normalize_alias(text).split()
    out: set[str] = set()
    for size in range(1, max_len + 1):
        for start in range(0, len(words) - size + 1):
            out.add(" ".join(words[start : start + size]))
    return out


def mentions(text: str, name: str, min_length: int = 3) -> bool:
    """Word-boundary, case- and accent-insensitive test that `name` appears in `text`."""
    norm_name = normalize_alias(name)
    if len(norm_name) < min_length:
        return False
    return f" {norm_name} " in f" {normalize_alias(text)} "


# --- first names, short forms and diminutives --------------------------------------------------

# Given names and their short forms. Below, the common ones, English and the best-known of other
# languages: their words are the given names the table knows (`in_nickname_table`). The `nicknames`
# package's table of English given names (`_package_nicknames`) adds the short forms it gives that
# begin as their name does ("Jo" for Joanne, "Em" for Emily) to what can be one person's names, not to
# the words read as names: it also lists "Art", "Chat" and "Angel". A spelling rule covers the rest
# ("Dan"/"Daniel", "Danny"/"Daniel", "Becca"/"Rebecca", "Lupita"/"Guadalupe").
_NICKNAME_LIST = """
liz lizzie lisa betty bess beth bessie betsy elsie libby eliza:elizabeth
tom tommy:thomas  bill billy will willy liam:william  bob bobby rob robbie bert:robert
dick rick ricky rich richie:richard  jack johnny:john  jim jimmy jamie:james
ted teddy ned ed eddie:edward,edmund  chuck charlie chas:charles  hank harry hal:henry
paddy pat:patrick  peggy maggie meg peg greta:margaret  molly polly mae:mary
sasha sacha alex lex xander:alexander,alexandra  sandy sandra:alexandra
tony:anthony,antonio  mike mikey mickey mick:michael  nick nicky:nicholas,nicolas
sam sammy:samuel,samantha  kathy katie kat kate kitty:katherine,catherine,kathleen
cathy cat:catherine  sue susie suzy:susan,susanna  jenny jen:jennifer
abby:abigail  gabe:gabriel  gabby:gabrielle,gabriela  joe joey:joseph  jo josie:josephine
steve stevie:stephen,steven  chris kit:christopher,christine,christina
matt matty:matthew  andy drew:andrew  greg:gregory  larry:lawrence  lenny len:leonard
ron ronnie:ronald  don donny:donald  walt wally:walter  fred freddie freddy:frederick
al:albert,alfred  bia:beatriz  bea:beatrice,beatriz  trish tricia patty patsy:patricia
nate:nathaniel,nathan  zach zack:zachary  ben benji benny:benjamin  manny:emmanuel,manuel
nacho:ignacio  pepe:jose  paco:francisco  lupe:guadalupe  dave davey:david  jake:jacob
jeff:jeffrey  jerry gerry:gerald  ken kenny:kenneth  mandy:amanda  nan nancy:ann,anne
nell nellie ellie:eleanor,helen  ollie:oliver,olivia  tess tessa:theresa  terry:terence,theresa
vicky vic:victoria  wendy:gwendolyn  archie:archibald  frankie frank:francis,franklin
fran:frances  sally sadie:sarah  josh:joshua  misha:mikhail  dima:dmitri  vanya:ivan  pasha:pavel
seb:sebastian  theo:theodore  toni:antonia  penny:penelope  dolly dot:dorothy  becky:rebecca
jackie:jacqueline  ginny:virginia  lottie:charlotte  mitch:mitchell  stu:stuart  vince:vincent
hattie:harriet  jules:julian,julia  max:maximilian,maxwell  izzy:isabel,isabella  bella:isabella
sid:sidney  tim timmy:timothy  phil:philip,phillip  pete:peter  percy:percival  reggie:reginald
ray:raymond  ricky:ricardo  sophie:sophia  tilly:matilda
kasia:katarzyna  gosia:malgorzata  ola:aleksandra  basia:barbara  asia:joanna  kuba:jakub
bartek:bartlomiej  tomek:tomasz  wojtek:wojciech  staszek:stanislaw  zosia:zofia  marysia:maria
katya:ekaterina,yekaterina  natasha:natalia,natalya  masha:maria  dasha:daria  tanya:tatiana,tatyana
sveta:svetlana  kolya:nikolai  lyosha:alexei,aleksei  volodya:vladimir  zhenya:evgeny,evgenia
nastya:anastasia  olya:olga  lola:dolores  charo:rosario  pili:pilar  quique:enrique  chus:jesus
pancho:francisco  memo:guillermo  lalo:eduardo  beto:alberto,roberto  beppe peppe:giuseppe
gigi:luigi  sepp:josef  hannes:johannes
ze:jose  chico:francisco  nando:fernando  quim:joaquim  guto:augusto  duda:eduarda,eduardo  rafa:rafael
gabi:gabriela,gabriel,gabriele  juanjo:juan  manolo:manuel  concha:concepcion  fito:adolfo  tono:antonio
vova:vladimir  seryozha:sergei,sergey  petya:pyotr  yura:yuri  lena:elena,yelena  lyuba:lyubov  tolya:anatoly
steffi:stefanie  uli:ulrich  hansi:hans  franek:franciszek  jurek:jerzy  gosha:georgy
"""


def _nickname_table(listing: str) -> dict[str, tuple[str, ...]]:
    """"tom tommy:thomas  ed:edward,edmund" → {"tom": ("thomas",), ..., "ed": ("edward", "edmund")}."""
    table: dict[str, tuple[str, ...]] = {}
    for shorts, fulls in re.findall(r"((?:[a-z]+ )*[a-z]+):([a-z,]+)", listing):
        for short in shorts.split():
            table[short] = tuple(dict.fromkeys([*table.get(short, ()), *fulls.split(",")]))
    return table


def _package_nicknames() -> dict[str, tuple[str, ...]]:
    """The `nicknames` package's short forms that begin as their full name does ("jo" for Joanne, "em"
    for Emily), and are no full name of the table themselves. Its looser pairs would join two people:
    full names listed for others ("Emily" for Amelia), forms that share a full name ("Carl" and
    "Charlie" for Charles) or rhymes ("Lloyd" for Floyd); those stay out, and these pairs are read
    one by one, never through a full name they share."""
    from nicknames import NickNamer

    namer = NickNamer()
    full_names = frozenset(namer.nickname_lookup)
    return {short: tuple(sorted(kept)) for short, fulls in namer.canonical_lookup.items()
            if short not in full_names
            and (kept := {full for full in fulls if full != short and full[:2] == short[:2]})}


_NICKNAMES = _nickname_table(_NICKNAME_LIST)
_PACKAGE = _package_nicknames()
_DIMINUTIVE_ENDINGS = ("ie", "y", "ey", "i")


_TABLE_NAMES = frozenset(_NICKNAMES) | frozenset(full for fulls in _NICKNAMES.values() for full in fulls)


def in_nickname_table(word: str) -> bool:
    """A given name the short-form table holds, as a short form or a full name ("basia", "jakub")."""
    return _fold(word) in _TABLE_NAMES


# the table read the other way: a full first name → its short forms
_SHORT_FORMS = {full: tuple(short for short, fulls in _NICKNAMES.items() if full in fulls)
                for full in {full for fulls in _NICKNAMES.values() for full in fulls}}


def short_forms_of(name: str) -> tuple[str, ...]:
    """The table's short forms of a full first name ("José" → "ze", "pepe"), normalized."""
    return _SHORT_FORMS.get(_fold(name), ())


def nickname_of(name: str) -> str:
    """The full first name a known nickname stands for ("Paddy" → "patrick"), else ""."""
    return next(iter(_NICKNAMES.get(_fold(name), ())), "")


def _fold(name: str) -> str:
    return normalize_alias(name).replace(" ", "")


def first_names_compatible(short: str, full: str, either_way: bool = True) -> bool:
    """Could `short` be the first name `full` goes by? Same name up to accents and punctuation,
    a short form ("Dan"/"Daniel", "Sash"/"Sasha"), a diminutive ("Danny"/"Daniel",
    "Maddie"/"Madison", "Kate"/"Katherine"), a tail ("Becca"/"Rebecca") or a known nickname.
    Not `either_way`: only `short` may be the shorter form ("Tom" never stands for "Toronto"'s
    first word the other way round)."""
    a, b = _fold(short), _fold(full)
    if not a or not b:
        return False
    if a == b or _diminutive_of(a, b) or either_way and _diminutive_of(b, a):
        return True
    if len(a) > len(b):
        if not either_way:
            return (b in _NICKNAMES.get(a, ()) or a in _NICKNAMES.get(b, ()) or a in _PACKAGE.get(b, ())
                    or any(b == stem + "e" for stem in _ending_stems(a)))
        # "Gracie" for Grace, "Rosie" for Rose; not "Dani" after Dan, "Evie" for Eva: names of their own
        a, b = b, a
    if b in _NICKNAMES.get(a, ()) or a in _NICKNAMES.get(b, ()) or set(_NICKNAMES.get(a, ())) & set(
            _NICKNAMES.get(b, ())) or b in _PACKAGE.get(a, ()):
        return True
    if _skeleton(b) in {skeleton for full in _NICKNAMES.get(a, ()) for skeleton in _skeletons(full)}:
        return True  # "Sasha" for "Aleksandr", "Alex" for "Alejandro": the table's "Alexander" spelled another way
    if len(a) >= 3 and b.startswith(a):
        return True
    if _ending_on(a, b):
        return True
    if len(a) == 5 and a.endswith("s") and b == a[:-1] + b[-1:] and b[-1:] in ("a", "e", "i", "o"):
        return True  # chat's "-s" for the last vowel: "kwams" for Kwame (not "Lars" for Lara, "Hans" for Hana)
    if (len(a) >= 5 and a.endswith("o") and a[-2] == a[-3] and a[-2] not in "aeiou" and b.startswith(a[:-2])
            and b[-1] not in "aeiou"):  # not "Robbo" for Roberta, "Pippo" for Pippa
        return True  # "Jonno" for Jonathan, "Robbo" for Robert: a doubled consonant and "-o"
    if len(a) >= 3 and a.endswith("z") and b.startswith(a[:-1] + "s") and b[len(a):len(a) + 1] in tuple("aeiou"):
        return True  # "Roz" for Rosalind: a clipped "s" said as "z" (not "Jez" for Jessica)
    if (zed := a.removesuffix("zza") if a.endswith("zza") else a.removesuffix("z")) != a and 2 <= len(zed) <= 3 and (
            zed[-1] in "aeiou" and b.startswith(zed + "r") and a not in _TABLE_NAMES):
        return True  # "Baz", "Bazza" for Barry, "Daz" for Darren: the first syllable, its "r" said as "z"
    if len(a) >= 3 and len(b) >= 6 and b[0] in "aeiou" and a[0] not in "aeiou" and a not in _TABLE_NAMES and any(
            len(stem) >= 3 and b[1:].startswith(stem) for stem in (a, *_ending_stems(a))):
        return True  # "Liv" for Olivia: the name after its opening vowel (not "Ben", a name the tables give others)
    if a.endswith("e") and len(a) >= 4 and b.startswith(a[:-1]):
        return True
    # a clipped end or middle of a longer name: "Tina" for Valentina, "Seun" for Oluwaseun, "Funmi"
    # for Olufunmilayo
    return len(a) >= 4 and (b.endswith(a) or len(a) >= 5 and 2 <= b.find(a) <= len(b) - len(a) - 2)


def _ending_stems(short: str) -> list[str]:
    """A folded name without an English diminutive ending ("vicky" → "vick", "vik")."""
    plains = [short.removesuffix(e) for e in _DIMINUTIVE_ENDINGS if short.endswith(e)]
    return list(dict.fromkeys(stem for plain in plains for stem in (plain, plain.replace("ck", "k"))))


def _ending_on(short: str, full: str) -> bool:
    """`short` is `full`'s opening with a diminutive ending: "Danny" (Daniel), "Vicky" (Vikram), "Gracie"."""
    return any(len(stem) >= 3 and (full.startswith(stem) or full.startswith(stem[:-1]) and stem[-1] == stem[-2])
               for stem in _ending_stems(short))


# Portuguese, Spanish and Italian diminutive endings: "Aninha" (Ana), "Pedrinho" (Pedro), "Juanito"
# (Juan), "Lupita" (Guadalupe, by its clipped end "Lupe"); Turkish endearments, folded: "Aylincim",
# "Ayşeciğim", "Serdarcım" (Aylin, Ayşe, Serdar: "my dear ...")
_DIMINUTIVE_SUFFIXES = ("zinha", "zinho", "inha", "inho", "cita", "cito", "ita", "ito", "illa", "illo",
                        "cigim", "cugum", "cim", "cum")


def _stems(short: str) -> list[str]:
    """What a folded name may be a diminutive of, before its ending ("lupita" → "lup"). A stem of two
    letters only before Portuguese -inha/-inho ("aninha"): "Anita", "Rita" are names of their own."""
    return [stem for suffix in _DIMINUTIVE_SUFFIXES if (stem := short.removesuffix(suffix)) != short
            and len(stem) >= (2 if suffix.endswith(("inha", "inho")) else 3)]


def diminutive_stems(name: str) -> set[str]:
    """The stems a diminutive's name may be read from ("Lupita" → "lup"; "Aninha" → "an"), folded."""
    return set(_stems(_fold(name)))


def _diminutive_of(short: str, full: str) -> bool:
    """Is `short` (folded) `full`'s name, or its clipped end, with a diminutive ending: the name
    itself, or the name without its last vowel, before the ending?"""
    for stem in _stems(short):
        if full == stem or full[:-1] == stem and full[-1] in "aeiou":
            return True
        if len(stem) >= 3 and len(full) > len(stem) + 2 and full[-1] in "aeiou" and full[:-1].endswith(stem):
            return True
    return False


# what a clipped family name takes to become a nickname: "Hammo" (Hammill), "Sully" (Sullivan),
# "Doyler" (Doyle), "Robbo" (Robson), "Becks" (Beckett), "Pikey" (Pike; but "Pikes" is the family)
_FAMILY_NICKNAME_ENDINGS = ("y", "ie", "o", "er", "s", "sy", "za", "ers")


def clipped_family_name(word: str, family: str) -> bool:
    """Could `word` be a nickname made of the family name `family`: its start ("naka" for Nakamura,
    at least four letters), or its start with a nickname's ending ("hammo", "doyler", "robbo")?"""
    a, b = _fold(word), _fold(family)
    if not a or not b or a == b or len(b) < 4:
        return False
    if len(a) >= 4 and b.startswith(a):
        return True
    # "rourkey" for O'Rourke, "donaghy" for McDonagh: the name past its O' or Mc
    if (bare := b[1:] if b[0] == "o" and family.strip()[1:2] in ("'", "’") else b[3:] if b.startswith("mac")
            else b[2:] if b.startswith("mc") else "") and len(bare) >= 4 and bare != b:
        return clipped_family_name(word, bare)
    if a.endswith("e") and len(a) >= 5 and b.startswith(a[:-1]):
        return True  # "darce" for Darcy
    for ending in _FAMILY_NICKNAME_ENDINGS:
        stem = a.removesuffix(ending) if a.endswith(ending) else ""
        doubled = stem[-1:] == stem[-2:-1]  # "robbo": Robson's "rob" with its consonant doubled
        if len(stem) >= 3 and (stem != b or ending != "s") and (
                b.startswith(stem) or doubled and b.startswith(stem[:-1])):
            return True
    return False


def _skeleton(name: str) -> str:
    """A name's first letter and its consonants, spellings folded: "Aleksandr", "Alexander" → "alksndr";
    "Dmitry", "Dmitri" → "dmtr"."""
    folded = name.replace("x", "ks").replace("ph", "f").replace("ck", "k")
    consonants = re.sub(r"[aeiouy]", "", folded[1:])
    return folded[:1] + re.sub(r"(.)\1+", r"\1", consonants)


def _skeletons(name: str) -> set[str]:
    """The skeleton, and where the name has an x, the one with the j Spanish writes for it
    ("Alexander", "Alejandro" → "aljndr")."""
    return {_skeleton(name), _skeleton(name.replace("x", "j"))}


def person_words(name: str) -> list[str]:
    """The normalized words of a person name without its title ("Dr. Kate O'Brien" → kate, obrien)."""
    return normalize_alias(_HONORIFICS.sub("", name.strip()).replace("'", "").replace("’", "")).split()



def person_names_compatible(a: str, b: str, either_way: bool = True) -> bool:
    """Two person names that can denote one person: compatible first names, and the same
    surname when both carry one ("Sam Patel" is never "Sam Whitfield"). Not `either_way`: `a`
    is the name heard now, so its first name may be a short form of `b`'s but not the reverse
    (unless both carry the same surname)."""
    ta, tb = person_words(a), person_words(b)
    if not ta or not tb:
        return False
    ja, jb = _joined_words(a), _joined_words(b)
    if len(jb) > len(ja) and ja == jb[1:] and (len(ja) > 1 or len(ta) > 1):
        return True  # "Jun-ho" / "Bee Hoon": the given name of "Seo Jun-ho", "Lim Bee Hoon" said family name first
    return _words_compatible(ta, tb, either_way) or (ja != ta or jb != tb) and _words_compatible(ja, jb, either_way)


def family_name_moved(a: str, b: str) -> bool:
    """"Khải Đoàn" / "Đoàn Văn Khải", "Minh Anh Nguyen" / "Nguyen Minh Anh": a name written family name
    first (Vietnamese, Chinese, Korean) said given name first, a middle name left out or kept: the
    same words but for middle ones, with the family name moved from one end to the other; one of the
    two has three words or more."""
    ja, jb = _joined_words(a), _joined_words(b)
    return _moved(ja, jb) or _moved(jb, ja)


def _moved(short: list[str], full: list[str]) -> bool:
    # the written-first form keeps a middle name: two names of two words swapped ("Paul James",
    # "James Paul") are as often two people
    if len(short) < 2 or len(full) < 3 or len(full) < len(short) or short == full:
        return False
    return short[-1] == full[0] and short[0] != full[0] and short[:-1] == full[len(full) - len(short) + 1:] or (
        short[0] == full[-1] and short[1:] == full[:len(short) - 1] and short[0] != full[0])


def _words_compatible(ta: list[str], tb: list[str], either_way: bool) -> bool:
    if len(ta) > 1 and len(tb) > 1:
        if ta[-1] != tb[-1]:
            return False
        if len(ta[0]) == 1 or len(tb[0]) == 1:  # "H. Whitby" signs for Hugo Whitby: the initial of the given name
            return ta[0][0] == tb[0][0]
        either_way = True
    return first_names_compatible(ta[0], tb[0], either_way)


def _joined_words(name: str) -> list[str]:
    """person_words with a hyphenated name kept one word: "Mary-Jane Whitaker" → maryjane, whitaker."""
    return person_words(re.sub(r"(?<=\w)[-‐‑](?=\w)", "", name))


def surname_of(name: str) -> str:
    """The normalized surname of a full person name ("Katherine O'Brien" → "obrien"), else ""."""
    words = person_words(name)
    return words[-1] if len(words) > 1 else ""


def titled_form(name: str) -> str:
    """"Mrs. Lim" → "mrs. lim": a title with its period as written, which the normalized alias
    ("mrs lim") loses; "" for a name without one."""
    match = _HONORIFICS.match(name.strip())
    if match is None or not match.group().rstrip().endswith("."):
        return ""
    return _SPACES.sub(" ", strip_accents(name.strip()).casefold())


# letters, with spaces, hyphens, apostrophes and periods between them ("jean-luc", "o'brien", "st. kilda")
_WRITTEN_NAME = re.compile(r"[^\W\d_]+(?:(?:[ .'’-]|\. )[^\W\d_]+)*\.?")


def written_form(name: str) -> str:
    """"Zé" → "zé", "Jean-Luc" → "jean-luc", "O'Brien" → "o'brien": the name in lower case with
    its accents, hyphens and apostrophes as written, which the normalized alias ("ze",
    "jean luc") loses; "" when the two are the same, so a plain name is stored once. The form a
    person reads, and that a client matching names as written looks for."""
    text = _SPACES.sub(" ", name.strip()).casefold()
    if (not text or len(text) > 255 or text == normalize_alias(name) or not normalize_alias(name)
            or not _WRITTEN_NAME.fullmatch(text)):
        return ""  # a name with other marks ("Apple (company)", "at&t") is kept in its plain form only
    return text


# what Japanese, Korean and Hindi speakers put after a name to address someone politely
# ("Tanaka-san", "Kim-ssi", "Sharma-ji"): a title, like "Mr." before one
HONORIFICS_AFTER_HYPHEN = ("san", "sama", "kun", "chan", "sensei", "senpai", "ssi", "nim", "ji")
HONORIFIC_SUFFIX = re.compile(rf"[-‐‑](?:{'|'.join(HONORIFICS_AFTER_HYPHEN)})$", re.IGNORECASE)


def same_titled_person(asked: str, known: str) -> bool:
    """Two titled forms of one surname that may be one person: "Sato-san" and "Mr. Sato", "Dr. Okafor"
    and "Mrs. Okafor"; not "Mr. Lee" and "Mrs. Lee", whose gendered titles differ."""
    surname = titled_surname(asked)
    if not surname or titled_surname(known) != surname:
        return False
    titles = {m.group(1).lower() for n in (asked, known) if (m := _HONORIFICS.match(n.strip()))}
    return len(titles & _GENDERED_TITLES) <= 1


_TITLE_SPELLINGS = {"doctor": "dr", "professor": "prof"}


def title_of(name: str) -> str:
    """"Dr. Rahimi", "doctor rahimi" → "dr"; "Mrs Lee" → "mrs": the title before a name, one spelling
    each; "" for a name without one."""
    match = _HONORIFICS.match(name.strip())
    return _TITLE_SPELLINGS.get(word := match.group(1).lower(), word) if match else ""


def genders_differ(a: str, b: str) -> bool:
    """Titles (as `title_of` spells them) of a man and of a woman: "mr" and "mrs"."""
    return a in _MAN and b in _WOMAN or a in _WOMAN and b in _MAN


def titles_differ(a: str, b: str) -> bool:
    """"mrs" and "ms", "dr" and "prof": two titles of one kind, which tell two people of one surname
    apart; "dr" and "mrs" may be one woman."""
    return a != b and any(a in kind and b in kind for kind in _TITLE_KINDS)


def title_sex(name: str) -> str:
    """"m" for "Mr Tolland", "f" for "Mrs Lee", "Ms. Harwick" or "Miss Yeo"; "" for any other title or none."""
    title = _HONORIFICS.match(name.strip())
    said = title.group(1).lower() if title else ""
    return "m" if said in _MAN else "f" if said in _WOMAN else ""


def titled_surname(name: str) -> str:
    """"Dr. Fisher", "Doctor Okafor", "Mrs Lee", "Tanaka-san" → the normalized surname; "" for
    anything else."""
    stripped = _HONORIFICS.sub("", HONORIFIC_SUFFIX.sub("", name.strip()))
    if stripped == name.strip():
        return ""
    words = person_words(stripped)
    return words[0] if len(words) == 1 else ""


# --- acronyms ------------------------------------------------------------------------------------

_SMALL_WORDS = frozenset({"of", "the", "and", "for", "de", "du", "der", "la", "le", "a", "an", "at", "in", "on", "&"})


def acronym_forms(name: str, limit: int = 64) -> set[str]:
    """The initialisms a multi-word name can go by: "Bank of America" → {"boa", "ba", "bofa"},
    "University College Dublin" → {"ucd"}. A small word ("of", "the", "and") may give its
    initial, be left out, or be spelled out; every other word gives its initial."""
    words = [w for w in re.split(r"[\s\-/]+", strip_accents(name).casefold()) if w]
    words = [re.sub(r"[^\w&]", "", w) for w in words]
    words = [w for w in words if w]
    if len(words) < 2:
        return set()
    forms = {""}
    for word in words:
        options = {word[0]} if word not in _SMALL_WORDS else {word[0] if word != "&" else "", "", word}
        forms = {f + o for f in forms for o in options}
        if len(forms) > limit:
            return set()
    return {f for f in forms if len(f) >= 2}


def is_acronym_of(short: str, full: str) -> bool:
    """"BofA" / "Bank of America", "UCD" / "University College Dublin" (case-insensitive):
    the short name, one word, is one of the full name's initialisms."""
    token = strip_accents(short.strip()).casefold().replace(".", "").replace("&", "")
    if not token or " " in token or not token.isalnum() or len(token) < 2:
        return False
    return token in acronym_forms(full) or _clipped_form_of(short.strip(), full)


def _clipped_form_of(short: str, full: str) -> bool:
    """"UMich" / "University of Michigan", "UPenn" / "University of Pennsylvania": each
    capitalized part of the short name begins the next word of the full one (a small word
    may be skipped), and every other word is covered."""
    parts = [p.casefold() for p in re.findall(r"[A-Z][a-z]*", strip_accents(short))]
    if len(parts) < 2 or "".join(parts) != strip_accents(short).casefold() or all(len(p) == 1 for p in parts):
        return False
    words = [w for w in re.split(r"[\s\-/,]+", strip_accents(full).casefold()) if w]

    def covers(i: int, j: int) -> bool:
        if i == len(parts):
            return all(w in _SMALL_WORDS for w in words[j:])
        return j < len(words) and (words[j].startswith(parts[i]) and covers(i + 1, j + 1)
                                   or words[j] in _SMALL_WORDS and covers(i, j + 1))

    return len(words) >= 2 and covers(0, 0)
