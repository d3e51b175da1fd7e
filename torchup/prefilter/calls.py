"""Whether every call a text spells passes a keyword: read from the text, before any parse.

Rules about a call that leaves out a keyword whose default changed (TU601 `torch.load` without
`weights_only=`, TU604, TU606) can report nothing in a file where each use of the function's
name is a call that passes the keyword: torch's own sources call `torch.load(...,
weights_only=True)` in files no other rule has anything to say about. ``every_call_passes``
tells such a file from the text, so that it is not parsed.

A use is what these rules report: a call, or the function passed on; the word in an import
statement or before a dot is none. It answers True only when sure: a use that is no call, a call
it cannot read to its end (a string it cannot follow, an f-string, a very long call), a keyword
given as `None` or inside a nested bracket (`**dict(weights_only=True)`) all count as a call that
may leave the keyword out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from torchup.prefilter.requirements import in_from_import, is_identifier_char, member_of, word_starts

if TYPE_CHECKING:
    from torchup.core.lexing import Spans
    from torchup.prefilter.requirements import NameRequirements

_LONGEST_CALL = 20_000  # characters read past a call's `(` before giving up (unsure)
_OPENING, _CLOSING = "([{", ")]}"
_IMPORT_LINE = re.compile(r"[ \t]*(?:import|from)[ \t]")
_RENAMED = re.compile(r"as[ \t]+\w")


def every_call_passes(
    spans: Spans[str] | Spans[bytes], words: Iterable[str], keywords: frozenset[str],
    names: NameRequirements | None = None,
) -> bool:
    """Is every use in code of one of ``words`` (whole words) a call that passes one of ``keywords``
    by name, with a value other than `None`, among its own arguments? ``names``: the rule's, when
    its uses are references to them: a use after a dot then counts only after a name the text
    binds to their modules (``NameRequirements.owners``): `pickle.load(f)` is no `torch.load`."""
    raw = spans.text
    # (Latin-1 maps each byte to one character: offsets stay those of ``spans``.)
    text = raw.decode("latin-1") if isinstance(raw, bytes) else raw
    owners = names.owners(raw, spans) if names is not None else None
    for word in words:
        # (a bare `load` is torch's only where a `from` import binds it: else it is prose in an
        # f-string, a parameter, a method's own name)
        bare = owners is None or names is None or names.imported_bare(raw, word, owners, spans)
        for start in word_starts(text, word, spans.in_code):
            if _no_use(text, start, start + len(word)) or not member_of(text, start, owners, bare):
                continue
            if not _passes(text, start + len(word), keywords):
                return False
    return True


def _no_use(text: str, start: int, end: int) -> bool:
    """Is the word at ``start``-``end`` no use of a function: in an import statement, which binds
    a name (unless it renames it: `load as tl`), or followed by a dot (a module on the way, as in
    `torch.utils.checkpoint.checkpoint(...)`; `torch.load.__doc__`, an attribute of the function,
    which these rules leave alone too)?"""
    index = end
    while index < len(text) and text[index] in " \t":
        index += 1
    if text.startswith(".", index):
        return True
    if _RENAMED.match(text, index):
        return False  # `load as tl`: the uses of `tl` do not spell the word
    line_start = text.rfind("\n", 0, start) + 1
    return _IMPORT_LINE.match(text, line_start) is not None or in_from_import(text, start)


def call_arguments(spans: Spans[str] | Spans[bytes], word: str) -> Iterator[tuple[str, int, int] | None]:
    """For each call in code of ``word`` (a whole word before `(`): the text and the offsets of its
    arguments, from after `(` to before `)`; None for a call that cannot be read to its end (a
    string it cannot follow, an f-string, a very long call), and for a use that is no call and may
    be called under another name (`f = torch.log`, `log as L`): unsure."""
    raw = spans.text
    text = raw.decode("latin-1") if isinstance(raw, bytes) else raw  # (offsets stay those of ``spans``)
    for start in word_starts(text, word, spans.in_code):
        index = start + len(word)
        while index < len(text) and text[index] in " \t":
            index += 1
        if not text.startswith("(", index):
            if not _no_use(text, start, start + len(word)):
                yield None
            continue
        end = _call_end(text, index + 1)
        yield None if end < 0 else (text, index + 1, end)


def _call_end(text: str, index: int) -> int:
    """Where the call whose arguments start at ``index`` closes (its `)`); -1 if unsure."""
    return _walk_call(text, index)


def _passes(text: str, index: int, keywords: frozenset[str]) -> bool:
    """Does the call whose callee ends at ``index`` pass one of ``keywords`` (False: unsure)?"""
    size = len(text)
    while index < size and text[index] in " \t":
        index += 1
    if index >= size or text[index] != "(":
        return False  # no call: a reference passed on, an import, an attribute
    limit = min(size, index + 1 + _LONGEST_CALL)

    def passed(start: int, end: int) -> bool:
        return text[start:end] in keywords and _given(text, end, limit)

    return _walk_call(text, index + 1, passed) == _FOUND


_FOUND = -2  # (``_walk_call``: a name its ``stop`` wanted)


def _walk_call(text: str, index: int, stop: Callable[[int, int], bool] | None = None) -> int:
    """Read the arguments of a call from ``index`` (after its `(`), past strings, comments and
    nested brackets: where the call closes; ``_FOUND`` as soon as ``stop`` holds for a name at the
    call's own depth (its start and end); -1 if unsure (an f-string, whose fields may hold quotes
    and brackets; a string not closed on its line; a call longer than ``_LONGEST_CALL``)."""
    depth, limit = 1, min(len(text), index + _LONGEST_CALL)
    while index < limit:
        char = text[index]
        if char in "'\"":
            if text[index - 1] in "fFtT":
                return -1
            index = _string_end(text, index, limit)
            if index < 0:
                return -1
            continue
        if char == "#":
            index = text.find("\n", index, limit)
            if index < 0:
                return -1
            continue
        if char in _OPENING:
            depth += 1
        elif char in _CLOSING:
            depth -= 1
            if depth == 0:
                return index
        elif stop is not None and depth == 1 and (char.isalpha() or char == "_") and not is_identifier_char(
            text[index - 1]
        ):
            end = index + 1
            while end < limit and is_identifier_char(text[end]):
                end += 1
            if stop(index, end):
                return _FOUND
            index = end
            continue
        index += 1
    return -1


def _given(text: str, index: int, limit: int) -> bool:
    """After a keyword's name: `=` (not `==`) and a value other than `None`."""
    while index < limit and text[index] in " \t":
        index += 1
    if index >= limit or text[index] != "=" or text.startswith("=", index + 1):
        return False
    index += 1
    while index < limit and text[index] in " \t":
        index += 1
    return not (text.startswith("None", index) and not is_identifier_char(text[index + 4:index + 5] or " "))


def _string_end(text: str, index: int, limit: int) -> int:
    """Where the string literal opening at ``index`` ends (past its closing quote); -1 if unsure."""
    quote = text[index] * 3 if text.startswith(text[index] * 3, index) else text[index]
    index += len(quote)
    while index < limit:
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if text.startswith(quote, index):
            return index + len(quote)
        if char == "\n" and len(quote) == 1:
            return -1
        index += 1
    return -1
