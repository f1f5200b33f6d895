"""What the offline extractor stores for one story, written in-process: every entity (type, aliases),
its current facts and every relationship with its world-time window, then each check of the story
scored the way the shared scorer reads the REST API (resolution by name or alias, then by word).

    .venv/bin/python bench/story_state.py STORIES.json ID [ID ...] [--only-failures]

A debugging aid next to `bench/stories.py` (which measures through the API with a worker): same
extractor, no server. Each run writes into a new agent `dbg-<id>-<timestamp>`.
"""

import argparse
import json
import re
import sys
import time
from datetime import datetime

from _setup import django_setup


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("stories")
    ap.add_argument("ids", nargs="+")
    ap.add_argument("--only-failures", action="store_true", help="print the failed checks only")
    args = ap.parse_args()
    django_setup()
    from django.db.models import Q

    from memories.models import Entity, Fact, Relationship
    from memories.services.agents import agent_get_or_create
    from memories.services.write import memory_write

    with open(args.stories) as fh:
        stories = {s["id"]: s for s in json.load(fh)}
    stamp = time.strftime("%H%M%S")
    for sid in args.ids:
        story = stories[sid]
        agent = agent_get_or_create(slug=f"dbg-{sid}-{stamp}".lower())
        for m in story["messages"]:
            at = datetime.fromisoformat(m["at"].replace("Z", "+00:00"))
            memory_write(agent=agent, message=m["text"], speaker_name=m.get("speaker", story["speaker"]),
                         occurred_at=at)
        entities = list(Entity.objects.filter(agent=agent, merged_into__isnull=True)
                        .prefetch_related("aliases").order_by("id"))
        names = {e.id: e.display_name for e in entities}

        def resolve(name, etype=None, entities=entities):
            pool = [e for e in entities if etype in (None, e.type)]
            exact = [e for e in pool if e.display_name.lower() == name.lower()
                     or any(a.alias.lower() == name.lower() for a in e.aliases.all())]
            if exact:
                return exact[0].id
            word = [e for e in pool if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", e.display_name, re.I)]
            return word[0].id if len(word) == 1 else None

        if not args.only_failures:
            print(f"\n##### {sid} ({agent.slug})")
            for e in entities:
                aliases = ", ".join(a.alias for a in e.aliases.all() if a.alias != e.display_name)
                print(f"[{e.id}] {e.display_name} ({e.type}){'  aka ' + aliases if aliases else ''}")
                for f in Fact.objects.filter(agent=agent, entity=e, valid_to__isnull=True,
                                             invalidated_at__isnull=True).order_by("id"):
                    print(f"      fact: {f.text}")
            print("relationships (world time):")
            for r in Relationship.objects.filter(agent=agent).order_by("id"):
                window = f"{r.valid_from:%Y-%m-%d} .. {f'{r.valid_to:%Y-%m-%d}' if r.valid_to else 'now'}"
                gone = "  (invalidated)" if r.invalidated_at else ""
                print(f"   {names.get(r.source_id)} -{r.rel_type}-> {names.get(r.target_id)}  [{window}]{gone}")
        for c in story["checks"]:
            ok, saw = _check(c, resolve, agent, Relationship, Fact, Q, entities)
            if not ok or not args.only_failures:
                shown = json.dumps({k: v for k, v in c.items() if k != "kind"})[:160]
                print(f"  {'ok  ' if ok else 'FAIL'} {c['kind']}: {shown}"
                      f"  | {saw}")
    return 0


def _at(c):
    return datetime.fromisoformat(c["as_of"].replace("Z", "+00:00")) if c.get("as_of") else None


def _check(c, resolve, agent, Relationship, Fact, Q, entities):
    """An approximation of the scorer's check on the stored rows (world time only; the scorer
    asks the API, which also applies the learned and recorded clocks)."""
    kind = c["kind"]
    if kind == "linked":
        a, b = resolve(c["a"]), resolve(c["b"])
        if a is None or b is None:
            return (not c["expect"]), f"a={a} b={b}"
        at = _at(c)
        rels = Relationship.objects.filter(agent=agent).filter(
            Q(source_id=a, target_id=b) | Q(source_id=b, target_id=a))
        # now: open and not invalidated; at a past moment: its world-time window (closing a row
        # also stamps invalidated_at, so that stamp says nothing about the past)
        live = [r for r in rels if (at is None and r.valid_to is None and r.invalidated_at is None)
                or (at is not None and r.valid_from <= at and (r.valid_to is None or r.valid_to > at))]
        return bool(live) == c["expect"], f"linked={bool(live)} {[r.rel_type for r in rels]}"
    if kind == "fact":
        e = resolve(c["about"])
        at = _at(c)
        # as the REST API's `facts/?entity=` reads them: about the entity or naming it
        facts = Fact.objects.filter(agent=agent).about(e) if e else []
        live = [f.text for f in facts if (at is None and f.valid_to is None and f.invalidated_at is None)
                or (at is not None and f.valid_from <= at and (f.valid_to is None or f.valid_to > at))]
        hits = [t for t in live if re.search(c["match"], t, re.I)]
        return bool(hits) == c["expect"], f"matching={hits[:2]}"
    if kind == "same":
        ids = [resolve(n) for n in c["names"]]
        return len(set(ids)) == 1 and ids[0] is not None, f"ids={ids}"
    if kind == "distinct_count":
        token = c["name"]
        n = sum(1 for e in entities if e.type == c.get("type", e.type)
                and (re.search(rf"(?<!\w){re.escape(token)}(?!\w)", e.display_name, re.I)
                     or any(re.search(rf"(?<!\w){re.escape(token)}(?!\w)", a.alias, re.I) for a in e.aliases.all())))
        return n == c["count"], f"count={n}"
    return True, "recall: not scored here (bench/stories.py)"


if __name__ == "__main__":
    sys.exit(main())
