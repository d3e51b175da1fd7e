"""Stage 1 of the pre-filter for many files at once, by ``grep``, when the machine has one.

Finding the trigger words in every file is most of a cold run's time on code that rarely
mentions them: Python's regex engine reads about 80 MB/s, grep several hundred. The question
asked is the same — does the file contain one of these words as a whole word (ASCII letters,
digits and ``_`` delimit words, as for ``\\b`` in a bytes pattern)? — spelled as a plain POSIX
extended regex with explicit boundaries, so that no grep extension (``-w``) is relied on. Any
failure (no grep, an option it lacks, a file it could not read) gives None, and the caller
scans in Python as before; the answers are compared with Python's in tests/test_fastscan.py.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from torchup.prefilter import TriggerPattern

# The byte pairs that start a UTF-16 or UTF-32 byte-order mark (FF FE, FE FF; 00 00 FE FF holds
# the second). In such a file the words cannot be seen byte by byte, so with ``or_wide_start`` a
# line that holds one counts as a hit and the file is read in full (which reports it). Neither byte
# occurs in UTF-8, and unanchored, the pairs cost grep nothing: with `^` and a two-byte wildcard
# for the UTF-32 mark, its fast search gave way and it took a fifth longer.
_WIDE_MARKS = (b"\xff\xfe", b"\xfe\xff")
_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")
Line = tuple[int, int]  # a line grep matched: its 1-based number (lines end at LF) and where it starts


def pattern_for(words: Iterable[str]) -> str | None:
    """The POSIX ERE for "one of ``words`` as a whole word"; None if a word is not plain ASCII."""
    words = sorted(set(words))
    if not words or not all(_IDENTIFIER.fullmatch(word) for word in words):
        return None
    return f"(^|[^A-Za-z0-9_])({'|'.join(words)})([^A-Za-z0-9_]|$)"


def _which(program: str) -> str | None:
    """``shutil.which`` for a bare name on a POSIX ``PATH``, without importing shutil (and the
    compression modules it imports) at every cold run's start. (Elsewhere a name without its
    extension is not found: Python then scans, as without grep.)"""
    path = os.environ.get("PATH", os.defpath)
    if not path:
        return None  # (as shutil.which: an empty PATH names no directory)
    for directory in path.split(os.pathsep):
        candidate = os.path.join(directory or os.curdir, program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _anonymous_file() -> IO[bytes]:
    """A file with no name for grep's output, which ``Grep.result`` or ``Grep.stop`` closes: in
    memory where the system has ``memfd_create`` (no import of tempfile, no disk), else a
    temporary file."""
    if hasattr(os, "memfd_create"):
        try:
            return open(os.memfd_create("torchup-grep", os.MFD_CLOEXEC), "w+b")
        except OSError:
            pass  # (a kernel without it)
    import tempfile

    return tempfile.TemporaryFile()


class Grep:
    """One grep over some files, running while the caller goes on (``result`` waits for it). Its
    output goes to an unnamed temporary file: a pipe that nobody reads yet would fill and stop it."""

    def __init__(
        self, paths: Sequence[str], process: subprocess.Popen[bytes], output: IO[bytes], words: re.Pattern[bytes],
        or_wide_start: bool,
    ) -> None:
        self.paths = paths
        self._process = process
        self._output = output
        self._words = words
        self._or_wide_start = or_wide_start

    @classmethod
    def start(
        cls, paths: Sequence[str], pattern: TriggerPattern, also: Iterable[str] = (), or_wide_start: bool = False
    ) -> Grep | None:
        """grep looking for the words of ``pattern`` and ``also`` as whole words in ``paths`` (with
        ``or_wide_start``, for a byte-order mark of UTF-16/32 too); None when it cannot answer (no
        grep, a word that is not a plain identifier, no process)."""
        words = sorted(pattern.words)
        expression = pattern_for([*words, *also])
        grep = _which("grep")
        if not words or expression is None or grep is None:
            return None
        # -a: binary files are text too; -D skip: never open a FIFO or device (it could block);
        # -s: errors show in the exit status alone; --null: any byte may occur in a file name;
        # -n -b -H: `name NUL line:offset:text LF` for each line that matches.
        options: list[str | bytes] = [grep, "-n", "-b", "-H", "-a", "-s", "-E", "-D", "skip", "--null"]
        options += ["-e", expression, *(["-e", b"|".join(_WIDE_MARKS)] if or_wide_start else [])]
        try:  # (no room in the temporary directory, say: then Python scans)
            output = _anonymous_file()
        except OSError:
            return None
        try:
            process = subprocess.Popen(
                [*options, "--", *paths], stdout=output, stderr=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"}
            )
        except OSError:
            output.close()
            return None
        return cls(paths, process, output, pattern.bytes, or_wide_start)

    def result(self) -> dict[str, tuple[Line, ...]] | None:
        """The files where a line holds one of the pattern's words (or a byte-order mark), each with every
        line grep matched, ``also``'s included: (number counted by `\\n`, offset of its start);
        None when grep cannot answer for every file (then scan in Python)."""
        with self._output:
            # A plain wait: with a timeout, Popen.wait polls, sleeping up to 50 ms between looks,
            # and the workers would wait that long for a batch grep has long finished. (grep reads
            # regular files only, as Python would: it cannot block where a read by Python would not.)
            code = self._process.wait()
            if code not in (0, 1):  # 2: an error, perhaps one file; do not guess which
                return None
            self._output.seek(0)
            found: dict[str, list[Line]] = {}
            hits: set[str] = set()
            if not self._read_matches(self._output.read(), found, hits) or not set(found) <= set(self.paths):
                return None  # (a name grep printed that was not asked: distrust it)
        return {path: tuple(lines) for path, lines in found.items() if path in hits}

    def _read_matches(self, output: bytes, found: dict[str, list[Line]], hits: set[str]) -> bool:
        """Add grep's `name NUL line:offset:text LF` records to ``found``, and to ``hits`` the names
        whose text holds one of the words or a mark; False if a record does not parse."""
        position, size = 0, len(output)
        words, wide = self._words, self._or_wide_start
        raw_name, name, lines = b"", "", []  # (a file's records come one after another)
        while position < size:
            name_end = output.find(b"\0", position)
            colon = output.find(b":", name_end + 1)
            second = output.find(b":", colon + 1)
            line_end = output.find(b"\n", second + 1)
            if name_end < 0 or colon < 0 or second < 0 or line_end < 0:
                return False
            number, offset = output[name_end + 1 : colon], output[colon + 1 : second]
            if not (number.isdigit() and offset.isdigit()):
                return False
            if output[position:name_end] != raw_name:
                raw_name = output[position:name_end]
                name = os.fsdecode(raw_name)
                lines = found.setdefault(name, [])
            lines.append((int(number), int(offset)))
            if name not in hits and (
                words.search(output, second + 1, line_end) is not None
                or (wide and any(mark in output[second + 1 : line_end] for mark in _WIDE_MARKS))
            ):
                hits.add(name)
            position = line_end + 1
        return True

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._output.close()
