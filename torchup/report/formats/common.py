"""What the machine-readable formats share: the ``sources`` look-up, paths relative to a root, source lines.

A finding in a notebook (``Diagnostic.cell`` set) has its line and column relative to that code cell;
``cell_line_text`` reads the line from the notebook's JSON when the source handed over is the ``.ipynb``
file itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from torchup.core.diagnostics import Diagnostic, Severity
from torchup.core.source import SourceFile

Sources = Callable[[str], SourceFile | None]
"""Maps a finding's ``path`` to the file as read (``RunResult.sources.get``); None when not held."""

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class SupportWindow:
    """The releases a project's code must run on: its floor (the oldest) and the target (the one it
    moves to), each with where it was decided. Every report states them."""

    floor: str
    floor_source: str  # "requirements.txt:16 `torch>=1.7`", "--floor", "default: ..."
    target: str
    target_source: str  # "--target-version", "target-version in pyproject.toml", "default: ..."

    def text(self) -> str:
        return f"floor torch {self.floor} ({self.floor_source}); target torch {self.target} ({self.target_source})"

    def as_json(self) -> dict[str, dict[str, str]]:
        return {"floor": {"release": self.floor, "source": self.floor_source},
                "target": {"release": self.target, "source": self.target_source}}

    def properties(self) -> dict[str, str]:
        """As SARIF / JUnit property names (camelCase)."""
        return {"floor": self.floor, "floorSource": self.floor_source,
                "target": self.target, "targetSource": self.target_source}


def no_window(_path: str) -> SupportWindow | None:
    return None


@dataclass(frozen=True)
class RunCounts:
    """How many files a run checked, and how (``RunResult``'s counts): a report that states them
    (SARIF's run properties) claims no more than was done."""

    checked: int  # read and checked, or found unchanged in the cache (TU001 findings included)
    not_parsed: int = 0  # of those, settled by the pre-filter alone (no trigger word), in this run or the cached one
    unreadable: int = 0  # not read at all (TU000)
    # The support window of the run's first path, and of each finding's file (a run over several
    # projects has several floors).
    window: SupportWindow | None = None
    window_for: Callable[[str], SupportWindow | None] = field(default=no_window, compare=False)

    def properties(self) -> dict[str, int | str]:
        """The counts, and the support window, as SARIF property names (camelCase)."""
        counts: dict[str, int | str] = {
            "filesChecked": self.checked, "filesNotParsed": self.not_parsed, "filesUnreadable": self.unreadable
        }
        return {**counts, **(self.window.properties() if self.window is not None else {})}


def no_sources(_path: str) -> SourceFile | None:
    """A ``Sources`` that holds nothing: formats then fall back to what the finding itself carries."""
    return None


def root_path(root: PathLike | None) -> Path:
    """The absolute root paths are made relative to (the working directory when None)."""
    return Path(os.path.abspath(os.fspath(root) if root is not None else os.getcwd()))


def relative_path(path: str, root: Path) -> str | None:
    """``path`` relative to ``root`` as a POSIX path, or None when it lies outside ``root``.

    Relative paths are taken from the working directory, as the CLI reports them. Symbolic links are
    resolved only when the plain absolute paths do not nest (so a root under ``/tmp`` -> ``/private/tmp``
    still matches).
    """
    absolute = Path(os.path.abspath(path))
    for candidate, base in ((absolute, root), (Path(os.path.realpath(absolute)), Path(os.path.realpath(root)))):
        try:
            relative = candidate.relative_to(base)
        except ValueError:
            continue
        return relative.as_posix() if relative.parts else "."
    return None


def display_path(path: str, root: Path) -> str:
    """The path relative to ``root`` (POSIX) when under it, else as the finding gives it."""
    relative = relative_path(path, root)
    return relative if relative is not None else path


def location_text(diagnostic: Diagnostic, path: str | None = None) -> str:
    """``path:line:col``, or ``path:cell N:line:col`` for a notebook cell (the text formats' spelling)."""
    path = diagnostic.path if path is None else path
    if diagnostic.cell is not None:
        return f"{path}:cell {diagnostic.cell}:{diagnostic.line}:{diagnostic.column}"
    return f"{path}:{diagnostic.line}:{diagnostic.column}"


def severity_name(severity: Severity, *, info: str) -> str:
    """The level word of a format: ``error`` / ``warning``, and ``info`` spelled as the format wants."""
    if severity is Severity.ERROR:
        return "error"
    if severity is Severity.WARNING:
        return "warning"
    return info


def line_text(diagnostic: Diagnostic, source: SourceFile | None) -> str | None:
    """The text of the finding's first line (without line ending), or None when it cannot be read."""
    if source is None:
        return None
    if diagnostic.cell is not None:
        return cell_line_text(source.text, diagnostic.cell, diagnostic.line)
    if 1 <= diagnostic.line <= len(source.line_starts):
        return source.line_text(diagnostic.line)
    return None


def cell_line_text(notebook_text: str, cell: int, line: int) -> str | None:
    """Line ``line`` (1-based) of code cell ``cell`` (1-based, code cells only) of a notebook's JSON."""
    lines = _code_cell_lines(notebook_text, cell)
    if lines is None or not 1 <= line <= len(lines):
        return None
    return lines[line - 1]


@lru_cache(maxsize=64)
def _code_cell_lines(notebook_text: str, cell: int) -> tuple[str, ...] | None:
    try:
        notebook = json.loads(notebook_text)
    except ValueError:
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return None
    code_cells = [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    if not 1 <= cell <= len(code_cells):
        return None
    source = code_cells[cell - 1].get("source", "")
    text = "".join(source) if isinstance(source, list) else source
    if not isinstance(text, str):
        return None
    return tuple(text.splitlines())
