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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchup.core.lexing import Spans


@dataclass(frozen=True)
class NameRequirements:
    """For a set of qualified names (and module words): can a text refer to one of them?"""

    names: tuple[str, ...]
    words: tuple[str, ...] = ()  # spelled anywhere is enough (modules a rule reports by import)

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
        read = _reading(text, spans)
        if any(read.has_word(word) for word in self._packages):
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


class _Reading:
    """What ``could_refer`` learns of one text, kept for the next rule that asks of it: each rule
    of a file asks, and their modules share words (`jit` for TU173's, in 400 of torch's files)."""

    def __init__(self, text: str, in_code: InCode | None) -> None:
        self.text = text
        self.in_code = in_code
        self._words: dict[str, bool] = {}
        self._members: dict[tuple[str, frozenset[str] | None], bool] = {}
        self._bound: dict[str, frozenset[str]] = {}

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


def _reading(text: str | bytes, spans: Spans[str] | Spans[bytes] | None) -> _Reading:
    """The ``_Reading`` of ``text``: the last one made, if of the same object read the same way."""
    in_code = None
    if spans is not None and (isinstance(spans.text, str) or spans.text.isascii()):  # (offsets agree)
        in_code = spans.in_code
    last = _LAST[0]
    if last is not None and last[0] is text and last[1] is spans:
        return last[2]
    decoded = text.decode("utf-8", "replace") if isinstance(text, bytes) else text  # (ASCII words: offsets agree)
    reading = _Reading(decoded, in_code)
    _LAST[0] = (text, spans, reading)  # (holding ``text``: its id cannot be reused while kept)
    return reading


_LAST: list[tuple[str | bytes, object, _Reading] | None] = [None]


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


def is_identifier_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _spelled_as_member(
    text: str, word: str, owners: frozenset[str] | None = None, in_code: InCode | None = None
) -> bool:
    """``word`` after a dot (after one of ``owners`` and a dot, when given), or in a `from` import."""
    for index in word_starts(text, word, in_code):
        before = _code_before(text, index)
        if before.endswith("."):
            if owners is None:
                return True
            owner = _OWNER.search(before, 0, len(before) - 1)
            if owner is not None and owner.group(1) in owners:
                return True
        if in_from_import(text, index):
            return True
    return False


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
    if _FROM_IMPORT.match(text, _statement_start(text, index)):
        return True
    opened = text.rfind("(", 0, index)
    if opened < 0 or ")" in text[opened:index]:
        return False
    return _FROM_IMPORT.match(text, _statement_start(text, opened)) is not None


def _statement_start(text: str, index: int) -> int:
    """The start of the line of ``index``, or past the last `;` before it on that line."""
    line_start = text.rfind("\n", 0, index) + 1
    return max(line_start, text.rfind(";", line_start, index) + 1)


_OWNER = re.compile(r"(\w+)[ \t]*$")
_STAR_IMPORT = re.compile(r"import\s+\*")
_STAR_IMPORT_BYTES = re.compile(_STAR_IMPORT.pattern.encode("ascii"))


def mentions_star_import(text: str | bytes) -> bool:
    """`import *` anywhere: after one, a bare name may be any module's."""
    pattern = _STAR_IMPORT_BYTES if isinstance(text, bytes) else _STAR_IMPORT
    return pattern.search(text) is not None  # type: ignore[arg-type]
_TORCH_BOUND = re.compile(r"torch(?:[ \t]+as[ \t]+(\w+)|[ \t]*$)", re.M)  # `torch as th`; `t = torch`
_BARE_ASSIGNED = re.compile(r"[ \t]*(\w+)[ \t]*=[ \t]*\Z")
_BINDS = re.compile(r"[ \t]+as[ \t]+(\w+)")  # after a module's word: `jit as J`
_ASSIGNED = re.compile(r"[ \t]*(\w+)[ \t]*=[ \t]*(?:[\w.]*\.)?\Z")  # before it: `T = torch.`
_FROM_IMPORT = re.compile(r"[ \t]*from[ \t]+[\w.]+[ \t]+import\b")
