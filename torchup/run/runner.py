"""One run over many files: read, check or fix, and collect what to report. Never raises per file."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import gc
import os
import queue
import re
import stat
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torchup.analysis.project import MethodDefinition, ProjectView
from torchup.check.checker import IO_ERROR, Checker, collector_paused
from torchup.core.diagnostics import Diagnostic
from torchup.core.source import DecodeError, SourceFile, decodes, is_notebook
from torchup.discover.discovery import Discovery, Missing, Target
from torchup.fix.fixer import ChangedOnDisk, fix_source, is_applicable, write_atomic
from torchup.prefilter.words import SCOPE_KEYWORDS, TriggerPattern
from torchup.run.cache import Cache, FileState, file_state
from torchup.run.project_index import methods_elsewhere

if TYPE_CHECKING:
    from torchup.prefilter.grep import Grep

_READ_ADVICE = "check the path and its permissions"

# A Python source larger than this is not read: no hand-written module comes close (generated ones of
# 4-6 MB exist), and fixing an 8 MB generated module already takes about a gigabyte and a half.
# Notebooks carry their outputs, so they may be larger.
MAX_SOURCE_BYTES = 8 * 1024 * 1024
MAX_NOTEBOOK_BYTES = 256 * 1024 * 1024

# The temporary files of write_atomic (tempfile.mkstemp(prefix=".torchup-", suffix=".tmp")): a run killed
# between creating one and renaming it over its file leaves it behind; the next fix run removes it.
_TEMPORARY = re.compile(r"\.torchup-[A-Za-z0-9_]{8}\.tmp")
STALE_TEMPORARY_AGE = 2.0  # seconds: younger ones may belong to a torchup still running beside this one


class NotASourceFile(OSError):
    """A path that names something torchup does not read: a FIFO, a device, a file too large."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(errno.EINVAL, message, path)
        self.message = message


@dataclass
class RunOptions:
    """How a run goes: fixing or not, the cache, workers, progress."""

    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    cache: Cache | None = None  # None: --no-cache
    record_states: bool = False  # note size, mtime and hash of each file read (workers, for the cache)
    jobs: int = 1
    progress: Callable[[int, int], None] | None = None  # (files done, total)
    verbose: bool = False  # print the traceback of an internal error (the run still goes on)


@dataclass
class RunResult:
    """What a run (or one worker's share of it) found and changed."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, SourceFile] = field(default_factory=dict)
    files_checked: int = 0  # read and considered (pre-filtered or parsed), or found in the cache
    files_not_parsed: int = 0  # of those, settled by the pre-filter alone (no trigger word), here or in the cached run
    unparsed: set[str] = field(default_factory=set)  # the files read and not parsed in this run (for the cache)
    files_failed: int = 0  # could not be read at all
    fixed: int = 0
    files_fixed: int = 0
    fixed_diagnostics: list[Diagnostic] = field(default_factory=list)  # what the applied fixes resolved
    diffs: list[str] = field(default_factory=list)
    states: dict[str, FileState] = field(default_factory=dict)  # what was read, for the cache
    changed: set[str] = field(default_factory=set)  # files fixed (written or diffed) in this run
    targets: list[str] = field(default_factory=list)  # every path discovery gave, read or not (torchup.run.replay)
    methods: list[MethodDefinition] = field(default_factory=list)  # what their classes define (analysis.project)
    found: list[Target] = field(default_factory=list)  # the files discovery gave, read or not
    # TorchFix codes whose noqa comment silenced a finding, by file (the report names their torchup codes)
    torchfix_noqa: dict[str, list[str]] = field(default_factory=dict)

    def merge(self, other: RunResult) -> None:
        self.diagnostics.extend(other.diagnostics)
        self.sources.update(other.sources)
        self.files_checked += other.files_checked
        self.files_not_parsed += other.files_not_parsed
        self.unparsed |= other.unparsed
        self.files_failed += other.files_failed
        self.fixed += other.fixed
        self.files_fixed += other.files_fixed
        self.fixed_diagnostics.extend(other.fixed_diagnostics)
        self.diffs.extend(other.diffs)
        self.states.update(other.states)
        self.changed |= other.changed
        self.methods.extend(other.methods)
        self.torchfix_noqa.update(other.torchfix_noqa)


def run(paths: list[str], checker: Checker, discovery: Discovery, options: RunOptions) -> RunResult:
    """Check (or fix) the files under ``paths``. What one file's findings owe to the others
    (torchup.analysis.project) is decided from all of them: a check applies it at the end; a fix first
    checks everything, then fixes the files left with a fix to apply, the decision in hand."""
    if not options.fix:
        result = _run(paths, checker, discovery, options)
        _project(result, paths, discovery).adjust(result.diagnostics)
        return result
    survey = _run(paths, checker, discovery, dataclasses.replace(options, fix=False, diff=False))
    if not options.diff:
        remove_stale_temporaries(survey.found)
    project = _project(survey, paths, discovery)
    project.adjust(survey.diagnostics)
    to_fix = sorted({d.path for d in survey.diagnostics if is_applicable(d, options.unsafe_fixes)})
    if not to_fix:
        return survey
    checker.project = project
    try:
        # (no cache: what it would store now owes something to the other files)
        fixed = _run(to_fix, checker, discovery, dataclasses.replace(options, progress=None, cache=None))
    finally:
        checker.project = None
    return _replace_files(survey, fixed, set(to_fix))


def _replace_files(survey: RunResult, fixed: RunResult, paths: set[str]) -> RunResult:
    """The survey of a fix run, with the findings and texts of the files fixed from the fix itself."""
    survey.diagnostics = [d for d in survey.diagnostics if d.path not in paths] + fixed.diagnostics
    survey.diagnostics.sort(key=_order)
    for path in paths:
        survey.sources.pop(path, None)
    survey.sources.update(fixed.sources)
    survey.files_failed += fixed.files_failed
    survey.fixed, survey.files_fixed = fixed.fixed, fixed.files_fixed
    survey.fixed_diagnostics, survey.diffs, survey.changed = fixed.fixed_diagnostics, fixed.diffs, fixed.changed
    return survey


def _project(result: RunResult, paths: list[str], discovery: Discovery) -> ProjectView:
    """What the project decides about the run's findings: its files' methods, and those of the
    rest of each project the run named only part of (torchup.run.project_index)."""
    elsewhere = methods_elsewhere(result.diagnostics, paths, result.targets, discovery)
    return ProjectView(result.diagnostics, [*result.methods, *elsewhere])


def _run(paths: list[str], checker: Checker, discovery: Discovery, options: RunOptions) -> RunResult:
    result = RunResult()
    seen: set[object] = set()
    found: list[Target] = []
    statuses: dict[str, os.stat_result | None] = {}
    largest_first = options.jobs > 1  # (with workers: one started last on a large file would work alone)
    scan = _WordScan(checker, lambda target: -_size(statuses.get(target.path)) if largest_first else 0)
    # Nothing to hash for a cache: a file grep found no trigger word in (nor anything that may keep
    # it from decoding: fastscan._NOT_PLAIN) only needs to be a readable source file. Its status from
    # discovery says so, in this process.
    settle = options.cache is None and not options.record_states
    settled: deque[Target] = deque()

    def work() -> Iterator[tuple[Target, Hint]]:  # (with workers: in the pool's thread that hands out work)
        for target, hint in scan.hints():
            if settle and hint == NO_WORDS:
                settled.append(target)
            else:
                yield target, hint

    workers = _Workers(checker, options, work())
    # A fix replaces files (a new inode): no worker may write before discovery has told every
    # file by its identity, or a path named twice would be seen as another file.
    early = not options.fix or options.diff
    total = 0
    try:
        for target in discovery.targets(paths):
            key, info = _identity(target.path)
            if key in seen:  # named twice, or inside a directory also named
                continue
            seen.add(key)
            statuses[target.path] = info
            result.targets.append(target.path)
            if isinstance(target, Missing):
                result.files_failed += 1
                message = f"cannot read {target.path}: {target.reason}; {_READ_ADVICE}"
                result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, target.path, message))
                continue
            found.append(target)
            if not _from_cache(target, info, checker, options, result):
                total += 1
                if scan.add(target) and early:  # grep started on a batch: a large run, the workers may start too
                    workers.start(total)
        scan.finish()
        result.found = found
        done = 0

        def merge(partial: RunResult | None) -> None:
            nonlocal done
            if partial is None:  # (a file settled without a trigger word: thousands of them, counted)
                result.files_checked += 1
                result.files_not_parsed += 1
            else:
                result.merge(partial)
            done += 1
            if options.progress is not None:
                options.progress(done, total)

        for partial in workers.results(total):
            merge(partial)
            while settled:
                merge(_without_words(settled.popleft(), statuses, checker, options))
        while settled:
            merge(_without_words(settled.popleft(), statuses, checker, options))
    finally:
        scan.close()
        workers.close()
    if options.cache is not None:
        _store(options.cache, checker, result)
    result.diagnostics.sort(key=_order)
    result.diffs.sort()  # by path (each starts `--- path`), not in the order the workers finished
    return result


# Stage 1 of the pre-filter goes to grep once a run has this many files for it (below, scanning in
# Python is as fast as starting grep), in batches of this many, each started as soon as discovery
# has found it: grep reads while discovery walks on, and the workers check a batch's files while
# grep reads the next.
SCAN_MIN_FILES = 200
SCAN_BATCH_FILES = 256
SCAN_BATCH_BYTES = 96 * 1024  # (the names on one grep's command line: far below any ARG_MAX)

# What stage 1 says of a file, handed to the worker with it: None, nothing (scan it in Python, and
# see that it decodes); NO_WORDS, grep found no trigger word in it; otherwise the lines grep found one
# or a scope word on (`global`, `nonlocal`: the focus needs them), as (number, offset where it starts).
# Either of the last two means that the file decodes too (fastscan._NOT_PLAIN): grep read every byte.
Hint = tuple[tuple[int, int], ...] | None
NO_WORDS: tuple[tuple[int, int], ...] = ()


class _WordScan:
    """Stage 1 of the pre-filter by grep (torchup.prefilter.grep) for the files of one run: discovery
    adds them, ``hints`` hands them out (in another thread, with workers) batch by batch."""

    def __init__(self, checker: Checker, order: Callable[[Target], int]) -> None:
        self._checker = checker
        self._order = order
        # By id(pattern) and whether `noqa` counts as a word too (TU002 reported there).
        self._waiting: dict[tuple[int, bool], tuple[TriggerPattern, list[Target]]] = {}
        self._bytes: dict[tuple[int, bool], int] = {}  # the length of their names on grep's command line
        self._started: set[tuple[int, bool]] = set()  # patterns with a batch given to grep
        self._greps: list[Grep] = []
        self._unasked: list[Target] = []
        self._batches: queue.SimpleQueue[tuple[list[Target], Grep | None] | None] = queue.SimpleQueue()

    def add(self, target: Target) -> bool:
        """Take one more file; True if that started grep on a batch."""
        pattern = None if is_notebook(target.path) else self._checker.scan_pattern(target.path)
        if pattern is None:
            self._unasked.append(target)
            return False
        key = (id(pattern), self._checker.reports_unused_noqa(target.path))
        waiting = self._waiting.setdefault(key, (pattern, []))[1]
        waiting.append(target)
        self._bytes[key] = self._bytes.get(key, 0) + len(os.fsencode(target.path)) + 1
        if len(waiting) < SCAN_BATCH_FILES and self._bytes[key] < SCAN_BATCH_BYTES:
            return False
        self._start(key)
        return True

    def _start(self, key: tuple[int, bool]) -> None:
        from torchup.prefilter.grep import Grep  # (small runs never start grep)

        pattern, targets = self._waiting.pop(key)
        self._bytes.pop(key, None)
        self._started.add(key)
        grep = Grep.start([target.path for target in targets], pattern, SCOPE_KEYWORDS, True, key[1])
        if grep is not None:
            self._greps.append(grep)
        self._batches.put((targets, grep))

    def finish(self) -> None:
        """Discovery is done: the files still waiting go to grep, or are scanned in Python."""
        for key in list(self._waiting):
            if key in self._started or len(self._waiting[key][1]) >= SCAN_MIN_FILES:
                self._start(key)
            else:
                self._unasked += self._waiting.pop(key)[1]
        self._batches.put((self._unasked, None))
        self._batches.put(None)

    def hints(self) -> Iterator[tuple[Target, Hint]]:
        """Every file added and what stage 1 says of it, batch by batch as each grep ends (each
        batch in ``order``), until ``finish`` or ``close``."""
        while (batch := self._batches.get()) is not None:
            targets, grep = batch
            found = grep.result() if grep is not None else None
            for target in sorted(targets, key=self._order):
                yield target, None if found is None else found.get(target.path, NO_WORDS)

    def close(self) -> None:
        """Stop the greps still running and end ``hints`` (a run that ends early: an error, Ctrl-C)."""
        for grep in self._greps:
            grep.stop()
        self._batches.put(None)


# Work for the worker processes: set before the pool forks, so nothing has to be pickled.
_WORK: tuple[Checker, RunOptions] | None = None


class _Workers:
    """Worker processes for the ``tasks`` of a large run, started as soon as it shows it is one: on
    its first grep batch, while discovery goes on, or at the end of discovery; or this process."""

    def __init__(self, checker: Checker, options: RunOptions, tasks: Iterator[tuple[Target, Hint]]) -> None:
        self._checker = checker
        self._options = options
        self._tasks = tasks
        self._pool: Any = None
        self._results: Iterator[RunResult] | None = None

    def start(self, files: int) -> None:
        """Fork the workers, for a run of at least ``files`` files."""
        global _WORK
        if self._pool is not None or self._options.jobs < 2:
            return
        import multiprocessing as mp  # (imported when used: start-up stays short for small runs)

        if "fork" not in mp.get_all_start_methods():
            return
        options = self._options
        _WORK = (self._checker, dataclasses.replace(options, cache=None, progress=None,
                                                    record_states=options.cache is not None))
        # The objects alive now go to the permanent generation: a worker's collections never
        # traverse them (nor touch their pages, which the fork shares until written). This process
        # thaws them once the workers exist.
        gc.freeze()
        try:
            self._pool = _pool_class()(options.jobs, context=mp.get_context("fork"))
        finally:
            gc.unfreeze()
            _WORK = None
        chunk = max(1, min(8, files // (options.jobs * 8)))  # (fewer round trips; small runs share evenly)
        self._results = self._pool.imap_unordered(_worker, self._tasks, chunksize=chunk)

    def results(self, total: int) -> Iterator[RunResult]:
        """Each task's result; in this process when the run has too few files (``total``, of which
        the tasks may be only some) for each worker to share."""
        if total >= 4 * self._options.jobs:
            self.start(total)
        if self._results is None:
            for target, hint in self._tasks:
                yield _process_one(target, self._checker, self._options, hint)
            return
        yield from self._results

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()


def _pool_class() -> type:
    """``multiprocessing.pool.Pool``, less a wasted wake-up: its worker-maintaining thread also
    waits on the result pipe, which it never reads, so from each result until the result thread
    has read it, it loops (hundreds of times a run, a tenth of a second of CPU in the process that
    walks the tree). Worker exits and the end of the work still wake it (``_change_notifier``,
    which the result cache signals when it empties), as in ``ThreadPool``, which waits on nothing
    else. (A Python without this private method simply never calls the override.)"""
    from multiprocessing.pool import Pool

    class QuietPool(Pool):
        def _get_sentinels(self) -> list[Any]:
            return [self._change_notifier._reader]  # type: ignore[attr-defined]

    return QuietPool


def _worker(task: tuple[Target, Hint]) -> RunResult:
    assert _WORK is not None
    return _process_one(task[0], *_WORK, task[1])


def _identity(path: str) -> tuple[object, os.stat_result | None]:
    """The same file reached by two paths (symlinks included) has one identity; and its status."""
    try:
        info = os.stat(path)
        return (info.st_dev, info.st_ino), info
    except OSError:
        return os.path.abspath(path), None


def _from_cache(
    target: Target, info: os.stat_result | None, checker: Checker, options: RunOptions, result: RunResult
) -> bool:
    """Use the cached findings of an unchanged file (when fixing: only if none is fixable)."""
    if options.cache is None or info is None or is_notebook(target.path):
        return False
    found = options.cache.lookup(target.path, checker.fingerprint(target.path), info)
    if found is None:
        return False
    cached, methods = found
    if options.fix and any(is_applicable(d, options.unsafe_fixes) for d in cached):
        return False
    for diagnostic in cached:
        diagnostic.path = target.path
    result.files_checked += 1
    if not options.cache.parsed(target.path):
        result.files_not_parsed += 1
    result.diagnostics.extend(cached)
    result.methods.extend(methods)
    silencers = options.cache.torchfix_noqa(target.path)
    if silencers:
        result.torchfix_noqa[target.path] = silencers
    if cached:  # the report shows their source lines
        with contextlib.suppress(OSError, DecodeError):
            result.sources[target.path] = SourceFile.from_bytes(target.path, _read(target.path))
    return True


def _store(cache: Cache, checker: Checker, result: RunResult) -> None:
    by_path: dict[str, list[Diagnostic]] = {}
    for diagnostic in result.diagnostics:
        by_path.setdefault(diagnostic.path, []).append(diagnostic)
    methods: dict[str, list[MethodDefinition]] = {}
    for definition in result.methods:
        methods.setdefault(definition.path, []).append(definition)
    for path, state in result.states.items():
        if path not in result.changed and not is_notebook(path):
            cache.store(path, state, checker.fingerprint(path), by_path.get(path, []), methods.get(path, []),
                        parsed=path not in result.unparsed, torchfix_noqa=result.torchfix_noqa.get(path, []))
    cache.save()


def _size(info: os.stat_result | None) -> int:
    return info.st_size if info is not None else 0


def _without_words(
    target: Target, statuses: dict[str, os.stat_result | None], checker: Checker, options: RunOptions
) -> RunResult | None:
    """A file without a trigger word that decodes (UTF-8 without a NUL byte or a coding cookie: grep
    read it all and says so): checked with nothing found (None), if it is a regular file of a size
    torchup reads; anything else takes the full path, which reports it."""
    info = statuses.get(target.path)
    if info is None or not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
        return _process_one(target, checker, options, NO_WORDS)
    return None


def _process_one(target: Target, checker: Checker, options: RunOptions, hint: Hint = None) -> RunResult:
    """One file; ``hint``: what stage 1 of the pre-filter said of it, if it ran (see ``Hint``)."""
    result = RunResult()
    try:
        _process(target, checker, options, result, hint)
    except (RecursionError, MemoryError) as exc:
        message = f"{target.path} is too large or too deeply nested to check ({type(exc).__name__}); skipped"
        result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, target.path, message))
        result.states.pop(target.path, None)
    except Exception as exc:  # a bug in a rule must not stop the other files
        if os.environ.get("TORCHUP_DEBUG"):
            raise
        if options.verbose:
            traceback.print_exc()
        message = (
            f"internal error while checking {target.path}: {type(exc).__name__}: {exc}; the file was left "
            "unchanged. This is a bug in torchup: please report it (--verbose shows the traceback)"
        )
        result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, target.path, message))
        result.states.pop(target.path, None)  # never cache a failure of ours
    return result


def _order(diagnostic: Diagnostic) -> tuple[str, int, int, int, str]:
    """Diagnostic.sort_key, with a notebook's findings in cell order (their lines are per cell)."""
    return (diagnostic.path, diagnostic.cell or 0, diagnostic.line, diagnostic.column, diagnostic.code)


def _process(target: Target, checker: Checker, options: RunOptions, result: RunResult, hint: Hint) -> None:
    path = target.path
    try:
        raw = _read(path)
    except NotASourceFile as exc:
        result.files_failed += 1
        result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, path, exc.message))
        return
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
    prescan = None if hint == NO_WORDS else checker.prescan(raw, path, hint)
    # No trigger word: nothing this run can find, unless the file does not decode, which is a finding
    # (TU001) whatever it holds; in UTF-16 bytes, say, the words cannot even be seen. (A file grep
    # answered for decodes: see Hint.)
    if (prescan is None or not prescan.could_match) and (hint is not None or decodes(raw)):
        result.files_not_parsed += 1
        result.unparsed.add(path)
        if prescan is not None:
            result.methods.extend(checker.methods_in_text(raw, path, hint))
        return
    try:
        source = SourceFile.from_bytes(path, raw)
    except DecodeError as exc:
        result.diagnostics.append(checker.decode_error(path, exc))
        return
    if not options.fix:
        with collector_paused():  # the tree dies here, before the collector could traverse it
            analysis = checker.analyze(source, prescan)
            diagnostics = analysis.diagnostics
            result.methods.extend(analysis.methods)
            if analysis.torchfix_noqa:
                result.torchfix_noqa[path] = sorted(analysis.torchfix_noqa)
            if not analysis.parsed and not diagnostics:  # (ruled out by the pre-filter: a failed parse is a finding)
                result.files_not_parsed += 1
                result.unparsed.add(path)
                result.methods.extend(checker.methods_in_text(source.text, path))
            del analysis
        result.diagnostics.extend(diagnostics)
        if diagnostics:  # the report quotes their lines; other texts would only cost memory
            result.sources[path] = source
        return
    with collector_paused():
        outcome = fix_source(checker, source, unsafe=options.unsafe_fixes)
    result.diagnostics.extend(outcome.remaining)
    if outcome.text == source.text:
        if outcome.remaining:
            result.sources[path] = source
        return
    result.sources[path] = source
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
    """A Jupyter notebook: its code cells are checked and fixed together (see torchup.run.notebook)."""
    from torchup.check.checker import SYNTAX_ERROR
    from torchup.run.notebook import prefilter_bytes
    from torchup.run.notebook import process as process_notebook

    # Only where TU001 is not reported: a cell that does not parse is one whatever words the file holds.
    if not checker.reports(SYNTAX_ERROR, path) and not checker.could_match_json(prefilter_bytes(raw), path):
        result.files_not_parsed += 1
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
    # The rename would replace a file we may not write (or that is read-only, even for root): its mode
    # says "do not".
    problem = None
    with contextlib.suppress(OSError):  # (write_atomic reports a file that is gone)
        if not os.stat(path).st_mode & 0o222:
            problem = "the file is read-only"
        elif not os.access(path, os.W_OK):
            problem = "the file is not writable (permission denied, or a read-only file system)"
    if problem is not None:
        message = f"cannot write the fixed {path}: {problem}; the file was left as it was"
        result.diagnostics.append(checker.engine_diagnostic(IO_ERROR, path, message))
        return False
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


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _read(path: str, head: int | None = None) -> bytes:
    """The bytes of a regular file (with ``head``, its first bytes only); never waits on a FIFO,
    never reads a device or an oversized file."""
    # O_NONBLOCK: opening a FIFO does not wait for a writer (regular files ignore the flag).
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except IsADirectoryError:
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a source file", path) from None
    with open(fd, "rb") as handle:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):  # (POSIX opens directories for reading)
            raise IsADirectoryError(errno.EISDIR, "is a directory, not a source file", path)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
            raise NotASourceFile(path, f"{path} is {kind}, not a source file; skipped")
        limit = MAX_NOTEBOOK_BYTES if is_notebook(path) else MAX_SOURCE_BYTES
        # Asked for its size (and a byte more: a file that grew is read on), not the limit: a buffer
        # of the limit would be new memory for every file, which the kernel must map page by page.
        data = handle.read(min(info.st_size, limit) + 1 if head is None else head)
        if head is None and len(data) > info.st_size:
            data += handle.read(limit + 1 - len(data))
        if len(data) > limit or (head is not None and info.st_size > limit):
            size = max(info.st_size, len(data)) / 2**20
            raise NotASourceFile(
                path,
                f"{path} is {size:.1f} MB, more than the {limit // 2**20} MB torchup reads in one file "
                "(generated code?); skipped",
            )
        return data


def remove_stale_temporaries(targets: list[Target]) -> None:
    """Delete what killed fix runs left beside the files about to be fixed: ``.torchup-XXXXXXXX.tmp``
    files older than a few seconds (a younger one may be another torchup's write in progress)."""
    cutoff = time.time() - STALE_TEMPORARY_AGE
    directories = {os.path.dirname(target.path) or "." for target in targets}
    # write_atomic writes beside the file a link leads to (walked links stay in the tree, named ones may not)
    directories.update(os.path.dirname(os.path.realpath(target.path)) for target in targets if target.explicit)
    for directory in {os.path.realpath(directory) for directory in directories}:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if not _TEMPORARY.fullmatch(entry.name):
                continue
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)


def unified_diff(path: str, before: str, after: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=path,
        tofile=path,
    )
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines)
