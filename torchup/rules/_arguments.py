"""Small argument edits shared by rules that add a keyword to a call (TU140, TU201)."""

from __future__ import annotations

import ast

from torchup.diagnostics import Edit
from torchup.patterns import Edits
from torchup.source import SourceFile


def call_items(call: ast.Call) -> list[ast.AST]:
    """The call's arguments and keywords in source order."""
    items: list[ast.AST] = [*call.args, *call.keywords]
    items.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
    return items


def append_argument(source: SourceFile, call: ast.Call, text: str) -> Edit | None:
    """Add ``text`` (``name=value``) as the call's last argument, right after the current last one.

    Comments, line breaks and a trailing comma stay where they are. None where the insertion point
    is not certain (a sole unparenthesised generator expression shares the call's parentheses).
    """
    items = call_items(call)
    if not items:
        _, call_end = source.node_range(call)
        position = Edits(source).open_paren_after(call.func, call_end)
        return None if position is None else Edit(position, position, text)
    if len(call.args) == 1 and isinstance(call.args[0], ast.GeneratorExp) and not call.keywords:
        return None
    _, end = source.node_range(items[-1])
    return Edit(end, end, f", {text}")
