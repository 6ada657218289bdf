"""The comparison baseline: MiniLM cosine ≥ 0.80 plus a negation-parity rule.

What a published memory store does: two facts this similar are the same fact,
unless exactly one of them is negated, which makes them a contradiction. It
never recognises an update.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conflicts.detection.classifier import PairInput, embeddings_for
from conflicts.detection.rules import negation_count, tokens
from conflicts.detection.verdict import Relation
from memories.embeddings import MiniLMEmbedder

THRESHOLD = 0.80
# The published baseline is MiniLM's cosine, whichever embedder recall uses.
BASELINE_EMBEDDER = MiniLMEmbedder.name


def baseline_relations(pairs: Sequence[PairInput]) -> list[Relation]:
    if not pairs:
        return []
    ua, ub = embeddings_for(pairs, BASELINE_EMBEDDER)
    cosines = np.einsum("ij,ij->i", ua, ub)
    out = []
    for p, cosine in zip(pairs, cosines, strict=True):
        if cosine < THRESHOLD:
            out.append(Relation.COMPATIBLE)
        elif negation_count(tokens(p.a_text)) % 2 != negation_count(tokens(p.b_text)) % 2:
            out.append(Relation.TRUE_CONTRADICTION)
        else:
            out.append(Relation.DUPLICATE)
    return out
