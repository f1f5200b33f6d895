"""Temporal expressions ("yesterday", "last week", "in May 2023", "3 days ago", "since 2019")
resolved against a reference time into a [start, end) window: a query's date window, and the
world time a stated fact starts at. Pure functions."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9  # as people write it; every form `_MONTH` matches has a number
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|" \
         r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10, "a": 1, "an": 1, "a couple of": 2, "a few": 3, "several": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


@dataclass(frozen=True)
class TimeWindow:
    start: datetime
    end: datetime
    expression: str

    def as_dict(self) -> dict:
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "expression": self.expression}


def _day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_window(year: int, month: int, tz) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=tz)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=tz)
    return start, end


def _relative(text: str, now: datetime) -> TimeWindow | None:
    today = _day(now)
    simple = {
        "today": (today, today + timedelta(days=1)),
        "yesterday": (today - timedelta(days=1), today),
        "last night": (today - timedelta(days=1), today),
        "this week": (today - timedelta(days=today.weekday()), today + timedelta(days=1)),
        "last week": (today - timedelta(days=today.weekday() + 7), today - timedelta(days=today.weekday())),
        "last weekend": (today - timedelta(days=today.weekday() + 2), today - timedelta(days=today.weekday())),
        "this month": (today.replace(day=1), today + timedelta(days=1)),
        "this year": (today.replace(month=1, day=1), today + timedelta(days=1)),
        "last year": (datetime(now.year - 1, 1, 1, tzinfo=now.tzinfo), datetime(now.year, 1, 1, tzinfo=now.tzinfo)),
        "recently": (today - timedelta(days=14), today + timedelta(days=1)),
    }
    for phrase, (start, end) in simple.items():
        if re.search(rf"\b{phrase}\b", text):
            return TimeWindow(start, end, phrase)
    if re.search(r"\blast month\b", text):
        year, month = (now.year - 1, 12) if now.month == 1 else (now.year, now.month - 1)
        return TimeWindow(*_month_window(year, month, now.tzinfo), "last month")
    match = re.search(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|several|an?)\s+"
                      r"(day|week|month|year)s?\s+ago\b", text)
    if match:
        amount = int(match.group(1)) if match.group(1).isdigit() else _NUMBERS[match.group(1)]
        span = _UNIT_DAYS[match.group(2)]
        center = today - timedelta(days=amount * span)
        slack = timedelta(days=max(1, span // 2))
        return TimeWindow(center - slack, center + slack + timedelta(days=1), match.group(0))
    return None


_ISO_DAY = re.compile(r"\b(week of |weekend of )?((?:19|20)\d{2})-(\d{2})-(\d{2})\b")


def _absolute(text: str, now: datetime) -> TimeWindow | None:
    tz = now.tzinfo
    match = _ISO_DAY.search(text)  # "2024-02-11", "week of 2024-02-05" (the offline extractor writes these)
    if match:
        try:
            start = datetime(int(match.group(2)), int(match.group(3)), int(match.group(4)), tzinfo=tz)
        except ValueError:
            return None
        span = {"week of ": 7, "weekend of ": 2}.get(match.group(1) or "", 1)
        return TimeWindow(start, start + timedelta(days=span), match.group(0))
    match = re.search(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH},?\s+(\d{{4}})\b", text) or re.search(
        rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", text)
    if match:
        groups = match.groups()
        day, month, year = (groups[0], groups[1], groups[2]) if groups[0].isdigit() else (groups[1], groups[0],
                                                                                          groups[2])
        try:
            start = datetime(int(year), MONTHS[month], int(day), tzinfo=tz)
        except ValueError:
            return None
        return TimeWindow(start, start + timedelta(days=1), match.group(0))
    match = re.search(rf"\b{_MONTH}\s+(?:of\s+)?(\d{{4}})\b", text)
    if match:
        return TimeWindow(*_month_window(int(match.group(2)), MONTHS[match.group(1)], tz), match.group(0))
    match = re.search(r"\b(?:in|during|since|of)\s+((?:19|20)\d{2})\b(?![-/]\d)", text)
    if match:
        year = int(match.group(1))
        return TimeWindow(datetime(year, 1, 1, tzinfo=tz), datetime(year + 1, 1, 1, tzinfo=tz), match.group(0))
    return None


def resolve_temporal(query: str, now: datetime) -> TimeWindow | None:
    """The first temporal expression of the query as a window, or None (also for dates outside
    the calendar, like "3000 years ago" or "December 9999")."""
    text = query.lower()
    try:
        return _absolute(text, now) or _relative(text, now)
    except (OverflowError, ValueError):
        return None


_BARE_MONTH = re.compile(rf"\b(?:in|since|during|last|this)\s+{_MONTH}\b(?!\s*,?\s*\d)")


# a plan or what is under way: "is moving to Braga in June", "will start in May", "going to join in March"
_AHEAD = re.compile(r"\b(?:will|'ll|going\s+to|gonna|plan(?:s|ning)?\s+to|(?:is|are|am|'m|'re|'s)\s+(?:\w+\s+)?"
                    r"(?:moving|starting|relocating|joining|leaving|going|heading|coming))\b")


def _bare_month(text: str, now: datetime) -> TimeWindow | None:
    """"in September" said in January 2024: September 2023, the latest one not after `now`; said of
    a plan ("is moving to Braga in June"), the next one."""
    match = _BARE_MONTH.search(text)
    if not match:
        return None
    month = MONTHS[match.group(1)]
    if _AHEAD.search(text[: match.start()]):
        year = now.year if month > now.month else now.year + 1
    else:
        year = now.year if month <= now.month else now.year - 1
    return TimeWindow(*_month_window(year, month, now.tzinfo), match.group(0))


def statement_start(text: str, said_at: datetime) -> datetime | None:
    """When the state or event a statement describes began in the world, from its temporal
    expression, resolved against when it was said ("moved to Toronto in September", said on
    2024-01-10 → 2023-09-01); None when it names no time or one after `said_at`."""
    lowered = text.lower()
    try:
        window = _absolute(lowered, said_at) or _relative(lowered, said_at) or _bare_month(lowered, said_at)
    except (OverflowError, ValueError):
        return None
    if window is None or window.start > said_at:
        return None
    return window.start


_SPAN_WORDS = {**_NUMBERS, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40}
_SPAN_UNITS = {"week": 7, "wk": 7, "month": 30, "year": 365, "yr": 365, "decade": 3650}  # not "after a mo"
# how long a state lasted, said as it ends: "left the bank after almost four years", "after 30 yrs"
_AFTER_A_SPAN = re.compile(
    r"\bafter\s+(?:(?:almost|nearly|about|around|roughly|over|more\s+than|just\s+over|just\s+under|close\s+to)\s+)?"
    rf"(?P<n>\d{{1,2}}|{'|'.join(sorted(map(re.escape, _SPAN_WORDS), key=len, reverse=True))})\s+"
    r"(?P<unit>week|wk|month|year|yr|decade)s?\b",
    re.I,
)


def ended_after(sentence: str) -> timedelta | None:
    """How long the state a sentence ends had lasted, when it says so ("I left Halden Bank after
    almost four years" → about 4 × 365 days); None otherwise. Approximate words ("almost", "over")
    are read as the number itself."""
    match = _AFTER_A_SPAN.search(sentence)
    if match is None:
        return None
    n = match.group("n").lower()
    amount = int(n) if n.isdigit() else _SPAN_WORDS[n]
    return timedelta(days=amount * _SPAN_UNITS[match.group("unit").lower()]) if amount > 0 else None

