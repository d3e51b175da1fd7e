"""Which assignment a use of a name sees, where straight-line code makes it certain.

The resolver knows every binding of a name in a scope, not which one reaches a use. For
`cov = torch.randn(n, n)`, `cov = cov @ cov.mT`, `cov.cholesky()`, each binding is a tensor, but
the second one's own `cov` would otherwise mean both bindings, itself included. Here: the nearest
`name = value` (or `a, name = value`) before the use, in the use's own block or a block around it
(same scope; a `with` block's body is straight-line code), counts alone when no other binding of
the name can run between the two: none stands between them in the text, and none after the use
inside a loop that holds the use but not the assignment.
"""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.resolver import Binding, BindingKind, ScopeKind

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
Position = tuple[int, int]


def reaching_assignment(ctx: Context, use: ast.Name, bindings: tuple[Binding, ...]) -> Binding | None:
    """The one `use.id = value` statement that every path to ``use`` passes last, or None."""
    scope = bindings[0].scope
    if ctx.resolver.scope_of(use) is not scope or scope.kind not in (ScopeKind.FUNCTION, ScopeKind.MODULE):
        return None  # (a nested function or comprehension runs later: any binding may be the one)
    if use.id in scope.global_names or use.id in scope.nonlocal_names:
        return None
    root = scope.node
    if not isinstance(root, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    chain = _chain(root.body, _start(use))
    if not chain:
        return None
    by_target = {id(binding.node): binding for binding in bindings
                 if binding.kind is BindingKind.ASSIGNMENT or binding.kind is BindingKind.OTHER}
    for level in range(len(chain) - 1, -1, -1):
        body, index = chain[level]
        for statement in reversed(body[:index]):
            candidate = _last_assigned(statement, use.id, by_target)
            if candidate is None:
                continue
            loops = [block[i] for block, i in chain[level:] if isinstance(block[i], _LOOPS)]
            own = chain[-1][0][chain[-1][1]]  # the use's statement: `x = f(x)` binds after reading
            if all(_cannot_intervene(b, candidate, use, loops, own) for b in bindings if b is not candidate):
                return candidate
            return None
    return None


def assigned_call(ctx: Context, expr: ast.expr) -> ast.Call | None:
    """The call whose result ``expr`` (a name) holds, where one assignment surely reaches it
    (`opt = torch.optim.SGD(...)`, then `opt.zero_grad()`)."""
    if not isinstance(expr, ast.Name):
        return None
    found = ctx.resolver.lookup_name(expr)
    binding = reaching_assignment(ctx, expr, tuple(found.bindings)) if found.bindings else None
    value = binding.value if binding is not None else None
    return value if isinstance(value, ast.Call) else None


def _start(node: ast.AST) -> Position:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _end(node: ast.AST) -> Position:
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)


def _contains(node: ast.AST, position: Position) -> bool:
    return _start(node) <= position < _end(node)


def _chain(body: list[ast.stmt], position: Position) -> list[tuple[list[ast.stmt], int]]:
    """The statement lists from ``body`` down to the statement holding ``position``, each with the
    index of the statement that holds it."""
    chain: list[tuple[list[ast.stmt], int]] = []
    current: list[ast.stmt] | None = body
    while current is not None:
        index = next((i for i, statement in enumerate(current) if _contains(statement, position)), None)
        if index is None:
            return chain
        chain.append((current, index))
        current = next((block for block in _blocks(current[index]) if block and _spans(block, position)), None)
    return chain


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists a compound statement runs (not those of a nested def or class)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    blocks = [getattr(statement, name) for name in ("body", "orelse", "finalbody") if hasattr(statement, name)]
    blocks += [handler.body for handler in getattr(statement, "handlers", ())]
    blocks += [case.body for case in getattr(statement, "cases", ())]
    return blocks


def _spans(block: list[ast.stmt], position: Position) -> bool:
    return _start(block[0]) <= position < _end(block[-1])


def _last_assigned(statement: ast.stmt, name: str, by_target: dict[int, Binding]) -> Binding | None:
    """``_assigned``, looking into a `with` block too: its body runs through as straight-line code."""
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        for inner in reversed(statement.body):
            candidate = _last_assigned(inner, name, by_target)
            if candidate is not None:
                return candidate
        return None
    return _assigned(statement, name, by_target)


def _assigned(statement: ast.stmt, name: str, by_target: dict[int, Binding]) -> Binding | None:
    """The binding of ``name = value`` or of ``a, name = value`` (one target, or one tuple of
    names: each element's ``Origin`` says what it is) that ``statement`` is, if it is one."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        target = statement.target
    else:
        return None
    if isinstance(target, ast.Name) and target.id == name:
        return by_target.get(id(target))
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            if isinstance(element, ast.Name) and element.id == name:
                return by_target.get(id(element))
    return None


def _cannot_intervene(other: Binding, candidate: Binding, use: ast.Name, loops: list[ast.stmt], own: ast.stmt) -> bool:
    """Can ``other`` not run after ``candidate`` and before ``use``?"""
    if other.kind is BindingKind.AUGMENTED:
        return True  # `x += y` keeps what x was
    if other.statement is own:
        return True
    where = _start(other.node)
    if where < _start(candidate.node):
        return True  # before it, in the text: every path from there to the use runs the candidate after it
    if where < _start(use):
        return False
    # After the use: only a loop around the use that does not hold the candidate brings it back.
    return not any(_contains(loop, where) for loop in loops)
