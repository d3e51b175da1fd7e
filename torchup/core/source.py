"""A source file held losslessly: the bytes as read, the decoded text, and position maps.

Fixes are edits on offsets into ``text``; encoding ``text`` back with ``encoding`` restores the
original bytes exactly (BOM, coding cookie, CRLF, tabs), so everything outside an edit survives.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import io
import itertools
import re
import tokenize
from dataclasses import dataclass, field
from functools import cached_property

_NEWLINE = re.compile(r"\r\n|\r|\n")
NOTEBOOK_SUFFIX = ".ipynb"


def is_notebook(path: str) -> bool:
    """A Jupyter notebook (checked through ``torchup.run.notebook``, imported only when one is met)."""
    return path.lower().endswith(NOTEBOOK_SUFFIX)


class DecodeError(Exception):
    """The bytes cannot be turned into text; ``line`` is 1-based where known."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def byte_position(raw: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and byte column of ``offset`` in ``raw`` (where a decode failed)."""
    return raw[:offset].count(b"\n") + 1, offset - (raw.rfind(b"\n", 0, offset) + 1) + 1


def line_start_at(text: str, offset: int) -> int:
    """Where the line holding ``offset`` starts (``\\n``, ``\\r\\n`` and a lone ``\\r`` all end lines)."""
    return max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1


def line_end_at(text: str, offset: int) -> tuple[int, int]:
    """Where the line holding ``offset`` ends (before its line ending), and where the next one starts."""
    match = _NEWLINE.search(text, offset)
    return (match.start(), match.end()) if match else (len(text), len(text))


_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32 (it starts with a UTF-32 byte-order mark)"),
    (codecs.BOM_UTF32_BE, "UTF-32 (it starts with a UTF-32 byte-order mark)"),
    (codecs.BOM_UTF16_LE, "UTF-16 (it starts with a UTF-16 byte-order mark)"),
    (codecs.BOM_UTF16_BE, "UTF-16 (it starts with a UTF-16 byte-order mark)"),
)


def wide_encoding(raw: bytes) -> str | None:
    """How ``raw`` looks UTF-16 or UTF-32 encoded (a byte-order mark, or ASCII text with NUL bytes
    between the characters), or None. Python cannot run such a file, and the byte-level pre-filter
    cannot see words in it."""
    for bom, name in _WIDE_BOMS:
        if raw.startswith(bom):
            return name
    head = raw[:256]
    head = head[: len(head) - len(head) % 4]
    if len(head) < 8 or b"\x00" not in head:
        return None
    if head[1::4].count(0) == head[2::4].count(0) == head[3::4].count(0) == len(head) // 4 and all(head[0::4]):
        return "UTF-32 (little-endian, without a byte-order mark)"
    if head[0::4].count(0) == head[1::4].count(0) == head[2::4].count(0) == len(head) // 4 and all(head[3::4]):
        return "UTF-32 (big-endian, without a byte-order mark)"
    if head[1::2].count(0) == len(head) // 2 and all(head[0::2]):
        return "UTF-16 (little-endian, without a byte-order mark)"
    if head[0::2].count(0) == len(head) // 2 and all(head[1::2]):
        return "UTF-16 (big-endian, without a byte-order mark)"
    return None


def decodes(raw: bytes) -> bool:
    """Whether ``SourceFile.from_bytes`` decodes ``raw``, told without decoding it when plain (no
    NUL byte, no coding cookie on its first two lines, ASCII): a file the pre-filter rules out is
    still a finding when it cannot be decoded, and most files are plain."""
    if b"\x00" in raw:  # (also every UTF-16/32 text of ASCII characters: see wide_encoding)
        return False
    second = raw.find(b"\n", raw.find(b"\n") + 1)  # (tokenize reads a cookie on these lines alone)
    if b"coding" in (raw if second < 0 else raw[:second]):
        try:
            SourceFile.from_bytes("", raw)
        except DecodeError:
            return False
        return True
    if raw.isascii():
        return True
    try:  # (no cookie: UTF-8, with or without its BOM; a UTF-16/32 mark is never valid UTF-8)
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@dataclass
class SourceFile:
    """One source text: its bytes, its decoded text and its encoding."""

    path: str
    raw: bytes
    text: str
    encoding: str  # as given by tokenize.detect_encoding; "utf-8-sig" keeps a BOM on write
    _line_starts: list[int] = field(default_factory=list, repr=False)

    @classmethod
    def from_bytes(cls, path: str, raw: bytes) -> SourceFile:
        wide = wide_encoding(raw)
        if wide is not None:
            raise DecodeError(
                f"the file is encoded in {wide}; Python reads source files as UTF-8 (or the 8-bit encoding a "
                "coding cookie names): save it as UTF-8"
            )
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
            line, column = byte_position(raw, exc.start)
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
        text = self.text
        if "\r" in text:
            return [0, *(m.end() for m in _NEWLINE.finditer(text))]
        # Only `\n` ends lines: the same offsets, summed in C (twice as fast on large files).
        starts = list(itertools.accumulate(map((1).__add__, map(len, text.split("\n"))), initial=0))
        starts.pop()  # (the offset after the last piece, which no line starts at)
        return starts

    def line_text(self, line: int) -> str:
        """Line ``line`` (1-based) without its line ending."""
        starts = self.line_starts
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def offset(self, line: int, col_byte: int) -> int:
        """Text offset of an ast position (1-based line, UTF-8 byte column)."""
        start = self.line_starts[line - 1]
        if col_byte == 0 or self._ascii:
            return start + col_byte
        if line not in self._utf8_lines:
            line_text = self.line_text(line)
            self._utf8_lines[line] = None if line_text.isascii() else line_text.encode("utf-8")
        encoded = self._utf8_lines[line]
        if encoded is None:
            return start + col_byte
        return start + len(encoded[:col_byte].decode("utf-8", "replace"))

    # Whether the text is ASCII, and each non-ASCII line's UTF-8 (None: an ASCII line), read once:
    # every node's position asked for its line again, and a minified file's one long line made
    # that quadratic (16,000 findings on one line of 260 KB: 2 of 9 seconds).
    @cached_property
    def _ascii(self) -> bool:
        return self.text.isascii()

    @cached_property
    def _utf8_lines(self) -> dict[int, bytes | None]:
        return {}

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
