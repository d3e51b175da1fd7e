"""One run over many files: read, check or fix, and collect what to report. Never raises per file."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import multiprocessing as mp
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from torchup.cache import Cache, FileState, file_state
from torchup.checker import IO_ERROR, Checker
from torchup.diagnostics import Diagnostic
from torchup.discovery import Discovery, Missing, Target
from torchup.fixer import ChangedOnDisk, fix_source, is_applicable, write_atomic
from torchup.notebook import is_notebook, prefilter_bytes
from torchup.notebook import process as process_notebook
from torchup.source import DecodeError, SourceFile

_READ_ADVICE = "check the path and its permissions"


@dataclass
class RunOptions:
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    cache: Cache | None = None  # None: --no-cache
    record_states: bool = False  # note size, mtime and hash of each file read (workers, for the cache)
    jobs: int = 1
    progress: Callable[[int, int], None] | None = None  # (files done, total)


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
    states: dict[str, FileState] = field(default_factory=dict)  # what was read, for the cache
    changed: set[str] = field(default_factory=set)  # files fixed (written or diffed) in this run

    def merge(self, other: RunResult) -> None:
        self.diagnostics.extend(other.diagnostics)
        self.sources.update(other.sources)
        self.files_checked += other.files_checked
        self.files_failed += other.files_failed
        self.fixed += other.fixed
        self.files_fixed += other.files_fixed
        self.fixed_diagnostics.extend(other.fixed_diagnostics)
        self.diffs.extend(other.diffs)
        self.states.update(other.states)
        self.changed |= other.changed


def run(paths: list[str], checker: Checker, discovery: Discovery, options: RunOptions) -> RunResult:
    result = RunResult()
    seen: set[object] = set()
    pending: list[Target] = []
    for target in discovery.targets(paths):
        key = _identity(target.path)
        if key in seen:  # named twice, or inside a directory also named
            continue
        seen.add(key)
        if isinstance(target, Missing):
            result.files_failed += 1
            message = f"cannot read {target.path}: {target.reason}; {_READ_ADVICE}"
            result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, target.path, message))
        elif not _from_cache(target, checker, options, result):
            pending.append(target)
    total = len(pending)
    for done, partial in enumerate(_process_all(pending, checker, options), start=1):
        result.merge(partial)
        if options.progress is not None:
            options.progress(done, total)
    if options.cache is not None:
        _store(options.cache, checker, result)
    result.diagnostics.sort(key=_order)
    return result


def _identity(path: str) -> object:
    """The same file reached by two paths (symlinks included) has one identity."""
    try:
        stat = os.stat(path)
        return (stat.st_dev, stat.st_ino)
    except OSError:
        return os.path.abspath(path)


def _from_cache(target: Target, checker: Checker, options: RunOptions, result: RunResult) -> bool:
    """Use the cached findings of an unchanged file (when fixing: only if none is fixable)."""
    if options.cache is None or is_notebook(target.path):
        return False
    cached = options.cache.lookup(target.path, checker.fingerprint(target.path))
    if cached is None or (options.fix and any(is_applicable(d, options.unsafe_fixes) for d in cached)):
        return False
    for diagnostic in cached:
        diagnostic.path = target.path
    result.files_checked += 1
    result.diagnostics.extend(cached)
    if cached:  # the report shows their source lines
        with contextlib.suppress(OSError, DecodeError):
            result.sources[target.path] = SourceFile.from_bytes(target.path, _read(target.path))
    return True


def _store(cache: Cache, checker: Checker, result: RunResult) -> None:
    by_path: dict[str, list[Diagnostic]] = {}
    for diagnostic in result.diagnostics:
        by_path.setdefault(diagnostic.path, []).append(diagnostic)
    for path, state in result.states.items():
        if path not in result.changed and not is_notebook(path):
            cache.store(path, state, checker.fingerprint(path), by_path.get(path, []))
    cache.save()


# Work for the worker processes: set before the pool forks, so nothing has to be pickled.
_WORK: tuple[Checker, RunOptions] | None = None


def _process_all(pending: list[Target], checker: Checker, options: RunOptions) -> Iterator[RunResult]:
    global _WORK
    if options.jobs <= 1 or len(pending) < 4 * options.jobs or "fork" not in mp.get_all_start_methods():
        for target in pending:
            yield _process_one(target, checker, options)
        return
    _WORK = (checker, dataclasses.replace(options, cache=None, progress=None, record_states=options.cache is not None))
    chunk = max(1, min(64, len(pending) // (options.jobs * 8)))
    with mp.get_context("fork").Pool(options.jobs) as pool:
        yield from pool.imap_unordered(_worker, pending, chunksize=chunk)
    _WORK = None


def _worker(target: Target) -> RunResult:
    assert _WORK is not None
    return _process_one(target, *_WORK)


def _process_one(target: Target, checker: Checker, options: RunOptions) -> RunResult:
    result = RunResult()
    try:
        _process(target, checker, options, result)
    except (RecursionError, MemoryError) as exc:
        message = f"{target.path} is too large or too deeply nested to check ({type(exc).__name__}); skipped"
        result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, target.path, message))
        result.states.pop(target.path, None)
    except Exception as exc:  # a bug in a rule must not stop the other files
        if os.environ.get("TORCHUP_DEBUG"):
            raise
        message = (
            f"internal error while checking {target.path}: {type(exc).__name__}: {exc}; the file was left "
            "unchanged. This is a bug in torchup: please report it (TORCHUP_DEBUG=1 shows the traceback)"
        )
        result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, target.path, message))
        result.states.pop(target.path, None)  # never cache a failure of ours
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
    if options.cache is not None or options.record_states:
        state = file_state(path, raw)
        if state is not None:
            result.states[path] = state
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
    result.changed.add(path)
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
