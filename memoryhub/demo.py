"""The demo workspace `make run` creates on first start, with a login and an agent key.

It also holds a team's history (``demo_data.jsonl``: six weeks of facts from
four agents and a personal assistant, written for the demo), committed through
the services, embedded and run through detection, so the first screen shows
real cards to answer and a memory browser worth exploring.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import DateTimeField, ExpressionWrapper, F, OuterRef, Subquery, Value
from django.utils import timezone

from conflicts.detection.pipeline import check_fact
from conflicts.models import CardFact, ConflictCard, DetectiveRun
from conflicts.narrative import detective_run
from memories.audit import Actor
from memories.models import ActorType, Memory, Status
from memories.services import MemoryInput, memories_embed_pending, memory_create
from workspaces.models import Role, Scope, Workspace
from workspaces.services import agent_key_create, membership_set, workspace_get_or_create

if TYPE_CHECKING:
    from collections.abc import Iterable

    from conflicts.detection.pipeline import PairClassifier

logger = logging.getLogger(__name__)

DEMO_SLUG = "demo"
DEMO_DATA = Path(__file__).with_name("demo_data.jsonl")
DEMO_ADMIN = "admin"


@dataclass
class DemoCredentials:
    username: str
    password: str
    agent_key: str
    facts: int = 0
    cards: int = 0


def demo_setup() -> DemoCredentials | None:
    """Create the demo workspace, an admin login and an agent key, once.

    Returns the secrets the first time (to print them once); None when the
    admin login already exists.
    """
    user_model = get_user_model()
    with transaction.atomic():
        if user_model.objects.filter(username=DEMO_ADMIN).exists():
            return None
        workspace, _ = workspace_get_or_create(slug=DEMO_SLUG, name="Demo team")
        password = secrets.token_urlsafe(12)
        user = user_model.objects.create_superuser(username=DEMO_ADMIN, email="", password=password)
        membership_set(workspace=workspace, user=user, role=Role.ADMIN)
        # Every scope, so the demo's agent can also answer cards and undo, as it could before scopes existed.
        _, agent_key = agent_key_create(workspace=workspace, name="demo-agent", scopes=Scope.values)
    # Outside the transaction: the login and key stay usable even if seeding fails.
    seeded = demo_seed(workspace=workspace)
    return DemoCredentials(
        username=DEMO_ADMIN, password=password, agent_key=agent_key, facts=seeded.facts, cards=seeded.cards
    )


@dataclass
class SeedReport:
    facts: int
    cards: int
    detection: bool


def demo_seed(*, workspace: Workspace, path: Path = DEMO_DATA, classify: PairClassifier | None = None) -> SeedReport:
    """Commit the demo history (oldest first), embed it, and run detection on each fact in time order.

    Detection is claimed per fact exactly as the worker does (``check_fact``),
    so queued detection tasks for these facts find nothing left to do. If
    detection cannot run (the offline classifier's weights are missing), the
    facts are still seeded and a warning is logged; the worker's sweep checks
    them once detection works.
    """
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    now = timezone.now()
    created = []
    for index, row in enumerate(rows):
        # Spread each day's facts over working hours so their order is stable and readable.
        valid_from = (now - dt.timedelta(days=row["days_ago"])).replace(hour=8, minute=0, second=0, microsecond=0)
        valid_from += dt.timedelta(minutes=7 * (index % 90))
        data = MemoryInput(
            text=row["text"],
            kind=row.get("kind", "fact"),
            key=row.get("key", ""),
            scope=row.get("scope", ""),
            tags=row.get("tags", []),
            source=row.get("source", "explicit"),
            agent=row["agent"],
            importance=row.get("importance", 0.5),
            valid_from=valid_from,
        )
        actor = Actor(type=ActorType.AGENT, name=row["agent"])
        created.append(memory_create(workspace=workspace, actor=actor, data=data))
    while memories_embed_pending():
        pass
    detection = _detect_in_order(
        Memory.objects.filter(pk__in=[m.pk for m in created], status=Status.ACTIVE).order_by("valid_from"), classify
    )
    if detection:
        _read_the_story(workspace)
        _date_cards_by_their_facts(workspace, since=now)
    return SeedReport(len(created), ConflictCard.objects.filter(workspace=workspace).count(), detection)


def _date_cards_by_their_facts(workspace: Workspace, *, since: dt.datetime) -> None:
    """Date each demo card to when its newest fact was stated, as a hub running all along would have raised it.

    The demo replays weeks of history in one load, so without this every card
    would say it opened (and had waited) "0 minutes" ago. Each card keeps its
    offset from the start of the load, so two cards over the same newest fact
    stay in the order detection raised them (export order, review order).
    """
    newest = (
        CardFact.objects.filter(card=OuterRef("pk")).order_by("-memory__valid_from").values("memory__valid_from")[:1]
    )
    when = ExpressionWrapper(
        Subquery(newest) + (F("created_at") - Value(since, output_field=DateTimeField())),
        output_field=DateTimeField(),
    )
    ConflictCard.objects.filter(workspace=workspace).update(created_at=when)


def _read_the_story(workspace: Workspace) -> None:
    """One offline run of the narrative detective over the whole demo history (it is small)."""
    run = DetectiveRun.objects.create(workspace=workspace, trigger="schedule")
    detective_run(run_id=run.pk, mode="offline", whole_story=True)


def _detect_in_order(memories: Iterable[Memory], classify: PairClassifier | None) -> bool:
    for memory in memories:
        try:
            check_fact(memory.pk, classify=classify)
        except Exception as exc:
            # Most likely the classifier is not trained/shipped yet; the seeded facts are still useful.
            logger.warning("demo seeding: detection unavailable (%s); facts seeded without cards", exc)
            return False
    return True
