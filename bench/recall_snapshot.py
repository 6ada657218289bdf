"""What recall returns, frozen: a guard for changes meant to make recall faster, not to rank differently.

    .venv/bin/python bench/recall_snapshot.py save var/recall-snapshot.json
    .venv/bin/python bench/recall_snapshot.py compare var/recall-snapshot.json
    .venv/bin/python bench/recall_snapshot.py save FILE --var-dir DIR   # a database bench/retrieval.py --keep left

``save`` asks ``recall()`` (``touch=False``, so the database does not change)
every question of the sets present in the database and writes each answer's
ordered ids and scores; ``compare`` asks again and fails when an id list or its
order differs, or a score moved by more than ``--tolerance``. The query vectors
are embedded once and cached under ``var/cache`` like the benchmarks' own.

Sets, where their workspaces exist:

- ``bench/recall.py``'s workspaces (``bench-recall-10k``, ``-100k``): its 200
  questions, 200 more, and 100 of them asking about a month, for the newest
  ("latest"), and "when was" (the period, latest and history paths); default
  hybrid, semantic, Postgres' lexical rank, no diversity, k = 25; and its
  quality workspaces (update pairs, identifier look-ups);
- ``bench/retrieval.py``'s conversations (``--var-dir``): the tuning part's
  questions over turns and observations; default hybrid, semantic,
  superseded facts included, ``as_of`` now, expansion along links.

Take both snapshots with no ANALYZE of ``memories_memory`` between them:
recall reads the common words from ANALYZE's statistics, which sample rows at
random, so a fresh ANALYZE can change the lexical candidates of any question.
``bench/recall.py`` runs one, and autovacuum runs one after enough touched
rows (its recalls touch ten each). The sure way: save with the old code (a
``git worktree`` of it, ``MEMORYHUB_VAR_DIR`` pointing at this database), then
compare with the new one right after.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# name → RecallQuery options
Variants = dict[str, dict[str, Any]]
BENCH_VARIANTS: Variants = {
    "hybrid": {},
    "semantic": {"mode": "semantic"},
    "postgres": {"lexical_backend": "postgres"},
    "no diversity": {"diversity": False},
    "k=25": {"k": 25},
}
# A question set: (workspace slug, question texts, variants)
QuestionSet = tuple[str, list[str], Variants]


def bench_sets() -> Iterator[QuestionSet]:
    from bench import recall as bench

    questions = [q.text for q in bench.generate_questions(200)]
    questions += [q.text for q in bench.generate_questions(200, seed=bench.QUESTION_SEED + 3)]
    timed = questions[:100]
    questions += [f"{q.rstrip('?')} in March 2026?" for q in timed[:40]]
    questions += [f"{q.rstrip('?')}, the latest?" for q in timed[40:70]]
    questions += [f"When was it said: {q}" for q in timed[70:100]]
    for slug in ("bench-recall-10k", "bench-recall-100k"):
        yield slug, questions, BENCH_VARIANTS
    _, pairs = bench.load_update_pairs(bench.pairs_path(None))
    yield bench.UPDATES_SLUG, [p.question for p in pairs], {"hybrid": {}, "semantic": {"mode": "semantic"}}
    _, lookups = bench.generate_identifier_facts(300)  # bench/recall.py's --identifiers default
    lookups = lookups[::5]
    family_question = {f.name: f.question for f in bench.FAMILIES}
    texts = [x.identifier for x in lookups] + [family_question[x.family].format(id=x.identifier) for x in lookups]
    yield bench.IDENTIFIERS_SLUG, texts, {"hybrid": {}, "postgres": {"lexical_backend": "postgres"}}


def retrieval_sets() -> Iterator[QuestionSet]:
    from bench import retrieval
    from recall.hybrid import Expand

    variants: Variants = {
        "hybrid": {},
        "semantic": {"mode": "semantic"},
        "include superseded": {"include_superseded": True},
        "as_of now": {"as_of": dt.datetime.now(dt.UTC)},
        "expand": {"expand": Expand(rels=("refines", "example_of", "related", "derived_from"))},
    }
    for conversation in retrieval.load(retrieval.DEFAULT_DATA):
        if conversation["split"] != "tune":
            continue
        questions = [q["question"] for q in conversation["questions"]]
        for form in retrieval.FORMS:
            yield retrieval.workspace_slug(form, conversation), questions, variants


def answers(sets: Iterator[QuestionSet]) -> dict[str, list[list[tuple[str, float]]]]:
    """Per set, workspace and variant: each question's hits as (id, score), best first."""
    from bench.recall import embed_cached
    from recall.hybrid import RecallQuery, recall
    from workspaces.models import Workspace

    out: dict[str, list[list[tuple[str, float]]]] = {}
    for slug, questions, variants in sets:
        workspace = Workspace.objects.filter(slug=slug).first()
        if workspace is None:
            print(f"  {slug}: not in this database, skipped", flush=True)
            continue
        vectors = embed_cached(f"recall_snapshot_{slug}", questions)
        started = time.perf_counter()
        for name, options in variants.items():
            found = []
            for text, vector in zip(questions, vectors, strict=True):
                query = RecallQuery(query=text, touch=False, **options)
                hits = recall(workspace=workspace, query=query, query_vector=vector)
                found.append([(f"{h.memory.pk}{'+' if h.expanded else ''}", h.score) for h in hits])
            out[f"{slug} · {name}"] = found
        print(f"  {slug}: {len(questions)} questions × {len(variants)} in {time.perf_counter() - started:.0f} s")
    return out


def compare(saved: dict[str, Any], now: dict[str, list[list[tuple[str, float]]]], tolerance: float) -> int:
    """Print the differences; the number of answers whose ids or order differ (scores beyond tolerance count too)."""
    differing = 0
    worst = 0.0
    per_set: Counter[str] = Counter()
    for name, before in saved.items():
        after = now.get(name)
        if after is None:
            print(f"MISSING {name}")
            differing += len(before)
            continue
        for i, (old, new) in enumerate(zip(before, after, strict=True)):
            ids_old, ids_new = [pk for pk, _ in old], [pk for pk, _ in new]
            drift = max((abs(a[1] - b[1]) for a, b in zip(old, new, strict=False)), default=0.0)
            worst = max(worst, drift)
            if ids_old != ids_new or drift > tolerance:
                differing += 1
                per_set[name] += 1
                if differing <= 20:
                    print(f"DIFFERS {name} #{i}: ids equal {ids_old == ids_new}, largest score change {drift:.2e}")
    for name, count in sorted(per_set.items()):
        print(f"  {count:4d} of {len(saved[name]):4d} differ in {name}")
    answers_compared = sum(len(v) for v in saved.values())
    print(f"{answers_compared:,} answers compared; {differing} differ; largest score change {worst:.2e}")
    return differing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["save", "compare"])
    parser.add_argument("file", type=Path)
    parser.add_argument("--var-dir", type=Path, help="a bench/retrieval.py --keep database (the conversation sets)")
    parser.add_argument("--tolerance", type=float, default=1e-6, help="largest score change allowed")
    args = parser.parse_args()
    if args.var_dir:
        os.environ["MEMORYHUB_VAR_DIR"] = str(args.var_dir.resolve())
        os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    import django

    django.setup()
    now = answers(retrieval_sets() if args.var_dir else bench_sets())
    if args.action == "save":
        args.file.parent.mkdir(parents=True, exist_ok=True)
        args.file.write_text(json.dumps({"saved": f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC", "answers": now}))
        print(f"→ {args.file}: {sum(len(v) for v in now.values()):,} answers")
        return 0
    return 1 if compare(json.loads(args.file.read_text())["answers"], now, args.tolerance) else 0


if __name__ == "__main__":
    sys.exit(main())
