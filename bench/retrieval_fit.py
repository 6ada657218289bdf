"""Learn recall's default weights on the tuning conversations of bench/retrieval.py (issue 22).

    .venv/bin/python bench/retrieval_fit.py --reuse VAR_DIR [--data bench/data/conversations.json]

``VAR_DIR`` is a database a ``bench/retrieval.py --keep`` run left (both forms
ingested, embedded and checked). For every question of the *tuning* split only,
recall's scored candidate pool (:func:`recall.hybrid.ranked_pool`) is taken once
with the current defaults; each grid point then re-scores the pool from its
parts —

    (α·cosine + β·lexical + δ·importance + ε·confidence) × reliability factor
    + γ·recency within the subject × reliability factor

— and counts how often an evidence turn is in the top 10 (the hit rule of
bench/retrieval.py), averaged over the two forms. Reciprocal-rank fusion of the
cosine and lexical rankings (k = 60) is scored beside it. The top-10 here skips
the newer-first and diversity steps, which only reorder near-duplicates. Prints
the grid's best points; the chosen weights are written into ``recall.hybrid.Weights``
by hand, with the figures, so the runtime holds no fitting code.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.retrieval import DEFAULT_DATA, FORMS, K, django_on, load, workspace_slug  # noqa: E402

LEXICAL = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0]
RECENCY = [0.0, 0.05, 0.1, 0.15, 0.25]
CONFIDENCE = [0.0, 0.05, 0.1, 0.2]
COSINE = 0.5
IMPORTANCE = 0.05
RRF_K = 60


def pools(conversations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per tuning question and form: the parts of every candidate and which are evidence."""
    from memories.embeddings import embed_texts
    from memories.models import Memory
    from recall.hybrid import RecallQuery, ranked_pool
    from workspaces.models import Workspace

    tuning = [c for c in conversations if c["split"] == "tune"]
    questions = [q for c in tuning for q in c["questions"]]
    vectors = dict(zip((q["id"] for q in questions), embed_texts([q["question"] for q in questions]), strict=True))
    out = []
    for conversation in tuning:
        for form in FORMS:
            workspace = Workspace.objects.get(slug=workspace_slug(form, conversation))
            turn_of = {
                str(pk): meta.get("turn")
                for pk, meta in Memory.objects.filter(workspace=workspace).values_list("pk", "metadata")
            }
            for question in conversation["questions"]:
                hits = ranked_pool(
                    workspace=workspace,
                    query=RecallQuery(query=question["question"], k=K, touch=False),
                    query_vector=vectors[question["id"]],
                )
                parts = np.array(
                    [
                        [h.parts.cosine, h.parts.lexical, h.parts.importance, h.parts.confidence,
                         h.parts.reliability_factor, h.parts.subject_recency]
                        for h in hits
                    ],
                    dtype=np.float64,
                ).reshape(-1, 6)  # fmt: skip
                evidence = [turn_of.get(str(h.memory.pk)) for h in hits]
                out.append(
                    {
                        "form": form,
                        "kind": question["kind"],
                        "parts": parts,
                        "evidence": evidence,
                        "wanted": question["evidence"],
                    }
                )
    return out


def hit(order: np.ndarray, item: dict[str, Any]) -> float:
    found = {item["evidence"][i] for i in order[:K]}
    present = [turn in found for turn in item["wanted"]]
    return float(all(present) if item["kind"] == "multi_hop" else any(present))


def linear_order(item: dict[str, Any], lexical: float, recency: float, confidence: float) -> np.ndarray:
    p = item["parts"]
    score = (COSINE * p[:, 0] + lexical * p[:, 1] + IMPORTANCE * p[:, 2] + confidence * p[:, 3]) * p[:, 4]
    score = score + recency * p[:, 5] * p[:, 4]
    return np.argsort(-score, kind="stable")


def rrf_order(item: dict[str, Any]) -> np.ndarray:
    p = item["parts"]
    rank_cosine = np.argsort(np.argsort(-p[:, 0], kind="stable"), kind="stable")
    rank_lexical = np.argsort(np.argsort(-p[:, 1], kind="stable"), kind="stable")
    score = (1 / (RRF_K + rank_cosine) + np.where(p[:, 1] > 0, 1 / (RRF_K + rank_lexical), 0)) * p[:, 4]
    return np.argsort(-score, kind="stable")


def mean_by_form(items: list[dict[str, Any]], order_of: Any) -> tuple[float, dict[str, float]]:
    by_form: dict[str, list[float]] = defaultdict(list)
    for item in items:
        if len(item["parts"]):
            by_form[item["form"]].append(hit(order_of(item), item))
        else:
            by_form[item["form"]].append(0.0)
    means = {form: float(np.mean(values)) for form, values in by_form.items()}
    return float(np.mean(list(means.values()))), means


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reuse", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    django_on(args.reuse)
    items = pools(load(args.data))
    print(f"{len(items)} (question, form) pools from the tuning split")
    results = []
    for lexical, recency, confidence in itertools.product(LEXICAL, RECENCY, CONFIDENCE):
        mean, means = mean_by_form(items, lambda item, a=lexical, b=recency, c=confidence: linear_order(item, a, b, c))
        results.append((mean, lexical, recency, confidence, means))
    results.sort(key=lambda r: -r[0])
    print("best linear weights (cosine 0.5, importance 0.05) by tuning hit@10, mean of the two forms:")
    for mean, lexical, recency, confidence, means in results[:10]:
        forms = ", ".join(f"{f} {v:.3f}" for f, v in sorted(means.items()))
        print(f"  lexical {lexical:.2f} recency {recency:.2f} confidence {confidence:.2f}: {mean:.3f} ({forms})")
    seed_like = next(r for r in results if (r[1], r[2], r[3]) == (0.2, 0.15, 0.1))
    print(f"  (the old defaults lexical 0.20 recency 0.15 confidence 0.10: {seed_like[0]:.3f})")
    mean, means = mean_by_form(items, rrf_order)
    print(f"reciprocal-rank fusion (k={RRF_K}) of cosine and lexical: {mean:.3f} ({means})")


if __name__ == "__main__":
    main()
