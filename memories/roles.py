"""Person roles: who is someone's manager, doctor, landlord — plain data shared by both extractors
and by reconciliation.

A role is a single-valued slot of the person who has it ("Wren's dentist"): it has one current
holder, and a new holder ("my new dentist is Dr. Ito", "now I report to Omar") replaces the old
one. A role fact is stored about the person who has the role, with slot `role:<role>` and the
holder's name as the value; the edge runs holder → person (`dentist_of`, `manager_of`), or
person → holder for `reports_to`.
"""

from __future__ import annotations

ROLE_SLOT_PREFIX = "role:"
# A fact that retracts this slot with no value ends every current partnership of its subject: a
# death ("Bob passed away", said of Bob; "my husband died", said of the writer).
PARTNER_SLOT = "partner"

_SPECIALISTS = frozenset((
    "dentist", "orthodontist", "psychiatrist", "psychologist", "endocrinologist", "cardiologist",
    "dermatologist", "oncologist", "neurologist", "rheumatologist", "urologist", "allergist",
    "gastroenterologist", "nephrologist", "pulmonologist", "hematologist", "ophthalmologist", "optometrist",
    "obstetrician", "surgeon", "midwife", "chiropractor", "nutritionist", "dietitian", "dietician",
    "accountant", "vet", "veterinarian",
))
# role term (as said) → the role it fills. Several words for one role ("boss", "supervisor") share
# it, so "now I report to Omar" replaces "my boss is Irene".
ROLE_TERMS: dict[str, str] = {
    **dict.fromkeys(["boss", "manager", "supervisor", "line manager", "team lead", "team leader"], "manager"),
    **dict.fromkeys(["doctor", "physician", "gp", "family doctor", "primary care doctor"], "doctor"),
    **dict.fromkeys(["therapist", "counselor", "counsellor"], "therapist"),
    **dict.fromkeys(["physio", "physiotherapist", "physical therapist"], "physiotherapist"),
    **dict.fromkeys(["landlord", "landlady"], "landlord"),
    **dict.fromkeys(["lawyer", "attorney", "solicitor"], "lawyer"),
    **dict.fromkeys(["gynecologist", "gynaecologist", "ob-gyn", "obgyn"], "gynecologist"),
    **dict.fromkeys(["pediatrician", "paediatrician"], "pediatrician"),
    **dict.fromkeys(["advisor", "adviser", "phd advisor", "thesis advisor"], "advisor"),
    **{term: term for term in _SPECIALISTS},
    "personal trainer": "personal trainer",
}
# the relation a role's edge carries; source is the holder unless the role is said the other way
ROLE_RELATIONS: dict[str, str] = {role: f"{role.replace(' ', '_')}_of" for role in set(ROLE_TERMS.values())}
# "I report to Omar" fills the manager role from the other side
REPORTS_TO = "reports_to"


def role_of_term(term: str) -> str:
    """The role a term names ("boss" → "manager"), or ""."""
    return ROLE_TERMS.get(" ".join(term.lower().split()), "")


def role_slot(role: str) -> str:
    return f"{ROLE_SLOT_PREFIX}{role}" if role else ""


def role_of_relation(rel_type: str) -> str:
    """The role an edge type fills ("dentist_of" → "dentist", "reports_to" → "manager"), or ""."""
    if rel_type == REPORTS_TO:
        return "manager"
    for role, rel in ROLE_RELATIONS.items():
        if rel == rel_type:
            return role
    return ""


def role_words(role: str) -> list[str]:
    """The words that say a role in a fact's text ("manager" → boss, manager, supervisor, report)."""
    words = [t for t, r in ROLE_TERMS.items() if r == role]
    return [*words, "report"] if role == "manager" else words
