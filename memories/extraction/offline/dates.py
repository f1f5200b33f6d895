"""Relative dates in fact texts, resolved against the message time.

"Priya went to a pottery class yesterday", said on 2023-05-08, becomes "... yesterday
(2023-05-07)": the original words stay, the resolved date follows in parentheses — a day as an
ISO date, a week as "week of <Monday>", a weekend as "weekend of <Saturday>", a month as
"May 2023", a year as "2022". That makes facts findable by date and answerable offline.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Full names and the abbreviations that are not also English words ("sat", "sun" are).
_WEEKDAY_INDEX = {
    **{name: i for i, name in enumerate(WEEKDAYS)},
    **dict.fromkeys(("mon",), 0),
    **dict.fromkeys(("tue", "tues"), 1),
    **dict.fromkeys(("wed",), 2),
    **dict.fromkeys(("thu", "thur", "thurs"), 3),
    **dict.fromkeys(("fri",), 4),
}
_MONTH_NAMES = (
    *("January", "February", "March", "April", "May", "June"),
    *("July", "August", "September", "October", "November", "December"),
)
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "couple": 2,
}
_NUMBER_ALT = "|".join(sorted((re.escape(k) for k in _NUMBERS), key=len, reverse=True))
_RELATIVE = re.compile(
    r"\b(?:(?P<day>yesterday|today|tonight|tomorrow|last\s+night|this\s+(?:morning|afternoon|evening))"
    r"|(?<!\bthe\s)(?P<rel>last|this|next)\s+(?P<unit>week|weekend|month|year|"
    + "|".join(sorted(_WEEKDAY_INDEX, key=len, reverse=True))
    + r")"
    r"|(?P<n>\d{1,3}|" + _NUMBER_ALT + r")\s+(?P<units>days?|weeks?|weekends?|months?|years?)\s+ago)"
    r"(?P<poss>'s)?(?![\w'-])(?!\s*\()",
    re.I,
)
_QUICK = re.compile(r"yesterday|today|tonight|tomorrow|last|this|next|ago", re.I)


def annotate_dates(text: str, today: date) -> str:
    """Append the resolved date after each relative time expression of `text`."""
    if not _QUICK.search(text):
        return text
    return _RELATIVE.sub(lambda m: _annotated(m, today), text)


def _annotated(match: re.Match, today: date) -> str:
    resolved = _resolve(match, today)
    return f"{match.group()} ({resolved})" if resolved else match.group()


def _resolve(match: re.Match, today: date) -> str:
    if day := match.group("day"):
        day = " ".join(day.lower().split())
        offset = {"yesterday": -1, "last night": -1, "tomorrow": 1}.get(day, 0)
        return (today + timedelta(days=offset)).isoformat()
    if rel := match.group("rel"):
        return _relative_unit(rel.lower(), match.group("unit").lower(), today)
    n = _NUMBERS.get(" ".join(match.group("n").lower().split())) or int(match.group("n"))
    unit = match.group("units").lower().rstrip("s")
    if unit == "weekend":
        return "weekend of " + _weekend(today, -n).isoformat()
    if unit == "day":
        return (today - timedelta(days=n)).isoformat()
    if unit == "week":
        return _week(today - timedelta(weeks=n))
    if unit == "month":
        return _month(today, -n)
    return str(today.year - n)


def _relative_unit(rel: str, unit: str, today: date) -> str:
    step = {"last": -1, "this": 0, "next": 1}[rel]
    if unit == "week":
        return _week(today + timedelta(weeks=step))
    if unit == "month":
        return _month(today, step)
    if unit == "year":
        return str(today.year + step)
    if rel == "next" and unit == "weekend":  # the coming one, or the one after: ambiguous
        return ""
    if unit == "weekend":
        return "weekend of " + _weekend(today, step).isoformat()
    if rel == "this":  # "this Friday": past or coming, ambiguous
        return ""
    target = _WEEKDAY_INDEX[unit]
    if rel == "last":  # the most recent such day before today
        return (today - timedelta(days=(today.weekday() - target - 1) % 7 + 1)).isoformat()
    return (today + timedelta(days=(target - today.weekday() - 1) % 7 + 1)).isoformat()


def _week(day: date) -> str:
    return "week of " + (day - timedelta(days=day.weekday())).isoformat()


def _month(today: date, step: int) -> str:
    index = today.year * 12 + today.month - 1 + step
    return f"{_MONTH_NAMES[index % 12]} {index // 12}"


def _weekend(today: date, step: int) -> date:
    """Saturday of this weekend (the coming one on weekdays, the current one on Sat/Sun), shifted
    by `step` weeks."""
    weekday = today.weekday()
    saturday = today - timedelta(days=weekday - 5) if weekday >= 5 else today + timedelta(days=5 - weekday)
    return saturday + timedelta(weeks=step)


SEASON = r"(?:spring|summer|autumn|fall|winter)"
# when a state began, said beside it: "since March of last year", "in 2019", "two years ago", "last spring"
# (not a bare "in June": a move planned for June has not begun)
_SINCE = re.compile(
    rf"\b(?:(?:since|as\s+of)\s+(?:(?:early|late|mid)[\s-]+)?(?:(?:{'|'.join(_MONTH_NAMES)}|{SEASON})"
    r"(?:\s+(?:of\s+)?(?:(?:19|20)\d\d|last\s+year|this\s+year))?|(?:19|20)\d\d)"
    r"|(?:in|from)\s+(?:(?:early|late|mid)[\s-]+)?(?:19|20)\d\d"
    rf"|(?:since\s+)?last\s+(?:year|month|{SEASON})"
    rf"|(?:\d{{1,2}}|{_NUMBER_ALT})\s+(?:years?|months?|weeks?)\s+ago)\b",
    re.I,
)


def time_said(text: str) -> str:
    """The first expression of `text` that dates a state's beginning ("since March of last year",
    "two years ago", "in 2019"), or ""."""
    match = _SINCE.search(text)
    return match.group() if match else ""
