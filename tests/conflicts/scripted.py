"""A scripted pair classifier for pipeline tests: verdicts by the pair's texts.

The real classifier is tested on its own (test_classifier.py); these tests
check what the pipeline does with a verdict, so they fix the verdicts.
"""

from __future__ import annotations

from conflicts.detection.verdict import Relation, Verdict
from memories.models import Memory


class ScriptedClassifier:
    def __init__(self, script: dict[tuple[str, str], Verdict]) -> None:
        self.script = script
        self.seen: list[tuple[str, str]] = []

    def __call__(self, pairs: list[tuple[Memory, Memory]]) -> list[Verdict]:
        verdicts = []
        for older, newer in pairs:
            self.seen.append((older.text, newer.text))
            verdicts.append(
                self.script.get(
                    (older.text, newer.text), Verdict(relation=Relation.COMPATIBLE, probability=0.9, tier="scripted")
                )
            )
        return verdicts


def scripted(relation: Relation, p: float = 0.95, **kwargs: object) -> Verdict:
    fields: dict[str, object] = {"reasons": ("scripted",), **kwargs}
    return Verdict(relation=relation, probability=p, tier="scripted", **fields)  # type: ignore[arg-type]


def unsure() -> Verdict:
    """A verdict the classifier is not sure of: what the LLM tier is asked about."""
    return Verdict(relation=Relation.TRUE_CONTRADICTION, probability=0.55, tier="classifier")
