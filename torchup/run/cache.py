"""A content-hash cache of findings, so a re-run over an unchanged tree does almost nothing.

``.torchup_cache/<tool version>/findings.json`` maps each checked file to its size, mtime, ctime,
inode, a BLAKE2 hash of its bytes, the fingerprint of the settings it was checked with, and its
findings. A file whose status matches is a hit without being read; otherwise (another size is a
miss) its bytes are hashed and compared. The ctime and inode catch what mtime and size miss: a file
replaced by one of the same size with its mtime set back (``cp -p``, an atomic save, a checkout).
A status taken within ``replay.SETTLE_SECONDS`` of the run's start is not trusted either: a second
write in the same tick of a coarse clock would not show in it (the file could even have changed
between its reading and its ``stat``). Such an entry is marked racy, and its bytes are hashed on
every lookup until its status has settled.
Different settings (rules, target Python or release, from-version, pre-filter) or another torchup
version never match. A cache file that cannot be read is ignored with a warning, never trusted.

Before any of this, ``torchup.run.replay`` may answer a whole run from the status of its files; for
those changed just before the run, from the digests this cache kept of what the run read (``used``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import Any

from torchup import __version__
from torchup.analysis.project import MethodDefinition
from torchup.core.diagnostics import Applicability, Confidence, Diagnostic, Edit, Fix, ImportRequest, Severity
from torchup.run import replay
from torchup.run.replay import CACHE_DIR_NAME

# 2: the methods a file's classes define (torchup.analysis.project), a fix's `replaces`; 3: `parsed`;
# 4: a finding's `since` and `change`; 5: its `confidence`; 6: the TorchFix codes whose noqa comment silenced one
_FORMAT = 7
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by torchup.\n"


def digest(raw: bytes) -> str:
    return replay.digest(raw)  # (one definition: a replay compares files with the digests kept here)


@dataclass(frozen=True)
class FileState:
    """What the cache knows of a file's bytes: its status and their hash."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    digest: str


def file_state(path: str, raw: bytes) -> FileState | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return FileState(stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, digest(raw))


@dataclass
class Cache:
    """The findings of unchanged files, per tool version and settings (`.torchup_cache/`)."""

    directory: Path
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    dirty: bool = False
    opened_ns: int = field(default_factory=time.time_ns)  # the run's start, for racy statuses
    # What this run's findings came from, per absolute path: size and digest of the bytes behind
    # them, the settings' fingerprint, and whether the report quotes lines read from the file again
    # (torchup.run.replay pins a file that changed just before the run by these bytes, if not).
    used: dict[str, tuple[int, str, str, bool]] = field(default_factory=dict)

    def _racy(self, mtime_ns: int, ctime_ns: int) -> bool:
        return replay.changed_lately(mtime_ns, ctime_ns, self.opened_ns)

    @property
    def file(self) -> Path:
        return self.directory / __version__ / "findings.json"

    @classmethod
    def open(cls, root: Path) -> Cache:
        cache = cls(root / CACHE_DIR_NAME)
        try:
            text = cache.file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cache
        except OSError as exc:
            sys.stderr.write(f"torchup: warning: cannot read the cache {cache.file} ({exc.strerror}); ignoring it\n")
            return cache
        try:
            document = json.loads(text)
            if isinstance(document, dict) and isinstance(document.get("format"), int) \
                    and document["format"] != _FORMAT:
                cache.dirty = True  # written by a development build of another layout: start afresh, quietly
                return cache
            if document.get("format") != _FORMAT or not isinstance(document.get("files"), dict):
                raise ValueError("unknown layout")
            cache.entries = document["files"]
        except (ValueError, AttributeError) as exc:
            sys.stderr.write(f"torchup: warning: the cache {cache.file} is corrupt ({exc}); ignoring it\n")
            cache.entries = {}
            cache.dirty = True
        return cache

    def lookup(
        self, path: str, settings: str, stat: os.stat_result | None = None
    ) -> tuple[list[Diagnostic], list[MethodDefinition]] | None:
        """The cached findings of ``path``, and the methods its classes define, if its content and
        settings are unchanged, else None (``stat``: its status, when the caller has just taken it)."""
        entry = self.entries.get(_absolute(path))
        if not isinstance(entry, dict) or entry.get("settings") != settings:
            return None
        try:
            stat = stat or os.stat(path)
            if not S_ISREG(stat.st_mode) or stat.st_size != entry["size"]:
                return None  # (a FIFO now where a file was: never open it here)
            status = {"mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns, "inode": stat.st_ino}
            if entry.get("racy") or any(entry.get(key) != value for key, value in status.items()):
                with open(path, "rb") as handle:
                    if digest(handle.read()) != entry["digest"]:
                        return None
                entry.update(status, racy=self._racy(stat.st_mtime_ns, stat.st_ctime_ns))  # touched, not changed
                self.dirty = True
            methods = [MethodDefinition(method, owner, path, line) for method, owner, line in entry["methods"]]
            diagnostics = [_diagnostic(item) for item in entry["diagnostics"]]
            # (the runner reads a file with findings again, for the report to quote its lines)
            self.used[_absolute(path)] = (stat.st_size, str(entry["digest"]), settings, bool(diagnostics))
            return diagnostics, methods
        except (OSError, KeyError, TypeError, ValueError):
            return None  # never trust an entry we cannot fully read

    def store(
        self, path: str, state: FileState, settings: str, diagnostics: list[Diagnostic],
        methods: list[MethodDefinition], *, parsed: bool = True, torchfix_noqa: list[str] | None = None,
    ) -> None:
        """``parsed``: False when the pre-filter alone settled the file (``parsed(path)`` says so of a
        hit); ``torchfix_noqa``: the TorchFix codes whose `# noqa` silenced a finding there."""
        self.used[_absolute(path)] = (state.size, state.digest, settings, False)  # (one reading: findings, lines)
        self.entries[_absolute(path)] = {
            "size": state.size,
            "mtime_ns": state.mtime_ns,
            "ctime_ns": state.ctime_ns,
            "inode": state.inode,
            "digest": state.digest,
            "racy": self._racy(state.mtime_ns, state.ctime_ns),
            "settings": settings,
            "diagnostics": [_encode(d) for d in diagnostics],
            "methods": [[m.method, m.owner, m.line] for m in methods],
            "parsed": parsed,
            "torchfix_noqa": list(torchfix_noqa or ()),
        }
        self.dirty = True

    def parsed(self, path: str) -> bool:
        """Whether the file of a hit (``lookup``) was parsed when its findings were made: a run
        that takes them from here says so as the run that made them would (torchup.cli.commands)."""
        entry = self.entries.get(_absolute(path))
        return not isinstance(entry, dict) or entry.get("parsed") is not False

    def torchfix_noqa(self, path: str) -> list[str]:
        """The TorchFix codes whose `# noqa` silenced a finding in the file of a hit (``lookup``)."""
        entry = self.entries.get(_absolute(path))
        codes = entry.get("torchfix_noqa") if isinstance(entry, dict) else None
        return [code for code in codes if isinstance(code, str)] if isinstance(codes, list) else []

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            tag = self.directory / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text(_TAG, encoding="utf-8")
                (self.directory / ".gitignore").write_text("# Created by torchup\n*\n", encoding="utf-8")
            document = json.dumps({"format": _FORMAT, "version": __version__, "files": self.entries})
            replay.write_cache_file(str(self.file), document.encode("utf-8"))
        except OSError as exc:  # a read-only checkout: run without a cache
            sys.stderr.write(
                f"torchup: warning: cannot write the cache in {self.directory} ({exc.strerror}): the next run "
                "will check every file again; make that a writable directory, or pass --no-cache\n"
            )


def _absolute(path: str) -> str:
    """``os.path.abspath``, without its cost for a path that is absolute and plain already
    (discovery makes such paths from an absolute root: the common case, checked per file)."""
    if os.sep == "/" and path.startswith("/") and "//" not in path and "/./" not in path and "/../" not in path \
            and not path.endswith(("/.", "/..")):
        return path
    return os.path.abspath(path)


def _encode(diagnostic: Diagnostic) -> dict[str, Any]:
    fix = diagnostic.fix
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "message": diagnostic.message,
        "path": diagnostic.path,
        "span": [diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column],
        "offsets": [diagnostic.start, diagnostic.end],
        "severity": diagnostic.severity.value,
        "help": diagnostic.help,
        "notes": diagnostic.notes,
        "cell": diagnostic.cell,
        "patches": diagnostic.patches,
        "receiver_method": diagnostic.receiver_method,
        "receiver_origin": _encode_origin(diagnostic.receiver_origin),
        "subject": diagnostic.subject,
        "since": diagnostic.since,
        "change": diagnostic.change,
        "confidence": diagnostic.confidence.value,
        "fix": None
        if fix is None
        else {
            "message": fix.message,
            "applicability": fix.applicability.value,
            "edits": [[e.start, e.end, e.content] for e in fix.edits],
            "import_edits": [[e.start, e.end, e.content] for e in fix.import_edits],
            "imports": [[r.module, r.name] for r in fix.imports],
            "replaces": fix.replaces,
            "needs": fix.needs,
        },
    }


def _diagnostic(item: dict[str, Any]) -> Diagnostic:
    line, column, end_line, end_column = item["span"]
    fix_item = item["fix"]
    fix = None
    if fix_item is not None:
        fix = Fix(
            fix_item["message"],
            Applicability(fix_item["applicability"]),
            tuple(Edit(*edit) for edit in fix_item["edits"]),
            tuple(ImportRequest(*request) for request in fix_item["imports"]),
            import_edits=tuple(Edit(*edit) for edit in fix_item["import_edits"]),
            replaces=fix_item["replaces"],
            needs=fix_item.get("needs"),
        )
    return Diagnostic(
        code=item["code"],
        name=item["name"],
        message=item["message"],
        path=item["path"],
        line=line,
        column=column,
        end_line=end_line,
        end_column=end_column,
        severity=Severity(item["severity"]),
        help=item["help"],
        fix=fix,
        start=item["offsets"][0],
        end=item["offsets"][1],
        cell=item["cell"],
        notes=list(item["notes"]),
        patches=item["patches"],
        receiver_method=item["receiver_method"],
        receiver_origin=_decode_origin(item.get("receiver_origin")),
        subject=item["subject"],
        since=item["since"],
        change=item["change"],
        confidence=Confidence(item["confidence"]),
    )


def _encode_origin(origin: tuple[str, str, tuple[int | str, ...]] | None) -> list[Any] | None:
    return None if origin is None else [origin[0], origin[1], list(origin[2])]


def _decode_origin(item: list[Any] | None) -> tuple[str, str, tuple[int | str, ...]] | None:
    return None if not item else (item[0], item[1], tuple(item[2]))
