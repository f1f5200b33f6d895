"""Sentence-level judgements for the offline extractor: is it a question or filler, how hedged
is it, and which importance category does a fact fall in."""

from __future__ import annotations

import re

_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_PERIODS = "day|week|morning|afternoon|evening|night|weekend|month|year|summer|winter|spring|fall|time"

_QUESTION_START = re.compile(
    r"^(?:what|how|who|whom|whose|why|where|which|do you|did you|are you|can you|could you|would you|"
    r"will you|have you|has anyone|is it|isn't it|any chance|wanna|want to)\b",
    re.I,
)
DISCOURSE = re.compile(
    r"^(?:(?:yeah|yes|yep|yup|oh|ooh|ah|aw+|wow|whoa|well|so|and|but|also|plus|anyway|anyways|actually|"
    r"honestly|btw|by the way|ok|okay|hey|hi|hello|lol|haha\w*|hehe|hmm+|um+|uh+|totally|definitely|sure|"
    r"right|true|no|nope|man|dude|gosh|omg|oh man|oh my|sadly|luckily|fortunately|unfortunately|thankfully|"
    r"basically|on (?:a|another)(?: \w+)? note|speaking of which|as for me|in fact|"
    r"of course|thanks|thank you|thx|congrats|congratulations|sorry|lmao|guess what|you know|you know what|"
    r"believe it or not|funny enough|speaking of [^,.!?]{1,40}|to be honest|tbh|ngl|not gonna lie|fun fact|"
    r"i mean|i swear|please (?:note|be advised|be aware)(?: that)?|kindly note(?: that)?|for the record|"
    r"i (?:gotta|have to|must|got to|need to) (?:say|admit|tell you|tell ya)(?: that)?(?! about)|"
    r"(?:i )?(?:just )?wanted to (?:say|tell (?:you|ya)|let you know|share)(?: that)?|"
    r"i'm (?:so |really |super )?(?:excited|happy|glad|thrilled|stoked) to (?:tell|share with|let) (?:you|ya)"
    r"(?: know)?(?: that)?)\b[\s,!.:;\-]*)+",
    re.I,
)
_REPORTING = re.compile(
    r"^[^.!?]{0,80}?\b(?:let you know|tell you|tell ya|to say|to share|you know what)(?: that)?,?\s+"
    r"(?=(?:I|I'm|I've|I'd|I'll|we|we're|we've|my|our)\b)",
    re.I,
)
_IMPERATIVE = re.compile(
    r"^(?:let's|let us|keep|check|take|have|enjoy|stay|make sure|don't|do not|remember|hold|go|come|look|try|"
    r"tell|give|be|feel free|imagine|trust|believe|wish|hope|good luck|congrats|please|never|always)\b",
    re.I,
)
_YOU_START = re.compile(r"^(?:you|your|you're|you've|you'll|you'd|u|ya|yours)\b", re.I)
_YOU_ANY = re.compile(r"\b(?:you|your|you're|you've|you'll|you'd|yours)\b", re.I)
_HEDGE = re.compile(
    r"\b(?:maybe|probably|perhaps|might|possibly|not sure|kinda|sorta|hopefully|apparently|may be|seems|"
    r"seem)\b|\x03\s+(?:\w+\s+)?(?:thinks|guesses|believes|supposes|hopes|is hoping|bets|assumes|reckons|"
    r"doubts|is thinking)\b",
    re.I,
)
_REACTION = re.compile(
    r"^(?:(?:totally|really|completely|definitely|so|just)\s+)*(?:couldn't agree more|can't agree more|"
    r"agrees?|sees|knows|understands|gets it|bets|guesses|hears you|feels you|feels the same|is sure|"
    r"is so sure|is glad|is so glad|appreciates (?:it|that|you)|can't wait|will keep you (?:posted|updated)|"
    r"will definitely keep you (?:posted|updated))\b\s*(?:[,.!;:-]|$|that\b|with you|so\b|too\b)",
    re.I,
)

_MILESTONE = re.compile(
    r"\b(?:married|marry|marrying|wedding|engaged|born|graduat\w*|pregnant|divorc\w*|retired|retiring|"
    r"passed away|died|adopted|gave birth|new baby|came out|coming out|transitioned|transitioning)\b|"
    r"\x03\s+(?:\w+\s+){0,2}(?:moved|moving|relocated|relocating)\s+(?:to|in|out|back|away|from|here|there|house|abroad)\b",
    re.I,
)
_CHANGE = re.compile(
    r"\b(?:left|quit|joined|leaving|joining)\s+(?:the\s+)?\x02|\b(?:started dating|broke up|split up|"
    r"got fired|was fired|laid off|got promoted|promoted|new job|resigned|stopped working|no longer|"
    r"got a job|started a new job|hired by|dumped)\b",
    re.I,
)
_PREFERENCE = re.compile(
    r"\x03\s+(?:\w+\s+){0,2}?(?:likes?|loves?|loved|enjoys?|enjoyed|prefers?|preferred|hates?|adores?|"
    r"(?:is|was|has been)\s+(?:\w+\s+)?(?:into|interested in|obsessed with|passionate about|a fan of))\b|"
    r"\b(?:favou?rite|fan of|can't stand)\b",
    re.I,
)
_ROUTINE = re.compile(
    rf"\b(?:every\s+(?:{_PERIODS}|{_DAYS})|usually|often|always|daily|weekly|monthly|regularly|"
    rf"each\s+(?:{_PERIODS})|on\s+weekends|(?:once|twice|\w+\s+times)\s+a\s+(?:day|week|month|year)|"
    rf"most\s+(?:days|weekends|mornings|nights|evenings)|routine|habit|(?:{_DAYS})s)\b",
    re.I,
)
_TIME = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|last\s+(?:{_PERIODS}|{_DAYS})|this\s+(?:{_PERIODS})|"
    rf"next\s+(?:{_PERIODS}|{_DAYS})|ago|recently|earlier|the other day|on\s+(?:{_DAYS})|"
    rf"in\s+(?:19|20)\d\d|(?:{_MONTHS})\s+\d)\b",
    re.I,
)


def is_question(sentence: str) -> bool:
    text = sentence.strip()
    return text.endswith("?") or bool(_QUESTION_START.match(DISCOURSE.sub("", text)))


# "Big update: I moved", "Some news: I joined Acme": a short headline before a colon.
_HEADLINE = re.compile(r"^(?:[A-Za-z][\w']*\s+){0,4}[A-Za-z][\w']*\s*:\s+(?=\S)")


def strip_discourse(text: str) -> str:
    """Drop leading fillers ("Yeah, so...") and a reporting frame before a first-person clause
    ("Long time no see, just so you know I joined a club" → "I joined a club"),
    and a short headline before a colon ("Big news: ...")."""
    text = _HEADLINE.sub("", text.strip(), count=1)
    text = _REPORTING.sub("", text, count=1)
    return DISCOURSE.sub("", text, count=1).strip()


def addresses_listener(text: str) -> bool:
    """The clause is about "you" (the listener), not the speaker."""
    return bool(_YOU_START.match(text))


def mentions_listener(text: str) -> bool:
    return bool(_YOU_ANY.search(text))


def is_imperative(text: str) -> bool:
    """Imperatives ("Let's keep going", "Keep it up", "Check out my painting") address the listener."""
    return bool(_IMPERATIVE.match(text))


def is_reaction(predicate: str) -> bool:
    """Acknowledgements ("⟨0⟩ couldn't agree more", "⟨0⟩ sees, so...") are not facts."""
    return bool(_REACTION.match(predicate))


def is_hedged(text: str) -> bool:
    return bool(_HEDGE.search(text))


def categorize(text: str, past: bool) -> str:
    """Importance category of a fact from its (tagged) wording."""
    if _MILESTONE.search(text):
        return "biographical_milestone"
    if _CHANGE.search(text):
        return "relationship_change"
    if _PREFERENCE.search(text):
        return "stable_preference"
    if _ROUTINE.search(text):
        return "routine_activity"
    if past or _TIME.search(text):
        return "specific_event"
    return "conversational"
