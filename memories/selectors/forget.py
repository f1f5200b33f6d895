"""What a forget covers, read before anything changes (the forget itself and its preview both
start here): the entities that are her, the names and shorter name forms that mean her, the
messages she said or that name her, and every fact about, naming or derived from her.

Her entities are the one the operator chose and those merged into it, the entities with exactly
one of her names (a second entity made for her when she spoke: `person:ilse_brandt` beside
`organization:ilse_brandt`), and the entities named only by a shorter form of her names that is
hers (`concept:brandt`, `person:frau_brandt`: memories.name_forms decides, and says why a form
stays when another known person could be meant).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection
from django.db.models import Q

from memories.extraction.offline.lexicon import (
    AMBIGUOUS_NAMES,
    OF_HEADS,
    ORG_PREFIXES,
    ORG_SUFFIXES,
    PLACE_SUFFIXES,
    STOP_CAPS,
)
from memories.models import Agent, Entity, EntityAlias, Event, Fact, PipelineStep, Relationship
from memories.name_forms import FormDecision, KnownName, forms_hers, is_full_name, name_forms
from memories.naming import normalize_alias
from memories.redaction import KeyRewriter, NameMatcher, opaque_key

THE_ENTITY, MERGED, SAME_NAME = "the entity", "merged into it", "has one of her names"
BY_NAME = (THE_ENTITY, MERGED, SAME_NAME)  # hers by a full name or alias; the others by a form of it


def forget_key() -> bytes:
    """The key of the name digests and request-key digests a forget leaves."""
    return settings.SECRET_KEY.encode("utf-8")


def ordinary_word(word: str) -> bool:
    """A word that is also ordinary text ("will", "rose"): never redacted alone."""
    from memories.extraction.offline.parse import is_common_word

    return word in AMBIGUOUS_NAMES or word in STOP_CAPS or is_common_word(word)


def person_name(name: str) -> bool:
    """A normalized full name that reads as a person's ("ilse brandt"), not an organization's or a
    place's ("orion tech", "bank of america", "harbour bay"): the extractor often types a person it
    does not know as an organization."""
    words = name.split()
    return is_full_name(name) and len(words) <= 4 and not any(
        w in ORG_SUFFIXES or w in ORG_PREFIXES or w in OF_HEADS or w in PLACE_SUFFIXES for w in words)


@dataclass
class ForgetScope:
    agent: Agent
    entities: list[Entity]  # hers, the chosen one first
    why: dict[int, str]  # entity id → why it is hers
    names: list[str]  # her full names and aliases (for the preview; never stored)
    forms: list[FormDecision]  # the shorter forms of her names, each decided
    matcher: NameMatcher  # her names and the forms that are hers
    parts: NameMatcher  # also each unambiguous word of her names and its stem: traces, results, audit
    keys: KeyRewriter  # her entities' keys → opaque keys
    own_event_ids: set[int]  # messages she said herself: redacted whole
    mention_event_ids: set[int]  # other people's messages naming her: mentions redacted
    keyed_event_ids: set[int]  # other people's messages whose external id or idempotency key names her
    fact_ids: set[int]
    created_by_her: set[int] = field(default_factory=set)  # entities her own messages created

    @property
    def entity_ids(self) -> list[int]:
        return [e.id for e in self.entities]

    def relationships(self):
        return Relationship.objects.filter(agent=self.agent).filter(
            Q(source_id__in=self.entity_ids) | Q(target_id__in=self.entity_ids)
            | Q(evidence_fact_id__in=self.fact_ids) | Q(source_event_id__in=self.own_event_ids))


class _Entities:
    """Every entity of the agent with its normalized names (display name and aliases)."""

    def __init__(self, agent: Agent):
        self.rows = {e.id: e for e in Entity.objects.filter(agent=agent).defer("name_embedding", "profile_text",
                                                                                "summary_text")}
        self.names: dict[int, set[str]] = defaultdict(set)
        for entity in self.rows.values():
            self.names[entity.id].add(normalize_alias(entity.display_name))
        for entity_id, alias in EntityAlias.objects.filter(agent=agent).values_list("entity_id", "alias"):
            self.names[entity_id].add(normalize_alias(alias))

    def merged_into(self, ids: set[int]) -> set[int]:
        """`ids` and every entity merged into one of them, however many hops away."""
        found, frontier = set(ids), set(ids)
        while frontier:
            frontier = {e.id for e in self.rows.values() if e.merged_into_id in frontier} - found
            found |= frontier
        return found


def _her_entities(entity: Entity, every: _Entities) -> tuple[dict[int, str], list[FormDecision]]:
    """Her entities (id → why) and the shorter forms of her names, decided."""
    why = dict.fromkeys(every.merged_into({entity.id}), MERGED)
    why[entity.id] = THE_ENTITY
    names = set().union(*(every.names[i] for i in why))
    for other in every.merged_into({i for i, e in every.rows.items()
                                    if i not in why and normalize_alias(e.display_name) in names}):
        why.setdefault(other, SAME_NAME)
    names = set().union(*(every.names[i] for i in why))
    people = [i for i in why if every.rows[i].type != "place"]
    full = {n for i in people for n in every.names[i] if person_name(n)}
    if not full:
        return why, []
    known = [KnownName(every.rows[i].display_name, tuple(sorted(every.names[i])))
             for i in every.rows if i not in why and every.rows[i].type != "place"
             and any(is_full_name(n) for n in every.names[i])]
    forms = name_forms(full, known, ordinary_word=ordinary_word)
    anycase, capitalized = forms_hers(forms)
    shown = {f: d.shown for d in forms if d.hers for f in d.forms}
    leftovers = {i for i, names_of in every.names.items() if i not in why and not any(
        is_full_name(n) for n in names_of) and names_of & (anycase | capitalized)}
    for other in every.merged_into(leftovers):
        form = next((shown[n] for n in sorted(every.names[other]) if n in shown), "")
        why.setdefault(other, f"named “{form}”, a form of her name" if form else MERGED)
    return why, forms


def _matchers(names: set[str], forms: list[FormDecision], single_word_names: set[str]) -> tuple[NameMatcher,
                                                                                                 NameMatcher]:
    """Her names and forms; and for traces, also each word of her names that no other known name
    shares and that is no ordinary word, with its stems (traces hold query terms one by one)."""
    key = forget_key()
    anycase, capitalized = forms_hers(forms)
    matcher = NameMatcher.from_names(names | anycase, key=key, capitalized=capitalized | single_word_names)
    shared = {f.split()[-1] for d in forms if not d.hers for f in d.forms}  # a family or given name
    words = {w for n in names | single_word_names for w in n.split()
             if w not in shared and len(w) > 1 and not ordinary_word(w)}
    stems: set[str] = set()
    if words:
        with connection.cursor() as cursor:
            cursor.execute("SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %s))", [" ".join(words)])
            stems = {row[0] for row in cursor.fetchall()}
    parts = NameMatcher.from_names([*names, *anycase, *capitalized, *single_word_names, *words, *stems], key=key)
    return matcher, parts


def _chain_ids(fact_ids: set[int]) -> set[int]:
    """All versions before and after the given facts."""
    found, frontier = set(fact_ids), set(fact_ids)
    while frontier:
        rows = Fact.objects.filter(Q(id__in=frontier) | Q(supersedes_id__in=frontier)).values_list(
            "id", "supersedes_id")
        nxt = {i for pair in rows for i in pair if i is not None} - found
        found |= nxt
        frontier = nxt
    return found


def _created_by(own_event_ids: set[int]) -> set[int]:
    """The entities the write of one of her messages created (from its trace)."""
    created = set()
    for data in PipelineStep.objects.filter(run__event_id__in=own_event_ids, data__has_key="resolutions").values_list(
            "data", flat=True):
        created |= {r.get("entity_id") for r in data.get("resolutions") or [] if r.get("method") == "created"}
    return created - {None}


def forget_scope(*, agent: Agent, entity: Entity) -> ForgetScope:
    """Everything a forget of `entity` removes or redacts (nothing is changed)."""
    every = _Entities(agent)
    why, forms = _her_entities(entity, every)
    full_and_aliases = set().union(*(every.names[i] for i in why if why[i] in BY_NAME))
    leftover_names = set().union(*(every.names[i] for i in why if why[i] not in BY_NAME))
    single = {n for n in leftover_names if len(n.split()) == 1}  # "Brandt": only capitalized
    names = full_and_aliases | (leftover_names - single)
    matcher, parts = _matchers(names, forms, single)
    own, mentioned, keyed = set(), set(), set()
    for event_id, speaker, text, metadata, external_id, idempotency_key in Event.objects.filter(
            agent=agent).values_list("id", "speaker", "text", "metadata", "external_id", "idempotency_key").iterator():
        if matcher.search(speaker):
            own.add(event_id)
            continue
        if matcher.search(text) or matcher.json_mentions(metadata):
            mentioned.add(event_id)
        if parts.search(external_id) or parts.search(idempotency_key):
            keyed.add(event_id)
    ids = list(why)
    about = set(Fact.objects.filter(agent=agent).filter(
        Q(entity_id__in=ids) | Q(entity_links__entity_id__in=ids)).values_list("id", flat=True))
    derived = set(Fact.objects.filter(agent=agent, source_event_id__in=own).values_list("id", flat=True))
    for fact_id, text, speaker in Fact.objects.filter(agent=agent).order_by().values_list(
            "id", "text", "speaker").iterator():  # the agent's facts, read once
        if matcher.search(text):
            about.add(fact_id)
        if matcher.search(speaker):
            derived.add(fact_id)
    about = _chain_ids(about)  # every version of a fact about her; of one she said, only that version
    entities = [every.rows[entity.id], *sorted((every.rows[i] for i in ids if i != entity.id), key=lambda e: e.id)]
    return ForgetScope(
        agent=agent, entities=entities, why=why, names=sorted(names | single), forms=forms, matcher=matcher,
        parts=parts, keys=KeyRewriter({e.key: opaque_key(e.type, e.id) for e in entities}),
        own_event_ids=own, mention_event_ids=mentioned, keyed_event_ids=keyed - own,
        fact_ids=about | derived, created_by_her=_created_by(own) - set(ids))
