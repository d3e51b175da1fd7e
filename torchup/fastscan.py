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
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from typing import IO

# A line that starts like a UTF-16 or UTF-32 byte-order mark (FF FE, FE FF, 00 00 FE FF). In such
# a file the words cannot be seen byte by byte, so with ``or_wide_start`` it counts as a hit and
# is read in full (which reports it). GNU grep's `.` matches a NUL byte; a grep whose `.` does
# not would miss only the UTF-32 big-endian mark.
_WIDE_START = b"^(\xff\xfe|\xfe\xff|..\xfe\xff)"
_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")


def pattern_for(words: Iterable[str]) -> str | None:
    """The POSIX ERE for "one of ``words`` as a whole word"; None if a word is not plain ASCII."""
    words = sorted(set(words))
    if not words or not all(_IDENTIFIER.fullmatch(word) for word in words):
        return None
    return f"(^|[^A-Za-z0-9_])({'|'.join(words)})([^A-Za-z0-9_]|$)"


class Grep:
    """One grep over some files, running while the caller goes on (``result`` waits for it). Its
    output goes to an unnamed temporary file: a pipe that nobody reads yet would fill and stop it."""

    def __init__(self, paths: Sequence[str], process: subprocess.Popen[bytes], output: IO[bytes]) -> None:
        self.paths = paths
        self._process = process
        self._output = output

    @classmethod
    def start(cls, paths: Sequence[str], words: Iterable[str], or_wide_start: bool = False) -> Grep | None:
        """grep looking for ``words`` as whole words in ``paths`` (with ``or_wide_start``, for a
        line that starts like a UTF-16/32 byte-order mark too); None when it cannot answer (no
        grep, a word that is not a plain identifier, no process)."""
        expression = pattern_for(words)
        grep = shutil.which("grep")
        if expression is None or grep is None:
            return None
        # -a: binary files are text too; -D skip: never open a FIFO or device (it could block);
        # -s: errors show in the exit status alone; --null: any byte may occur in a file name;
        # -n -o -H: `name NUL line:match` for each match (a match is one line at most).
        options: list[str | bytes] = [grep, "-n", "-o", "-H", "-a", "-s", "-E", "-D", "skip", "--null"]
        options += ["-e", expression, *(["-e", _WIDE_START] if or_wide_start else [])]
        try:  # (no room in the temporary directory, say: then Python scans)
            output = tempfile.TemporaryFile()  # noqa: SIM115 (closed by ``result`` or ``stop``)
        except OSError:
            return None
        try:
            process = subprocess.Popen(
                [*options, "--", *paths], stdout=output, stderr=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"}
            )
        except OSError:
            output.close()
            return None
        return cls(paths, process, output)

    def result(self) -> dict[str, tuple[int, ...]] | None:
        """The files with a hit, each with the numbers of the lines (counted by `\\n`) grep
        matched, once grep is done; None when it cannot answer for every file (then scan in
        Python). Every line that holds a word is there, though not every word on it (grep's `-o`
        matches do not overlap, and in `qr,cholesky` the comma went with `qr`): read them again."""
        with self._output:
            try:
                code = self._process.wait(timeout=600)
            except subprocess.TimeoutExpired:
                self.stop()
                return None
            if code not in (0, 1):  # 2: an error, perhaps one file; do not guess which
                return None
            self._output.seek(0)
            found: dict[str, set[int]] = {}
            if not _read_matches(self._output.read(), found) or not set(found) <= set(self.paths):
                return None  # (a name grep printed that was not asked: distrust it)
        return {path: tuple(sorted(lines)) for path, lines in found.items()}

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._output.close()


def _read_matches(output: bytes, found: dict[str, set[int]]) -> bool:
    """Add grep's `name NUL line:match LF` records to ``found``; False if one does not parse."""
    position, size = 0, len(output)
    while position < size:
        name_end = output.find(b"\0", position)
        colon = output.find(b":", name_end + 1)
        line_end = output.find(b"\n", colon + 1)
        if name_end < 0 or colon < 0 or line_end < 0 or not output[name_end + 1 : colon].isdigit():
            return False
        name = os.fsdecode(output[position:name_end])
        found.setdefault(name, set()).add(int(output[name_end + 1 : colon]))
        position = line_end + 1
    return True
