"""The detective's "thing that ended, used again" rule on an adversarial timeline.

    .venv/bin/python bench/ended_rule.py [--facts 800] [--ending-share 0.25] [--runs 3]

The detective reads at most ``MEMORYHUB_DETECTIVE_MAX_FACTS`` (800) facts a run. Here every fact is about one
of fifteen things, a quarter of them say the thing ended ("The dishwasher was removed …") and a third use it
("Check the dishwasher …"): far more candidates than a workspace holds, so the rule's worst case shows. The
facts are embedded once (MiniLM); only the rule (``detective_offline._ended_still_used``) is timed, on the
cosine matrix the detective already holds. docs/DETECTION.md ("A thing that ended, used again") has results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from bench.common import load_average  # noqa: E402
from conflicts.detection import detective_offline  # noqa: E402
from conflicts.forgetting import StoryFact  # noqa: E402

THINGS = [
    "gas boiler",
    "dishwasher",
    "Redux store",
    "VPN",
    "printer",
    "CDN",
    "backup job",
    "cron task",
    "staging cluster",
    "Jenkins server",
    "coffee machine",
    "gym membership",
    "newsletter",
    "feature flag",
    "cache layer",
]
ENDINGS = ["was removed", "was retired", "stopped", "was cancelled", "no longer needed", "was deleted"]
START = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


def timeline(count: int, ending_share: float) -> list[StoryFact]:
    rng = random.Random(1)
    facts = []
    for index in range(count):
        thing, draw = rng.choice(THINGS), rng.random()
        if draw < ending_share:
            text = f"The {thing} {rng.choice(ENDINGS)} after the review {index}."
        elif draw < ending_share + 0.35:
            text = f"Check the {thing} before the release {index}."
        else:
            text = f"The {thing} runs every night at {index % 24}:00."
        facts.append(
            StoryFact(
                id=str(index), text=text, scope="ops", agent=f"agent-{index % 5}", at=START + dt.timedelta(days=index)
            )
        )
    return facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=800)
    parser.add_argument("--ending-share", type=float, default=0.25)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    facts = timeline(args.facts, args.ending_share)
    vectors = detective_offline._vectors(facts)  # the detective's own embedding step
    similarity = vectors @ vectors.T
    print(f"{args.facts} facts, {args.ending_share:.0%} saying a thing ended; load {load_average()}")
    for run in range(1, args.runs + 1):
        flags: list[object] = []
        started = time.monotonic()
        detective_offline._ended_still_used(facts, similarity, lambda *flag, into=flags: into.append(flag))
        took = time.monotonic() - started
        print(f"run {run}: {took:.2f} s, {len(flags)} raw flags (before a run's de-duplication)")


if __name__ == "__main__":
    main()
