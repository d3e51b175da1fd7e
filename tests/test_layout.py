"""The package layout is the pipeline of one `torchup check` run: each stage's package imports only the
stages below it (and what every stage shares), never one above, so the folders read as the data flow."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "torchup"
# Bottom to top: a package may import those before it in this list, and itself.
STAGES = ["core", "discover", "prefilter", "analysis", "rules", "check", "fix", "report", "settings", "run", "cli"]
# Beside the pipeline: run-time helpers for users' code and the other commands, each on its own.
APART = {"compat": [], "doctor": ["core"], "trace": ["core"]}


def imports(path: Path) -> set[str]:
    """Every torchup module a module imports, at any depth (function-level imports included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("torchup"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("torchup"))
    return found


def package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (parts[1] in STAGES or parts[1] in APART) else None


MODULES = sorted(path for path in ROOT.rglob("*.py") if path.parent != ROOT)


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ROOT)) for p in MODULES])
def test_a_stage_imports_only_the_stages_below_it(path: Path) -> None:
    own = path.relative_to(ROOT).parts[0]
    allowed = {own, *(STAGES[: STAGES.index(own)] if own in STAGES else APART[own])}
    if own == "cli":
        allowed |= set(APART)  # the command line runs the other commands too
    wrong = sorted(module for module in imports(path) if (package_of(module) or own) not in allowed)
    assert not wrong, f"torchup/{path.relative_to(ROOT)} imports {wrong}: a later stage (or another command)"


def test_every_module_sits_in_a_stage() -> None:
    loose = sorted(p.name for p in ROOT.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "api.py", "compat.py", "flake8_plugin.py"], loose
