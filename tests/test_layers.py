"""The layers read top-down: a module imports only its own layer and the ones below.

    platform (memoryhub's settings, errors, llm client, celery app, embedded db)
      → workspaces → memories → conflicts → recall
      → interfaces (api, dashboard, portability, mcp_server, urls, wsgi/asgi, run_hub, the demo)
      → training (datasets, training, evaluation; never imported by the running product)

Every import counts, including those inside functions and under TYPE_CHECKING:
a function-level import hides a cycle from Python, not from these tests; and no
two modules import each other, directly or through others, inside a layer either. A lower
layer that must make a higher one act announces it (``memories/hooks.py``) and
the higher one subscribes in its ``AppConfig.ready()``.
"""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Most specific prefix wins; every module of the project must fall under one.
LAYER_OF_PREFIX = {
    "memoryhub": 0,
    "workspaces": 1,
    "memories": 2,
    "conflicts": 3,
    "recall": 4,
    "api": 5,
    "dashboard": 5,
    "portability": 5,
    "mcp_server": 5,
    "memoryhub.urls": 5,
    "memoryhub.wsgi": 5,
    "memoryhub.asgi": 5,
    "memoryhub.webserver": 5,
    "memoryhub.demo": 5,
    "memoryhub.management.commands.run_hub": 5,
    # Subscribes to what conflicts announces; only the interfaces (the dashboard page) import it.
    "webhooks": 4,
    "training": 6,
}
LAYER_NAMES = ["platform", "workspaces", "memories", "conflicts", "recall", "interfaces", "training"]
PACKAGES = sorted({prefix.split(".")[0] for prefix in LAYER_OF_PREFIX})


def layer_of(module: str) -> int:
    matches = [p for p in LAYER_OF_PREFIX if module == p or module.startswith(p + ".")]
    assert matches, f"{module} is in no layer: add it to LAYER_OF_PREFIX"
    return LAYER_OF_PREFIX[max(matches, key=len)]


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def imports_of(path: Path, modules: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """The project modules ``path`` imports, with the line of each import (nested ones too)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # "from memories import hooks" imports the module memories.hooks.
            names = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module for a in node.names
            ]
        else:
            continue
        for name in names:
            if name.split(".")[0] in PACKAGES:
                yield name, node.lineno


def test_no_module_imports_a_higher_layer() -> None:
    modules = project_modules()
    assert "memories.services" in modules
    assert "training.detector" in modules
    upward = []
    for module, path in sorted(modules.items()):
        for target, line in imports_of(path, modules):
            if layer_of(target) > layer_of(module):
                upward.append(
                    f"{path.relative_to(ROOT)}:{line} {module} ({LAYER_NAMES[layer_of(module)]}) imports "
                    f"{target} ({LAYER_NAMES[layer_of(target)]})"
                )
    assert not upward, "imports against the layers:\n" + "\n".join(upward)


def test_no_two_modules_import_each_other_even_through_others() -> None:
    modules = project_modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        for target, _ in imports_of(path, modules):
            while target not in modules and "." in target:  # "from x.y import name": the module x.y
                target = target.rsplit(".", 1)[0]
            if target in modules and target != module:
                graph.setdefault(module, set()).add(target)
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        raise AssertionError(f"import cycle: {' -> '.join(exc.args[1])}") from exc


def test_the_layers_are_checked_on_every_package_of_the_project() -> None:
    on_disk = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name not in {"tests", "bench"}}
    assert on_disk == set(PACKAGES)


def test_a_hidden_upward_import_is_caught(tmp_path: Path) -> None:
    # The check itself: an import inside a function still counts.
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from conflicts.models import Uncertainty\n", encoding="utf-8")
    assert [target for target, _ in imports_of(module, project_modules())] == ["conflicts.models"]
    assert layer_of("conflicts.models") > layer_of("memories.services")
