"""A source file held losslessly: the bytes as read, the decoded text, and position maps.

Fixes are edits on offsets into ``text``; encoding ``text`` back with ``encoding`` restores the
original bytes exactly (BOM, coding cookie, CRLF, tabs), so everything outside an edit survives.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import io
import re
import tokenize
from dataclasses import dataclass, field
from functools import cached_property

_NEWLINE = re.compile(r"\r\n|\r|\n")


class DecodeError(Exception):
    """The bytes cannot be turned into text; ``line`` is 1-based where known."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass
class SourceFile:
    path: str
    raw: bytes
    text: str
    encoding: str  # as given by tokenize.detect_encoding; "utf-8-sig" keeps a BOM on write
    _line_starts: list[int] = field(default_factory=list, repr=False)

    @classmethod
    def from_bytes(cls, path: str, raw: bytes) -> SourceFile:
        if b"\x00" in raw:
            line = raw[: raw.index(b"\x00")].count(b"\n") + 1
            raise DecodeError("source contains a NUL byte; this looks like a binary file", line)
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        except SyntaxError as exc:
            raise DecodeError(f"cannot determine the encoding: {exc.msg}", exc.lineno or 1) from None
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
            raise DecodeError(
                f"bytes are not valid {codecs.lookup(encoding).name} ({exc.reason} at byte {exc.start});"
                " save the file as UTF-8 or declare its encoding with a coding cookie",
                line,
                column,
            ) from None
        return cls(path, raw, text, encoding)

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)

    @property
    def newline(self) -> str:
        """The file's first line ending, used for inserted lines."""
        match = _NEWLINE.search(self.text)
        return match.group() if match else "\n"

    @cached_property
    def line_starts(self) -> list[int]:
        return [0, *(m.end() for m in _NEWLINE.finditer(self.text))]

    def line_text(self, line: int) -> str:
        """Line ``line`` (1-based) without its line ending."""
        starts = self.line_starts
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def offset(self, line: int, col_byte: int) -> int:
        """Text offset of an ast position (1-based line, UTF-8 byte column)."""
        start = self.line_starts[line - 1]
        if col_byte == 0:
            return start
        line_text = self.line_text(line)
        if line_text.isascii():
            return start + col_byte
        return start + len(line_text.encode("utf-8")[:col_byte].decode("utf-8", "replace"))

    def node_range(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def segment(self, node: ast.AST) -> str:
        start, end = self.node_range(node)
        return self.text[start:end]

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column in characters) of a text offset."""
        line = bisect.bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1
