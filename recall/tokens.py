"""Token counting for context budgets, with a real tokenizer (no model needed).

Uses the vendored WordPiece tokenizer of all-MiniLM-L6-v2. Chat models
tokenise differently, but word-piece counts track BPE counts closely enough for
budgeting (within ~10 % on English prose) and need no download.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from memories.embeddings import ASSETS_DIR

if TYPE_CHECKING:
    from tokenizers import Tokenizer


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(ASSETS_DIR / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def count_tokens(texts: list[str]) -> list[int]:
    """Tokens per text, without the [CLS]/[SEP] markers the embedder adds."""
    if not texts:
        return []
    return [len(e.ids) for e in _tokenizer().encode_batch(texts, add_special_tokens=False)]
