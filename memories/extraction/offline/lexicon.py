"""Word lists for the offline extractor: plain data, no logic.

Everything is lower-case; callers compare `word.lower()`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from memories.roles import ROLE_RELATIONS, ROLE_TERMS

# the frames (frames.py) and the word lists that go with them
FRAME_DATA = tomllib.loads(Path(__file__).with_name("frames.toml").read_text(encoding="utf-8"))
SPEECH_VERBS = frozenset(FRAME_DATA["people"]["speech"])
PERSON_VERBS = SPEECH_VERBS | frozenset(FRAME_DATA["people"]["life"])
MOVED_BY = frozenset(FRAME_DATA["people"]["moved_by"])


def word_set(text: str) -> frozenset[str]:
    """Whitespace-separated words → frozenset."""
    return frozenset(text.split())


# Capitalized words that are not names: pronouns, determiners, interjections, common sentence
# starters, calendar words, family titles used as names ("Mom"), chat acronyms.
STOP_CAPS = word_set("""
i i'm i've i'd i'll me my mine myself we us our ours you your yours he him his she her hers it its
they them their theirs this that these those there here who whom whose what which when where why how
a an the and or but nor so yet for of to in on at by with from as if then than because while though
although unless until since after before also just only even still yet already again ever never not no
yes yeah yep yup nope ok okay sure right well oh ooh ah aw aww wow whoa hey hi hello hiya howdy yo bye
goodbye thanks thank thx ty please sorry congrats congratulations cheers lol lmao haha hahaha hehe omg
omfg btw idk tbh imo imho fyi asap diy ps pm am tv ok np brb ttyl gg rip xoxo cool great awesome nice
good bad amazing wonderful fantastic perfect lovely sweet cute fun glad happy sad excited proud totally
definitely absolutely really truly honestly actually basically literally seriously anyway anyways
besides meanwhile otherwise however therefore plus maybe perhaps probably hopefully luckily sadly
unfortunately fortunately thankfully interestingly surprisingly apparently obviously clearly yesterday
today tomorrow tonight now later soon recently lately last next every each all some any many much more
most few several both either neither other another such same own something anything everything nothing
someone anyone everyone nobody everybody somebody one two three four five six seven eight nine ten
first second third once twice let let's lets gonna wanna gotta kinda sorta dear love miss welcome
sounds sound looks look seems seem feels feel guess think hope wish bet agree know see hear thought
thinking speaking talking having being getting going doing making taking trying seeing hearing
keep take make give go come get have has had do does did done is are was were be been can could will
would shall should may might must need needs got went came made took gave said told asked
monday tuesday wednesday thursday friday saturday sunday weekend weekday
mondays tuesdays wednesdays thursdays fridays saturdays sundays weekends
january february march april june july august september october november december
christmas xmas easter thanksgiving halloween hanukkah diwali ramadan eid valentine valentine's
mom mum mommy mama dad daddy papa grandma grandpa granny nana god gosh jesus lord sir madam
mr mrs ms dr doctor prof professor st mt english spanish portuguese french german italian chinese japanese american
british brazilian canadian mexican european asian african indian latino latina
happy merry birthday morning afternoon evening night day week month year
dude bro guys buddy babe honey hun friend friends
yay ugh hmm hm um umm uh uhh meh whew phew argh shh psst eh huh ahh oops
""")

# The last word of a holiday or calendar phrase ("New Year's Eve", "Mother's Day", "Christmas
# Eve", "Memorial Day", "Burns Night"): the capitalized words before it are no name.
CALENDAR_TAILS = word_set("day days eve night year years")

# Words that open a greeting or thanks; a name right after them is a vocative ("Hey Mel!").
GREETING_WORDS = word_set(
    "hey hi hello hiya howdy yo thanks thank bye goodbye congrats congratulations dear morning"
)

HONORIFICS = word_set("mr mrs ms miss mx dr doctor prof professor sir dame")

# Lower-case words allowed inside a capitalized name ("Rio de Janeiro", "Bank of America").
NAME_CONNECTORS = word_set("de da do dos das del della di van von der den la le du")
OF_HEADS = word_set("""
university bank institute college school academy museum department ministry city republic kingdom
church gulf bay isle isles lake statue cathedral palace center centre house society association
federation union league board office court hall order port cape
""")

ORG_SUFFIXES = word_set("""
inc corp corporation co company ltd llc plc gmbh sa tech technologies technology labs lab bank
university college school institute academy group systems solutions software studios studio
foundation association hospital clinic agency partners capital ventures media network networks
industries holdings motors airlines airways pharma health consulting bakery cafe café restaurant
club fc society union league council committee ministry department store stores market choir chorus
orchestra ensemble troupe guild collective
therapeutics energy law legal llp analytics logistics robotics biotech insurance
""")
# Common nouns that, before "called/named X", make X an organization ("a startup called Vitrio").
ORG_NOUNS = word_set("""
startup start-up company firm business agency brand band restaurant bar cafe café shop store studio
practice clinic school app platform nonprofit charity organization organisation outfit installer
consultancy lab team label publisher bakery gym chain franchise brewery manufacturer supplier retailer
roastery winery distillery salon workshop club choir league society orchestra
""")

ORG_PREFIXES = word_set(
    "university bank institute college school academy department ministry banco banca banque universidad "
    "universidade université universität instituto institut"
)

PLACE_SUFFIXES = word_set("""
city town street avenue ave road rd boulevard park lake river mountain mountains beach island islands
canyon valley county bay falls square bridge coast hills forest village province region desert ocean
sea gulf harbor harbour peninsula heights springs trail national
""")
PLACE_PREFIXES = word_set("mount lake cape port fort saint san santa são sao")

# The gazetteer: GeoNames' countries, US states and cities of 50,000+ people, less ordinary words
# and given names (places.txt, built by scripts/build_places.py); and below, the places people
# name in chat: the forms the gazetteer lacks (short forms, regions, names it leaves out as given
# names) and the well-known places that say "place" at full weight even alone (FAMILY_NAME_PLACES).
_GAZETTEER = frozenset(
    line for line in (Path(__file__).with_name("places.txt").read_text(encoding="utf-8").splitlines())
    if line and not line.startswith("#")
)
_WRITTEN_PLACES = word_set("""
brazil brasil portugal spain france germany italy england scotland ireland wales netherlands belgium
switzerland austria sweden norway denmark finland poland greece turkey russia ukraine china japan
korea india pakistan thailand vietnam indonesia philippines australia canada mexico argentina chile
peru colombia venezuela uruguay paraguay bolivia ecuador cuba egypt morocco nigeria kenya israel iran
iraq uk usa america europe asia africa antarctica hawaii alabama alaska arizona arkansas california
colorado connecticut delaware florida georgia idaho illinois indiana iowa kansas kentucky louisiana
maine maryland massachusetts michigan minnesota mississippi missouri montana nebraska nevada ohio
oklahoma oregon pennsylvania tennessee texas utah vermont virginia washington wisconsin wyoming
rio curitiba brasília brasilia salvador recife fortaleza florianópolis florianopolis manaus belém
belem goiânia goiania campinas santos niterói niteroi natal vitória joinville londrina lisbon
lisboa porto madrid barcelona paris london berlin munich rome milan venice florence amsterdam
brussels vienna prague budapest warsaw dublin edinburgh athens istanbul moscow tokyo kyoto osaka
seoul beijing shanghai singapore bangkok dubai mumbai delhi sydney melbourne toronto vancouver
montreal santiago lima bogotá bogota cancun havana cairo nairobi nyc la sf chicago boston seattle
austin houston dallas miami atlanta denver portland phoenix philadelphia detroit nashville orlando
brooklyn manhattan yellowstone hollywood
""") | frozenset(
    {
        "latin america",
        "south america",
        "north america",
        "new zealand",
        "south africa",
        "saudi arabia",
        "united states",
        "united kingdom",
        "costa rica",
        "puerto rico",
        "new hampshire",
        "new jersey",
        "new mexico",
        "new york",
        "north carolina",
        "north dakota",
        "rhode island",
        "south carolina",
        "south dakota",
        "west virginia",
        "são paulo",
        "sao paulo",
        "rio de janeiro",
        "porto alegre",
        "belo horizonte",
        "hong kong",
        "mexico city",
        "buenos aires",
        "cape town",
        "new york city",
        "los angeles",
        "san francisco",
        "las vegas",
        "san diego",
        "new orleans",
        "silicon valley",
        "bay area",
        "grand canyon",
        "the us",
        "the uk",
    }
)
PLACES = _GAZETTEER | _WRITTEN_PLACES
# One word of the gazetteer alone is also many a family name ("Preston", "Sheffield"): it says
# place less firmly than a place people name in chat.
FAMILY_NAME_PLACES = frozenset(p for p in _GAZETTEER - _WRITTEN_PLACES if " " not in p)

FEMALE_NAMES = word_set("""
ana anna maria mariana clara fernanda juliana camila beatriz carolina caroline carol melanie mel joanna
gina audrey deborah debbie jolene sarah sara emma olivia ava sophia sofia isabella isabel mia emily
abigail madison elizabeth liz chloe ella lily hannah jessica jennifer jen jenny amanda ashley
stephanie nicole rachel laura lauren megan rebecca becky katie kate karen linda susan lisa nancy
betty helen sandra donna ruth sharon michelle kimberly amy angela melissa brenda anne julia julie
kelly christina tiffany natalie victoria alice diana eva lucy zoe leah amelia charlotte harper
evelyn aria luna nina paula patricia gabriela larissa leticia letícia renata vanessa aline bruna
luiza luisa helena manuela valentina marta marina raquel priscila tatiana adriana cristina daniela
carla bianca lucia lúcia teresa rita sonia sônia jane mary tina molly holly kim joan lara lorena
giovanna yasmin alessandra simone eliane claudia cláudia vera regina roberta flávia flavia
monica mônica heloísa heloisa cecília cecilia olga elena irene margaret martha emily samantha
rose maya nora ellie hazel violet aurora stella lucy penelope layla scarlett grace chelsea
brittany courtney heather erin andrea jasmine alexis kayla taylor jade ruby iris
""")
MALE_NAMES = word_set("""
rafael thiago tiago guilherme ricardo pedro joão joao marcos lucas gabriel mateus matheus bruno
felipe gustavo rodrigo leonardo daniel diego eduardo fernando carlos andré andre paulo marcelo
vinicius vinícius henrique caio igor renato sergio sérgio fabio fábio luiz luis luís jose josé
antonio antônio francisco miguel arthur heitor davi bernardo samuel enzo murilo otavio otávio
joaquim jon john nate nathan tim tom thomas andrew james evan calvin dave david michael william
richard joseph charles christopher matthew anthony mark donald steven paul kevin brian george
edward ronald kenneth jason jeffrey ryan jacob gary nicholas eric jonathan stephen larry justin
scott brandon benjamin gregory raymond patrick alexander jack dennis jerry tyler aaron adam henry
zachary peter kyle walter ethan jeremy harold keith christian roger noah gerald carl terry sean
austin lawrence jesse dylan bryan joe jordan billy bruce albert willie logan alan juan wayne roy
ralph randy eugene vincent russell elijah louis bobby philip johnny mike bob leo oscar oliver
liam mason ben dan chris harry hugo felix owen luke isaac caleb jake josh joshua matt nick rob
robert steve tony victor hector marco mario luca giovanni ahmed mohammed omar ali raj arjun
""")
UNISEX_NAMES = word_set("sam alex jordan taylor casey riley morgan jamie robin kris charlie max")
FIRST_NAMES = FEMALE_NAMES | MALE_NAMES | UNISEX_NAMES

# Name-like words that are also ordinary words: no evidence of a name at the start of a sentence.
AMBIGUOUS_NAMES = word_set(
    "will may june april mark bill frank rose grace joy hope faith sky max art pat sue"
)

# Kinship / social role term → (relation, reversed). reversed: the named person is the source
# ("my mom Ana" → Ana parent_of speaker); otherwise the owner is the source.
KINSHIP: dict[str, tuple[str, bool]] = {
    **dict.fromkeys(["wife", "husband", "spouse"], ("spouse_of", False)),
    **dict.fromkeys(
        ["girlfriend", "boyfriend", "partner", "fiance", "fiancé", "fiancee", "fiancée", "bf", "gf"],
        ("partner_of", False),
    ),
    **dict.fromkeys(
        [
            "mom",
            "mother",
            "mum",
            "mam",
            "mammy",
            "mummy",
            "mama",
            "mommy",
            "dad",
            "father",
            "papa",
            "daddy",
            "stepmom",
            "stepmother",
            "stepdad",
            "stepfather",
            "parent",
        ],
        ("parent_of", True),
    ),
    **dict.fromkeys(["son", "daughter", "kid", "child", "stepson", "stepdaughter"], ("parent_of", False)),
    **dict.fromkeys(["brother", "sister", "sibling", "twin", "bro", "sis"], ("sibling_of", False)),
    **dict.fromkeys(
        ["grandma", "grandmother", "grandpa", "grandfather", "granny", "grandparent"],
        ("grandparent_of", True),
    ),
    **dict.fromkeys(["grandson", "granddaughter", "grandchild", "grandkid"], ("grandparent_of", False)),
    **dict.fromkeys(["uncle", "aunt", "auntie"], ("aunt_or_uncle_of", True)),
    **dict.fromkeys(["nephew", "niece"], ("aunt_or_uncle_of", False)),
    "cousin": ("cousin_of", False),
    **dict.fromkeys(["friend", "buddy", "pal", "bestie", "bff"], ("friend_of", False)),
    **dict.fromkeys(["boss", "manager", "supervisor"], ("manager_of", True)),
    **dict.fromkeys(["employee", "assistant", "intern"], ("manager_of", False)),
    **dict.fromkeys(["coworker", "co-worker", "colleague", "teammate", "workmate"], ("colleague_of", False)),
    **dict.fromkeys(["neighbor", "neighbour"], ("neighbor_of", False)),
    **dict.fromkeys(["roommate", "flatmate", "housemate"], ("roommate_of", False)),
    "mentor": ("mentor_of", True),
    "mentee": ("mentor_of", False),
    **dict.fromkeys(["teacher", "professor", "tutor", "coach"], ("teacher_of", True)),
    "student": ("teacher_of", False),
    "therapist": ("therapist_of", True),
    "doctor": ("doctor_of", True),
    **dict.fromkeys(["cofounder", "co-founder"], ("cofounder_of", False)),
    # roles someone holds for the owner: one current holder each ("my dentist", "my landlord")
    **{term: (ROLE_RELATIONS[role], True) for term, role in ROLE_TERMS.items()},
}

# The words a writer calls a parent by, as if a name ("Dad sold his hives", "Mom, Lourdes, was …").
PARENT_NAMES = word_set("dad daddy papa mum mom mam mammy mummy mommy mama")
GRANDPARENT_NAMES = word_set("grandma grandpa granny")

# Words for the same relative: "Dad" finds the man the writer called "my father".
SAME_KIN: tuple[frozenset[str], ...] = (
    frozenset({"dad", "father", "papa", "daddy"}),
    frozenset({"mom", "mother", "mum", "mam", "mammy", "mummy", "mama", "mommy"}),
    frozenset({"grandma", "grandmother", "granny"}),
    frozenset({"grandpa", "grandfather"}),
)
FEMALE_KIN = word_set(
    "wife girlfriend gf fiancee fiancée mom mother mum mama mommy stepmom stepmother daughter "
    "stepdaughter sister sis grandma grandmother granny granddaughter aunt auntie niece"
)
MALE_KIN = word_set(
    "husband boyfriend bf fiance fiancé dad father papa daddy stepdad stepfather son stepson "
    "brother bro grandpa grandfather grandson uncle nephew"
)

# Kin words said as a title before a first name ("Cousin Emeka", "Uncle Tunde", "Auntie Grace"):
# no part of the name, but a sure sign of a person.
KIN_TITLES = word_set("cousin uncle aunt auntie aunty grandma grandpa granny grandad granddad nana")

# Jobs and roles a person is ("Guili is an architect" makes Guili a person).
OCCUPATIONS = word_set("""
architect nurse doctor physician surgeon dentist pharmacist therapist psychologist psychiatrist counselor
teacher professor lecturer tutor student engineer developer programmer designer lawyer attorney judge
accountant banker consultant manager director ceo founder entrepreneur artist painter sculptor musician
singer songwriter guitarist drummer pianist dancer actor actress writer author poet journalist editor
photographer filmmaker chef cook baker waiter waitress bartender barista farmer mechanic electrician
plumber carpenter pilot firefighter officer cop soldier veteran athlete player coach trainer scientist
researcher biologist chemist physicist analyst librarian pastor priest nun worker volunteer
activist vet veterinarian midwife paramedic caregiver nanny realtor cashier clerk driver dev hygienist
paralegal
solicitor controller coordinator specialist associate administrator executive intern supervisor technician
tech receptionist secretary assistant registrar auditor lead head partner president
""")

PET_TERMS = word_set("""
dog cat puppy pup kitten kitty pet horse rabbit bunny hamster parrot bird fish turtle tortoise snake
ferret pony lizard gecko pig goat chicken greyhound retriever labrador poodle beagle terrier spaniel
collie shepherd husky tabby mutt
""")
KIN_MODIFIERS = word_set("""
best close old good dear little big older younger baby twin new longtime childhood former ex late
future step oldest youngest eldest previous
""")

# Verb morphology helpers.
IRREGULAR_PAST = word_set("""
went got had was were did made took saw came gave found thought told said felt knew left met began
brought bought built caught chose drew drank drove ate fell fought flew forgot forgave grew heard held
hid kept led lost meant paid ran rode rang rose sang sat sent shook shot slept sold spent spoke stood
stole swam taught threw understood woke won wore wrote became broke dealt dug fed froze hung lay lit
overcame sought sped spun struck swore tore wept wound bent bled blew bore bred burnt dreamt dwelt
fled flung forbade knelt leapt learnt mistook rewrote shone slid smelt sprang stuck stung stank
strode strove swept swung undertook upheld withdrew
""")
# Present-tense verbs that end in "-ed" (not past tenses).
ED_BASE_VERBS = word_set(
    "need feed bleed breed speed seed exceed proceed succeed heed weed shred wed embed shed"
)
SAME_FORM_VERBS = word_set(
    "put hit cut set let quit hurt read cost shut spread bet burst cast fit split upset"
)
PAST_PARTICIPLES = word_set("""
been gone done seen taken given known grown shown flown written driven eaten fallen forgotten
forgiven hidden ridden risen spoken stolen sworn thrown woken worn begun drunk rung sung swum broken
chosen frozen gotten proven
""")
MODALS = word_set(
    "can could will would shall should may might must ought used can't couldn't won't "
    "wouldn't shouldn't mustn't didn't wasn't weren't cannot"
)
ADVERBS = word_set("""
also just really still always never usually often sometimes actually totally definitely even finally
recently already truly honestly kinda sorta seriously absolutely only now then mostly once currently
basically personally simply rarely seldom certainly probably maybe generally normally typically
occasionally frequently constantly literally no longer too officially last first
""")
LY_VERBS = word_set("apply rely reply fly supply multiply comply imply ally bully tally rally")
COLLOQUIAL_VERBS = {"gonna": "is going to", "wanna": "wants to", "gotta": "has to"}

# Abbreviations whose trailing period does not end a sentence.
ABBREVIATIONS = word_set("mr mrs ms dr prof st mt ft jr sr vs etc e.g i.e approx dept est no")
CORP_ABBREVIATIONS = word_set("inc corp co ltd")
