"""The one place that edits import statements: adds what fixes need, drops what they left unused.

An import in the body of a `try` whose `except` catches ImportError is a probe, not a use: the
fallback is the point of the block (`try: from torch.cuda.amp import autocast / except ImportError:
raise ...`, which ignite's tests exercise by hiding the module). Such an import is never dropped,
even once its name has no use left: dropping it would empty the `try` into `pass` and the fallback
would never run again."""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable, Iterator

from torchup.analysis.patterns import remove_list_item
from torchup.analysis.resolver import Binding, BindingKind, Resolver, ScopeKind
from torchup.core.diagnostics import Edit, ImportRequest
from torchup.core.memo import last_answer
from torchup.core.source import SourceFile, line_end_at, line_start_at


def import_edits(
    source: SourceFile,
    tree: ast.Module,
    resolver: Resolver,
    requests: Iterable[ImportRequest],
    released: set[int],
) -> list[Edit]:
    edits = removal_edits(source, tree, resolver, released)
    insertion = insertion_edit(source, tree, requests)
    if insertion is not None:
        edits.append(insertion)
    return edits


def insertion_edit(source: SourceFile, tree: ast.Module, requests: Iterable[ImportRequest]) -> Edit | None:
    lines: list[str] = []
    plain = sorted({r.module for r in requests if r.name is None})
    lines += [f"import {module}" for module in plain]
    from_names: dict[str, set[str]] = {}
    for request in requests:
        if request.name is not None:
            from_names.setdefault(request.module, set()).add(request.name)
    lines += [f"from {module} import {', '.join(sorted(names))}" for module, names in sorted(from_names.items())]
    if not lines:
        return None
    offset, inline = _insertion_point(source, tree)
    if inline:  # the next statement shares the line: `import torch; <statement>`
        return Edit(offset, offset, "".join(f"{line}; " for line in lines))
    newline = source.newline
    text = "".join(line + newline for line in lines)
    if offset == len(source.text) and source.text and not source.text.endswith(("\n", "\r")):
        text = newline + text.rstrip("\r\n")
    return Edit(offset, offset, text)


def _insertion_point(source: SourceFile, tree: ast.Module) -> tuple[int, bool]:
    """Just after the module's leading imports, else its docstring, else its comment header.

    Returns the offset and whether it lies inside a line (a statement follows on the same line).
    """
    anchor: ast.stmt | None = None
    following: ast.stmt | None = None
    for index, stmt in enumerate(tree.body):
        is_docstring = (
            index == 0
            and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        )
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or is_docstring:
            anchor = stmt
        else:
            following = stmt
            break
    if anchor is None:
        return _after_comment_header(source), False
    end_line = anchor.end_lineno or anchor.lineno
    if following is not None and following.lineno == end_line:
        return source.node_range(following)[0], True
    starts = source.line_starts
    return (starts[end_line] if end_line < len(starts) else len(source.text)), False


def _after_comment_header(source: SourceFile) -> int:
    """After the shebang, coding cookie and comment lines that open the file."""
    starts = source.line_starts
    offset = 0
    for index, start in enumerate(starts):
        line = source.line_text(index + 1).strip()
        if start >= len(source.text) or not (line == "" or line.startswith("#")):
            break
        offset = starts[index + 1] if index + 1 < len(starts) else len(source.text)
    return offset


@last_answer  # (a file with a thousand findings asks for each of them)
def _from_imports(resolver: Resolver) -> list[tuple[Binding, frozenset[int]]]:
    """The `from … import name` bindings a fix may leave unused (the only binding of a name no
    `__all__` exports, outside a class body: there it is an attribute too), each with the ids of
    its references."""
    exported = resolver.exported_names()
    found = []
    for scope in resolver.iter_scopes():
        if scope.kind is ScopeKind.CLASS:
            continue
        for name, bindings in scope.bindings.items():
            if len(bindings) != 1 or name in exported:
                continue
            binding = bindings[0]
            if binding.kind is not BindingKind.FROM_IMPORT or not isinstance(binding.statement, ast.ImportFrom):
                continue
            references = resolver.references(binding)
            if references:
                found.append((binding, frozenset(id(reference) for reference in references)))
    return found


def removal_edits(source: SourceFile, tree: ast.Module, resolver: Resolver, released: set[int]) -> list[Edit]:
    """Drop ``from … import name`` bindings whose every use a fix has just replaced."""
    if not released:
        return []
    unused_by_statement: dict[int, tuple[ast.ImportFrom, list[Binding]]] = {}
    for binding, references in _from_imports(resolver):
        if references <= released:
            statement = binding.statement
            assert isinstance(statement, ast.ImportFrom)
            unused_by_statement.setdefault(id(statement), (statement, []))[1].append(binding)
    edits: list[Edit] = []
    if unused_by_statement:
        probes = probing_imports(tree)
        unused_by_statement = {key: value for key, value in unused_by_statement.items() if key not in probes}
    if unused_by_statement:
        # (a name a string annotation spells, `-> "GradScaler"`, is a use the resolver does not see)
        quoted = _names_in_string_annotations(tree)
        unused_by_statement = {
            key: (statement, going) for key, (statement, bindings) in unused_by_statement.items()
            if (going := [b for b in bindings if _bound_name(b) not in quoted])
        }
    parents = _statement_parents(tree) if unused_by_statement else {}
    for statement, bindings in unused_by_statement.values():
        aliases = {id(b.node) for b in bindings}
        if len(aliases) == len(statement.names):
            edits.append(remove_statement(source, statement, parents[id(statement)]))
            continue
        close = source.node_range(statement)[1]
        items: list[ast.AST] = list(statement.names)
        alias_edits = []
        for index, alias in enumerate(statement.names):
            if id(alias) in aliases:
                edit = remove_list_item(source, items, index, close)
                if edit is None:
                    break
                alias_edits.append(edit)
        else:
            if not _overlapping(alias_edits):
                edits.extend(alias_edits)
    return edits


# What an `except` must name to catch a failed import (a bare `except:` catches it too).
_CATCHES_IMPORT_ERROR = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_TRY: tuple[type[ast.stmt], ...] = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)  # (3.11+)


@last_answer  # (asked once per finding that names an import, as ``_from_imports``)
def probing_imports(tree: ast.Module) -> frozenset[int]:
    """The ids of the import statements that run inside the body of a `try` whose handlers catch a
    failed import (not those of a function or class defined there: they run later, unguarded)."""
    found: set[int] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, _TRY) and any(map(_catches_import_error, node.handlers)):
            found.update(id(statement) for statement in _statements_run(node.body)
                         if isinstance(statement, ast.Import | ast.ImportFrom))
        for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field_name, None)
            if isinstance(block, list):
                stack.extend(block)
    return frozenset(found)


def _statements_run(block: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of ``block`` and of the blocks nested in it, but not in a `def` or `class`."""
    for statement in block:
        yield statement
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            nested = getattr(statement, field_name, None)
            if isinstance(nested, list):
                for item in nested:
                    if isinstance(item, ast.stmt):
                        yield from _statements_run([item])
                    elif isinstance(item, ast.excepthandler | ast.match_case):
                        yield from _statements_run(item.body)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(_last_name(exception) in _CATCHES_IMPORT_ERROR for exception in caught)


def _last_name(node: ast.expr) -> str | None:
    """`ImportError`, `builtins.ImportError`: the name an exception class goes by."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _bound_name(binding: Binding) -> str | None:
    alias = binding.node
    return (alias.asname or alias.name) if isinstance(alias, ast.alias) else None


def _names_in_string_annotations(tree: ast.Module) -> frozenset[str]:
    """The identifiers spelled in the string annotations of the tree (walked only when an import
    is about to go)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            annotations = [node.annotation]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            annotations = [node.returns]
        else:
            continue
        for annotation in annotations:
            for part in ast.walk(annotation):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    names.update(_IDENTIFIER.findall(part.value))
    return frozenset(names)


_IDENTIFIER = re.compile(r"[^\W\d]\w*")


def _overlapping(edits: list[Edit]) -> bool:
    ordered = sorted(edits)
    return any(a.end > b.start for a, b in itertools.pairwise(ordered))


def _statement_parents(tree: ast.Module) -> dict[int, list[ast.stmt]]:
    """The block that holds each statement. Only statements are walked, not their expressions
    (``ast.walk`` visits every node: half a second on torch's 9,000-line test files)."""
    parents: dict[int, list[ast.stmt]] = {}
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field_name, None)
            if isinstance(block, list):
                for stmt in block:
                    parents[id(stmt)] = block
                    stack.append(stmt)
    return parents


def remove_statement(source: SourceFile, statement: ast.stmt, block: list[ast.stmt]) -> Edit:
    start, end = source.node_range(statement)
    if len(block) == 1:
        return Edit(start, end, "pass")  # a block cannot be empty
    text = source.text
    line_start = line_start_at(text, start)
    before = text[line_start:start]
    after_end = end
    while after_end < len(text) and text[after_end] in " \t":
        after_end += 1
    if before.strip() == "" and (after_end == len(text) or text[after_end] in "\r\n#"):
        return Edit(line_start, line_end_at(text, end)[1], "")
    if after_end < len(text) and text[after_end] == ";":
        after_end += 1
        while after_end < len(text) and text[after_end] in " \t":
            after_end += 1
        return Edit(start, after_end, "")
    semicolon = text.rfind(";", line_start, start)
    if semicolon >= 0 and text[semicolon + 1:start].strip() == "":
        return Edit(semicolon, end, "")
    return Edit(start, end, "pass")
