"""Apply fixes: choose non-overlapping ones, add the imports they need, re-check, repeat.

Edits touch only their own ranges; the fixed text must parse or nothing is written; fixes that
overlap wait for a later pass, so ``fix`` run twice changes nothing the second time.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from dataclasses import dataclass, field

from torchup.analysis.importer import import_edits
from torchup.analysis.project import ProjectView
from torchup.check.checker import Analysis, Checker
from torchup.core.diagnostics import Applicability, Diagnostic, Edit, ImportRequest, apply_edits
from torchup.core.source import SourceFile
from torchup.fix.safety import check_pass

MAX_PASSES = 50  # each pass applies every fix that does not overlap another


@dataclass
class FixOutcome:
    """The text after the fixes, with what they fixed and what remains."""

    text: str  # the fixed text (the original when nothing applied)
    remaining: list[Diagnostic]
    fixed: list[Diagnostic] = field(default_factory=list)


def is_applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    fix = diagnostic.fix
    return fix is not None and (unsafe or fix.applicability is Applicability.SAFE)


def fix_source(checker: Checker, source: SourceFile, *, unsafe: bool) -> FixOutcome:
    """Fix one text. What the rest of the project decides about its findings is
    ``checker.project``; without one (the library API, stdin), the text is the whole project."""
    if checker.project is None:
        first = checker.analyze(source)
        checker.project = ProjectView(first.diagnostics, first.methods)
        try:
            return fix_source(checker, source, unsafe=unsafe)
        finally:
            checker.project = None
    analysis = checker.analyze(source)
    if analysis.tree is not None and compile_error(source.text, source.path) is not None:
        # Parses but does not compile as it is (a late `from __future__`, say): every fix would
        # be blamed for it. Report, fix nothing.
        return FixOutcome(source.text, analysis.diagnostics, [])
    fixed: list[Diagnostic] = []
    rejected: dict[tuple[object, ...], str] = {}  # fixes whose result would not compile, and why
    for _ in range(MAX_PASSES):
        text = analysis.source.text
        candidates = [
            d for d in analysis.diagnostics if is_applicable(d, unsafe) and _identity(d, text) not in rejected
        ]
        if not candidates or analysis.tree is None or analysis.resolver is None:
            break
        chosen, edits = plan(analysis, candidates)
        new_text = apply_edits(text, edits)
        problem = _problem(text, new_text, chosen, edits, source.path)
        if problem is not None:
            # Find the fixes that fail on their own; the others go ahead next pass.
            culprits = []
            for diagnostic in chosen:
                alone = plan(analysis, [diagnostic])[1]
                own = _problem(text, apply_edits(text, alone), [diagnostic], alone, source.path)
                if own is not None:
                    culprits.append(diagnostic)
                    rejected[_identity(diagnostic, text)] = own
            for diagnostic in [] if culprits else chosen:
                rejected[_identity(diagnostic, text)] = problem
            continue
        if new_text == text:
            break
        fixed.extend(chosen)
        analysis = checker.analyze(SourceFile(source.path, source.raw, new_text, source.encoding))
    text = analysis.source.text
    for diagnostic in analysis.diagnostics:
        problem = rejected.get(_identity(diagnostic, text)) if diagnostic.fix is not None else None
        if problem is not None:
            diagnostic.fix = None
            diagnostic.notes.append(f"fix not applied: {problem}; the file was left as it was. Please report this")
    return FixOutcome(text, analysis.diagnostics, fixed)


def _problem(text: str, new_text: str, chosen: list[Diagnostic], edits: list[Edit], path: str) -> str | None:
    """Why a pass of fixes must not be written: it does not compile, or the safety check fails."""
    error = compile_error(new_text, path)
    if error is not None:
        return f"the result would not compile ({error})"
    own = {edit for diagnostic in chosen if diagnostic.fix for edit in diagnostic.fix.edits}
    fixes = [list(d.fix.edits) for d in chosen if d.fix]
    unsafe = check_pass(text, new_text, fixes, [edit for edit in edits if edit not in own])
    return None if unsafe is None else f"the safety check failed: {unsafe}"


def _identity(diagnostic: Diagnostic, text: str) -> tuple[object, ...]:
    """What a fix does, independent of where earlier passes moved it."""
    assert diagnostic.fix is not None
    return (diagnostic.code, tuple((text[e.start:e.end], e.content) for e in diagnostic.fix.edits))


def compile_error(text: str, path: str) -> str | None:
    """Why ``text`` would not compile (``compile`` also catches what ``ast.parse`` lets pass,
    such as a repeated keyword argument), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return str(exc)
    return None


def plan(analysis: Analysis, candidates: list[Diagnostic]) -> tuple[list[Diagnostic], list[Edit]]:
    """Fixes whose edits do not overlap (in source order), plus their import edits."""
    assert analysis.tree is not None and analysis.resolver is not None
    chosen: list[Diagnostic] = []
    taken: list[Edit] = []
    for diagnostic in sorted(candidates, key=lambda d: d.start):
        assert diagnostic.fix is not None
        edits = diagnostic.fix.edits
        if any(_overlaps(edit, other) for edit in edits for other in taken):
            continue
        chosen.append(diagnostic)
        taken.extend(edits)
    requests: list[ImportRequest] = []
    released: set[int] = set()
    for diagnostic in chosen:
        assert diagnostic.fix is not None
        requests.extend(diagnostic.fix.imports)
        released.update(diagnostic.fix.released_names)
    extra = import_edits(analysis.source, analysis.tree, analysis.resolver, requests, released)
    extra = [edit for edit in extra if not any(_overlaps(edit, other) for other in taken)]
    return chosen, taken + extra


def _overlaps(a: Edit, b: Edit) -> bool:
    if a == b:
        return False
    if a.start == a.end and b.start == b.end:
        return a.start == b.start  # two insertions at one point: order would be a guess
    return a.start < b.end and b.start < a.end


class ChangedOnDisk(Exception):
    """The file changed between our read and our write."""


def write_atomic(path: str, data: bytes, expected: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping its mode; refuse if it changed.

    A symlink is followed: its target is rewritten and the link stays a link.
    """
    path = os.path.realpath(path)
    with open(path, "rb") as handle:
        if handle.read() != expected:
            raise ChangedOnDisk(path)
    mode = os.stat(path).st_mode
    directory = os.path.dirname(os.path.abspath(path))
    import tempfile  # (here: a check run never writes, and start-up stays short)

    fd, temporary = tempfile.mkstemp(prefix=".torchup-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
