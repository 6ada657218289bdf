"""The demo workspace, seeded with the real offline detectors: no automatic decision across subjects."""

from __future__ import annotations

import pytest

from conflicts.models import ConflictCard
from memories.models import Event, Link, Memory
from memories.subjects import states_its_subject, subjects_agree
from memoryhub.demo import demo_seed
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

AUTOMATIC = ["conflict.temporal_supersede", "conflict.merge_duplicate", "conflict.confidence_dominance"]


def _pair(event: Event) -> tuple[Memory, Memory]:
    """The two facts an automatic decision was about: the one it acted on and the other side."""
    acted_on = Memory.objects.get(pk=event.memory_id)
    if event.verb == "conflict.temporal_supersede":
        assert acted_on.superseded_by is not None
        return acted_on, acted_on.superseded_by
    other_ids = {c["pk"] for c in event.changes if c.get("model") == "memories.memory"} - {str(acted_on.pk)}
    if not other_ids:
        link = Link.objects.get(src=acted_on, rel="merged_into")
        return acted_on, link.dst
    return acted_on, Memory.objects.get(pk=other_ids.pop())


# Decisions the slot reader made where the subject reader reads two subjects, each judged by a person to be
# one subject (the openings of the retired and the kept fact). A decision of its outside this list fails the
# test until someone has read it.
READ_AS_ONE_SUBJECT = {
    ("The platform team's daily standup is at", "The daily standup moved to"),  # the standup's time
    ("Prospect asked how long the trial is", "The help centre now says the trial lasts"),  # the trial's length
    ("Half the services deploy with GitHub", "All production deploys now run on GitHub"),  # the deploy system
    ("Half the services deploy with GitHub", "Migrated the monolith pipeline to GitHub"),  # the monolith's deploys
    ("Deploys to production run on Jenkins", "All production deploys now run on GitHub"),  # the deploy system
    ("We are moving feature flags from LaunchDarkly", "Feature flags are now served by Unleash"),  # the flag service
    ("Maya's daughter Inês is seven and goes to Escola Azul", "Inês starts at her new Lisbon school"),  # her school
    ("Maya signed a lease for a flat in Lisbon", "Maya's new address is"),  # where Maya lives
    ("Ticket 4312: CSV export shows times in UTC", "Exports now use the workspace time zone"),  # the export zone
}


def _read_as_one_subject(a: Memory, b: Memory) -> bool:
    return any(a.text.startswith(old) and b.text.startswith(new) for old, new in READ_AS_ONE_SUBJECT)


def test_no_automatic_supersede_or_merge_across_subjects_in_the_demo(workspace: Workspace) -> None:
    demo_seed(workspace=workspace)

    decisions = list(Event.objects.filter(workspace=workspace, verb__in=AUTOMATIC, automatic=True))
    for event in decisions:
        a, b = _pair(event)
        agreement = subjects_agree(a.subject, b.subject)
        # The one exception the guard makes: a note that leaves its subject out ("Moved the session
        # cache off Memcached …") names the very value it leaves, so its guessed entity may differ.
        named = "says it left" in event.reason or "corrects the earlier" in event.reason
        guessed = not (states_its_subject(a.text) and states_its_subject(b.text))
        exception = named and guessed and agreement.attribute is not False
        # The other: the slot reader read both as one subject given another value (conflicts/detection/
        # classifier.py, _one_slot_change) — each such decision in the demo checked by hand.
        read_as_one = "(cross_encoder, " in event.reason and _read_as_one_subject(a, b)
        assert not agreement.different or exception or read_as_one, f"{event.verb}: {a.text!r} / {b.text!r}"
        assert event.reason.startswith("Same subject — "), event.reason

    def superseded(text: str) -> bool:
        return Memory.objects.get(workspace=workspace, text=text).superseded_by_id is not None

    # The wrong supersedes issue 21 found in the demo.
    assert not superseded("To roll back a deploy, re-run the previous green pipeline; never hot-patch production.")
    assert not superseded("Acme Corp has 200 seats on Pro.")
    assert not superseded("Maya's physiotherapist says no running for two weeks.")
    # … and the ones it should keep making: a new value for the same slot.
    assert superseded("Production runs PostgreSQL 14 on a managed instance in eu-west-1.") or (
        ConflictCard.objects.filter(
            workspace=workspace, card_facts__memory__text__startswith="Production runs"
        ).exists()
    )
