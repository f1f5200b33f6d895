"""LoCoMo evidence-recall evaluation: metrics are pure functions; the runner imports each
conversation into its own agent (resumable) and asks every question of categories 1–4."""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from memories.importers.locomo import Conversation

_DIA_ID = re.compile(r"^D\d+:\d+$")
CATEGORIES = ("1", "2", "3", "4")
MODES = {"pipeline": "default", "bm25": "keyword_only", "semantic": "semantic_only"}


def clean_evidence(raw: Sequence[str], known: set[str]) -> tuple[list[str], int]:
    """Split packed ids ("D8:6; D9:17"), keep well-formed ids of existing turns; count the rest."""
    kept, dropped = [], 0
    for item in raw:
        for part in str(item).split(";"):
            part = part.strip()
            if not part:
                continue
            if _DIA_ID.match(part) and part in known:
                if part not in kept:
                    kept.append(part)
            else:
                dropped += 1
    return kept, dropped


def recall_at(evidence: Sequence[str], cited: Sequence[Sequence[str]], k: int) -> float:
    found = {c for item in cited[:k] for c in item}
    return sum(1 for e in evidence if e in found) / len(evidence)


def all_at(evidence: Sequence[str], cited: Sequence[Sequence[str]], k: int) -> float:
    return 1.0 if recall_at(evidence, cited, k) == 1.0 else 0.0


def reciprocal_rank(evidence: Sequence[str], cited: Sequence[Sequence[str]]) -> float:
    wanted = set(evidence)
    for rank, item in enumerate(cited, start=1):
        if wanted.intersection(item):
            return 1.0 / rank
    return 0.0


@dataclass
class ModeScores:
    ks: tuple[int, ...]
    rows: list[tuple[str, dict]] = field(default_factory=list)  # (category, metrics)
    tokens: list[int] = field(default_factory=list)

    def add(self, category: str, evidence: list[str], cited: list[list[str]], tokens: int) -> None:
        metrics = {f"recall@{k}": recall_at(evidence, cited, k) for k in self.ks}
        metrics["all@10"] = all_at(evidence, cited, 10)
        metrics["mrr"] = reciprocal_rank(evidence, cited)
        self.rows.append((category, metrics))
        self.tokens.append(tokens)

    @staticmethod
    def _mean(rows: list[dict]) -> dict:
        if not rows:
            return {}
        return {key: round(statistics.fmean(r[key] for r in rows), 4) for key in rows[0]}

    def summary(self) -> dict:
        out = {"overall": self._mean([m for _, m in self.rows]),
               "by_category": {c: self._mean([m for cat, m in self.rows if cat == c]) for c in CATEGORIES}}
        out["overall"]["tokens_returned"] = round(statistics.fmean(self.tokens), 1) if self.tokens else 0
        return out


def percentile(values: Sequence[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return round(ordered[index], 2)


def evaluate(conversations: Sequence[Conversation], *, agent_for: Callable, retrieve: Callable, ks: Sequence[int],
             progress: Callable[[str], None] = lambda s: None, details: list | None = None) -> dict:
    """`agent_for(conv)` returns the agent holding that conversation (already imported);
    `retrieve(agent, question, now, preset, limit)` returns a RetrieveResult. With `details`, one
    row per question (the pipeline's recall@10 and the ids it cited) is appended to that list, to
    compare two versions question by question."""
    ks = tuple(sorted(set(ks)))
    depth = max(max(ks), 10)
    scores = {mode: ModeScores(ks) for mode in MODES}
    latencies, questions, dropped = [], 0, 0
    for conv in conversations:
        agent = agent_for(conv)
        known = {t.dia_id for t in conv.turns}
        now = max(t.occurred_at for t in conv.turns) + timedelta(days=1)
        for qa in conv.qa:
            category = str(qa.get("category"))
            if category not in CATEGORIES:
                continue
            evidence, bad = clean_evidence(qa.get("evidence", []), known)
            dropped += bad
            if not evidence:
                continue
            questions += 1
            for mode, preset in MODES.items():
                started = time.perf_counter()
                result = retrieve(agent, str(qa["question"]), now, preset, depth)
                cited = result.cited_external_ids(depth)
                if mode == "pipeline":
                    latencies.append((time.perf_counter() - started) * 1000)
                    if details is not None:
                        details.append({"conversation": conv.sample_id, "category": category,
                                        "question": str(qa["question"]), "evidence": list(evidence),
                                        "recall@10": recall_at(evidence, cited, 10), "cited": cited})
                scores[mode].add(category, evidence, cited, result.context_tokens)
        progress(f"{conv.sample_id}: {questions} questions so far")
    report = {mode: s.summary() for mode, s in scores.items()}
    report["latency_ms"] = {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)}
    report["questions"] = questions
    report["dropped_evidence_ids"] = dropped
    return report
