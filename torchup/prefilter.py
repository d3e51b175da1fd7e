"""The textual pre-filter: can this file hold a finding of these rules at all?

Stage 1 looks for a rule's trigger word as a whole word (`eig` must not match `weight`).
Stage 2 looks at what stands before each occurrence, because most mentions of common words
(`solve`, `balanced`, `qr`) are prose in docstrings and comments. A finding needs a reference
the resolver can follow to torch, and every such reference spells its trigger word somewhere in
one of these positions:

- after a `.` (`torch.qr`, `x.qr()`), or any other punctuation or quote (`"balanced"`,
  `use_cuda=` after `(` or `,`, `[qr]`, `"cuda:nccl"`), or first on its line (continuation lines);
- after the keyword `import` (`from torch import qr`: the binding a bare `qr(...)` goes through).

What remains is a word right after another word: `we solve`, `def qr`, `return solve`. The
first two are prose or definitions; the third is a bare name, which refers to torch only through
an import (whose `import qr` is kept) or through `from torch import *` — so a file that star-
imports keeps every occurrence. Spaces, tabs and form feeds in between are skipped.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import AnyStr

# Without a leading `\b`, Python's regex engine finds the literal `import` by a fast search: thirty
# times faster on large files. The word boundary before it is checked by ``_star_import``.
_STAR_IMPORT = re.compile(r"import[ \t\f]*\*")
_STAR_IMPORT_BYTES = re.compile(rb"import[ \t\f]*\*")
_BLANKS = " \t\f"


class TriggerPattern:
    """The trigger words of a set of rules, for ``str`` and ``bytes`` contents."""

    def __init__(self, words: list[str], keep_words: Iterable[str] = ()) -> None:
        """``keep_words``: more words whose lines the parse keeps (``Rule.keep_words``)."""
        self.words = frozenset(words)
        alternatives = _trie(sorted(self.words))
        self.text = re.compile(rf"\b{alternatives}\b")
        self.bytes = re.compile(rf"\b{alternatives}\b".encode("ascii"))
        # `global x` / `nonlocal x` in a function make its bindings visible elsewhere: the focus
        # must include them, and one scan finds both.
        self._keep_only = frozenset(keep_words) - self.words - SCOPE_KEYWORDS
        self._focus = re.compile(rf"\b{_trie(sorted(self.words | SCOPE_KEYWORDS | self._keep_only))}\b")
        self._focus_bytes = re.compile(self._focus.pattern.encode("ascii"))

    def could_match(self, content: str | bytes) -> bool:
        if isinstance(content, bytes):
            return _in_code(content, self.bytes, _STAR_IMPORT_BYTES, b"import")
        return _in_code(content, self.text, _STAR_IMPORT, "import")

    def scan(self, content: str | bytes, lines: tuple[int, ...] | None = None) -> Occurrences:
        """Both stages and the focus lines in one pass over the text (or its bytes, when it is
        UTF-8: ASCII word boundaries there find a superset of the text's words, so the answer may
        only grow). ``lines``: every line of the bytes that holds a trigger word (grep's), when
        known: the words are then read on those lines alone, and the scope and keep words found
        by a plain search (Python's regex engine tries an alternation at every byte: ten times
        slower)."""
        if lines is not None and isinstance(content, bytes) and b"\r" not in content:
            return self._scan_lines(content, lines)
        if isinstance(content, bytes):
            matches = [(match.start(), match.group().decode("ascii")) for match in self._focus_bytes.finditer(content)]
            star, keyword, newline, carriage = _STAR_IMPORT_BYTES, b"import", b"\n", b"\r"
        else:
            matches = [(match.start(), match.group()) for match in self._focus.finditer(content)]
            star, keyword, newline, carriage = _STAR_IMPORT, "import", "\n", "\r"  # type: ignore[assignment]
        words = [(offset, word) for offset, word in matches if word in self.words]
        in_code = bool(words) and _referred_to(content, (offset for offset, _ in words), star, keyword)  # type: ignore[arg-type]
        if not self._keep_only:
            lines = _line_numbers(content, [offset for offset, _ in matches], newline, carriage)
            return Occurrences(lines, frozenset(word for _, word in words), in_code, lines)
        kept = _line_numbers(content, [offset for offset, _ in matches], newline, carriage)
        focused = [offset for offset, word in matches if word not in self._keep_only]
        lines = _line_numbers(content, focused, newline, carriage)
        return Occurrences(lines, frozenset(word for _, word in words), in_code, kept)


    def _scan_lines(self, content: bytes, lines: tuple[int, ...]) -> Occurrences:
        """``scan`` of bytes with `\\n` line breaks, given every line that holds a trigger word."""
        rows = content.split(b"\n")
        found: list[tuple[int, int, str]] = []  # (line, offset in it, word)
        for number in lines:
            if 0 < number <= len(rows):
                matches = self.bytes.finditer(rows[number - 1])
                found += [(number, match.start(), match.group().decode("ascii")) for match in matches]
        present = frozenset(word for _, _, word in found)
        in_code = bool(found) and (
            _star_import(content, _STAR_IMPORT_BYTES)
            or any(_reference_position(rows[number - 1], offset, b"import") for number, offset, _ in found)
        )
        focused = {number for number, _, _ in found}
        kept: set[int] = set()
        starts: list[int] | None = None
        for word in (*SCOPE_KEYWORDS, *self._keep_only):
            for offset in _whole_word_offsets(content, word.encode("ascii")):
                if starts is None:
                    starts = list(itertools.accumulate((len(row) + 1 for row in rows), initial=0))
                number = bisect.bisect_right(starts, offset)
                (kept if word in self._keep_only else focused).add(number)
        ordered = tuple(sorted(focused))
        return Occurrences(ordered, present, in_code, tuple(sorted(kept | focused)) if kept else ordered)


def _whole_word_offsets(content: bytes, word: bytes) -> Iterator[int]:
    """Where ``word`` occurs as a whole word (ASCII boundaries, as ``\\b`` in a bytes pattern)."""
    offset = content.find(word)
    while offset >= 0:
        end = offset + len(word)
        if not (offset and _is_word_char(content[offset - 1 : offset])) and not _is_word_char(content[end : end + 1]):
            yield offset
        offset = content.find(word, offset + 1)


SCOPE_KEYWORDS = frozenset({"global", "nonlocal"})


@dataclass(frozen=True)
class Occurrences:
    """What one scan of a file found: the lines that spell a trigger word or `global`/`nonlocal`
    (stage 1: a superset, for the focus), the trigger words present, stage 2's answer, and the
    lines whose bodies the parse keeps (the focus, and the lines of ``Rule.keep_words``)."""

    lines: tuple[int, ...]  # 1-based, sorted, distinct
    present: frozenset[str]
    in_code: bool
    kept: tuple[int, ...]  # a superset of ``lines``


def _line_numbers(content: AnyStr, offsets: list[int], newline: AnyStr, carriage: AnyStr) -> tuple[int, ...]:
    """The lines of ``offsets`` (ascending), as Python counts them (`\\r\\n`, `\\r` or `\\n` ends one)."""
    if carriage in content:
        breaks = rb"\r\n|\r|\n" if isinstance(content, bytes) else r"\r\n|\r|\n"
        ends = [match.end() for match in re.finditer(breaks, content)]
        return tuple(sorted({bisect.bisect_right(ends, offset) + 1 for offset in offsets}))
    lines: list[int] = []
    line, last = 1, 0
    for offset in offsets:
        line += content.count(newline, last, offset)
        last = offset
        if not lines or lines[-1] != line:
            lines.append(line)
    return tuple(lines)


def _trie(words: list[str]) -> str:
    """One regex alternative for ``words`` with shared prefixes factored out: Python's regex
    engine tries alternatives one by one, so `A(?:dam(?:W|ax)?|...)` scans faster than `Adam|AdamW|...`."""
    if not words:
        return "(?!)"
    branches: dict[str, list[str]] = {}
    for word in words:
        if word:
            branches.setdefault(word[0], []).append(word[1:])
    parts = [re.escape(first) + (_trie(rest) if rest != [""] else "") for first, rest in sorted(branches.items())]
    if "" in words:
        return f"(?:{'|'.join(parts)})?"
    return parts[0] if len(parts) == 1 else f"(?:{'|'.join(parts)})"


def _in_code(content: AnyStr, words: re.Pattern[AnyStr], star: re.Pattern[AnyStr], keyword: AnyStr) -> bool:
    first = words.search(content)
    if first is None:
        return False
    return _referred_to(content, (match.start() for match in words.finditer(content, first.start())), star, keyword)


def _referred_to(content: AnyStr, offsets: Iterable[int], star: re.Pattern[AnyStr], keyword: AnyStr) -> bool:
    """Stage 2: may one of the words at ``offsets`` be code that refers to torch?"""
    if _star_import(content, star):
        return True  # `from m import *`: a bare name may be the torch function itself
    return any(_reference_position(content, offset, keyword) for offset in offsets)


def _star_import(content: AnyStr, star: re.Pattern[AnyStr]) -> bool:
    """Does ``import *`` occur as words (not `reimport *`)?"""
    return any(
        match.start() == 0 or not _is_word_char(content[match.start() - 1 : match.start()])
        for match in star.finditer(content)
    )


def _reference_position(content: AnyStr, start: int, keyword: AnyStr) -> bool:
    index = start - 1
    while index >= 0 and content[index : index + 1] in _blanks(content):
        index -= 1
    if index < 0:
        return True  # the first word of the file
    before = content[index : index + 1]
    if not (before.isalnum() or before in (b"_", "_")) or not before.isascii():
        return True  # punctuation, a quote, a line break, or a non-ASCII byte
    length = len(keyword)
    word_start = index - length + 1
    preceded = word_start > 0 and _is_word_char(content[word_start - 1 : word_start])
    return content[word_start : index + 1] == keyword and not preceded


def _blanks(content: str | bytes) -> str | bytes:
    return _BLANKS.encode("ascii") if isinstance(content, bytes) else _BLANKS


def _is_word_char(char: str | bytes) -> bool:
    return char.isascii() and (char.isalnum() or char in (b"_", "_"))
