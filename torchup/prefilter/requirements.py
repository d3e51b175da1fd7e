"""What a file must spell to refer to a qualified name at all, beyond the name's last word.

The pre-filter passes a file on any trigger word, and the last words of many qualified names are
common (`torch.distributed._tensor.zeros`, `torch.range`, `torch.onnx.export`, `functorch.grad`).
A reference the resolver can follow to such a name also spells the module it lives in:

- `a.b.mod.name`: every import form and attribute path spells each word of the path after its
  parent's word or a name bound to the parent, or in a `from` import, and `name` so after `mod`
  (`from a.b.mod import name`, `import a.b.mod as m` and `m.name`, `from a.b import mod`,
  `a.b.mod.name`); after a star import, the words anywhere (`triton.jit` is no `torch.jit`, nor
  `torch.amp.autocast` a `torch.cuda.amp.autocast`);
- `pkg.name` for a package other than torch (`functorch.vmap`): `pkg`;
- `torch.name`, where `torch` is in every file: the name after `torch.` or after a name the file
  binds to torch (`import torch as th`, `t = torch`), or in a `from ... import` statement; or any
  name at all after a star import.

So a rule whose findings come only from qualified names (``LooksFor.names``, and the modules it
reports by import, ``LooksFor.modules``) asks this before its file is parsed (``Rule.may_report``).
Measured on torch 2.14.1's sources (2,395 files), with the issue 21 catalogue on: cold check 5.0 s
-> see bench/RESULTS.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from torchup.core.memo import last_answer

if TYPE_CHECKING:
    from torchup.core.lexing import Spans


@dataclass(frozen=True)
class NameRequirements:
    """For a set of qualified names (and module words): can a text refer to one of them?"""

    names: tuple[str, ...]
    words: tuple[str, ...] = ()  # spelled anywhere is enough (modules a rule reports by import)
    # Methods called on a receiver (``LooksFor.methods``): a call on anything but a module the text
    # imports is enough (`x.qr()`; not `torch.linalg.qr(x)`, nor `np.linalg.qr(a)`).
    methods: tuple[str, ...] = ()
    # Every name must be referred to, not one (``LooksFor.together``).
    every: bool = False

    @cached_property
    def _each(self) -> tuple[NameRequirements, ...]:
        return tuple(NameRequirements((name,)) for name in self.names)

    @cached_property
    def _packages(self) -> frozenset[str]:
        """Top-level packages other than torch (`functorch`), and the rule's own module words."""
        found = set(self.words)
        for name in self.names:
            module = name.rpartition(".")[0]
            if not module:
                found.add(name)  # (a top-level module itself, `functorch`: ``LooksFor.modules``)
            elif "." not in module and module != "torch":
                found.add(module)
        return frozenset(found)

    @cached_property
    def _modules(self) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
        """For each submodule names live in (`torch.distributed._tensor`): its path, and the names'
        last words. A reference spells each word of the path after its parent's word or a name
        bound to the parent, or in a `from` import (`torch.jit.load`, `from torch import jit`,
        `import torch.jit as J` and `J.load`, `T = torch.jit` and `T.load`), and so the last."""
        lasts: dict[str, set[str]] = {}
        for name in self.names:
            module, _, last = name.rpartition(".")
            if "." in module:
                lasts.setdefault(module, set()).add(last)
        return tuple((tuple(module.split(".")), tuple(sorted(lasts[module]))) for module in sorted(lasts))

    @cached_property
    def _top_level(self) -> tuple[str, ...]:
        return tuple(sorted({name.rpartition(".")[2] for name in self.names if name.rpartition(".")[0] == "torch"}))

    def could_refer(self, text: str | bytes, spans: Spans[str] | Spans[bytes] | None = None) -> bool:
        """``spans``: the text's lexing, when known: then only words in code count, not those in a
        comment or a docstring (`>>> torch.load(...)` in the docs of a file that calls some other
        `load`: on torch's own sources, 188 files parsed -> 185)."""
        if self.every:
            return all(single.could_refer(text, spans) for single in self._each)
        read = _reading(text, spans)
        if any(read.has_word(word) for word in self._packages):
            return True
        if any(read.called_as_method(method) for method in self.methods):
            return True
        for path, lasts in self._modules:
            if read.star_import:  # (`from torch.jit import *`: a bare `load` may be its)
                if all(read.has_word(part) for part in path):
                    return True
                continue
            if path[0] == "torch":
                owners, rest = read.torch_names, path[1:]
            elif read.has_word(path[0]):
                owners, rest = read.names_bound_to(path[0]), path[1:]
            else:
                continue
            # Each word after its parent's or a name bound to the parent (`triton.jit` is no
            # `torch.jit`, `torch.amp` no `torch.cuda.amp`), and a last word after the module's.
            for part in rest:
                if not read.spelled_as_member(part, owners):
                    break
                owners = read.names_bound_to(part)
            else:
                if any(read.spelled_as_member(last, owners) for last in lasts):
                    return True
        if not self._top_level:
            return False
        if read.star_import:
            return True  # `from torch import *`: a bare name may be torch's
        return any(read.spelled_as_member(word, read.torch_names) for word in self._top_level)


    def imported_bare(
        self, text: str | bytes, word: str, owners: frozenset[str], spans: Spans[str] | Spans[bytes] | None = None
    ) -> bool:
        """May a bare ``word`` (no dot before it) refer to one of ``names``: does a `from` import of
        their module (whose last word is one of ``owners``: ``owners()``) bind it (`from torch import
        load`), or a star import bind anything?"""
        read = _reading(text, spans)
        if read.star_import:
            return True
        return any(
            (module := from_import_module(read.text, index)) is not None and module.rpartition(".")[2] in owners
            for index in word_starts(read.text, word, read.in_code)
        )

    def owners(self, text: str | bytes, spans: Spans[str] | Spans[bytes] | None = None) -> frozenset[str]:
        """The names a reference to one of ``names`` can stand after, `torch.load` after a dot: the
        names the text binds to their modules (`torch`, `th`; `jit`, `J` for `torch.jit.load`)."""
        read = _reading(text, spans)
        found: set[str] = set()
        for name in self.names:
            module = name.rpartition(".")[0]
            if module == "torch":
                found |= read.torch_names
            elif module:
                found |= read.names_bound_to(module.rpartition(".")[2])
        return frozenset(found)


class _Reading:
    """What ``could_refer`` learns of one text, kept for the next rule that asks of it: each rule
    of a file asks, and their modules share words (`jit` for TU173's, in 400 of torch's files)."""

    def __init__(self, text: str, in_code: InCode | None) -> None:
        self.text = text
        self.in_code = in_code
        self._words: dict[str, bool] = {}
        self._members: dict[tuple[str, frozenset[str] | None], bool] = {}
        self._bound: dict[str, frozenset[str]] = {}
        self._modules: dict[str, bool] = {}

    def has_word(self, word: str) -> bool:
        found = self._words.get(word)
        if found is None:
            found = self._words[word] = next(word_starts(self.text, word, self.in_code), None) is not None
        return found

    def spelled_as_member(self, word: str, owners: frozenset[str] | None) -> bool:
        key = (word, owners)
        found = self._members.get(key)
        if found is None:
            found = self._members[key] = _spelled_as_member(self.text, word, owners, self.in_code)
        return found

    @cached_property
    def star_import(self) -> bool:
        return mentions_star_import(self.text)

    def called_as_method(self, word: str) -> bool:
        """``word`` after a dot, other than in a module's path (`x.qr`, `f(x).qr`, `self.a.qr`; not
        `torch.linalg.qr`, `np.linalg.qr`: a path from a name only a plain `import` binds)."""
        for index in word_starts(self.text, word, self.in_code):
            before = _code_before(self.text, index)
            if not before.endswith("."):
                continue  # (`def qr`, `import qr`: no call on a receiver)
            path = _MODULE_PATH.search(before)
            if path is None or not self._names_a_module(path.group(1)):
                return True
        return False

    def _names_a_module(self, name: str) -> bool:
        """Is ``name`` bound by plain `import` statements only (`np` after `import numpy as np`,
        `torch` after `import torch.linalg`)? A name the text may bind otherwise (`np = ...`, a
        parameter `def f(torch)`, `for np in`, `as np`) may be anything."""
        found = self._modules.get(name)
        if found is None:
            found = self._modules[name] = name in self._imported and not any(
                _may_bind(self.text, start, len(name)) for start in word_starts(self.text, name)
            )
        return found

    @cached_property
    def _imported(self) -> frozenset[str]:
        """The names plain `import` statements bind (`import a.b as c`: `c`; `import a.b`: `a`)."""
        text, names = self.text, set()
        for start in word_starts(text, "import", self.in_code):
            line_start = text.rfind("\n", 0, start) + 1
            if text[line_start:start].strip(" \t"):
                continue  # (`from m import x` binds what may be no module)
            line_end = text.find("\n", start)
            statement = text[start + len("import"):line_end if line_end >= 0 else len(text)]
            for item in statement.split("#", 1)[0].split(";", 1)[0].split(","):
                parts = item.split()
                if len(parts) == 3 and parts[1] == "as":
                    names.add(parts[2])
                elif len(parts) == 1:
                    names.add(parts[0].split(".", 1)[0])
        return frozenset(names)

    def names_bound_to(self, word: str) -> frozenset[str]:
        """``word`` (a module's last word) and the names the text binds to it: `J` after
        `import torch.jit as J` or `from torch import jit as J`, `T` after `T = torch.jit`."""
        found = self._bound.get(word)
        if found is None:
            names = {word}
            for start in word_starts(self.text, word, None):
                line_start = self.text.rfind("\n", 0, start) + 1
                line_end = self.text.find("\n", start)
                line = self.text[line_start:line_end if line_end >= 0 else len(self.text)]
                at = start - line_start
                alias = _BINDS.match(line, at + len(word))
                assigned = _ASSIGNED.match(line, 0, at)
                for match in (alias, assigned):
                    if match is not None:
                        names.add(match.group(1))
            found = self._bound[word] = frozenset(names)
        return found

    @cached_property
    def torch_names(self) -> frozenset[str]:
        """`torch` and the names a file binds to the module itself: `import torch as th`, `t = torch`
        (one pass: the pattern starts with `torch`, which the regex engine looks for as a string)."""
        text, aliases = self.text, {"torch"}
        for match in _TORCH_BOUND.finditer(text):
            if match.group(1):
                aliases.add(match.group(1))
                continue
            line_start = text.rfind("\n", 0, match.start()) + 1
            assigned = _BARE_ASSIGNED.match(text, line_start, match.start())
            if assigned is not None:
                aliases.add(assigned.group(1))
        return frozenset(aliases)


@last_answer  # (each rule's requirements read the same text, one after another)
def _reading(text: str | bytes, spans: Spans[str] | Spans[bytes] | None) -> _Reading:
    """The ``_Reading`` of ``text`` (in code only, where ``spans`` says)."""
    in_code = None
    if spans is not None and (spans.text is text or isinstance(spans.text, str) or spans.text.isascii()):
        in_code = spans.in_code  # (offsets agree: Latin-1 below maps each byte to one character)
    decoded = text.decode("latin-1") if isinstance(text, bytes) else text  # (the words are ASCII)
    for mark in _BYTE_ORDER_MARKS:  # (blanked, as the tokenizer skips it: `from` then starts the line)
        if decoded.startswith(mark):
            decoded = " " * len(mark) + decoded[len(mark):]
    return _Reading(decoded, in_code)


_BYTE_ORDER_MARKS = ("\ufeff", "\xef\xbb\xbf")  # (a text's, and its UTF-8 bytes' read as Latin-1)


InCode = Callable[[int], bool]  # is this offset in code (``Spans.in_code``)?


def word_starts(text: str, word: str, in_code: InCode | None = None) -> Iterator[int]:
    """Where ``word`` stands as a whole word (in code, with ``in_code``). (str.find: a regex that
    starts with ``\\b`` is tried at every position, ten times slower on large files.)"""
    size = len(word)
    index = text.find(word)
    while index >= 0:
        end = index + size
        whole = (index == 0 or not is_identifier_char(text[index - 1])) and (
            end == len(text) or not is_identifier_char(text[end])
        )
        if whole and (in_code is None or in_code(index)):
            yield index
        index = text.find(word, end)


# The callees of a patch (torchup/analysis/patch_targets.py: `patch.object` spells `patch`), and a
# call of one from its callee's word on: its string arguments name what it patches.
PATCHING = ("patch", "setattr", "getattr", "delattr")
_PATCH_CALL = re.compile(r"\w+[ \t]*(?:\.[ \t]*object[ \t]*)?\(")
_PATCH_CALL_REACH = 300  # characters after a patching call's `(` in which its string may stand
_IDENTIFIER = re.compile(r"\w+")


def may_patch(spans: Spans[str] | Spans[bytes], words: Iterable[str]) -> bool:
    """Can the text patch a function whose last word is one of ``words``: does one of them stand in
    a one-line string (`"torch.cholesky"`, `"cholesky"`) soon after a patching call's `(`?"""
    raw = spans.text
    text = raw.decode("latin-1") if isinstance(raw, bytes) else raw  # (offsets stay those of ``spans``)
    wanted = frozenset(words)
    for callee in PATCHING:
        for start in word_starts(text, callee, spans.in_code):
            call = _PATCH_CALL.match(text, start)
            if call is None:
                continue
            for word in _IDENTIFIER.finditer(text, call.end(), min(len(text), call.end() + _PATCH_CALL_REACH)):
                if word.group() in wanted and spans.in_code(word.start()) and not spans.in_expression(word.start()):
                    return True
    return False


def is_identifier_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _spelled_as_member(
    text: str, word: str, owners: frozenset[str] | None = None, in_code: InCode | None = None
) -> bool:
    """``word`` after a dot (after one of ``owners`` and a dot, when given), or in a `from` import
    (of a module whose last word is one of ``owners``, when given: `from torch.linalg import
    cholesky` binds no `torch.cholesky`; a relative import binds nothing the resolver follows)."""
    for index in word_starts(text, word, in_code):
        before = _code_before(text, index)
        if before.endswith("."):
            if owners is None:
                return True
            owner = _OWNER.search(before, 0, len(before) - 1)
            if owner is not None and owner.group(1) in owners:
                return True
        module = from_import_module(text, index)
        if module is not None and (owners is None or module.rpartition(".")[2] in owners):
            return True
    return False


def member_of(text: str, index: int, owners: frozenset[str] | None, bare: bool = True) -> bool:
    """Can the word at ``index`` be a member of one of ``owners`` (None: of anything)? Not after a
    dot that follows another name (`pickle.load`), nor after a dot that follows no name at all
    (`f().load`: no module's function a resolver follows); without a dot, if ``bare``."""
    if owners is None:
        return True
    before = _code_before(text, index)
    if not before.endswith("."):
        return bare
    owner = _OWNER.search(before, 0, len(before) - 1)
    return owner is not None and owner.group(1) in owners


def _may_bind(text: str, start: int, size: int) -> bool:
    """May the name at ``start`` (of ``size`` characters) be bound there by anything but a plain
    `import`: an assignment, a parameter, a loop or tuple target, `as`, a `from` import? (Not an
    attribute, `x.np`, nor an argument of a call, `getattr(torch, n)`.) True when unsure."""
    if start and text[start - 1] == ".":
        return False
    line_start = text.rfind("\n", 0, start) + 1
    if _PLAIN_IMPORT.match(text, line_start):
        return False
    if from_import_module(text, start) is not None or _AS_BEFORE.search(text, line_start, start):
        return True
    follower = _FOLLOWER.match(text, start + size)
    if follower is None:
        return False
    if follower.group(1) not in (",", ")", ":"):
        return True  # `=`, `:=`, `in` (a loop's target)
    opener = _unclosed_bracket(text, start)
    if opener is None:
        return True  # `np, x = ...`, `np: T = ...`, `lambda np: ...` (or unsure)
    return _DEF_BEFORE.search(text, max(0, opener - 200), opener) is not None or "lambda" in text[opener:start]


def _unclosed_bracket(text: str, index: int, reach: int = 2000) -> int | None:
    """Where the bracket ``index`` stands in opens (naively: strings are not skipped); None at the
    top level or when unsure (``reach`` characters back)."""
    depth = 0
    for position in range(index - 1, max(-1, index - reach - 1), -1):
        char = text[position]
        if char in ")]}":
            depth += 1
        elif char in "([{":
            if depth == 0:
                return position
            depth -= 1
    return None


def _code_before(text: str, index: int) -> str:
    """The code before ``index`` (a window: never a copy of the whole prefix), less the blank and
    comment lines and the comment just before it: `(torch.  # why` then `load(f))` is `torch.load`."""
    before = text[max(0, index - 80):index].rstrip(" \t\r\n\\")
    if before.endswith("."):
        return before  # (before any `#`, which may stand in a string)
    while "#" in before:
        line_start = before.rfind("\n") + 1
        code = before[line_start:].split("#", 1)[0]  # (naive: a `#` in a string gives up the window)
        if code.strip():
            return before[:line_start] + code.rstrip(" \t\\")
        if line_start == 0:
            return before
        before = before[:line_start].rstrip(" \t\r\n\\")
    return before


def in_from_import(text: str, index: int) -> bool:
    """Is ``index`` in a `from x import ...` statement (parenthesised ones too, and one after a `;`)?"""
    return _from_import(text, index) is not None


def from_import_module(text: str, index: int) -> str | None:
    """The module of the `from ... import` statement ``index`` stands in after `import` (`torch.jit`
    for `from torch.jit import load`); None where there is none, or ``index`` is in its module."""
    statement = _from_import(text, index)
    return statement.group(1) if statement is not None and index >= statement.end() else None


def _from_import(text: str, index: int) -> re.Match[str] | None:
    """The start of the `from x import ...` statement ``index`` stands in (parenthesised ones too,
    and one after a `;`), up to its `import`."""
    statement = _FROM_IMPORT.match(text, _statement_start(text, index))
    if statement is not None:
        return statement
    opened = text.rfind("(", 0, index)
    if opened < 0 or ")" in text[opened:index]:
        return None
    return _FROM_IMPORT.match(text, _statement_start(text, opened))


def _statement_start(text: str, index: int) -> int:
    """The start of the line of ``index``, or past the last `;` before it on that line."""
    line_start = text.rfind("\n", 0, index) + 1
    return max(line_start, text.rfind(";", line_start, index) + 1)


_OWNER = re.compile(r"(\w+)[ \t]*$")
_PLAIN_IMPORT = re.compile(r"[ \t]*import[ \t]")
_AS_BEFORE = re.compile(r"\bas[ \t]+\Z")  # (searched up to the name: `with f() as np`)
# After a name: what may make it a target (`np = `, `np := `, `np in` of a loop, `np,` `np)` `np:`
# of a parameter list or tuple target); `np == x` is no binding.
_FOLLOWER = re.compile(r"[ \t]*(,|\)|:=|:|=(?!=)|in\b)")
_DEF_BEFORE = re.compile(r"\bdef[ \t]+\w+[ \t]*\Z")  # (searched up to a parameter list's `(`)
# A dotted path from its first name to the dot before a word: `torch.linalg.` (group 1: `torch`).
_MODULE_PATH = re.compile(r"(?<![\w.)\]}'\"])([A-Za-z_]\w*)(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*[ \t]*\.\Z")


class TextPattern:
    """A regular expression (ASCII) searched in a file's text or in its undecoded bytes: the
    pre-filter hands ``may_report`` either (``Spans.text``)."""

    def __init__(self, pattern: str) -> None:
        self._text = re.compile(pattern)
        self._bytes = re.compile(pattern.encode("ascii"))

    def found_in(self, content: str | bytes) -> bool:
        if isinstance(content, bytes):
            return self._bytes.search(content) is not None
        return self._text.search(content) is not None


_STAR_IMPORT = TextPattern(r"import\s+\*")


def mentions_star_import(text: str | bytes) -> bool:
    """`import *` anywhere: after one, a bare name may be any module's."""
    return _STAR_IMPORT.found_in(text)


_TORCH_BOUND = re.compile(r"torch(?:[ \t]+as[ \t]+(\w+)|[ \t]*$)", re.M)  # `torch as th`; `t = torch`
_BARE_ASSIGNED = re.compile(r"[ \t]*(\w+)[ \t]*=[ \t]*\Z")
_BINDS = re.compile(r"[ \t]+as[ \t]+(\w+)")  # after a module's word: `jit as J`
_ASSIGNED = re.compile(r"[ \t]*(\w+)[ \t]*=[ \t]*(?:[\w.]*\.)?\Z")  # before it: `T = torch.`
_FROM_IMPORT = re.compile(r"[ \t]*from[ \t]+([\w.]+)[ \t]+import\b")
