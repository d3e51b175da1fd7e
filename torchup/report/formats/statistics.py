"""Summaries instead of (``--statistics``) or after (``--show-fixes``) the list of findings, like ruff's.

``--statistics`` prints one row per code, most frequent first::

    3  TU101  [*] torch-cholesky   3 fixable
    2  TU102  [*] tensor-cholesky  1 fixable, 1 more with --unsafe-fixes
    1  TU301  [ ] compile-python-315

``[*]`` marks a code with at least one finding ``torchup fix`` would fix (with ``unsafe_fixes`` true,
unsafe fixes count as fixable too, and the "more with --unsafe-fixes" note goes away).

``--show-fixes`` lists what a ``fix`` run applied, per file and code::

    Fixed 3 findings:
    - pkg/train.py:
        2 x TU101 (torch-cholesky)
        1 x TU103 (torch-qr)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from torchup.core.diagnostics import Applicability, Diagnostic
from torchup.report.formats.common import PathLike, display_path, root_path


@dataclass(frozen=True)
class Statistic:
    """How often one code was reported, and how many of those findings a fix run would fix."""

    code: str
    name: str
    count: int
    fixable: int  # findings with a safe fix (or any fix, when counted with unsafe_fixes)
    unsafe_fixable: int  # findings whose fix needs --unsafe-fixes (0 when counted with unsafe_fixes)


def statistics(diagnostics: Sequence[Diagnostic], *, unsafe_fixes: bool = False) -> list[Statistic]:
    """One ``Statistic`` per code, by count (highest first), then by code."""
    counts: Counter[str] = Counter()
    safe: Counter[str] = Counter()
    unsafe: Counter[str] = Counter()
    names: dict[str, str] = {}
    for diagnostic in diagnostics:
        counts[diagnostic.code] += 1
        names.setdefault(diagnostic.code, diagnostic.name)
        if diagnostic.fix is None:
            continue
        if diagnostic.fix.applicability is Applicability.SAFE or unsafe_fixes:
            safe[diagnostic.code] += 1
        else:
            unsafe[diagnostic.code] += 1
    ordered = sorted(counts, key=lambda code: (-counts[code], code))
    return [Statistic(code, names[code], counts[code], safe[code], unsafe[code]) for code in ordered]


def render_statistics(
    diagnostics: Sequence[Diagnostic], *, unsafe_fixes: bool = False, output_format: str = "text"
) -> str:
    """The ``--statistics`` table (see the module docstring); ``output_format="json"`` gives a JSON array of
    ``{code, name, count, fixable, unsafe_fixable}`` instead. The empty string when there are no findings
    (``[]`` in JSON)."""
    rows = statistics(diagnostics, unsafe_fixes=unsafe_fixes)
    if output_format == "json":
        return json.dumps([asdict(row) for row in rows], indent=2) + "\n"
    if not rows:
        return ""
    count_width = max(len(str(row.count)) for row in rows)
    code_width = max(len(row.code) for row in rows)
    name_width = max(len(row.name) for row in rows)
    lines = []
    for row in rows:
        marker = "[*]" if row.fixable else "[ ]"
        notes = []
        if row.fixable:
            notes.append(f"{row.fixable} fixable")
        if row.unsafe_fixable:
            notes.append(f"{row.unsafe_fixable} {'more ' if row.fixable else ''}with --unsafe-fixes")
        line = f"{row.count:>{count_width}}  {row.code:<{code_width}}  {marker} {row.name:<{name_width}}  "
        lines.append((line + ", ".join(notes)).rstrip())
    return "\n".join(lines) + "\n"


def render_fixes(fixed: Sequence[Diagnostic], *, root: PathLike | None = None) -> str:
    """The ``--show-fixes`` summary of the findings a fix run fixed: per file (sorted), per code (sorted).

    Paths are shown as the findings give them, or relative to ``root`` when one is given and they lie under
    it. The empty string when nothing was fixed.
    """
    if not fixed:
        return ""
    base = root_path(root) if root is not None else None
    per_file: dict[str, Counter[str]] = {}
    names: dict[str, str] = {}
    for diagnostic in fixed:
        path = display_path(diagnostic.path, base) if base is not None else diagnostic.path
        per_file.setdefault(path, Counter())[diagnostic.code] += 1
        names.setdefault(diagnostic.code, diagnostic.name)
    total = len(fixed)
    lines = [f"Fixed {total} finding{'s' * (total != 1)}:"]
    for path in sorted(per_file):
        lines.append(f"- {path}:")
        for code in sorted(per_file[path]):
            lines.append(f"    {per_file[path][code]} x {code} ({names[code]})")
    return "\n".join(lines) + "\n"
