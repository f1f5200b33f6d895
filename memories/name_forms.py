"""The shorter forms a person's name takes in other people's messages, and which of them a forget
may treat as hers. Pure functions over normalized names.

"Ilse Brandt" is also written "Brandt", "Frau Brandt", "Dr. Brandt", "I. Brandt" and "Ilse".
Messages that use those forms were often never linked to her entity (they became `concept:brandt`
or `person:frau_brandt`), so a forget that only knows her full names and aliases leaves them
behind. A form is hers unless it can just as well mean someone else the agent knows:

- the family name alone, or with a title: unless another known name has the same family name
  ("Klaus Brandt": "Herr Brandt" could be either);
- an initial and the family name: unless another known name has that family name and a given
  name with the same initial;
- the given name alone: unless another known name has the same given name;
- never a form that is itself another entity's name or alias, and never a one-word form that is
  also an ordinary word ("Will", "Rose"): it would redact ordinary text. One-word forms only match
  as capitalized words ("Brandt", not "brandt"), for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from memories.extraction.offline.lexicon import word_set

# Titles written before a family name, in the languages the agents' users write most; normalized
# (no period, no accents). "m" (Monsieur) is left out: it reads as an initial.
TITLES = word_set("""
mr mrs ms miss mx sir dame lady lord dr doctor prof professor rev fr sr sra srta don dona senor senora
senorita senhor senhora frau herr fraulein madame mme mademoiselle mlle monsieur signor signora signorina
mevrouw mevr meneer dhr pan pani
""")
# Words that belong to the family name when written before it ("van Dijk", "da Silva").
PARTICLES = word_set("van von de da di du del della der den dos das do le la ten ter bin al el")

FAMILY, TITLED, INITIAL, GIVEN = "family name", "title and family name", "initial and family name", "given name"


@dataclass(frozen=True)
class KnownName:
    """Another entity's name the agent knows (not one of hers): display name and aliases,
    normalized, and the entity's display name to say whom a form could also mean."""

    label: str
    names: tuple[str, ...]


@dataclass
class FormDecision:
    """One shorter form of one of her names: what it is, whether the forget treats it as hers,
    and why not when it does not. `forms` holds the normalized strings it stands for (a titled
    form stands for every title)."""

    kind: str
    shown: str  # how the preview shows it: "Brandt", "Frau/Herr/Dr … Brandt", "I. Brandt", "Ilse"
    forms: tuple[str, ...]
    hers: bool = True
    reason: str = ""
    also: list[str] = field(default_factory=list)  # the other known names it could mean

    @property
    def capitalized_only(self) -> bool:
        return self.kind in (FAMILY, GIVEN)


def _split(name: str) -> tuple[str, str] | None:
    """(given, family) of a normalized person name of two or more words (titles dropped), the
    family name with its particles; None for a one-word name or one that starts with an initial."""
    words = name.split()
    while words and words[0] in TITLES:
        words = words[1:]
    if len(words) < 2 or len(words[0]) < 2 or not all(w.isalpha() for w in words):
        return None
    start = len(words) - 1
    while start > 1 and words[start - 1] in PARTICLES:
        start -= 1
    return words[0], " ".join(words[start:])


def is_full_name(name: str) -> bool:
    """A normalized name with a given and a family name ("klaus brandt"), not a form of one."""
    return _split(name) is not None


def _others_split(known: Sequence[KnownName]) -> list[tuple[str, str, str]]:
    """(given, family, label) for every full name among the other known names."""
    out = []
    for other in known:
        for name in other.names:
            parts = _split(name)
            if parts:
                out.append((*parts, other.label))
    return out


def name_forms(names: Iterable[str], known: Sequence[KnownName], *,
               ordinary_word: Callable[[str], bool]) -> list[FormDecision]:
    """Every shorter form of her full names (normalized), each decided: hers or not, and why."""
    own = set(names)
    others = _others_split(known)
    taken = {name: other.label for other in known for name in other.names}
    decisions: dict[tuple[str, str], FormDecision] = {}
    for name in sorted(own):
        parts = _split(name)
        if parts is None:
            continue
        given, family = parts
        same_family = sorted({label for g, f, label in others if f == family})
        same_initial = sorted({label for g, f, label in others if f == family and g[0] == given[0]})
        same_given = sorted({label for g, f, label in others if g == given})
        candidates = [
            (FAMILY, family.title(), (family,), same_family),
            (TITLED, f"Mr/Ms/Frau/Herr/Dr … {family.title()}", tuple(f"{t} {family}" for t in sorted(TITLES)),
             same_family),
            (INITIAL, f"{given[0].upper()}. {family.title()}", (f"{given[0]} {family}",), same_initial),
            (GIVEN, given.title(), (given,), same_given),
        ]
        for kind, shown, forms, also in candidates:
            forms = tuple(f for f in forms if f not in own)
            if not forms or (kind, shown) in decisions:
                continue
            decision = FormDecision(kind, shown, forms)
            owner = next((taken[f] for f in forms if f in taken), None)
            if kind in (FAMILY, GIVEN) and (ordinary_word(forms[0]) or len(forms[0]) < 2):
                decision.hers, decision.reason = False, "also an ordinary word"
            elif kind == INITIAL and ordinary_word(family):
                decision.hers, decision.reason = False, "its family name is also an ordinary word"
            elif also:
                decision.hers, decision.also = False, also
                decision.reason = f"could also mean {', '.join(also)}"
            elif owner is not None and kind != TITLED:
                decision.hers, decision.also = False, [owner]
                decision.reason = f"a name of {owner}"
            elif kind == TITLED:  # a title an other entity goes by ("Herr Brandt") stays theirs
                decision.forms = tuple(f for f in forms if f not in taken)
            decisions[(kind, shown)] = decision
    return list(decisions.values())


def forms_hers(decisions: Iterable[FormDecision]) -> tuple[set[str], set[str]]:
    """The forms to redact: (any case, capitalized only)."""
    anycase, capitalized = set(), set()
    for d in decisions:
        if d.hers:
            (capitalized if d.capitalized_only else anycase).update(d.forms)
    return anycase, capitalized
