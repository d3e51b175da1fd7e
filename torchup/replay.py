"""Replay the report of an earlier run when nothing it depended on has changed: the warm fast path.

A warm run the usual way costs 200-300 ms before it prints anything: imports, the settings of each
file, the walk, a cache lookup per file. This module runs first, with nothing but ``os`` and
``sys``. The last full run with the same command line, working directory, interpreter, terminal
and colour variables left a manifest: the status (size, mtime, ctime, inode, mode) of everything
its output depended on, and that output. When every status still matches, the output is written
again and the run ends with the same exit code.

What a run depends on (``Recorder.save`` gathers it):
- every path discovery gave, read or not (a missing one must still be missing);
- every directory the walk listed: adding, removing or renaming an entry changes its mtime;
- the configuration and ``.gitignore`` files in those directories and in every parent of the paths
  given, of ``--config`` and of the working directory, and whether those parents hold ``.git``;
- torchup's own files (an edited torchup is another tool, whatever its version says).

A status that changed within ``SETTLE_SECONDS`` before the run began could change again without
its timestamp showing it (clocks tick coarsely; FAT counts in 2 s steps), so such a run records
nothing and the next one does. Nor does a run that wrote a file, printed a warning or an error, or
ran with ``--no-cache``, ``--output-file`` or stdin. A manifest whose checksum fails is ignored
with a warning, never trusted.
"""

from __future__ import annotations

import os
import sys

from torchup import __version__

TYPE_CHECKING = False  # (not typing's: see torchup.cli)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from typing import IO

CACHE_DIR_NAME = ".torchup_cache"
SETTLE_SECONDS = 2.0
MAX_MANIFESTS = 32  # per torchup version: one per command line and working directory in use
_FORMAT = 2
_NEARBY = ("torchup.toml", "pyproject.toml", ".gitignore")  # where a directory's settings and ignores come from

# Options a replayed command line may hold; any other (an abbreviation, --no-cache, --output-file,
# --add-noqa, --show-settings, --stdin-filename, --help) takes the full run.
_SWITCHES = frozenset({
    "--no-respect-gitignore", "--follow-links", "--unsafe-fixes", "--diff", "--statistics", "--show-fixes",
    "--isolated", "--no-prefilter", "--exit-zero", "-q", "--quiet", "--verbose", "--fix",
})
_VALUED = frozenset({
    "--select", "--extend-select", "--ignore", "--exclude", "--extend-exclude", "--output-format", "--jobs", "-j",
    "--target-version", "--target-python", "--config",
})


class Invocation:
    """A ``check`` or ``fix`` command line whose output a manifest may hold."""

    __slots__ = ("argv", "config", "isolated", "paths")

    def __init__(self, argv: list[str], paths: list[str], config: str | None, isolated: bool) -> None:
        self.argv = argv
        self.paths = paths
        self.config = config
        self.isolated = isolated

    @classmethod
    def parse(cls, argv: list[str]) -> Invocation | None:
        if argv[:1] not in (["check"], ["fix"]):
            return None
        paths: list[str] = []
        config, isolated = None, False
        arguments = iter(argv[1:])
        for argument in arguments:
            if argument == "-" or argument == "":
                return None  # stdin; or a path argparse and we may read differently
            if not argument.startswith("-"):
                paths.append(argument)
                continue
            name, equals, value = argument.partition("=")
            if name in _SWITCHES and not equals:
                isolated = isolated or name == "--isolated"
            elif name in _VALUED:
                value = value if equals else next(arguments, None)
                if value is None:
                    return None
                config = value if name == "--config" else config
            else:
                return None
        return cls(argv, paths or ["."], config, isolated)

    def key(self) -> tuple[object, ...]:
        """Everything besides the files that a run's output depends on."""
        return (
            _FORMAT, __version__, tuple(self.argv), os.getcwd(), sys.executable, sys.version,
            _isatty(sys.stdout), _isatty(sys.stderr),
            *(os.environ.get(name) for name in ("NO_COLOR", "FORCE_COLOR", "TORCHUP_DEBUG")),
        )

    def root(self) -> str:
        """Where the cache lives, as ``Settings.root`` finds it, but without parsing TOML: a
        ``pyproject.toml`` that mentions torchup counts. (A wrong guess costs only a miss: the
        recorder saves nothing unless this agrees with the real root.)"""
        if self.isolated:
            return os.getcwd()
        if self.config is not None:
            return os.path.dirname(os.path.realpath(self.config))
        first = self.paths[0]
        directory = os.path.realpath(first if os.path.isdir(first) else os.path.dirname(os.path.abspath(first)))
        while True:
            if os.path.isfile(os.path.join(directory, "torchup.toml")) or _mentions_torchup(directory):
                return directory
            parent = os.path.dirname(directory)
            if parent == directory:
                return os.getcwd()
            directory = parent

    def manifest(self, key: tuple[object, ...]) -> str:
        import binascii  # (built in: no file to import)

        name = f"{binascii.crc32(repr(key).encode('utf-8', 'surrogateescape')):08x}.bin"
        return os.path.join(self.root(), CACHE_DIR_NAME, __version__, "runs", name)


def replayed(invocation: Invocation) -> int | None:
    """Write the saved output of this command line and give its exit code, if nothing it depended
    on has changed; else None (the caller runs it)."""
    try:
        key = invocation.key()
        path = invocation.manifest(key)
        with open(path, "rb") as handle:
            data = handle.read()
    except (OSError, ValueError):  # no manifest (the common miss), no working directory, a NUL in a path
        return None
    manifest = _decode(data)
    if manifest is None:
        sys.stderr.write(f"torchup: warning: the saved run {path} is corrupt; ignoring it\n")
        _remove(path)
        return None
    saved_key, paths, statuses, chunks, code = manifest
    try:
        if saved_key != key or not _unchanged(paths, statuses):
            return None
    except (TypeError, ValueError):  # (its checksum holds, but not its layout: not ours)
        return None
    streams = (sys.stdout, sys.stderr)
    try:
        for index, text in chunks:
            streams[index].write(text)
            streams[index].flush()  # (in order, where both go to one terminal)
    except BrokenPipeError:  # `torchup check | head`: as torchup.guard answers it in a full run
        return 0
    return code


# A tree of more paths than this is compared in two processes, each half (a fork costs well under
# a millisecond at this point, a thousand stats three or four).
SPLIT_PATHS = 1500


def _unchanged(paths: list[str], statuses: list[object]) -> bool:
    """Whether every path has the status the manifest holds for it (see ``_same``); a long list
    is split with a forked child, which answers by its exit status."""
    if len(paths) < SPLIT_PATHS or not hasattr(os, "fork"):
        return _same(paths, statuses)
    half = len(paths) // 2
    try:
        pid = os.fork()
    except OSError:
        return _same(paths, statuses)
    if pid == 0:  # the child ends here whatever happens (no cleanup, no flush of copied buffers)
        code = 1  # (an error, say a manifest of another layout, answers "changed": a full run)
        try:
            code = 0 if _same(paths[half:], statuses[half:]) else 1
        finally:
            os._exit(code)
    mine = _same(paths[:half], statuses[:half])
    _, status = os.waitpid(pid, 0)
    return mine and os.waitstatus_to_exitcode(status) == 0


def _same(paths: list[str], statuses: list[object]) -> bool:
    """Whether every path has the status the manifest holds for it: the hash of (size, mtime_ns,
    ctime_ns, inode, mode); None: absent; True: present, whatever its status (``.git``). (One
    64-bit hash per path, not five numbers, reads four times faster; tuples of integers hash alike
    in every process of one Python, whose version is in the key.)"""
    stat = os.stat
    for path, expected in zip(paths, statuses, strict=True):  # (a warm run's loop: thousands of paths)
        try:
            info = stat(path)
        except (OSError, ValueError):
            if expected is not None:
                return False
            continue
        if expected is not True and hash(
            (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode)
        ) != expected:
            return False
    return True


class Recorder:
    """Keeps what a full run prints; once the run has told it what it read (``completed``), ``save``
    writes the manifest, if the run may be replayed."""

    def __init__(self, invocation: Invocation) -> None:
        import time

        self.invocation = invocation
        self.key = invocation.key()  # (the real streams decide whether they are terminals)
        self.start_ns = time.time_ns()
        self.chunks: list[tuple[int, str]] = []
        self.read: tuple[Path, list[str], list[str]] | None = None
        self.streams = (sys.stdout, sys.stderr)
        sys.stdout = _Tee(sys.stdout, 0, self.chunks)  # type: ignore[assignment]
        sys.stderr = _Tee(sys.stderr, 1, self.chunks)  # type: ignore[assignment]

    def completed(self, root: Path, directories: list[str], paths: list[str], *, wrote: bool) -> None:
        """The run printed its report: ``root`` of its cache, the ``directories`` it listed, every
        path it was given to check; ``wrote``: it changed a file (then there is nothing to replay)."""
        if not wrote:
            self.read = (root, directories, paths)

    def stop(self) -> None:
        sys.stdout, sys.stderr = self.streams  # type: ignore[assignment]

    def save(self, code: int) -> None:
        if self.read is None or any(index == 1 and text.startswith("torchup:") for index, text in self.chunks):
            return  # not a completed report, or one with a warning or an error: run it again next time
        root, directories, paths = self.read
        if str(root) != self.invocation.root() or not os.path.isdir(os.path.join(root, CACHE_DIR_NAME, __version__)):
            return  # the fast path would not look there; or the run kept no cache
        dependencies = self._dependencies(directories, paths)
        if any(isinstance(s, tuple) and changed_lately(s[1], s[2], self.start_ns) for s in dependencies.values()):
            return  # changed just before or during the run
        import itertools
        import marshal

        # One write per stream in turn, not one per line.
        chunks = [(index, "".join(text for _, text in run)) for index, run in itertools.groupby(self.chunks, _stream)]
        statuses = [hash(status) if isinstance(status, tuple) else status for status in dependencies.values()]
        payload = marshal.dumps((_FORMAT, self.key, list(dependencies), statuses, chunks, code))
        path = self.invocation.manifest(self.key)
        try:
            write_cache_file(path, _checksum(payload) + payload)
            _prune(os.path.dirname(path))
        except OSError:
            pass  # a read-only cache: the findings cache warned already, and the next run is only slower

    def _dependencies(self, directories: list[str], paths: list[str]) -> dict[str, object]:
        found: dict[str, object] = {path: _status(path) for path in paths}
        for directory in directories:
            found[directory] = _status(directory)
            for name in _NEARBY:  # absent ones need no entry: creating one changes the directory
                status = _status(os.path.join(directory, name))
                if status is not None:
                    found[os.path.join(directory, name)] = status
        bases = [os.getcwd(), *self.invocation.paths]
        if self.invocation.config is not None:
            found[self.invocation.config] = _status(self.invocation.config)
            bases.append(self.invocation.config)
        for directory in _parents(bases):  # their own mtimes are not kept: only what they hold counts
            for name in _NEARBY:
                found[os.path.join(directory, name)] = _status(os.path.join(directory, name))
            found[os.path.join(directory, ".git")] = _status(os.path.join(directory, ".git")) is not None or None
        package = os.path.dirname(os.path.abspath(__file__))
        for directory, subdirectories, files in os.walk(package):
            subdirectories[:] = [d for d in subdirectories if d != "__pycache__"]
            found[directory] = _status(directory)
            for name in files:
                found[os.path.join(directory, name)] = _status(os.path.join(directory, name))
        return found


class _Tee:
    """A stream that also keeps what is written to it."""

    def __init__(self, stream: IO[str], index: int, chunks: list[tuple[int, str]]) -> None:
        self.unrecorded = stream  # (the progress line writes here: it is not part of the report)
        self._index = index
        self._chunks = chunks

    def write(self, text: str) -> int:
        self._chunks.append((self._index, text))
        return self.unrecorded.write(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> object:
        return getattr(self.unrecorded, name)


def _stream(chunk: tuple[int, str]) -> int:
    return chunk[0]


def _status(path: str) -> tuple[int, int, int, int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode)


def _parents(bases: list[str]) -> set[str]:
    """Each base (as written and with links resolved) and every directory above it."""
    found: set[str] = set()
    for base in bases:
        for start in {os.path.abspath(base), os.path.realpath(base)}:
            directory = start
            while directory not in found:
                found.add(directory)
                parent = os.path.dirname(directory)
                if parent == directory:
                    break
                directory = parent
    return found


def _mentions_torchup(directory: str) -> bool:
    try:
        with open(os.path.join(directory, "pyproject.toml"), "rb") as handle:
            return b"tool.torchup" in handle.read()
    except OSError:
        return False


def _isatty(stream: IO[str] | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def _checksum(payload: bytes) -> bytes:
    import binascii

    return binascii.crc32(payload).to_bytes(4, "big")


def _decode(
    data: bytes,
) -> tuple[tuple[object, ...], list[str], list[object], list[tuple[int, str]], int] | None:
    """The manifest's key, paths with their statuses, output and exit code; None when any part is
    not as written."""
    import marshal

    payload = data[4:]
    if len(data) < 4 or _checksum(payload) != data[:4]:
        return None
    try:
        form, key, paths, statuses, chunks, code = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    try:
        if form != _FORMAT or not isinstance(key, tuple) or not isinstance(code, int):
            return None
        if not isinstance(paths, list) or not isinstance(statuses, list) or len(paths) != len(statuses):
            return None
        if not all(i in (0, 1) and isinstance(text, str) for i, text in chunks):
            return None
    except (TypeError, ValueError):  # not pairs at all
        return None
    return key, paths, statuses, chunks, code


def write_cache_file(path: str, data: bytes) -> None:
    """Replace ``path`` (in a cache directory, made if missing) with ``data`` in one rename: a
    reader sees the old file or the new one, never half of one."""
    import tempfile

    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".torchup-cache-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        _remove(temporary)
        raise


def changed_lately(mtime_ns: int, ctime_ns: int, start_ns: int) -> bool:
    """Did a file change within ``SETTLE_SECONDS`` before ``start_ns`` (or after)? Then a second
    write in the same tick of a coarse clock would not show in its status."""
    return max(mtime_ns, ctime_ns) >= start_ns - int(SETTLE_SECONDS * 1e9)


def _prune(directory: str) -> None:
    """Keep the ``MAX_MANIFESTS`` manifests saved last."""
    saved = sorted(((_status(entry.path) or (0, 0))[1], entry.path) for entry in os.scandir(directory)
                   if entry.name.endswith(".bin"))
    for _, old in saved[:-MAX_MANIFESTS]:
        _remove(old)


def _remove(path: str) -> None:
    import contextlib

    with contextlib.suppress(OSError):
        os.unlink(path)
