"""Detection benchmark: the synchronous ingestion check and the narrative detective.

    .venv/bin/python bench/detection.py [--facts 200] [--sizes 10000,100000]

1. Ingestion check (issue 4): for new facts committed with ``on_conflict=warn``,
   the offline tiers run on the request path — embed, find candidates on the
   HNSW index, classify. Timed per fact against a workspace of 100k memories,
   with and without the embedding. Target: p95 < 50 ms.
2. Detective runs (issue 5): one offline run of the narrative detective over
   workspaces of 10k and 100k facts (forgetting-curve sample, capped), inside
   a transaction that is rolled back. Target: < 10 s at 10k, flat to 100k.
3. The cross-encoder's own cost: reading 1, 3 and 10 pairs (one onnxruntime run a pair)
   of short facts on one thread — what second readings add to a check.

The workspaces are the recall benchmark's (``bench-recall-10k``/``-100k``):
realistic synthetic facts with real embeddings, seeded by ``bench/recall.py``'s
code if missing (a first run embeds 100k texts: several minutes).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from django.db import transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.common import load_average, migrate_database, p50_p95  # noqa: E402
from bench.recall import embed_cached, generate_corpus, seed, size_label  # noqa: E402
from conflicts.detection.cross_encoder import CrossEncoder  # noqa: E402
from conflicts.detection.pipeline import SLOT_READS_ON_REQUEST, detect  # noqa: E402
from conflicts.ingestion import _draft  # noqa: E402
from conflicts.models import DetectiveRun  # noqa: E402
from conflicts.narrative import detective_run  # noqa: E402
from memories.audit import Actor  # noqa: E402
from memories.embeddings import get_embedder  # noqa: E402
from memories.services import MemoryInput  # noqa: E402
from workspaces.models import Workspace  # noqa: E402
from workspaces.services import workspace_get_or_create  # noqa: E402


class _Rollback(Exception):
    pass


def workspace_of(size: int, corpus_size: int) -> Workspace:
    corpus = generate_corpus(corpus_size)
    vectors = embed_cached("recall_corpus", [f.text for f in corpus])
    slug = f"bench-recall-{size_label(size).lower()}"
    workspace, _ = workspace_get_or_create(slug=slug, name=f"Recall benchmark ({size:,} memories)")
    seed(workspace, corpus[:size], vectors[:size])
    return workspace


def ingestion_check(workspace: Workspace, count: int, corpus_size: int) -> dict[str, Any]:
    """Time the on_conflict check for ``count`` facts the workspace has not seen."""
    fresh = generate_corpus(corpus_size + count)[corpus_size:]
    embedder = get_embedder()
    actor = Actor.system("bench")
    # Warm up the model, the classifier weights and the connection.
    for fact in fresh[:5]:
        vector = embedder.embed([fact.text])[0]
        detect(
            _draft(workspace, actor, MemoryInput(text=fact.text), vector, embedder.name),
            use_llm=False,
            slot_reads=SLOT_READS_ON_REQUEST,
        )
    total, without_embedding, findings = [], [], 0
    for fact in fresh:
        data = MemoryInput(text=fact.text, kind=fact.kind, key=fact.key, scope=fact.scope, tags=list(fact.tags))
        started = time.perf_counter()
        vector = embedder.embed([fact.text])[0]
        embedded = time.perf_counter()
        # As the request path reads (conflicts/ingestion.py): no dated pair read for one subject.
        found = detect(
            _draft(workspace, actor, data, vector, embedder.name), use_llm=False, slot_reads=SLOT_READS_ON_REQUEST
        )
        done = time.perf_counter()
        total.append((done - started) * 1000)
        without_embedding.append((done - embedded) * 1000)
        findings += len(found)
    return {"facts": count, "total": total, "without_embedding": without_embedding, "findings": findings}


def cross_encoder_passes() -> dict[int, list[float]]:
    """Milliseconds for one single-threaded pass over 1, 3 and 10 pairs of short facts (30 runs each)."""
    reader = CrossEncoder(threads=1)
    facts = [
        "The API rate limit is 1,000 requests per second per key.",
        "We deploy the billing service every Tuesday after the standup.",
        "Maria moved to Lisbon in March and works remotely for Acme.",
        "Nightly backups are kept for 30 days in the eu-west bucket.",
    ]
    out: dict[int, list[float]] = {}
    for n in (1, 3, 10):
        pairs = [(facts[i % 4], facts[(i + 1) % 4]) for i in range(n)]
        reader.probabilities(pairs)
        times = []
        for _ in range(30):
            started = time.perf_counter()
            reader.probabilities(pairs)
            times.append((time.perf_counter() - started) * 1000)
        out[n] = times
    return out


def detective(workspace: Workspace) -> DetectiveRun:
    """One offline run, rolled back afterwards so the workspace stays as it was."""
    result: DetectiveRun | None = None
    try:
        with transaction.atomic():
            run = DetectiveRun.objects.create(workspace=workspace, trigger="manual")
            result = detective_run(run_id=run.pk, mode="offline")
            raise _Rollback
    except _Rollback:
        pass
    assert result is not None
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--facts", type=int, default=200, help="new facts for the ingestion check")
    parser.add_argument("--sizes", default="10000,100000", help="workspace sizes for detective runs")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    corpus_size = max(sizes)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; {timezone.now():%Y-%m-%d}")
    migrate_database()
    workspaces = {size: workspace_of(size, corpus_size) for size in sizes}
    print(f"\n== ingestion check against {corpus_size:,} memories (load {load_average()})", flush=True)
    check = ingestion_check(workspaces[corpus_size], args.facts, corpus_size)

    print(f"== cross-encoder passes (load {load_average()})", flush=True)
    passes = cross_encoder_passes()

    runs = {}
    for size, workspace in workspaces.items():
        print(f"== detective run over {size:,} facts (load {load_average()})", flush=True)
        runs[size] = detective(workspace)

    print("\n| measure | value |\n|---|---|")
    print(f"| ingestion check, p50 / p95, with embedding ({corpus_size:,} memories) | {p50_p95(check['total'])} |")
    print(f"| ingestion check, p50 / p95, embedding excluded | {p50_p95(check['without_embedding'])} |")
    print(f"| clashes reported for {check['facts']} new facts | {check['findings']} |")
    for n, times in passes.items():
        pairs = f"{n} pair{'s' if n > 1 else ''}"
        print(f"| cross-encoder pass, {pairs} of short facts, one thread, p50 / p95 | {p50_p95(times)} |")
    for size, run in runs.items():
        print(
            f"| detective run over {size:,} facts | {run.seconds:.2f} s, read {run.facts_read:,} of "
            f"{run.facts_total:,}, {run.flags_raised} flags, state {run.state} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
