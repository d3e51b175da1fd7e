"""``json`` and ``json-lines``: the fields of :func:`torchup.report.output.to_json`, plus ``cell`` for notebooks.

``json-lines`` writes one compact JSON object per finding, one per line, with no surrounding array, so a
consumer can stream it; ``json`` writes the same objects as one indented array. Both are ASCII (non-ASCII
text is escaped), like the existing ``json`` output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from torchup.core.diagnostics import Diagnostic
from torchup.report.formats.common import Sources, no_sources
from torchup.report.output import to_json


def record(diagnostic: Diagnostic, sources: Sources = no_sources) -> dict[str, Any]:
    """The JSON object of one finding: ``to_json``'s fields, and ``cell`` (1-based) when in a notebook."""
    data = to_json(diagnostic, sources(diagnostic.path))
    if diagnostic.cell is not None:
        data.setdefault("cell", diagnostic.cell)
    return data


def render_json_lines(diagnostics: Sequence[Diagnostic], sources: Sources = no_sources) -> str:
    """One JSON object per line, each line ending in ``\\n``; the empty string for no findings."""
    return "".join(json.dumps(record(d, sources)) + "\n" for d in diagnostics)


def render_json(diagnostics: Sequence[Diagnostic], sources: Sources = no_sources) -> str:
    """An indented JSON array of the same objects (``[]`` for no findings), ending in ``\\n``."""
    return json.dumps([record(d, sources) for d in diagnostics], indent=2) + "\n"
