"""Evaluating the whole pipeline on fact histories (``shared/eval`` story format).

Each story is replayed into a throw-away workspace inside a transaction that
is rolled back afterwards: facts are committed in time order, embedded, and
checked pairwise as at ingestion; then the narrative detective reads the
whole story (every fact in view: stories are small). The cards raised are the
system's flags. Current truth is what recall returns first for each subject.

Every supersede and merge made during a replay is automatic (nobody else acts
on the throw-away workspace); each is judged against the story's labels: one
that retired a fact the story names as current, or joined facts of different
subjects (the ``about`` lists of ``current``), is a wrong automatic decision.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Q

from conflicts.detection import detective_llm, detective_offline
from conflicts.detection.pipeline import detect_and_resolve
from conflicts.forgetting import StoryFact
from conflicts.models import CardState, ConflictCard, ResolutionStrategy, Uncertainty
from conflicts.narrative import flag_to_card
from conflicts.story import Flag, batches
from memories.audit import Actor
from memories.models import Link, Memory, Rel
from memories.services import MemoryInput, memories_embed_pending, memory_create
from memoryhub.errors import InvalidInput
from recall.hybrid import Hit, RecallQuery, recall
from workspaces.models import Workspace

FLAG_KINDS = ("reversal", "ambiguity", "stale", "contradiction")
# Hits recall returns per current-truth subject: the first is judged, the rest explain a miss.
EXPLAINED_HITS = 5


class _Rollback(Exception):
    pass


@dataclass(frozen=True)
class Decision:
    """One automatic supersede or merge, by story fact ids, and what the labels say of it."""

    action: str  # "supersede" (``retired`` replaced by ``kept``) or "merge" (``retired`` merged into ``kept``)
    retired: str
    kept: str
    retired_current: bool  # the story names ``retired`` as the current fact of a subject
    across_subjects: bool  # both facts are labelled, with no subject in common
    labelled: bool  # both facts belong to a labelled subject: the subject check could be made
    # Both facts are in one expected ambiguity or contradiction: the story wants a person asked, and the
    # hub settled it silently. Reported on its own; not part of ``wrong`` (issue 21's definition).
    settled_dispute: bool = False
    path: str = ""  # the reading that made it (``Verdict.rule`` via the record), "merge", or "other"

    @property
    def wrong(self) -> bool:
        return self.retired_current or self.across_subjects

    def describe(self) -> str:
        why = [
            w
            for w, bad in (("retired a current fact", self.retired_current), ("across subjects", self.across_subjects))
            if bad
        ]
        verb = "superseded by" if self.action == "supersede" else "merged into"
        verdict = "WRONG: " + ", ".join(why) if why else ("ok" if self.labelled else "ok (not labelled)")
        if self.settled_dispute:
            verdict += "; settled a dispute the story wants asked"
        return f"{self.retired} {verb} {self.kept}: {verdict}"


@dataclass(frozen=True)
class RuledFlag:
    rule: str  # the detective's rule (its evidence's "rule"), else the card's detector
    right: bool  # of an expected flag's kind, sharing two or more of its facts
    on_trap: bool

    @property
    def judged(self) -> str:
        """How the story judges the flag, in words: "right", "on a trap", both, or "not expected"."""
        words = [word for word, said in (("right", self.right), ("on a trap", self.on_trap)) if said]
        return ", ".join(words) or "not expected"


@dataclass
class StoryOutcome:
    story_id: str
    raised: list[tuple[str, set[str]]]  # (kind, fact ids)
    expected: list[tuple[str, set[str]]]
    matched: int
    traps: int
    traps_flagged: int
    # Current-truth subjects by status ("clear" / "unclear"): (judged, right).
    current_by_status: dict[str, tuple[int, int]]
    misses: list[str] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    # Parallel to ``raised``: the rule that raised each flag, whether it matches an expected flag, whether it
    # joins the facts of a trap.
    by_rule: list[RuledFlag] = field(default_factory=list)

    @property
    def current_total(self) -> int:
        return sum(judged for judged, _ in self.current_by_status.values())

    @property
    def current_correct(self) -> int:
        return sum(right for _, right in self.current_by_status.values())


@dataclass
class StoryReport:
    mode: str
    outcomes: list[StoryOutcome]
    seconds: float

    def current_by_status(self) -> dict[str, tuple[int, int]]:
        """``{"clear": (judged, right), "unclear": (…)}`` over all stories."""
        totals: dict[str, tuple[int, int]] = {}
        for outcome in self.outcomes:
            for status, (judged, right) in outcome.current_by_status.items():
                before = totals.get(status, (0, 0))
                totals[status] = (before[0] + judged, before[1] + right)
        return totals

    def automatic(self) -> dict[str, int]:
        """Automatic supersedes and merges over all stories, and how many of them were wrong."""
        decisions = [d for o in self.outcomes for d in o.decisions]
        supersedes = [d for d in decisions if d.action == "supersede"]
        merges = [d for d in decisions if d.action == "merge"]
        return {
            "supersedes": len(supersedes),
            "merges": len(merges),
            "wrong_supersedes": sum(d.wrong for d in supersedes),
            "wrong_merges": sum(d.wrong for d in merges),
            "retired_current": sum(d.retired_current for d in decisions),
            "across_subjects": sum(d.across_subjects for d in decisions),
            "unlabelled": sum(not d.labelled for d in decisions),
            "settled_dispute": sum(d.settled_dispute for d in decisions),
            "stories_with_wrong": sum(any(d.wrong for d in o.decisions) for o in self.outcomes),
        }

    def wrong_by_path(self) -> dict[str, int]:
        """Wrong automatic decisions per reading that made them: where they come from, as counts only (so a
        validation set says which path errs without a story being read)."""
        return self._by_path(wrong_only=True)

    def made_by_path(self) -> dict[str, int]:
        """Every automatic decision per reading that made it, right or wrong: what a path's wrong ones cost
        against what it does (counts only, like :meth:`wrong_by_path`)."""
        return self._by_path(wrong_only=False)

    def _by_path(self, *, wrong_only: bool) -> dict[str, int]:
        paths = [d.path for o in self.outcomes for d in o.decisions if d.wrong or not wrong_only]
        return {path: paths.count(path) for path in sorted(set(paths))}

    def by_rule(self) -> dict[str, dict[str, int]]:
        """Per rule: the flags it raised, how many match an expected flag, how many sit on a trap.

        A flag counts as right here when it matches any expected flag, so two flags on one expected flag are
        both right (precision's one-to-one matching counts one).
        """
        totals: dict[str, dict[str, int]] = {}
        for flag in (f for o in self.outcomes for f in o.by_rule):
            counts = totals.setdefault(flag.rule, {"raised": 0, "right": 0, "on_traps": 0})
            counts["raised"] += 1
            counts["right"] += flag.right
            counts["on_traps"] += flag.on_trap
        return dict(sorted(totals.items()))

    def as_json(self) -> dict[str, Any]:
        expected = sum(len(o.expected) for o in self.outcomes)
        raised = sum(len(o.raised) for o in self.outcomes)
        matched = sum(o.matched for o in self.outcomes)
        precision = matched / raised if raised else 1.0
        recall_ = matched / expected if expected else 1.0
        f1 = 2 * precision * recall_ / (precision + recall_) if precision + recall_ else 0.0
        current_total = sum(o.current_total for o in self.outcomes)
        return {
            "mode": self.mode,
            "stories": len(self.outcomes),
            "flags": {
                "precision": round(precision, 4),
                "recall": round(recall_, 4),
                "f1": round(f1, 4),
                "expected": expected,
                "raised": raised,
                "matched": matched,
            },
            "false_flags_on_traps": sum(o.traps_flagged for o in self.outcomes),
            "traps": sum(o.traps for o in self.outcomes),
            "current_truth_accuracy": round(
                sum(o.current_correct for o in self.outcomes) / current_total if current_total else 1.0, 4
            ),
            "automatic": self.automatic()
            | {"made_by_path": self.made_by_path(), "wrong_by_path": self.wrong_by_path()},
            "by_rule": self.by_rule(),
            "per_story": {
                o.story_id: {
                    "supersedes": sum(d.action == "supersede" for d in o.decisions),
                    "merges": sum(d.action == "merge" for d in o.decisions),
                    "wrong": sum(d.wrong for d in o.decisions),
                    "decisions": [d.describe() for d in o.decisions],
                }
                for o in self.outcomes
            },
        }


def read_stories(path: Path) -> list[dict[str, Any]]:
    stories = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            story = json.loads(line)
            missing = [k for k in ("id", "facts", "expected_flags", "current", "must_not_flag") if k not in story]
            if missing:
                raise KeyError(", ".join(missing))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InvalidInput(f"{path}:{number}: not a story ({exc})") from exc
        stories.append(story)
    return stories


def evaluate(stories: Iterable[dict[str, Any]], *, mode: str) -> StoryReport:
    started = time.monotonic()
    outcomes = [_evaluate_one(story, mode) for story in stories]
    return StoryReport(mode=mode, outcomes=outcomes, seconds=time.monotonic() - started)


def _evaluate_one(story: dict[str, Any], mode: str) -> StoryOutcome:
    outcome: StoryOutcome | None = None
    try:
        with transaction.atomic():
            outcome = _replay(story, mode)
            raise _Rollback
    except _Rollback:
        pass
    assert outcome is not None  # noqa: S101 - set before the rollback
    return outcome


def _replay(story: dict[str, Any], mode: str) -> StoryOutcome:
    workspace = eval_workspace(f"eval {story['id']}")
    by_story_id: dict[str, Memory] = {}
    for fact in sorted(story["facts"], key=lambda f: f["at"]):
        by_story_id[fact["id"]] = ingest(
            workspace, fact["text"], at=parse_at(fact["at"]), scope=fact.get("scope", ""), agent=fact.get("agent", "")
        )
    story_of = {m.pk: sid for sid, m in by_story_id.items()}

    for flag in narrative_flags(workspace, mode):
        flag_to_card(workspace=workspace, flag=flag)

    cards = list(ConflictCard.objects.filter(workspace=workspace).prefetch_related("card_facts"))
    raised = [(card.kind, {story_of[f.memory_id] for f in card.card_facts.all()}) for card in cards]
    expected = [(e["kind"], set(e["fact_ids"])) for e in story["expected_flags"]]
    traps = [set(t["fact_ids"]) for t in story["must_not_flag"]]
    by_status, misses = _current_truth(workspace, story, by_story_id, story_of)
    memories = {m.pk: m for m in by_story_id.values()}
    decisions = [
        replace(
            judge_decision(action, story_of[retired], story_of[kept], story),
            path=decision_path(memories[retired], memories[kept]),
        )
        for action, retired, kept in automatic_decisions(workspace)
    ]
    return StoryOutcome(
        story_id=story["id"],
        raised=raised,
        expected=expected,
        matched=_match(expected, raised),
        traps=len(traps),
        traps_flagged=sum(1 for trap in traps if any(len(trap & ids) >= 2 for _, ids in raised)),
        current_by_status=by_status,
        misses=misses,
        decisions=decisions,
        by_rule=[
            RuledFlag(
                rule=str(card.evidence.get("rule") or card.detector),
                right=any(kind == card.kind and len(ids & expected_ids) >= 2 for kind, expected_ids in expected),
                on_trap=any(len(trap & ids) >= 2 for trap in traps),
            )
            for card, (_, ids) in zip(cards, raised, strict=True)
        ],
    )


def eval_workspace(name: str) -> Workspace:
    return Workspace.objects.create(slug=f"eval-{uuid.uuid4().hex[:12]}", name=name)


def parse_at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def ingest(workspace: Workspace, text: str, *, at: dt.datetime, scope: str = "", agent: str = "") -> Memory:
    """Commit one fact as an agent would, true from ``at``; embed it and check it as the worker does."""
    memory = memory_create(
        workspace=workspace,
        actor=Actor.system("eval"),
        data=MemoryInput(text=text, scope=scope, agent=agent, valid_from=at),
    )
    Memory.objects.filter(pk=memory.pk).update(recorded_at=at)
    memories_embed_pending(first_id=memory.pk, limit=1)
    memory.refresh_from_db()
    detect_and_resolve(memory)
    return memory


def automatic_decisions(workspace: Workspace) -> list[tuple[str, uuid.UUID, uuid.UUID]]:
    """``(action, retired id, kept id)`` for every supersede and merge in ``workspace``.

    Read from the facts themselves, not from event verbs, so a new kind of
    automatic decision is counted as well.
    """
    supersedes = Memory.objects.filter(workspace=workspace, superseded_by__isnull=False).values_list(
        "pk", "superseded_by_id"
    )
    merges = Link.objects.filter(workspace=workspace, rel=Rel.MERGED_INTO).values_list("src_id", "dst_id")
    return [("supersede", old, new) for old, new in supersedes] + [("merge", src, dst) for src, dst in merges]


def decision_path(a: Memory, b: Memory) -> str:
    """The reading that retired one of ``a``, ``b``: from the record its supersede resolved; a merge keeps none.

    The record keeps it (``Uncertainty.rule``, from ``Verdict.rule``); a count per path says where wrong
    retirements come from without reading a frozen pair or story.
    """
    record = (
        Uncertainty.objects.filter(
            Q(memory_a=a, memory_b=b) | Q(memory_a=b, memory_b=a),
            resolution_strategy=ResolutionStrategy.TEMPORAL_SUPERSEDE,
        )
        .order_by("-created_at")
        .first()
    )
    if record is None:
        return "merge" if Link.objects.filter(rel=Rel.MERGED_INTO, src__in=[a, b]).exists() else "other"
    return record.rule or record.detector or "other"


def judge_decision(action: str, retired: str, kept: str, story: dict[str, Any]) -> Decision:
    subjects: dict[str, set[str]] = {}
    for item in story["current"]:
        for fact_id in item.get("about", [item["fact_id"]]):
            subjects.setdefault(fact_id, set()).add(item["subject"])
    current = {item["fact_id"] for item in story["current"]}
    labelled = retired in subjects and kept in subjects
    return Decision(
        action=action,
        retired=retired,
        kept=kept,
        retired_current=retired in current,
        across_subjects=labelled and not subjects[retired] & subjects[kept],
        labelled=labelled,
        settled_dispute=any(
            flag["kind"] in ("ambiguity", "contradiction") and {retired, kept} <= set(flag["fact_ids"])
            for flag in story.get("expected_flags", [])
        ),
    )


def narrative_flags(workspace: Workspace, mode: str) -> list[Any]:
    facts = [
        StoryFact.of(m)
        for m in Memory.objects.filter(workspace=workspace, status__in=["active", "pending_embed"]).order_by(
            "valid_from"
        )
    ]
    if mode == "llm":
        result = detective_llm.detect(batches(facts))
        return [Flag(f.kind, [x.id for x in f.facts], f.question, "narrative:llm") for f in result.flags]
    return detective_offline.detect(facts)


def _match(expected: list[tuple[str, set[str]]], raised: list[tuple[str, set[str]]]) -> int:
    """One-to-one: a raised flag matches an expected one of its kind sharing 2+ facts."""
    used: set[int] = set()
    matched = 0
    for kind, ids in expected:
        for index, (raised_kind, raised_ids) in enumerate(raised):
            if index not in used and raised_kind == kind and len(ids & raised_ids) >= 2:
                used.add(index)
                matched += 1
                break
    return matched


def _current_truth(
    workspace: Workspace, story: dict[str, Any], by_story_id: dict[str, Memory], story_of: dict[uuid.UUID, str]
) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """Per status, how many subjects were judged and how many came out right; and why each miss."""
    misses = []
    by_status: dict[str, tuple[int, int]] = {}
    for item in story["current"]:
        target = by_story_id[item["fact_id"]]
        if item["status"] == "clear":
            # The first hit decides; the next ones only explain a miss (k does not change the first).
            hits = recall(workspace=workspace, query=RecallQuery(query=item["subject"], k=EXPLAINED_HITS, touch=False))
            ok = bool(hits) and hits[0].memory.pk == target.pk
            got = _explained(hits, target, story_of) if hits else "nothing"
        else:
            ok = ConflictCard.objects.filter(
                workspace=workspace, state=CardState.OPEN, card_facts__memory=target
            ).exists()
            got = "no open card"
        judged, right = by_status.get(item["status"], (0, 0))
        by_status[item["status"]] = (judged + 1, right + ok)
        if not ok:
            misses.append(
                f"{story['id']} {item['subject']!r}: expected {item['fact_id']} ({item['status']}), got {got}"
            )
    return by_status, misses


def _explained(hits: list[Hit], target: Memory, story_of: dict[uuid.UUID, str]) -> str:
    """``f6 (0.44 = cos 0.25, lex 1.00, recency 0.00); f7 ranked 3 (0.27 = …)``: why recall chose."""

    def parts(hit: Hit) -> str:
        p = hit.parts
        return f"{hit.score:.2f} = cos {p.cosine:.2f}, lex {p.lexical:.2f}, recency {p.recency:.2f}"

    first = hits[0]
    text = f"{story_of.get(first.memory.pk, '?')} ({parts(first)})"
    ranked = next((i for i, hit in enumerate(hits) if hit.memory.pk == target.pk), None)
    if ranked is None:
        status, reliability = Memory.objects.values_list("status", "reliability").get(pk=target.pk)
        return text + f"; {story_of.get(target.pk, '?')} not among the {len(hits)} hits (it is {status}, {reliability})"
    return text + f"; {story_of.get(target.pk, '?')} ranked {ranked + 1} ({parts(hits[ranked])})"
