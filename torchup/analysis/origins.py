"""Receivers that come from another file of the project: `_, t = linear_cg(...)` then `t.symeig()`,
where `linear_cg` is imported (`from .linear_cg import linear_cg`). Nothing in the finding's own file
says what `t` is, so its finding is only possible, and dropped when a class of the project defines
the method (torchup.analysis.project). The function's own file says more: when every `return` of
`linear_cg` gives a tensor where `t` stands, the finding is likely.

A finding records where its receiver comes from (``ImportedOrigin``, from the file alone, while it is
checked); the end of the run reads the function's file (``Returns``), once per file, and only for
findings that are possible.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from torchup.analysis.context import Context
from torchup.analysis.flow import reaching_assignment
from torchup.analysis.inference import Evidence, returned_evidence
from torchup.analysis.resolver import ITEM, BindingKind, Resolver
from torchup.core.facts import FACTS
from torchup.core.project_root import project_root
from torchup.core.source import DecodeError, SourceFile

_TENSOR_METHODS = frozenset(FACTS["tensor_methods"])
_MAX_STEPS = 8
_MAX_BYTES = 8 * 1024 * 1024  # (as the runner: larger files are not sources it reads)


# The receiver is what ``steps`` (``resolver.Origin.path``) reach in the result of a call of
# ``function``, from-imported from ``module`` (`.linear_cg`, `gpytorch.utils.linear_cg`):
# ``Diagnostic.receiver_origin``.
ImportedOrigin = tuple[str, str, tuple[int | str, ...]]


def imported_origin(ctx: Context, node: ast.AST) -> ImportedOrigin | None:
    """Where the receiver of ``node`` (`recv.method` or its call) comes from, when that is a call of
    a function the file imports from a module: a name bound to its result, an element of it, a
    tensor method of either (`t = t.squeeze(0)`), a subscript (`t_mats[i]`)."""
    if isinstance(node, ast.Call):
        node = node.func
    if not isinstance(node, ast.Attribute):
        return None
    return _origin(ctx, node.value, (), 0)


def _origin(ctx: Context, expr: ast.expr, path: tuple[int | str, ...], steps: int) -> ImportedOrigin | None:
    if steps > _MAX_STEPS:
        return None
    if isinstance(expr, ast.Subscript):
        return _origin(ctx, expr.value, (ITEM, *path), steps + 1)  # (an element of a tensor is one)
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr in _TENSOR_METHODS:
            return _origin(ctx, func.value, path, steps + 1)  # a tensor's method gives a tensor
        if isinstance(func, ast.Name):
            imported = _imported_function(ctx, func)
            return (imported[0], imported[1], path) if imported is not None else None
        return None
    if not isinstance(expr, ast.Name):
        return None
    found = ctx.resolver.lookup_name(expr)
    if not found.bindings:
        return None
    binding = found.bindings[0] if len(found.bindings) == 1 else reaching_assignment(ctx, expr, found.bindings)
    if binding is None:
        return None
    if binding.kind is BindingKind.ASSIGNMENT and binding.value is not None:
        return _origin(ctx, binding.value, path, steps + 1)
    if binding.kind is BindingKind.OTHER and isinstance(binding.node, ast.Name):
        origin = ctx.resolver.origin(binding.node)
        if origin is not None:
            return _origin(ctx, origin.source, (*origin.path, *path), steps + 1)
    return None


def _imported_function(ctx: Context, name: ast.Name) -> tuple[str, str] | None:
    """(module, name) of a `from module import name` that alone binds ``name`` (relative modules
    keep their dots)."""
    found = ctx.resolver.lookup_name(name)
    if len(found.bindings) != 1 or found.bindings[0].kind is not BindingKind.FROM_IMPORT:
        return None
    statement = found.bindings[0].statement
    if not isinstance(statement, ast.ImportFrom):
        return None
    for alias in statement.names:
        if (alias.asname or alias.name) == name.id and alias.name != "*":
            module = "." * statement.level + (statement.module or "")
            return (module, alias.name) if statement.module else None  # (`from . import f`: a module)
    return None


class Returns:
    """What the project's functions return, read from their files (each parsed once per run)."""

    def __init__(self) -> None:
        self._files: dict[str, Context | None] = {}

    def of_tensors(self, importer: str, origin: ImportedOrigin) -> str | None:
        """Where (`path:line`) the function ``origin`` names is defined, for the file ``importer``'s
        import, when what ``origin`` reaches in each of its returns is a tensor (or likely one)."""
        module, name, steps = origin
        path = module_file(importer, module)
        ctx = self._context(path) if path is not None else None
        if ctx is None:
            return None
        bindings = ctx.resolver.module_scope.bindings.get(name, [])
        if len(bindings) != 1 or not isinstance(bindings[0].node, ast.FunctionDef):
            return None  # (re-exported, defined twice, or not a plain function)
        function = bindings[0].node
        if returned_evidence(ctx, function, steps) not in (Evidence.TENSOR, Evidence.LIKELY):
            return None
        return f"{_shown(path)}:{function.lineno}"

    def _context(self, path: str) -> Context | None:
        if path not in self._files:
            self._files[path] = _read(path)
        return self._files[path]


def _read(path: str) -> Context | None:
    try:
        if os.path.getsize(path) > _MAX_BYTES:
            return None
        with open(path, "rb") as handle:
            source = SourceFile.from_bytes(path, handle.read())
        tree = ast.parse(source.text, filename=path)
    except (OSError, DecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # (then nothing is known of its functions: the finding stays possible)
    return Context(source, tree, Resolver(tree))


def module_file(importer: str, module: str) -> str | None:
    """The file that defines ``module`` for the file ``importer``: relative to its directory for
    `.m` and `..m`, else under the nearest directory above it, up to its project's root, that holds
    the module's path (`gpytorch/utils/linear_cg.py` for `gpytorch.utils.linear_cg`, from `test/`)."""
    level = len(module) - len(module.lstrip("."))
    parts = module.lstrip(".").split(".")
    directory = os.path.dirname(os.path.abspath(importer))
    if level:
        for _ in range(level - 1):
            directory = os.path.dirname(directory)
        return _module_in(directory, parts)
    root = project_root(Path(directory))
    for candidate in (Path(directory), *Path(directory).parents):
        found = _module_in(str(candidate), parts)
        if found is not None or candidate == root:
            return found  # (not above the project: those files are someone else's)
    return None


def _module_in(directory: str, parts: list[str]) -> str | None:
    base = os.path.join(directory, *parts)
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _shown(path: str) -> str:
    """``path`` as the run shows paths: relative to the working directory when under it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative
