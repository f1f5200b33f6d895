"""Operator corrections: correct or retract a fact, add aliases, describe, merge or forget an
entity. Every change is versioned (never an in-place edit of a fact) and audited. The REST API
and the admin both call these; neither writes the rows or the audit log itself."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memories.errors import Conflict, DomainError, NotFound
from memories.live import live_notify
from memories.models import (
    Agent,
    Entity,
    EntityAlias,
    EntityMerge,
    Fact,
    FactEntityLink,
    Relationship,
    SourceContext,
)
from memories.naming import normalize_alias
from memories.providers.embeddings import EmbedderClient, get_embedder
from memories.services import facts as fact_services
from memories.services.agents import agent_graph_bump
from memories.services.audit import audit_record
from memories.services.entities import alias_register

# forgetting lives in memories.services.forget; named here too, with the other operator actions
from memories.services.forget import (  # noqa: F401
    ForgetPreview,
    ForgetReport,
    entity_forget,
    entity_forget_preview,
)
from memories.services.keyword import keyword_stats_apply
from memories.services.relationships import relationship_upsert

REDACTED = "[redacted]"


def _iso(moment) -> str | None:
    return moment.isoformat() if moment else None


def _fact_state(fact: Fact) -> dict:
    return {
        "id": fact.id, "text": fact.text, "entity": fact.entity_id, "confidence": fact.confidence,
        "valid_from": _iso(fact.valid_from), "valid_to": _iso(fact.valid_to),
        "learned_at": _iso(fact.learned_at), "unlearned_at": _iso(fact.unlearned_at),
        "invalidated_at": _iso(fact.invalidated_at),
    }


def fact_head(fact: Fact) -> Fact:
    """The latest version of the fact's chain (itself when nothing superseded it)."""
    return fact_history(agent=fact.agent_id, fact_id=fact.id)[-1]


def fact_current_version(fact: Fact) -> Fact | None:
    """The chain's current version, or None when its latest version is closed too."""
    head = fact_head(fact)
    return head if head.is_active else None


def _active_fact(agent: Agent, fact_id: int, *, lock: bool = True) -> Fact:
    query = Fact.objects.filter(agent=agent, pk=fact_id)
    if lock:
        query = query.select_for_update()
    fact = query.first()
    if fact is None:
        raise NotFound(f"fact {fact_id} not found")
    if not fact.is_active:
        current = fact_current_version(fact)
        if current is None:
            raise Conflict(f"fact {fact_id} is closed and its chain has no current version; reinstate a version "
                           "instead", {"fact_id": fact_id, "current": None})
        raise Conflict(f"fact {fact_id} is a closed version; the current version is {current.id}",
                       {"fact_id": fact_id, "current": current.id})
    return fact


def _copy_links(old: Fact, new: Fact) -> None:
    FactEntityLink.objects.bulk_create(
        [FactEntityLink(fact=new, entity_id=link.entity_id, is_primary=link.is_primary)
         for link in old.entity_links.all()], ignore_conflicts=True)


@transaction.atomic
def fact_correct(*, agent: Agent, fact_id: int, text: str, reason: str, actor: str,
                 valid_from: datetime | None = None, embedder: EmbedderClient | None = None) -> Fact:
    """The stored statement was wrong: a new version with the operator's text supersedes it.
    The agent knows the correction from now on; in the world it holds from `valid_from`
    (default: where the corrected version started, i.e. the old text was never true)."""
    text = (text or "").strip()
    if not text:
        raise DomainError("text is required", {"text": "must be a non-empty string"})
    old = _active_fact(agent, fact_id)
    now = timezone.now()
    if valid_from is not None and valid_from > now:
        raise DomainError("valid_from must not be in the future", {"valid_from": "after now"})
    before = _fact_state(old)
    vector = (embedder or get_embedder()).embed([text])[0]
    new = fact_services.fact_supersede(
        old=old, new_text=text, embedding=vector, valid_from=max(valid_from or old.valid_from, old.valid_from),
        learned_at=now, reason=f"corrected by {actor}: {reason}", confidence=1.0, importance=old.importance,
        importance_category=old.importance_category, source_context=SourceContext.OPERATOR, speaker=actor,
        source_event=None, slot=old.slot, slot_value=old.slot_value,
    )
    _copy_links(old, new)
    keyword_stats_apply(agent_id=agent.id, kind="fact", ids=[new.id])
    audit_record(agent=agent, actor=actor, action="fact_correct", obj=old, before=before,
                 after=_fact_state(new), reason=reason)
    transaction.on_commit(lambda: agent_graph_bump(agent_id=agent.id))
    live_notify(agent=agent, kind="fact", obj_id=new.id)
    return new


@dataclass
class RetractReport:
    fact: Fact
    relationships_closed: int = 0
    reinstated: Fact | None = None  # the predecessor made current again (reopen_previous)


@transaction.atomic
def fact_retract(*, agent: Agent, fact_id: int, reason: str, actor: str,
                 reopen_previous: bool = False) -> RetractReport:
    """The agent stops believing the fact from now on (its relationships go with it). With
    `reopen_previous`, the version it superseded is reinstated: a wrong update undone."""
    fact = _active_fact(agent, fact_id)
    before = _fact_state(fact)
    closed = fact_services.fact_unlearn(fact=fact, reason=f"retracted by {actor}: {reason}")
    audit_record(agent=agent, actor=actor, action="fact_retract", obj=fact, before=before,
                 after={**_fact_state(fact), "relationships_closed": closed}, reason=reason)
    report = RetractReport(fact=fact, relationships_closed=closed)
    if reopen_previous:
        if not fact.supersedes_id:
            raise DomainError(f"fact {fact_id} superseded no earlier version", {"reopen_previous": "nothing to reopen"})
        report.reinstated = fact_reinstate(agent=agent, fact_id=fact.supersedes_id, reason=reason, actor=actor)
    transaction.on_commit(lambda: agent_graph_bump(agent_id=agent.id))
    live_notify(agent=agent, kind="fact", obj_id=fact.id)
    return report


@transaction.atomic
def fact_reinstate(*, agent: Agent, fact_id: int, reason: str, actor: str) -> Fact:
    """Make a closed version's statement current again, as a new version (known from now, true
    from where the reinstated one started) that supersedes the chain's latest version. The
    versions from the reinstated one on stop being believed (the current one was the wrong
    successor). Relationships the reinstated version evidenced come back with the new one."""
    old = Fact.objects.select_for_update().filter(agent=agent, pk=fact_id).first()
    if old is None:
        raise NotFound(f"fact {fact_id} not found")
    if old.is_active:
        raise Conflict(f"fact {fact_id} is already the current version", {"fact_id": fact_id, "current": old.id})
    head = Fact.objects.select_for_update().get(pk=fact_head(old).pk)
    now = timezone.now()
    # From now on the agent believes the reinstated statement from its start: that version (with
    # the end it was given) and every later one stop being believed, so no two overlap.
    later = fact_history(agent=agent, fact_id=old.id)
    for version in later[later.index(old):]:
        if version.unlearned_at is None:
            fact_services.fact_unlearn(fact=version, at=now, reason=(
                version.invalidation_reason or f"replaced by the reinstated fact {old.id} ({actor}): {reason}"))
    new = fact_services.fact_add(
        agent=agent, entity=old.entity, text=old.text, embedding=old.embedding, valid_from=old.valid_from,
        learned_at=now, confidence=old.confidence, importance=old.importance,
        importance_category=old.importance_category, source_context=old.source_context, speaker=old.speaker,
        source_event=old.source_event, slot=old.slot, slot_value=old.slot_value, supersedes=head,
    )
    _copy_links(old, new)
    restored = 0
    for rel in Relationship.objects.filter(agent=agent, evidence_fact=old).select_related("source", "target"):
        edge, _ = relationship_upsert(agent=agent, source=rel.source, target=rel.target, rel_type=rel.rel_type,
                                      valid_from=rel.valid_from, evidence=new, source_event=rel.source_event,
                                      learned_at=now, initial_strength=rel.strength, reinforcement=0.0)
        restored += edge is not None
    keyword_stats_apply(agent_id=agent.id, kind="fact", ids=[new.id])
    audit_record(agent=agent, actor=actor, action="fact_reinstate", obj=old, before=_fact_state(head),
                 after={**_fact_state(new), "relationships_restored": restored}, reason=reason)
    transaction.on_commit(lambda: agent_graph_bump(agent_id=agent.id))
    live_notify(agent=agent, kind="fact", obj_id=new.id)
    return new


def fact_history(*, agent: Agent, fact_id: int) -> list[Fact]:
    """The whole version chain the fact belongs to, oldest first."""
    fact = Fact.objects.filter(agent=agent, pk=fact_id).first()
    if fact is None:
        raise NotFound(f"fact {fact_id} not found")
    seen = {fact.id}
    while fact.supersedes_id and fact.supersedes_id not in seen:
        seen.add(fact.supersedes_id)
        fact = Fact.objects.get(pk=fact.supersedes_id)
    chain = [fact]
    while True:
        nxt = Fact.objects.filter(supersedes=chain[-1]).select_related("source_event").first()
        if nxt is None or nxt in chain:
            return chain
        chain.append(nxt)


def _entity(agent: Agent, entity_id: int) -> Entity:
    entity = Entity.objects.filter(agent=agent, pk=entity_id).first()
    if entity is None:
        raise NotFound(f"entity {entity_id} not found")
    return entity


@transaction.atomic
def entity_alias_add(*, agent: Agent, entity_id: int, alias: str, actor: str, move: bool = False) -> bool:
    """Register an alias. An alias owned by another entity is an error, not a silent no-op,
    unless `move` says to take it from that entity."""
    entity = _entity(agent, entity_id)
    norm = normalize_alias(alias or "")
    if not norm:
        raise DomainError("alias is required", {"alias": "must contain letters or digits"})
    owner = EntityAlias.objects.select_for_update().filter(agent=agent, alias=norm).first()
    if owner and owner.entity_id != entity.id:
        if not move:
            raise DomainError(f"alias {norm!r} already belongs to entity {owner.entity_id}",
                              {"alias": "taken", "entity_id": owner.entity_id})
        previous = owner.entity_id
        owner.entity = entity
        owner.save(update_fields=["entity"])
        audit_record(agent=agent, actor=actor, action="alias_move", obj=entity,
                     before={"alias": norm, "entity": previous}, after={"alias": norm, "entity": entity.id})
        return True
    created = alias_register(agent=agent, entity=entity, names=[alias]) > 0
    if created:
        audit_record(agent=agent, actor=actor, action="alias_add", obj=entity, after={"alias": norm})
    return created


# An entity's identity (key, type, name, merged_into) changes only through merge and forget;
# these describe it and are not versioned.
ENTITY_DESCRIPTION_FIELDS = ("importance", "profile_text", "summary_text")


@transaction.atomic
def entity_describe(*, agent: Agent, entity_id: int, actor: str, reason: str = "", **changes) -> list[str]:
    """Set an entity's importance, profile or summary text. Returns the fields that changed
    (audited with their values before and after)."""
    unknown = sorted(set(changes) - set(ENTITY_DESCRIPTION_FIELDS))
    if unknown:
        raise DomainError(f"only {', '.join(ENTITY_DESCRIPTION_FIELDS)} can be set",
                          {name: "not settable" for name in unknown})
    entity = Entity.objects.select_for_update().filter(agent=agent, pk=entity_id).first()
    if entity is None:
        raise NotFound(f"entity {entity_id} not found")
    importance = changes.get("importance")
    if importance is not None and not 0 <= float(importance) <= 1:
        raise DomainError("importance must be between 0 and 1", {"importance": "between 0 and 1"})
    changed = [name for name, value in changes.items() if value is not None and getattr(entity, name) != value]
    if not changed:
        return []
    before = {name: getattr(entity, name) for name in changed}
    for name in changed:
        setattr(entity, name, changes[name])
    fields = [*changed, "updated_at"]
    if "profile_text" in changed:
        entity.profile_refreshed_at = timezone.now()
        fields.append("profile_refreshed_at")
    entity.save(update_fields=fields)
    audit_record(agent=agent, actor=actor, action="entity_describe", obj=entity, before=before,
                 after={name: getattr(entity, name) for name in changed}, reason=reason)
    return changed


@dataclass
class MergeReport:
    facts_moved: int = 0
    links_moved: int = 0
    relationships_moved: int = 0
    relationships_dropped: int = 0
    aliases_moved: int = 0


@transaction.atomic
def entity_merge(*, agent: Agent, survivor_id: int, merged_id: int, actor: str, reason: str = "") -> MergeReport:
    """Move facts, links, relationships and aliases of `merged` to `survivor`; the merged entity
    stays as a pointer (merged_into) so old references resolve. What moved is recorded
    (EntityMerge) so `entity_unmerge` can undo it. A merged entity can be neither side of another
    merge, so merges never form a cycle."""
    if survivor_id == merged_id:
        raise DomainError("cannot merge an entity into itself", {"entity_id": merged_id})
    ids = sorted([survivor_id, merged_id])  # lock both in a fixed order
    locked = {e.id: e for e in Entity.objects.select_for_update().filter(agent=agent, id__in=ids)}
    for entity_id in ids:
        if entity_id not in locked:
            raise NotFound(f"entity {entity_id} not found")
    survivor, merged = locked[survivor_id], locked[merged_id]
    if survivor.merged_into_id:
        raise DomainError(f"entity {survivor_id} was merged into {survivor.merged_into_id}: merge into that one",
                          {"entity": "merged", "merged_into": survivor.merged_into_id})
    if merged.merged_into_id:
        raise DomainError(f"entity {merged_id} was already merged into {merged.merged_into_id}",
                          {"entity_id": "merged", "merged_into": merged.merged_into_id})
    report = MergeReport()
    moved: dict = {"facts": [], "links": [], "links_dropped": [], "relationships": [], "relationships_dropped": [],
                   "aliases": [], "profile_text": ""}
    moved["facts"] = list(Fact.objects.filter(entity=merged).values_list("id", flat=True))
    report.facts_moved = Fact.objects.filter(id__in=moved["facts"]).update(entity=survivor)
    for link in FactEntityLink.objects.filter(entity=merged):
        if FactEntityLink.objects.filter(fact_id=link.fact_id, entity=survivor).exists():
            moved["links_dropped"].append([link.fact_id, link.is_primary])
            link.delete()
        else:
            link.entity = survivor
            link.save(update_fields=["entity"])
            moved["links"].append(link.id)
            report.links_moved += 1
    now = timezone.now()
    for rel in Relationship.objects.filter(Q(source=merged) | Q(target=merged)).order_by("id"):
        source = survivor if rel.source_id == merged.id else rel.source
        target = survivor if rel.target_id == merged.id else rel.target
        duplicate = rel.is_active and Relationship.objects.current().filter(
            agent=agent, source=source, target=target, rel_type=rel.rel_type).exclude(pk=rel.pk).exists()
        if source.id == target.id or duplicate:
            if rel.is_active:  # kept where it was, closed: the survivor has it already (or it would loop)
                rel.unlearned_at, rel.invalidated_at = max(now, rel.learned_at), max(now, rel.recorded_at)
                rel.save(update_fields=["unlearned_at", "invalidated_at"])
                moved["relationships_dropped"].append(rel.id)
                report.relationships_dropped += 1
            continue
        moved["relationships"].append([rel.id, rel.source_id == merged.id, rel.target_id == merged.id])
        rel.source, rel.target = source, target
        rel.save(update_fields=["source", "target"])
        report.relationships_moved += 1
    moved["aliases"] = sorted(EntityAlias.objects.filter(entity=merged).values_list("alias", flat=True))
    report.aliases_moved = EntityAlias.objects.filter(entity=merged).update(entity=survivor)
    alias_register(agent=agent, entity=survivor, names=[merged.display_name])
    merged.merged_into = survivor
    merged.save(update_fields=["merged_into", "updated_at"])
    if merged.profile_text and merged.profile_text not in survivor.profile_text:
        moved["profile_text"] = merged.profile_text
        survivor.profile_text = f"{survivor.profile_text}\n{merged.profile_text}".strip()
        survivor.save(update_fields=["profile_text", "updated_at"])
    EntityMerge.objects.create(agent=agent, survivor=survivor, merged=merged, moved=moved, actor=actor[:200],
                               reason=reason)
    audit_record(agent=agent, actor=actor, action="entity_merge", obj=survivor,
                 before={"merged": merged.id}, after=report.__dict__, reason=reason)
    transaction.on_commit(lambda: agent_graph_bump(agent_id=agent.id))
    live_notify(agent=agent, kind="entity", obj_id=survivor.id)
    return report


@dataclass
class UnmergeReport:
    facts_moved: int = 0
    links_moved: int = 0
    relationships_moved: int = 0
    relationships_restored: int = 0
    aliases_moved: int = 0


@transaction.atomic
def entity_unmerge(*, agent: Agent, entity_id: int, actor: str, reason: str = "") -> UnmergeReport:
    """Undo the merge of `entity_id` into its survivor with what the merge recorded: its facts
    (and the versions that superseded them since), links, relationships and aliases go back, and
    the relationships the merge closed as duplicates are open again (as new versions)."""
    merged = Entity.objects.select_for_update().filter(agent=agent, pk=entity_id).first()
    if merged is None:
        raise NotFound(f"entity {entity_id} not found")
    record = (EntityMerge.objects.select_for_update().filter(agent=agent, merged=merged, undone_at__isnull=True)
              .order_by("-created_at", "-id").first())
    if not merged.merged_into_id or record is None:
        raise DomainError(f"entity {entity_id} is not merged into another entity", {"entity": "not merged"})
    survivor = Entity.objects.select_for_update().get(pk=record.survivor_id)
    moved, report, now = record.moved, UnmergeReport(), timezone.now()
    fact_ids = set(moved.get("facts", []))
    frontier = set(fact_ids)
    while frontier:  # later versions of the moved facts belong to the merged entity too
        frontier = set(Fact.objects.filter(supersedes_id__in=frontier, entity=survivor)
                       .values_list("id", flat=True)) - fact_ids
        fact_ids |= frontier
    report.facts_moved = Fact.objects.filter(id__in=fact_ids, entity=survivor).update(entity=merged)
    report.links_moved = FactEntityLink.objects.filter(id__in=moved.get("links", []), entity=survivor).update(
        entity=merged)
    FactEntityLink.objects.bulk_create(
        [FactEntityLink(fact_id=fact_id, entity=merged, is_primary=primary)
         for fact_id, primary in moved.get("links_dropped", []) if Fact.objects.filter(pk=fact_id).exists()],
        ignore_conflicts=True)
    for rel_id, was_source, was_target in moved.get("relationships", []):
        rel = Relationship.objects.filter(pk=rel_id).first()
        if rel is None:
            continue
        if was_source and rel.source_id == survivor.id:
            rel.source = merged
        if was_target and rel.target_id == survivor.id:
            rel.target = merged
        if rel.source_id != rel.target_id:
            rel.save(update_fields=["source", "target"])
            report.relationships_moved += 1
    for rel in Relationship.objects.filter(id__in=moved.get("relationships_dropped", [])):
        edge, _ = relationship_upsert(agent=agent, source=rel.source, target=rel.target, rel_type=rel.rel_type,
                                      valid_from=rel.valid_from, evidence=rel.evidence_fact,
                                      source_event=rel.source_event, learned_at=now, initial_strength=rel.strength,
                                      reinforcement=0.0)
        report.relationships_restored += edge is not None
    report.aliases_moved = EntityAlias.objects.filter(agent=agent, entity=survivor,
                                                      alias__in=moved.get("aliases", [])).update(entity=merged)
    if moved.get("profile_text") and moved["profile_text"] in survivor.profile_text:
        survivor.profile_text = survivor.profile_text.replace(moved["profile_text"], "").strip()
        survivor.save(update_fields=["profile_text", "updated_at"])
    merged.merged_into = None
    merged.save(update_fields=["merged_into", "updated_at"])
    record.undone_at = now
    record.save(update_fields=["undone_at"])
    audit_record(agent=agent, actor=actor, action="entity_unmerge", obj=merged,
                 before={"merged_into": survivor.id}, after=report.__dict__, reason=reason)
    transaction.on_commit(lambda: agent_graph_bump(agent_id=agent.id))
    live_notify(agent=agent, kind="entity", obj_id=merged.id)
    return report


@transaction.atomic
def entity_alias_remove(*, agent: Agent, entity_id: int, alias: str, actor: str, reason: str = "") -> None:
    """The name no longer points at the entity."""
    entity = _entity(agent, entity_id)
    norm = normalize_alias(alias or "")
    row = EntityAlias.objects.select_for_update().filter(agent=agent, entity=entity, alias=norm).first()
    if row is None:
        raise NotFound(f"entity {entity_id} has no alias {alias!r}", {"alias": "not an alias of this entity"})
    row.delete()
    audit_record(agent=agent, actor=actor, action="alias_remove", obj=entity, before={"alias": norm}, reason=reason)
