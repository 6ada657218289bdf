"""Vectors read in pgvector's binary form (memories/vectors.py) are the stored ones, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from memories.models import Memory
from memories.selectors import memories_load_vectors, memories_with_vectors
from memories.vectors import VectorBytes, vector_from_bytes
from tests.memories.recall_helpers import remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def test_a_vector_read_in_binary_equals_the_stored_one(workspace: Workspace) -> None:
    fact = remember(workspace, "Restores now use delta mode; the latest drill took 26 minutes")
    as_text = np.asarray(Memory.objects.get(pk=fact.pk).embedding, dtype=np.float32)  # pgvector's text form, parsed

    (binary,) = memories_with_vectors(Memory.objects.filter(pk=fact.pk))
    deferred = Memory.objects.defer("embedding").get(pk=fact.pk)
    memories_load_vectors([deferred])

    for vector in (binary.embedding, deferred.embedding):
        assert isinstance(vector, np.ndarray)
        assert vector.dtype == np.float32
        assert vector.shape == (384,)
        assert np.array_equal(vector, as_text)


def test_a_missing_vector_reads_as_none(workspace: Workspace) -> None:
    fact = remember(workspace, "Standups are at 9:30")
    Memory.objects.filter(pk=fact.pk).update(embedding=None)

    (row,) = memories_with_vectors(Memory.objects.filter(pk=fact.pk))

    assert row.embedding is None
    assert Memory.objects.filter(pk=fact.pk).annotate(b=VectorBytes("embedding")).values_list("b", flat=True)[0] is None


def test_bytes_that_are_not_a_whole_vector_are_refused() -> None:
    header = (3).to_bytes(2, "big") + bytes(2)
    assert vector_from_bytes(header + np.array([1, 2, 3], dtype=">f4").tobytes()).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="3 dimensions"):
        vector_from_bytes(header + np.array([1, 2], dtype=">f4").tobytes())
