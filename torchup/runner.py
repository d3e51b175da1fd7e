"""One run over many files: read, check or fix, and collect what to report. Never raises per file."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field

from torchup.checker import IO_ERROR, Checker
from torchup.diagnostics import Diagnostic
from torchup.discovery import Discovery, Missing, Target
from torchup.fixer import ChangedOnDisk, fix_source, write_atomic
from torchup.notebook import is_notebook, prefilter_bytes
from torchup.notebook import process as process_notebook
from torchup.source import DecodeError, SourceFile

_READ_ADVICE = "check the path and its permissions"


@dataclass
class RunOptions:
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False


@dataclass
class RunResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, SourceFile] = field(default_factory=dict)
    files_checked: int = 0  # read and considered (pre-filtered or parsed)
    files_failed: int = 0  # could not be read at all
    fixed: int = 0
    files_fixed: int = 0
    fixed_diagnostics: list[Diagnostic] = field(default_factory=list)  # what the applied fixes resolved
    diffs: list[str] = field(default_factory=list)


def run(paths: list[str], checker: Checker, discovery: Discovery, options: RunOptions) -> RunResult:
    result = RunResult()
    seen: set[str] = set()
    for target in discovery.targets(paths):
        key = os.path.realpath(target.path)
        if key in seen:  # named twice, or inside a directory also named
            continue
        seen.add(key)
        if isinstance(target, Missing):
            result.files_failed += 1
            message = f"cannot read {target.path}: {target.reason}; {_READ_ADVICE}"
            result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, target.path, message))
            continue
        try:
            _process(target, checker, options, result)
        except (RecursionError, MemoryError) as exc:
            message = f"{target.path} is too large or too deeply nested to check ({type(exc).__name__}); skipped"
            result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, target.path, message))
        except Exception as exc:  # a bug in a rule must not stop the other files
            if os.environ.get("TORCHUP_DEBUG"):
                raise
            message = (
                f"internal error while checking {target.path}: {type(exc).__name__}: {exc}; the file was left "
                "unchanged. This is a bug in torchup: please report it (TORCHUP_DEBUG=1 shows the traceback)"
            )
            result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, target.path, message))
    result.diagnostics.sort(key=_order)
    return result


def _order(diagnostic: Diagnostic) -> tuple[str, int, int, int, str]:
    """Diagnostic.sort_key, with a notebook's findings in cell order (their lines are per cell)."""
    return (diagnostic.path, diagnostic.cell or 0, diagnostic.line, diagnostic.column, diagnostic.code)


def _process(target: Target, checker: Checker, options: RunOptions, result: RunResult) -> None:
    path = target.path
    try:
        raw = _read(path)
    except OSError as exc:
        result.files_failed += 1
        reason = exc.strerror or str(exc)
        message = f"cannot read {path}: {reason}; {_READ_ADVICE}"
        result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, path, message))
        return
    result.files_checked += 1
    if is_notebook(path):
        _process_notebook(path, raw, checker, options, result)
        return
    if not checker.could_match_bytes(raw, path):
        return  # no trigger word: nothing this run can find
    try:
        source = SourceFile.from_bytes(path, raw)
    except DecodeError as exc:
        result.diagnostics.append(checker.decode_error(path, exc))
        return
    result.sources[path] = source
    if not options.fix:
        result.diagnostics.extend(checker.analyze(source).diagnostics)
        return
    outcome = fix_source(checker, source, unsafe=options.unsafe_fixes)
    result.diagnostics.extend(outcome.remaining)
    if outcome.text == source.text:
        return
    if options.diff:
        result.fixed += len(outcome.fixed)
        result.fixed_diagnostics.extend(outcome.fixed)
        result.files_fixed += 1
        result.diffs.append(unified_diff(path, source.text, outcome.text))
        return
    if not _write(path, source.encode(outcome.text), raw, checker, result):
        return
    result.fixed += len(outcome.fixed)
    result.fixed_diagnostics.extend(outcome.fixed)
    result.files_fixed += 1
    result.sources[path] = SourceFile(path, source.encode(outcome.text), outcome.text, source.encoding)


def _process_notebook(path: str, raw: bytes, checker: Checker, options: RunOptions, result: RunResult) -> None:
    """A Jupyter notebook: its code cells are checked and fixed together (see torchup.notebook)."""
    if not checker.could_match_bytes(prefilter_bytes(raw), path):
        return  # no trigger word anywhere in the file
    outcome = process_notebook(checker, path, raw, fix=options.fix, unsafe=options.unsafe_fixes)
    result.diagnostics.extend(outcome.diagnostics)
    if outcome.source is not None:
        result.sources[path] = outcome.source
    if outcome.data is None or outcome.after is None or outcome.data == raw:
        return
    if options.diff:
        result.diffs.append(unified_diff(path, outcome.before, outcome.after))
    elif not _write(path, outcome.data, raw, checker, result):
        return
    result.fixed += len(outcome.fixed)
    result.fixed_diagnostics.extend(outcome.fixed)
    result.files_fixed += 1


def _write(path: str, data: bytes, raw: bytes, checker: Checker, result: RunResult) -> bool:
    """Replace the file atomically; on failure, report it and leave the file as it was."""
    try:
        write_atomic(path, data, raw)
    except ChangedOnDisk:
        message = f"{path} changed on disk while torchup was fixing it; nothing was written, run again"
        result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, path, message))
        return False
    except OSError as exc:
        message = f"cannot write the fixed {path}: {exc.strerror or exc}; the file was left as it was"
        result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, path, message))
        return False
    return True


def _read(path: str) -> bytes:
    if os.path.isdir(path):
        raise IsADirectoryError(21, "is a directory, not a source file", path)
    with open(path, "rb") as handle:
        return handle.read()


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=path,
        tofile=path,
    )
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines)
