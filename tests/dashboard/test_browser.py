from __future__ import annotations

import pytest
from django.test import Client

from conflicts.detection.verdict import Relation, Verdict
from conflicts.services import conflict_resolve
from memories.models import Memory
from tests.conflicts.cards import DETECTOR, day
from tests.factories import MembershipFactory, UserFactory
from tests.memories.recall_helpers import remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def signed_in(workspace: Workspace, role: str) -> Client:
    user = UserFactory(username=f"{role}-user")
    MembershipFactory(user=user, workspace=workspace, role=role)
    client = Client()
    client.force_login(user)
    return client


def superseded_pair(workspace: Workspace) -> tuple[Memory, Memory]:
    old = remember(workspace, "Deploys run on Jenkins", scope="infra", valid_from=day(0), key="ci_system")
    new = remember(workspace, "Deploys moved to GitHub Actions", scope="infra", valid_from=day(3), key="ci_system")
    sure = Verdict(relation=Relation.TEMPORAL_CHANGE, probability=0.97, tier="rules", current="b")
    conflict_resolve(older=old, newer=new, verdict=sure, context="ingestion", actor=DETECTOR)
    return old, new


def test_it_searches_with_recall_and_lists_with_filters(workspace: Workspace) -> None:
    superseded_pair(workspace)
    remember(workspace, "The office dog is called Biscuit", scope="office")
    client = signed_in(workspace, "viewer")

    found = client.get(f"/w/{workspace.slug}/memories/", {"q": "how do we deploy"}).content.decode()
    assert "GitHub Actions" in found
    assert "result" in found

    listed = client.get(f"/w/{workspace.slug}/memories/", {"scope": "office"}).content.decode()
    assert "Biscuit" in listed
    assert "Jenkins" not in listed


def test_the_memory_page_shows_the_chain_links_and_events(workspace: Workspace) -> None:
    old, _ = superseded_pair(workspace)
    html = signed_in(workspace, "viewer").get(f"/w/{workspace.slug}/memories/{old.pk}/").content.decode()

    assert 'class="timeline"' in html
    assert html.index("Deploys run on Jenkins") < html.index("Deploys moved to GitHub Actions")
    assert "temporal_evolution" in html
    assert "Superseded an older fact by a newer one" in html  # the label, not the raw verb
    assert "conflict.temporal_supersede" not in html
    assert "Restore" not in html  # viewers get no admin actions


def test_admins_restore_forget_and_supersede(workspace: Workspace) -> None:
    old, new = superseded_pair(workspace)
    admin = signed_in(workspace, "admin")
    assert signed_in(workspace, "reviewer").post(f"/w/{workspace.slug}/memories/{old.pk}/restore/").status_code == 403

    admin.post(f"/w/{workspace.slug}/memories/{old.pk}/restore/")
    assert Memory.objects.get(pk=old.pk).superseded_by_id is None
    admin.post(f"/w/{workspace.slug}/memories/{new.pk}/supersede/", {"by": str(old.pk)})
    assert Memory.objects.get(pk=new.pk).superseded_by_id == old.pk
    admin.post(f"/w/{workspace.slug}/memories/{old.pk}/forget/")
    assert Memory.objects.get(pk=old.pk).status == "forgotten"
    response = admin.post(f"/w/{workspace.slug}/memories/{old.pk}/supersede/", {"by": "nonsense"}, follow=True)
    assert "no memory with this id" in response.content.decode()

    chains = admin.get(f"/w/{workspace.slug}/chains/").content.decode()
    assert "Deploys moved to GitHub Actions" in chains
