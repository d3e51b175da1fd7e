"""Jupyter notebooks (``.ipynb``): check and fix the code cells, keep every other byte of the file.

How a notebook is read:

* Only code cells are analysed; markdown and raw cells are skipped. Cells are numbered from 1 among
  the *code* cells (``Diagnostic.cell``); a finding's line and column are relative to its cell, so
  text output reads ``nb.ipynb:cell 3:2:5``.
* The code cells are analysed together, as one text, in notebook order: an ``import torch`` in cell 1
  resolves ``torch.qr`` in cell 3, as it does when the notebook runs top to bottom. Each cell is
  preceded by a sentinel comment line that tells the cells apart again after fixing.
* A cell is read as IPython runs it. IPython removes a cell's indentation first, so that a cell
  pasted from inside a function runs: IPython 9 the indentation all its lines share, IPython 7 and
  8 that of its first line, from the lines that have it; torchup does the first, and the second
  where only that parses (``dedent``). A Python cell magic's body gets the same (the magic runs it
  through the same clean-up). Findings' lines and columns, and fixes, are in the cell's own text: a
  fixed line keeps the indentation it had, a line a fix adds gets the cell's; the fixed cell must
  give exactly the fixed code when its indentation is removed again, or that cell's fixes are
  dropped (with a note on its findings), never written half-mapped.
* IPython syntax is masked, never analysed and never edited: line magics (``%time f()``,
  ``%matplotlib inline``), shell escapes (``!pip install x``, ``!!ls``), magic and shell
  assignments (``x = !ls``, ``t = %timeit -o f()``), help (``?torch.qr``, ``torch.qr??``) and the
  autocall escapes (``/f x``, ``,f a b``, ``;f a b``), at the start of a logical line. A masked
  line becomes ``pass  # <marker>`` at its own indentation (so ``for ...:`` followed by ``!echo``
  still parses); its continuation lines become comments. A cell that parses as plain Python is
  never masked. After a fix every marker must come back exactly where it was, or nothing is
  written.
* Cell magics: a cell that starts with ``%%time``, ``%%timeit``, ``%%capture`` or ``%%prun`` runs
  its body as Python, so only its first line is masked; a cell with any other ``%%`` magic
  (``%%bash``, ``%%writefile``, ``%%html``, ``%%sql``, ...) is not Python and is skipped whole.
* A code cell that does not parse (after masking) is a TU001 finding at its cell and line; the
  other cells are still checked and fixed without it. Where TU001 is reported, every cell is
  parsed, whatever the pre-filter says of the notebook's words: a cell's TU001 depends on that cell
  alone, not on the trigger words of the other cells or on the target release (which decides those
  words). Its message says what
  torchup cannot tell: whether the cell is wrong, or uses IPython syntax torchup does not handle
  (interpreter prompts, ``>>>`` or ``In [1]:``, which IPython strips, are named as such).
* A notebook whose metadata names another language (``language_info.name`` or
  ``kernelspec.language``: R, Julia, ...) is skipped.
* A file that is not UTF-8, not JSON, or JSON but not a notebook (no ``cells`` list; nbformat 3
  ``worksheets`` included) is a TU001 finding at the file, and is never written.

How a notebook is fixed: the fixer works on the joined text; the result is split back into cells,
the masked lines are restored, and only the ``source`` values of the cells that changed are
re-encoded and spliced into the original JSON text at their exact spans. Everything else -- outputs,
metadata, execution counts, key order, indentation, separators, escaping, the trailing newline --
is the original text. A ``source`` kept as a list of lines stays a list (unchanged lines keep their
original JSON text, escapes included; changed lines are encoded as the file encodes: ``\\uXXXX``
escapes when the file is pure ASCII, raw UTF-8 otherwise); a ``source`` kept as one string stays
one string. ``torchup fix --diff`` prints a unified diff of the notebook's JSON text, exactly what
``fix`` would write.

Limitation: the fixer's safety check compiles the joined cells as one module, so a notebook using
top-level ``await`` or a ``from __future__`` import after its first code cell is checked, but its
fixes are reported and not applied.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import json
import re
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

from torchup.check.checker import SYNTAX_ERROR, Analysis, Checker
from torchup.core.diagnostics import Diagnostic
from torchup.core.source import NOTEBOOK_SUFFIX, DecodeError, SourceFile, byte_position, is_notebook  # noqa: F401 (kept here: the notebook API)
from torchup.fix.fixer import FixOutcome, fix_source

# Cell magics whose body IPython runs as Python: the body is checked and fixed.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})

# Escapes that, at the start of a logical line, make it IPython rather than Python.
_LINE_ESCAPES = ("!", "%", "?", "/", ",", ";")
# `x = !ls`, `a, b = %sx ls`, `self.out = !cmd` (IPython's assign_from_system / assign_from_magic).
_ASSIGN_ESCAPE = re.compile(r"[ \t]*[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*=[ \t]*[!%]")
_CELL_MAGIC = re.compile(r"(?:[ \t]*\r?\n)*%%(\w*)")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_INDENT = re.compile(r"[ \t]+")
# Interpreter prompts IPython strips from a pasted session (`>>> x`, `In [3]: x`, `   ...: x`);
# torchup does not, so a cell holding them is named as such when it does not parse.
_PROMPT = re.compile(r"(?:>>>(?: |$)|In \[\d+\]: |[ \t]*\.{3,}: )")
_ESCAPE_FOR_PREFILTER = re.compile(rb"\\[nrtbf]")
_DECODER = json.JSONDecoder()


def prefilter_bytes(raw: bytes) -> bytes:
    """The notebook's bytes for the trigger-word pre-filter: a JSON escape (``\\n``, ``\\t``) before a
    word must not hide it (``"...\\nqr(A)"``); replacing escapes by spaces only adds word boundaries."""
    return _ESCAPE_FOR_PREFILTER.sub(b"  ", raw)


class NotebookError(DecodeError):
    """The file is not a notebook torchup can read; ``line``/``column`` locate it in the file."""


class NotebookSplitError(Exception):
    """The fixed text cannot be mapped back onto the cells: a bug; nothing is written."""


class UnmappedCell(NotebookSplitError):
    """The fixes of an indented cell cannot be given back its indentation exactly: not a bug; the
    cell's fixes are dropped (see ``process``)."""

    def __init__(self, cell: int) -> None:
        super().__init__(f"the fixes of cell {cell} cannot be mapped back onto its indented text")
        self.cell = cell


# -- reading ---------------------------------------------------------------------------------


@dataclass
class CodeCell:
    """One code cell of a notebook, with where its source lies in the JSON text."""

    index: int  # 1-based among the code cells
    text: str  # the cell's source, joined
    value: str | list[str]  # the ``source`` value as stored
    span: tuple[int, int]  # of the ``source`` value in the JSON text
    items: list[tuple[int, int]]  # spans of the list's strings (empty for a string value)
    key_indent: str | None  # whitespace before the ``"source"`` key on its line, if it starts one


@dataclass
class Notebook:
    """A Jupyter notebook as read: its JSON text and its code cells."""

    path: str
    raw: bytes
    text: str  # the JSON text
    encoding: str  # "utf-8", or "utf-8-sig" to keep a byte-order mark
    cells: list[CodeCell]
    malformed: list[tuple[int, str]]  # (code-cell index, why it was skipped)
    language: str | None  # from the metadata, when it says


def load(path: str, raw: bytes) -> Notebook:
    """Parse a notebook and locate each code cell's ``source`` in its text; raise NotebookError."""
    encoding = "utf-8-sig" if raw.startswith(b"\xef\xbb\xbf") else "utf-8"
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line, column = byte_position(raw, exc.start)
        raise NotebookError(
            f"not a valid notebook: notebooks are UTF-8 JSON, and byte {exc.start} is not UTF-8 ({exc.reason})",
            line,
            column,
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"not a valid notebook: the file is not valid JSON ({exc.msg} at line {exc.lineno} column "
            f"{exc.colno}); repair it (an unresolved merge conflict, say) or exclude it",
            exc.lineno,
            exc.colno,
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        if isinstance(data, dict) and "worksheets" in data:
            raise NotebookError(
                "not a notebook torchup can read: this is an nbformat 3 notebook (`worksheets`); convert it "
                "with `jupyter nbconvert --to notebook --nbformat 4`"
            )
        raise NotebookError("not a Jupyter notebook: the file is valid JSON but has no top-level `cells` list")
    cells, malformed = _code_cells(text)
    return Notebook(path, raw, text, encoding, cells, malformed, _language(data))


def _language(data: dict) -> str | None:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return None
    for key, name in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(name), str):
            return section[name]
    return None


def is_python(notebook: Notebook) -> bool:
    return notebook.language is None or "python" in notebook.language.lower()


def _skip(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()  # type: ignore[union-attr]


def _members(text: str, start: int) -> Iterator[tuple[str, int, int, int]]:
    """(key, key start, value start, value end) of the JSON object at ``start`` (already validated)."""
    index = _skip(text, start + 1)
    if text[index] == "}":
        return
    while True:
        key_start = index
        key, index = json.decoder.scanstring(text, index + 1)  # type: ignore[attr-defined]
        index = _skip(text, _skip(text, index) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, index)
        yield key, key_start, index, end
        index = _skip(text, end)
        if text[index] != ",":
            return
        index = _skip(text, index + 1)


def _elements(text: str, start: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each element of the JSON array at ``start`` (already validated)."""
    index = _skip(text, start + 1)
    if text[index] == "]":
        return
    while True:
        _, end = _DECODER.raw_decode(text, index)
        yield index, end
        index = _skip(text, end)
        if text[index] != ",":
            return
        index = _skip(text, index + 1)


def _code_cells(text: str) -> tuple[list[CodeCell], list[tuple[int, str]]]:
    top = _skip(text, 0)
    cells_span = None
    for key, _, value_start, value_end in _members(text, top):
        if key == "cells":  # the last one wins, as in json.loads
            cells_span = (value_start, value_end)
    assert cells_span is not None
    cells: list[CodeCell] = []
    malformed: list[tuple[int, str]] = []
    index = 0
    for cell_start, cell_end in _elements(text, cells_span[0]):
        if text[cell_start] != "{":
            continue
        members = {key: (key_start, start, end) for key, key_start, start, end in _members(text, cell_start)}
        if "cell_type" not in members:
            continue
        key_start, start, end = members["cell_type"]
        if json.loads(text[start:end]) != "code":
            continue
        index += 1
        if "source" not in members:
            malformed.append((index, "the cell has no `source`"))
            continue
        key_start, start, end = members["source"]
        value = json.loads(text[start:end])
        items: list[tuple[int, int]] = []
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            items = list(_elements(text, start))
            joined = "".join(value)
        elif isinstance(value, str):
            joined = value
        else:
            malformed.append((index, "its `source` is neither a string nor a list of strings"))
            continue
        line_start = text.rfind("\n", 0, key_start) + 1
        prefix = text[line_start:key_start]
        key_indent = prefix if prefix.strip(" \t") == "" and line_start > 0 else None
        cells.append(CodeCell(index, joined, value, (start, end), items, key_indent))
        assert cell_start <= start < end <= cell_end
    return cells, malformed


# -- IPython's indentation clean-up -------------------------------------------------------------


@dataclass(frozen=True)
class Dedent:
    """A cell as IPython runs it, its indentation removed, with what each of its lines lost."""

    text: str
    removed: tuple[str, ...]  # per line of the cell: the whitespace taken from its start ("" for none)
    indent: str  # what a line a fix adds to the cell gets back (the cell's and its magic body's)
    first_line: bool = False  # IPython 7 and 8's rule (see ``dedent``)

    @property
    def changed(self) -> bool:
        return any(self.removed)


def dedent(text: str, first_line: bool = False) -> Dedent:
    """The cell as IPython runs it: the indentation its non-blank lines have in common is removed
    from every line that starts with it (IPython 9: ``textwrap.dedent``); with ``first_line``, that
    of its first non-blank line, from every line that starts with it (IPython 7 and 8). Blank lines
    stay (IPython drops the leading ones: line numbers stay the cell's). A Python cell magic's body
    gets the same again: the magic runs it through the same clean-up."""
    lines = _LINES.findall(text)
    removed = [""] * len(lines)
    indent = _remove_indent(lines, removed, 0, first_line)
    cleaned = "".join(lines)
    magic = _CELL_MAGIC.match(cleaned)
    if magic is not None and magic.group(1) in PYTHON_CELL_MAGICS:
        body = _remove_indent(lines, removed, cleaned.count("\n", 0, magic.end()) + 1, first_line)
        if body:
            indent, cleaned = indent + body, "".join(lines)
    return Dedent(cleaned, tuple(removed), indent, first_line)


def _remove_indent(lines: list[str], removed: list[str], start: int, first_line: bool) -> str:
    """Remove the indentation of ``lines[start:]`` (see ``dedent``) from them; return it."""
    indent: str | None = None
    for line in lines[start:]:
        if not line.strip():
            continue
        match = _INDENT.match(line)
        own = match.group() if match is not None else ""
        if indent is None or first_line:
            indent = own
            if first_line:
                break
        else:  # the longest prefix the two have in common (a tab and spaces differ)
            common = 0
            while common < min(len(indent), len(own)) and indent[common] == own[common]:
                common += 1
            indent = indent[:common]
        if not indent:
            return ""
    if not indent:
        return ""
    for number in range(start, len(lines)):
        if lines[number].startswith(indent):
            lines[number] = lines[number][len(indent):]
            removed[number] += indent
    return indent


def reindent(fixed: str, cleaned: Dedent) -> str | None:
    """The cell's text after a fix of its IPython form (``cleaned.text``) gave ``fixed``: unchanged
    lines as they were, an edited line with the indentation it lost, a new one with the cell's.
    None when that text would not give exactly ``fixed`` once IPython removed its indentation."""
    before = _LINES.findall(cleaned.text)
    after = _LINES.findall(fixed)
    lines: list[str] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines.extend(cleaned.removed[i] + before[i] for i in range(i1, i2))
            continue
        paired = tag == "replace" and i2 - i1 == j2 - j1  # line by line: an edit within lines
        for offset, line in enumerate(after[j1:j2]):
            if paired and before[i1 + offset].strip():
                lines.append(cleaned.removed[i1 + offset] + line)
            else:
                lines.append(cleaned.indent + line if line.strip("\r\n") else line)
    restored = "".join(lines)
    return restored if dedent(restored, cleaned.first_line).text == fixed else None


def ipython_prompt(text: str) -> str | None:
    """The interpreter prompt that starts one of the first two non-blank lines, if one does (IPython
    strips them from the whole cell then; torchup does not)."""
    for line in [line for line in _LINES.findall(text) if line.strip()][:2]:
        match = _PROMPT.match(line)
        if match is not None:
            return match.group().strip()
    return None


# -- masking IPython syntax --------------------------------------------------------------------


@dataclass
class _Mask:
    """A line that is not Python (a magic, a shell escape), hidden from the parser."""

    cell: int
    original: str  # the line, without its line ending
    placeholder: str


@dataclass
class Layout:
    """The text torchup analyses for a notebook: its Python code cells, joined, IPython masked."""

    text: str
    nonce: str
    cells: list[int]  # the code cells in ``text``, in order
    masks: dict[int, _Mask] = field(default_factory=dict)
    newline_added: set[int] = field(default_factory=set)  # cells that did not end with a newline
    first_line_masks: dict[int, int] = field(default_factory=dict)  # cell magic: its mask id
    unparsable: list[tuple[int, SyntaxError, str]] = field(default_factory=list)  # (cell, error, text)
    dedents: dict[int, Dedent] = field(default_factory=dict)  # the cells whose indentation IPython removes

    def sentinel(self, cell: int) -> str:
        return f"# {self.nonce}:cell:{cell}\n"


def _scan(line: str, quote: str | None, depth: int) -> tuple[str | None, int, bool, bool]:
    """Tokenizer state after one physical line: (open quote, bracket depth, saw `?` outside strings
    and comments, ends with a backslash continuation)."""
    help_mark = False
    index = 0
    length = len(line)
    in_comment = False
    while index < length:
        char = line[index]
        if quote is not None:
            if char == "\\":
                index += 2
                continue
            if line.startswith(quote, index):
                index += len(quote)
                quote = None
                continue
            index += 1
            continue
        if char == "#":
            in_comment = True
            break
        if char in "'\"":
            quote = line[index:index + 3] if line[index:index + 3] in ("'''", '"""') else char
            index += len(quote)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == "?":
            help_mark = True
        index += 1
    continued = not in_comment and line.endswith("\\")
    if quote in ("'", '"') and not continued:
        quote = None  # an unterminated one-line string: Python will report it
    return quote, depth, help_mark, continued


def mask_cell(text: str, cell: int, nonce: str, masks: dict[int, _Mask]) -> tuple[str, int | None] | None:
    """The cell's text with its IPython lines masked, and the mask id that must stay on line 1
    (a Python cell magic); None when the cell is not Python at all (another cell magic)."""
    magic = _CELL_MAGIC.match(text)
    first_mask: int | None = None
    lines = _LINES.findall(text)
    masked_lines = list(lines)

    def mask(number: int, statement: bool) -> int:
        line = lines[number]
        body = line.rstrip("\r\n")
        indent = body[: len(body) - len(body.lstrip(" \t"))]
        mask_id = len(masks)
        placeholder = f"{indent}{'pass  ' if statement else ''}# {nonce}:{mask_id}"
        masks[mask_id] = _Mask(cell, body, placeholder)
        masked_lines[number] = placeholder + line[len(body):]
        return mask_id

    start = 0
    if magic is not None:
        if magic.group(1) not in PYTHON_CELL_MAGICS:
            return None
        start = text.count("\n", 0, magic.end()) + 1
        first_mask = mask(start - 1, statement=False)
    number = start
    while number < len(lines):
        body = lines[number].rstrip("\r\n")
        if body.lstrip(" \t").startswith(_LINE_ESCAPES) or _ASSIGN_ESCAPE.match(body):
            mask(number, statement=True)
            while body.endswith("\\") and number + 1 < len(lines):  # a continued escape line
                number += 1
                body = lines[number].rstrip("\r\n")
                mask(number, statement=False)
            number += 1
            continue
        first = number
        quote: str | None = None
        depth = 0
        help_mark = False
        while True:
            quote, depth, saw_help, continued = _scan(lines[number].rstrip("\r\n"), quote, depth)
            help_mark = help_mark or saw_help
            if (quote is None and depth == 0 and not continued) or number + 1 >= len(lines):
                break
            number += 1
        if help_mark:  # `torch.qr?`, `obj.method??`, `%psearch torch.*qr*?` spread over lines
            for index in range(first, number + 1):
                mask(index, statement=index == first)
        number += 1
    return "".join(masked_lines), first_mask


def _parse_error(text: str) -> SyntaxError | None:
    """Why the text does not parse as Python, or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the checker's own parse warns, once
            ast.parse(text)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError) as exc:
        error = SyntaxError(f"the parser gave up ({type(exc).__name__})")
        error.lineno, error.offset = 1, 1
        return error
    return None


def _prepare(
    text: str, cell: int, nonce: str, masks: dict[int, _Mask]
) -> tuple[str, int | None, SyntaxError | None] | None:
    """A cell's text (indentation removed) to parse: masked if it is not Python as it is; the mask
    id that must stay on its magic's line; why it does not parse. None: not Python at all."""
    if _CELL_MAGIC.match(text) is None and _parse_error(text) is None:
        return text, None, None  # (plain Python: never masked)
    masked = mask_cell(text, cell, nonce, masks)
    if masked is None:
        return None
    return masked[0], masked[1], _parse_error(masked[0])


def layout(notebook: Notebook) -> Layout:
    """Join the notebook's Python code cells, masked, each after its sentinel line."""
    nonce = "torchup-nb"
    everything = notebook.text + "".join(cell.text for cell in notebook.cells)
    while nonce in everything:
        nonce += "-x"
    result = Layout("", nonce, [])
    parts: list[str] = []
    for cell in notebook.cells:
        cleaned = dedent(cell.text)
        before = dict(result.masks) if cleaned.changed else None  # (to mask it again, the other way)
        prepared = _prepare(cleaned.text, cell.index, nonce, result.masks)
        if prepared is not None and prepared[2] is not None and before is not None:
            older = dedent(cell.text, first_line=True)  # as IPython 7 and 8 run it, if that parses
            retried = _prepare(older.text, cell.index, nonce, before) if older.text != cleaned.text else None
            if retried is not None and retried[2] is None:
                cleaned, prepared, result.masks = older, retried, before
        if prepared is None:
            continue  # a cell magic whose body is not Python
        text, first_mask, error = prepared
        if cleaned.changed:
            result.dedents[cell.index] = cleaned
        if error is not None:
            result.unparsable.append((cell.index, error, text))
            continue
        if first_mask is not None:
            result.first_line_masks[cell.index] = first_mask
        result.cells.append(cell.index)
        parts.append(result.sentinel(cell.index))
        parts.append(text)
        if text and not text.endswith("\n"):
            parts.append("\n")
            result.newline_added.add(cell.index)
    result.text = "".join(parts)
    return result


def split(text: str, layout: Layout) -> dict[int, str]:
    """The cells' texts from a (fixed) joined text, masked lines restored and indentation given back;
    NotebookSplitError if the text no longer maps back (a fix touched a sentinel or a masked line),
    UnmappedCell if a cell's indentation cannot be given back exactly (``reindent``)."""
    pattern = re.compile(rf"^# {re.escape(layout.nonce)}:cell:(\d+)\n", re.MULTILINE)
    matches = list(pattern.finditer(text))
    if [int(m.group(1)) for m in matches] != layout.cells or (matches and matches[0].start() != 0):
        raise NotebookSplitError("a fix moved or removed the line between two cells")
    if not matches and text:
        raise NotebookSplitError("a fix added text outside every cell")
    placeholder = re.compile(rf"[ \t]*(?:pass  )?# {re.escape(layout.nonce)}:(\d+)")
    cells: dict[int, str] = {}
    for number, match in enumerate(matches):
        cell = int(match.group(1))
        end = matches[number + 1].start() if number + 1 < len(matches) else len(text)
        lines = _LINES.findall(text[match.end():end])
        restored: list[int] = []
        for position, line in enumerate(lines):
            body = line.rstrip("\r\n")
            found = placeholder.fullmatch(body)
            if found is None:
                continue
            mask = layout.masks.get(int(found.group(1)))
            if mask is None or mask.cell != cell or mask.placeholder != body:
                raise NotebookSplitError(f"a fix edited a masked IPython line of cell {cell}")
            restored.append(int(found.group(1)))
            lines[position] = mask.original + line[len(body):]
        expected = sorted(i for i, mask in layout.masks.items() if mask.cell == cell)
        if sorted(restored) != expected:
            raise NotebookSplitError(f"a fix removed a masked IPython line of cell {cell}")
        first = layout.first_line_masks.get(cell)
        head = next((line for line in lines if line.strip()), "")  # (blank lines may stand above the magic)
        if first is not None and head.rstrip("\r\n") != layout.masks[first].original:
            raise NotebookSplitError(f"a fix put code above the cell magic of cell {cell}")
        joined = "".join(lines)
        if cell in layout.newline_added and joined.endswith("\n"):
            joined = joined[:-1]
        cleaned = layout.dedents.get(cell)
        if cleaned is not None:
            restored = reindent(joined, cleaned)
            if restored is None:
                raise UnmappedCell(cell)
            joined = restored
        cells[cell] = joined
    return cells


# -- locations ---------------------------------------------------------------------------------


@dataclass
class NotebookSource(SourceFile):
    """A notebook as held for reporting. ``raw`` and ``text`` are the file (its JSON), as for any
    source; diagnostics and fix edits carry offsets into ``analysed`` (the joined cells), and
    ``position`` turns those into cell coordinates (the line within the cell, the column in the
    cell's own text, indentation included), as diagnostics give them. ``cell_source`` is one code
    cell's own text."""

    analysed: str = ""
    cell_lines: list[tuple[int, int]] = field(default_factory=list)  # (first line in ``analysed``, cell)
    cell_texts: dict[int, str] = field(default_factory=dict)
    # Per indented cell, per line: the characters IPython removes from its start (not in ``analysed``).
    indents: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def build(
        cls, notebook: Notebook, layout: Layout, json_text: str, analysed: str, cell_texts: dict[int, str]
    ) -> NotebookSource:
        indents = {
            cell: tuple(len(removed) for removed in dedent(cell_texts[cell], cleaned.first_line).removed)
            for cell, cleaned in layout.dedents.items()  # (a fixed cell: its new text)
            if cell in layout.cells
        }
        return cls(
            notebook.path,
            json_text.encode(notebook.encoding, "surrogatepass"),
            json_text,
            notebook.encoding,
            analysed=analysed,
            cell_lines=_cell_lines(analysed, layout.nonce),
            cell_texts=cell_texts,
            indents=indents,
        )

    def indent(self, cell: int, line: int) -> int:
        """How many characters IPython removes from the start of this line of the cell."""
        widths = self.indents.get(cell)
        return widths[line - 1] if widths is not None and 0 < line <= len(widths) else 0

    @cached_property
    def _analysed_starts(self) -> list[int]:
        return _line_starts(self.analysed)

    def locate(self, line: int) -> tuple[int, int] | None:
        """(cell, line in the cell) of a line of the analysed text."""
        if not self.cell_lines:
            return None
        index = max(bisect.bisect_right([first for first, _ in self.cell_lines], line) - 1, 0)
        first, cell = self.cell_lines[index]
        return cell, max(line - first + 1, 1)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line in the cell, column) of an offset into ``analysed``."""
        starts = self._analysed_starts
        line = bisect.bisect_right(starts, offset)
        column = offset - starts[line - 1] + 1
        located = self.locate(line)
        if located is None:
            return line, column
        return located[1], column + self.indent(*located)

    def cell_source(self, cell: int) -> SourceFile | None:
        text = self.cell_texts.get(cell)
        if text is None:
            return None
        return SourceFile(f"{self.path}:cell {cell}", text.encode("utf-8", "surrogatepass"), text, "utf-8")


def _line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in _NEWLINE.finditer(text))]


def _cell_lines(analysed: str, nonce: str) -> list[tuple[int, int]]:
    """(first line in ``analysed``, cell) of each cell of a joined text: the line after its sentinel."""
    pattern = re.compile(rf"^# {re.escape(nonce)}:cell:(\d+)\n", re.MULTILINE)
    starts = _line_starts(analysed)  # as SourceFile counts lines: \r\n, \r or \n
    return [
        (bisect.bisect_right(starts, match.start()) + 1, int(match.group(1))) for match in pattern.finditer(analysed)
    ]


def _cell_of(cell_lines: list[tuple[int, int]], line: int) -> int | None:
    index = bisect.bisect_right([first for first, _ in cell_lines], line) - 1
    return cell_lines[index][1] if index >= 0 else None


def _relocate(diagnostics: list[Diagnostic], source: NotebookSource) -> None:
    for diagnostic in diagnostics:
        if diagnostic.cell is not None:
            continue
        located = source.locate(diagnostic.line)
        if located is None:
            continue
        cell, line = located
        diagnostic.end_line = max(diagnostic.end_line - diagnostic.line + line, line)
        diagnostic.line, diagnostic.cell = line, cell
        diagnostic.column += source.indent(cell, line)
        diagnostic.end_column += source.indent(cell, diagnostic.end_line)


# -- checking and fixing -----------------------------------------------------------------------


@dataclass
class NotebookOutcome:
    """What checking or fixing one notebook gave."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    source: SourceFile | None = None  # for reporting: the file (a NotebookSource once it was read)
    before: str = ""  # the JSON text as read
    after: str | None = None  # the fixed JSON text, when a fix changed it
    data: bytes | None = None  # its bytes
    fixed: list[Diagnostic] = field(default_factory=list)


def process(checker: Checker, path: str, raw: bytes, *, fix: bool, unsafe: bool) -> NotebookOutcome:
    """Check (and with ``fix``, fix) one notebook; writes nothing."""
    outcome = NotebookOutcome()
    try:
        notebook = load(path, raw)
    except NotebookError as exc:
        outcome.diagnostics.append(
            checker.engine_diagnostic(SYNTAX_ERROR, path, exc.message, exc.line, exc.column)
        )
        text = raw.decode("utf-8", "replace")
        outcome.source = SourceFile(path, raw, text, "utf-8")  # shows the offending line of the file
        return outcome
    outcome.before = notebook.text
    cell_texts = {cell.index: cell.text for cell in notebook.cells}
    # No pre-filter here: every cell is parsed, so that a cell's TU001 depends on that cell alone
    # (not on other cells' words, nor on the target release, which decides the words); ``analyze``
    # pre-filters the rules on the joined text, which holds only the cells that are Python.
    if not is_python(notebook):
        return outcome
    for index, reason in notebook.malformed:
        diagnostic = checker.engine_diagnostic(SYNTAX_ERROR, path, f"cell {index} was skipped: {reason}")
        diagnostic.cell = index
        outcome.diagnostics.append(diagnostic)
    joined = layout(notebook)
    for index, error, text in joined.unparsable:
        outcome.diagnostics.append(_cell_syntax_error(checker, path, index, error, text, joined.dedents.get(index)))
    analysed = SourceFile(path, joined.text.encode("utf-8", "surrogatepass"), joined.text, "utf-8")
    if not fix:
        diagnostics = checker.analyze(analysed).diagnostics
        text = joined.text
    else:
        result, cells = _fix(checker, analysed, joined, unsafe)
        diagnostics, text = result.remaining, result.text
        if cells:
            changed = {cell: new for cell, new in cells.items() if new != cell_texts[cell]}
            if changed:
                cell_texts.update(changed)
                outcome.after = _splice(notebook, changed)
                outcome.data = outcome.after.encode(notebook.encoding, "surrogatepass")
                outcome.fixed = result.fixed
    json_text = outcome.after if outcome.after is not None else notebook.text
    source = NotebookSource.build(notebook, joined, json_text, text, cell_texts)
    _relocate(diagnostics, source)
    outcome.diagnostics.extend(diagnostics)
    outcome.source = source
    return outcome


def _cell_syntax_error(
    checker: Checker, path: str, cell: int, error: SyntaxError, text: str, cleaned: Dedent | None
) -> Diagnostic:
    """TU001 for a cell that does not parse as IPython would run it (``text``: as parsed). Unlike a
    Python file's, its message cannot say the code is wrong: IPython accepts more than torchup masks."""
    line, column = error.lineno or 1, max(error.offset or 1, 1)
    if cleaned is not None and 0 < line <= len(cleaned.removed):
        column += len(cleaned.removed[line - 1])  # the parsed line lost its indentation
    prompt = ipython_prompt(text)
    if prompt is not None:
        message = (
            f"cell not checked: it holds interpreter prompts (`{prompt}`), which IPython strips before "
            f"running a cell and torchup does not, so it does not parse ({error.msg})"
        )
    else:
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        message = (
            f"invalid syntax: {error.msg}; torchup reads a cell as IPython runs it (indentation removed; "
            f"magics, `!` shell escapes and `?` help set aside) and parses it with the Python running it "
            f"({version}): fix the cell, or run torchup on the Python version it is written for; if the cell "
            "runs in Jupyter as it is, it uses IPython syntax torchup does not handle (the cell was not checked)"
        )
    diagnostic = checker.engine_diagnostic(SYNTAX_ERROR, path, message, line, column)
    diagnostic.cell = cell
    return diagnostic


def _fix(checker: Checker, analysed: SourceFile, joined: Layout, unsafe: bool) -> tuple[FixOutcome, dict[int, str]]:
    """Fix the joined cells; the fixed cells' texts (empty when nothing changed). A cell whose fixes
    cannot be given back its indentation exactly (``UnmappedCell``) is fixed again without its
    own fixes; if it still cannot (another cell's fix adds an import there), nothing is fixed."""
    kept: set[int] = set()
    note = UNMAPPED_NOTE
    while True:
        fixer = checker if not kept else cast(Checker, _FixesKept(checker, joined.nonce, kept, note))
        result = fix_source(fixer, analysed, unsafe=unsafe)
        if result.text == joined.text:
            return result, {}
        try:
            return result, split(result.text, joined)
        except UnmappedCell as exc:
            if exc.cell in kept:
                kept, note = set(joined.cells), UNMAPPED_ELSEWHERE_NOTE
            kept.add(exc.cell)


UNMAPPED_NOTE = (
    "fix not applied: the fixed code cannot be mapped back exactly onto this cell's indented text "
    "(IPython removes a cell's indentation before running it); the cell was left as it was"
)
UNMAPPED_ELSEWHERE_NOTE = (
    "fix not applied: the fixes of this notebook change an indented cell in a way that cannot be mapped "
    "back exactly onto its text (IPython removes a cell's indentation before running it); the notebook was "
    "left as it was"
)


class _FixesKept:
    """The checker as ``fix_source`` sees it, less the fixes of the findings in some cells."""

    def __init__(self, checker: Checker, nonce: str, cells: set[int], note: str) -> None:
        self._checker, self._nonce, self._cells, self._note = checker, nonce, cells, note

    def __getattr__(self, name: str) -> Any:
        return getattr(self._checker, name)

    def analyze(self, source: SourceFile, *args: Any, **kwargs: Any) -> Analysis:
        analysis = self._checker.analyze(source, *args, **kwargs)
        cell_lines = _cell_lines(source.text, self._nonce)
        for diagnostic in analysis.diagnostics:
            if diagnostic.fix is not None and _cell_of(cell_lines, diagnostic.line) in self._cells:
                diagnostic.fix = None
                diagnostic.notes.append(self._note)
        return analysis


# -- writing -----------------------------------------------------------------------------------


def _splice(notebook: Notebook, changed: dict[int, str]) -> str:
    """The JSON text with the ``source`` values of the changed cells re-encoded in place."""
    text = notebook.text
    ensure_ascii = notebook.text.isascii()  # no raw non-ASCII: the writer escaped it
    pieces: list[str] = []
    position = 0
    for cell in notebook.cells:
        if cell.index not in changed:
            continue
        start, end = cell.span
        pieces.append(text[position:start])
        pieces.append(_encode(notebook, cell, changed[cell.index], ensure_ascii))
        position = end
    pieces.append(text[position:])
    result = "".join(pieces)
    # The splice must give back the same notebook with exactly these sources.
    try:
        json.loads(result)
    except ValueError as exc:
        raise NotebookSplitError(f"the re-encoded notebook is not valid JSON ({exc})") from None
    cells = {cell.index: cell for cell in notebook.cells}
    for updated in _code_cells(result)[0]:
        expected = changed.get(updated.index, cells[updated.index].text)
        if updated.text != expected or type(updated.value) is not type(cells[updated.index].value):
            raise NotebookSplitError(f"re-encoding the source of cell {updated.index} failed")
    return result


def _encode(notebook: Notebook, cell: CodeCell, new: str, ensure_ascii: bool) -> str:
    if isinstance(cell.value, str):
        return json.dumps(new, ensure_ascii=ensure_ascii)
    text = notebook.text
    old_raw = [text[start:end] for start, end in cell.items]
    new_lines = _LINES.findall(new)
    matcher = difflib.SequenceMatcher(None, cell.value, new_lines, autojunk=False)
    items: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            items.extend(old_raw[i1:i2])  # unchanged lines keep their exact JSON text
        else:
            items.extend(json.dumps(line, ensure_ascii=ensure_ascii) for line in new_lines[j1:j2])
    if not items:
        return "[]"
    opening, separator, closing = _list_layout(notebook, cell)
    return "[" + opening + separator.join(items) + closing + "]"


def _list_layout(notebook: Notebook, cell: CodeCell) -> tuple[str, str, str]:
    """The whitespace after ``[``, between items and before ``]`` of this cell's source list."""
    text = notebook.text
    start, end = cell.span
    if cell.items:
        opening = text[start + 1:cell.items[0][0]]
        closing = text[cell.items[-1][1]:end - 1]
        if len(cell.items) > 1:
            separator = text[cell.items[0][1]:cell.items[1][0]]
        elif "\n" in opening:
            separator = "," + opening
        else:
            separator = ", " if '", "' in text else ","
        return opening, separator, closing
    top = _skip(text, 0)
    indented = re.match(r"\{(\r?\n)([ \t]*)", text[top:])
    if indented is None or cell.key_indent is None:
        return "", ", " if '", "' in text else ",", ""
    newline, unit = indented.groups()
    return newline + cell.key_indent + unit, "," + newline + cell.key_indent + unit, newline + cell.key_indent
