"""``github``: GitHub Actions workflow commands, which the runner turns into annotations on the diff.

One line per finding::

    ::error file=pkg/train.py,line=3,col=5,endLine=3,endColumn=19,title=TU101 (torch-cholesky)::TU101 message [...]

The message ends with the release that made the change and what its wheel does, in brackets
(``[since torch 2.14: raises]``). The
command is ``error``, ``warning`` or ``notice`` after the finding's severity. Paths under ``root`` are
written relative to it (GitHub expects paths relative to the repository root, so pass the checkout's root),
others as the finding gives them. Escaping follows the runner's rules: in the message ``%`` -> ``%25``,
``\\r`` -> ``%0D``, ``\\n`` -> ``%0A``; in property values also ``:`` -> ``%3A`` and ``,`` -> ``%2C``.

A finding in a notebook cell is annotated on the ``.ipynb`` file as a whole (no ``line``/``col``: they count
inside the cell, and would point into the notebook's JSON), and its message starts with
``cell N:LINE:COL:``, the place the text formats give as ``nb.ipynb:cell N:LINE:COL``.
"""

from __future__ import annotations

from collections.abc import Sequence

from torchup.core.diagnostics import Diagnostic
from torchup.report.formats.common import PathLike, Sources, display_path, no_sources, root_path, severity_name


def escape_data(text: str) -> str:
    """Escape a workflow command's message: ``%``, CR and LF."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value: as :func:`escape_data`, plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(diagnostic: Diagnostic, *, root: PathLike | None = None) -> str:
    """The workflow command for one finding (without the line ending)."""
    properties = [("file", display_path(diagnostic.path, root_path(root)))]
    message = f"{diagnostic.code} {diagnostic.message}{diagnostic.tags()}"
    if diagnostic.cell is None:
        start = (diagnostic.line, diagnostic.column)
        end_line, end_column = max(start, (diagnostic.end_line, diagnostic.end_column))
        properties += [
            ("line", str(diagnostic.line)),
            ("col", str(diagnostic.column)),
            ("endLine", str(end_line)),
            ("endColumn", str(end_column)),
        ]
    else:
        message = f"cell {diagnostic.cell}:{diagnostic.line}:{diagnostic.column}: {message}"
    properties.append(("title", f"{diagnostic.code} ({diagnostic.name})"))
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{severity_name(diagnostic.severity, info='notice')} {rendered}::{escape_data(message)}"


def render_github(
    diagnostics: Sequence[Diagnostic], sources: Sources = no_sources, *, root: PathLike | None = None
) -> str:
    """One workflow command per line, each ending in ``\\n``; the empty string for no findings."""
    base = root_path(root)
    return "".join(command(d, root=base) + "\n" for d in diagnostics)
