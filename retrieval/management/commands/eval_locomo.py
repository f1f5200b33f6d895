import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memories.importers.locomo import load_conversations
from memories.services.agents import agent_get_or_create
from memories.services.imports import ConversationJob, conversations_import, default_import_workers
from retrieval.evaluation import MODES, evaluate
from retrieval.services import memory_retrieve


class Command(BaseCommand):
    help = ("Evidence recall@k on a LoCoMo-format file: imports each conversation into its own agent "
            "(resumable) and compares the full pipeline with BM25-only and semantic-only baselines.")

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--k", default="5,10,25", help="comma-separated cut-offs (default 5,10,25)")
        parser.add_argument("--agent-prefix", default="locomo")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--workers", type=int, default=default_import_workers(),
                            help="processes importing the conversations side by side (default: one per core)")
        parser.add_argument("--per-question", metavar="FILE",
                            help="also write one JSON line per question (pipeline recall@10, cited ids)")

    def handle(self, *args, path, k, agent_prefix, **opts):
        if not Path(path).exists():
            raise CommandError(f"no such file: {path}")
        try:
            ks = [int(x) for x in k.split(",") if x.strip()]
        except ValueError as exc:
            raise CommandError("--k takes comma-separated integers, e.g. 5,10,25") from exc
        if not ks or min(ks) < 1:
            raise CommandError("--k needs positive integers")
        conversations = load_conversations(path)
        quiet = opts["json"] or opts["verbosity"] == 0
        if opts["workers"] < 1:
            raise CommandError("--workers must be at least 1")
        agents = {conv.sample_id: agent_get_or_create(slug=f"{agent_prefix}-{conv.sample_id}".lower())
                  for conv in conversations}
        with tqdm(total=sum(len(c.turns) for c in conversations), desc="import", disable=quiet) as bar:
            conversations_import([ConversationJob(agents[c.sample_id].slug, c.turns) for c in conversations],
                                 workers=opts["workers"], progress=bar.update)

        def retrieve(agent, question, now, preset, limit):
            # asked at the question's time: what the agent knew then (the three clocks)
            return memory_retrieve(agent=agent, query=question, as_of=now, now=now, preset=preset, limit=limit,
                                   record=False)

        details = [] if opts.get("per_question") else None
        report = evaluate(conversations, agent_for=lambda c: agents[c.sample_id], retrieve=retrieve, ks=ks,
                          progress=(lambda s: None) if quiet else (lambda s: self.stderr.write(s)), details=details)
        if details is not None:
            Path(opts["per_question"]).write_text("".join(json.dumps(row) + "\n" for row in details))
        if opts["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self._print(report, ks)

    def _print(self, report, ks):
        self.stdout.write(f"{report['questions']} questions, {report['dropped_evidence_ids']} evidence ids dropped")
        header = ["mode", "cat"] + [f"R@{k}" for k in ks] + ["all@10", "MRR"]
        self.stdout.write("  ".join(f"{h:>9}" for h in header))
        for mode in MODES:
            rows = [("all", report[mode]["overall"])] + list(report[mode]["by_category"].items())
            for cat, metrics in rows:
                values = [metrics.get(f"recall@{k}", 0) for k in ks] + [metrics.get("all@10", 0),
                                                                        metrics.get("mrr", 0)]
                self.stdout.write("  ".join([f"{mode:>9}", f"{cat:>9}"] + [f"{v:9.3f}" for v in values]))
        self.stdout.write(f"tokens returned (pipeline, mean): {report['pipeline']['overall'].get('tokens_returned')}")
        self.stdout.write(f"latency ms: p50 {report['latency_ms']['p50']}  p95 {report['latency_ms']['p95']}")
