"""A small workspace's facts are searched exactly, not through the HNSW index its table shares with others."""

from __future__ import annotations

from django.db import connection, transaction

from memories.embeddings import embed_text
from memories.models import Memory
from recall.hybrid import _vector_candidates
from tests.factories import WorkspaceFactory
from tests.memories.recall_helpers import remember
from workspaces.models import Workspace


def test_a_small_workspaces_fact_is_found_where_the_index_scan_gives_up(workspace: Workspace) -> None:
    ours = remember(workspace, "Postmortems are blameless and written within a week")
    remember(WorkspaceFactory(slug="globex"), "Incident reviews")
    vector = embed_text("incident reviews")
    base = Memory.objects.filter(workspace=workspace)

    with transaction.atomic(), connection.cursor() as cursor:
        # An index scan that gives up after one tuple, the nearest of another workspace: what a filtered scan
        # does on a large or bloated table once hnsw.max_scan_tuples is spent.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL hnsw.ef_search = 1")
        cursor.execute("SET LOCAL hnsw.iterative_scan = off")
        exact = _vector_candidates(base, vector, 40, with_vectors=False, exact=True)

    assert list(exact) == [ours.pk]  # read whole: no index setting can cut the workspace's facts short
