"""The safety check inside ``fix``: the code around the fixes must mean exactly what it meant.

Black proves a reformat by comparing syntax trees. We compare the tree before and after a pass
of fixes with the edited nodes masked: each fix's node (the innermost node holding all its edits),
and the statements an import edit added or removed. Anything else that differs is a bug in a fix
(say, an edit that changed how the code around it parses), so the pass is not written.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Sequence

from torchup.core.diagnostics import Edit

Range = tuple[int, int]
MASK = "<fixed>"


def check_pass(
    old_text: str, new_text: str, fixes: Sequence[Sequence[Edit]], import_edits: Sequence[Edit] = ()
) -> str | None:
    """None if ``new_text`` differs from ``old_text`` only inside the fixed nodes; else why not.

    ``fixes``: the edits of each fix (the innermost node holding them is masked as a whole);
    ``import_edits``: the importer's edits (the import statements they touch are left out, and so
    is what they insert).
    """
    try:
        old_tree, new_tree = ast.parse(old_text), ast.parse(new_text)
    except (SyntaxError, ValueError, RecursionError) as exc:
        return f"the result does not parse: {exc}"
    # Fixes may share an edit (a use and its import line, rewritten once): count each edit once.
    every = sorted({*(edit for group in fixes for edit in group), *import_edits})
    old_fixes = [_covering(group) for group in fixes if group]
    old_imports = [(edit.start, edit.end) for edit in import_edits]

    inserted_before = {id(edit) for edit in import_edits if edit.start == edit.end}

    def moved(ranges: list[Range], after_imports: bool = True) -> list[Range]:
        """A fix's range starts after an import inserted where it starts; an import's own does not."""
        before = inserted_before if after_imports else set()
        return [(_moved(every, start, False, before), _moved(every, end, True)) for start, end in ranges]

    old_lines, new_lines = _lines(old_text), _lines(new_text)
    old_spans, new_spans = _spans(old_tree, old_lines), _spans(new_tree, new_lines)
    # Each fix masks the innermost old node holding its edits, and that same node after the fix:
    # the new node whose span is the old span moved through the edits.
    holders = [h for h in _holders(old_tree, old_spans, old_fixes) if h is not None]
    # A fix that deletes its node whole (an argument) masks the node around it instead.
    parents = {id(child): node for node in ast.walk(old_tree) for child in ast.iter_child_nodes(node)}
    for index, holder in enumerate(holders):
        while id(holder) in parents and id(parents[id(holder)]) in old_spans:
            start, end = moved([old_spans[id(holder)]])[0]
            if start != end:
                break
            holder = parents[id(holder)]
        holders[index] = holder
    moved_spans = moved([old_spans[id(h)] for h in holders])
    new_holders = _holders(new_tree, new_spans, moved_spans)
    before = _dump(old_tree, {id(h) for h in holders}, _dropped(old_tree, old_spans, old_fixes, old_imports))
    after = _dump(
        new_tree,
        {id(h) for h in new_holders if h is not None},
        _dropped(new_tree, new_spans, moved(old_fixes), moved(old_imports, after_imports=False)),
    )
    if before == after:
        return None
    return "code outside the fixed nodes would change meaning"


def _covering(edits: Sequence[Edit]) -> Range:
    return min(e.start for e in edits), max(e.end for e in edits)


def _moved(edits: Sequence[Edit], position: int, is_end: bool, inserted_before: Collection[int] = ()) -> int:
    """Where an old offset lands after the edits. An end also moves past insertions at it, and so
    does a start past the importer's insertions at it (an import goes before the statement there)."""
    shift = 0
    for edit in edits:
        at_position = edit.start == position == edit.end
        if edit.start < position or (at_position and (is_end or id(edit) in inserted_before)):
            shift += len(edit.content) - (edit.end - edit.start)
    return position + shift


def _lines(text: str) -> list[str]:
    """Lines as the parser counts them (\r\n, \r and \n end a line), endings kept."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def _offsets(lines: list[str]) -> list[int]:
    starts, total = [], 0
    for line in lines:
        starts.append(total)
        total += len(line)
    starts.append(total)
    return starts


def _span(node: ast.AST, starts: list[int], lines: list[str]) -> Range | None:
    if not hasattr(node, "lineno") or getattr(node, "end_lineno", None) is None:
        return None

    def at(line: int, column: int) -> int:
        text = lines[line - 1] if line - 1 < len(lines) else ""
        prefix = text.encode("utf-8")[:column].decode("utf-8", "replace") if not text.isascii() else text[:column]
        return starts[line - 1] + len(prefix)

    return at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def _spans(tree: ast.Module, lines: list[str]) -> dict[int, Range]:
    starts = _offsets(lines)
    spans: dict[int, Range] = {}
    for node in ast.walk(tree):
        span = _span(node, starts, lines)
        if span is not None:
            spans[id(node)] = span
    return spans


def _dropped(tree: ast.Module, spans: dict[int, Range], ranges: list[Range], imports: list[Range]) -> set[int]:
    """Statements a fix or the importer wrote or removed whole, and import statements it touched."""
    return {
        id(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt)
        and id(node) in spans
        and (
            any(_inside(spans[id(node)], r) for r in (*ranges, *imports))
            or (isinstance(node, (ast.Import, ast.ImportFrom)) and any(_touches(spans[id(node)], r) for r in imports))
        )
    }


def _touches(span: Range, edit: Range) -> bool:
    return span[0] <= edit[1] and edit[0] <= span[1]


def _inside(inner: Range, outer: Range) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


def _holders(tree: ast.Module, spans: dict[int, Range], targets: list[Range]) -> list[ast.AST | None]:
    """For each target, the smallest node whose span holds it (None: it lies between statements).
    A search of the whole tree (a decorated function's span starts at `def`, below its decorators),
    over the nodes and spans listed once: walking the tree again for each fix took 30 s for 400
    fixes in one file."""
    nodes = [(node, spans[id(node)]) for node in ast.walk(tree) if id(node) in spans]
    found: list[ast.AST | None] = []
    for start, end in targets:
        best: ast.AST | None = None
        best_size = -1
        for node, span in nodes:  # breadth first: among equal spans, the last seen is the deepest
            if _holds(span, start, end) and (best is None or span[1] - span[0] <= best_size):
                best, best_size = node, span[1] - span[0]
        found.append(best)
    return found


def _holds(span: Range, start: int, end: int) -> bool:
    """Does a node's span hold a range? An empty range (a point) must lie strictly inside it, so
    an insertion or deletion at a node's edge does not mask that node."""
    if start == end:
        return span[0] < start < span[1]
    return span[0] <= start and end <= span[1]


def _dump(node: ast.AST, masked: set[int], dropped: set[int]) -> list[str]:
    """The tree as a flat list of tokens (type, field names, values, brackets), masked nodes as
    ``MASK``. Built with an explicit stack: generated code nests deeper than Python recurses."""
    out: list[str] = []
    stack: list[ast.AST | str] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        if id(item) in masked:
            out.append(MASK)
            continue
        tokens: list[ast.AST | str] = [f"{type(item).__name__}("]
        for name, value in ast.iter_fields(item):
            if isinstance(value, list):
                tokens.append(f"{name}=[")
                tokens += [
                    v if isinstance(v, ast.AST) else repr(v)
                    for v in value
                    if not (isinstance(v, ast.AST) and id(v) in dropped)
                ]
                tokens.append("]")
            elif isinstance(value, ast.AST):
                tokens += [f"{name}=", value]
            else:
                tokens.append(f"{name}={value!r}")
        tokens.append(")")
        stack.extend(reversed(tokens))
    return out
