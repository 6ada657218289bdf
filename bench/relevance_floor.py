"""How similar nonsense and real questions are to the demo's facts: where the memory browser's relevance floor goes.

    .venv/bin/python bench/relevance_floor.py [--floor 0.30]

Reads the demo workspace that ``make run`` creates (``demo``; created here the
same way when missing), then runs each query through hybrid recall as
the memory browser does (40 hits, superseded facts included) and prints, per
query, the best cosine similarity, the best cosine among facts sharing no word
with it, how many hits share a word, and how many hits clear ``--floor``
(``recall/relevance.py``). Nonsense should keep none; each real question should
keep its answers. docs/RECALL.md holds the results and the chosen floor.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django  # noqa: E402

django.setup()

from bench.common import load_average, migrate_database  # noqa: E402
from memoryhub.demo import DEMO_SLUG, demo_setup  # noqa: E402
from recall.hybrid import RecallQuery, recall  # noqa: E402
from recall.relevance import COSINE_FLOOR, relevant_hits  # noqa: E402
from workspaces.models import Workspace  # noqa: E402

NONSENSE = [
    "zzqxv flibbertigibbet",
    "asdf qwer",
    "blorptastic wug",
    "xylophone marmalade",
    "quantum banana",
    "purple elephant dances",
    "glorp snarfle vex",
    "the of and zzqxv",
    "lorem ipsum dolor sit amet",
    "kumquat trampoline",
]
REAL = [
    "Jenkins",
    "pricing",
    "what does Maya eat",
    "deploys",
    "free trial",
    "rate limit",
    "who is on call",
    "standup time",
    "Redis cache",
    "enterprise seats",
    "postgres version",
    "release day",
    "vegetarian",
    "support hours",
    "Maya's knee",
    "which customers are on Enterprise",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--floor", type=float, default=COSINE_FLOOR)
    args = parser.parse_args()
    migrate_database()
    demo_setup()  # no-op when make run already made it
    workspace = Workspace.objects.get(slug=DEMO_SLUG)
    print(
        f"workspace {workspace.slug}: {workspace.memories.count()} facts; floor {args.floor:.2f}; load {load_average()}"
    )
    print(f"{'query':36} {'kind':9} {'best cos':>8} {'best cos, no word':>17} {'word hits':>9} {'kept':>5}")
    worst_real, best_nonsense = 1.0, 0.0
    for kind, queries in (("nonsense", NONSENSE), ("real", REAL)):
        for text in queries:
            hits = recall(
                workspace=workspace,
                query=RecallQuery(query=text, k=40, include_superseded=True, min_confidence=0.0, touch=False),
            )
            best = max((h.parts.cosine for h in hits), default=0.0)
            no_word = max((h.parts.cosine for h in hits if h.parts.lexical == 0), default=0.0)
            words = sum(1 for h in hits if h.parts.lexical > 0)
            kept = len(relevant_hits(hits, floor=args.floor))
            if kind == "nonsense":
                best_nonsense = max(best_nonsense, best)
            else:
                worst_real = min(worst_real, best)
            print(f"{text[:36]:36} {kind:9} {best:8.3f} {no_word:17.3f} {words:9d} {kept:5d}")
    print(f"highest cosine of any nonsense query: {best_nonsense:.3f}")
    print(f"lowest best cosine of a real question: {worst_real:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
