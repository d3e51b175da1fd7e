"""Code that only runs on an old torch: a finding there is not reported.

Projects that support several releases keep the old spelling next to the new one:

    try:
        from torch.amp import GradScaler          # new torch
    except ImportError:
        from torch.cuda.amp import GradScaler     # old torch only

    if version.parse(torch.__version__) >= version.parse("2.4"):
        ...                                       # new torch
    else:
        ...                                       # old torch only

Such code is already migrated: the old branch never runs on the target. Reporting it would be noise
that a user can only silence, so it is not reported at all (the rule docs and README say so). Also
not reported: a removed name used inside a ``try`` whose handler catches its absence (``ImportError``,
``AttributeError``), for a change that raises: that code works on both releases.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable

Segment = Callable[[ast.AST], str]
_TORCH_PACKAGES = frozenset({"torch", "functorch", "torchvision", "torchaudio"})
_FALLBACK_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})
# Flags projects define for the running release: `_TORCH_GREATER_EQUAL_2_4`, `TORCH_GE_1_13`, ...
# and helpers that compare it: `torch_version_geq(1, 13)`, `is_torch_greater_or_equal("2.4")`.
_NEW_FLAG = re.compile(r"torch\w*(GREATER|_GE\b|_GE_|GEQ|AT_LEAST|NEWER|_GTE)", re.IGNORECASE)
_OLD_FLAG = re.compile(r"torch\w*(LESS|_LT\b|_LT_|_LTE|OLDER|BELOW|BEFORE)", re.IGNORECASE)
# What spells torch's own version: `torch.__version__`, `TORCH_VERSION`, `version("torch")`, ...
_TORCH_VERSION = re.compile(
    r"torch\.__version__|torch\.version|torch_version|version\(\s*['\"]torch['\"]", re.IGNORECASE
)


def enclosing(tree: ast.AST, node: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """(parent, child) pairs from ``tree`` down to ``node``. A descent through the children that span
    the node, not a map of the whole tree: asked only for the nodes a rule reports."""
    target = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    chain: list[tuple[ast.AST, ast.AST]] = []
    current = tree
    while current is not node:
        child = _spanning_child(current, node, target)
        if child is None:
            break  # (a node without a position: nothing more to learn)
        chain.append((current, child))
        current = child
    return chain


Position = tuple[int, int, int, int]


def _spanning_child(parent: ast.AST, node: ast.AST, target: Position) -> ast.AST | None:
    """The first child of ``parent`` (in ``ast.iter_child_nodes``'s order) that is ``node`` or spans it."""
    for _, value in ast.iter_fields(parent):
        if isinstance(value, ast.AST):
            if value is node or _spans(value, target):
                return value
        elif isinstance(value, list):
            child = _spanning_item(value, node, target)
            if child is not None:
                return child
    return None


def _spanning_item(items: list[object], node: ast.AST, target: Position) -> ast.AST | None:
    """``_spanning_child`` within one list field. Its items stand in source order, so the one that
    may span ``node`` is the last that starts at or before it: a bisection, where a linear search made
    a file's findings cost their number times its statements (1,136 findings in one 2,773-line dict
    literal of torch's sources: 0.4 s). Anything that breaks the order's premise (an item without a
    position, `None` in a dict's keys, siblings at one position) takes the linear search."""
    try:
        index = bisect.bisect_right(items, target[:2], key=_start) - 1  # type: ignore[arg-type]
        if index < 0:
            return None  # (every item starts after the node)
        found, earlier = items[index], items[index - 1] if index else None
        if found is node or _spans(found, target):  # type: ignore[arg-type]
            if earlier is None or not (earlier is node or _spans(earlier, target)):  # type: ignore[arg-type]
                return found  # type: ignore[return-value]
        elif earlier is None or _start(earlier) < _start(found):  # type: ignore[arg-type]
            return None  # (no sibling shares its start: none spans the node)
    except (AttributeError, TypeError):
        pass  # (an item without a position, or not a node)
    for item in items:
        if isinstance(item, ast.AST) and (item is node or _spans(item, target)):
            return item
    return None


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def _spans(child: ast.AST, target: Position) -> bool:
    return (
        hasattr(child, "end_lineno")
        and (child.lineno, child.col_offset) <= target[:2]  # type: ignore[attr-defined]
        and target[2:] <= (child.end_lineno, child.end_col_offset)  # type: ignore[attr-defined]
    )


def runs_only_on_old_torch(tree: ast.AST, node: ast.AST, segment: Segment, raises: bool) -> bool:
    """Whether ``node`` sits where only an old torch runs it (see the module docstring).
    ``segment`` gives a node's source text; ``raises``: the finding's change makes the old code fail."""
    if not hasattr(node, "lineno"):
        return False
    for parent, child in enclosing(tree, node):
        if isinstance(parent, ast.Try | _TRY_STAR):
            if child in parent.handlers and _is_fallback(parent, child, segment):  # type: ignore[operator]
                return True
            if raises and child in parent.body and any(_catches_absence(h) for h in parent.handlers):
                return True
        if isinstance(parent, ast.If | ast.IfExp):
            old = _old_branch(parent.test, segment)
            if old == "body" and _in_branch(child, parent.body):
                return True
            if old == "orelse" and _in_branch(child, parent.orelse):
                return True
    return False


_TRY_STAR = getattr(ast, "TryStar", ast.Try)


def _in_branch(child: ast.AST, branch: list[ast.stmt] | ast.expr) -> bool:
    return child is branch if isinstance(branch, ast.expr) else child in branch


def _names_of(handler_type: ast.expr | None) -> set[str]:
    if handler_type is None:
        return {"BaseException"}
    items = handler_type.elts if isinstance(handler_type, ast.Tuple) else [handler_type]
    names = set()
    for item in items:
        if isinstance(item, ast.Name):
            names.add(item.id)
        elif isinstance(item, ast.Attribute):
            names.add(item.attr)
    return names


def _is_fallback(statement: ast.Try, handler: ast.AST, segment: Segment) -> bool:
    """An ``except ImportError:`` after a ``try`` that imports from torch, or an ``except
    AttributeError:`` after a ``try`` that only names torch attributes (``x = torch.amp.autocast``).
    A handler after other code (``torch.load`` of an old pickle) is no such fallback."""
    if not isinstance(handler, ast.ExceptHandler):
        return False
    caught = _names_of(handler.type)
    imports = any(_imports_torch(stmt) for stmt in statement.body)
    if caught & {"ImportError", "ModuleNotFoundError"} and imports:
        return True
    probes = all(_names_torch(stmt, segment) for stmt in statement.body)
    return bool(caught & {"AttributeError", "TypeError"}) and probes


def _imports_torch(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Import):
        return any(alias.name.split(".")[0] in _TORCH_PACKAGES for alias in statement.names)
    if isinstance(statement, ast.ImportFrom):
        return not statement.level and (statement.module or "").split(".")[0] in _TORCH_PACKAGES
    return False


def _names_torch(statement: ast.stmt, segment: Segment) -> bool:
    """``x = torch.amp.autocast`` or ``x = partial(torch.autocast, device_type=...)``, or ``return
    torch.load(f, weights_only=True)``: a statement that only takes something from torch (timm's
    probe for torch >= 1.10; a keyword that an old torch lacks raises TypeError there)."""
    value = statement.value if isinstance(statement, ast.Assign | ast.AnnAssign | ast.Expr | ast.Return) else None
    return value is not None and "torch." in segment(value)


def _catches_absence(handler: ast.ExceptHandler) -> bool:
    """A handler for a missing module or name: the try is a probe for the API. A broader one
    (`except RuntimeError`, `except Exception`) also catches what the call itself raises on bad
    input, so the code depends on the call working (mocklib's `torch.cholesky` with a fallback)."""
    return bool(_names_of(handler.type) & _FALLBACK_ERRORS)


def _old_branch(test: ast.expr, segment: Segment) -> str | None:
    """Which branch of ``if test`` runs only on an old torch: "body", "orelse" or None (unknown)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _old_branch(test.operand, segment)
        return {"body": "orelse", "orelse": "body"}.get(inner or "")
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr" and test.args:
        # `if hasattr(torch, "compile"):` new torch has it; the else branch is for old ones.
        return "orelse" if "torch" in segment(test.args[0]) else None
    if _starts_with_an_old_major(test, segment):
        return "body"  # `if torch.__version__.startswith("1."):` (a "2.1" prefix would match 2.13 too)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name | ast.Attribute):
        test = test.func  # `torch_version_geq(1, 13)`: the helper's name says which way
    if isinstance(test, ast.Name | ast.Attribute):
        name = test.id if isinstance(test, ast.Name) else test.attr
        if _NEW_FLAG.search(name):
            return "orelse"
        if _OLD_FLAG.search(name):
            return "body"
        return None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left = segment(test.left)
        right = segment(test.comparators[0])
        if _TORCH_VERSION.search(left) and not _TORCH_VERSION.search(right):
            version_left = True
        elif _TORCH_VERSION.search(right) and not _TORCH_VERSION.search(left):
            version_left = False
        else:
            return None
        op = test.ops[0]
        if isinstance(op, ast.Lt | ast.LtE):
            return "body" if version_left else "orelse"
        if isinstance(op, ast.Gt | ast.GtE):
            return "orelse" if version_left else "body"
    return None


def _starts_with_an_old_major(test: ast.expr, segment: Segment) -> bool:
    """`torch.__version__.startswith("1.")` (or a tuple of such prefixes): true only before torch 2."""
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith"
            and len(test.args) == 1 and _TORCH_VERSION.search(segment(test.func.value))):
        return False
    argument = test.args[0]
    prefixes = argument.elts if isinstance(argument, ast.Tuple) else [argument]
    return all(isinstance(p, ast.Constant) and isinstance(p.value, str) and p.value.startswith(("0.", "1."))
               for p in prefixes)
