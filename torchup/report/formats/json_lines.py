"""``json`` and ``json-lines``: the fields of :func:`torchup.report.output.to_json`, plus ``cell`` for notebooks.

``json-lines`` writes one compact JSON object per finding, one per line, with no surrounding array, so a
consumer can stream it; ``json`` writes the same objects as one indented array. Both are ASCII (non-ASCII
text is escaped), like the existing ``json`` output. From ``torchup check``, each finding also states the
support window of its file: ``"floor": {"release": "1.7", "source": "requirements.txt:16 `torch>=1.7`"}`` and
``"target": {"release": "2.15", "source": "..."}`` (a run may span projects with different floors).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from torchup.core.diagnostics import Diagnostic
from torchup.report.formats.common import Sources, SupportWindow, no_sources, no_window
from torchup.report.output import to_json

WindowFor = Callable[[str], SupportWindow | None]


def record(diagnostic: Diagnostic, sources: Sources = no_sources, window_for: WindowFor = no_window) -> dict[str, Any]:
    """The JSON object of one finding: ``to_json``'s fields, ``cell`` (1-based) when in a notebook,
    and its file's support window when known."""
    data = to_json(diagnostic, sources(diagnostic.path))
    if diagnostic.cell is not None:
        data.setdefault("cell", diagnostic.cell)
    window = window_for(diagnostic.path)
    if window is not None:
        data.update(window.as_json())
    return data


def render_json_lines(
    diagnostics: Sequence[Diagnostic], sources: Sources = no_sources, window_for: WindowFor = no_window
) -> str:
    """One JSON object per line, each line ending in ``\\n``; the empty string for no findings."""
    return "".join(json.dumps(record(d, sources, window_for)) + "\n" for d in diagnostics)


def render_json(
    diagnostics: Sequence[Diagnostic], sources: Sources = no_sources, window_for: WindowFor = no_window
) -> str:
    """An indented JSON array of the same objects (``[]`` for no findings), ending in ``\\n``."""
    return json.dumps([record(d, sources, window_for) for d in diagnostics], indent=2) + "\n"
