"""Building blocks rules share: binding call arguments to parameters, and small exact edits."""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass

from torchup.core.diagnostics import Edit
from torchup.core.source import SourceFile, line_end_at, line_start_at

MISSING = object()


@dataclass(frozen=True)
class BoundArgument:
    """One argument of a call, matched to its parameter."""

    name: str
    value: ast.expr
    keyword: ast.keyword | None  # None when passed positionally

    @property
    def positional(self) -> bool:
        return self.keyword is None


@dataclass
class BoundCall:
    """A call's arguments, matched to a signature's parameters."""

    call: ast.Call
    arguments: dict[str, BoundArgument]
    has_star_args: bool
    has_star_kwargs: bool

    def get(self, name: str) -> BoundArgument | None:
        return self.arguments.get(name)


def bind_call(call: ast.Call, positional: list[str], keyword_only: tuple[str, ...] = ()) -> BoundCall | None:
    """Match a call's arguments to a signature; None if it cannot match (too many, unknown names)."""
    arguments: dict[str, BoundArgument] = {}
    has_star_args = False
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            has_star_args = True
            break
        if index >= len(positional):
            return None
        arguments[positional[index]] = BoundArgument(positional[index], arg, None)
    has_star_kwargs = False
    for keyword in call.keywords:
        if keyword.arg is None:
            has_star_kwargs = True
            continue
        if keyword.arg not in positional and keyword.arg not in keyword_only:
            return None
        if keyword.arg in arguments:
            return None
        arguments[keyword.arg] = BoundArgument(keyword.arg, keyword.value, keyword)
    return BoundCall(call, arguments, has_star_args, has_star_kwargs)


def is_super_init(call: ast.Call) -> bool:
    """``super().__init__(...)`` or ``super(Cls, self).__init__(...)``."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    )


def literal_bool(node: ast.expr) -> bool | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return None


def literal_dict_keyword(call: ast.Call, name: str) -> tuple[ast.Dict, ast.expr, ast.expr] | None:
    """``**{"name": value}`` in ``call``: (the dict, the key node, the value node)."""
    for keyword in call.keywords:
        if keyword.arg is None and isinstance(keyword.value, ast.Dict):
            for key, value in zip(keyword.value.keys, keyword.value.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == name:
                    return keyword.value, key, value
    return None


# Expressions that may stand unparenthesised as the test of a conditional expression.
_TIGHT = (
    ast.Name,
    ast.Attribute,
    ast.Call,
    ast.Constant,
    ast.Subscript,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.BinOp,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.Set,
    ast.JoinedStr,
    ast.Await,
)


# Expressions that need parentheses to stand as a keyword argument's value or a call argument.
_LOOSE_ARGUMENT = (ast.NamedExpr, ast.Yield, ast.YieldFrom)


def as_argument(source: SourceFile, node: ast.expr) -> str:
    """Source text of ``node`` fit to be a (keyword) argument of a new call."""
    text = source.segment(node)
    return f"({text})" if isinstance(node, _LOOSE_ARGUMENT) else text


def as_condition(source: SourceFile, node: ast.expr) -> str:
    """Source text of ``node`` fit to be the test of ``a if <test> else b``."""
    text = source.segment(node)
    if isinstance(node, ast.Tuple) and not text.startswith("("):
        return f"({text})"
    return text if isinstance(node, _TIGHT) else f"({text})"


def has_comment(source: SourceFile, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (a whole expression or argument list) holds a ``#`` comment."""
    text = source.text[start:end]
    if "#" not in text:
        return False
    try:
        tokens = tokenize.generate_tokens(io.StringIO(f"({text}\n)").readline)
        return any(token.type == tokenize.COMMENT for token in tokens)
    except (tokenize.TokenError, SyntaxError):
        return True  # cannot tell: assume the worst


class Edits:
    """Edit builders on one source file; each returns None where no exact edit exists."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source

    def replace(self, node: ast.AST, content: str) -> Edit:
        start, end = self.source.node_range(node)
        return Edit(start, end, content)

    def argument_range(self, call: ast.Call, node: ast.AST) -> tuple[int, int]:
        """The range of a positional argument with the parentheses around it (``(False)``)."""
        text = self.source.text
        start, end = self.source.node_range(node)
        _, call_end = self.source.node_range(call)
        func_end = self.source.node_range(call.func)[1]
        while True:
            before, after = start - 1, end
            while before > func_end and text[before] in " \t\r\n":
                before -= 1
            while after < call_end - 1 and text[after] in " \t\r\n":
                after += 1
            own_paren = text.find("(", func_end, call_end)
            if before > own_paren and text[before] == "(" and after < call_end - 1 and text[after] == ")":
                start, end = before, after + 1
            else:
                return start, end

    def positional_to_keyword(self, call: ast.Call, value: ast.expr, name: str) -> list[Edit]:
        """``f(A, True)`` -> ``f(A, upper=True)``, parenthesising what a keyword value cannot hold bare."""
        start, end = self.argument_range(call, value)
        if (start, end) == self.source.node_range(value) and isinstance(value, _LOOSE_ARGUMENT):
            return [Edit(start, start, f"{name}=("), Edit(end, end, ")")]
        return [Edit(start, start, f"{name}=")]

    def replace_argument(self, call: ast.Call, node: ast.AST, content: str) -> Edit:
        """Replace a whole argument (positional with its parentheses, or a keyword) with ``content``."""
        if isinstance(node, ast.keyword):
            return self.replace(node, content)
        start, end = self.argument_range(call, node)
        return Edit(start, end, content)

    def rename_keyword(self, keyword: ast.keyword, new_name: str) -> Edit:
        start, _ = self.source.node_range(keyword)
        assert keyword.arg is not None
        return Edit(start, start + len(keyword.arg), new_name)

    def open_paren_after(self, node: ast.AST, limit: int) -> int | None:
        """Offset just past the ``(`` that follows ``node`` (a call's callee), if only spaces intervene."""
        _, position = self.source.node_range(node)
        text = self.source.text
        while position < limit and text[position] in " \t":
            position += 1
        if position < limit and text[position] == "(":
            return position + 1
        return None

    def remove_argument(self, call: ast.Call, argument: ast.AST) -> Edit | None:
        """Delete one argument of ``call`` with its comma, keeping every comment."""
        items: list[ast.AST] = [*call.args, *call.keywords]
        items.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
        _, call_end = self.source.node_range(call)
        close = call_end - 1  # the ")"
        if len(items) == 1:  # the only argument: the parentheses end up empty, `f()`, on one line
            text = self.source.text
            open_paren = text.find("(", self.source.node_range(call.func)[1], close)
            inside = text[open_paren + 1 : close] if open_paren >= 0 else "#"
            if "#" not in inside:  # (a `#`, even in a string, leaves it to the careful path below)
                return Edit(open_paren + 1, close, "")
        return remove_list_item(self.source, items, items.index(argument), close)


def remove_list_item(source: SourceFile, items: list[ast.AST], index: int, close: int) -> Edit | None:
    """Delete ``items[index]`` from a comma-separated list that ends at offset ``close``."""
    text = source.text
    start, end = source.node_range(items[index])
    if has_comment(source, start, end):
        return None  # deleting the item would delete a comment inside it
    line_start = line_start_at(text, start)
    own_line = text[line_start:start].strip() == ""
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if after < len(text) and text[after] == ",":
        after += 1
    rest_of_line_end, next_line_start = line_end_at(text, after)
    rest = text[after:rest_of_line_end].strip()
    if own_line and rest.startswith("#") and text[end:after].strip() == ",":
        return Edit(start, text.index("#", after), "")  # keep the line's comment
    if own_line and rest == "" and len(items) > 1:
        if index == len(items) - 1 and text[end:after].strip() != ",":
            # Last item without a trailing comma: the previous item's comma must go instead.
            previous_end = source.node_range(items[index - 1])[1]
            gap = text[previous_end:line_start]
            if "#" in gap or "," not in gap:
                return None
            comma = previous_end + gap.index(",")
            return Edit(comma, rest_of_line_end, "") if "#" not in rest else None
        return Edit(line_start, next_line_start, "")
    if index + 1 < len(items):
        next_start = source.node_range(items[index + 1])[0]
        gap = text[end:next_start]
        return Edit(start, next_start, "") if "#" not in gap else None
    if index > 0:
        previous_end = source.node_range(items[index - 1])[1]
        gap = text[previous_end:start]
        return Edit(previous_end, end, "") if "#" not in gap else None
    gap = text[end:close]
    return Edit(start, close, "") if "#" not in gap and gap.strip() in ("", ",") else None
