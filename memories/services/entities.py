"""Entities and their aliases: creation (idempotent under concurrency), alias registration
(first write wins), an operator's alias changes and descriptions, merge and unmerge. Every
operator change is audited (`audited_change`); a merge re-creates the relationship versions it
moves instead of editing them, so what the agent knew before it stays as it was."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memories.errors import DomainError, NotFound
from memories.inserts import insert_sql, inserted
from memories.models import Agent, Entity, EntityAlias, EntityMerge, Fact, FactEntityLink, Relationship
from memories.naming import entity_key, normalize_alias, normalize_type, titled_form, written_form
from memories.services.agents import agent_graph_bump_on_commit
from memories.services.changes import audited_change
from memories.services.relationships import relationship_move, relationship_upsert, relationships_unlearn


def alias_register(*, agent: Agent, entity: Entity, names: list[str]) -> int:
    """Register normalized aliases for an entity; an alias already taken (by anyone, even
    concurrently) keeps its first owner. A name with accents, a hyphen, an apostrophe or a
    title is also kept as written, in lower case ("zé", "jean-luc", "mrs. lim"): the form a
    person reads and a client that matches names as written looks for. Lookups go by the
    normalized form, so a written form is kept only beside its normalized form of the same
    entity. Returns how many were new. One statement; new aliases move the agent's graph version
    on commit (what retrievals cached of the agent's names is read again)."""
    plain = sorted({normalize_alias(n) for n in names} - {""})
    if not plain:
        return 0
    written = sorted({(normalize_alias(n), form) for n in names for form in (titled_form(n), written_form(n)) if form})
    table = EntityAlias._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH ins AS (
                INSERT INTO {table} (agent_id, alias, entity_id, created_at)
                SELECT %s, alias, %s, now() FROM unnest(%s::text[]) AS alias
                ON CONFLICT (agent_id, alias) DO NOTHING RETURNING alias),
            own AS (
                SELECT alias FROM ins
                UNION SELECT alias FROM {table} WHERE agent_id = %s AND entity_id = %s AND alias = ANY(%s)),
            wr AS (
                INSERT INTO {table} (agent_id, alias, entity_id, created_at)
                SELECT %s, w.form, %s, now() FROM unnest(%s::text[], %s::text[]) AS w(plain, form)
                WHERE w.plain IN (SELECT alias FROM own)
                ON CONFLICT (agent_id, alias) DO NOTHING RETURNING 1)
            SELECT (SELECT count(*) FROM ins) + (SELECT count(*) FROM wr)
            """,
            [agent.id, entity.id, plain, agent.id, entity.id, plain,
             agent.id, entity.id, [p for p, _ in written], [f for _, f in written]],
        )
        added = int(cursor.fetchone()[0])
    if added:
        agent_graph_bump_on_commit(agent_id=agent.id)
    return added


def _written_forms(agent: Agent, entity_id: int, norm: str) -> list[EntityAlias]:
    """The entity's aliases kept as written whose normalized form is `norm` ("zé" for "ze")."""
    return [row for row in EntityAlias.objects.select_for_update().filter(agent=agent, entity_id=entity_id)
            if row.alias != norm and normalize_alias(row.alias) == norm]


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
    """The entity for (type, name): inserted with ON CONFLICT DO NOTHING (one statement for a new
    name), so concurrent writers mentioning the same new name end up with one row; the row that
    holds the key already when there is one."""
    key = entity_key(entity_type, name)
    entity = Entity(agent=agent, key=key, type=normalize_type(entity_type), display_name=name.strip(),
                    name_embedding=name_embedding)
    sql, params = insert_sql(entity, ignore_conflicts=True)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        returned = cursor.fetchone()
    return inserted(entity, returned) if returned else Entity.objects.get(agent=agent, key=key)


def entity_retype(*, agent: Agent, entity: Entity, entity_type: str) -> bool:
    """A new entity turns out to name another kind of thing ("Oak Lawn, not Elmhurst": a place
    like the name it corrects): its type and the key that carries the type change, unless that
    key is taken. Returns whether it changed."""
    key = entity_key(entity_type, entity.display_name)
    if Entity.objects.filter(agent=agent, key=key).exists():
        return False
    Entity.objects.filter(pk=entity.pk).update(type=normalize_type(entity_type), key=key)
    entity.type, entity.key = normalize_type(entity_type), key
    agent_graph_bump_on_commit(agent_id=agent.id)
    return True


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
        EntityAlias.objects.filter(pk__in=[row.pk for row in _written_forms(agent, previous, norm)]).update(
            entity=entity)  # "zé" goes with "ze"
        owner.entity = entity
        owner.save(update_fields=["entity"])
        # the graph version moves: what retrievals kept of the agent's names is read again
        audited_change(agent=agent, actor=actor, action="alias_move", obj=entity,
                       before={"alias": norm, "entity": previous}, after={"alias": norm, "entity": entity.id},
                       live=("entity", entity.id))
        return True
    created = alias_register(agent=agent, entity=entity, names=[alias]) > 0  # which moves the graph version
    if created:
        audited_change(agent=agent, actor=actor, action="alias_add", obj=entity, after={"alias": norm},
                       live=("entity", entity.id), graph_changed=False)
    return created


@transaction.atomic
def entity_alias_remove(*, agent: Agent, entity_id: int, alias: str, actor: str, reason: str = "") -> None:
    """The name no longer points at the entity."""
    entity = _entity(agent, entity_id)
    norm = normalize_alias(alias or "")
    # with the forms it was kept in as written ("zé" beside "ze"), which go whichever is named
    rows = [*EntityAlias.objects.select_for_update().filter(agent=agent, entity=entity, alias=norm),
            *_written_forms(agent, entity.id, norm)]
    if not norm or not rows:
        raise NotFound(f"entity {entity_id} has no alias {alias!r}", {"alias": "not an alias of this entity"})
    EntityAlias.objects.filter(pk__in=[row.pk for row in rows]).delete()
    # the graph version moves: what retrievals kept of the agent's names is read again
    audited_change(agent=agent, actor=actor, action="alias_remove", obj=entity, before={"alias": norm},
                   reason=reason, live=("entity", entity.id))


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
    audited_change(agent=agent, actor=actor, action="entity_describe", obj=entity, before=before,
                   after={name: getattr(entity, name) for name in changed}, reason=reason,
                   live=("entity", entity.id), graph_changed=False)
    return changed


def entity_profile_set(*, entity: Entity, text: str) -> None:
    """The consolidated profile (the job's is authoritative: the write path only seeds one)."""
    Entity.objects.filter(pk=entity.pk).update(profile_text=text, profile_refreshed_at=timezone.now())


@dataclass
class MergeReport:
    facts_moved: int = 0
    links_moved: int = 0
    relationships_moved: int = 0
    relationships_dropped: int = 0
    aliases_moved: int = 0


def _lock_pair(agent: Agent, survivor_id: int, merged_id: int) -> tuple[Entity, Entity]:
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
    return survivor, merged


def _merge_links(merged: Entity, survivor: Entity, moved: dict, report: MergeReport) -> None:
    for link in FactEntityLink.objects.filter(entity=merged):
        if FactEntityLink.objects.filter(fact_id=link.fact_id, entity=survivor).exists():
            moved["links_dropped"].append([link.fact_id, link.is_primary])
            link.delete()
        else:
            link.entity = survivor
            link.save(update_fields=["entity"])
            moved["links"].append(link.id)
            report.links_moved += 1


def _merge_relationships(agent: Agent, merged: Entity, survivor: Entity, moved: dict, report: MergeReport,
                         now) -> None:
    """The merged entity's current edges become the survivor's: each version is closed and one
    with the survivor in its place is inserted (closed versions keep their ends: what the agent
    knew before the merge reads as it did). An edge the survivor has already, or one that
    would join the survivor to itself, is only closed."""
    for rel in Relationship.objects.current().filter(Q(source=merged) | Q(target=merged)).order_by("id"):
        source = survivor if rel.source_id == merged.id else rel.source
        target = survivor if rel.target_id == merged.id else rel.target
        duplicate = Relationship.objects.current().filter(
            agent=agent, source=source, target=target, rel_type=rel.rel_type).exclude(pk=rel.pk).exists()
        if source.id == target.id or duplicate:
            relationships_unlearn(agent=agent, ids=[rel.id], at=now)
            moved["relationships_dropped"].append(rel.id)
            report.relationships_dropped += 1
            continue
        new = relationship_move(rel=rel, source=source, target=target, at=now)
        moved["relationships"].append([rel.id, new.id, rel.source_id == merged.id, rel.target_id == merged.id])
        report.relationships_moved += 1


@transaction.atomic
def entity_merge(*, agent: Agent, survivor_id: int, merged_id: int, actor: str, reason: str = "") -> MergeReport:
    """Move facts, links, relationships and aliases of `merged` to `survivor`; the merged entity
    stays as a pointer (merged_into) so old references resolve. What moved is recorded
    (EntityMerge) so `entity_unmerge` can undo it. A merged entity can be neither side of another
    merge, so merges never form a cycle."""
    survivor, merged = _lock_pair(agent, survivor_id, merged_id)
    report, now = MergeReport(), timezone.now()
    moved: dict = {"facts": [], "links": [], "links_dropped": [], "relationships": [], "relationships_dropped": [],
                   "aliases": [], "profile_text": ""}
    moved["facts"] = list(Fact.objects.filter(entity=merged).values_list("id", flat=True))
    report.facts_moved = Fact.objects.filter(id__in=moved["facts"]).update(entity=survivor)
    _merge_links(merged, survivor, moved, report)
    _merge_relationships(agent, merged, survivor, moved, report, now)
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
    audited_change(agent=agent, actor=actor, action="entity_merge", obj=survivor, before={"merged": merged.id},
                   after=report.__dict__, reason=reason, live=("entity", survivor.id))
    return report


@dataclass
class UnmergeReport:
    facts_moved: int = 0
    links_moved: int = 0
    relationships_moved: int = 0
    relationships_restored: int = 0
    aliases_moved: int = 0


def _unmerge_relationships(agent: Agent, merged: Entity, survivor: Entity, moved: dict, report: UnmergeReport,
                           now) -> None:
    """The edges the merge gave the survivor go back (a new version each, when still current);
    those it closed as duplicates are current again (as new versions)."""
    for record in moved.get("relationships", []):
        # [old id, new id, was source, was target]; a merge recorded before versions were moved
        # (edited in place) has [id, was source, was target]
        rel_id, was_source, was_target = (record[1], *record[2:]) if len(record) == 4 else record
        rel = Relationship.objects.current().filter(pk=rel_id).select_related("source", "target").first()
        if rel is None:
            continue
        source = merged if was_source and rel.source_id == survivor.id else rel.source
        target = merged if was_target and rel.target_id == survivor.id else rel.target
        if source.id != target.id and (source.id, target.id) != (rel.source_id, rel.target_id):
            relationship_move(rel=rel, source=source, target=target, at=now)
            report.relationships_moved += 1
    for rel in Relationship.objects.filter(id__in=moved.get("relationships_dropped", [])):
        edge, _ = relationship_upsert(agent=agent, source=rel.source, target=rel.target, rel_type=rel.rel_type,
                                      valid_from=rel.valid_from, evidence=rel.evidence_fact,
                                      source_event=rel.source_event, learned_at=now, initial_strength=rel.strength,
                                      reinforcement=0.0)
        report.relationships_restored += edge is not None


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
    _unmerge_relationships(agent, merged, survivor, moved, report, now)
    report.aliases_moved = EntityAlias.objects.filter(agent=agent, entity=survivor,
                                                      alias__in=moved.get("aliases", [])).update(entity=merged)
    if moved.get("profile_text") and moved["profile_text"] in survivor.profile_text:
        survivor.profile_text = survivor.profile_text.replace(moved["profile_text"], "").strip()
        survivor.save(update_fields=["profile_text", "updated_at"])
    merged.merged_into = None
    merged.save(update_fields=["merged_into", "updated_at"])
    record.undone_at = now
    record.save(update_fields=["undone_at"])
    audited_change(agent=agent, actor=actor, action="entity_unmerge", obj=merged,
                   before={"merged_into": survivor.id}, after=report.__dict__, reason=reason,
                   live=("entity", merged.id))
    return report
