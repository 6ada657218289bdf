"""The Jobs and Uncertainties pages (issue 24, item 3)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from conflicts.models import ConflictCard, JobRun, JobState, Uncertainty, UncertaintyType
from conflicts.upkeep import JOBS
from conflicts.upkeep.runs import job_execute
from memories.models import Event
from tests.factories import MembershipFactory, UserFactory, admin_of, memory
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def reviewer_of(workspace: Workspace, username: str = "rui", role: str = "reviewer") -> Client:
    user = UserFactory(username=username)
    MembershipFactory(user=user, workspace=workspace, role=role)
    client = Client()
    client.force_login(user)
    return client


def solo(workspace: Workspace, kind: str = UncertaintyType.UNVERIFIED, severity: str = "low") -> Uncertainty:
    fact = memory(workspace=workspace, text=f"The customer might churn ({kind})", status="active")
    return Uncertainty.objects.create(
        workspace=workspace,
        memory_a=fact,
        memory_a_kind="fact",
        uncertainty_type=kind,
        severity=severity,
        detection_context="drift",
    )


def test_the_jobs_page_lists_every_run_with_its_figures(workspace: Workspace) -> None:
    job_execute(job="decay", fn=JOBS["decay"])  # a scheduled run over every workspace
    JobRun.objects.create(
        job="drift", workspace=workspace, trigger="manual", state=JobState.FAILED, errors=1, error="boom"
    )
    JobRun.objects.create(job="decay", workspace=Workspace.objects.create(slug="other", name="Other"))

    page = admin_of(workspace).get("/w/acme/jobs/")

    assert page.status_code == 200
    body = page.content.decode()
    assert "Decay (hourly)" in body
    assert "all workspaces" in body
    assert "Drift reconcile" in body and "boom" in body  # noqa: PT018
    assert body.count('class="job-run') == 2  # the other workspace's run is not shown
    assert "every 2s" not in body  # nothing runs: no polling


def test_a_decay_cycle_shows_its_backlog_and_a_continuation_the_run_it_follows(workspace: Workspace) -> None:
    first = JobRun.objects.create(
        job="decay", workspace=workspace, state=JobState.DONE, read=200, details={"still_due": 812, "continues": True}
    )
    JobRun.objects.create(
        job="decay",
        workspace=workspace,
        trigger="continuation",
        state=JobState.DONE,
        read=200,
        details={"follows": first.pk, "still_due": 0},
    )

    body = admin_of(workspace).get("/w/acme/jobs/").content.decode()

    assert "812 still due, the next cycle follows" in body
    assert f"continuation of #{first.pk}" in body
    assert body.count("still due") == 1  # the last cycle left nothing due


def test_a_running_job_shows_progress_and_the_table_polls(workspace: Workspace) -> None:
    JobRun.objects.create(
        job="consolidation",
        workspace=workspace,
        state=JobState.RUNNING,
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
        progress_done=30,
        progress_total=120,
    )

    partial = admin_of(workspace).get("/w/acme/jobs/", HTTP_HX_REQUEST="true")

    body = partial.content.decode()
    assert 'hx-trigger="every 2s"' in body
    assert '<progress class="job-progress" max="100" value="25"' in body
    assert "30 / 120" in body
    assert "<html" not in body  # only the table for HTMX


def test_an_admin_runs_a_job_now(workspace: Workspace, django_capture_on_commit_callbacks: Any) -> None:
    admin = admin_of(workspace)
    assert 'name="job"' in admin.get("/w/acme/jobs/").content.decode()

    with django_capture_on_commit_callbacks() as callbacks:
        response = admin.post("/w/acme/jobs/run/", {"job": "decay"})

    assert response.status_code == 302
    run = JobRun.objects.get()
    assert (run.job, run.workspace_id, run.state, run.trigger) == ("decay", workspace.pk, "queued", "manual")
    assert len(callbacks) == 1  # the task is sent once the run is committed

    # What the worker does with it: claims the queued run once and carries it out.
    from conflicts.tasks import upkeep_run

    assert upkeep_run("decay", workspace.pk, run.pk) == "done"
    assert upkeep_run("decay", workspace.pk, run.pk) == "skipped"
    run.refresh_from_db()
    assert run.state == "done"
    assert run.finished_at is not None


def test_only_admins_run_jobs_and_only_known_ones(workspace: Workspace) -> None:
    reviewer = reviewer_of(workspace)
    assert 'name="job"' not in reviewer.get("/w/acme/jobs/").content.decode()
    assert reviewer.post("/w/acme/jobs/run/", {"job": "decay"}).status_code == 403
    admin_of(workspace).post("/w/acme/jobs/run/", {"job": "rm -rf"})
    assert not JobRun.objects.exists()


def test_the_uncertainties_page_filters_by_type_severity_and_state(workspace: Workspace) -> None:
    unverified = solo(workspace, UncertaintyType.UNVERIFIED, "low")
    stale = solo(workspace, UncertaintyType.STALE, "medium")
    client = reviewer_of(workspace)

    everything = client.get("/w/acme/uncertainties/").content.decode()
    assert f"uncertainty-{unverified.pk}" in everything
    assert f"uncertainty-{stale.pk}" in everything
    only_stale = client.get("/w/acme/uncertainties/", {"type": "stale"}).content.decode()
    assert f"uncertainty-{unverified.pk}" not in only_stale
    assert f"uncertainty-{stale.pk}" in only_stale
    medium = client.get("/w/acme/uncertainties/", {"severity": "medium"}).content.decode()
    assert f"uncertainty-{unverified.pk}" not in medium
    resolved = client.get("/w/acme/uncertainties/", {"state": "resolved"}).content.decode()
    assert "No uncertainties match" in resolved
    assert client.get("/w/acme/uncertainties/", {"type": "<script>"}).status_code == 200


def test_a_reviewer_resolves_dismisses_or_cards_an_uncertainty(workspace: Workspace) -> None:
    first, second, third = (solo(workspace) for _ in range(3))
    client = reviewer_of(workspace)

    client.post(f"/w/acme/uncertainties/{first.pk}/resolve/", {"next": "?type=unverified"})
    client.post(f"/w/acme/uncertainties/{second.pk}/dismiss/")
    response = client.post(f"/w/acme/uncertainties/{third.pk}/card/")

    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.state, first.resolution_detail) == ("resolved", "resolved by a reviewer")
    assert second.resolution_detail.startswith("dismissed")
    assert set(Event.objects.values_list("verb", flat=True)) >= {"uncertainty.resolve", "uncertainty.dismiss"}
    card = ConflictCard.objects.get()
    assert response["Location"] == f"/w/acme/cards/{card.pk}/"
    assert card.question.startswith("Can you confirm that")
    assert client.get(response["Location"]).status_code == 200
    # Carding again opens the same card; settling a closed one is refused, not a 500.
    assert client.post(f"/w/acme/uncertainties/{third.pk}/card/")["Location"] == response["Location"]
    again = client.post(f"/w/acme/uncertainties/{first.pk}/resolve/", follow=True)
    assert "already resolved" in again.content.decode()


def test_viewers_cannot_settle_uncertainties(workspace: Workspace) -> None:
    record = solo(workspace)
    viewer = reviewer_of(workspace, "vic", role="viewer")

    assert "/resolve/" not in viewer.get("/w/acme/uncertainties/").content.decode()
    assert viewer.post(f"/w/acme/uncertainties/{record.pk}/resolve/").status_code == 403
    record.refresh_from_db()
    assert record.state == "open"
