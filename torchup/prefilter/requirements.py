"""What a file must spell to refer to a qualified name at all, beyond the name's last word.

The pre-filter passes a file on any trigger word, and the last words of many qualified names are
common (`torch.distributed._tensor.zeros`, `torch.range`, `torch.onnx.export`, `functorch.grad`).
A reference the resolver can follow to such a name also spells the module it lives in:

- `a.b.mod.name`: every import form and attribute path names `mod`, after a dot or in a `from`
  import (`from a.b.mod import name`, `import a.b.mod as m`, `from a.b import mod`, `a.b.mod.name`,
  `from a.b.mod import *`);
- `pkg.name` for a package other than torch (`functorch.vmap`): `pkg`;
- `torch.name`, where `torch` is in every file: the name after `torch.` or after a name the file
  binds to torch (`import torch as th`, `t = torch`), or in a `from ... import` statement; or any
  name at all after a star import.

So a rule whose findings come only from qualified names (``LooksFor.names``, and module words)
asks this before its file is parsed (``Rule.may_report``). Measured on torch 2.14.1's sources
(2,395 files), with the issue 21 catalogue on: cold check 5.0 s -> see bench/RESULTS.md.
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
            if module and "." not in module and module != "torch":
                found.add(module)
        return frozenset(found)

    @cached_property
    def _modules(self) -> tuple[tuple[tuple[str, ...], str], ...]:
        """For each submodule a name lives in (`torch.distributed._tensor`): the words of the path
        between torch and it (each spelled somewhere: in the import that binds the path, if not
        in the reference), and the submodule itself (after a dot, or in a `from` import)."""
        found = []
        for module in sorted({name.rpartition(".")[0] for name in self.names if "." in name.rpartition(".")[0]}):
            parts = module.split(".")
            found.append((tuple(part for part in parts[:-1] if part != "torch"), parts[-1]))
        return tuple(found)

    @cached_property
    def _top_level(self) -> tuple[str, ...]:
        return tuple(sorted({name.rpartition(".")[2] for name in self.names if name.rpartition(".")[0] == "torch"}))

    def could_refer(self, text: str | bytes, spans: Spans[str] | Spans[bytes] | None = None) -> bool:
        """``spans``: the text's lexing, when known: then only words in code count, not those in a
        comment or a docstring (`>>> torch.load(...)` in the docs of a file that calls some other
        `load`: on torch's own sources, 188 files parsed -> 185)."""
        in_code = None
        if spans is not None and (isinstance(spans.text, str) or spans.text.isascii()):  # (offsets agree)
            in_code = spans.in_code
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")  # (the words are ASCII: offsets matter only with spans)
        if any(_has_word(text, word, in_code) for word in self._packages):
            return True
        for middle, last in self._modules:
            if all(_has_word(text, part, in_code) for part in middle) and _spelled_as_member(text, last, None, in_code):
                return True
        if not self._top_level:
            return False
        if "import *" in text or re.search(r"import\s+\*", text):
            return True  # `from torch import *`: a bare name may be torch's
        torch_names = _torch_names(text)
        return any(_spelled_as_member(text, word, torch_names, in_code) for word in self._top_level)


InCode = Callable[[int], bool]  # is this offset in code (``Spans.in_code``)?


def _word_starts(text: str, word: str, in_code: InCode | None = None) -> Iterator[int]:
    """Where ``word`` stands as a whole word (in code, with ``in_code``). (str.find: a regex that
    starts with ``\\b`` is tried at every position, ten times slower on large files.)"""
    size = len(word)
    index = text.find(word)
    while index >= 0:
        end = index + size
        whole = (index == 0 or not _is_word_char(text[index - 1])) and (
            end == len(text) or not _is_word_char(text[end])
        )
        if whole and (in_code is None or in_code(index)):
            yield index
        index = text.find(word, end)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _has_word(text: str, word: str, in_code: InCode | None = None) -> bool:
    return next(_word_starts(text, word, in_code), None) is not None


def _spelled_as_member(
    text: str, word: str, owners: frozenset[str] | None = None, in_code: InCode | None = None
) -> bool:
    """``word`` after a dot (after one of ``owners`` and a dot, when given), or in a `from` import."""
    for index in _word_starts(text, word, in_code):
        before = text[max(0, index - 80):index].rstrip(" \t\r\n\\")  # (a window: never copy the whole prefix)
        if before.endswith("."):
            if owners is None:
                return True
            owner = _OWNER.search(before, 0, len(before) - 1)
            if owner is not None and owner.group(1) in owners:
                return True
        if _in_from_import(text, index):
            return True
    return False


def _in_from_import(text: str, index: int) -> bool:
    """Is ``index`` in a `from x import ...` statement (parenthesised ones too)?"""
    line_start = text.rfind("\n", 0, index) + 1
    if _FROM_IMPORT.match(text, line_start):
        return True
    opened = text.rfind("(", 0, index)
    if opened < 0 or ")" in text[opened:index]:
        return False
    statement_start = text.rfind("\n", 0, opened) + 1
    return _FROM_IMPORT.match(text, statement_start) is not None


_OWNER = re.compile(r"(\w+)[ \t]*$")
_FROM_IMPORT = re.compile(r"[ \t]*from[ \t]+[\w.]+[ \t]+import\b")


def _torch_names(text: str) -> frozenset[str]:
    """`torch` and the names a file binds to the module itself (substring tests first: the
    patterns are tried only in the few files that alias torch; one answer per text, as every
    rule of a file asks)."""
    if _LAST_TEXT[0] is text:
        return _LAST_TEXT[1]
    aliases = {"torch"}
    if "torch as" in text:
        aliases.update(re.findall(r"import\s+torch\s+as\s+(\w+)", text))
    if "= torch\n" in text or "=torch\n" in text:
        aliases.update(re.findall(r"(?m)^[ \t]*(\w+)[ \t]*=[ \t]*torch[ \t]*$", text))
    _LAST_TEXT[:] = [text, frozenset(aliases)]
    return _LAST_TEXT[1]


_LAST_TEXT: list = [None, frozenset()]
