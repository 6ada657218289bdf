"""A relevance floor for searches a person reads (the memory browser), so nonsense finds nothing.

Hybrid recall ranks the whole workspace: every query gets its ``k`` best facts,
"zzqxv flibbertigibbet" included. An agent asking for context wants that; a
person searching wants "nothing matches" when nothing does. A hit stays when it
shares a word with the query (its lexical score is above zero; stop words do
not count) or when its meaning is close enough: cosine similarity at least
``COSINE_FLOOR``.

The floor is measured, not guessed: ``bench/relevance_floor.py`` runs
nonsense and real questions against the demo workspace. Nonsense reached at
most 0.28 cosine on any fact (0.24 without stop words); the best hit of every real question had at least
0.41, and relevant facts without a shared word sat from 0.30 up (docs/RECALL.md
has the table). 0.30 keeps those and leaves a margin above nonsense.
"""

from __future__ import annotations

from collections.abc import Iterable

from recall.hybrid import Hit

COSINE_FLOOR = 0.30


def is_relevant(hit: Hit, *, floor: float = COSINE_FLOOR) -> bool:
    return hit.parts.lexical > 0 or hit.parts.cosine >= floor


def relevant_hits(hits: Iterable[Hit], *, floor: float = COSINE_FLOOR) -> list[Hit]:
    """The hits that clear the floor, in their order."""
    return [hit for hit in hits if is_relevant(hit, floor=floor)]
