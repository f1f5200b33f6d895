"""Entities and aliases: creation (idempotent under concurrency), alias registration
(first write wins) and the three-phase resolution of extracted names."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import numpy as np
from django.db import connection
from django.db.models import Q, Value
from django.utils import timezone
from pgvector.django import CosineDistance

from memories import prompts
from memories.extraction.offline.lexicon import KINSHIP, SAME_KIN, STOP_CAPS
from memories.models import Agent, Entity, EntityAlias, Relationship
from memories.naming import (
    RELATIONSHIP_TERMS,
    entity_key,
    is_acronym_of,
    is_speaker_reference,
    nickname_of,
    normalize_alias,
    normalize_type,
    person_names_compatible,
    person_words,
    strip_accents,
    surname_of,
    titled_form,
    titled_surname,
)
from memories.providers.llm import LLMClient, LLMError

logger = logging.getLogger(__name__)


def alias_register(*, agent: Agent, entity: Entity, names: list[str]) -> int:
    """Register normalized aliases for an entity; an alias already taken (by anyone, even
    concurrently) keeps its first owner. A titled name is also kept as written ("mrs. lim"), the
    form a client that matches names as written looks for. Returns how many were new."""
    rows = sorted({normalize_alias(n) for n in names if normalize_alias(n)} | {titled_form(n) for n in names} - {""})
    if not rows:
        return 0
    table = EntityAlias._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (agent_id, alias, entity_id, created_at) "
            "SELECT %s, alias, %s, now() FROM unnest(%s::text[]) AS alias "
            "ON CONFLICT (agent_id, alias) DO NOTHING RETURNING id",
            [agent.id, entity.id, rows],
        )
        return len(cursor.fetchall())


def entity_profile_seed(*, entity: Entity, text: str) -> bool:
    """Give an entity its first profile text; one that already has a profile (even one written
    concurrently) keeps it. Returns whether the profile was written."""
    if not text or entity.profile_text:
        return False
    return Entity.objects.filter(pk=entity.pk, profile_text="").update(
        profile_text=text, profile_refreshed_at=timezone.now()) > 0


def entity_get_or_create(
    *, agent: Agent, name: str, entity_type: str, name_embedding: np.ndarray | None = None
) -> Entity:
    """The entity for (type, name), inserted with ON CONFLICT DO NOTHING so concurrent writers
    mentioning the same new name end up with one row."""
    key = entity_key(entity_type, name)
    existing = Entity.objects.filter(agent=agent, key=key).first()
    if existing:
        return existing
    Entity.objects.bulk_create(
        [Entity(agent=agent, key=key, type=normalize_type(entity_type), display_name=name.strip(),
                name_embedding=name_embedding)],
        ignore_conflicts=True,
    )
    return Entity.objects.get(agent=agent, key=key)


@dataclass
class Resolution:
    name: str
    entity: Entity | None
    method: str  # speaker | alias | key | display_name | prefix | fuzzy | llm | created | would_create
    score: float = 1.0
    candidates: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "entity_id": self.entity.id if self.entity else None,
            "key": self.entity.key if self.entity else None,
            "method": self.method,
            "score": round(self.score, 4),
        }


def _speaker_entity(agent: Agent, speaker: str, embed) -> Entity:
    entity = Entity.objects.filter(agent=agent, key=entity_key("person", speaker)).defer("name_embedding").first()
    if entity is None and len(speaker.split()) > 1:  # "Ren", known by this full name too ("this is Ren Mori")
        known = {a.entity.survivor() for a in EntityAlias.objects.filter(
            agent=agent, alias=normalize_alias(speaker), entity__type="person").select_related("entity")}
        entity = known.pop() if len(known) == 1 else None
    if entity is None:
        entity = entity_get_or_create(agent=agent, name=speaker, entity_type="person",
                                      name_embedding=embed([speaker])[0])
    alias_register(agent=agent, entity=entity, names=[speaker])
    return entity


def resolve_exact(*, agent: Agent, name: str, entity_type: str) -> tuple[Entity | None, str]:
    """Phase 1: alias table, key slug, display name, then person-name prefix (≥ 3 chars)."""
    norm = normalize_alias(name)
    alias = (EntityAlias.objects.filter(agent=agent, alias=norm).select_related("entity")
             .defer("entity__name_embedding").first())
    if alias:
        return alias.entity.survivor(), "alias"
    slug = entity_key("x", name).split(":", 1)[1]
    by_key = Entity.objects.filter(agent=agent, key__endswith=f":{slug}").order_by("id")
    typed = [e for e in by_key if e.type == normalize_type(entity_type)] or list(by_key)
    if typed:
        return typed[0].survivor(), "key"
    by_name = Entity.objects.filter(agent=agent, display_name__iexact=name.strip()).first()
    if by_name:
        return by_name.survivor(), "display_name"
    if _may_be_person_name(name, entity_type):
        matches = resolve_person_name(agent=agent, name=name)
        if len(matches) == 1:
            return matches[0], "nickname"
    if _may_be_acronym(name, entity_type):
        matches = resolve_acronym(agent=agent, name=name)
        if len(matches) == 1:
            return matches[0], "acronym"
    return None, ""


_TITLE = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Doctor|Prof|Professor)\.?\s+"
_CAP_WORD = r"[A-ZÀ-Þ][\w'’-]*"
_NAME_RUN = re.compile(rf"(?<![\w'’])(?:{_TITLE})?{_CAP_WORD}(?:\s+{_CAP_WORD}){{0,2}}")


def name_runs(text: str) -> list[str]:
    """Runs of one to three capitalized words (a leading title kept, a possessive "'s" and a
    sentence's opening filler such as "So" or "Yesterday" dropped): the names that an alias
    lookup by n-grams can miss ("Paddy", "Dr. Fisher", "BofA")."""
    out = []
    for match in _NAME_RUN.finditer(text):
        words = [re.sub(r"['’]s$", "", w) for w in match.group().split()]
        titled = re.match(_TITLE, match.group()) is not None
        while not titled and words and words[0].lower().strip("'’") in STOP_CAPS:
            words = words[1:]
        while words and words[-1].lower() in STOP_CAPS:
            words = words[:-1]
        if words and not (len(words) == 1 and titled):
            out.append(" ".join(words))
    return list(dict.fromkeys(out))


def entity_for_other_name(*, agent: Agent, name: str) -> Entity | None:
    """The one known entity a name the alias table does not hold can denote: a person by a
    short form, nickname, accent-free spelling or title with surname; an organization by its
    acronym. None when no entity or several can."""
    if titled_surname(name) or name[:1].isupper() and not _may_be_acronym(name, "organization"):
        matches = resolve_person_name(agent=agent, name=name)
        if len(matches) == 1:
            return matches[0]
        if matches:
            return None
    if _may_be_acronym(name, "organization"):
        matches = resolve_acronym(agent=agent, name=name)
        if len(matches) == 1:
            return matches[0]
    return None


def organization_opening_with(*, agent: Agent, word: str, generic_tails: frozenset[str]) -> Entity | None:
    """The one organization whose several-word name is `word` and then generic words ending in
    one of `generic_tails` ("Huron" → Huron Realty Group, "Stanford" → Stanford University): the
    short name people use for it. None when none or several do."""
    rows = list(Entity.objects.filter(agent=agent, type="organization", merged_into__isnull=True,
                                      display_name__istartswith=f"{word.strip()} ").defer("name_embedding")[:2])
    if len(rows) != 1 or normalize_alias(rows[0].display_name).split()[-1] not in generic_tails:
        return None
    return rows[0]


def _may_be_acronym(name: str, entity_type: str) -> bool:
    word = name.strip()
    return (normalize_type(entity_type) in ("organization", "concept", "place") and 2 <= len(word) <= 8
            and " " not in word and sum(c.isupper() for c in word) >= 2)


def resolve_acronym(*, agent: Agent, name: str, limit: int = 300) -> list[Entity]:
    """The organizations (or places) whose multi-word name `name` abbreviates: "BofA" → Bank of
    America, "UCD" → University College Dublin, whichever case the letters are in."""
    initial = strip_accents(name.strip())[:1]
    rows = (Entity.objects.filter(agent=agent, merged_into__isnull=True, type__in=["organization", "place", "concept"])
            .filter(display_name__istartswith=initial, display_name__contains=" ")
            .defer("name_embedding").order_by("id")[:limit])
    return [e for e in rows if is_acronym_of(name, e.display_name)]


def _may_be_person_name(name: str, entity_type: str) -> bool:
    etype = normalize_type(entity_type)
    words = name.strip().split()
    if etype == "person":
        return bool(words)
    return etype == "concept" and 0 < len(words) <= 2 and all(w[:1].isupper() for w in words)


def resolve_person_name(*, agent: Agent, name: str, limit: int = 300) -> list[Entity]:
    """The people `name` can denote: a display name or alias with a compatible first name
    (short form, diminutive, nickname, accents and punctuation aside) and no other surname;
    for a title with a surname ("Dr. Fisher"), the people of that surname."""
    surname = titled_surname(name)
    if surname:
        return _people_with_surname(agent, surname, limit)
    first = strip_accents(name.strip().split()[0])
    initials = {first[:1], nickname_of(first)[:1]} - {""}
    starts = Q()
    for initial in initials:
        starts |= Q(display_name__istartswith=initial) | Q(aliases__alias__startswith=initial.lower())
    rows = (
        Entity.objects.filter(agent=agent, type="person", merged_into__isnull=True)
        .filter(starts | Q(display_name__icontains=first) | Q(aliases__alias__contains=normalize_alias(first)))
        .defer("name_embedding").distinct().prefetch_related("aliases")[:limit]
    )
    found = {}
    own_surname = surname_of(name) if len(name.split()) > 1 else ""  # "Mary-Jane" is a first name
    for entity in rows:
        names = [entity.display_name, *(a.alias for a in entity.aliases.all())]
        surnames = {surname_of(n) for n in names} - {""}
        if own_surname and surnames and own_surname not in surnames:
            continue  # "Sam Whitfield" is not the "Sam Patel" who is also called "Sam"
        if any(person_names_compatible(name, n, either_way=False) for n in names):
            found[entity.id] = entity
    return list(found.values())


def people_by_first_name(*, agent: Agent, words: set[str], limit: int = 5000) -> dict[str, Entity]:
    """For each lower-case word, the one person of the agent whose full name starts with it
    ("freya" → Freya Lindqvist); a word that is the first name of several people is left out."""
    if not words:
        return {}
    by_first: dict[str, list[Entity]] = {}
    rows = (Entity.objects.filter(agent=agent, type="person", merged_into__isnull=True)
            .defer("name_embedding").order_by("-id")[:limit])
    for entity in rows:
        parts = normalize_alias(strip_accents(entity.display_name)).split()
        if len(parts) > 1 and parts[0] in words:
            by_first.setdefault(parts[0], []).append(entity)
    return {word: people[0] for word, people in by_first.items() if len(people) == 1}


def parents_of(*, agent: Agent, child: str) -> list[Entity]:
    """The people the agent knows as `child`'s parents (current parent_of edges into them)."""
    child_entity = Entity.objects.filter(agent=agent, key=entity_key("person", child)).only("id").first()
    if child_entity is None:
        return []
    ids = list(Relationship.objects.current().filter(agent=agent, rel_type="parent_of", target=child_entity)
               .order_by("id").values_list("source_id", flat=True))
    rows = {e.id: e for e in Entity.objects.filter(agent=agent, pk__in=ids, type="person").defer("name_embedding")}
    return list(dict.fromkeys(rows[i].survivor() for i in ids if i in rows))


def relative_of(*, agent: Agent, owner: str, term: str, name: str = "") -> Entity | None:
    """The one person the agent knows as `owner`'s `term` ("Hannah Brooks", "brother" → Daniel,
    through their current kinship edge whose evidence says "brother"), or None when there is none
    or more than one. With `name`, only a relative that name can denote counts ("my cousin Emeka"
    among several Emekas, or several cousins). Reads the owner's few kinship edges, not the agent's
    facts."""
    rel_type = KINSHIP.get(term.lower(), ("",))[0]
    owner_entity = Entity.objects.filter(agent=agent, key=entity_key("person", owner)).only("id").first()
    if not rel_type or owner_entity is None:
        return None
    words = next((group for group in SAME_KIN if term.lower() in group), (term.lower(),))
    says_term = re.compile(rf"(?<!\w)(?:{'|'.join(map(re.escape, words))})(?!\w)", re.I)
    edges = (Relationship.objects.current().filter(agent=agent, rel_type=rel_type)
             .filter(Q(source=owner_entity) | Q(target=owner_entity)).select_related("evidence_fact"))
    # a couple has one current partner or spouse: "her husband" needs no evidence saying "husband"
    couple = rel_type in ("spouse_of", "partner_of")
    ids = {e.target_id if e.source_id == owner_entity.id else e.source_id for e in edges
           if couple or (e.evidence_fact is not None and says_term.search(e.evidence_fact.text))}
    people = [e.survivor() for e in Entity.objects.filter(agent=agent, pk__in=ids, type="person")
              .defer("name_embedding").prefetch_related("aliases")]
    if name:
        people = [e for e in people if any(person_names_compatible(name, n, either_way=False)
                                           for n in [e.display_name, *(a.alias for a in e.aliases.all())])]
    return people[0] if len(people) == 1 else None


def _people_with_surname(agent: Agent, surname: str, limit: int) -> list[Entity]:
    rows = (
        Entity.objects.filter(agent=agent, type="person", merged_into__isnull=True)
        .filter(Q(display_name__icontains=surname) | Q(aliases__alias__contains=surname))
        .defer("name_embedding").distinct().prefetch_related("aliases")[:limit]
    )
    names = {e.id: [e.display_name, *(a.alias for a in e.aliases.all())] for e in rows}
    by_surname = [e for e in rows if surname in {surname_of(n) for n in names[e.id]}]
    # "Mrs. Lim" for Lim Bee Hoon: a family name said first, when no one carries it last
    return by_surname or [e for e in rows if any(surname in person_words(n)[:-1] for n in names[e.id])]


def resolve_fuzzy(*, agent: Agent, vector: np.ndarray, entity_type: str, limit: int = 3) -> list[tuple[Entity, float]]:
    """Phase 2 candidates: nearest entity names by cosine, same type (or untyped concepts).
    Ordered by `distance + 0`, which the shared HNSW index cannot serve: that index filters by
    agent after its scan (pgvector 0.6.2) and returns too few names for an agent that is a small
    share of the table. An agent's entities are few enough to sort exactly."""
    etype = normalize_type(entity_type)
    rows = (
        Entity.objects.filter(agent=agent, merged_into__isnull=True, name_embedding__isnull=False)
        .filter(Q(type=etype) | Q(type="concept") if etype != "concept" else Q())
        .annotate(distance=CosineDistance("name_embedding", vector) + Value(0.0))
        .order_by("distance")[:limit]
    )
    return [(e, 1.0 - float(e.distance)) for e in rows]


def llm_disambiguate(*, llm: LLMClient, name: str, candidates: list[tuple[Entity, float]], context: str,
                     timeout: float, tracer_usage) -> Entity | None:
    """Phase 3: ask the LLM which candidate (if any) `name` refers to."""
    schema = {
        "type": "object",
        "required": ["match"],
        "properties": {"match": {"type": ["string", "null"]}, "reason": {"type": "string"}},
    }
    listing = "\n".join(
        prompts.ENTITY_MATCH_CANDIDATE.format(key=e.key, display_name=e.display_name, type=e.type)
        for e, _ in candidates
    )
    try:
        reply = llm.complete_json(
            system=prompts.ENTITY_MATCH_SYSTEM,
            user=prompts.ENTITY_MATCH_USER.format(context=context, name=name, candidates=listing),
            schema=schema, schema_name="entity_match", timeout=timeout,
        )
    except LLMError as exc:
        tracer_usage(exc.usage)
        return None
    tracer_usage(reply.usage)
    match = reply.data.get("match")
    return next((e for e, _ in candidates if e.key == match), None)


def entity_resolve(
    *, agent: Agent, name: str, entity_type: str, aliases: list[str], speaker: str, message: str,
    embed, llm: LLMClient, config, usage_sink, vector: np.ndarray | None = None,
) -> Resolution:
    """Exact → fuzzy (≥ fuzzy_threshold resolves; the ambiguous band asks the LLM) → create.
    Every discovered alias is registered first-write-wins."""
    if is_speaker_reference(name) or normalize_alias(name) == normalize_alias(speaker):
        # a kin word the agent knows as someone's alias ("Emmanuel Okafor (Dad)") is that person
        known = (EntityAlias.objects.filter(agent=agent, alias=normalize_alias(name), entity__type="person")
                 .select_related("entity").first() if normalize_alias(name) in RELATIONSHIP_TERMS else None)
        if known is None:
            entity = _speaker_entity(agent, speaker, embed)
            # "my name's Agnieszka Nowak, but call me Aga": the writer's other names
            alias_register(agent=agent, entity=entity, names=[a for a in aliases if not is_speaker_reference(a)])
            return Resolution(name, entity, "speaker")
        return Resolution(name, known.entity.survivor(), "alias")
    for candidate_name in [name, *aliases]:
        entity, method = resolve_exact(agent=agent, name=candidate_name, entity_type=entity_type)
        if entity:
            alias_register(agent=agent, entity=entity, names=_unshared_names(agent, entity, [name, *aliases]))
            return Resolution(name, entity, method)
    vector = vector if vector is not None else embed([name])[0]
    candidates = resolve_fuzzy(agent=agent, vector=vector, entity_type=entity_type)
    if normalize_type(entity_type) == "person":  # similar-looking names of different people
        candidates = [(e, s) for e, s in candidates
                      if e.type != "person" or person_names_compatible(name, e.display_name)]
    if candidates and candidates[0][1] >= config.fuzzy_threshold:
        entity, score = candidates[0]
        alias_register(agent=agent, entity=entity, names=[name, *aliases])
        return Resolution(name, entity, "fuzzy", score)
    ambiguous = [c for c in candidates if c[1] >= config.fuzzy_ambiguous_floor]
    if ambiguous and llm.enabled and config.enable_llm_resolution:
        chosen = llm_disambiguate(llm=llm, name=name, candidates=ambiguous, context=message,
                                  timeout=config.extraction_timeout_sec, tracer_usage=usage_sink)
        if chosen:
            alias_register(agent=agent, entity=chosen, names=[name, *aliases])
            return Resolution(name, chosen, "llm", dict((e.id, s) for e, s in ambiguous)[chosen.id])
    entity = entity_get_or_create(agent=agent, name=name, entity_type=entity_type, name_embedding=vector)
    _first_name_now_shared(agent, entity)
    alias_register(agent=agent, entity=entity, names=_unshared_names(agent, entity, [name, *aliases]))
    return Resolution(name, entity, "created", 1.0, [e.key for e, _ in ambiguous])


def _others_with_first_name(agent: Agent, entity: Entity, first: str):
    return (Entity.objects.filter(agent=agent, type="person", merged_into__isnull=True,
                                  display_name__istartswith=f"{first} ").exclude(pk=entity.pk))


def _unshared_names(agent: Agent, entity: Entity, names: list[str]) -> list[str]:
    """The names to register for a person, less a bare first name another known person also
    opens with: "Emeka" said of Emeka Nwosu is no name of his alone when Emeka Obi exists too."""
    if entity.type != "person":
        return names
    return [n for n in names if len(n.split()) != 1 or not n[:1].isupper() or normalize_alias(n) in (
        normalize_alias(entity.display_name),) or not _others_with_first_name(agent, entity, n.strip()).exists()]


def _first_name_now_shared(agent: Agent, entity: Entity) -> None:
    """A new person "Emeka Obi" makes the bare "Emeka" another person held ambiguous: that alias
    no longer points at anyone."""
    words = entity.display_name.split()
    if entity.type != "person" or len(words) < 2:
        return
    EntityAlias.objects.filter(agent=agent, alias=normalize_alias(words[0]), entity__type="person").exclude(
        entity=entity).filter(entity__display_name__istartswith=f"{words[0]} ").delete()
