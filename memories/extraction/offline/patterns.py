"""Relation and slot patterns over tagged text (entities are placeholders, the speaker is ⟨0⟩).

Predicate rules are matched at the start of a clause's predicate ("moved to ⟨3⟩, ⟨4⟩"); the
kinship scanners run over the whole sentence ("⟨0⟩'s wife ⟨2⟩", "⟨2⟩ is ⟨0⟩'s wife").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memories.extraction.offline.clauses import opens_clause
from memories.extraction.offline.entities import KIN_ALT, MOD_ALT, PET_ALT, Registry
from memories.extraction.offline.grammar import is_past
from memories.extraction.offline.lexicon import (
    CLUB_WORDS,
    GRANDPARENT_NAMES,
    HONORIFICS,
    KIN_MODIFIERS,
    KINSHIP,
    OCCUPATIONS,
    ORG_NOUNS,
    PARENT_NAMES,
    PET_TERMS,
    alternation,
)
from memories.roles import REPORTS_TO, role_of_term, role_slot

_ADV = (
    r"(?:(?:also|just|recently|finally|now|still|currently|actually|really|already|officially|even|"
    r"then|eventually|soon|always|happily|newly|originally|personally|\w+ly)\s+)"
)
_AUX = (
    r"(?:(?:is|was|are|were|has|have|had|will|would|be|been|being|am|got|gets|get|did|does|do|going\s+to|"
    r"gonna|plans?\s+to|planning\s+to|wants?\s+to|hoping\s+to|hopes?\s+to|about\s+to|might|may|could|"
    r"should|can)\s+)"
)
_PRE = rf"^(?P<pre>{_ADV}{{0,3}}{_AUX}{{0,4}}{_ADV}{{0,3}})"
# Words that say which one, between the owner and a kin term: "her college boyfriend", "my high
# school sweetheart"; the term itself stays the kin word.
_DESCRIBED = r"(?:(?!(?:an?|the|is|was)\s)[a-z]+\s+){0,2}?"  # not "⟨1⟩'s a scruffy terrier": "'s" is "is"
# "at ⟨org⟩'s ⟨city⟩ campus", "at ⟨org⟩'s headquarters": a site of the organization is the organization
_SITE = (
    r"(?:\x02\d+\x03\s+|[A-Z][\w-]+\s+)?(?:campus|offices?|headquarters|hq|branch|site|plant|factory|"
    r"store|warehouse|location|lab)\b"
)
# The object entity, possibly introduced by a kinship phrase ("hired ⟨0⟩'s sister ⟨2⟩").
_OBJ = (
    r"(?:(?:an?|the)\s+(?:[\w-]+\s+|(?:in|from)\s+\x02\d+\x03\s+){0,4}?(?:called|named)\s+|"
    # "this girl from the bakery, ⟨2⟩": a person said by a noun, then named in apposition
    r"(?:an?|this|some)\s+(?:[\w-]+\s+)?(?:guy|girl|man|woman|boy|lady|lad|lass|bloke|fella)\s+"
    r"(?:(?:from|at|in|off)\s+(?:the\s+|my\s+|\x02\d+\x03\s+)?(?:[\w-]+\s+){0,2}?[\w-]+\s*)?[,:—–]\s*)?"
    rf"(?:the\s+)?(?:\x02\d+\x03's\s+(?:(?:{MOD_ALT})[\s-]+)*{_DESCRIBED}(?:{KIN_ALT}|{PET_ALT})\s*(?:,\s*)?)?"
    r"\x02(?P<obj>\d+)\x03(?!'(?!s\s+" + _SITE + r"))"
)
_NEGATED = re.compile(r"\b(?:not|never|no\s+longer)\b|n't\b", re.I)
_NEG = r"(?:no\s+longer|doesn't|does\s+not|don't|do\s+not|isn't|is\s+not|not)\s+"
_FUTURE = re.compile(
    r"\b(?:will|would|going to|gonna|plans? to|planning to|wants? to|hoping to|hopes? to|about to|"
    r"might|may|could|should|can)\b"
)
_ORG = frozenset({"organization", "concept"})
_PLACE = frozenset({"place", "concept"})
_PERSON = frozenset({"person"})
_NOT_PERSON = frozenset({"place", "organization", "concept"})
_E = r"\x02(?P<{}>\d+)\x03"
_HON = rf"(?:(?:{alternation(HONORIFICS)})\.?\s+)?"  # "my dentist is Dr. ⟨2⟩"
_MODS = rf"(?P<mods>(?:(?:{MOD_ALT})[\s-]+)*)"

SLOT_TEMPLATES = {
    "works_at": ("{s} works at {o}", "{s} no longer works at {o}"),
    "lives_in": ("{s} lives in {o}", "{s} no longer lives in {o}"),
    "studies_at": ("{s} studies at {o}", "{s} no longer studies at {o}"),
    "born_in": ("{s} was born in {o}", "{s} was not born in {o}"),
}


@dataclass(frozen=True)
class Rule:
    name: str
    regex: re.Pattern
    group: str
    rel: str = ""
    reverse: bool = False  # relation runs object → subject
    slot: str = ""  # the clause fact fills this slot (value = object)
    negated: bool = False  # the clause fact is a retraction of that slot
    retract: str = ""  # also emit a negated fact for this slot ("left Vertix" closes works_at Vertix)
    category: str = ""
    objects: frozenset = frozenset()  # allowed object types; empty = any


@dataclass
class RuleMatch:
    """One clause rule that matched a predicate: the rule, the object entity's index, and whether
    the predicate speaks of the future ("is moving to Austin")."""

    rule: Rule
    obj: int
    future: bool
    implied: bool = False  # read off another hit ("a nurse at ⟨org⟩ in ⟨city⟩" → lives in the city)


def _rule(name: str, verb: str, group: str, **kw) -> Rule:
    return Rule(name, re.compile(_PRE + verb + r"\s+" + _OBJ, re.I), group, **kw)


# Verbs that say where someone works when followed by "at/for ⟨organization⟩": "works at",
# "teaches 10th grade English at", "does IT support for".
_WORK_VERBS = (
    r"works?|working|(?:has|have)\s+(?:been\s+)?work(?:ed|ing)|teach(?:es|ing)?|(?:has|have)\s+(?:been\s+)?teaching|"
    r"lectures?|lecturing|(?:does|do|doing)(?=\s+(?:[\w'-]+\s+){0,3}?(?:support|work|research|consulting|admin|"
    r"marketing|sales|design|engineering|accounting|nursing|training|recruiting|development)\b)"
)
# "handed in my notice", "gave notice", "put in her resignation": a job is ending
_NOTICE = (
    r"(?:(?:hand(?:ed|s|ing)?\s+in|g[ai]ve[ns]?|giving|put(?:s|ting)?\s+in|tender(?:ed|s|ing)?|submit(?:ted|s|ting)?)"
    r"\s+(?:\x02\d+\x03's\s+|(?:his|her|their|a|the)\s+)?(?:(?:two|four|\w+)\s+weeks'?\s+)?(?:notice|resignation)|"
    # "handed my notice in at ⟨org⟩"
    r"hand(?:ed|s|ing)?\s+(?:\x02\d+\x03's\s+|(?:his|her|their|a|the)\s+)?notice\s+in(?=\s+at\b))"
)
_WORK_NEG = dict(
    slot="works_at", negated=True, rel="former_employee_of", category="relationship_change", objects=_ORG
)
# what the rules of a kind fill: a home, or a job said as it is or as it changed
_HOME = dict(slot="lives_in", rel="lives_in", category="biographical_milestone", objects=_PLACE)
_JOB = dict(slot="works_at", rel="works_at", category="biographical_milestone", objects=frozenset({"organization"}))
_JOB_CHANGE = {**_JOB, "category": "relationship_change"}
RULES: tuple[Rule, ...] = (
    _rule("no_longer_works", _NEG + _ADV + r"{0,3}(?:works?|working)\s+(?:at|for|with)", "work", **_WORK_NEG),
    _rule(
        "left_job",
        r"(?:left|quit|quits|leaves|leaving|resigned\s+from|retired\s+from|(?:fired|laid\s+off|let\s+go|made\s+redundant)\s+"
        r"(?:from|by)|(?:the\s+)?last\s+day\s+at|" + _NOTICE + r"\s+(?:at|to|with))",
        "work",
        retract="works_at",
        rel="former_employee_of",
        category="relationship_change",
        objects=_ORG,
    ),
    # "left ⟨org⟩ for a job at ⟨org⟩": the second is the new employer (the first ends by "left_job")
    _rule(
        "left_for_job",
        r"(?:left|quit|leaving|quitting)\s+(?:the\s+)?\x02\d+\x03\s+for\s+(?:an?\s+)?(?:new\s+|better\s+)?"
        r"(?:job|position|role|post|gig)\s+(?:at|with)",
        "work_next",
        **_JOB_CHANGE,
    ),
    _rule(
        "moved_away",
        r"(?:moved|relocated)\s+(?:away\s+)?(?:from|out\s+of)",
        "residence_from",
        retract="lives_in",
        category="biographical_milestone",
        objects=_PLACE,
    ),
    _rule(
        "moved_to",
        r"(?:(?:moved|moves|move|moving|relocated|relocating|relocate|emigrat(?:ed|ing|e))"
        r"(?:\s+(?:back|over|out|away|up|down|here|there))?"
        r"(?:\s+from\s+(?:the\s+)?\x02\d+\x03(?:\s*,\s*\x02\d+\x03)?)?\s+(?:in)?to|"
        r"(?:moved|moves|moving)\s+in(?:to|\s+to)?\s+(?:an?|the|our|my|his|her|their)\s+(?:[\w-]+\s+){0,3}?in|"
        # "moved in with us in ⟨city⟩"
        r"(?:moved|moves|moving)\s+in\s+with\s+(?:us|me|him|her|them|\x02\d+\x03)(?:\s+(?:here|there))?\s+in|"
        # "moved into sheltered housing in ⟨town⟩"
        r"(?:moved|moves|moving)\s+into\s+(?:[\w-]+\s+){1,3}?in|"
        # "(is going to) come and stay with us in ⟨city⟩"
        r"(?:(?:agreed|decided|offered)\s+to\s+)?"
        r"(?:moved|moves|moving|c[ao]mes?|coming)(?:\s+(?:out|away|back|over|here|there))?"
        r"(?:\s+from\s+(?:the\s+)?\x02\d+\x03(?:\s*,\s*\x02\d+\x03)?)?\s*(?:to|and)\s+live\s+(?:with\s+[^,.;]{1,40}?\s+)?"
        r"(?:(?:here|there)\s+)?in)",
        "residence",
        **_HOME,
    ),
    _rule(
        "lives_in",
        r"(?:(?:ended|end|ending)\s+up\s+)?(?:an?\s+(?:[\w-]+\s+|\x02\d+\x03\s+){1,3}?(?=living|based))?(?:lives?|living|resides?|"
        r"residing|(?:has|have)\s+(?:been\s+)?(?:lived|living)|based|settled|"
        # "still on her own in ⟨town⟩", "alone in ⟨town⟩"
        r"on\s+(?:\x02\d+\x03's|his|her|their|my)\s+own|alone|"
        # "got his own place in ⟨city⟩", "found a flat in ⟨city⟩": a home of one's own there
        r"(?:got|gets|getting|found|finds|rented|rents|renting|shar(?:e|es|ed|ing))\s+(?:an?|my|his|her|their|our|\x02\d+\x03's)\s+"
        r"(?:(?:own|new|first|little)\s+){0,2}(?:place|flat|apartment|house|home|condo|studio|room)"
        r"(?=\s+in\s+\x02\d+\x03(?!\s+for\s+(?:the|our|a|my|his|her|their)?\s*(?:holiday|vacation|trip|party|"
        r"weekend|night|week|wedding|conference|festival|stag|hen|bachelor)))|"
        # "(come and) stay with us in ⟨city⟩"
        r"(?:lives?|living)\s+with\s+(?:\x02\d+\x03|us|me|him|her|them))\s+in"
        # "renting a flat share in ⟨city⟩": the dwelling, then where it is
        r"(?:\s+(?:an?|the|\x02\d+\x03's)\s+(?:[\w-]+\s+){0,3}?(?:house|flat|apartment|condo|home|place|cottage|"
        r"bungalow|studio|room|houseboat|dorm|townhouse|terrace)\s+(?:in|near|outside(?:\s+of)?))?",
        "residence",
        **_HOME,
    ),
    _rule(  # "we're now in ⟨city⟩!", "still in ⟨city⟩" (where one lives now; not "now in Paris for the week")
        "now_in",
        r"(?:(?<=\bnow\s)|(?<=\bstill\s))in(?!(?:\s+\S+){1,4}?\s+(?:for|until|on\s+(?:a|the|our|my)\s+(?:trip|vacation|holiday))\b)"
        r"(?!(?:\s+\S+){1,2}?\s*,?\s+(?:heading|flying|going|coming|driving)\s+(?:home|back)\b)",
        "residence",
        **_HOME,
    ),
    _rule(  # "she's a vet in ⟨city⟩ now": who works there as a trade lives there
        "trade_in",
        r"(?:is|'s|works\s+as)\s+(?:now\s+)?an?\s+(?:[\w-]+\s+){0,2}?(?:" + alternation(OCCUPATIONS) + r")"
        r"(?:\s+(?:now|these\s+days))?\s+in(?!\s+(?:the|a|an)\b)",
        "residence",
        **_HOME,
    ),
    _rule(  # "my sister is here from ⟨city⟩ for two weeks": a visitor lives where they came from
        "visiting_from",
        r"(?:here|over|visiting|in\s+town)\s+(?:(?:on\s+a\s+)?(?:visit|holiday|vacation)\s+)?from",
        "residence",
        **_HOME,
    ),
    _rule(  # "run a sheep farm just outside ⟨town⟩": a farm is where one lives
        "farm_in",
        r"(?:runs?|running|ran|owns?|owned|ha(?:ve|s|d)|live\s+on|lives\s+on|living\s+on)\s+an?\s+(?:[\w-]+\s+){0,4}?"
        r"(?:farm|ranch|vineyard|orchard|homestead|smallholding)\s+(?:(?:just|right)\s+)?(?:in|near|outside(?:\s+of)?)",
        "residence",
        **_HOME,
    ),
    _rule(
        "remote",
        r"(?:(?:works?|working|based)\s+remotely|(?:now\s+)?freelanc(?:es?|ing)|works?\s+freelance)\s+(?:from|in|out\s+of)",
        "residence",
        slot="lives_in",
        rel="lives_in",
        category="biographical_milestone",
        objects=_NOT_PERSON,
    ),
    _rule(
        "works_at",
        rf"(?:{_WORK_VERBS})\s+(?:(?!at\b|for\b)(?:[\w'-]+|\x02\d+\x03)\s+){{0,6}}?(?:at|for)",
        "work",
        slot="works_at",
        rel="works_at",
        category="biographical_milestone",
        objects=_ORG,
    ),
    _rule(
        "joined",
        r"(?:joined|joins|joining|join|started\s+(?:a\s+(?:new\s+)?job\s+|working\s+|work\s+)?(?:at|with)|"
        r"got\s+(?:a\s+|the\s+)?(?:new\s+)?job\s+(?:at|with)|(?:got\s+)?hired\s+(?:by|at)|signed\s+with|"
        r"employed\s+(?:by|at)|start(?:ed|ing|s)?\s+(?:as\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,6}?)?at|"
        r"(?:took|taken|take|takes|taking|found|finds|landed|lands|got|gotten|secured|accepted|started)\s+"
        r"(?:a|the|an)\s+(?:new\s+)?(?:[\w-]+\s+){0,2}?(?:job|position|role|post|gig|contract)\s+"
        r"(?:[\w-]+\s+){0,5}?(?:at|with)|accepted\s+(?:an?|the)\s+(?:\w+\s+){0,3}?(?:offer|position|job|role)\s+"
        r"(?:at|from|with))"
        # "... a job at a bank over there, ⟨org⟩": the employer named after a description
        r"(?:\s+an?\s+(?:[\w-]+\s+){0,2}?[\w-]+(?:\s+(?:there|here))?\s*,)?",
        "work",
        slot="works_at",
        rel="works_at",
        category="relationship_change",
        objects=frozenset({"organization", "concept"}),
    ),
    _rule(  # "he's at ⟨org⟩ now", "she's now at ⟨org⟩": where someone is now, said of an employer
        "at_org_now",
        r"(?:(?<=\bnow\s)at|at(?=\s+(?:the\s+)?\x02\d+\x03\s*(?:now|these\s+days)\b))",
        "work",
        **_JOB_CHANGE,
    ),
    _rule(  # "has left us for ⟨org⟩": gone to work there
        "left_for",
        r"(?:left|leaving|leaves)\s+(?:us|me|\x020\x03|the\s+(?:team|company|firm|office|department|newsroom|practice))\s+for",
        "work",
        **_JOB_CHANGE,
    ),
    _rule(  # "has been named head of sales at ⟨org⟩", "was appointed director of ⟨org⟩"
        "appointed",
        r"(?:made|appointed|named|promoted\s+to)\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){1,5}?(?:at|of|for)",
        "work",
        **_JOB_CHANGE,
    ),
    _rule(  # "I accepted ⟨org⟩" (of the offers one had)
        "accepted_org",
        r"(?:accepted|said\s+yes\s+to)",
        "work",
        **_JOB_CHANGE,
    ),
    _rule(
        "own_business",
        r"(?:started|starts|starting|opened|opening|launched|founded|set\s+up|setting\s+up)\s+"
        r"(?:\x02\d+\x03's\s+(?:very\s+)?own|(?:his|her|their)\s+own|an?(?:\s+new)?)\s+(?:[\w-]+\s+){0,2}?"
        r"(?:practice|company|business|firm|studio|startup|shop|agency|clinic|consultancy|bakery|restaurant|cafe|"
        r"label|brand)\s*,?\s*(?:called\s+|named\s+)?",
        "work",
        slot="works_at",
        rel="works_at",
        category="biographical_milestone",
        objects=_NOT_PERSON,
    ),
    _rule(
        "with_org",
        r"with",
        "work",
        **_JOB,
    ),
    _rule(
        "role_at",  # "a ⟨QA⟩ tester at ⟨org⟩": a name may be a word of the role; "doing a PhD at" is none
        r"(?![a-z]+ing\s|(?:done|through)\s+w)(?:an?\s+|the\s+)?(?:[\w-]+\s+|\x02\d+\x03\s+(?=[a-z])){1,4}?(?:at|for|with)",
        "work",
        **_JOB,
    ),
    _rule(
        "studies_at",
        r"(?:(?:studies|study|studying|(?:an?\s+)?student|enrolled)\s+(?:(?!at\b|in\b)[\w-]+\s+){0,4}?(?:at|in)|"
        # "got into ⟨University of X⟩", "was accepted to ⟨X⟩", "got admitted to ⟨X⟩"
        r"got\s+into|(?:(?:was|been|got|is|am|are)\s+)?(?:accepted\s+(?:in)?to|admitted\s+to)|"
        r"(?:back\s+)?(?:in|at|to)\s+(?:school|college|uni|university|grad\s+school|(?:law|med|medical|nursing)\s+school)"
        r"\s+(?:(?!at\b)[\w-]+\s+){0,4}?at)",
        "study",
        slot="studies_at",
        rel="studies_at",
        category="biographical_milestone",
        objects=_ORG,
    ),
    _rule(
        "graduated",
        r"graduated\s+from",
        "study",
        rel="graduated_from",
        category="biographical_milestone",
        objects=_ORG,
    ),
    _rule(  # "Finished Leeds Uni!", "finished with the Polytechnic": done at a school, by a school's name
        "finished_school",
        r"finished(?:\s+(?:at|with))?",
        "study",
        retract="studies_at",
        rel="graduated_from",
        category="biographical_milestone",
        objects=frozenset({"organization", "place", "concept"}),  # a school's initials are read as either
    ),
    _rule(  # "done with ⟨X⟩", "dropped out of ⟨X⟩", "stopped going to ⟨X⟩": a state toward X is over, which one unsaid
        "done_with",
        r"(?:(?:done|through)\s+(?:with|w/?)|dropped\s+out\s+of|(?:stopped|quit)\s+going\s+to)",
        "study",
        rel="finished_with",
        category="biographical_milestone",
        objects=frozenset({"organization", "place", "concept"}),
    ),
    _rule(
        "born_in",
        r"born\s+in",
        "birth",
        slot="born_in",
        rel="born_in",
        category="biographical_milestone",
        objects=_NOT_PERSON,
    ),
    _rule(
        "from",
        r"(?:(?:comes?|came)\s+)?(?:originally\s+)?from",
        "origin",
        rel="from",
        category="biographical_milestone",
        objects=frozenset({"place"}),
    ),
    _rule(
        "married",
        r"(?:happily\s+)?(?:married|wed)(?:\s+(?:to|with))?",  # "got married with ⟨X⟩" in learners' English
        "marriage",
        rel="spouse_of",
        category="biographical_milestone",
        objects=_PERSON,
    ),
    _rule(
        "announced_marriage",
        # a notice of one's own wedding: "happy to announce my marriage to ⟨X⟩" (not "announced his marriage to
        # ⟨X⟩ was over")
        r"(?:is|am|are|'m|'re)\s+(?:\w+\s+)?(?:delighted|pleased|happy|thrilled|proud|honoured|honored)\s+"
        r"to\s+announce\s+(?:my|his|her|their|our|\x02\d+\x03's)\s+marriage\s+to",
        "marriage",
        rel="spouse_of",
        category="biographical_milestone",
        objects=_PERSON,
    ),
    _rule(
        "engaged",
        r"engaged(?:\s+now)?\s*,?\s+to",
        "marriage",
        rel="engaged_to",
        category="biographical_milestone",
        objects=_PERSON,
    ),
    _rule(
        "dating",
        # "been seeing ⟨X⟩", "started seeing a guy called ⟨X⟩" (not "seeing a therapist called ⟨X⟩")
        r"(?:dating|started\s+dating|in\s+a\s+relationship\s+with|"
        # "asked ⟨X⟩ to be my girlfriend": the asking is the start, said of the one asked
        r"(?:asked|asks)(?=\s+\x02\d+\x03\s+to\s+be\s+(?:\x02\d+\x03's|my|his|her)\s+(?:girlfriend|boyfriend|partner|gf|bf)\b)|"
        r"(?:started|been)\s+seeing(?=\s+(?:\x02|"
        r"(?:an?|this|some)\s+(?:[\w-]+\s+)?(?:guy|girl|man|woman|boy|lady|fella|bloke|lad|lass|someone)\s))|"
        # "is seeing a guy named ⟨X⟩" (not "is seeing ⟨Dr. X⟩ about her knee")
        r"(?:is|'s|’s|are|am|'m|’m)\s+seeing(?=\s+(?:an?|this|some)\s+(?:[\w-]+\s+)?"
        r"(?:guy|girl|man|woman|boy|lady|fella|bloke|lad|lass)\s+(?:called|named)\s+\x02\d+\x03"
        r"(?=\s*(?:[.!?;]|,\s*(?:he|she|they)\b|$|\s+(?:now|lol|haha|btw|atm|rn)\b))))",
        "marriage",
        rel="partner_of",
        category="relationship_change",
        objects=_PERSON,
    ),
    _rule(
        "moved_in_with",
        # "has moved in with ⟨X⟩": they share a home now (a partner's own link, if any, is said elsewhere)
        r"(?:moved|moves|moving|move)\s+in\s+with(?!\s+(?:\x02\d+\x03\s*,\s*)?(?:\x02\d+\x03's|my|his|her|their)\s+"
        r"(?:[\w-]+\s+)?(?:girlfriend|boyfriend|partner|wife|husband|fianc[ée]e?|gf|bf|spouse)\b)",
        "household",
        rel="roommate_of",
        category="biographical_milestone",
        objects=_PERSON,
    ),
    _rule(
        "broke_up",
        r"(?:broke\s+up|split\s+up|separated|divorced)(?:\s+(?:with|from))?",
        "marriage",
        rel="former_partner_of",
        category="relationship_change",
        objects=_PERSON,
    ),
    _rule(
        "dislikes",
        r"(?:hates?|dislikes?|(?:doesn't|does\s+not|don't)\s+like|can't\s+stand)",
        "preference",
        rel="dislikes",
        category="stable_preference",
    ),
    _rule("prefers", r"(?:prefers?|preferred)", "preference", rel="prefers", category="stable_preference"),
    _rule(
        "likes",
        r"(?:likes?|loves?|loved|enjoys?|enjoyed|adores?|(?:an?\s+)?(?:big\s+|huge\s+)?fan\s+of|"
        r"obsessed\s+with|passionate\s+about)",
        "preference",
        rel="likes",
        category="stable_preference",
    ),
    _rule(
        "hired_by",
        r"(?:got\s+)?hired\s+by",
        "hire",
        rel="hired",
        reverse=True,
        category="relationship_change",
        objects=_PERSON,
    ),
    _rule(
        "hired",
        r"(?:hired|recruited|hires|recruits)",
        "hire",
        rel="hired",
        category="specific_event",
        objects=frozenset({"person", "concept"}),
    ),
    _rule(
        "founded",
        r"(?:founded|co-founded|cofounded|launched)",
        "found",
        rel="founded",
        category="biographical_milestone",
        objects=_ORG,
    ),
    _rule(
        "manages",
        r"(?:manages|managed|supervises|supervised)",
        "manage",
        rel="manager_of",
        category="biographical_milestone",
        objects=_PERSON,
    ),
    _rule(
        "reports_to",
        r"(?:reports?|reporting)\s+(?:directly\s+)?to",
        "manage",
        rel=REPORTS_TO,
        slot=role_slot("manager"),
        category="biographical_milestone",
        objects=_PERSON,
    ),
    _rule(
        "visited",
        r"(?:visited|visiting|went\s+(?:back\s+)?to|traveled\s+to|travelled\s+to|flew\s+to|"
        r"drove\s+to|toured|took\s+an?\s+(?:\w+\s+)?trip\s+to|went\s+on\s+an?\s+(?:\w+\s+)?trip\s+to|"
        r"vacationed\s+in|been\s+to|spent\s+(?:\w+\s+){1,3}in)",
        "visit",
        rel="visited",
        category="specific_event",
        objects=_NOT_PERSON,
    ),
    # Membership said without "joined": "is a member of", "captain of", "plays for", "belongs to",
    # "volunteers with", "sings in", "on the board of", "signed up for" an organization ("is in ⟨a
    # club⟩" is the frames').
    _rule(
        "member_verbs",
        r"(?:(?:(?:an?|the)\s+)?(?:(?:proud|longtime|long-time|founding|paid-up|life|new|active)\s+)?"
        r"(?:member|captain|treasurer|president|chair|chairwoman|chairman|secretary|vice-captain)\s+of|"
        r"(?:plays?|played|playing)\s+(?:\w+\s+)?for|belongs?\s+to|"
        r"(?:volunteers?|volunteered|volunteering)\s+(?:with|at|for)|(?:sings?|sang|singing|dances?|rows?)\s+in|"
        r"on\s+the\s+(?:board|committee)\s+of|signed\s+up\s+(?:for|with))",
        "membership",
        rel="member_of",
        category="biographical_milestone",
        objects=frozenset({"organization"}),  # not an event signed up for ("the city marathon")
    ),
)
_THEN_JOINED = re.compile(
    r"^\s*(?:in\s+\w+\s+)?(?:,\s*)?(?:to\s+(?:go\s+)?|and\s+(?:then\s+)?)(?=join|start|work)", re.I
)
_ROLE_PREFIX = re.compile(r"^(?:(?:now|currently|also)\s+)?(?:is|'s)\s+")
# "quit her course to join ⟨org⟩": a past action whose purpose was joining.
_PURPOSE_JOIN = re.compile(r"^(?P<verb>[a-z]+)\s+(?:[\w'-]+\s+){0,6}?to\s+(?=join|start\s+at|work\s+(?:at|for))", re.I)
# "a solicitor at ⟨org⟩ in ⟨city⟩": where the job is, is where the person lives.
# "at ⟨org⟩ now, still in ⟨city⟩" / "now at ⟨org⟩, still ⟨city⟩": the job kept the person there.
_WORKPLACE_CITY = re.compile(
    r"^\s*(?:(?:now|these\s+days)\b\s*)?(?:,\s*)?(?:still\s+(?:in\s+)?|in\s+|near\s+|outside\s+)\x02(?P<obj>\d+)\x03(?!')"
)
WORKPLACE_RULE = Rule(
    "workplace_city", _WORKPLACE_CITY, "residence", rel="lives_in", slot="lives_in",
    category="biographical_milestone", objects=_NOT_PERSON,
)


_JOB_RULES = frozenset({"works_at", "role_at", "with_org", "joined", "at_org_now", "left_for", "appointed"})
_JOINED_RULE = next(rule for rule in RULES if rule.name == "joined")
# what may follow the place a state ended at: the clause's end, or a word of time or reason ("finished
# at ⟨X⟩ last week", "done with ⟨X⟩ forever"); not a noun of its own, nor "early" or "today" alone
_OVER_AFTER = re.compile(
    r"(?:'s)?(?=\s*(?:[.!,;:?)]|$)|\s+(?:in|after|last|this|on|for|and|but|so|because|since|when|yesterday|"
    r"forever|finally|officially|now|at\s+last|for\s+good)\b)", re.I)
_DONE_WITH_RULE = next(rule for rule in RULES if rule.name == "done_with")
_FOR_A_JOB = re.compile(
    r"^\s*(?:,\s*)?(?:for|to\s+(?:take|start)|to\s+start)\s+(?:a|an|the|\x02\d+\x03's)\s+(?:new\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:job|position|role|post)\s+(?:at|with)\s+\x02(?P<obj>\d+)\x03"
)


# What one joins as a member, not an employer: "joined ⟨Charm City Roller Derby⟩", "joined a community
# choir called ⟨X⟩", "joined the ⟨Riverside Tennis Club⟩".
_CLUB = re.compile(
    r"\b(?:club|choir|chorus|league|society|derby|orchestra|band|troupe|ensemble|guild|association|"
    r"congregation|church|group|circle|crew|squad|team|fc|rfc|gym|lodge|collective|meetup)s?\b",
    re.I,
)
MEMBER_RULE = Rule("member_of", _CLUB, "membership", rel="member_of", category="biographical_milestone")


_SCHOOL_NAME = re.compile(r"\b(?:university|uni|college|school|academy|institute|polytechnic|politechnika|"
                          r"universidad|universidade|université|universität)\b", re.I)  # initials could be a firm's
_HIRED = re.compile(r"\b(?:job|position|role|post|hired|employed)\b", re.I)


# a club's name that ends in its members, plural: "Hackney Harriers", "Bristol Rovers" (not "Land Rover")
_MEMBERS_END = re.compile(r"\b(?:runners|riders|ramblers|harriers|striders|rovers|wanderers)$", re.I)


# "joined the ⟨Lisnaskea Hornets⟩, an under-12 football team": what the name is, said after it
_CLUB_SAID_AFTER = re.compile(
    r"\s*[,(—–]\s*(?:an?|the|our|my|his|her|their)\s+(?:[\w-]+\s+){0,3}?(?:"
    + alternation(CLUB_WORDS - {"team", "squad"})
    + r"|(?:football|rugby|netball|hockey|cricket|basketball|volleyball|baseball|softball|darts|quiz|running|"
    r"cycling|rowing|swimming|sports?|five-a-side|under-\d+)\s+(?:team|squad|side))s?\b",
    re.I)


def _is_club(said: str, name: str, after: str = "") -> bool:
    """The joined organization is a club: its name, the words that introduce it or an apposition
    after it say so."""
    return bool(_CLUB.search(name) or _MEMBERS_END.search(name.strip())
                or _CLUB.search(re.sub(r"\x02\d+\x03", " ", said)) or _CLUB_SAID_AFTER.match(after))


_AND_THE_OTHER = re.compile(r"\s*(?:,\s*|\s+)(?:and|&)\s+(?:the\s+)?\x02(\d+)\x03")
# what may follow a town and a job left together: the sentence's end, "after four years", "for good"
_LEFT_FOR_GOOD = re.compile(r"\s*(?:$|[.!;,]|\s+(?:after|for\s+good|at\s+last|forever|this|next|last|in)\b)")


def match_rules(predicate: str, registry: Registry) -> list[RuleMatch]:
    """Every rule (at most one per group) whose pattern opens the predicate."""
    if "\x02" not in predicate:  # every rule needs an entity as its object
        return []
    hits: list[RuleMatch] = []
    groups: set[str] = set()
    for rule in RULES:
        if rule.group in groups:
            continue
        text = predicate
        if rule.name == "role_at":
            prefix = _ROLE_PREFIX.match(predicate)
            if not prefix:
                continue
            text = predicate[prefix.end() :]
        match = rule.regex.match(text)
        if not match or (not (rule.negated or rule.retract or rule.group == "preference")
                         and _NEGATED.search(match.group())):
            continue  # "is not at ⟨org⟩ anymore" is no job there
        obj = int(match.group("obj"))
        if rule.objects and registry.entities[obj].type not in rule.objects:
            if rule.retract and (also := _AND_THE_OTHER.match(text, match.end())) and (
                    registry.entities[int(also.group(1))].type in rule.objects) and _LEFT_FOR_GOOD.match(
                    text, also.end()):
                hits.append(RuleMatch(rule, int(also.group(1)), bool(_FUTURE.search(match.group("pre")))))
                groups.add(rule.group)  # "leaving ⟨Chicago⟩ and ⟨Loop Logistics⟩": the job is the second
            continue
        groups.add(rule.group)
        future = bool(_FUTURE.search(match.group("pre"))) or "moving" in match.group()
        if rule.name == "finished_school" and not _SCHOOL_NAME.search(registry.entities[obj].name):
            # "finished at ⟨shop⟩", "Finished ⟨initials⟩!": whatever the writer was doing there is over
            # (the write ends the job, the studies or the membership it finds), no school's years; not
            # "finished at ⟨X⟩ early today": a day's work
            if _OVER_AFTER.match(text, match.end()):
                hits.append(RuleMatch(_DONE_WITH_RULE, obj, future))
            continue
        if rule.name == "done_with" and not _OVER_AFTER.match(text, match.end()):
            continue  # "dropped out of the ⟨club⟩ half marathon": the race, not the club
        club = rule.name in ("joined", "left_job") and _is_club(match.group(), registry.entities[obj].name,
                                                                text[match.end():])
        if rule.name == "joined" and club and not (
                _HIRED.search(match.group())):  # "a position with ⟨X Group⟩" is a job, whatever the name
            hits.append(RuleMatch(MEMBER_RULE, obj, future))
            continue
        if rule.name == "left_job" and club and not (
                _HIRED.search(match.group())):  # "left the ⟨Riverside Runners⟩": whatever one was there is over
            hits.append(RuleMatch(_DONE_WITH_RULE, obj, future))
            continue
        hits.append(RuleMatch(rule, obj, future))
        if rule.retract and (then := _THEN_JOINED.match(text[match.end() :])):
            hits += match_rules(text[match.end() + then.end() :], registry)  # "left A to join B"
        if rule.name == "moved_to" and "work" not in groups and (job := _FOR_A_JOB.match(text[match.end() :])):
            org = int(job.group("obj"))  # "moved to ⟨city⟩ for a job at ⟨org⟩"
            if registry.entities[org].type == "organization":
                groups.add("work")
                hits.append(RuleMatch(_JOINED_RULE, org, future))
        if rule.name in _JOB_RULES and not future and "residence" not in groups:
            city = _WORKPLACE_CITY.match(text[match.end() :])
            if city and registry.entities[int(city.group("obj"))].type in _NOT_PERSON:
                registry.entities[int(city.group("obj"))].vote("place", 60)  # "⟨org⟩ in ⟨X⟩": X is a place
                groups.add("residence")
                hits.append(RuleMatch(WORKPLACE_RULE, int(city.group("obj")), False, implied=True))
    if "work" not in groups and (purpose := _PURPOSE_JOIN.match(predicate)) and is_past(purpose.group("verb").lower()):
        hits += [h for h in match_rules(predicate[purpose.end() :], registry) if h.rule.group == "work"]
    return hits


# --- employment said around the job rather than the verb -----------------------------------------

_ORG_NOUN_ALT = "|".join(sorted(ORG_NOUNS, key=len, reverse=True))
_OCCUPATION_ALT = alternation(OCCUPATIONS)
_FORMER = r"(?:retired|former|ex-|ex\b|late(?![\w-])|old\b|previous|one-time)"
# what a post is head of, in capitals: "Head of Procurement", "Director of Human Resources"
_POST_FIELD = r"(?:\s+of\s+(?:[A-Z][\w-]*\s+){0,2}[A-Z][\w-]*)?"
_EMPLOYMENT = (
    # ⟨org⟩ is ⟨0⟩'s full-time job now
    re.compile(rf"{_E.format('org')}\s+(?:is|'s)\s+(?:now\s+|still\s+)?{_E.format('s')}'s\s+(?:[\w-]+\s+){{0,2}}?"
               r"(?:job|employer|workplace)\b", re.I),
    # ⟨0⟩'s new employer is ⟨org⟩
    re.compile(rf"{_E.format('s')}'s\s+(?:(?:new|current|main)\s+)?(?:employer|workplace)\s+(?:is|'s)\s+"
               rf"(?:now\s+)?{_E.format('org')}", re.I),
    # ⟨org⟩ let ⟨0⟩ keep ⟨0⟩'s job
    re.compile(rf"{_E.format('org')}\s+(?:let|lets|allowed|allows|is\s+letting)\s+{_E.format('s')}\s+(?:to\s+)?"
               r"keep\s+\x02\d+\x03's\s+job\b", re.I),
    # ⟨0⟩'s own catering company, ⟨org⟩ / ⟨0⟩'s very own bakery called ⟨org⟩
    re.compile(rf"{_E.format('s')}'s\s+(?:very\s+)?own\s+(?:[\w-]+\s+){{0,2}}?(?:{_ORG_NOUN_ALT})\s*(?:,\s*)?"
               rf"(?:called\s+|named\s+)?{_E.format('org')}", re.I),
    # ⟨0⟩'s startup is called ⟨org⟩ / ⟨0⟩'s new company is named ⟨org⟩: what someone runs
    re.compile(rf"{_E.format('s')}'s\s+(?:(?:new|own|little|tiny)\s+){{0,2}}(?:startup|start-up|company|business|"
               rf"firm|agency|studio|bakery|cafe|café|restaurant|shop|label|practice)\s+(?:is|was)\s+"
               rf"(?:called|named)\s+{_E.format('org')}", re.I),
    # ⟨2⟩, a paralegal at ⟨org⟩ / ⟨2⟩, the head nurse at ⟨org⟩: who someone is, set off after the name
    # (not a retired, former or student one: who works there now)
    re.compile(rf"{_E.format('s')}\s*,\s+(?:an?|the)\s+(?!{_FORMER})(?:(?!{_FORMER})[\w-]+\s+){{0,3}}?"
               rf"(?!student\b|pupil\b)(?:{_OCCUPATION_ALT})\s+(?:at|with)\s+(?:the\s+)?{_E.format('org')}", re.I),
    # "Kind regards, ⟨2⟩, Senior Paralegal, ⟨org⟩.": a letter signed with a post and an employer
    # (or with a department between: "…, Lab Manager, ⟨dept⟩, ⟨org⟩.")
    re.compile(rf"{_E.format('s')}\s*,\s+(?!(?i:{_FORMER}))(?:[A-Z][\w-]*\s+){{0,3}}(?i:{_OCCUPATION_ALT}){_POST_FIELD}\s*,\s+"
               rf"(?:(?:the\s+)?\x02(?P<dept>\d+)\x03\s*,\s+)?(?:the\s+)?{_E.format('org')}\s*[.'’\"]*\s*$"),
    # "⟨2⟩, Director of Operations at ⟨org⟩,": a post in capitals set off after the name
    re.compile(rf"{_E.format('s')}\s*,\s+(?!(?i:{_FORMER}))(?:[A-Z][\w-]*\s+){{0,3}}(?i:{_OCCUPATION_ALT}){_POST_FIELD}"
               rf"\s+(?:at|with)\s+(?:the\s+)?{_E.format('org')}"),
    # ⟨0⟩'s (new) job at ⟨org⟩ (not "lost/left/quit ⟨0⟩'s job at", not an old job)
    re.compile(rf"(?<!lost\s)(?<!left\s)(?<!quit\s)(?<!from\s){_E.format('s')}'s\s+(?:(?:new|current|full-time|"
               rf"part-time|day)\s+)?job\s+(?:at|with)\s+{_E.format('org')}", re.I),
)
# "left ⟨0⟩'s firm", "quit the clinic": a job ends without naming the employer
# "left the clinic", "put in my notice at the depot", "quit the public defender's office",
# "gave my notice" (no place said): a job ends without naming the employer
# (places one works at rather than visits: not "left the pub after the quiz", "quit the gym")
WORKPLACE_NOUNS = (
    r"(?:job|firm|company|employer|practice|clinic|agency|startup|lab|store|restaurant|bank|library|school|"
    r"hospital|newsroom|paper|museum|studio|shop|salon|bakery|cafe|plant|factory|warehouse|brewery|distillery|"
    r"winery|roastery|consultancy|manufacturer|supplier|retailer|dealership|airline|newspaper|magazine)"
)
_UNNAMED_WORKPLACE = (
    rf"(?:\x02\d+\x03's|the|that)\s+(?:(?:[\w-]+\s+)?{WORKPLACE_NOUNS}|(?:[\w-]+\s+)?[\w-]+'s\s+office)\b"
)
LEFT_UNNAMED = re.compile(
    rf"^{_PRE}(?:(?:left|quit|quits|leaving|leaves|resigned\s+from|retired\s+from)\s+{_UNNAMED_WORKPLACE}"
    # not a place left after a visit: "left the bakery at noon and walked home"
    rf"(?!\s+(?:early|late|for\s+the\s+day|at\s+\d|at\s+(?:noon|midnight|lunch)|after\b|before\b|and\s+"
    rf"(?:walked|drove|went|headed|got|took|came|caught)\b))|{_NOTICE}(?:\s+(?:at|to|with)\s+{_UNNAMED_WORKPLACE}|"
    r"(?!\s+(?:at|to|with)\s+\x02)))",
    re.I,
)
# "yesterday was my final day at the depot", "Friday is Ana's last day at ⟨org⟩"
LAST_DAY = re.compile(
    rf"{_E.format('s')}'s\s+(?:very\s+)?(?:last|final)\s+(?:day|shift)\s+(?:of\s+work\s+)?(?:at|with)\s+"
    rf"(?:{_E.format('org')}(?!')|{_UNNAMED_WORKPLACE})",
    re.I,
)


# "⟨org⟩ transferred ⟨person⟩ to ⟨city⟩": an employer moving someone moves their home
_TRANSFERRED = re.compile(
    rf"{_E.format('org')}\s+(?:has\s+|had\s+|just\s+)?(?:transferred|relocated|posted|moved|sent)\s+"
    rf"(?:\x02\d+\x03's\s+(?:[\w-]+\s+){{1,2}}?)?{_E.format('s')}\s+(?:over\s+|back\s+)?to\s+{_E.format('place')}(?!')",
    re.I,
)


# "the heating in ⟨1⟩'s flat in ⟨city⟩ broke": a home of someone's, wherever the sentence names it;
# not one sold, left or let out ("sold ⟨1⟩'s flat in ⟨city⟩"), not an old one
_HOME_IN = re.compile(
    rf"{_E.format('s')}'s\s+(?:(?:new|own|little|tiny|small|rented|shared)\s+)?"
    rf"(?:flat|apartment|house|home|condo|studio\s+flat)\s+in\s+{_E.format('place')}(?!')",
    re.I,
)
_HOME_GIVEN_UP = re.compile(
    r"\b(?:sold|sell|selling|sells|left|leave|leaving|vacated|out\s+of|gave\s+up|giving\s+up|let\s+out|"
    r"rent(?:ing)?\s+out|used\s+to|old|former|previous)\s+$",
    re.I,
)


# "was finally sold", "packing up ⟨1⟩'s flat before ⟨1⟩ moves": the home is being left
_LEAVING_HOME = re.compile(r"\b(?:sold|selling|sell|packing|pack|moving|moves|moved|leaving|vacating|vacated)\b",
                           re.I)


def scan_transfers(tagged: str, registry: Registry) -> list[tuple[int, int]]:
    """(person, place) pairs of an employer moving someone, "⟨org⟩ transferred ⟨1⟩ to ⟨city⟩", and of a home
    of theirs named in a place, "the rent on ⟨1⟩'s flat in ⟨city⟩"."""
    out = []
    for match in _TRANSFERRED.finditer(tagged):
        org, person, place = (int(match.group(k)) for k in ("org", "s", "place"))
        if (registry.entities[org].type in ("organization", "concept") and registry.is_person(person)
                and registry.entities[place].type in _PLACE and (person, place) not in out):
            out.append((person, place))
    for match in _HOME_IN.finditer(tagged):
        person, place = int(match.group("s")), int(match.group("place"))
        if not tagged[: match.start()].strip(" \"'(“‘"):
            continue  # "Our flat in Tromsø is small": the home as the subject, which the frames read
        if (registry.is_person(person) and registry.entities[place].type == "place" and not _HOME_GIVEN_UP.search(
                tagged, 0, match.start()) and not _NEGATED.search(tagged) and not _LEAVING_HOME.search(tagged)
                and (person, place) not in out):
            out.append((person, place))
    return out


_DEPARTMENT = re.compile(r"\b(?:department|dept|school|faculty|division|office|institute|centre|center|unit|"
                         r"college|laboratory|lab)\b", re.I)  # "Department of Botany", "Chemistry Department"


def scan_employment(tagged: str, registry: Registry) -> list[tuple[int, int]]:
    """(person, organization) pairs of a job named around the word "job": "⟨org⟩ is my
    full-time job now", "⟨org⟩ let me keep my job", "my new job at ⟨org⟩"."""
    out = []
    for pattern in _EMPLOYMENT:
        for match in pattern.finditer(tagged):
            person, org = int(match.group("s")), int(match.group("org"))
            if (dept := match.groupdict().get("dept")) and not _DEPARTMENT.search(registry.names()[int(dept)]):
                continue  # "…, Head Nurse, ⟨hospital⟩, ⟨town⟩": no department before an employer
            # what is one's job is no person, whatever a weak cue said ("⟨X⟩ is my job now")
            if (registry.entities[org].type in _NOT_PERSON or not registry.entities[org].forced
                    and registry.entities[org].scores.get("person", 0) < 50) and registry.is_person(
                    person) and (person, org) not in out:
                registry.entities[org].vote("organization", 100)  # what one's job is, is an employer
                out.append((person, org))
    return out


# --- kinship, pets, places ----------------------------------------------------------------------

_KIN_OR_PET = rf"(?P<kin>{KIN_ALT}|{PET_ALT})"
_NEW_PARTNERS = "gf|bf|flatmate|roommate|housemate|boss|manager"  # chat's own words for a partner, and roles
# what a remark on a name opens with ("though everyone calls her ⟨2⟩", "known as ⟨2⟩"), not "her best friend"
_NAME_SAID = r"(?:though|tho|although|but|who|whom|aka|known|called|nobody|no\s+one|everyone|everybody|we|to\s)"
_CALLED_ALT = "|".join(sorted(PARENT_NAMES | GRANDPARENT_NAMES, key=len, reverse=True))  # "Dad — ⟨1⟩ —"
_KIN_PATTERNS = (
    # ⟨0⟩'s wife ⟨2⟩ / ⟨0⟩'s dog, ⟨5⟩ / ⟨0⟩'s friend (⟨3⟩) / ⟨0⟩'s college boyfriend, ⟨2⟩
    re.compile(
        rf"{_E.format('own')}'s\s+{_MODS}(?P<desc>{_DESCRIBED}){_KIN_OR_PET}(?:\s+(?:there|here|now|at\s+work))?\s*(?:,\s*)?"
        rf"(?:\(\s*)?(?:named\s+|called\s+)?{_HON}{_E.format('name')}",
        re.I,
    ),
    # ⟨2⟩, ⟨0⟩'s wife / ⟨2⟩ (⟨0⟩'s girlfriend) / ⟨2⟩ — ⟨0⟩'s boyfriend of three years — (not "years at
    # ⟨2⟩, ⟨0⟩'s dad was ...": a place or employer before the subject)
    re.compile(
        rf"(?<!\bat\s)(?<!\bin\s){_E.format('name')}\s*(?:,|\(|[—–]|\s-)\s*{_E.format('own')}'s\s+{_MODS}"
        # not "⟨2⟩, my partner ⟨3⟩": the kin word names ⟨3⟩; not "Leaving ⟨2⟩, my sister and I drove": a subject
        rf"{_KIN_OR_PET}\b(?!'s\b)(?!\s*,?\s*\x02)(?!\s+(?:and|&)\s+\x020\x03)", re.I
    ),
    # ⟨2⟩ is ⟨0⟩'s wife / ⟨2⟩ has been ⟨0⟩'s doctor / ⟨2⟩ is ⟨0⟩'s downstairs neighbour (but not "⟨2⟩ is
    # ⟨0⟩'s neighbor's son")
    re.compile(
        rf"{_E.format('name')}(?:\s+(?:is|was|has\s+been)|'s)\s+(?:also\s+|now\s+)?{_E.format('own')}'s\s+{_MODS}"
        rf"{_DESCRIBED}{_KIN_OR_PET}\b(?!'s\b)",
        re.I,
    ),
    # ⟨0⟩'s wife is ⟨2⟩ / ⟨0⟩'s dog's name is ⟨5⟩ / ⟨0⟩'s dentist is Dr. ⟨2⟩
    re.compile(
        rf"{_E.format('own')}'s\s+{_MODS}{_DESCRIBED}{_KIN_OR_PET}(?:'s\s+name)?\s+(?:is|was)\s+(?:now\s+)?"
        r"(?:named\s+|called\s+)?"
        rf"{_HON}{_E.format('name')}",
        re.I,
    ),
    # ⟨0⟩ has a girlfriend now — ⟨2⟩ / ⟨0⟩ has a sister, ⟨2⟩ / ⟨0⟩ has a new boyfriend called ⟨2⟩ /
    # ⟨0⟩ has a boyfriend there these days, ⟨2⟩ / ⟨0⟩ has a new partner, a sommelier called ⟨2⟩ /
    # ⟨0⟩ sees a physio called ⟨2⟩
    re.compile(
        rf"{_E.format('own')}\s+(?:\w+\s+){{0,2}}?(?:has|have|had|got|sees?|saw|seeing)\s+(?:an?\s+)?{_MODS}(?P<kin>{KIN_ALT})"
        r"(?:\s+(?:over\s+there|there|here|now|at\s+last|at\s+work|again))*"
        rf"\s*(?:[,:—–]\s*(?:an?\s+(?:[\w-]+\s+){{0,3}}?(?:named|called)\s+)?|\s-\s*|\s+(?:named|called)\s+)"
        rf"{_E.format('name')}(?!'s\b)",
        re.I,
    ),
    # a sentence opening with the writer's word for a parent, then the name: "Dad — ⟨1⟩ — has
    # carried mail for 34 years", "Mom, ⟨2⟩, was on a night shift", "mam (⟨3⟩) had another fall",
    # "Mum (⟨2⟩, though everyone calls her ⟨2⟩) retired"
    re.compile(
        rf"^\W*(?P<own>)(?P<mods>)(?P<kin>{_CALLED_ALT})"
        rf"(?:\s*[—–]\s*{_E.format('name')}\s*[—–,]|\s*\(\s*{_E.format('name2')}\s*(?:\)|[,;—–]\s*{_NAME_SAID}[^()]{{0,80}}\))"
        rf"|\s*,\s*{_E.format('name3')}\s*,(?!\s*(?:and|or|&)\b))",  # closed: no list, no "Dad, Lena says hi"
        re.I,
    ),
    # a note without an owner, the writer's: "New manager is ⟨1⟩.", "New dentist is Dr. ⟨2⟩"
    re.compile(
        rf"^\W*(?P<own>){_MODS}(?P<kin>{KIN_ALT})\s+(?:is|'s)\s+(?:now\s+)?{_HON}{_E.format('name')}(?!'s\b)",
        re.I,
    ),
    # a note's new partner or flatmate without an owner, the writer's: "new gf ⟨1⟩ helped me paint" (not "New
    # mum ⟨2⟩ joined the group", a mother of a baby; not "New boyfriend ⟨2⟩" after a sentence on a sister)
    re.compile(rf"^\W*(?P<own>)(?P<mods>new\s+)(?P<kin>{_NEW_PARTNERS})\s*,?\s+{_HON}{_E.format('name')}(?!'s\b)",
               re.I),
    # ⟨0⟩ has a son named ⟨1⟩ and a daughter named ⟨2⟩ (the second one)
    re.compile(
        rf"{_E.format('own')}\s+(?:\w+\s+){{0,2}}?(?:has|have|had|got)\s+[^.;]{{0,60}}?\s+and\s+an?\s+{_MODS}"
        rf"(?P<kin>{KIN_ALT})\s+(?:named|called)\s+{_E.format('name')}",
        re.I,
    ),
    # ⟨0⟩ has a dog named ⟨5⟩
    re.compile(
        rf"{_E.format('own')}\s+(?:\w+\s+){{0,2}}?(?:has|have|had|got|adopted|owns|bought|rescued)\s+"
        rf"(?:\w+\s+){{0,3}}?(?P<mods>)(?P<kin>{PET_ALT})s?(?:\s*,)?\s+(?:named|called)\s+{_E.format('name')}",
        re.I,
    ),
)
_PLACE_PAIR = re.compile(r"\x02(\d+)\x03\s*,\s*(?P<outer>\x02(\d+)\x03)")


@dataclass
class KinshipMatch:
    """One kinship or pet phrase in a tagged sentence ("my wife Ana", "my dog named Rex")."""

    owner: int
    name: int
    term: str  # "best friend", "wife", "dog"
    rel: str
    reverse: bool
    pet: bool
    role: str = ""  # a single-valued role the named person holds for the owner ("manager", "dentist")


# names in a list, each perhaps with an age: "⟨1⟩ (17) and ⟨2⟩ (13)"
_ITEM = r"\x02\d+\x03(?:\s*\(\d{1,2}\))?"
_LIST = rf"(?P<list>{_ITEM}(?:\s*,\s*{_ITEM})*(?:\s*,?\s*(?:and|&)\s*{_ITEM})?)"
# "2 kids", "two daughters": how many children or siblings a list names
_COUNT = r"(?:\d|two|three|four|five|six)"
_FAMILY_PLURAL = r"(?P<kin>kid|child|son|daughter|brother|sister|sibling|grandkid|grandchild)(?:s|ren)"
_SOCIAL = r"(?P<kin>friend|buddy|pal|colleague|co-worker|coworker|workmate|teammate|neighbou?r|roommate|flatmate|" \
          r"housemate|cofounder|co-founder|mentor)"
_LIST_PATTERNS = (
    # ⟨0⟩'s colleagues ⟨1⟩ and ⟨2⟩ / ⟨0⟩'s kids, ⟨3⟩ and ⟨4⟩
    # ⟨0⟩'s kids are ⟨3⟩ (15) and ⟨4⟩ (11)
    re.compile(rf"{_E.format('own')}'s\s+{_MODS}{_KIN_OR_PET}s?\s*(?:,\s*|:\s*|\s+(?:are|were)\s+)?"
               rf"(?:named\s+|called\s+)?{_LIST}", re.I),
    # ⟨0⟩ has two daughters, ⟨1⟩ and ⟨2⟩ / ⟨0⟩ and ⟨1⟩ have 2 kids: ⟨3⟩ and ⟨4⟩
    re.compile(
        rf"{_E.format('own')}\s+(?:\w+\s+){{0,2}}?(?:has|have|had|got)\s+{_COUNT}\s+(?P<mods>){_FAMILY_PLURAL}"
        rf"\s*(?:,\s*|:\s*|\s+(?:named|called)\s+){_LIST}",
        re.I,
    ),
    # a note without a verb, the writer's: "married to ⟨1⟩, 2 kids: ⟨2⟩ (17) and ⟨3⟩ (13)"
    re.compile(rf"(?:^|[,;:—–]\s*)(?P<own>){_COUNT}\s+(?P<mods>){_FAMILY_PLURAL}\s*:\s*{_LIST}", re.I),
    # ⟨0⟩ has two rabbits, ⟨1⟩ and ⟨2⟩ / ⟨0⟩ adopted two cats named ⟨1⟩ and ⟨2⟩
    re.compile(
        rf"{_E.format('own')}\s+(?:\w+\s+){{0,2}}?(?:has|have|had|got|adopted|owns|own|bought|rescued)\s+"
        rf"(?:\w+\s+){{0,3}}?(?P<mods>)(?P<kin>{PET_ALT})s?(?:\s+(?:now|too))?\s*(?:,\s*|:\s*|\s+(?:named|called)\s+)"
        rf"{_LIST}",
        re.I,
    ),
    # ⟨1⟩ and ⟨2⟩ from ⟨0⟩'s team
    re.compile(
        rf"{_LIST}\s+(?:from|at|on|in)\s+{_E.format('own')}'s\s+(?P<mods>)(?P<kin>team|office|department|lab|"
        r"squad|workplace|company|firm)\b",
        re.I,
    ),
    # with an old colleague, ⟨1⟩ / a friend of ⟨0⟩'s, ⟨1⟩ (the speaker's, when no owner is said)
    re.compile(
        rf"\b(?:an?|one\s+of\s+\x02(?P<own>0)\x03's)\s+(?P<mods>(?:(?:[\w-]+|\x02\d+\x03)\s+){{0,2}}?){_SOCIAL}s?"
        rf"(?:\s+of\s+\x02(?P<own2>0)\x03's)?\s*,\s*{_LIST}",
        re.I,
    ),
)
_WORKPLACE = frozenset({"team", "office", "department", "lab", "squad", "workplace", "company", "firm"})


def scan_kinship(tagged: str) -> list[KinshipMatch]:
    hits, seen = [], set()
    for pattern in _KIN_PATTERNS:
        for match in _chained(pattern, tagged):
            # no owner said: the writer's; a pattern may name the person in one of several places
            named = next(g for g in ("name", "name2", "name3") if match.groupdict().get(g))
            owner, name = int(match.group("own") or 0), int(match.group(named))
            kin = match.group("kin").lower()
            # "bought a cat, we named him …": the writer after the comma opens a clause, not an apposition
            if owner == name or (owner, name) in seen or name == 0 and kin in PET_TERMS:
                continue
            seen.add((owner, name))
            mods = match.group("mods").lower().split()
            if kin in PET_TERMS and match.groupdict().get("desc"):  # "⟨2⟩'s Siamese cat, ⟨3⟩": what kind of cat
                mods += match.group("desc").split()
            hits.append(kinship_match(owner, name, kin, mods))
    for pattern in _LIST_PATTERNS:
        for match in pattern.finditer(tagged):
            owner = int(match.group("own") or match.groupdict().get("own2") or 0)
            kin = match.group("kin").lower()
            kin = "colleague" if kin in _WORKPLACE else kin
            mods = [m for m in match.group("mods").lower().split() if m in KIN_MODIFIERS]
            for name in (int(i) for i in re.findall(r"\x02(\d+)\x03", match.group("list"))):
                if owner == name or (owner, name) in seen or name == 0 and kin in PET_TERMS:
                    continue
                seen.add((owner, name))
                hits.append(kinship_match(owner, name, kin, mods))
    return hits


def _chained(pattern: re.Pattern, tagged: str):
    """The pattern's matches, each next one searched from where the last one's name starts: in
    "⟨0⟩'s cousin ⟨1⟩'s sister ⟨2⟩" the cousin is also the sister's owner."""
    pos = 0
    while (match := pattern.search(tagged, pos)) is not None:
        yield match
        named = next((g for g in ("name", "name2", "name3") if match.groupdict().get(g)), None)
        pos = max(match.start(named) - 1 if named else match.end(), match.start() + 1)  # its opening mark


def kinship_match(owner: int, name: int, kin: str, mods: list[str]) -> KinshipMatch:
    term = re.sub(r"-\s+", "-", " ".join([*mods, kin]))
    mods = [m.rstrip("-") for m in mods]  # "ex-husband"
    if kin in PET_TERMS:
        return KinshipMatch(owner, name, term, "has_pet", False, True)
    rel, reverse = KINSHIP[kin]
    former = "ex" in mods or "former" in mods or "old" in mods or "previous" in mods
    role = role_of_term(kin)
    if former and (role or "ex" in mods or "former" in mods):
        rel = "former_" + rel
    return KinshipMatch(owner, name, term, rel, reverse, False, "" if former else role)


def scan_located_in(tagged: str, registry: Registry) -> list[tuple[int, int]]:
    """Place pairs: "⟨Austin⟩, ⟨Texas⟩" → Austin located_in Texas."""
    pairs = []
    for match in _PLACE_PAIR.finditer(tagged):
        inner, outer = int(match.group(1)), int(match.group(3))
        # "moved to ⟨Kumasi⟩, ⟨London⟩ was too dear": the second place opens a clause of its own (not
        # "⟨Edinburgh⟩, ⟨Scotland⟩ would be great", the pair as the subject)
        if tagged[: match.start()].strip() and opens_clause(tagged[match.start("outer") :]):
            continue
        if inner != outer and registry.entities[inner].type == registry.entities[outer].type == "place":
            pairs.append((inner, outer))
    return pairs
