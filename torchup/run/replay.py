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
- what the from-version was read from (torchup.settings.torch_requirement): the files it read or
  looked for, and the directories it listed that the walk did not (above the paths given, and
  ``sys.path``'s where the installed torch decided), by the names that matter in them (``NAMES``);
- torchup's own files (an edited torchup is another tool, whatever its version says).

A status that changed within ``SETTLE_SECONDS`` before the run began (or during it) is racy: clocks
tick coarsely (FAT counts in 2 s steps; Linux stamps files from a clock a tick behind), so a write
in the same tick, during the run or after it, could leave the status as it was. A racy status
proves nothing, so such a path is pinned by its content instead (``Recorder._pins``), which a
replay compares (a file's bytes, a directory's entries):
- a file checked, by the digest of the bytes the run read, which its findings came from, as the
  findings cache knows them (``Cache.used``): equal bytes, equal findings, whatever happened to the
  file meanwhile. (Not a notebook, nor a file the report quotes lines of read a second time: those
  readings are not kept, and nothing is saved.)
- a directory walked, or a configuration or ``.gitignore`` file: what the walk and the settings
  made of them is not kept, so at the end of the run a walk must find the same files and
  directories again and the settings must come out as the run's, for the command and for each file
  (as the cache keys them); their contents are taken just before that.
A racy file of torchup's own means that nothing is saved: the next run records. So a tree copied
or checked out just now is replayed from the second run on, which compares those contents (about
a tenth of a second for all of torch's 50 MB of sources); a replay that finds a pinned path settled
saves its status in the manifest instead, and the runs after it only ``stat``.

Nor is anything saved by a run that wrote a file, printed a warning or an error, or ran with
``--no-cache``, ``--output-file`` or stdin. A manifest whose checksum fails is ignored with a
warning, never trusted.
"""

from __future__ import annotations

import os
import sys

from torchup import __version__

TYPE_CHECKING = False  # (not typing's: see torchup.cli.main)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from typing import IO

    from torchup.check.checker import Checker
    from torchup.discover.discovery import Discovery
    from torchup.run.cache import Cache

    Pin = tuple[str, int, int, str]  # path, FILE, LISTING or NAMES, size (a file's), digest
    Manifest = tuple[tuple[object, ...], list[str], list[object], list[Pin], list[tuple[int, str]], int]

CACHE_DIR_NAME = ".torchup_cache"
SETTLE_SECONDS = 2.0
MAX_MANIFESTS = 32  # per torchup version: one per command line and working directory in use
_FORMAT = 4  # 3: content pins; 4: NAMES pins
# A path whose status is racy is pinned by its content (see the module's docstring): a file by the
# digest of its bytes, a directory by the digest of its entries. A directory the from-version was
# looked for in, which the walk did not list, is pinned by the names of its entries that can hold
# a torch requirement or torch's metadata (``project_names``), for good: its status would change
# with every file made there (a temporary directory's), its listing with any other entry.
FILE, LISTING, NAMES = 0, 1, 2
_NEARBY = ("torchup.toml", "pyproject.toml", ".gitignore")  # where a directory's settings and ignores come from

# Options a replayed command line may hold; any other (an abbreviation, --no-cache, --output-file,
# --add-noqa, --show-settings, --stdin-filename, --help) takes the full run.
_SWITCHES = frozenset({
    "--no-respect-gitignore", "--follow-links", "--unsafe-fixes", "--diff", "--statistics", "--show-fixes",
    "--isolated", "--no-prefilter", "--exit-zero", "-q", "--quiet", "--verbose", "--fix",
})
_VALUED = frozenset({
    "--select", "--extend-select", "--ignore", "--exclude", "--extend-exclude", "--output-format", "--jobs", "-j",
    "--target-version", "--from-version", "--target-python", "--config",
})


class Invocation:
    """A ``check`` or ``fix`` command line whose output a manifest may hold."""

    __slots__ = ("argv", "config", "fixes", "isolated", "paths")

    def __init__(self, argv: list[str], paths: list[str], config: str | None, isolated: bool) -> None:
        self.argv = argv
        self.paths = paths
        self.config = config
        self.isolated = isolated
        # (a fix reads the files it fixes a second time: a digest of the first read would not cover it)
        self.fixes = argv[0] == "fix" or "--fix" in argv or "--diff" in argv

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
    saved_key, paths, statuses, pins, chunks, code = manifest
    try:
        if saved_key != key:
            return None
        settled = _unchanged(paths, statuses, pins)
        if settled is None:
            return None
    except (TypeError, ValueError):  # (its checksum holds, but not its layout: not ours)
        return None
    streams = (sys.stdout, sys.stderr)
    try:
        for index, text in chunks:
            streams[index].write(text)
            streams[index].flush()  # (in order, where both go to one terminal)
    except BrokenPipeError:  # `torchup check | head`: as torchup.core.guard answers it in a full run
        return 0
    if any(status is not None for status in settled):  # pinned paths that have settled since
        _settle(path, manifest, settled)
    return code


# A tree of more paths than this is compared in two processes, each half (a fork costs well under
# a millisecond at this point, a thousand stats three or four).
SPLIT_PATHS = 1500
PIN_WEIGHT = 10  # a pin reads and hashes a file, or lists a directory: about ten stats


def _unchanged(paths: list[str], statuses: list[object], pins: list[Pin]) -> list[int | None] | None:
    """None if a path has changed (see ``_same``); else, for each pin, the status that may stand for
    it from now on, or None while it has not settled. A long list is split with a forked child,
    which answers by its exit status, and with its pins' statuses through a pipe."""
    if len(paths) + PIN_WEIGHT * len(pins) < SPLIT_PATHS or not hasattr(os, "fork"):
        return _same(paths, statuses, pins)
    half, middle = len(paths) // 2, len(pins) // 2
    try:
        readable, writable = os.pipe()
    except OSError:
        return _same(paths, statuses, pins)
    try:
        pid = os.fork()
    except OSError:
        os.close(readable)
        os.close(writable)
        return _same(paths, statuses, pins)
    if pid == 0:  # the child ends here whatever happens (no cleanup, no flush of copied buffers)
        code = 1  # (an error, say a manifest of another layout, answers "changed": a full run)
        try:
            os.close(readable)
            answer = _same(paths[half:], statuses[half:], pins[middle:])
            if answer is not None:
                import marshal

                with open(writable, "wb") as pipe:
                    pipe.write(marshal.dumps(answer))
                code = 0
        finally:
            os._exit(code)
    os.close(writable)
    try:
        mine = _same(paths[:half], statuses[:half], pins[:middle])
    finally:
        with open(readable, "rb") as pipe:  # (read before waiting: the child may fill the pipe)
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
    if mine is None or os.waitstatus_to_exitcode(status) != 0:
        return None
    import marshal

    theirs = marshal.loads(data)
    return None if not isinstance(theirs, list) else mine + theirs


def _same(paths: list[str], statuses: list[object], pins: list[Pin]) -> list[int | None] | None:
    """None if a path lacks the status the manifest holds for it: the hash of (size, mtime_ns,
    ctime_ns, inode, mode); None: absent; True: present, whatever its status (``.git``). (One
    64-bit hash per path, not five numbers, reads four times faster; tuples of integers hash alike
    in every process of one Python, whose version is in the key.) Else what ``_pinned`` says."""
    stat = os.stat
    for path, expected in zip(paths, statuses, strict=True):  # (a warm run's loop: thousands of paths)
        try:
            info = stat(path)
        except (OSError, ValueError):
            if expected is not None:
                return None
            continue
        if expected is not True and hash(
            (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode)
        ) != expected:
            return None
    return _pinned(pins) if pins else []


def _pinned(pins: list[Pin]) -> list[int | None] | None:
    """None if a pinned path's content differs from the digest the manifest holds for it; else, for
    each, the hash of its status if that status has settled now, or None. (Its status is taken
    before its content is read, and once settled it shows any later write: together they may
    stand for the content from now on. A write between the two changes the status, and the one
    kept then matches nothing: a full run, never a stale replay.)"""
    import time

    now = time.time_ns()  # (before any status is taken)
    settled: list[int | None] = []
    for path, kind, size, expected in pins:
        try:
            info = os.stat(path)
            if kind == FILE:
                found = _file_digest(path, info, size)
            elif kind == LISTING and info.st_mode & 0o170000 == 0o040000:
                with os.scandir(path) as entries:
                    found = listing_digest(entries)
            elif kind == NAMES and info.st_mode & 0o170000 == 0o040000:
                found = names_digest(path, os.listdir(path))
            else:
                found = None
        except (OSError, ValueError):
            return None
        if found != expected:
            return None
        status = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode)
        lately = kind == NAMES or changed_lately(info.st_mtime_ns, info.st_ctime_ns, now)  # (NAMES never settle)
        settled.append(None if lately else hash(status))
    return settled


def _file_digest(path: str, info: os.stat_result, size: int) -> str | None:
    """The digest of a regular file of ``size`` bytes (None for anything else: a FIFO put in its
    place must not block the replay, nor a file grown large make it read all of that)."""
    if info.st_mode & 0o170000 != 0o100000 or info.st_size != size:
        return None
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as handle:
        return digest(handle.read(size + 1))


def _settle(path: str, manifest: Manifest, settled: list[int | None]) -> None:
    """Save the manifest again with the statuses of the pinned paths that have settled in place of
    their pins: the next replay only ``stat``s them. (Another run may have saved it meanwhile: this
    one holds as well, as each of its statuses was checked against content.)"""
    key, paths, statuses, pins, chunks, code = manifest
    kept = []
    for pin, status in zip(pins, settled, strict=True):
        if status is None:
            kept.append(pin)
        else:
            paths.append(pin[0])
            statuses.append(status)
    import contextlib

    with contextlib.suppress(OSError):  # (a read-only cache: replays go on comparing contents)
        _write_manifest(path, key, paths, statuses, kept, chunks, code)


class Recorder:
    """Keeps what a full run prints; once the run has told it what it read (``completed``), ``save``
    writes the manifest, if the run may be replayed."""

    def __init__(self, invocation: Invocation) -> None:
        import time

        self.invocation = invocation
        self.key = invocation.key()  # (the real streams decide whether they are terminals)
        self.start_ns = time.time_ns()
        self.chunks: list[tuple[int, str]] = []
        self.read: tuple[Path, Discovery, list[str], Cache | None, Checker | None] | None = None
        self.streams = (sys.stdout, sys.stderr)
        sys.stdout = _Tee(sys.stdout, 0, self.chunks)  # type: ignore[assignment]
        sys.stderr = _Tee(sys.stderr, 1, self.chunks)  # type: ignore[assignment]

    def completed(self, root: Path, discovery: Discovery, paths: list[str], *, wrote: bool,
                  cache: Cache | None = None, checker: Checker | None = None) -> None:
        """The run printed its report: ``root`` of its cache, the ``discovery`` that walked (and what
        it listed), every path it was given to check, the ``cache`` its findings came through, the
        ``checker`` with the settings of each file; ``wrote``: it changed a file (then there is
        nothing to replay)."""
        if not wrote:
            self.read = (root, discovery, paths, cache, checker)

    def stop(self) -> None:
        sys.stdout, sys.stderr = self.streams  # type: ignore[assignment]

    def save(self, code: int) -> None:
        if self.read is None or any(index == 1 and text.startswith("torchup:") for index, text in self.chunks):
            return  # not a completed report, or one with a warning or an error: run it again next time
        root, discovery, paths, cache, checker = self.read
        if str(root) != self.invocation.root() or not os.path.isdir(os.path.join(root, CACHE_DIR_NAME, __version__)):
            return  # the fast path would not look there; or the run kept no cache
        # What the from-version of each file was read from (torchup.settings.torch_requirement): the
        # files it read or looked for by name, by their status; the directories it listed that the
        # walk did not, by the names in them that can matter, as it found them.
        detector = getattr(checker.settings_for if checker is not None else None, "detector", None)
        dependencies = self._dependencies(discovery.listed, paths, sorted(getattr(detector, "read", ())))
        pins = self._pins(dependencies, discovery, paths, cache, checker)
        if pins is None:
            return  # changed just before or during the run, and not to be told by its content
        listed: dict[str, list[str]] = getattr(detector, "listed", {})
        pins += [(directory, NAMES, 0, names_digest(directory, names)) for directory, names in sorted(listed.items())
                 if directory not in dependencies and not any(pin[0] == directory for pin in pins)]
        import itertools

        # One write per stream in turn, not one per line.
        chunks = [(index, "".join(text for _, text in run)) for index, run in itertools.groupby(self.chunks, _stream)]
        statuses = [hash(status) if isinstance(status, tuple) else status for status in dependencies.values()]
        path = self.invocation.manifest(self.key)
        try:
            _write_manifest(path, self.key, list(dependencies), statuses, pins, chunks, code)
            _prune(os.path.dirname(path))
        except OSError:
            pass  # a read-only cache: the findings cache warned already, and the next run is only slower

    def _pins(self, dependencies: dict[str, object], discovery: Discovery, paths: list[str],
              cache: Cache | None, checker: Checker | None) -> list[Pin] | None:
        """Content pins for the ``dependencies`` whose status is racy (taken out of them), or None if
        one of them cannot be pinned. (See the module's docstring for why each holds.)"""
        used = cache.used if cache is not None else {}
        if any(dependencies[path] is None and os.path.abspath(path) in used for path in paths):
            return None  # read, then removed: the report would stand for a file that is not there
        racy = [path for path, status in dependencies.items()
                if isinstance(status, tuple) and changed_lately(status[1], status[2], self.start_ns)]
        if not racy:
            return []
        if self.invocation.fixes or checker is None:
            return None  # a fix reads the files it fixes again: no digest covers that second reading
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # (torchup/, not torchup/run/)
        targets = set(paths)
        pins: list[Pin] = []
        others = []
        for path in racy:
            if path == package or path.startswith(package + os.sep):
                return None  # torchup's own code, imported before anything could be kept of it
            if path in targets:
                read = used.get(os.path.abspath(path))
                if read is None or read[3]:
                    return None  # a notebook, a failure, a file the report quotes from a second reading
                pins.append((path, FILE, read[0], read[1]))
            else:
                others.append(path)  # a directory, a configuration or .gitignore file
        if others:
            # What the walk and the settings made of these is not kept, so both are done again and
            # must come out as in the run. Their contents are taken first: one that changes after
            # that is kept as it was, which the tree then no longer matches (a replay would need a
            # change back as well, after the second walk).
            contents = [_content(path) for path in others]
            if None in contents or not self._reproduced(discovery, paths, used, checker):
                return None
            pins.extend((path, *found) for path, found in zip(others, contents, strict=True) if found is not None)
        for path in racy:
            del dependencies[path]
        return pins

    def _reproduced(self, discovery: Discovery, paths: list[str], used: dict[str, tuple[int, str, str, bool]],
                    checker: Checker) -> bool:
        """Whether a walk now finds the same paths and directories, and the settings now are those of
        the run, for the command and for each file it checked (as the cache keys them)."""
        import dataclasses

        from torchup.check.checker import Checker
        from torchup.settings.provider import SettingsProvider

        provider = checker.settings_for
        if not isinstance(provider, SettingsProvider):
            return False
        given = [(path, used.get(os.path.abspath(path))) for path in paths]
        if any(entry is None and os.path.lexists(path) for path, entry in given):
            return False  # a notebook, say: the settings it was checked with are not known here
        first = self.invocation.paths[0]
        try:
            ran = provider.settings(first)  # (what the run resolved: the provider keeps each answer)
            walk = dataclasses.replace(discovery, listed=[])
            if list(dict.fromkeys(target.path for target in walk.targets(self.invocation.paths))) != paths:
                return False  # (also where a file is reached twice, by a link: the run counts it once)
            if walk.listed != discovery.listed:
                return False
            fresh = SettingsProvider(provider.overrides, config=provider.config, isolated=provider.isolated)
            now = fresh.settings(first)
            if (now, now.config_file) != (ran, ran.config_file):
                return False
            again = Checker([], prefilter=checker.prefilter, settings_for=fresh)
            return all(again.fingerprint(path) == entry[2] for path, entry in given if entry is not None)
        except Exception:  # (a configuration that no longer parses, say: nothing to save)
            return False

    def _dependencies(self, directories: list[str], paths: list[str], read: Iterable[str] = ()) -> dict[str, object]:
        found: dict[str, object] = {path: _status(path) for path in paths}
        for path in read:
            found[path] = _status(path)
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
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # (torchup/, not torchup/run/)
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


def digest(data: bytes) -> str:
    """The digest of a file's bytes, for the findings cache and the content pins."""
    try:
        from _blake2 import blake2b  # (hashlib's own, without loading OpenSSL for it: 2 ms)
    except ImportError:  # pragma: no cover (another Python)
        from hashlib import blake2b
    return blake2b(data, digest_size=16).hexdigest()


def listing_digest(entries: Iterable[os.DirEntry[str]]) -> str:
    """The digest of a directory's entries: their names, and which are directories or links (what
    the walk goes by, with no ``stat`` of its own)."""
    named = sorted(f"{e.name}\0{e.is_dir(follow_symlinks=False):d}{e.is_symlink():d}" for e in entries)
    return digest("\0".join(named).encode("utf-8", "surrogateescape"))


_PROJECT_FILES = frozenset({"pyproject.toml", "setup.cfg", "setup.py", "environment.yml", "environment.yaml", ".git"})


def project_names(directory: str, names: Iterable[str]) -> list[str]:
    """Of the entries of ``directory``, sorted, those a torch requirement or torch's installed
    metadata may be read from, or that end the search for them (torchup.settings.torch_requirement:
    its ``Detector`` reads no other): ``pyproject.toml``, ``setup.cfg``, ``setup.py``,
    ``environment.y(a)ml``, ``requirements*``, ``.git``, ``torch-*.dist-info`` / ``.egg-info``;
    in a ``requirements`` directory, every ``*.txt``."""
    every_text = os.path.basename(directory) == "requirements"
    return sorted(
        name for name in names
        if name in _PROJECT_FILES or name.startswith("requirements") or (every_text and name.endswith(".txt"))
        or (name[:6].lower() == "torch-" and name.lower().endswith((".dist-info", ".egg-info")))
    )


def names_digest(directory: str, names: Iterable[str]) -> str:
    """The digest of the ``project_names`` among the entry names of ``directory`` (a NAMES pin)."""
    return digest("\0".join(project_names(directory, names)).encode("utf-8", "surrogateescape"))


def _content(path: str) -> tuple[int, int, str] | None:
    """A pin's kind, size and digest for the content of ``path`` now: a file's bytes, a directory's
    entries; None for anything else."""
    try:
        info = os.stat(path)
        if info.st_mode & 0o170000 == 0o040000:
            with os.scandir(path) as entries:
                return LISTING, 0, listing_digest(entries)
        found = _file_digest(path, info, info.st_size)
    except OSError:
        return None
    return None if found is None else (FILE, info.st_size, found)


def _write_manifest(path: str, key: tuple[object, ...], paths: list[str], statuses: list[object],
                    pins: list[Pin], chunks: list[tuple[int, str]], code: int) -> None:
    import marshal

    payload = marshal.dumps((_FORMAT, key, paths, statuses, pins, chunks, code))
    write_cache_file(path, _checksum(payload) + payload)


def _checksum(payload: bytes) -> bytes:
    import binascii

    return binascii.crc32(payload).to_bytes(4, "big")


def _decode(data: bytes) -> Manifest | None:
    """The manifest's key, paths with their statuses, content pins, output and exit code; None when
    any part is not as written."""
    import marshal

    payload = data[4:]
    if len(data) < 4 or _checksum(payload) != data[:4]:
        return None
    try:
        form, key, paths, statuses, pins, chunks, code = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    try:
        if form != _FORMAT or not isinstance(key, tuple) or not isinstance(code, int):
            return None
        if not isinstance(paths, list) or not isinstance(statuses, list) or len(paths) != len(statuses):
            return None
        if not isinstance(pins, list) or not all(
            isinstance(path, str) and kind in (FILE, LISTING, NAMES) and isinstance(size, int)
            and isinstance(found, str)
            for path, kind, size, found in pins
        ):
            return None
        if not all(i in (0, 1) and isinstance(text, str) for i, text in chunks):
            return None
    except (TypeError, ValueError):  # not tuples of the right length at all
        return None
    return key, paths, statuses, pins, chunks, code


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
