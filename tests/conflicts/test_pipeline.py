from __future__ import annotations

import pytest

from conflicts.detection.candidates import MAX_CANDIDATES, candidates_for
from conflicts.detection.pipeline import detect_and_resolve
from conflicts.detection.verdict import Relation
from conflicts.models import ConflictCard
from conflicts.tasks import detect_conflicts
from memories.models import Memory
from tests.conflicts.scripted import ScriptedClassifier, scripted
from tests.memories.recall_helpers import day, remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def test_candidates_are_similar_facts_and_same_key_facts_of_the_workspace(
    workspace: Workspace, other_workspace: Workspace
) -> None:
    city = remember(workspace, "The user lives in Porto", key="home_city", valid_from=day(1))
    slot = remember(workspace, "Lisbon", key="home_city", valid_from=day(2))
    remember(workspace, "The quarterly report is due Friday")
    remember(other_workspace, "The user lives in Porto")
    new = remember(workspace, "The user now lives in Madrid", key="home_city", valid_from=day(3))

    found = {c.memory.pk: c.why for c in candidates_for(new)}

    assert found[city.pk] == "neighbour"
    assert found[slot.pk] == "same_key"  # too short to be similar, but it fills the same slot
    assert all(Memory.objects.get(pk=pk).workspace == workspace for pk in found)
    assert new.pk not in found


def test_candidates_are_bounded(workspace: Workspace) -> None:
    for n in range(MAX_CANDIDATES + 8):
        remember(workspace, f"The API rate limit for tier {n} is {n * 100} requests per second", scope="api")
    new = remember(workspace, "The API rate limit is 5000 requests per second", scope="api")

    assert len(candidates_for(new)) == MAX_CANDIDATES


def test_candidates_skip_forgotten_and_superseded_facts(workspace: Workspace) -> None:
    gone = remember(workspace, "The build uses Maven")
    Memory.objects.filter(pk=gone.pk).update(status="forgotten")
    new = remember(workspace, "The build uses Gradle")

    assert gone.pk not in {c.memory.pk for c in candidates_for(new)}


def test_detect_and_resolve_orders_pairs_by_time_and_resolves(workspace: Workspace) -> None:
    old = remember(workspace, "Deploys run on Jenkins", valid_from=day(1))
    new = remember(workspace, "Deploys now run on GitHub Actions", valid_from=day(5))
    classify = ScriptedClassifier(
        {(old.text, new.text): scripted(Relation.TEMPORAL_CHANGE, current="b", reasons=("switched",))}
    )

    results = detect_and_resolve(new, classify=classify)

    assert (old.text, new.text) in classify.seen
    [(finding, resolution)] = results
    assert (finding.older.pk, finding.newer.pk) == (old.pk, new.pk)
    assert resolution.action == "superseded"
    assert Memory.objects.get(pk=old.pk).superseded_by_id == new.pk


def test_detection_of_an_older_fact_arriving_late_keeps_the_newer_one_current(workspace: Workspace) -> None:
    newer = remember(workspace, "The user lives in Lisbon", valid_from=day(5))
    late = remember(workspace, "The user lives in Porto", valid_from=day(1))
    classify = ScriptedClassifier({(late.text, newer.text): scripted(Relation.TEMPORAL_CHANGE, current="b")})

    detect_and_resolve(late, classify=classify)

    assert Memory.objects.get(pk=late.pk).superseded_by_id == newer.pk


def test_the_task_claims_a_fact_once(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    a = remember(workspace, "The user is vegetarian", valid_from=day(1))
    b = remember(workspace, "The user eats steak every day", valid_from=day(2))
    classify = ScriptedClassifier({(a.text, b.text): scripted(Relation.TRUE_CONTRADICTION)})
    monkeypatch.setattr("conflicts.detection.pipeline.offline_classifier", lambda: classify)

    assert detect_conflicts(str(b.pk)) == 1
    assert detect_conflicts(str(b.pk)) == 0
    assert ConflictCard.objects.count() == 1
    assert Memory.objects.get(pk=b.pk).checked_at is not None


def test_a_failed_detection_releases_its_claim(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    remember(workspace, "The user is vegetarian", valid_from=day(1))
    b = remember(workspace, "The user eats steak every day", valid_from=day(2))

    def broken(pairs: object) -> object:
        raise RuntimeError("model file missing")

    monkeypatch.setattr("conflicts.detection.pipeline.offline_classifier", lambda: broken)

    with pytest.raises(RuntimeError):
        detect_conflicts(str(b.pk))
    assert Memory.objects.get(pk=b.pk).checked_at is None
