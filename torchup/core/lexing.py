"""Where a source text's comments, multi-line strings and backslash continuations are, found
without tokenizing it: the skeleton's cut and the pre-filter's third stage need no more.

Only the lines holding a triple quote or a backslash-newline are lexed; every other line is code,
comments and one-line strings, as far as spans go. Every scan is a literal search or a regex
anchored on one (`\\n`), which Python's regex engine runs at memchr speed. The same code reads
``str`` and UTF-8 ``bytes``: every character it looks for is ASCII, and no byte of a multi-byte
UTF-8 character is.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Generic, TypeVar

Text = TypeVar("Text", str, bytes)

# Code and one-line strings on one line, up to a comment, a line break or what may span lines.
# The strings are written unrolled (`[^"]*(?:\\.[^"]*)*`): a run of ordinary characters in one
# step, and never two ways to split a run, which would backtrack exponentially on an unclosed one.
_LINE_CODE = r"""(?:[^"'\\#\n]+|"(?!"")[^"\\\n]*(?:\\.[^"\\\n]*)*"|'(?!'')[^'\\\n]*(?:\\.[^'\\\n]*)*')*"""
# The rest of a string after its opening quote. (The lexer reads a triple-quoted one by literal
# searches, ``_triple_quoted_end``; its regex here is what the tests hold that to.)
_STRING_REST = {
    '"""': r'[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""',
    "'''": r"[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''",
    '"': r'[^"\\\n]*(?:\\.[^"\\\n]*)*"',
    "'": r"[^'\\\n]*(?:\\.[^'\\\n]*)*'",
}
_SPANNING = ('"""', "'''", "\\\n")  # what can span lines: a triple quote or a backslash-newline
_CODE_PREFIXES = "fFtT"  # an f-string (or a 3.14 t-string) holds code in its replacement fields
# A one-line string (from its quote) or a comment, whichever comes first on a line of code.
_STRING_OR_COMMENT = r"""'[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|\#"""
_FIELD_BRACES = r"\{\{|\}\}|[{}]"  # in an f-string: escaped braces, or a replacement field's
_PREFIX_LETTERS = "rRbBuUfFtT"


@dataclass(frozen=True)
class _Syntax(Generic[Text]):
    """The patterns above for one kind of text."""

    line_code: re.Pattern[Text]
    string_rest: dict[Text, re.Pattern[Text]]
    spanning: tuple[Text, ...]
    newline: Text
    carriage: Text
    carriage_newline: Text
    hash: Text
    backslash: Text
    backslash_newline: Text
    code_prefixes: tuple[Text, ...]
    code_prefix_set: frozenset[str] | frozenset[int]  # the same, as the items of a ``Text`` (bytes: ints)
    string_or_comment: re.Pattern[Text]
    field_braces: re.Pattern[Text]
    prefix_letters: tuple[Text, ...]
    open_brace: Text


def _syntax(kind: type[Text]) -> _Syntax[Text]:
    def convert(text: str) -> Text:
        return text.encode("ascii") if kind is bytes else text  # type: ignore[return-value]

    return _Syntax(
        line_code=re.compile(convert(_LINE_CODE)),
        string_rest={convert(quote): re.compile(convert(rest), re.DOTALL) for quote, rest in _STRING_REST.items()},
        spanning=tuple(convert(token) for token in _SPANNING),
        newline=convert("\n"),
        carriage=convert("\r"),
        carriage_newline=convert("\r\n"),
        hash=convert("#"),
        backslash=convert("\\"),
        backslash_newline=convert("\\\n"),
        code_prefixes=tuple(convert(letter) for letter in _CODE_PREFIXES),
        code_prefix_set=frozenset(convert(_CODE_PREFIXES)),
        string_or_comment=re.compile(convert(_STRING_OR_COMMENT)),
        field_braces=re.compile(convert(_FIELD_BRACES)),
        prefix_letters=tuple(convert(letter) for letter in _PREFIX_LETTERS),
        open_brace=convert("{"),
    )


_STR: _Syntax[str] = _syntax(str)
_BYTES: _Syntax[bytes] = _syntax(bytes)


@dataclass(frozen=True)
class Spans(Generic[Text]):
    """The tokens of ``text`` that can span lines, as (start, end) offsets in order: strings that
    contain a line break or open with a triple quote, and backslash-newlines in code."""

    text: Text
    starts: list[int]
    ends: list[int]
    # A string whose value holds a line break and that is no f-string: prose (a docstring, a
    # message), which no rule reads a trigger word from, since a rule that matches a string
    # matches the whole of its value, and a word holds no line break.
    prose: list[bool]
    # What ``in_code`` and ``in_expression`` read of a line, kept by where they start reading it:
    # each is asked of one offset, and a line asked of many times (a minified file's one line of
    # 700 KB and 50,000 `torch.load`) was read again for each: quadratic, half an hour.
    _pieces_by_line: dict[int, tuple[list[int], list[tuple[int, int, int]]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _strings_by_start: dict[int, _LineStrings] = field(default_factory=dict, init=False, repr=False, compare=False)
    _braces_by_string: dict[tuple[int, int], _Braces] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def continued(self, offset: int) -> bool:
        """Does the line starting at ``offset`` continue a string or a backslash continuation?"""
        index = bisect.bisect_left(self.starts, offset) - 1
        return index >= 0 and offset <= self.ends[index]

    def in_code(self, offset: int) -> bool:
        """Is ``offset`` in code, a one-line string or an f-string: not in a comment or prose?"""
        ends, pieces = self._line_pieces(self._line_start(offset))
        index = bisect.bisect_right(ends, offset)  # (the first piece that ends after it)
        if index == len(pieces):
            return False  # (after the last piece: in a comment)
        span = pieces[index][2]
        return span is _CODE or span is _UNKNOWN or not self.prose[span]

    def in_expression(self, offset: int) -> bool:
        """Is ``offset`` in code proper: not in a comment or a string, unless in a replacement
        field of an f-string (or t-string)? True when unsure: an f-string whose braces do not
        pair up (as when Python 3.12 nests its quotes), a position the lexer cannot tell."""
        if not self.in_code(offset):
            return False  # a comment or prose
        text, syntax = self.text, _syntax_of(self.text)
        index = bisect.bisect_right(self.starts, offset) - 1
        # An f-string whose braces do not pair up before ``offset`` on its line is one the lexer
        # cut short (3.12 nests quotes: `f"{d["k"]}"`), and what follows may be code.
        line_start = self._line_start(offset)
        before = index - 1
        if before >= 0 and self.ends[before] >= line_start and self._cut_short(self.starts[before], self.ends[before]):
            return True
        if index >= 0 and offset < self.ends[index]:  # in a string that spans lines or opens with three quotes
            start = self.starts[index]
            return text.startswith(syntax.backslash_newline, start) or self._in_field(start, self.ends[index], offset)
        position = line_start
        if index >= 0 and self.ends[index] > position:
            if self._cut_short(self.starts[index], self.ends[index]):
                return True
            position = self.ends[index]  # (after such a string that ends on this line)
        # The one-line strings and the comment from there on, in order: the first comment or
        # cut-short f-string before ``offset`` decides; else the string ``offset`` stands in, if any.
        strings = self._strings_from(position)
        last = bisect.bisect_right(strings.starts, offset) - 1  # (the last that starts at or before it)
        if strings.first_stop < last:
            return strings.kinds[strings.first_stop] != _COMMENT
        if last < 0:
            return True  # (neither a string nor a comment before it on its line)
        if strings.kinds[last] == _COMMENT:
            return False
        if offset < strings.ends[last]:
            return self._in_field(strings.starts[last], strings.ends[last], offset)
        return True

    def code_end(self, line_start: int) -> int | None:
        """Where the code on the line that starts at ``line_start`` ends: before a comment and
        trailing blanks. None if the line ends inside a string or a continuation."""
        code_end = line_start
        for _, end, span in self._pieces(line_start):
            if span is _UNKNOWN or (span is not _CODE and end > self._line_end(line_start)):
                return None
            code_end = end
        return line_start + len(self.text[line_start:code_end].rstrip())

    def _string_braces(self, start: int, end: int) -> _Braces:
        """``_braces`` of the string literal from ``start`` to ``end``, read once."""
        known = self._braces_by_string.get((start, end))
        if known is None:
            known = self._braces_by_string[(start, end)] = _braces(self.text, start, end)
        return known

    def _in_field(self, start: int, end: int, offset: int) -> bool:
        return _in_a_field(self._string_braces(start, end), offset)

    def _cut_short(self, start: int, end: int) -> bool:
        """Is the string literal from ``start`` to ``end`` an f-string whose braces do not pair up?"""
        braces = self._string_braces(start, end)
        return braces.code and braces.broken

    def _line_start(self, offset: int) -> int:
        """Where the line of ``offset`` starts: a search back to the line break, or, on a line
        longer than a page, the list of every line break (a search back for each of a long
        line's offsets would read it again each time)."""
        newline = _syntax_of(self.text).newline
        window = max(0, offset - 4096)
        found = self.text.rfind(newline, window, offset)
        if found >= 0 or window == 0:
            return found + 1
        index = bisect.bisect_left(self._line_breaks, offset)
        return self._line_breaks[index - 1] + 1 if index else 0

    @cached_property
    def _line_breaks(self) -> list[int]:
        newline = _syntax_of(self.text).newline
        return [match.start() for match in re.finditer(re.escape(newline), self.text)]

    def _line_pieces(self, line_start: int) -> tuple[list[int], list[tuple[int, int, int]]]:
        """``_pieces`` of the line at ``line_start``, and their ends, read once."""
        known = self._pieces_by_line.get(line_start)
        if known is None:
            pieces = list(self._pieces(line_start))
            known = self._pieces_by_line[line_start] = ([end for _, end, _ in pieces], pieces)
        return known

    def _strings_from(self, position: int) -> _LineStrings:
        """The one-line strings and comments of the line of ``position``, from there on, read once."""
        known = self._strings_by_start.get(position)
        if known is None:
            text, syntax = self.text, _syntax_of(self.text)
            line_end = self._line_end(position)
            known = _LineStrings([], [], [], 0)
            for match in syntax.string_or_comment.finditer(text, position):
                if match.start() > line_end:
                    break
                if text[match.start() : match.start() + 1] == syntax.hash:
                    kind = _COMMENT
                else:
                    kind = _CUT_SHORT if self._cut_short(match.start(), match.end()) else _STRING
                known.starts.append(match.start())
                known.ends.append(match.end())
                known.kinds.append(kind)
            known.first_stop = next(
                (index for index, kind in enumerate(known.kinds) if kind != _STRING), len(known.kinds)
            )
            self._strings_by_start[position] = known
        return known

    def _pieces(self, line_start: int) -> Iterator[tuple[int, int, int]]:
        """The line at ``line_start`` as (start, end, span) pieces, up to a comment or its end: the
        index of a span, or ``_CODE`` for code and one-line strings (``_UNKNOWN``: the lexer
        cannot tell, which cannot happen where ``spans_of`` lexed the same text)."""
        text, syntax = self.text, _syntax_of(self.text)
        line_end = self._line_end(line_start)
        position = line_start
        index = bisect.bisect_left(self.starts, position) - 1
        if index >= 0 and position <= self.ends[index]:  # the line continues a span
            yield position, self.ends[index], index
            position = self.ends[index]
        while position <= line_end:
            end = syntax.line_code.match(text, position).end()  # type: ignore[union-attr]
            yield position, end, _CODE
            if end >= line_end or text[end : end + 1] == syntax.hash:
                return
            index = bisect.bisect_left(self.starts, end)
            if index == len(self.starts) or self.starts[index] != end:
                yield end, line_end + 1, _UNKNOWN
                return
            yield end, self.ends[index], index
            position = self.ends[index]

    def _line_end(self, line_start: int) -> int:
        end = self.text.find(_syntax_of(self.text).newline, line_start)
        return len(self.text) if end < 0 else end


_CODE = -1
_UNKNOWN = -2

_STRING, _CUT_SHORT, _COMMENT = range(3)  # (``_LineStrings.kinds``)


@dataclass
class _LineStrings:
    """The one-line strings and comments of a line from some offset on, in order: where each
    starts and ends, what it is (a string, an f-string cut short, a comment), and the index of
    the first that is not a plain string (their number if none)."""

    starts: list[int]
    ends: list[int]
    kinds: list[int]
    first_stop: int


def _syntax_of(text: Text) -> _Syntax[Text]:
    return _BYTES if isinstance(text, bytes) else _STR  # type: ignore[return-value]


def spans_of(text: Text) -> Spans[Text] | None:
    """The spans of ``text``, or None if a string does not close, a backslash stands alone in
    code, or a lone CR ends a line (the lexer reads lines by `\\n`; `\\r\\n` is one too)."""
    syntax = _syntax_of(text)
    if syntax.carriage in text and text.count(syntax.carriage) != text.count(syntax.carriage_newline):
        return None
    starts: list[int] = []
    ends: list[int] = []
    prose: list[bool] = []
    double, single, backslash = syntax.spanning  # (the next of each, -1 when there is none left)
    next_double, next_single, next_backslash = (text.find(token) for token in syntax.spanning)
    none = len(text)  # (no token starts there)
    position = 0
    while True:
        if 0 <= next_double < position:
            next_double = text.find(double, position)
        if 0 <= next_single < position:
            next_single = text.find(single, position)
        if 0 <= next_backslash < position:
            next_backslash = text.find(backslash, position)
        hit = min(next_double if next_double >= 0 else none, next_single if next_single >= 0 else none,
                  next_backslash if next_backslash >= 0 else none)
        if hit == none:
            return Spans(text, starts, ends, prose)
        line_start = text.rfind(syntax.newline, 0, hit) + 1
        lexed = syntax.line_code.match(text, max(line_start, position)).end()  # type: ignore[union-attr]
        if lexed > hit:  # inside a one-line string
            position = lexed
            continue
        char = text[lexed : lexed + 1]
        if lexed < hit and char == syntax.hash:  # inside a comment
            position = text.find(syntax.newline, lexed) + 1 or len(text)
            continue
        if char == syntax.backslash:
            if not text.startswith(syntax.backslash_newline, lexed):
                return None
            starts.append(lexed)
            ends.append(lexed + 2)
            prose.append(False)
            position = lexed + 2
            continue
        quote = text[lexed : lexed + 3] if text.startswith(char * 3, lexed) else char
        if len(quote) == 3:
            end = _triple_quoted_end(text, lexed + 3, quote, syntax.backslash)
        else:
            rest = syntax.string_rest[quote].match(text, lexed + 1)
            end = -1 if rest is None else rest.end()
        if end < 0:
            return None
        starts.append(lexed)
        ends.append(end)
        prose.append(len(quote) == 3 and _is_prose(text, lexed, end, syntax))
        position = end


def _triple_quoted_end(text: Text, position: int, quote: Text, backslash: Text) -> int:
    """Where the string whose triple ``quote`` opened before ``position`` ends (after its closing
    quotes), or -1 if it does not close: at the first ``quote`` that no backslash escapes. (What
    ``_STRING_REST`` reads, by literal searches: a regex reads a docstring a character at a time.)"""
    while True:
        close = text.find(quote, position)
        if close < 0:
            return -1
        escape = text.find(backslash, position, close)
        if escape < 0:
            return close + 3
        position = escape + 2  # (the backslash and the character it escapes, a quote or a line break too)


def code_of_line(line: str) -> str | None:
    """One line of code without its one-line strings and its comment; None when unsure: a triple
    quote, a backslash, an f-string (whose quotes may nest) or a quote left open."""
    if '"""' in line or "'''" in line or "\\" in line:
        return None
    pieces = []
    kept = 0
    for match in _STR.string_or_comment.finditer(line):
        if match.group() != "#" and line[match.start() - 1 : match.start()] in ("f", "F", "t", "T", "r", "R"):
            return None  # (`rf"..."`, `fr"..."`: a prefix letter stands right before the quote)
        pieces.append(line[kept : match.start()])
        kept = match.end()
        if match.group() == "#":
            kept = len(line)  # (a comment runs to the line's end)
            break
    pieces.append(line[kept:])
    code = "".join(pieces)
    return None if '"' in code or "'" in code else code


@dataclass(frozen=True)
class _Braces:
    """The replacement fields of one string literal: where each brace that counts stands, the depth
    before it, and whether they fail to pair up (``broken``: the lexer cut an f-string short, or
    braces it cannot tell). Read once per string: a question per offset of a 700 KB f-string read
    all of its braces each time."""

    positions: list[int]
    depths: list[int]
    broken: bool
    code: bool  # an f-string (or t-string): its fields hold code


def _braces(text: Text, start: int, end: int) -> _Braces:
    """The ``_Braces`` of the string literal from ``start`` (its first quote) to ``end``."""
    syntax = _syntax_of(text)
    prefix = start
    while prefix > max(start - 2, 0) and text[prefix - 1 : prefix] in syntax.prefix_letters:
        prefix -= 1
    if not any(letter in text[prefix:start] for letter in syntax.code_prefixes):
        return _Braces([], [], False, False)  # a plain string: all of it is its value
    quote = 3 if text[start : start + 3] in syntax.spanning else 1
    positions: list[int] = []
    depths: list[int] = []
    depth = 0
    for brace in syntax.field_braces.finditer(text, start + quote, end - quote):
        positions.append(brace.start())
        depths.append(depth)
        token = brace.group()
        if len(token) == 2 and depth == 0:
            continue  # `{{` or `}}` in the text: a brace of the value
        depth += len(token) if token[:1] == syntax.open_brace else -len(token)
        if depth < 0:
            return _Braces(positions, depths, True, True)
    return _Braces(positions, depths, depth != 0, True)


def _in_a_field(braces: _Braces, offset: int) -> bool:
    """Is ``offset`` in a replacement field of the string whose ``braces`` these are? True when
    its braces do not pair up."""
    if not braces.code:
        return False
    if braces.broken:
        return True
    index = bisect.bisect_left(braces.positions, offset)  # (the first brace at or after it)
    return index < len(braces.depths) and braces.depths[index] > 0


def _is_prose(text: Text, start: int, end: int, syntax: _Syntax[Text]) -> bool:
    """A triple-quoted string from ``start`` to ``end``: is its value text with a line break?
    (A backslash-newline adds none; counting `\\\\` + newline as one too only says "code" more.)"""
    prefix = text[max(start - 2, 0) : start]
    if not syntax.code_prefix_set.isdisjoint(prefix):  # type: ignore[arg-type]
        return False
    first = text.find(syntax.newline, start, end)
    if first < 0:
        return False
    if text[first - 1 : first] != syntax.backslash:
        return True  # (most docstrings: their first line break is a plain one; no count needed)
    return text.count(syntax.newline, start, end) > text.count(syntax.backslash_newline, start, end)
