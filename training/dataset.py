"""Labelled pairs: the ``pairs-dev.jsonl`` format, persona pairs from DECODE, and our domain pairs.

The pairs format (see ``shared/eval/README.md``): one JSON object per line with
``id``, ``a``, ``b``, ``label`` (contradiction | compatible | duplicate | update),
``source`` and optional ``a_time``/``b_time`` (ISO dates, ``a_time < b_time``).
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path

from conflicts.detection.network import LABELS

DATA_DIR = Path(__file__).parent / "data"
DOMAIN_PAIRS = DATA_DIR / "domain_pairs.jsonl"
PERSONA_SOURCE = "decode-persona"


class PairsFileError(ValueError):
    """A pairs file that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class TrainingData:
    """The files both trained models learn from, and where their embedding cache lives."""

    pairs: Path
    dialogues: Path | None
    domain: Path | None
    cache: Path
    slots: Path | None = None  # more pairs to learn from (training/slot_pairs.py's train split)


@dataclass(frozen=True)
class LabelledPair:
    id: str
    a: str
    b: str
    label: str
    source: str
    a_time: str | None = None
    b_time: str | None = None


def read_pairs(path: Path) -> list[LabelledPair]:
    """Every pair in ``path``, in file order; :class:`PairsFileError` naming the line on bad input."""
    if not path.is_file():
        raise PairsFileError(f"{path}: no such file")
    pairs = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}, line {number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PairsFileError(f"{where}: not valid JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise PairsFileError(f"{where}: expected a JSON object")
            for name in ("a", "b", "label"):
                if not isinstance(row.get(name), str) or not row[name]:
                    raise PairsFileError(f"{where}: missing or empty string field {name!r}")
            if row["label"] not in LABELS:
                raise PairsFileError(f"{where}: unknown label {row['label']!r} (expected one of {', '.join(LABELS)})")
            times = [row.get("a_time"), row.get("b_time")]
            if any(t is not None and not isinstance(t, str) for t in times):
                raise PairsFileError(f"{where}: a_time and b_time must be ISO date strings")
            pairs.append(
                LabelledPair(
                    id=str(row.get("id", f"line-{number}")),
                    a=row["a"],
                    b=row["b"],
                    label=row["label"],
                    source=str(row.get("source", "unknown")),
                    a_time=times[0] or None,
                    b_time=times[1] or None,
                )
            )
    return pairs


def _is_chatter(text: str) -> bool:
    low = text.lower()
    return len(low.split()) < 3 or "dogetipbot" in low


@dataclass(frozen=True)
class Dialogue:
    id: str
    group: str
    speaker_turns: list[str]  # earlier turns of the last turn's speaker
    last: str
    is_contradiction: bool


def read_dialogues(path: Path) -> list[Dialogue]:
    """DECODE dialogues: the last turn and the earlier substantive turns of the same speaker."""
    dialogues = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            turns = row["turns"]
            last = turns[-1]
            earlier = [
                t["text"]
                for t in turns[:-1]
                if t["agent_id"] == last["agent_id"] and not _is_chatter(t["text"]) and t["text"] != last["text"]
            ]
            if not earlier:
                continue
            dialogues.append(
                Dialogue(
                    id=str(row["conversation_id"]),
                    group=str(row["conversation_id"]).split("_")[0],
                    speaker_turns=earlier,
                    last=last["text"],
                    is_contradiction=bool(row["is_contradiction"]),
                )
            )
    return dialogues


def group_ids(pairs: list[LabelledPair], extra_links: dict[str, str] | None = None) -> list[str]:
    """A group per connected component of shared texts, so a sentence never sits in two folds.

    ``extra_links`` joins a pair id to a named group as well (dialogues cut from one conversation).
    """
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(x: str, y: str) -> None:
        rx, ry = find(x), find(y)
        if rx != ry:
            parent[max(rx, ry)] = min(rx, ry)

    for p in pairs:
        union("t:" + p.a, "t:" + p.b)
        if extra_links and p.id in extra_links:
            union("t:" + p.a, "g:" + extra_links[p.id])
    return [find("t:" + p.a) for p in pairs]


def fold_of(group: str, folds: int) -> int:
    return zlib.crc32(group.encode("utf-8")) % folds
