"""Version-gate facts that another module of the project defines.

MONAI's `if pytorch_after(1, 10): ... else: ...` calls a helper of `monai.utils.module`; a file that
imports it learns what the helper computes from that module's own source (``collect_gate_facts``),
found the way Python would find it: from the directory above the file's top package (the first
directory going up without an ``__init__.py``), through re-exports (`monai/utils/__init__.py`'s `from
.module import pytorch_after`). Asked only when a test names something the file itself does not
define, and each module is read once per process (again when its status changes).

A file's cached findings (torchup.run.cache) are keyed by its own text: editing the helper's module
does not refresh them (`torchup clean`, or `--no-cache`).
"""

from __future__ import annotations

import ast
import os
from typing import Any

from torchup.analysis.version_gates import GateFacts, collect_gate_facts

_DEPTH = 4  # re-exports followed, at most
# What each module defines, by its path and status (a process that checks twice reads an edited one again).
_modules: dict[tuple[str, int, int], tuple[ast.Module, GateFacts] | None] = {}


class ProjectGateFacts(GateFacts):
    """A file's own facts (``own``), then those of the project's modules it names."""

    def __init__(self, own: GateFacts, path: str) -> None:
        super().__init__({}, own.module)
        self._own = own
        self._root = _import_root(os.path.dirname(os.path.abspath(path)))

    def lookup(self, key: str | None) -> dict[str, Any] | None:
        found = self._own.lookup(key)
        if found is not None or not key or "." not in key or key.startswith("."):
            return found
        module, _, name = key.rpartition(".")
        if module.partition(".")[0] in ("torch", "functorch"):
            return None
        return _fact(self._root, module, name, _DEPTH)

    def local_key(self, name: str) -> str:
        return self._own.local_key(name)


def _import_root(directory: str) -> str:
    """The directory absolute imports of the file's package start from."""
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory


def _fact(root: str, module: str, name: str, depth: int) -> dict[str, Any] | None:
    loaded = _module(root, module)
    if loaded is None:
        return None
    tree, facts = loaded
    found = facts.lookup(f"{module}.{name}")
    if found is not None or depth <= 0:
        return found
    origin = _reexported_from(tree, module, name, package=_is_package(root, module))
    return None if origin is None else _fact(root, origin[0], origin[1], depth - 1)


def _module(root: str, module: str) -> tuple[ast.Module, GateFacts] | None:
    base = os.path.join(root, *module.split("."))
    path = next((p for p in (base + ".py", os.path.join(base, "__init__.py")) if os.path.isfile(p)), None)
    if path is None:
        return None
    try:
        status = os.stat(path)
    except OSError:
        return None
    key = (path, status.st_mtime_ns, status.st_size)
    if key not in _modules:
        _modules[key] = _read(path, module)
    return _modules[key]


def _read(path: str, module: str) -> tuple[ast.Module, GateFacts] | None:
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tree, collect_gate_facts(tree, module)


def _is_package(root: str, module: str) -> bool:
    return os.path.isfile(os.path.join(root, *module.split("."), "__init__.py"))


def _reexported_from(tree: ast.Module, module: str, name: str, *, package: bool) -> tuple[str, str] | None:
    """(module, name) a module-level `from X import name` of ``module`` takes ``name`` from."""
    for statement in tree.body:
        if not isinstance(statement, ast.ImportFrom):
            continue
        for alias in statement.names:
            if (alias.asname or alias.name) != name:
                continue
            if not statement.level:
                return (statement.module or "", alias.name) if statement.module else None
            base = module.split(".") if package else module.split(".")[:-1]
            base = base[: len(base) - (statement.level - 1)] if statement.level > 1 else base
            source = ".".join([*base, *([statement.module] if statement.module else [])])
            return (source, alias.name) if source else None
    return None
