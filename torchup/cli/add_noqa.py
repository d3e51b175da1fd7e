"""``--add-noqa``: write a ``# noqa: CODE`` for every current finding, to adopt torchup on legacy code.

Each finding gets its code in the comment at the end of its first line (the line whose comment
silences it, see ``torchup.check.suppressions``): appended to an existing ``# noqa: X`` there (``# noqa: X,
TU101``), else added as ``  # noqa: TU101`` after the line's code and any comment it has. When the
first line ends inside a multi-line string or with a backslash, the comment goes at the end of the
line where the string or continuation ends, because that is the comment that silences the finding.
Nothing is ever written inside a string: the new text must parse to the same syntax tree as the old
one, or the file is left alone.

Not handled (returned to the caller): TU000 and TU001 (a file that cannot be read or parsed), TU002
(remove an unused suppression instead of suppressing it), and findings in notebooks.
"""

from __future__ import annotations

import ast
import warnings
from collections import defaultdict

from torchup.check.checker import IO_ERROR, Checker
from torchup.check.suppressions import UNSUPPRESSIBLE, UNUSED_NOQA, Directive, parse
from torchup.core.diagnostics import Diagnostic, Edit, apply_edits
from torchup.core.source import SourceFile
from torchup.discover.discovery import Discovery
from torchup.fix.fixer import ChangedOnDisk, write_atomic
from torchup.run.runner import RunOptions, run

NOT_ADDED = UNSUPPRESSIBLE | {UNUSED_NOQA}


def add_noqa(checker: Checker, paths: list[str], discovery: Discovery) -> tuple[int, list[Diagnostic]]:
    """Check ``paths`` like ``torchup check`` and write a suppression for every finding.

    Returns the number of suppressions written (one per line: a new ``# noqa`` comment, or codes
    added to an existing one) and the findings that still stand: the ones no comment can silence
    (TU000, TU001, TU002, notebooks), and TU000 for a file that could not be written back.
    """
    result = run(paths, checker, discovery, RunOptions())
    by_path: dict[str, list[Diagnostic]] = defaultdict(list)
    remaining: list[Diagnostic] = []
    for diagnostic in result.diagnostics:
        if not checker.reports(diagnostic.code, diagnostic.path):
            continue
        if diagnostic.code in NOT_ADDED or diagnostic.path not in result.sources:
            remaining.append(diagnostic)
        elif diagnostic.cell is not None or diagnostic.path.lower().endswith(".ipynb"):
            diagnostic.notes.append("--add-noqa does not edit notebooks: add `# noqa: CODE` to the cell's line")
            remaining.append(diagnostic)
        else:
            by_path[diagnostic.path].append(diagnostic)
    added = 0
    for path, diagnostics in by_path.items():
        source = result.sources[path]
        text, count, left = add_noqa_to_source(source, diagnostics)
        remaining.extend(left)
        if count == 0:
            continue
        try:
            write_atomic(path, source.encode(text), source.raw)
        except ChangedOnDisk:
            message = f"{path} changed on disk while torchup was adding noqa comments; nothing was written, run again"
            remaining.append(checker.engine_diagnostic(IO_ERROR, path, message))
            remaining.extend(diagnostics)
            continue
        except OSError as exc:
            message = f"cannot write {path}: {exc.strerror or exc}; the file was left as it was"
            remaining.append(checker.engine_diagnostic(IO_ERROR, path, message))
            remaining.extend(diagnostics)
            continue
        added += count
    remaining.sort(key=Diagnostic.sort_key)
    return added, remaining


def add_noqa_to_source(source: SourceFile, diagnostics: list[Diagnostic]) -> tuple[str, int, list[Diagnostic]]:
    """The text with suppressions for ``diagnostics`` (findings of ``source``), how many lines got
    one, and the findings left without (with a note saying why)."""
    suppressions = parse(source)
    wanted: dict[int, set[str]] = defaultdict(set)
    owners: dict[int, list[Diagnostic]] = defaultdict(list)
    left: list[Diagnostic] = []
    for diagnostic in diagnostics:
        if diagnostic.code in NOT_ADDED:
            left.append(diagnostic)
            continue
        line = suppressions.comment_line(diagnostic.line)
        wanted[line].add(diagnostic.code)
        owners[line].append(diagnostic)
    edits: dict[int, Edit] = {}
    for line, codes in wanted.items():
        edit = _edit(source, suppressions.lines.get(line), line, codes)
        if edit is not None:
            edits[line] = edit
    text = source.text
    if not edits:
        return text, 0, left
    before = _tree(text)
    new_text = apply_edits(text, list(edits.values()))
    if before is None or _tree(new_text) != before:
        # Keep the comments that leave the code as it was; report the others.
        good = [line for line, edit in edits.items() if before and _tree(apply_edits(text, [edit])) == before]
        for line in edits.keys() - set(good):
            for diagnostic in owners[line]:
                diagnostic.notes.append(f"--add-noqa: a comment at the end of line {line} would change the code")
                left.append(diagnostic)
        edits = {line: edits[line] for line in good}
        new_text = apply_edits(text, list(edits.values()))
    return new_text, len(edits), left


def _edit(source: SourceFile, directive: Directive | None, line: int, codes: set[str]) -> Edit | None:
    if directive is not None:
        if directive.codes is None:
            return None  # a bare noqa already silences everything here
        new = sorted(codes - {code.code for code in directive.codes})
        if not new:
            return None
        first, last = directive.codes[0], directive.codes[-1]
        separator = " " if len(directive.codes) > 1 and "," not in source.text[first.start:last.end] else ", "
        return Edit(last.end, last.end, separator + separator.join(new))
    start = source.line_starts[line - 1]
    line_text = source.line_text(line)
    content = line_text.rstrip()
    return Edit(start + len(content), start + len(line_text), f"  # noqa: {', '.join(sorted(codes))}")


def _tree(text: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.dump(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
