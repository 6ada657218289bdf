"""The Jobs page in a real browser: a run is triggered, shows its progress while running, and its figures."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from conflicts.models import JobRun, JobState
from conflicts.tasks import upkeep_run
from tests.browser.test_review import sign_in
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory, memory

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_job_is_triggered_and_its_run_appears_with_progress(page: Page, live_server: Any) -> None:
    workspace = WorkspaceFactory(slug="acme", name="Acme platform")
    MembershipFactory(user=UserFactory(username="ana"), workspace=workspace, role="admin")
    memory(workspace=workspace, text="The VPN uses WireGuard", status="active")
    running = JobRun.objects.create(
        job="consolidation",
        workspace=workspace,
        state=JobState.RUNNING,
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
        progress_done=1,
        progress_total=4,
    )
    sign_in(page, live_server, "ana", "/w/acme/jobs/")
    expect(page.get_by_role("heading", name="Jobs")).to_be_visible()
    bar = page.locator(f"#job-run-{running.pk} progress")
    expect(bar).to_have_attribute("value", "25")

    # The worker moves on: the table polls itself and the bar follows.
    JobRun.objects.filter(pk=running.pk).update(progress_done=3, heartbeat_at=timezone.now())
    expect(bar).to_have_attribute("value", "75", timeout=10_000)

    # Run now: the run appears queued, straight away.
    page.get_by_label("Job").select_option("decay")
    page.get_by_role("button", name="Run now").click()
    queued = JobRun.objects.filter(job="decay")
    expect(page.locator("tr.job-run.state-queued")).to_have_count(1, timeout=10_000)
    assert queued.get().state == "queued"

    # A worker carries it out (the task itself, here on the test's thread); the page shows it done.
    run = queued.get()
    assert upkeep_run("decay", workspace.pk, run.pk) == "done"
    JobRun.objects.filter(pk=running.pk).update(state=JobState.DONE, finished_at=timezone.now())
    row = page.locator(f"#job-run-{run.pk}")
    expect(row.locator(".badge")).to_have_text("done", timeout=10_000)
    expect(row.locator("td.num").first).to_have_text("1")  # it read the one fact that was due
    expect(page.locator("progress")).to_have_count(0)
