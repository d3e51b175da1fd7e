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

Stage 3 runs on the files stage 2 passes: of their words, those in a comment or in prose (a
string, no f-string, whose value holds a line break: see ``lexing.Spans.prose``) are dropped, as
no reference stands there; so are those inside a longer one-line string (`"torch.linalg.solve"`,
`"linalg.eig"`), unless a rule with that word matches words inside strings
(``LooksFor.in_strings``: a dotted path in `mock.patch("...")`, `"max-autotune"`). It needs a
lexer (``lexing.py``) but settles most of the files whose words are all in docstrings, comments
or messages (`linalg.cholesky` in a comment passes stage 2), and what it keeps is the focus: the
lines of the words that remain.

What the three stages rely on: a finding needs a reference spelled in code, or a string constant
whose whole value is a trigger word (`acc_policy="balanced"`), or, for a rule that says so, a
string that holds one.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, AnyStr

if TYPE_CHECKING:
    from torchup.core.lexing import Spans

# Without a leading `\b`, Python's regex engine finds the literal `import` by a fast search: thirty
# times faster on large files. The word boundary before it is checked by ``_star_import``.
_STAR_IMPORT = re.compile(r"import[ \t\f]*\*")
_STAR_IMPORT_BYTES = re.compile(rb"import[ \t\f]*\*")
_BLANKS = " \t\f"


class TriggerPattern:
    """The trigger words of a set of rules, for ``str`` and ``bytes`` contents."""

    def __init__(
        self,
        words: list[str],
        whole_strings: frozenset[str] = frozenset(),
        no_modules: frozenset[str] = frozenset(),
        roles: dict[str, frozenset[str]] | None = None,
        paths: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        """``whole_strings``: the words whose rules match a string literal only when its whole value
        is the word (in no rule's ``LooksFor.in_strings``): inside a longer one-line string
        (`"torch.linalg.solve"`), such a word is not counted. ``no_modules``: the words that name no
        module on a rule's path (no ``Rule.path_words``), nor stand in a rule's strings: in the
        module of a `from m.solve import f`, such a word is not counted (``_in_module_of_from``).
        ``roles``: for a word that counts in some places only, which (``Rule.word_roles``).
        ``paths``: for a word that ends a dotted name a rule renames (``Rule.renames``), what stands
        before it there (`torch.` for `torch.cholesky`): a one-line string ending in that name
        counts (`mock.patch("torch.cholesky")`, torchup.analysis.patch_targets)."""
        self.words = frozenset(words)
        self.whole_strings = whole_strings & self.words
        self.no_modules = no_modules & self.words
        self.roles = {word: kinds for word, kinds in (roles or {}).items() if word in self.words}
        self.paths = {word: prefixes for word, prefixes in (paths or {}).items() if word in self.words}
        self._words_expression = rf"\b{_trie(sorted(self.words))}\b"
        # `global x` / `nonlocal x` in a function make its bindings visible elsewhere: the focus
        # must include them, and one scan finds both.
        self._focus_expression = rf"\b{_trie(sorted(self.words | SCOPE_KEYWORDS))}\b"

    # Each compiled when first used (11 ms each for the default rules' 300 words): a run whose
    # files grep reads, all UTF-8, needs the bytes patterns only.
    @cached_property
    def text(self) -> re.Pattern[str]:
        return re.compile(self._words_expression)

    @cached_property
    def bytes(self) -> re.Pattern[bytes]:
        return re.compile(self._words_expression.encode("ascii"))

    @cached_property
    def _focus(self) -> re.Pattern[str]:
        return re.compile(self._focus_expression)

    @cached_property
    def _focus_bytes(self) -> re.Pattern[bytes]:
        return re.compile(self._focus_expression.encode("ascii"))

    def could_match(self, content: str | bytes, code_in_strings: bool = False) -> bool:
        """Stages 1 to 3 on a whole text: may it hold a finding? ``code_in_strings``: the text is
        not Python but holds it in its strings (a notebook's JSON), so no word in a one-line string
        is passed over for not being its whole value (see ``whole_strings``)."""
        if isinstance(content, bytes):
            if self.bytes.search(content) is None:
                return False
        elif self.text.search(content) is None:
            return False
        return self.scan(content, code_in_strings=code_in_strings).in_code

    def scan(
        self, content: str | bytes, lines: tuple[tuple[int, int], ...] | None = None, *, code_in_strings: bool = False
    ) -> Occurrences:
        """The three stages and the focus lines in one pass over the text (or its bytes, when it is
        UTF-8: ASCII word boundaries there find a superset of the text's words, so the answer may
        only grow). ``lines``: every line of the bytes that holds a trigger word or a scope word
        (grep's, as (number, offset where it starts)), when known: the words are then read on those
        lines alone (Python's regex engine tries an alternation at every byte: ten times slower)."""
        if lines is not None and isinstance(content, bytes) and b"\r" not in content:
            scanned = self._scan_lines(content, lines)
            if scanned is not None:
                return scanned
        if isinstance(content, bytes):
            matches = [(match.start(), match.group().decode("ascii")) for match in self._focus_bytes.finditer(content)]
            newline, carriage = b"\n", b"\r"
        else:
            matches = [(match.start(), match.group()) for match in self._focus.finditer(content)]
            newline, carriage = "\n", "\r"  # type: ignore[assignment]
        numbers = _line_of_each(content, [offset for offset, _ in matches], newline, carriage)  # type: ignore[arg-type]
        found: list[tuple[int, int, str]] = []
        others: list[tuple[int, int, str]] = []
        for (offset, word), number in zip(matches, numbers, strict=True):
            (found if word in self.words else others).append((number, offset, word))
        return self._occurrences(content, found, others, code_in_strings)

    def words_on_lines(self, content: bytes, lines: tuple[tuple[int, int], ...]) -> frozenset[str]:
        """The trigger words spelled on grep's lines, anywhere (comments and prose too): the words
        the full scan would then place; cheap, a regex over those lines only."""
        size = len(content)
        found = set()
        for _, start in lines:
            end = content.find(b"\n", start)
            matches = self.bytes.finditer(content, start, size if end < 0 else end)
            found.update(match.group().decode("ascii") for match in matches)
        return frozenset(found)

    def words_referring(self, content: bytes, lines: tuple[tuple[int, int], ...]) -> frozenset[str]:
        """The trigger words on grep's lines that stand where a qualified name's last word, or a
        module's, can: after a dot, after `import` or `from`, or as an item of an import list (after
        `(`, `,` or first on a line, and before `,`, `)`, `as` or the line's end): `torch.load`,
        `from torch import jit, load`, a line of a bracketed import. A reference the resolver
        follows to a name spells it so (torchup/prefilter/requirements.py asks more)."""
        size = len(content)
        found = set()
        for _, start in lines:
            end = content.find(b"\n", start)
            end = size if end < 0 else end
            for match in self.bytes.finditer(content, start, end):
                before = content[max(start, match.start() - 80):match.start()].rstrip(b" \t")
                if before.endswith(b".") or _REFERRING_KEYWORD.search(before) or (
                    (not before or before.endswith((b"(", b","))) and _LIST_ITEM_END.match(content, match.end(), end)
                ) or (not before and _continues_a_name(content, start)):
                    found.add(match.group().decode("ascii"))
        return frozenset(found)

    def _scan_lines(self, content: bytes, lines: tuple[tuple[int, int], ...]) -> Occurrences | None:
        """``scan`` of bytes with `\\n` line breaks, given every line that holds a trigger word or a
        scope word; None if a line does not start where it is said to (the file changed since)."""
        found: list[tuple[int, int, str]] = []  # (line, offset, word)
        others: list[tuple[int, int, str]] = []
        size = len(content)
        for number, start in lines:
            if start > size or (start and content[start - 1] != 10):  # (10: `\n`)
                return None
            end = content.find(b"\n", start)
            for match in self._focus_bytes.finditer(content, start, size if end < 0 else end):
                word = match.group().decode("ascii")
                (found if word in self.words else others).append((number, match.start(), word))
        return self._occurrences(content, found, others)

    def _occurrences(
        self,
        content: str | bytes,
        found: list[tuple[int, int, str]],
        others: list[tuple[int, int, str]],
        code_in_strings: bool = False,
    ) -> Occurrences:
        """Stages 2 and 3 on the trigger words ``found`` and the scope words ``others``
        (line, offset, word)."""
        star = _star_import(content, _STAR_IMPORT_BYTES if isinstance(content, bytes) else _STAR_IMPORT)  # type: ignore[arg-type]
        in_code = _referred_to(content, found, star)
        spans = None
        if in_code:
            spans, (found, others) = _outside_prose(content, found, others)
            if spans is not None and self.whole_strings and not code_in_strings:
                found = [
                    at for at in found
                    if at[2] not in self.whole_strings or _in_code_or_whole(spans, at) or self._ends_a_path(spans, at)
                ]
            if self.no_modules:
                found = [at for at in found if at[2] not in self.no_modules or not _in_module_of_from(content, at)]
            if spans is not None and self.roles and not code_in_strings:
                roles = self.roles
                found = [at for at in found if at[2] not in roles or _in_role(spans, at, roles[at[2]])]
            in_code = _referred_to(content, found, star)
        declaring = {number for number, _, _ in others}
        focused = {number for number, _, _ in found} | declaring
        present = frozenset(word for _, _, word in found)
        spelled = tuple(sorted({(number, word) for number, _, word in found}))
        return Occurrences(tuple(sorted(focused)), present, in_code, spans, tuple(sorted(declaring)), spelled)


    def _ends_a_path(self, spans: Spans[str] | Spans[bytes], occurrence: tuple[int, int, str]) -> bool:
        """Does the word end a one-line string whose value ends in a name a rule renames
        (`"torch.cholesky"`, `"pkg.module.torch.cholesky"`: see ``paths``)?"""
        _, at, word = occurrence
        prefixes = self.paths.get(word)
        if not prefixes:
            return False
        text = spans.text
        quotes = _BYTE_QUOTES if isinstance(text, bytes) else _QUOTES
        if text[at + len(word) : at + len(word) + 1] not in quotes:
            return False
        for prefix in prefixes:
            start = at - len(prefix)
            spelled = text[start:at]
            if (spelled.decode("ascii", "replace") if isinstance(spelled, bytes) else spelled) == prefix:
                before = text[start - 1 : start]
                if before in quotes or before in (b".", "."):
                    return True
        return False


def _referred_to(content: str | bytes, found: list[tuple[int, int, str]], star: bool) -> bool:
    """Stage 2: may one of the words ``found`` (line, offset, word) be code that refers to torch?
    Any may, after `from m import *` (a bare name may be the torch function itself)."""
    keyword = b"import" if isinstance(content, bytes) else "import"
    return bool(found) and (star or any(_reference_position(content, at, keyword) for _, at, _ in found))  # type: ignore[arg-type]


def _outside_prose(
    content: str | bytes, *groups: list[tuple[int, int, str]]
) -> tuple[Spans[str] | Spans[bytes] | None, list[list[tuple[int, int, str]]]]:
    """Stage 3: the lexer's spans, and of each group of words (line, offset, word) those that
    stand in code, not in a comment or in prose (see ``lexing.Spans.prose``); every word when the
    text cannot be lexed."""
    from torchup.core.lexing import spans_of  # (only files stage 2 passes need it)

    spans = spans_of(content)
    if spans is None:
        return None, list(groups)
    return spans, [[occurrence for occurrence in group if spans.in_code(occurrence[1])] for group in groups]


def _in_code_or_whole(spans: Spans[str] | Spans[bytes], occurrence: tuple[int, int, str]) -> bool:
    """Does the word (line, offset, word) stand in code proper (an f-string's field included), or
    as the whole value of a one-line string (`"balanced"`: a quote right before and the same right
    after)? Either when unsure: see ``Spans.in_expression``, and a string the lexer spans (triple
    quotes, a backslash-newline), whose value the quotes around the word do not show
    (`'balanced\\<newline>'` is `balanced`)."""
    _, at, word = occurrence
    if spans.in_expression(at):
        return True
    index = bisect.bisect_right(spans.starts, at) - 1
    if index >= 0 and at < spans.ends[index]:
        return True
    text = spans.text
    quote = text[at - 1 : at]
    quotes = _BYTE_QUOTES if isinstance(text, bytes) else _QUOTES
    return quote in quotes and text[at + len(word) : at + len(word) + 1] == quote


def _per_kind(pattern: str) -> dict[type, re.Pattern[str] | re.Pattern[bytes]]:
    return {str: re.compile(pattern), bytes: re.compile(pattern.encode("ascii"))}


# `from` first on a line, then a module's dotted name up to the word (relative dots included);
# after the word, the rest of that name and ` import`. (A backslash or a bracket between: no match.)
_FROM_MODULE = _per_kind(r"[ \t]*from[ \t]+[\w. \t]*")
_MODULE_REST = _per_kind(r"[\w.]*[ \t]+import\b")
_IMPORT_WORD = _per_kind(r"\bimport\b")


def _in_module_of_from(content: str | bytes, occurrence: tuple[int, int, str]) -> bool:
    """Does the word (line, offset, word) stand in the module's name of a `from m import n` line
    (`from torch.utils._sympy.solve import try_solve`)? That binds `n` to `m.n`, which reaches a
    rule's name only through a word of its path (``Rule.path_words``); later uses of `n` spell `n`.
    No when unsure: anything but a plain dotted name between `from` and `import`."""
    _, at, word = occurrence
    kind = type(content)
    start = content.rfind(_ROLE_MARKS[kind][1], 0, at) + 1  # type: ignore[arg-type]
    if _FROM_MODULE[kind].fullmatch(content, start, at) is None:  # type: ignore[arg-type]
        return False
    if _IMPORT_WORD[kind].search(content, start, at) is not None:  # type: ignore[arg-type]
        return False
    return _MODULE_REST[kind].match(content, at + len(word)) is not None  # type: ignore[arg-type]


def _continues_a_name(content: bytes, line_start: int) -> bool:
    """Does the code before the line at ``line_start`` end where a name goes on (a dot, a backslash,
    `import`), past blank and comment lines (`(torch.  # why\n    load(f))`)? True when unsure."""
    end = line_start - 1
    for _ in range(20):
        if end <= 0:
            return False
        start = content.rfind(b"\n", 0, end) + 1
        line = content[start:end].strip()
        end = start - 1
        if not line or line.startswith(b"#"):
            continue
        code = line.split(b"#", 1)[0].rstrip()  # (naive: a `#` in a string only makes this surer)
        return any(text.endswith((b".", b"\\", b",", b"(")) or _REFERRING_KEYWORD.search(text) is not None
                   for text in (line, code))
    return True


_LIST_ITEM_END = re.compile(rb"[ \t]*(?:[,)\\\r]|as[ \t]|$)")
_REFERRING_KEYWORD = re.compile(rb"(?:^|\W)(?:import|from)\Z")

ATTRIBUTE, KEYWORD, STRING = "attribute", "keyword", "string"  # (Rule.word_roles)
CODE = "code"  # anywhere in code proper, not in a string
REFERENCE = "reference"  # anywhere in code but as the name a `def` or `class` statement defines
# Per kind of text: the blanks and line breaks between a word and its `.` or `=`, a line break,
# and what leaves the role of a word unsure: a comment, a backslash, a carriage return (a line
# break Python counts, `\n` does not).
_ROLE_MARKS = {
    str: ((" ", "\t", "\f", "\n"), "\n", ("#", "\\", "\r"), ".", "="),
    bytes: ((b" ", b"\t", b"\f", b"\n"), b"\n", (b"#", b"\\", b"\r"), b".", b"="),
}


def _in_role(spans: Spans[str] | Spans[bytes], occurrence: tuple[int, int, str], roles: frozenset[str]) -> bool:
    """Does the word (line, offset, word) stand where one of ``roles`` may: after `.` (an
    attribute), before `=` but not `==` (a keyword argument), in a one-line string (that stage 3
    kept: its whole value), in code (not a string), in code but not as a `def` or `class` name
    (a reference)? In brackets the `.` may end a line before and the `=` start one after
    (blank lines between): those are read too, and a comment or a backslash there, or a quote
    right before the word where the lexer cannot tell a string, says yes."""
    _, at, word = occurrence
    text = spans.text
    quotes = _BYTE_QUOTES if isinstance(text, bytes) else _QUOTES
    if STRING in roles and (not spans.in_expression(at) or text[at - 1 : at] in quotes):
        return True
    if (CODE in roles or REFERENCE in roles) and spans.in_expression(at) and (CODE in roles or not _defines(text, at)):
        return True
    if ATTRIBUTE in roles and _after_a_dot(spans, at):
        return True
    return KEYWORD in roles and _before_an_equals(text, at + len(word))


def _before_an_equals(text: str | bytes, end: int) -> bool:
    """Does `=` but not `==` follow the word that ends at ``end``, blanks and line breaks between
    (in brackets)? Yes when unsure: a comment or a backslash after it."""
    spaces, _, unsure, _, equals = _ROLE_MARKS[type(text)]
    after, size = end, len(text)
    while after < size and text[after : after + 1] in spaces:
        after += 1
    following = text[after : after + 2]
    return following[:1] in unsure or (following[:1] == equals and following[1:2] != equals)


_DEFINES = _per_kind(r"(?:def|class)[ \t\f]+$")


def _defines(text: str | bytes, at: int) -> bool:
    """Is the word at ``at`` the name of a `def` or `class` statement (its keyword before it on
    the line): a new binding, no reference to anything?"""
    start = max(text.rfind(b"\n" if isinstance(text, bytes) else "\n", 0, at) + 1, at - 80)  # type: ignore[arg-type]
    keyword = _DEFINES[type(text)].search(text, start, at)  # type: ignore[arg-type]
    return keyword is not None and not is_word_char(text[max(keyword.start() - 1, 0) : keyword.start()])


_LINES_BACK = 64  # lines of comments or blanks read back for a `.` before a word, at most


def _after_a_dot(spans: Spans[str] | Spans[bytes], at: int) -> bool:
    """Does `.` stand before the word at ``at``, blanks between, or in brackets at the end of the
    code of an earlier line (comments and blank lines between)? Yes when unsure: a line that ends
    in a string or a backslash continuation."""
    text = spans.text
    spaces, newline, _, dot, _ = _ROLE_MARKS[type(text)]
    line_start = text.rfind(newline, 0, at) + 1  # type: ignore[arg-type]
    before = at
    while before > line_start and text[before - 1 : before] in spaces:
        before -= 1
    if before > line_start:
        return text[before - 1 : before] == dot
    for _ in range(_LINES_BACK):
        if line_start == 0:
            return False  # (the first line: nothing before)
        line_start = text.rfind(newline, 0, line_start - 1) + 1  # type: ignore[arg-type]
        end = spans.code_end(line_start)
        if end is None:
            return True
        code = text[line_start:end].strip()
        if code:
            return code[-1:] == dot
    return True


_QUOTES = ('"', "'")
_BYTE_QUOTES = (b'"', b"'")
SCOPE_KEYWORDS = frozenset({"global", "nonlocal"})


@dataclass(frozen=True)
class Occurrences:
    """What one scan of a file found: the lines that spell a trigger word in code (after stage 3,
    when stage 2 passed the file) or `global`/`nonlocal`, for the focus; the trigger words present
    there; and the stages' answer."""

    lines: tuple[int, ...]  # 1-based, sorted, distinct
    present: frozenset[str]
    in_code: bool
    # Stage 3's lexing of the scanned content, when it ran (the skeleton's cut needs it again).
    spans: Spans[str] | Spans[bytes] | None = field(default=None, compare=False, repr=False)
    # The lines among ``lines`` that spell `global` or `nonlocal` in code (every declaration's first line).
    declaring: tuple[int, ...] = ()
    # Each line that spells a trigger word in code, with the word: (line, word), sorted.
    spelled: tuple[tuple[int, str], ...] = ()

    def lines_of(self, words: frozenset[str]) -> tuple[int, ...]:
        """``lines`` less those that spell only trigger words not among ``words``."""
        if words >= self.present:
            return self.lines
        return tuple(sorted({number for number, word in self.spelled if word in words}.union(self.declaring)))


def _line_of_each(content: AnyStr, offsets: list[int], newline: AnyStr, carriage: AnyStr) -> list[int]:
    """The line of each of ``offsets`` (ascending), as Python counts them (`\\r\\n`, `\\r` or `\\n`
    ends one)."""
    if carriage in content:
        breaks = rb"\r\n|\r|\n" if isinstance(content, bytes) else r"\r\n|\r|\n"
        ends = [match.end() for match in re.finditer(breaks, content)]
        return [bisect.bisect_right(ends, offset) + 1 for offset in offsets]
    lines: list[int] = []
    line, last = 1, 0
    for offset in offsets:
        line += content.count(newline, last, offset)
        last = offset
        lines.append(line)
    return lines


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


def _star_import(content: AnyStr, star: re.Pattern[AnyStr]) -> bool:
    """Does ``import *`` occur as words (not `reimport *`)?"""
    return any(
        match.start() == 0 or not is_word_char(content[match.start() - 1 : match.start()])
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
    preceded = word_start > 0 and is_word_char(content[word_start - 1 : word_start])
    return content[word_start : index + 1] == keyword and not preceded


def _blanks(content: str | bytes) -> str | bytes:
    return _BLANKS.encode("ascii") if isinstance(content, bytes) else _BLANKS


def is_word_char(char: str | bytes) -> bool:
    """Is ``char`` an ASCII letter, digit or `_` (what ``\\b`` in a bytes pattern counts as word)?"""
    return char.isascii() and (char.isalnum() or char in (b"_", "_"))


def renames_a_word(name: str, target: list[str], words: frozenset[str], path_words: frozenset[str]) -> bool:
    """Does an import that binds ``name`` to the dotted ``target`` let a use of ``name`` reach a
    trigger word it does not spell: a word bound under another name (`qr as q`), or a name reached
    through a module a path word names (`m.cond.f`)?"""
    *path, last = target
    return name not in words and (last in words or not path_words.isdisjoint(path))
