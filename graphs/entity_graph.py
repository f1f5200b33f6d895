"""The per-agent entity graph (relationships + fact co-mentions) with Personalized PageRank.

Graphs are cached per process, for the ANAMNESIS_GRAPH_CACHE_AGENTS most recently read agents,
and keyed by the agent's `graph_version`, which every write that changes relationships or fact
links bumps; a query rebuilds only when that version moved.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import networkx as nx
from django.conf import settings
from django.db import connection

from memories.lru import LRUCache
from memories.models import Agent, Fact, FactEntityLink, Relationship
from memories.models.visibility import Moment, version_visible, version_visible_sql

# agent id → (graph_version, graph)
_cache: LRUCache[int, tuple[int, nx.Graph]] = LRUCache(settings.ANAMNESIS_GRAPH_CACHE_AGENTS)


def build_graph(agent: Agent, as_of: Moment | datetime | None = None) -> nx.Graph:
    """Undirected weighted graph: relationship edges (weight = strength) plus co-mention edges
    between entities named by the same fact (0.5 per shared fact, capped at 1); each entity's
    node holds how many visible facts name it (`facts`)."""
    graph = nx.Graph()
    edges = Relationship.objects.filter(version_visible(as_of), agent=agent).values_list(
        "source_id", "target_id", "strength", "rel_type")
    for source, target, strength, rel_type in edges:
        _strengthen(graph, source, target, strength, rel_type=rel_type)
    links = FactEntityLink.objects.filter(version_visible(as_of, "fact__"), fact__agent=agent).values_list(
        "fact_id", "entity_id").order_by("fact_id")
    by_fact: dict[int, list[int]] = {}
    for fact_id, entity_id in links:
        by_fact.setdefault(fact_id, []).append(entity_id)
        graph.add_node(entity_id)
        graph.nodes[entity_id]["facts"] = graph.nodes[entity_id].get("facts", 0) + 1
    for entities in by_fact.values():
        for i, a in enumerate(entities):
            for b in entities[i + 1:]:
                _strengthen(graph, a, b, CO_MENTION_WEIGHT)
    return graph


CO_MENTION_WEIGHT = 0.5  # per fact naming both entities


def _strengthen(graph: nx.Graph, a: int, b: int, amount: float, **attrs) -> None:
    """Add `amount` to the edge's weight (created if missing), capped at 1."""
    prior = graph.get_edge_data(a, b, {}).get("weight", 0.0)
    graph.add_edge(a, b, weight=min(1.0, prior + amount), **attrs)


@dataclass
class HistoryGraph:
    """Every version's edges of an agent's entity graph, with the rows they come from: what a
    time-travel query needs to know which edges could have been visible, so that it checks only
    those rows' visibility (by id) instead of walking an entity's links in the database."""

    relationships: dict[tuple[int, int], list[tuple[int, float, str]]]  # pair → (id, strength, rel_type)
    co_mentions: dict[tuple[int, int], list[int]]  # pair (low, high) → ids of the facts naming both
    neighbours: dict[int, set[int]]
    link_counts: dict[int, int]  # entity → its links, every version

    def region(self, seeds: Iterable[int], max_hops: int) -> set[int]:
        """The entities within `max_hops` of a seed over every version's edges: the most a
        neighbourhood at any moment can hold."""
        seen = set(seeds)
        frontier = set(seen)
        for _ in range(max_hops):
            frontier = {n for node in frontier for n in self.neighbours.get(node, ())} - seen
            if not frontier:
                break
            seen |= frontier
        return seen


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def build_history_graph(agent: Agent) -> HistoryGraph:
    history = HistoryGraph({}, {}, {}, {})
    rows = Relationship.objects.filter(agent=agent).order_by("id").values_list(
        "id", "source_id", "target_id", "strength", "rel_type")
    for rel_id, source, target, strength, rel_type in rows:
        history.relationships.setdefault(_pair(source, target), []).append((rel_id, strength, rel_type))
    links = FactEntityLink.objects.filter(fact__agent=agent).order_by("fact_id").values_list("fact_id", "entity_id")
    by_fact: dict[int, list[int]] = {}
    for fact_id, entity_id in links:
        by_fact.setdefault(fact_id, []).append(entity_id)
        history.link_counts[entity_id] = history.link_counts.get(entity_id, 0) + 1
    for fact_id, entities in by_fact.items():
        for i, a in enumerate(entities):
            for b in entities[i + 1:]:
                if a != b:
                    history.co_mentions.setdefault(_pair(a, b), []).append(fact_id)
    for a, b in [*history.relationships, *history.co_mentions]:
        history.neighbours.setdefault(a, set()).add(b)
        history.neighbours.setdefault(b, set()).add(a)
    return history


# agent id → (graph_version, HistoryGraph), and when each agent's was last built
_history_cache: LRUCache[int, tuple[int, HistoryGraph]] = LRUCache(settings.ANAMNESIS_GRAPH_CACHE_AGENTS)
_history_built_at: dict[int, float] = {}
_history_lock = threading.Lock()


def graph_version(agent: Agent) -> int:
    return Agent.objects.filter(pk=agent.pk).values_list("graph_version", flat=True).first() or 0


def history_graph_cached(agent: Agent, version: int) -> HistoryGraph | None:
    """The agent's history graph if the cache holds it at this graph version."""
    cached = _history_cache.get(agent.pk)
    return cached[1] if cached and cached[0] == version else None


def history_graph_due(agent: Agent) -> bool:
    """Whether to build the agent's history graph now: not while it was built in the last
    ANAMNESIS_HISTORY_GRAPH_MIN_INTERVAL seconds (an agent written all the time would rebuild it
    after every write; its time-travel queries read the database meanwhile)."""
    with _history_lock:
        last = _history_built_at.get(agent.pk)
        if last is not None and time.monotonic() - last < settings.ANAMNESIS_HISTORY_GRAPH_MIN_INTERVAL:
            return False
        _history_built_at[agent.pk] = time.monotonic()
        return True


def history_graph_refresh(agent: Agent) -> HistoryGraph:
    """Build the agent's history graph and cache it at the version it was read at."""
    version = graph_version(agent)
    history = build_history_graph(agent)
    _history_cache.put(agent.pk, (version, history))
    return history


def neighbourhood_graph(agent: Agent, seeds: Iterable[int], *, max_hops: int, as_of: Moment | datetime | None,
                        history: HistoryGraph | None = None) -> nx.Graph:
    """The part of `build_graph(agent, as_of)` that PPR from `seeds` reads: the subgraph induced
    by the entities within `max_hops` of a seed, with the same edge weights. A time-travel query
    pays for its neighbourhood, not for rebuilding the agent's whole history (at 100k facts that
    took about 280 ms). Node `facts` here counts every version's links (an upper bound of the
    facts visible then).

    With the agent's `history` graph (current at its graph version), only the rows of the edges
    it has within `max_hops` of the seeds are checked for visibility, by id; without it, the
    neighbourhood is read hop by hop from the database. Both give the same graph."""
    if history is not None:
        return _neighbourhood_from_history(history, list(seeds), max_hops=max_hops, as_of=as_of)
    links, facts = FactEntityLink._meta.db_table, Fact._meta.db_table
    rels = Relationship._meta.db_table
    fact_sql, fact_params = version_visible_sql(as_of, "f")
    rel_sql, rel_params = version_visible_sql(as_of, "r")
    graph = nx.Graph()
    seeds = list(seeds)
    seen = set(seeds)
    frontier = list(seen)
    with connection.cursor() as cursor:
        for _ in range(max_hops):
            if not frontier:
                break
            cursor.execute(
                f"SELECT r.source_id, r.target_id FROM {rels} r WHERE r.agent_id = %s AND {rel_sql} "
                f"AND (r.source_id = ANY(%s) OR r.target_id = ANY(%s)) "
                f"UNION SELECT l1.entity_id, l2.entity_id FROM {links} l1 JOIN {facts} f ON f.id = l1.fact_id "
                f"JOIN {links} l2 ON l2.fact_id = l1.fact_id AND l2.entity_id <> l1.entity_id "
                f"WHERE l1.entity_id = ANY(%s) AND {fact_sql}",
                [agent.id, *rel_params, frontier, frontier, frontier, *fact_params])
            found = {node for pair in cursor.fetchall() for node in pair} - seen
            seen |= found
            frontier = list(found)
        nodes = list(seen)
        cursor.execute(
            f"SELECT r.source_id, r.target_id, r.strength, r.rel_type FROM {rels} r WHERE r.agent_id = %s "
            f"AND {rel_sql} AND r.source_id = ANY(%s) AND r.target_id = ANY(%s)",
            [agent.id, *rel_params, nodes, nodes])
        for source, target, strength, rel_type in cursor.fetchall():
            _strengthen(graph, source, target, strength, rel_type=rel_type)
        graph.add_nodes_from(_seeds_named(cursor, seeds, as_of))
        cursor.execute(
            f"SELECT l1.entity_id, l2.entity_id, count(*) FROM {links} l1 JOIN {facts} f ON f.id = l1.fact_id "
            f"JOIN {links} l2 ON l2.fact_id = l1.fact_id AND l2.entity_id > l1.entity_id "
            f"WHERE l1.entity_id = ANY(%s) AND l2.entity_id = ANY(%s) AND {fact_sql} GROUP BY 1, 2",
            [nodes, nodes, *fact_params])
        for a, b, shared in cursor.fetchall():
            _strengthen(graph, a, b, CO_MENTION_WEIGHT * shared)
        # facts per entity, every version counted (index-only): a size that only chooses how the
        # graph signal reads an entity's facts, not worth checking each one's visibility
        cursor.execute(f"SELECT entity_id, count(*) FROM {links} WHERE entity_id = ANY(%s) GROUP BY entity_id",
                       [[n for n in nodes if n in graph]])
        for entity_id, count in cursor.fetchall():
            graph.nodes[entity_id]["facts"] = count
    return graph


def _seeds_named(cursor, seeds: list[int], as_of: Moment | datetime | None) -> list[int]:
    """The seeds a fact visible at `as_of` names: a seed with no edges is still a node then."""
    fact_sql, fact_params = version_visible_sql(as_of, "f")
    cursor.execute(
        f"SELECT e FROM unnest(%s::bigint[]) AS e WHERE EXISTS (SELECT 1 FROM {FactEntityLink._meta.db_table} l "
        f"JOIN {Fact._meta.db_table} f ON f.id = l.fact_id WHERE l.entity_id = e AND {fact_sql})",
        [list(seeds), *fact_params])
    return [row[0] for row in cursor.fetchall()]


def _neighbourhood_from_history(history: HistoryGraph, seeds: list[int], *, max_hops: int,
                                as_of: Moment | datetime | None) -> nx.Graph:
    region = history.region(seeds, max_hops)
    pairs = [(a, b) for a in region for b in history.neighbours.get(a, ()) if a <= b and b in region]
    rel_ids = [r[0] for pair in pairs for r in history.relationships.get(pair, ())]
    fact_ids = [f for pair in pairs for f in history.co_mentions.get(pair, ())]
    fact_sql, fact_params = version_visible_sql(as_of, "f")
    rel_sql, rel_params = version_visible_sql(as_of, "r")
    facts, rels = Fact._meta.db_table, Relationship._meta.db_table
    with connection.cursor() as cursor:
        visible_rels: set[int] = set()
        if rel_ids:
            cursor.execute(f"SELECT r.id FROM {rels} r WHERE r.id = ANY(%s) AND {rel_sql}", [rel_ids, *rel_params])
            visible_rels = {row[0] for row in cursor.fetchall()}
        visible_facts: set[int] = set()
        if fact_ids:
            cursor.execute(f"SELECT f.id FROM {facts} f WHERE f.id = ANY(%s) AND {fact_sql}",
                           [fact_ids, *fact_params])
            visible_facts = {row[0] for row in cursor.fetchall()}
        seed_nodes = _seeds_named(cursor, seeds, as_of)
    edges: dict[tuple[int, int], tuple[list[tuple[int, float, str]], int]] = {}
    for pair in pairs:
        rel_rows = [r for r in history.relationships.get(pair, ()) if r[0] in visible_rels]
        shared = sum(1 for f in history.co_mentions.get(pair, ()) if f in visible_facts)
        if rel_rows or shared:
            edges[pair] = (rel_rows, shared)
    adjacency: dict[int, set[int]] = {}
    for a, b in edges:
        adjacency.setdefault(a, set()).add(b)
        adjacency.setdefault(b, set()).add(a)
    nodes, frontier = set(seeds), set(seeds)
    for _ in range(max_hops):  # the hops the database walk takes, over the edges visible then
        frontier = {n for node in frontier for n in adjacency.get(node, ())} - nodes
        if not frontier:
            break
        nodes |= frontier
    graph = nx.Graph()
    for (a, b), (rel_rows, _) in edges.items():
        if a in nodes and b in nodes:
            for _, strength, rel_type in rel_rows:
                _strengthen(graph, a, b, strength, rel_type=rel_type)
    graph.add_nodes_from(seed_nodes)
    for (a, b), (_, shared) in edges.items():
        if shared and a in nodes and b in nodes:
            _strengthen(graph, a, b, CO_MENTION_WEIGHT * shared)
    for node in graph.nodes:
        if node in history.link_counts:
            graph.nodes[node]["facts"] = history.link_counts[node]
    return graph


def agent_graph(agent: Agent, version: int | None = None) -> nx.Graph:
    """The current graph from the cache (rebuilt when the agent's graph_version moved; pass the
    version when it was just read); a time-travel query reads `neighbourhood_graph` instead."""
    version = graph_version(agent) if version is None else version
    cached = _cache.get(agent.pk)
    if cached and cached[0] == version:
        return cached[1]
    graph = build_graph(agent)
    _cache.put(agent.pk, (version, graph))
    return graph


@dataclass(frozen=True)
class GraphScores:
    ppr: dict[int, float]
    hops: dict[int, int]


def personalized_pagerank(graph: nx.Graph, seeds: Iterable[int], *, alpha: float = 0.85, max_hops: int = 2
                          ) -> GraphScores:
    """PPR from the seed entities, restricted to their `max_hops` neighbourhood (which keeps it
    fast on large graphs), plus each entity's hop distance from the nearest seed."""
    seeds = [s for s in seeds if s in graph]
    if not seeds:
        return GraphScores({}, {})
    hops = nx.multi_source_dijkstra_path_length(graph, seeds, cutoff=max_hops, weight=lambda u, v, d: 1)
    sub = graph.subgraph(hops)
    personalization = {node: (1.0 if node in seeds else 0.0) for node in sub}
    try:
        ppr = nx.pagerank(sub, alpha=alpha, personalization=personalization, weight="weight", max_iter=200)
    except nx.PowerIterationFailedConvergence:
        ppr = {node: 1.0 / (1 + hops[node]) for node in sub}
    return GraphScores(ppr, dict(hops))

