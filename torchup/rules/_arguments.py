"""Small helpers shared by rules: argument edits for rules that add a keyword to a call (TU140, TU201),
and renames of attributes, imported names and string literals (TU15x-TU17x)."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits
from torchup.analysis.resolver import BindingKind, Resolver
from torchup.core.diagnostics import Applicability, Edit, Fix
from torchup.core.source import SourceFile


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


# -- renames (TU150-TU173) ----------------------------------------------------------------------------


def attributes_named(ctx: Context, name: str) -> list[ast.Attribute]:
    """Every ``x.name`` in the file, read, written or deleted (the resolver records reads only);
    ``name`` must be a trigger word of the rule asking (see ``Context.walk``)."""
    return [node for node in ctx.walk() if isinstance(node, ast.Attribute) and node.attr == name]


def rename_attribute(source: SourceFile, node: ast.Attribute, new_name: str) -> Edit | None:
    """``a.b.old`` -> ``a.b.new``: an edit of the trailing name only (None if it is not spelt plainly)."""
    _, end = source.node_range(node)
    start = end - len(node.attr)
    return Edit(start, end, new_name) if source.text[start:end] == node.attr else None


def rename_imported_name(source: SourceFile, alias: ast.alias, new_name: str) -> Edit | None:
    """``from m import old as x`` -> ``from m import new as x`` (the name before ``as`` only)."""
    start, _ = source.node_range(alias)
    end = start + len(alias.name)
    return Edit(start, end, new_name) if source.text[start:end] == alias.name else None


def rename_string(source: SourceFile, node: ast.Constant, new_value: str) -> Edit | None:
    """A plain string literal (``"old"``, ``'old'``, ``r"old"``) spelt with ``new_value`` instead;
    None for implicit concatenation, escapes, or anything else that is not the value between quotes."""
    if not isinstance(node.value, str):
        return None
    text = source.segment(node)
    stripped = text.lstrip("rRuU")
    prefix = text[: len(text) - len(stripped)]
    for quote in ('"""', "'''", '"', "'"):
        if stripped.startswith(quote) and stripped.endswith(quote) and stripped[len(quote):-len(quote)] == node.value:
            start, end = source.node_range(node)
            return Edit(start, end, f"{prefix}{quote}{new_value}{quote}")
    return None


def from_imports(resolver: Resolver, qualnames: frozenset[str]) -> list[tuple[ast.alias, str]]:
    """``from module import name [as other]`` statements that bind one of ``qualnames`` and run
    (an import under ``if TYPE_CHECKING:`` never does, so it cannot fail)."""
    found = []
    for binding in resolver.import_bindings:
        if binding.kind is BindingKind.FROM_IMPORT and binding.target in qualnames \
                and isinstance(binding.node, ast.alias) and not binding.typing_only:
            found.append((binding.node, binding.target))
    found.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
    return found


def rename_reference(ctx: Context, node: ast.expr, qualname: str, new_name: str) -> Fix | None:
    """A safe fix that refers to ``new_name`` of the same module instead: ``dist.old`` -> ``dist.new``;
    a name bound by ``from module import old`` -> ``new`` (imported when missing; the old import is
    removed when nothing else uses it). For renames where both names are the same function."""
    if isinstance(node, ast.Attribute):
        edit = rename_attribute(ctx.source, node, new_name)
        return Fix(f"use `{new_name}`", Applicability.SAFE, (edit,), replaces=qualname) if edit else None
    if not isinstance(node, ast.Name):
        return None
    reference = ctx.symbol_reference(f"{qualname.rpartition('.')[0]}.{new_name}", node)
    if reference is None:
        return None
    text, imports = reference
    edit = Edits(ctx.source).replace(node, text)
    return Fix(f"use `{text}`", Applicability.SAFE, (edit,), imports, (id(node),), replaces=qualname)
