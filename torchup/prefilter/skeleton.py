"""Parse less: the bodies the analysis skips are blanked out of the text before ``ast.parse``.

The resolver does not walk a ``def`` or ``class`` body that spans no focus line (see
``resolver.Focus``) and rules look only at focused code, yet ``ast.parse`` builds every node of
every body: on large files most of the time of an analysis. So each such body is blanked: its
first line becomes ``pass``, the line where its last statement ends becomes a literal of zeros
that ends in the same column (`0000`), and the lines between are left empty. A function's
header loses its parameters and annotations (`def f():`), which no rule reads where no trigger
word is, unless a `:=` there binds a name; a class keeps its bases, which tell what its
instances are (``inference.class_evidence``: `Mine(torch.Tensor)` makes `Mine().cholesky()` a
tensor's call). Every other line is the original, so every position in the tree is the original
one, the shortened definition's own and its end included.

The cut is made on text, so it is made only where it can be proved, and then checked:

- a lexer (``lexing.py``) finds the strings, comments and backslash continuations, so a ``def``
  inside a docstring or a line inside a multi-line string is never taken for code, and the end of
  the body's last line is found before its comment;
- the skeleton must parse, and each shortened definition must come back with exactly that
  header, ``pass`` and literal, where they were written. The text before the ``pass`` being the original, the
  original body began there too; the text after the literal's line is the original, and the
  literal ends a line outside any bracket, string or continuation, so the tokenizer stands there
  as it did in the original. (A bracket the blanked lines left open would leave one unmatched in
  the skeleton, which then does not parse.)

Anything else (tabs or odd line breaks in the file, a string the lexer cannot close) means no cut:
the caller parses the original. What a cut cannot see is a syntax error inside a blanked body, just
as the pre-filter never parses a file without trigger words.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field

from torchup.core.lexing import Spans, Text, spans_of
from torchup.prefilter.words import renames_a_word

# Every scan below is a literal search or a regex anchored on one (`\n`), which Python's regex
# engine runs at memchr speed; a `^` in MULTILINE mode or an alternation at every position is ten
# times slower, and the cut must cost a small part of the parse it saves.
_KEYWORDS = ("def ", "class ")  # (`def\tf` is missed: a definition not found is only not cut)
# Line breaks other than `\n` (`str.splitlines` splits on more characters than Python's tokenizer):
_ODD_BREAKS = "\r\v\f\x1c\x1d\x1e"
_ODD_BREAKS_WIDE = "\x85\u2028\u2029"
_TAB_INDENT = re.compile(r"(?:\A|\n)[ ]*\t")  # (a tab in an indentation: columns would not be characters)
_CLOSERS = ")]}"
_WORD = re.compile(r"\w+")
_RENAMED = re.compile(r"(\w+(?:[ \t]*\.[ \t]*\w+)*)[ \t]+as[ \t]+(\w+)")  # `a.b as c` in an import
_HEAD = re.compile(r"(?:async[ \t]+)?(def|class)[ \t]+\w+[ \t]*")  # a header up to its parameters or bases
# The longest literal of zeros the skeleton writes (Python refuses integers of over 4,300 digits).
_LONGEST_LITERAL = 4000
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
_CLAUSES = frozenset({"handlers", "cases"})  # lists of `except` / `case` clauses, each with a body


@dataclass(frozen=True)
class Region:
    """One definition whose body the skeleton blanks."""

    header: int  # the line of `def` / `class`
    first: int  # the body's first line: `pass` in the skeleton
    indent: int  # the body's indentation
    last: int  # the line where the body's last statement ends: `0...0` in the skeleton
    end_column: int  # where that statement ends on it (a byte offset, as ``ast`` counts columns)
    first_offset: int
    last_offset: int  # where the line after ``last`` starts
    # The header without parameters, annotations or bases (`def f():`), for its lines from
    # ``header_offset`` to ``header_end``; None: the header is kept.
    short_header: str | None = None
    header_offset: int = 0
    header_end: int = 0


@dataclass(frozen=True)
class Skeleton:
    """The text to parse, and the definitions it shortened."""

    text: str
    regions: tuple[Region, ...]  # by header line
    spans: Spans[str] | Spans[bytes] | None = field(default=None, compare=False, repr=False)  # the original's

    def kept_code(self) -> KeptCode[str] | KeptCode[bytes] | None:
        """The original's spans, with the parts the skeleton blanks taken for comments (a rule's
        ``may_report`` then looks at the code the analysis reads: ``Rule.reports_from_kept_code``)."""
        if self.spans is None:
            return None
        blanked: list[tuple[int, int]] = []
        for region in self.regions:
            if region.short_header is not None:
                blanked.append((region.header_offset, region.header_end))
            blanked.append((region.first_offset, region.last_offset - 1))
        spans = self.spans
        return KeptCode(spans.text, spans.starts, spans.ends, spans.prose,  # type: ignore[arg-type]
                        [start for start, _ in blanked], [end for _, end in blanked])

    def matches(self, tree: ast.Module) -> bool:
        """Did each shortened definition parse as written: its short header, ``pass`` and literal
        of zeros, in place (see the module's docstring)?"""
        expected = {region.header: region for region in self.regions}
        headers = [region.header for region in self.regions]
        found = 0
        blocks: list[list[ast.stmt]] = [tree.body]
        while blocks:
            for statement in blocks.pop():
                first, end = statement.lineno, statement.end_lineno or statement.lineno
                index = bisect.bisect_left(headers, first)
                if index == len(headers) or headers[index] > end:
                    continue  # no shortened body in this statement
                region = expected.get(first)
                if region is not None and isinstance(statement, _DEFINITIONS):
                    body = statement.body
                    if region.short_header is not None and not _bare(statement):
                        return False
                    if not (
                        len(body) == 2
                        and isinstance(body[0], ast.Pass)
                        and (body[0].lineno, body[0].col_offset) == (region.first, region.indent)
                        and isinstance(body[1], ast.Expr)
                        and (body[1].lineno, body[1].col_offset) == (region.last, region.indent)
                        and (body[1].end_lineno, body[1].end_col_offset) == (region.last, region.end_column)
                    ):
                        return False
                    found += 1
                    continue  # (its body is that `pass` and literal: no other region inside)
                for name in _BLOCKS:
                    block = getattr(statement, name, None)
                    if not block:
                        continue
                    if name in _CLAUSES:
                        blocks.extend(clause.body for clause in block)
                    else:
                        blocks.append(block)
        return found == len(self.regions)


@dataclass(frozen=True)
class KeptCode(Spans[Text]):
    """Spans of a text whose blanked parts (sorted, apart) are neither code nor expression."""

    blanked_starts: list[int] = field(default_factory=list)
    blanked_ends: list[int] = field(default_factory=list)

    def _blanked(self, offset: int) -> bool:
        index = bisect.bisect_right(self.blanked_starts, offset) - 1
        return index >= 0 and offset < self.blanked_ends[index]

    def in_code(self, offset: int) -> bool:
        return not self._blanked(offset) and super().in_code(offset)

    def in_expression(self, offset: int) -> bool:
        return not self._blanked(offset) and super().in_expression(offset)


def cut(text: str, focus: tuple[int, ...], spans: Spans[str] | Spans[bytes] | None = None) -> Skeleton | None:
    """The skeleton of ``text`` for the sorted 1-based ``focus`` lines, or None when nothing is
    cut; ``spans``: the lexer's, if known (of the text, or of its bytes where offsets agree)."""
    if not _supported(text):
        return None
    if spans is None:
        spans = spans_of(text)
        if spans is None:
            return None
    lines = _Lines(text, spans)
    regions: list[Region] = []
    blank_until = -1  # offset: a header before it is in a blanked body
    for offset in _headers(text):
        if offset < blank_until:
            continue
        line_start = text.rfind("\n", 0, offset) + 1
        prefix = text[line_start:offset]
        indent = len(prefix) - len(prefix.lstrip(" "))
        if prefix[indent:] not in ("", "async ") or lines.continued(line_start):
            continue  # not a statement's first word (`subclass `, `x = undef `), or inside a string
        region = _region(lines, line_start, indent, focus)
        if region is not None:
            regions.append(region)
            blank_until = region.last_offset
    if not regions:
        return None
    chunks: list[str] = []
    kept = 0
    for region in regions:
        if region.short_header is not None:
            breaks = text.count("\n", region.header_offset, region.header_end)
            chunks += [text[kept : region.header_offset], region.short_header, "\n" * breaks]
            kept = region.header_end
        blank = "\n" * (region.last - region.first)
        end = "0" * (region.end_column - region.indent)  # (a decimal literal of zeros, as long as needed)
        chunks += [text[kept : region.first_offset], " " * region.indent, "pass", blank, " " * region.indent, end]
        kept = region.last_offset - 1  # (from the line break that ends ``last``)
    chunks.append(text[kept:])
    return Skeleton("".join(chunks), tuple(regions), spans)


def may_hide_a_word(text: str, words: frozenset[str], path_words: frozenset[str] = frozenset()) -> bool:
    """Might an import let later code use a trigger word without spelling it: a name bound to a
    word under another name (`from torch import qr as q`), or a name imported (one by one or by a
    star import) through a module that ``path_words`` names (see ``Rule.path_words``)? Then the resolver needs
    every body (see ``resolver.Focus``) and a skeleton would be parsed in vain. Judged on each
    import statement's first line: a miss costs one parse more (the resolver still asks for the
    whole tree), a false alarm the cut."""
    position = text.find("import")
    while position >= 0:
        start = text.rfind("\n", 0, position) + 1
        end = text.find("\n", position) + 1 or len(text)
        line = text[start:end].strip()
        if line.startswith("from "):
            module, _, names = line[5:].partition(" import ")
            if not path_words.isdisjoint(_WORD.findall(module)):  # (a star import too)
                return True
            if " as " in names and _renames_a_word(names, words, path_words):
                return True
        elif line.startswith("import ") and " as " in line and _renames_a_word(line, words, path_words):
            return True
        position = text.find("import", end)
    return False


def _renames_a_word(names: str, words: frozenset[str], path_words: frozenset[str]) -> bool:
    """Does an `X as Y` of these imported names bind a name that is no word to a word (`qr as q`),
    or to a name reached through a module a path word names (`m.cond.f as f`)? As
    ``Resolver._aliases_a_word`` judges a binding (`_symeig as symeig` renames no word)."""
    return any(
        renames_a_word(alias, [part.strip(" \t") for part in dotted.split(".")], words, path_words)
        for dotted, alias in _RENAMED.findall(names)
    )


def _supported(text: str) -> bool:
    """Only `\\n` line breaks, and no tab in an indentation."""
    if any(char in text for char in _ODD_BREAKS):
        return False
    if not text.isascii() and any(char in text for char in _ODD_BREAKS_WIDE):
        return False
    return "\t" not in text or _TAB_INDENT.search(text) is None


def _headers(text: str) -> list[int]:
    """The offsets of `def ` and `class `, in order (most of them the first word of a line)."""
    found = []
    for keyword in _KEYWORDS:
        position = text.find(keyword)
        while position >= 0:
            found.append(position)
            position = text.find(keyword, position + len(keyword))
    found.sort()
    return found


def _region(lines: _Lines, header: int, indent: int, focus: tuple[int, ...]) -> Region | None:
    """The body to blank of the definition whose line starts at offset ``header``, if the
    definition spans no focus line."""
    end = lines.dedent(header, indent)  # the start of the first line after the definition
    header_line = lines.number(header)
    index = bisect.bisect_left(focus, header_line)
    if index < len(focus) and focus[index] < lines.number(end):
        return None
    colon = lines.header_end(header, end)
    if colon is None:
        return None
    first = lines.next_code(colon, end)
    if first is None:
        return None
    body_indent = lines.indentation(first)
    if body_indent <= indent:
        return None
    last = lines.last_code(first, end)
    if last is None:
        return None
    first_line, last_line = lines.number(first), lines.number(last)
    if last_line <= first_line + 1:
        return None  # one statement (or two lines): nothing worth blanking
    code_end = lines.spans.code_end(last)
    following = lines.after(last)
    if code_end is None or following > len(lines.text) or lines.text[following - 1 : following] != "\n":
        return None  # (the text's last line: no line break to keep)
    end_column = len(lines.text[last:code_end].encode("utf-8"))
    if not body_indent < end_column <= body_indent + _LONGEST_LITERAL:
        return None  # the statement ends left of the body (a closing bracket at column 0)
    short = _short_header(lines.text, header, indent, colon)
    return Region(header_line, first_line, body_indent, last_line, end_column, first, following, short, header, colon)


def _short_header(text: str, header: int, indent: int, end: int) -> str | None:
    """The header of a function from offset ``header`` to ``end`` without its parameters and
    annotations: `def f():`. None for a class (its bases are read), or where that would change
    nothing, or drop a binding (`:=` in a default) or type parameters (`def f[T]`)."""
    head = _HEAD.match(text, header + indent)
    if head is None or head.group(1) != "def" or text.find(":=", head.end(), end) >= 0:
        return None
    opener = text[head.end() : head.end() + 1]
    short = text[header : head.end()] + ("():" if head.group(1) == "def" else ":")
    if opener not in ("(", ":") or text.startswith(short + "\n", header):
        return None
    return short


def _bare(statement: ast.stmt) -> bool:
    """Does the definition have the short header ``_short_header`` writes?"""
    if isinstance(statement, ast.ClassDef):
        return not statement.bases and not statement.keywords
    assert isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
    args = statement.args
    return statement.returns is None and not (
        args.posonlyargs or args.args or args.vararg or args.kwonlyargs or args.kwarg
    )


class _Lines:
    """Lines of one text with `\\n` line breaks, by the offsets where they start; which continue a
    string or a backslash continuation; and their numbers, counted from the nearest number known."""

    def __init__(self, text: str, spans: Spans[str] | Spans[bytes]) -> None:
        self.text = text
        self.spans = spans
        self.continued = spans.continued
        self._known_offsets = [0]
        self._known_numbers = [1]
        self._dedents: dict[int, re.Pattern[str]] = {}

    def number(self, offset: int) -> int:
        """The number of the line ``offset`` is on."""
        index = bisect.bisect_right(self._known_offsets, offset) - 1
        known = self._known_offsets[index]
        number = self._known_numbers[index] + self.text.count("\n", known, offset)
        if offset != known:
            self._known_offsets.insert(index + 1, offset)
            self._known_numbers.insert(index + 1, number)
        return number

    def after(self, offset: int) -> int:
        """The start of the line after the one at ``offset`` (the text's end after the last)."""
        return self.text.find("\n", offset) + 1 or len(self.text)

    def indentation(self, offset: int) -> int:
        end = self.after(offset)
        return end - offset - len(self.text[offset:end].lstrip(" "))

    def dedent(self, header: int, indent: int) -> int:
        """The start of the first line after ``header`` that starts a statement indented ``indent``
        or less (a line that starts with a closing bracket continues one), or the text's end."""
        pattern = self._dedents.get(indent)
        if pattern is None:
            pattern = self._dedents[indent] = re.compile(rf"\n[ ]{{0,{indent}}}[^ \n#{re.escape(_CLOSERS)}]")
        position = header
        while True:
            match = pattern.search(self.text, position)
            if match is None:
                return len(self.text)
            if not self.continued(match.start() + 1):
                return match.start() + 1
            position = match.start() + 1

    def header_end(self, header: int, end: int) -> int | None:
        """The start of the line after the `def`/`class` header at ``header``, if its brackets
        (counted without regard to strings: a wrong count only means no cut, or a skeleton that
        fails its check) close on a line that ends with `:`."""
        depth = 0
        line = header
        for _ in range(64):
            if line >= end:
                return None
            following = self.after(line)
            code = self.text[line:following]
            if "#" in code:
                code = code[: code.index("#")]  # (a `#` in a string ends the count too early: see above)
            depth += code.count("(") + code.count("[") + code.count("{")
            depth -= code.count(")") + code.count("]") + code.count("}")
            if depth < 0:
                return None
            if depth == 0:
                return following if code.rstrip().endswith(":") else None
            line = following
        return None

    def next_code(self, line: int, end: int) -> int | None:
        """The first line from ``line`` on, before ``end``, that holds code (not blank, not only a
        comment)."""
        while line < end:
            following = self.after(line)
            stripped = self.text[line:following].strip()
            if stripped and not stripped.startswith("#"):
                return None if self.continued(line) else line
            line = following
        return None

    def last_code(self, first: int, end: int) -> int | None:
        """The start of the last line in [first, end) that holds code: the line where the last
        statement of a body ends (comment lines after it belong to no statement)."""
        position = end
        while position > first:
            start = self.text.rfind("\n", 0, position - 1) + 1
            stripped = self.text[start:position].strip()
            if stripped and (not stripped.startswith("#") or self.continued(start)):
                return start
            position = start
        return None
