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
    from torchup.prefilter.words import TriggerPattern

# With ``or_not_plain``, grep also names the lines that may keep a file from decoding: a byte that is
# not ASCII, or NUL (UTF-16/32 text of ASCII characters is full of them), and `coding:`/`coding=` (a
# coding cookie, on lines 1-2). A file where one of them holds a NUL byte, a cookie, or bytes that are
# not UTF-8 (``_read_matches``) is left to Python, which reads and decodes it (and reports it); every
# other file decodes as UTF-8, words or not, so a file without words needs no reading: UTF-8 is valid
# line by line, and the lines grep did not name are ASCII. The patterns cost grep 3-4% more work on
# torch's sources, and Python as much again for the lines they add; a pattern for invalid UTF-8 alone
# (fewer lines) cost grep 17% more, anchored at the line's start 28% (issue 20).
_NOT_PLAIN = b"[^\x01-\x7f]|coding[:=]"
_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")
# `noqa` in any case, anywhere (as suppressions.mentions_noqa): the same text for grep's ERE and Python.
_NOQA = re.compile(rb"[Nn][Oo][Qq][Aa]")
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
        or_not_plain: bool, hits: re.Pattern[bytes] | None = None,
    ) -> None:
        self.paths = paths
        self._process = process
        self._output = output
        self._words = words
        self._or_not_plain = or_not_plain
        self._hits = hits

    @classmethod
    def start(
        cls, paths: Sequence[str], pattern: TriggerPattern, also: Iterable[str] = (), or_not_plain: bool = False,
        noqa: bool = False,
    ) -> Grep | None:
        """grep looking for the words of ``pattern`` and ``also`` as whole words in ``paths`` (with
        ``or_not_plain``, for what may keep a file from decoding too; with ``noqa``, for `noqa` in any
        case and anywhere too, which makes a file a hit like a word: TU002 reads its comments);
        None when it cannot answer (no grep, a word that is not a plain identifier, no process)."""
        words = sorted(pattern.words)
        expression = pattern_for([*words, *also])
        grep = _which("grep")
        if not words or expression is None or grep is None:
            return None
        # -a: binary files are text too; -D skip: never open a FIFO or device (it could block);
        # -s: errors show in the exit status alone; --null: any byte may occur in a file name;
        # -n -b -H: `name NUL line:offset:text LF` for each line that matches.
        options: list[str | bytes] = [grep, "-n", "-b", "-H", "-a", "-s", "-E", "-D", "skip", "--null"]
        options += ["-e", expression, *(["-e", _NOT_PLAIN] if or_not_plain else [])]
        options += ["-e", _NOQA.pattern.decode("ascii")] if noqa else []
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
        return cls(paths, process, output, pattern.bytes, or_not_plain, _NOQA if noqa else None)

    def result(self) -> dict[str, tuple[Line, ...] | None] | None:
        """The files where a line holds one of the pattern's words, each with every line grep
        matched, ``also``'s and ``_NOT_PLAIN``'s included: (number counted by `\\n`, offset of its
        start); with ``or_not_plain``, those that may not decode too, each with None instead (read
        it, scan it and decode it in Python: only the others are sure to decode). None when grep
        cannot answer for every file (then scan in Python)."""
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
            unsure: set[str] = set()
            if not self._read_matches(self._output.read(), found, hits, unsure) or not set(found) <= set(self.paths):
                return None  # (a name grep printed that was not asked: distrust it)
        return {
            path: None if path in unsure else tuple(lines)
            for path, lines in found.items()
            if path in hits or path in unsure
        }

    def _read_matches(self, output: bytes, found: dict[str, list[Line]], hits: set[str], unsure: set[str]) -> bool:
        """Add grep's `name NUL line:offset:text LF` records to ``found``, to ``hits`` the names whose
        text holds one of the words, and with ``or_not_plain``, to ``unsure`` those with a line that
        may keep them from decoding; False if a record does not parse."""
        position, size = 0, len(output)
        words, not_plain = self._words, self._or_not_plain
        raw_name, name, lines = b"", "", []  # (a file's records come one after another)
        first = count = 0  # where the current file's records start, and how many there are so far
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
                if not_plain and count and _may_not_decode(output[first:position], count):
                    unsure.add(name)
                raw_name = output[position:name_end]
                name = os.fsdecode(raw_name)
                lines = found.setdefault(name, [])
                first, count = position, 0
            count += 1
            lines.append((int(number), int(offset)))
            if name not in hits and (
                words.search(output, second + 1, line_end) is not None
                or (self._hits is not None and self._hits.search(output, second + 1, line_end) is not None)
            ):
                hits.add(name)
            # (tokenize reads a coding cookie on lines 1-2 alone: any other `coding:` is no cookie)
            if not_plain and number in (b"1", b"2") and output.find(b"coding", second + 1, line_end) >= 0:
                unsure.add(name)
            position = line_end + 1
        if not_plain and count and _may_not_decode(output[first:position], count):
            unsure.add(name)
        return True

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._output.close()


def _may_not_decode(records: bytes, count: int) -> bool:
    """Do these ``count`` records of one file (see ``_read_matches``) hold a NUL byte in a line (one
    ends each name), or bytes that are not UTF-8? Checked all at once: between ASCII `:` and `\\n`,
    a line's bytes are UTF-8 if and only if they are so in the whole (a name that is not UTF-8 only
    costs a read in Python)."""
    if records.count(b"\x00") != count:
        return True
    if records.isascii():
        return False
    try:
        records.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False
