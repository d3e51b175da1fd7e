"""A progress line on stderr for long runs: files done / total and the rate. Terminal only."""

from __future__ import annotations

import sys
import time
from typing import IO


class Progress:
    """Redraws at most ten times a second; erases itself when done."""

    MIN_FILES = 200  # shorter runs finish before a bar helps

    def __init__(self, stream: IO[str] = sys.stderr) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    @classmethod
    def for_run(cls, quiet: bool) -> Progress | None:
        # (past the recording of a run's output, torchup.run.replay: the line is not part of the report)
        return None if quiet or not sys.stderr.isatty() else cls(getattr(sys.stderr, "unrecorded", sys.stderr))

    def __call__(self, done: int, total: int) -> None:
        if total < self.MIN_FILES:
            return
        now = time.monotonic()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-6)
        width = 30
        filled = width * done // total
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files, {rate:,.0f} files/s")
        self.stream.flush()
        self.shown = True
        if done == total:
            self.stream.write("\r" + " " * 79 + "\r")
            self.stream.flush()
