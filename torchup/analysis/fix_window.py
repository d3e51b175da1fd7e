"""Whether a fix runs on every release a project supports: what it writes, and since when that exists.

A fix is safe for a project only where everything it writes exists from the project's floor (the oldest
release it must run on) to the target: `torch.amp.GradScaler("cuda")` needs 2.3, `torch.onnx.export(...,
dynamo=False)` 2.4. The engine reads what a fix writes off the fix: the smallest expression or simple
statement that holds all of its edits is compared with its text after them; the torch names it spells
(qualified through the file's imports and those the fix adds) and the keywords of its calls to torch
functions that only the fixed text has are what the fix writes (`torch.amp.GradScaler`,
`torch.onnx.export(dynamo=)`). A rule names only what the edits cannot show (``Fix.requires``: a method
of an object of unknown type, an argument by position). ``torchup/data/introduced.json`` (made by
tools/api_introduced.py from the wheels) says which release first has each; a name it does not list is
taken to be there (tests/test_support_window.py keeps every name the examples' fixes write in that file).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from torchup.analysis.old_torch import enclosing
from torchup.core.data import data_text

if TYPE_CHECKING:
    from torchup.analysis.resolver import Resolver
    from torchup.core.diagnostics import Fix
    from torchup.core.source import SourceFile

# torch's own wheel (functorch ships in it); the companion libraries have releases of their own.
_PACKAGES = frozenset({"torch", "functorch"})
Qualify = Callable[[str], "str | None"]
_SIMPLE = (ast.Import, ast.ImportFrom, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)


# How a finding whose fix the floor lacks says so (torchup.analysis.context): the project pass reads it
# (torchup.analysis.project: a mock of a name whose use keeps no fix for the floor moves with none).
NEEDS_NOTE = "fix needs torch>="


def release_key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))


@cache
def introduced() -> dict[str, str]:
    """API -> the first release that has it (``introduced.json``'s ``names``; unknown ones left out)."""
    try:
        document = json.loads(data_text("introduced.json"))
    except (OSError, ValueError):
        return {}
    names = document.get("names", {}) if isinstance(document, dict) else {}
    return {key: entry["since"] for key, entry in names.items() if isinstance(entry, dict) and entry.get("since")}


@dataclass(frozen=True)
class Need:
    """What a fix writes that the floor lacks: the release it needs, and the APIs that need it."""

    release: str
    apis: tuple[str, ...]

    def describe(self) -> str:
        names = ", ".join(f"`{api}`" for api in self.apis[:3])
        return f"torch>={self.release} ({names})"

    def note(self, after: str) -> str:
        """The finding's note: ``NEEDS_NOTE``, the release and the APIs, then ``after``."""
        return f"{NEEDS_NOTE}{self.describe().removeprefix('torch>=')}{after}"


def fix_need(source: SourceFile, tree: ast.Module, resolver: Resolver, node: ast.AST, fix: Fix,
             floor: str) -> Need | None:
    """The newest release among those the APIs ``fix`` writes need, where newer than ``floor``;
    None when the fix runs on the floor (or what it writes cannot be read: nothing is known)."""
    known = introduced()
    if not known or not (fix.edits or fix.requires):
        return None
    floor_key = release_key(floor)
    if floor_key >= _newest_release():
        return None  # (a floor at or past every release in the data: no need to read the fix)
    written = set(fix.requires)
    if fix.edits:
        written |= written_apis(source, tree, resolver, node, fix)
    needing = [(known[api], api) for api in written if api in known and release_key(known[api]) > floor_key]
    if not needing:
        return None
    release = max((since for since, _ in needing), key=release_key)
    apis = {api for since, api in needing if since == release}
    # (a function the floor lacks lacks its keywords too: name the function alone)
    return Need(release, tuple(sorted(api for api in apis if api.partition("(")[0] == api or
                                      api.partition("(")[0] not in apis)))


@cache
def _newest_release() -> tuple[int, ...]:
    """The newest first release in the data (a floor at or past it needs no fix read)."""
    return max((release_key(since) for since in introduced().values()), default=())


def written_apis(source: SourceFile, tree: ast.Module, resolver: Resolver, node: ast.AST, fix: Fix) -> frozenset[str]:
    """The torch APIs the fixed code uses that the original did not (see the module docstring)."""
    start, end = min(edit.start for edit in fix.edits), max(edit.end for edit in fix.edits)
    holder = _holder(source, tree, node, start, end)
    if holder is None:
        return frozenset()
    low, high = source.node_range(holder)
    after = source.text[low:high]
    for edit in sorted(fix.edits, reverse=True):
        after = after[: edit.start - low] + edit.content + after[edit.end - low:]
    new_tree = _parse(after, holder)  # (the original is the holder itself: no parse)
    if new_tree is None:
        return frozenset()
    scope = resolver.scope_of(holder)
    bound = _bound_by_imports(fix)

    def qualify(name: str) -> str | None:
        return bound.get(name) or resolver.name_in_scope(name, scope) or (name if name in _PACKAGES else None)

    return _apis(new_tree, qualify) - _apis(holder, qualify)


def _holder(source: SourceFile, tree: ast.Module, node: ast.AST, start: int, end: int) -> ast.AST | None:
    """The smallest expression or simple statement around ``node`` that spans ``start:end``."""
    chain = [child for _, child in enclosing(tree, node)] if hasattr(node, "lineno") else []
    for candidate in reversed(chain):
        if _holds(source, candidate, start, end):
            return candidate
    # (the descent stops at a node without a position, a `with` item: look below the deepest it reached)
    below = [candidate for candidate in ast.walk(chain[-1] if chain else tree) if _holds(source, candidate, start, end)]
    return min(below, key=lambda c: _length(source, c), default=None)


def _holds(source: SourceFile, candidate: ast.AST, start: int, end: int) -> bool:
    if not isinstance(candidate, (ast.expr, *_SIMPLE)) or not hasattr(candidate, "end_lineno"):
        return False
    low, high = source.node_range(candidate)
    return low <= start and end <= high


def _length(source: SourceFile, node: ast.AST) -> int:
    low, high = source.node_range(node)
    return high - low


def _parse(text: str, holder: ast.AST) -> ast.AST | None:
    try:
        if isinstance(holder, ast.expr):
            return ast.parse(f"(\n{text}\n)", mode="eval")
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _bound_by_imports(fix: Fix) -> dict[str, str]:
    """The names the fix's own imports bind: `from torch.amp import GradScaler`, `import torch.amp`."""
    bound = {}
    for request in fix.imports:
        if request.name is None:
            top = request.module.partition(".")[0]
            bound[top] = top
        else:
            bound[request.name] = f"{request.module}.{request.name}"
    return bound


def _apis(tree: ast.AST, qualify: Qualify) -> frozenset[str]:
    """The torch names ``tree`` spells, whole (`torch.linalg.cholesky`, not its modules: a name is
    there only where they are), imports, and the keywords of calls to torch functions."""
    found: set[str] = set()
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute | ast.Name) and id(node) not in inner:
            name = _dotted(node, qualify)
            if name is not None:
                found.add(name)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.update(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        if isinstance(node, ast.Call):
            callee = _dotted(node.func, qualify)
            if callee is not None:
                found.update(f"{callee}({keyword.arg}=)" for keyword in node.keywords if keyword.arg)
    return frozenset(name for name in found if name.partition(".")[0].partition("(")[0] in _PACKAGES)


def _dotted(node: ast.expr, qualify: Qualify) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    base = qualify(node.id)
    return None if base is None else ".".join([base, *reversed(parts)])
