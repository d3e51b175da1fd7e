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

Such code is already migrated: the old branch never runs on the target. Version tests are evaluated to the
release below which alone a branch runs (torchup.analysis.version_gates): ``else`` and ``elif`` chains, and
an early exit (``if new_enough: return new()``) that leaves the rest of the block to old releases. While
the project's floor is below that release the branch is old code that still runs; from it on, it is
dead code (TU801 removes it). Either way its findings are not reported. Reporting it would be noise
that a user can only silence, so it is not reported at all (the rule docs and README say so). Also
not reported: a removed name used inside a ``try`` whose handler catches its absence (``ImportError``,
``AttributeError``), for a change that raises: that code works on both releases.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable

from torchup.analysis.version_gates import (
    Gate,
    GateFacts,
    LazyGateFacts,
    QualifiedName,
    Release,
    evaluate_gate,
    file_qualified_name,
    parse_release,
)

Segment = Callable[[ast.AST], str]
GateOf = Callable[[ast.expr], "Gate | None"]  # an `if` test's gate, if it is one that concerns the target
_TORCH_PACKAGES = frozenset({"torch", "functorch", "torchvision", "torchaudio"})
_FALLBACK_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})
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


def runs_only_on_old_torch(
    tree: ast.AST, node: ast.AST, segment: Segment, raises: bool, gate_of: GateOf | None = None
) -> bool:
    """Whether ``node`` sits where only an old torch runs it (see the module docstring).
    ``segment`` gives a node's source text; ``raises``: the finding's change makes the old code fail;
    ``gate_of``: how to read an ``if`` test (``gate_reader``; by default, from the file alone)."""
    if not hasattr(node, "lineno"):
        return False
    if gate_of is None:
        gate_of = gate_reader(tree)  # type: ignore[arg-type]
    for parent, child in enclosing(tree, node):
        if isinstance(parent, ast.Try | _TRY_STAR):
            if child in parent.handlers and _is_fallback(parent, child, segment):  # type: ignore[operator]
                return True
            if raises and child in parent.body and any(_catches_absence(h) for h in parent.handlers):
                return True
        if isinstance(parent, ast.If | ast.IfExp):
            gate = gate_of(parent.test)
            if gate is not None and _in_branch(child, getattr(parent, gate.old)):
                return True
        in_block = isinstance(child, ast.stmt) and not isinstance(parent, ast.Module)  # (no `return` there)
        if in_block and _after_old_exit(parent, child, gate_of):  # type: ignore[arg-type]
            return True
    return False


def gate_reader(
    tree: ast.Module, qualified_name: QualifiedName | None = None, target: str | None = None, path: str | None = None
) -> GateOf:
    """How ``runs_only_on_old_torch`` reads an ``if`` test: its gate (``evaluate_gate``, with the file's own
    facts, collected once per tree) when the old branch runs only below a release the target has left
    behind (``target``: the release migrated to; None: any 2.x), else None. ``qualified_name``: the
    resolver's (``Context.qualified_name``); by default the file's module-level imports. ``path``: the
    file's, to read the helpers and flags other modules of its project define (torchup.analysis.project_gates)."""
    resolve = qualified_name or file_qualified_name(tree)
    newest: Release = (parse_release(target) if target else None) or (2, 1 << 30)

    def gate_of(test: ast.expr) -> Gate | None:
        gate = evaluate_gate(test, resolve, file_gate_facts(tree, path))
        if gate is None or (gate.release is not None and gate.release > newest):
            return None  # (`if TORCH_MAJOR == 2:` also runs on the target)
        return gate

    return gate_of


def file_gate_facts(tree: ast.Module, path: str | None = None) -> GateFacts:
    """The file's own gate facts (collected when a test first needs one), and with ``path`` those the
    modules of its project define (torchup.analysis.project_gates), kept on the tree."""
    facts = getattr(tree, "_torchup_gate_facts", None)
    if facts is None:
        facts = LazyGateFacts(tree)
        if path is not None:
            from torchup.analysis.project_gates import ProjectGateFacts  # (a file that asks: most never do)

            facts = ProjectGateFacts(facts, path)
        tree._torchup_gate_facts = facts  # type: ignore[attr-defined]
    return facts


def _after_old_exit(parent: ast.AST, child: ast.stmt, gate_of: GateOf) -> bool:
    """``if new_enough: return new()`` before ``child`` in its block: ``child`` runs only on old torch."""
    block = next((b for b in _blocks(parent) if child in b), None)
    if block is None:
        return False
    for statement in block[: block.index(child)]:
        if isinstance(statement, ast.If) and exits(statement.body):
            gate = gate_of(statement.test)
            if gate is not None and gate.old == "orelse":
                return True
        if isinstance(statement, ast.If) and statement.orelse and exits(statement.orelse):
            gate = gate_of(statement.test)
            if gate is not None and gate.old == "body":
                return True
    return False


def _blocks(parent: ast.AST) -> list[list[ast.stmt]]:
    blocks = [getattr(parent, name, None) for name in ("body", "orelse", "finalbody")]
    return [block for block in blocks if isinstance(block, list)] + [h.body for h in getattr(parent, "handlers", [])]


def exits(block: list[ast.stmt]) -> bool:
    """Whether a block always leaves its enclosing block: it ends in ``return``, ``raise``, ``continue``
    or ``break`` (or an ``if`` whose branches all do)."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ast.Return | ast.Raise | ast.Continue | ast.Break):
        return True
    return isinstance(last, ast.If) and exits(last.body) and exits(last.orelse)


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
    if isinstance(value, ast.Call) and segment(value.func).rpartition(".")[2] == "partial" and value.args:
        value = value.args[0]
    # What torch itself gives: not `obj.load_state_dict(torch.load(f), strict=True)`, whose TypeError
    # is the project's own method's (speechbrain), and whose handler is no old-torch branch.
    taken = value.func if isinstance(value, ast.Call) else value
    return taken is not None and segment(taken).startswith("torch.")


def _catches_absence(handler: ast.ExceptHandler) -> bool:
    """A handler for a missing module or name: the try is a probe for the API. A broader one
    (`except RuntimeError`, `except Exception`) also catches what the call itself raises on bad
    input, so the code depends on the call working (mocklib's `torch.cholesky` with a fallback)."""
    return bool(_names_of(handler.type) & _FALLBACK_ERRORS)
