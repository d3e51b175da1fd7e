"""Render findings: ruff-like ``full`` (default), ``concise`` and ``json``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from torchup.core.diagnostics import Applicability, Confidence, Diagnostic
from torchup.core.source import SourceFile

FORMATS = ("full", "concise", "json")


@dataclass
class Style:
    """Terminal colours, or none."""

    enabled: bool

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def red(self, text: str) -> str:
        return self._wrap("1;31", text)

    def cyan(self, text: str) -> str:
        return self._wrap("36", text)

    def blue(self, text: str) -> str:
        return self._wrap("1;34", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)


def use_colour(stream: IO[str]) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def fix_label(diagnostic: Diagnostic) -> str:
    if diagnostic.fix is None:
        return "no automatic fix"
    if diagnostic.fix.applicability is Applicability.SAFE:
        return "safe fix"
    return "unsafe fix: apply with `torchup fix --unsafe-fixes`"


def location(diagnostic: Diagnostic) -> str:
    """``path:line:column``; in a notebook ``path:cell N:line:column`` (the line within code cell N)."""
    if diagnostic.cell is not None:
        return f"{diagnostic.path}:cell {diagnostic.cell}:{diagnostic.line}:{diagnostic.column}"
    return f"{diagnostic.path}:{diagnostic.line}:{diagnostic.column}"


def render_concise(diagnostic: Diagnostic, style: Style) -> str:
    """``path:line:col: CODE [*] message [possible] [since torch 2.14: raises]`` (``[*]``: a fix;
    ``[likely]``/``[possible]``: how sure the finding is that the receiver is a tensor)."""
    marker = " [*]" if diagnostic.fix is not None else ""
    change = diagnostic.change_text()
    after = f" {style.dim(f'[{change}]')}" if change else ""
    if diagnostic.confidence is not Confidence.CERTAIN:
        after = f" {style.dim(f'[{diagnostic.confidence.value}]')}{after}"
    return f"{style.bold(location(diagnostic))}: {style.red(diagnostic.code)}{marker} {diagnostic.message}{after}"


def render_full(diagnostic: Diagnostic, source: SourceFile | None, style: Style) -> str:
    lines = [render_concise(diagnostic, style)]
    if diagnostic.cell is not None:  # a notebook: show the line of that cell (torchup.run.notebook.NotebookSource)
        cell_source = getattr(source, "cell_source", None)
        source = cell_source(diagnostic.cell) if cell_source is not None else None
    if source is not None and diagnostic.line <= len(source.line_starts):
        text = source.line_text(diagnostic.line).expandtabs(4) if "\t" in source.line_text(diagnostic.line) \
            else source.line_text(diagnostic.line)
        number = str(diagnostic.line)
        gutter = " " * len(number)
        width = (
            diagnostic.end_column - diagnostic.column
            if diagnostic.end_line == diagnostic.line
            else len(text) - diagnostic.column + 1
        )
        lines.append(f"{style.blue(number + ' |')} {text}")
        lines.append(f"{style.blue(gutter + ' |')} {' ' * (diagnostic.column - 1)}{style.red('^' * max(width, 1))}")
    label = fix_label(diagnostic)
    if diagnostic.help and diagnostic.fix is not None:
        lines.append(f"  {style.cyan('help')}: {diagnostic.help}")
        lines.append(f"  {style.cyan('fix')}: {diagnostic.fix.message} [{label}]")
    elif diagnostic.fix is not None:
        lines.append(f"  {style.cyan('help')}: {diagnostic.fix.message} [{label}]")
    elif diagnostic.help:
        lines.append(f"  {style.cyan('help')}: {diagnostic.help} [{label}]")
    for note in diagnostic.notes:
        lines.append(f"  {style.cyan('note')}: {note}")
    return "\n".join(lines)


def to_json(diagnostic: Diagnostic, source: SourceFile | None) -> dict[str, Any]:
    fix: dict[str, Any] | None = None
    if diagnostic.fix is not None:
        edits = []
        for edit in sorted((*diagnostic.fix.edits, *diagnostic.fix.import_edits)):
            start = source.position(edit.start) if source else (0, 0)
            end = source.position(edit.end) if source else (0, 0)
            edits.append(
                {
                    "content": edit.content,
                    "location": {"line": start[0], "column": start[1]},
                    "end_location": {"line": end[0], "column": end[1]},
                }
            )
        fix = {
            "applicability": diagnostic.fix.applicability.value,
            "message": diagnostic.fix.message,
            "edits": edits,
            "imports": [
                f"import {r.module}" if r.name is None else f"from {r.module} import {r.name}"
                for r in diagnostic.fix.imports
            ],
        }
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "message": diagnostic.message,
        "path": diagnostic.path,
        **({"cell": diagnostic.cell} if diagnostic.cell is not None else {}),  # notebooks: line/column in the cell
        "line": diagnostic.line,
        "column": diagnostic.column,
        "end_line": diagnostic.end_line,
        "end_column": diagnostic.end_column,
        "severity": diagnostic.severity.value,
        "since": diagnostic.since,  # the release that made the change (null: the engine's own findings)
        "change": diagnostic.change,  # what its wheel does to the old code: raises, warns, ...
        "confidence": diagnostic.confidence.value,  # certain, likely, possible (torchup.analysis.receivers)
        "help": diagnostic.help,
        "notes": diagnostic.notes,
        "fix": fix,
    }


def write_report(
    diagnostics: list[Diagnostic],
    sources: Callable[[str], SourceFile | None],
    output_format: str,
    stream: IO[str] | None = None,
) -> None:
    stream = stream or sys.stdout  # looked up per call: callers may redirect it
    if output_format == "json":
        json.dump([to_json(d, sources(d.path)) for d in diagnostics], stream, indent=2)
        stream.write("\n")
        return
    style = Style(use_colour(stream))
    for diagnostic in diagnostics:
        if output_format == "concise":
            stream.write(render_concise(diagnostic, style) + "\n")
        else:
            stream.write(render_full(diagnostic, sources(diagnostic.path), style) + "\n\n")
