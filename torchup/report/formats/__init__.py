"""Output formats for ``--output-format``, and the ``--statistics`` / ``--show-fixes`` summaries.

``render(name, diagnostics, sources, root=...)`` returns the whole report as text, for stdout or
``--output-file``; ``FORMATS`` lists the formats by name:

=============  ========================================================================================
``full``       ruff-like text with the source line and fix (as :func:`torchup.report.output.write_report`)
``concise``    one line per finding (as :func:`torchup.report.output.write_report`)
``json``       an array of :func:`torchup.report.output.to_json` objects, plus ``cell`` for notebook findings
``json-lines`` the same objects, one per line
``sarif``      SARIF 2.1.0 (:mod:`torchup.report.formats.sarif`)
``github``     GitHub Actions workflow commands (:mod:`torchup.report.formats.github`)
``junit``      JUnit XML (:mod:`torchup.report.formats.junit`)
=============  ========================================================================================

``sources`` maps a finding's path to its :class:`~torchup.core.source.SourceFile` (``RunResult.sources.get``);
formats use it for source lines, fix positions and SARIF fingerprints, and fall back gracefully without it.
``root`` (default: the working directory) is the directory ``sarif``, ``github`` and ``junit`` write paths
relative to: pass the repository root in CI. ``counts`` (a :class:`~torchup.report.formats.common.RunCounts`), when
given, goes into SARIF's ``runs[0].properties`` with the run's support window (floor and target), which JUnit
states as ``properties`` and the JSON formats per finding; the JSON formats stay arrays of findings. The text is
meant to be written as UTF-8.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from torchup.core.diagnostics import Diagnostic
from torchup.report.formats.common import PathLike, RunCounts, Sources, SupportWindow, no_sources, no_window, root_path
from torchup.report.formats.json_lines import render_json, render_json_lines
from torchup.report.formats.statistics import Statistic, render_fixes, render_statistics, statistics
from torchup.report.output import write_report

__all__ = [
    "FORMATS",
    "Format",
    "RunCounts",
    "Sources",
    "Statistic",
    "SupportWindow",
    "UnknownFormatError",
    "render",
    "render_fixes",
    "render_statistics",
    "statistics",
]

Renderer = Callable[[Sequence[Diagnostic], Sources, Path, RunCounts | None], str]


@dataclass(frozen=True)
class Format:
    """One ``--output-format``: its name, a one-line description, and how it renders."""

    name: str
    description: str
    renderer: Renderer
    # True when the output is parsed by a program, so nothing else (a summary) may share its stream.
    machine_readable: bool


class UnknownFormatError(ValueError):
    """``render`` was given a name that is not in ``FORMATS``."""


def _text(output_format: str) -> Renderer:
    def renderer(diagnostics: Sequence[Diagnostic], sources: Sources, _root: Path, _counts: RunCounts | None) -> str:
        stream = io.StringIO()
        write_report(list(diagnostics), sources, output_format, stream)
        return stream.getvalue()

    return renderer


def _json(diagnostics: Sequence[Diagnostic], sources: Sources, _root: Path, counts: RunCounts | None) -> str:
    return render_json(diagnostics, sources, counts.window_for if counts is not None else no_window)


def _json_lines(diagnostics: Sequence[Diagnostic], sources: Sources, _root: Path, counts: RunCounts | None) -> str:
    return render_json_lines(diagnostics, sources, counts.window_for if counts is not None else no_window)


def _sarif(diagnostics: Sequence[Diagnostic], sources: Sources, root: Path, counts: RunCounts | None) -> str:
    from torchup.report.formats.sarif import render_sarif  # (imported when used: start-up stays short)

    return render_sarif(diagnostics, sources, root=root, counts=counts)


def _github(diagnostics: Sequence[Diagnostic], sources: Sources, root: Path, _counts: RunCounts | None) -> str:
    from torchup.report.formats.github import render_github

    return render_github(diagnostics, sources, root=root)


def _junit(diagnostics: Sequence[Diagnostic], sources: Sources, root: Path, counts: RunCounts | None) -> str:
    from torchup.report.formats.junit import render_junit  # xml.etree alone costs 10 ms

    return render_junit(diagnostics, sources, root=root, window=counts.window if counts is not None else None)


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("full", "findings with their source line and fix (the default)", _text("full"), False),
        Format("concise", "one line per finding", _text("concise"), False),
        Format("json", "a JSON array of findings", _json, True),
        Format("json-lines", "one JSON object per finding, one per line", _json_lines, True),
        Format("sarif", "SARIF 2.1.0, for code scanning", _sarif, True),
        Format("github", "GitHub Actions annotations (workflow commands)", _github, False),
        Format("junit", "JUnit XML", _junit, True),
    )
}


def render(
    name: str,
    diagnostics: Sequence[Diagnostic],
    sources: Sources = no_sources,
    *,
    root: PathLike | None = None,
    counts: RunCounts | None = None,
) -> str:
    """The report of ``diagnostics`` in format ``name`` (a key of ``FORMATS``), in the order given;
    ``counts``: how many files the run checked, and how, for the formats that state it (SARIF).

    Raises ``UnknownFormatError`` (a ``ValueError``) naming the known formats for any other name.
    """
    try:
        output_format = FORMATS[name]
    except KeyError:
        known = ", ".join(FORMATS)
        raise UnknownFormatError(f"unknown output format {name!r}; known formats: {known}") from None
    return output_format.renderer(diagnostics, sources, root_path(root), counts)
