"""The Webhooks page: an admin registers a hook (secret shown once), deletes it, and reads the delivery log."""

from __future__ import annotations

import pytest

from tests.conflicts.cards import pair_card
from tests.dashboard.test_workspaces import signed_in
from tests.factories import admin_of
from tests.webhooks.receiver import receiver
from webhooks.models import Webhook
from webhooks.services import deliveries_create, delivery_attempt
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def test_it_registers_a_hook_and_shows_its_secret_once(workspace: Workspace) -> None:
    admin = admin_of(workspace)

    page = admin.post(
        f"/w/{workspace.slug}/webhooks/",
        {
            "url": "https://hooks.example.com/memoryhub",
            "events": ["card.opened", "job.failed"],
            "payload_format": "slack",
        },
    ).content.decode()

    hook = Webhook.objects.get()
    assert (hook.url, hook.events, hook.payload_format) == (
        "https://hooks.example.com/memoryhub",
        ["card.opened", "job.failed"],
        "slack",
    )
    assert hook.secret in page
    assert "Copy this signing secret now" in page
    again = admin.get(f"/w/{workspace.slug}/webhooks/").content.decode()
    assert hook.secret not in again
    assert "https://hooks.example.com/memoryhub" in again
    assert "card.opened, job.failed" in again


def test_a_bad_url_is_refused_with_the_reason_and_nothing_is_stored(workspace: Workspace) -> None:
    admin = admin_of(workspace)

    refused = admin.post(f"/w/{workspace.slug}/webhooks/", {"url": "ftp://example.com/x", "events": ["card.opened"]})

    assert refused.status_code == 400
    assert "must start with http:// or https://" in refused.content.decode()
    assert not Webhook.objects.exists()


def test_it_deletes_a_hook(workspace: Workspace) -> None:
    admin = admin_of(workspace)
    admin.post(f"/w/{workspace.slug}/webhooks/", {"url": "https://example.com/h", "events": ["card.answered"]})
    hook = Webhook.objects.get()

    page = admin.post(f"/w/{workspace.slug}/webhooks/{hook.pk}/delete/", follow=True).content.decode()

    assert not Webhook.objects.exists()
    assert "Deleted the webhook to https://example.com/h" in page
    assert "No webhooks yet." in page


def test_the_log_shows_each_attempt_with_status_duration_and_error(workspace: Workspace) -> None:
    admin = admin_of(workspace)
    with receiver(fail_first=1, fail_status=503) as target:
        admin.post(f"/w/{workspace.slug}/webhooks/", {"url": target.url, "events": ["card.opened"]})
        card, _, _ = pair_card(workspace)
        [delivery] = deliveries_create(workspace_id=workspace.pk, event_type="card.opened", card_id=card.pk)
        delivery_attempt(delivery_id=delivery.pk, number=1)
        delivery_attempt(delivery_id=delivery.pk, number=2)

    page = admin.get(f"/w/{workspace.slug}/webhooks/").content.decode()
    log = page.split('id="delivery-log"')[1]

    assert log.count("<tr class=") == 2
    assert "<td>503</td>" in log
    assert "HTTP 503" in log
    assert "<td>204</td>" in log
    assert " ms</td>" in log
    assert log.index("<td>204</td>") < log.index("<td>503</td>")  # newest first


def test_only_admins_of_the_workspace_see_the_page(workspace: Workspace, other_workspace: Workspace) -> None:
    reviewer = signed_in(workspace, "reviewer", username="rita")
    outsider = admin_of(other_workspace, username="otto")

    assert reviewer.get(f"/w/{workspace.slug}/webhooks/").status_code == 403
    assert (
        reviewer.post(f"/w/{workspace.slug}/webhooks/", {"url": "https://e.com", "events": ["card.opened"]}).status_code
        == 403
    )
    assert outsider.get(f"/w/{workspace.slug}/webhooks/").status_code == 404
    assert not Webhook.objects.exists()


def test_the_keys_page_links_to_the_webhooks(workspace: Workspace) -> None:
    page = admin_of(workspace).get(f"/w/{workspace.slug}/keys/").content.decode()

    assert f'href="/w/{workspace.slug}/webhooks/"' in page
