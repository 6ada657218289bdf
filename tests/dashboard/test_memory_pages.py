"""The memory browser: relevance floor, whole chains, the link graph, supersede by search, unlink."""

from __future__ import annotations

import re

import pytest

from dashboard.charts import Edge, Node, link_graph
from memories import browse
from memories.audit import Actor
from memories.models import Link, Memory
from memories.selectors import memory_chain
from memories.services import link_create, memory_supersede
from recall.relevance import COSINE_FLOOR
from tests.conflicts.cards import day
from tests.factories import admin_of, memory
from tests.memories.recall_helpers import remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db
ME = Actor.system("test")
HTMX = {"HTTP_HX_REQUEST": "true"}


def branching_chain(workspace: Workspace) -> tuple[Memory, Memory, Memory]:
    """Two older facts both replaced by one newer fact: a chain that branches backwards."""
    first = memory(workspace=workspace, text="Pricing starts at 90 euros per seat", valid_from=day(0))
    second = memory(workspace=workspace, text="Acme has 200 seats on Pro", valid_from=day(5))
    head = memory(workspace=workspace, text="The Pro plan is 59 euros per seat", valid_from=day(9))
    memory_supersede(old=first, new=head, actor=ME)
    memory_supersede(old=second, new=head, actor=ME)
    return first, second, head


def test_a_memorys_chain_has_every_step_the_chains_page_shows(workspace: Workspace) -> None:
    first, second, head = branching_chain(workspace)
    (on_chains_page,) = browse.supersede_chains(workspace=workspace)

    for member in (first, second, head):
        chain = memory_chain(memory=Memory.objects.get(pk=member.pk))
        # Following one predecessor per step used to leave out the other branch.
        assert [m.pk for m in chain] == [m.pk for m in on_chains_page.memories] == [first.pk, second.pk, head.pk]

    page = admin_of(workspace).get(f"/w/{workspace.slug}/memories/{first.pk}/").content.decode()
    timeline = page[page.index('class="timeline"') : page.index("</ol>", page.index('class="timeline"'))]
    assert timeline.count("<li") == 3


def test_a_gibberish_search_finds_nothing_and_says_so(workspace: Workspace) -> None:
    remember(workspace, "Deploys run on GitHub Actions")
    remember(workspace, "Maya is vegetarian")
    client = admin_of(workspace)

    nonsense = client.get(f"/w/{workspace.slug}/memories/", {"q": "zzqxv flibbertigibbet"}).content.decode()
    real = client.get(f"/w/{workspace.slug}/memories/", {"q": "how do we deploy"}).content.decode()

    assert "Nothing matches “zzqxv flibbertigibbet”" in nonsense
    assert "Deploys run on GitHub Actions" not in nonsense
    assert "Deploys run on GitHub Actions" in real
    assert "Nothing matches" not in real
    assert 0.2 < COSINE_FLOOR < 0.4


def test_the_link_graph_draws_each_linked_fact_once_with_labels_inside(workspace: Workspace) -> None:
    center = Node("Enterprise pricing starts at 90 euros per seat per month, minimum 100 seats.", "")
    other = Node("The Pro plan is 59 euros per seat per month for all new customers.", "/m/2")
    svg = str(
        link_graph(center, [Edge(other, "supersedes", False), Edge(other, "temporal_evolution", True)], label="links")
    )

    assert svg.count("<circle") == 2  # the centre and one neighbour, not two
    assert "supersedes · temporal evolution" in svg
    assert 'marker-start="url(#arrow)"' in svg
    assert 'marker-end="url(#arrow)"' in svg
    width = int(re.search(r'viewBox="0 0 (\d+) ', svg).group(1))  # type: ignore[union-attr]
    for x, text in re.findall(r'<tspan x="([\d.]+)" dy="\d+">([^<]*)</tspan>', svg):
        half = len(text) * 6.2 / 2
        assert half <= float(x) <= width - half, text


def test_supersede_picks_the_replacing_fact_by_search(workspace: Workspace) -> None:
    old = remember(workspace, "Standup is at 9:30 Lisbon time")
    new = remember(workspace, "The daily standup moved to 10:00")
    remember(workspace, "Maya is vegetarian")
    client = admin_of(workspace)

    options = client.get(
        f"/w/{workspace.slug}/memories/{old.pk}/replacements/", {"replace_q": "standup"}, **HTMX
    ).content.decode()
    assert f'value="{new.pk}"' in options
    assert f'value="{old.pk}"' not in options  # never itself
    assert "vegetarian" not in options
    none = client.get(f"/w/{workspace.slug}/memories/{old.pk}/replacements/", {"replace_q": "zzqxv flibbertigibbet"})
    assert "Nothing matches" in none.content.decode()
    # Without JavaScript the same search renders inside the page.
    page = client.get(f"/w/{workspace.slug}/memories/{old.pk}/", {"replace_q": "standup"}).content.decode()
    assert f'value="{new.pk}"' in page
    assert 'id="supersede" open' in page

    missing = client.post(f"/w/{workspace.slug}/memories/{old.pk}/supersede/", {}, follow=True).content.decode()
    assert "Choose the fact that replaces it." in missing
    client.post(f"/w/{workspace.slug}/memories/{old.pk}/supersede/", {"by": str(new.pk)})
    assert Memory.objects.get(pk=old.pk).superseded_by_id == new.pk


def test_destructive_actions_ask_first_and_unlink_keeps_the_hubs_own_links(workspace: Workspace) -> None:
    a = memory(workspace=workspace, text="Ana leads the platform team")
    b = memory(workspace=workspace, text="The platform team owns deploys")
    link, _ = link_create(src=a, dst=b, rel="related_to", actor=ME)
    client = admin_of(workspace)

    page = client.get(f"/w/{workspace.slug}/memories/{a.pk}/").content.decode()
    # Each destructive button sits behind a first step that says what will happen.
    for first_step, second_step in (
        ("Forget…", "Forget this fact"),
        ("Supersede…", "Find the fact that replaces it"),
        ("Unlink…", "Remove the link"),
    ):
        assert first_step in page
        assert page.index("<summary", page.index(first_step) - 200) < page.index(second_step)

    client.post(f"/w/{workspace.slug}/memories/{a.pk}/links/{link.pk}/delete/")
    assert not Link.objects.filter(pk=link.pk).exists()
    other = memory(workspace=workspace, text="Somebody else's fact")
    foreign, _ = link_create(src=other, dst=b, rel="related_to", actor=ME)
    assert client.post(f"/w/{workspace.slug}/memories/{a.pk}/links/{foreign.pk}/delete/").status_code == 302
    assert Link.objects.filter(pk=foreign.pk).exists()  # not a link of this memory: refused
