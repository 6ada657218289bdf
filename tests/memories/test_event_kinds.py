"""The label table names every event kind the product can write (read from the source, not from a list)."""

from __future__ import annotations

import ast
from pathlib import Path

from memories.event_kinds import DECISION_VERBS, EVENT_KINDS, event_label

ROOT = Path(__file__).resolve().parents[2]
NOT_PRODUCT = {"tests", "bench", "training", ".venv", "var", "docs", "static", "templates", "node_modules"}


def product_modules() -> list[Path]:
    return [
        path
        for path in ROOT.rglob("*.py")
        if path.relative_to(ROOT).parts[0] not in NOT_PRODUCT and not path.relative_to(ROOT).parts[0].startswith(".")
    ]


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments (``VERB = "card.answer"``)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def _verbs(node: ast.expr, constants: dict[str, str], where: str) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and node.id in constants:
        return [constants[node.id]]
    if isinstance(node, ast.IfExp):
        return _verbs(node.body, constants, where) + _verbs(node.orelse, constants, where)
    if (
        isinstance(node, ast.JoinedStr)
        and len(node.values) == 2
        and isinstance(node.values[0], ast.FormattedValue)
        and isinstance(node.values[1], ast.Constant)
        and node.values[1].value == ".undo"
    ):
        return []  # "<verb>.undo": labelled from the verb it undoes
    raise AssertionError(f"{where}: a verb this test cannot read ({ast.unparse(node)}); write it as a literal")


def written_verbs() -> dict[str, str]:
    """Every verb passed to ``record_event`` in the product's code → where."""
    verbs: dict[str, str] = {}
    for path in product_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name != "record_event":
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            for keyword in node.keywords:
                if keyword.arg == "verb":
                    for verb in _verbs(keyword.value, constants, where):
                        verbs.setdefault(verb, where)
    return verbs


def test_every_verb_the_code_writes_has_a_label() -> None:
    verbs = written_verbs()
    # The scan itself works: it finds verbs written by each layer.
    assert {"memory.create", "conflict.narrative_card", "card.answer", "decision.confirm"} <= set(verbs)
    missing = {verb: where for verb, where in verbs.items() if verb not in EVENT_KINDS}
    assert missing == {}


def test_the_table_names_no_verb_the_code_never_writes() -> None:
    assert set(EVENT_KINDS) - set(written_verbs()) == set()


def test_only_kinds_that_change_facts_are_decisions() -> None:
    assert set(DECISION_VERBS) == {
        "memory.supersede",
        "conflict.temporal_supersede",
        "conflict.merge_duplicate",
        "conflict.confidence_dominance",
        "conflict.evidence_resolve",
        # the beat jobs' changes (docs/UPKEEP.md): undoable like any automatic decision
        "upkeep.merge",
        "upkeep.deprecate",
        "upkeep.decay",
        "upkeep.penalty",
        "upkeep.evidence",
        "upkeep.verified",
    }
    assert "conflict.card" not in DECISION_VERBS
    assert "conflict.narrative_card" not in DECISION_VERBS


def test_labels_are_words_not_tokens() -> None:
    tokens = [verb for verb in EVENT_KINDS if "." in event_label(verb) or "_" in event_label(verb)]
    assert tokens == []
    assert event_label("conflict.temporal_supersede.undo") == "Undone: superseded an older fact by a newer one"
    # A verb added without a label still reads as words.
    assert event_label("job.decay_run") == "Job: decay run"
