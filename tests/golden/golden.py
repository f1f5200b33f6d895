"""Golden sentences: loading the per-frame files and comparing what the memory stored with what
each case expects. The comparison is plain data in, a list of misses out (tests/golden/README.md
has the file format)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from memories.naming import normalize_alias
from memories.roles import ROLE_RELATIONS

HERE = Path(__file__).parent
T0 = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)
STEP = timedelta(days=21)  # between two messages of a case that give no time of their own

# the same edge said from either end
SYMMETRIC = frozenset({
    "partner_of", "spouse_of", "engaged_to", "former_partner_of", "former_spouse_of", "sibling_of",
    "cousin_of", "friend_of", "colleague_of", "neighbor_of", "roommate_of", "related_to",
})
# the same edge with its ends swapped
INVERSE = {
    "child_of": "parent_of", "grandchild_of": "grandparent_of", "reports_to": "manager_of",
    "niece_or_nephew_of": "aunt_or_uncle_of", "patient_of": "doctor_of",
}
# an expected relation is also met by these stored relations (a fiancé is a partner)
ALSO = {"partner_of": ("engaged_to",)}
# an ended relation may be stored as a past form of it, current or closed
PAST_FORMS = {
    "lives_in": ("lived_in", "moved_away_from"),
    "works_at": ("worked_at", "former_employee_of"),
    "studies_at": ("studied_at", "graduated_from"),
    "member_of": ("former_member_of",),
    "partner_of": ("former_partner_of",),
    "engaged_to": ("former_partner_of",),
    "spouse_of": ("former_spouse_of",),
}
STATES = ("current", "ended", "absent", "never")  # absent: not current; never: no edge, current or past
# the relations a case may expect: the frames' own, and each role's (roles.py)
RELATIONS = frozenset({
    "lives_in", "works_at", "studies_at", "member_of", "has_pet", "parent_of", "grandparent_of",
    "aunt_or_uncle_of", *SYMMETRIC, *INVERSE, *ROLE_RELATIONS.values(), "reports_to", "teacher_of", "mentor_of",
})
Resolver = Callable[[str, str], "int | None"]


def norm(name: str) -> str:
    text = normalize_alias(name)
    return text[4:] if text.startswith("the ") else text


# --- the stored memory, as plain data ------------------------------------------------------------

@dataclass
class Stored:
    entities: dict[int, tuple[str, str, frozenset[str]]] = field(default_factory=dict)  # id → name, type, names
    relationships: list[tuple[int, str, int, bool]] = field(default_factory=list)  # source, rel, target, current
    # subject, every entity it names (subject included), text, slot, value, current
    facts: list[tuple[int, frozenset[int], str, str, str, bool]] = field(default_factory=list)

    def named(self, name: str) -> list[int]:
        key = norm(name)
        return [eid for eid, (_, _, names) in self.entities.items() if key in names]

    def describe(self) -> str:
        lines = [f"  entity {n!r} ({t}) aka {sorted(a)}" for n, t, a in self.entities.values()]
        name = {eid: row[0] for eid, row in self.entities.items()}
        lines += [f"  edge {name.get(s, s)} -{r}-> {name.get(t, t)} [{'current' if c else 'ended'}]"
                  for s, r, t, c in self.relationships]
        lines += [f"  fact [{name.get(e, e)}] {x!r} slot={s}:{v} [{'current' if c else 'ended'}]"
                  for e, _, x, s, v, c in self.facts]
        return "\n".join(lines)


# --- the files -----------------------------------------------------------------------------------

@dataclass
class Case:
    frame: str
    id: str
    messages: list[tuple[str, str, datetime]]
    expect: dict
    known_gap: str = ""

    @property
    def test_id(self) -> str:
        return f"{self.frame}/{self.id}"


def _when(value, fallback: datetime) -> datetime:
    """A message's time: as given (a date is read as 09:00 UTC that day), else `fallback`."""
    if value is None:
        return fallback
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if not isinstance(value, datetime):  # a date
        value = datetime(value.year, value.month, value.day, 9, 0)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


CASE_KEYS = {"id", "speaker", "messages", "expect", "known_gap"}
MESSAGE_KEYS = {"speaker", "text", "at"}
EXPECT_KEYS = {
    "entities": ({"name"}, {"type", "aliases"}),
    "relationships": ({"subject", "relation", "object"}, {"state"}),
    "facts": ({"subject"}, {"has", "slot", "value", "state", "own"}),
}


def _check_shape(where: str, raw: dict) -> None:
    """A misspelt key would make a check pass without looking: every key must be known."""
    assert set(raw) <= CASE_KEYS, f"{where}: unknown keys {sorted(set(raw) - CASE_KEYS)}"
    assert raw.get("messages") and raw.get("expect"), f"{where}: no messages or no expectation"
    for msg in raw["messages"]:
        assert isinstance(msg, str) or set(msg) <= MESSAGE_KEYS and "text" in msg, f"{where}: message {msg!r}"
    assert set(raw["expect"]) <= {*EXPECT_KEYS, "people"}, f"{where}: unknown expectation {sorted(raw['expect'])}"
    for kind, (required, optional) in EXPECT_KEYS.items():
        for item in raw["expect"].get(kind, ()):
            assert required <= set(item) <= required | optional, f"{where}: {kind} item {item}"
            assert item.get("state", "current") in STATES, f"{where}: state of {item}"
            assert kind != "relationships" or item["relation"] in RELATIONS, f"{where}: relation of {item}"
            assert kind != "facts" or {"has", "slot"} & set(item), f"{where}: a fact needs words or a slot"


def load_cases(folder: Path = HERE) -> list[Case]:
    """Every case of every frame file in `folder`, its messages timed `STEP` apart from T0 (or the
    file's `step_minutes`)."""
    cases: list[Case] = []
    for path in sorted(folder.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        frame, speaker = doc["frame"], doc.get("speaker", "")
        # a file may space its messages otherwise: a correction follows what it corrects in minutes
        step = timedelta(minutes=doc["step_minutes"]) if "step_minutes" in doc else STEP
        assert path.stem == frame, f"{path.name}: frame {frame!r} differs from the file name"
        seen: set[str] = set()
        for raw in doc["cases"]:
            where = f"{path.name}/{raw.get('id')}"
            _check_shape(where, raw)
            assert raw["id"] not in seen, f"{where}: case id twice"
            seen.add(raw["id"])
            at, messages = T0, []
            for msg in raw["messages"]:
                msg = {"text": msg} if isinstance(msg, str) else msg
                at = _when(msg.get("at"), at)
                messages.append((msg.get("speaker") or raw.get("speaker") or speaker, msg["text"], at))
                at += step
            assert all(m[0] for m in messages), f"{where}: a message has no speaker"
            cases.append(Case(frame, raw["id"], messages, raw["expect"], raw.get("known_gap", "")))
    return cases


# --- the comparison ------------------------------------------------------------------------------

def _one(stored: Stored, name: str, misses: list[str]) -> int | None:
    ids = stored.named(name)
    if not ids:
        misses.append(f"no entity named {name!r}")
        return None
    if len(ids) > 1:
        misses.append(f"{name!r} names {len(ids)} entities")
        return None
    return ids[0]


def _edges(stored: Stored, rel: str, a: int, b: int, *, past: bool) -> list[bool]:
    """Currentness of each stored edge that states `a -rel-> b` (or its past form when `past`)."""
    wanted = {rel, *ALSO.get(rel, ())}
    if past:
        wanted = set(PAST_FORMS.get(rel, ()))
    out = []
    for s, r, t, current in stored.relationships:
        for w in wanted:
            if ((r == w and (s, t) == (a, b)) or (r == w and w in SYMMETRIC and (s, t) == (b, a))
                    or (INVERSE.get(r) == w and (s, t) == (b, a))):
                out.append(current)
    return out


def _check_entity(stored: Stored, want: dict, misses: list[str], resolve: Resolver | None) -> None:
    eid = _one(stored, want["name"], misses)
    if eid is None:
        return
    name, etype, _ = stored.entities[eid]
    if "type" in want and etype != want["type"]:
        misses.append(f"{want['name']!r} is a {etype}, not a {want['type']}")
    for alias in want.get("aliases", ()):
        # the other name denotes this entity: as stored, or as the memory resolves it when asked
        ids = stored.named(alias)
        if ids == [eid] or (not ids and resolve is not None and resolve(alias, etype) == eid):
            continue
        others = [stored.entities[i][0] for i in ids if i != eid]
        misses.append(f"{alias!r} does not name {name!r}" + (f" (it names {others})" if others else ""))


def _check_relationship(stored: Stored, want: dict, misses: list[str]) -> None:
    state = want.get("state", "current")
    said = f"{want['subject']} -{want['relation']}-> {want['object']} ({state})"
    a, b = stored.named(want["subject"]), stored.named(want["object"])
    if not a or not b:
        if state != "absent":
            misses.append(f"{said}: no entity named {want['subject']!r}" if not a
                          else f"{said}: no entity named {want['object']!r}")
        return
    rows = [c for x in a for y in b for c in _edges(stored, want["relation"], x, y, past=False)]
    past = [c for x in a for y in b for c in _edges(stored, want["relation"], x, y, past=True)]
    if state == "current" and True not in rows:
        misses.append(f"{said}: not stored as current" + (" (stored ended)" if rows or past else ""))
    elif state != "current" and True in rows:
        misses.append(f"{said}: stored as current")
    elif state == "ended" and not rows and not past:
        misses.append(f"{said}: no past link stored")
    elif state == "never" and (rows or past):
        misses.append(f"{said}: a link is stored (ended)")


def _words(value) -> list[str]:
    return [value] if isinstance(value, str) else list(value or ())


def _check_fact(stored: Stored, want: dict, misses: list[str]) -> None:
    state = want.get("state", "current")
    has = [re.compile(rf"(?<!\w){re.escape(w)}", re.IGNORECASE) for w in _words(want.get("has"))]
    said = (f"fact about {want['subject']} {_words(want.get('has')) or ''} "
            f"{want.get('slot', '')}:{want.get('value', '')} ({state})")
    subjects = stored.named(want["subject"])
    if not subjects:
        if state != "absent":
            misses.append(f"{said}: no entity named {want['subject']!r}")
        return

    def fits(row) -> bool:
        # a slot is the subject's own; words alone may be said in a fact that names the subject, or with
        # `own`, in one of the subject's own (what its entity shows)
        subject, named, text, slot, value, _ = row
        return ((subject in subjects if "slot" in want or want.get("own") else bool(named & set(subjects)))
                and all(w.search(text) for w in has)
                and ("slot" not in want or slot == want["slot"])
                and ("value" not in want or norm(value) == norm(want["value"])))

    found = [row[5] for row in stored.facts if fits(row)]
    if state == "current" and True not in found:
        misses.append(f"{said}: no current fact" + (" (an ended one)" if found else ""))
    elif state == "absent" and True in found:
        misses.append(f"{said}: stored as current")
    elif state == "ended" and False not in found:
        misses.append(f"{said}: no ended fact" + (" (a current one)" if found else ""))


def compare(stored: Stored, expect: dict, resolve: Resolver | None = None) -> list[str]:
    """What the stored memory misses of what the case expects (empty: all met). `resolve(name,
    type)` is the id of the entity the memory takes a name to denote, or None."""
    misses: list[str] = []
    for want in expect.get("entities", ()):
        _check_entity(stored, want, misses, resolve)
    for want in expect.get("relationships", ()):
        _check_relationship(stored, want, misses)
    for want in expect.get("facts", ()):
        _check_fact(stored, want, misses)
    if "people" in expect:
        people = sorted(n for n, t, _ in stored.entities.values() if t == "person")
        if len(people) != expect["people"]:
            misses.append(f"{len(people)} people stored, {expect['people']} expected: {people}")
    return misses
