"""Jupyter notebooks (``.ipynb``): check and fix the code cells, keep every other byte of the file.

How a notebook is read:

* Only code cells are analysed; markdown and raw cells are skipped. Cells are numbered from 1 among
  the *code* cells (``Diagnostic.cell``); a finding's line and column are relative to its cell, so
  text output reads ``nb.ipynb:cell 3:2:5``.
* The code cells are analysed together, as one text, in notebook order: an ``import torch`` in cell 1
  resolves ``torch.qr`` in cell 3, as it does when the notebook runs top to bottom. Each cell is
  preceded by a sentinel comment line that tells the cells apart again after fixing.
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
  other cells are still checked and fixed without it.
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
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from torchup.checker import SYNTAX_ERROR, Checker
from torchup.diagnostics import Diagnostic
from torchup.fixer import fix_source
from torchup.source import NOTEBOOK_SUFFIX, DecodeError, SourceFile, is_notebook  # noqa: F401 (kept here: the notebook API)

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
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
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
    first_line_masks: dict[int, int] = field(default_factory=dict)  # cell magic: mask id on line 1
    unparsable: list[tuple[int, SyntaxError, str]] = field(default_factory=list)  # (cell, error, text)

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


def layout(notebook: Notebook) -> Layout:
    """Join the notebook's Python code cells, masked, each after its sentinel line."""
    nonce = "torchup-nb"
    everything = notebook.text + "".join(cell.text for cell in notebook.cells)
    while nonce in everything:
        nonce += "-x"
    result = Layout("", nonce, [])
    parts: list[str] = []
    for cell in notebook.cells:
        text, first_mask = cell.text, None
        if _CELL_MAGIC.match(cell.text) is not None or _parse_error(cell.text) is not None:
            masked = mask_cell(cell.text, cell.index, nonce, result.masks)
            if masked is None:
                continue  # a cell magic whose body is not Python
            text, first_mask = masked
            error = _parse_error(text)
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
    """The cells' texts from a (fixed) joined text, masked lines restored; NotebookSplitError if the
    text no longer maps back (a fix touched a sentinel or a masked line)."""
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
        if first is not None and (not lines or lines[0].rstrip("\r\n") != layout.masks[first].original):
            raise NotebookSplitError(f"a fix put code above the cell magic of cell {cell}")
        joined = "".join(lines)
        if cell in layout.newline_added and joined.endswith("\n"):
            joined = joined[:-1]
        cells[cell] = joined
    return cells


# -- locations ---------------------------------------------------------------------------------


@dataclass
class NotebookSource(SourceFile):
    """A notebook as held for reporting. ``raw`` and ``text`` are the file (its JSON), as for any
    source; diagnostics and fix edits carry offsets into ``analysed`` (the joined cells), and
    ``position`` turns those into cell coordinates (the line within the cell), as diagnostics give
    them. ``cell_source`` is one code cell's own text."""

    analysed: str = ""
    cell_lines: list[tuple[int, int]] = field(default_factory=list)  # (first line in ``analysed``, cell)
    cell_texts: dict[int, str] = field(default_factory=dict)

    @classmethod
    def build(
        cls, notebook: Notebook, layout: Layout, json_text: str, analysed: str, cell_texts: dict[int, str]
    ) -> NotebookSource:
        pattern = re.compile(rf"^# {re.escape(layout.nonce)}:cell:(\d+)\n", re.MULTILINE)
        starts = _line_starts(analysed)  # as SourceFile counts lines: \r\n, \r or \n
        cell_lines = [
            (bisect.bisect_right(starts, match.start()) + 1, int(match.group(1)))  # the line after the sentinel
            for match in pattern.finditer(analysed)
        ]
        return cls(
            notebook.path,
            json_text.encode(notebook.encoding, "surrogatepass"),
            json_text,
            notebook.encoding,
            analysed=analysed,
            cell_lines=cell_lines,
            cell_texts=cell_texts,
        )

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
        return (located[1], column) if located is not None else (line, column)

    def cell_source(self, cell: int) -> SourceFile | None:
        text = self.cell_texts.get(cell)
        if text is None:
            return None
        return SourceFile(f"{self.path}:cell {cell}", text.encode("utf-8", "surrogatepass"), text, "utf-8")


def _line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in _NEWLINE.finditer(text))]


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
    if not is_python(notebook) or not checker.could_match("\n".join(cell_texts.values()), path):
        return outcome
    for index, reason in notebook.malformed:
        diagnostic = checker.engine_diagnostic(SYNTAX_ERROR, path, f"cell {index} was skipped: {reason}")
        diagnostic.cell = index
        outcome.diagnostics.append(diagnostic)
    joined = layout(notebook)
    for index, error, text in joined.unparsable:
        diagnostic = checker.syntax_error(SourceFile(path, b"", text, "utf-8"), error)
        diagnostic.cell = index
        outcome.diagnostics.append(diagnostic)
    analysed = SourceFile(path, joined.text.encode("utf-8", "surrogatepass"), joined.text, "utf-8")
    if not fix:
        diagnostics = checker.analyze(analysed).diagnostics
        text = joined.text
    else:
        result = fix_source(checker, analysed, unsafe=unsafe)
        diagnostics, text = result.remaining, result.text
        if text != joined.text:
            changed = {cell: new for cell, new in split(text, joined).items() if new != cell_texts[cell]}
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
