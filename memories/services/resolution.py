"""Entity resolution of an extracted name: exact (alias, key, display name, short form, acronym)
→ fuzzy by name embedding → the LLM for the ambiguous band → a new entity. Every name found
for an entity is registered as its alias, first write wins."""

from __future__ import annotations

import logging
import re
from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from memories import prompts
from memories.extraction.mentions import message_sentences
from memories.extraction.offline.entities import says_a_name_changed
from memories.extraction.offline.lexicon import FEMALE_KIN, MALE_KIN, sex_of
from memories.models import Agent, Entity, EntityAlias, Event, Fact
from memories.naming import (
    RELATIONSHIP_TERMS,
    entity_key,
    first_names_compatible,
    is_speaker_reference,
    normalize_alias,
    normalize_type,
    person_names_compatible,
    person_words,
    surname_of,
    title_sex,
    titled_surname,
)
from memories.providers.llm import LLMClient, LLMError
from memories.selectors.entities import (
    name_of_other_sex,
    people_known_by_given_name,
    resolve_exact,
    resolve_fuzzy,
)
from memories.services.agents import agent_graph_bump_on_commit
from memories.services.entities import alias_register, entity_get_or_create

logger = logging.getLogger(__name__)


@dataclass
class Resolution:
    name: str
    entity: Entity | None
    method: str  # speaker | alias | key | display_name | prefix | given_name | fuzzy | llm | created | would_create
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



def _speaker_entity(agent: Agent, speaker: str, embed, message: str = "") -> Entity:
    entity = Entity.objects.filter(agent=agent, key=entity_key("person", speaker)).defer("name_embedding").first()
    if entity is None and len(speaker.split()) > 1:  # "Ren", known by this full name too ("this is Ren Mori")
        known = {a.entity.survivor() for a in EntityAlias.objects.filter(
            agent=agent, alias=normalize_alias(speaker), entity__type="person").select_related("entity")}
        entity = known.pop() if len(known) == 1 else None
    if entity is None and len(speaker.split()) > 1 and (
            known := _known_by_given_name_alone(agent, speaker, message="", speaker="")) is not None and not re.search(
            rf"(?<!\w){re.escape(known.display_name)}(?!\w)", message, re.I) and not _kin_of_other_sex(
            known, speaker.split()[0]):
        # a group chat's "Lottie", said before Charlotte Vantreece wrote herself: the one person the
        # agent knows by a short form of the writer's given name is the writer (not one her own
        # message names: "Chris forgot to feed the cat", by Christine)
        entity = known
        _shown_by(agent, entity, speaker, embed([speaker])[0])
    if entity is None and (entity := _known_by_title_alone(agent, speaker, message)) is not None:
        _shown_by(agent, entity, speaker, embed([speaker])[0])
    if entity is None:
        entity = entity_get_or_create(agent=agent, name=speaker, entity_type="person",
                                      name_embedding=embed([speaker])[0])
    alias_register(agent=agent, entity=entity, names=[speaker])
    return entity


def _known_by_title_alone(agent: Agent, speaker: str, message: str) -> Entity | None:
    """Orrin Lydgate writing for the first time, where letters to "Mr Lydgate" were stored before: the
    one person the agent knows only by a title and the writer's family name, of a title that fits the
    writer's given name when it says a sex (not "Mrs Lydgate" for Orrin), and to whom letters the agent
    holds were addressed, is the writer. Not one his own message names: "Dear Mrs. Mould, …" from Kezia
    Mould is to someone else."""
    surname = surname_of(speaker)
    if not surname:
        return None
    sex = sex_of(normalize_alias(speaker.split()[0]))
    rows = [e for e in Entity.objects.filter(agent=agent, type="person", merged_into__isnull=True,
                                             display_name__iendswith=surname).defer("name_embedding")[:20]
            if titled_surname(e.display_name) == surname]
    if len(rows) != 1 or sex and title_sex(rows[0].display_name) not in ("", sex) or (
            f" {normalize_alias(rows[0].display_name)} " in f" {normalize_alias(message)} "):
        return None
    # only one letters were addressed to ("Dear Mr Lydgate,"): not "my dentist Dr Lydgate", said of someone
    greeted = rf"^\W*dear\s+{re.escape(rows[0].display_name)}\M"
    return rows[0] if Event.objects.filter(agent=agent, text__iregex=greeted).exists() else None



def _kin_of_other_sex(entity: Entity, given: str) -> bool:
    """The person is someone's relative by a word of the sex the given name is not: "my nephew Sam"
    is no Samantha."""
    name = normalize_alias(given)
    sex = sex_of(name)
    words = MALE_KIN if sex == "f" else FEMALE_KIN if sex == "m" else frozenset()
    if not words:
        return False
    said = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return Fact.objects.filter(agent_id=entity.agent_id, entity=entity,
                               text__iregex=rf"'s\s+(?:\w+\s+)?(?:{said})\y").exists()  # \y: PostgreSQL's word end


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
    named_apart: Collection[int] = frozenset(),
) -> Resolution:
    """Exact → fuzzy (≥ fuzzy_threshold resolves; the ambiguous band asks the LLM) → create.
    Every discovered alias is registered first-write-wins. A title with a family name is none of
    `named_apart`, the entities the same message relates it to ("Prof. Varga's daughter, Dr. Eszter
    Varga": the professor is not Eszter)."""
    if is_speaker_reference(name) or normalize_alias(name) == normalize_alias(speaker):
        # a kin word the agent knows as someone's alias ("Emmanuel Okafor (Dad)") is that person
        known = (EntityAlias.objects.filter(agent=agent, alias=normalize_alias(name), entity__type="person")
                 .select_related("entity").first() if normalize_alias(name) in RELATIONSHIP_TERMS else None)
        if known is None:
            entity = _speaker_entity(agent, speaker, embed, message)
            # "my name's Agnieszka Nowak, but call me Aga": the writer's other names
            alias_register(agent=agent, entity=entity, names=[a for a in aliases if not is_speaker_reference(a)])
            return Resolution(name, entity, "speaker")
        return Resolution(name, known.entity.survivor(), "alias")
    greeted = re.match(rf"\W*dear\s+{re.escape(name)}\s*[,:\n]", message or "", re.I) is not None
    for candidate_name in [name, *aliases]:
        entity, method = resolve_exact(agent=agent, name=candidate_name, entity_type=entity_type, writer=speaker,
                                       greeted=greeted and candidate_name == name)
        if entity and titled_surname(name) and entity.id in named_apart:
            break
        if entity and titled_surname(candidate_name) and not titled_surname(name) and not titled_surname(
                entity.display_name):
            continue  # "Dr. Rahimi" of "Dr. Roxana Rahimi" finds a Dr. Rahimi of no other name, not Dariush Rahimi
        if entity and candidate_name != name and entity.type == "person" and _other_family_name(name, entity) and (
                not says_a_name_changed(message)):
            continue  # "my other mate lucy (lucy patel)": her "lucy" is not the Lucy Harrington it names elsewhere
        if entity:
            alias_register(agent=agent, entity=entity, names=_unshared_names(agent, entity, [name, *aliases]))
            _named_in_full(agent, entity, name, vector)
            return Resolution(name, entity, method)
    vector = vector if vector is not None else embed([name])[0]
    if normalize_type(entity_type) == "person" and (known := _known_by_given_name_alone(agent, name, message, speaker)):
        alias_register(agent=agent, entity=known, names=[name, *aliases])
        _shown_by(agent, known, name, vector)
        return Resolution(name, known, "given_name")
    # "Dr. Rahimi" that no known Rahimi fits alone is someone new, not the nearest-looking Rahimi
    candidates = [] if titled_surname(name) else resolve_fuzzy(agent=agent, vector=vector, entity_type=entity_type)
    if normalize_type(entity_type) == "person":  # similar-looking names of different people
        candidates = [(e, s) for e, s in candidates
                      if e.type != "person" or person_names_compatible(name, e.display_name)
                      and not name_of_other_sex(name, e.display_name)]
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



def _other_family_name(name: str, entity: Entity) -> bool:
    """A full person name whose family name is not the one of the known person's full name."""
    said, known = surname_of(name) if len(name.split()) > 1 else "", surname_of(entity.display_name)
    if not (said and known and said != known and len(entity.display_name.split()) > 1):
        return False
    # the same given name ("Lucy Patel" beside Lucy Harrington), not another word before hers ("Very Kofi")
    return first_names_compatible(person_words(name)[0], person_words(entity.display_name)[0])


def _named_in_full(agent: Agent, entity: Entity, name: str, vector: np.ndarray | None) -> None:
    """A person known only as "Prof. Okonkwo" is shown by the full name a message gives them, "Chidi Okonkwo"."""
    surname = titled_surname(entity.display_name)
    if (not surname or entity.type != "person" or titled_surname(name) or len(name.split()) < 2
            or surname_of(name) != surname):
        return
    _shown_by(agent, entity, name, vector)


def _known_by_given_name_alone(agent: Agent, name: str, message: str, speaker: str) -> Entity | None:
    """A full name ("Rafael Moreno"), or a longer form of a given name ("Alexandra"), whose given name
    is the long form of the one name the agent knows someone by ("Raf", "Alex"), when exactly one
    such person exists (never the writer), no one known by a full name could be meant, and the
    sentence naming it neither introduces someone ("met my new neighbour, Rafael Moreno", "a guy
    called …") nor sets a second person of the name apart ("another Tom", "also called Sam", a list
    naming both)."""
    words = name.split()
    if not words or titled_surname(name):
        return None
    given = words[0]
    writer = normalize_alias(speaker or "")
    people = [p for p in people_known_by_given_name(agent=agent, given=given, table_only=len(words) == 1)
              if normalize_alias(p.display_name) != writer and (len(words) > 1 or len(p.display_name) < len(given))]
    if len(people) != 1 or _others_with_first_name(agent, people[0], given).exists():
        return None
    known = people[0].display_name
    short = re.compile(rf"(?<!\w){re.escape(known)}(?!\w)", re.I)
    apart = re.compile(rf"\b(?:another|other|different|two|also\s+(?:called|named)|(?:name|names)(?:\s+is|'s)\s+also)"
                       rf"\s+(?:{re.escape(known)}|{re.escape(given)})", re.I)
    for sentence in message_sentences(message):
        if not re.search(re.escape(name), sentence, re.I):
            continue
        if (apart.search(sentence) or _INTRODUCED.search(sentence)
                or short.search(re.sub(re.escape(name), " ", sentence, flags=re.I))):
            return None  # "met a guy called Rafael Moreno", "Maximiliano Ortiz, Max, and Leo came over"
    return people[0]


# a sentence that introduces someone new: "met", "new", "a guy called", "this girl"
_INTRODUCED = re.compile(
    r"\b(?:met|meet|meeting|new|introduc\w*|called|named|a\s+(?:guy|girl|man|woman|lady|bloke|lad)|"
    r"this\s+(?:guy|girl|man|woman|lady|bloke|lad))\b", re.I)


def _shown_by(agent: Agent, entity: Entity, name: str, vector: np.ndarray | None) -> None:
    """The person is shown by the fuller name a message gives them ("Raf" → "Rafael Moreno")."""
    entity.display_name = name.strip()
    changed = {"display_name": entity.display_name} | ({"name_embedding": vector} if vector is not None else {})
    Entity.objects.filter(pk=entity.pk).update(**changed)
    agent_graph_bump_on_commit(agent_id=agent.id)


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
    removed, _ = EntityAlias.objects.filter(
        agent=agent, alias=normalize_alias(words[0]), entity__type="person").exclude(
        entity=entity).filter(entity__display_name__istartswith=f"{words[0]} ").delete()
    if removed:
        agent_graph_bump_on_commit(agent_id=agent.id)
