"""``sarif``: a SARIF 2.1.0 log, for GitHub code scanning and other SARIF viewers.

One run. ``tool.driver`` carries every registered rule (id, name, summary, the "What it does" text as the
full description, the whole ``torchup rule CODE`` page as help text and markdown, the default level from the
rule's severity and whether it is on by default); a finding of a code the registry does not know gets a
descriptor from the finding itself; a descriptor's ``properties`` hold the rule's ``since`` and ``change``.
Levels: error -> ``error``, warning -> ``warning``, info -> ``note``. A result's ``properties`` hold its
``since`` (the release that made the change) and ``change`` (what that release's wheel does: ``raises``,
``behaves differently``, ``warns``, ``new feature``), where the finding has them.
The run's ``properties`` (from ``torchup check``) count its files: ``filesChecked`` (TU001 findings included),
of those ``filesNotParsed`` (settled by the pre-filter alone: no trigger word), and ``filesUnreadable`` (TU000,
not read).

Locations. A path under ``root`` is written relative to it, as a POSIX URI reference with
``uriBaseId: "%SRCROOT%"``, and ``run.originalUriBaseIds`` maps ``%SRCROOT%`` to the ``file:`` URI of
``root`` (with its trailing slash). A path outside ``root`` is an absolute ``file:`` URI with no base. Regions
are 1-based; columns count Unicode code points (``run.columnKind`` says so) and ``endColumn`` is exclusive.

Notebooks. A finding in a notebook cell (``Diagnostic.cell`` set) names the ``.ipynb`` file as its artifact,
its message starts with ``cell N:``, the result's ``properties.cell`` holds N (1-based, counting code cells
only), and its region is the line and column **inside that cell**, not in the notebook's JSON. Such results
carry no ``fixes``: a SARIF replacement addresses the artifact's own text, which for a notebook is its JSON.

Fingerprints. ``partialFingerprints["torchup/v1"]`` is a SHA-256 of the rule id, the path relative to
``root`` (absolute outside it), the finding's first source line with its whitespace collapsed, and the index of
that (rule, path, line text) among the file's findings in source order. It holds no line or column numbers, so
it stays the same across runs and across edits elsewhere in the file that move the finding; it changes when
the flagged line itself changes. When the source is not available the finding's message stands in for the
line; for a notebook cell the line is read from the notebook's JSON (when ``sources`` holds the ``.ipynb``).

Fixes. Each finding with a fix (safe or unsafe; ``properties.applicability`` says which) gets one ``fix``
whose single ``artifactChange`` lists a replacement per edit, the fix's import edits included, in text order:
``deletedRegion`` by 1-based line and column (an insertion is an empty region) and ``insertedContent.text``
(absent for a pure deletion). The import edits are those the fix makes when applied alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import textwrap
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import torchup
from torchup.analysis.rule import Rule
from torchup.core.diagnostics import Confidence, Diagnostic, Edit, Severity
from torchup.core.source import SourceFile
from torchup.report.formats.common import (
    PathLike,
    RunCounts,
    Sources,
    line_text,
    no_sources,
    relative_path,
    root_path,
    severity_name,
)
from torchup.rules import all_rules

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "torchup/v1"


def level(severity: Severity) -> str:
    """The SARIF level of a severity: ``error``, ``warning`` or ``note``."""
    return severity_name(severity, info="note")


def render_sarif(
    diagnostics: Sequence[Diagnostic],
    sources: Sources = no_sources,
    *,
    root: PathLike | None = None,
    counts: RunCounts | None = None,
) -> str:
    """The SARIF log as indented JSON text ending in a newline (see the module docstring)."""
    log = sarif_log(diagnostics, sources, root=root, counts=counts)
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def sarif_log(
    diagnostics: Sequence[Diagnostic],
    sources: Sources = no_sources,
    *,
    root: PathLike | None = None,
    counts: RunCounts | None = None,
) -> dict[str, Any]:
    """The SARIF log as a JSON-ready dict; ``root`` (default: the working directory) anchors ``%SRCROOT%``;
    ``counts``, when given, become the run's ``properties``."""
    base = root_path(root)
    rules = list(all_rules())
    descriptors = [rule_descriptor(rule) for rule in rules]
    index = {rule.code: i for i, rule in enumerate(rules)}
    for diagnostic in diagnostics:
        if diagnostic.code not in index:
            index[diagnostic.code] = len(descriptors)
            descriptors.append(_unregistered_descriptor(diagnostic))
    fingerprints = partial_fingerprints(diagnostics, sources, root=base)
    results = [
        _result(diagnostic, sources(diagnostic.path), base, index[diagnostic.code], fingerprint)
        for diagnostic, fingerprint in zip(diagnostics, fingerprints, strict=True)
    ]
    base_uri = base.as_uri()
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "torchup",
                "version": torchup.__version__,
                "semanticVersion": torchup.__version__,
                "rules": descriptors,
            }
        },
        "originalUriBaseIds": {
            SRCROOT: {
                "uri": base_uri if base_uri.endswith("/") else base_uri + "/",
                "description": {"text": "The directory the result paths are relative to."},
            }
        },
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if counts is not None:
        run["properties"] = counts.properties()
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    """A ``reportingDescriptor`` for a registered rule."""
    docs = rule.render_docs()
    what = textwrap.dedent(rule.docs.what).strip() or rule.summary
    properties: dict[str, Any] = {"fixAvailability": rule.fix_availability.value}
    if rule.since:
        properties["since"] = rule.since
    if not rule.engine_emitted:
        properties["change"] = rule.change.value
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": what},
        "help": {"text": docs, "markdown": docs},
        "defaultConfiguration": {"level": level(rule.severity), "enabled": rule.enabled_by_default},
        "properties": properties,
    }


def _unregistered_descriptor(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "id": diagnostic.code,
        "name": diagnostic.name,
        "shortDescription": {"text": diagnostic.name},
        "defaultConfiguration": {"level": level(diagnostic.severity)},
    }


def partial_fingerprints(
    diagnostics: Sequence[Diagnostic], sources: Sources = no_sources, *, root: PathLike | None = None
) -> list[str]:
    """The ``torchup/v1`` fingerprint of each finding, in the order given (see the module docstring)."""
    base = root_path(root)
    bases: list[tuple[str, str, str]] = []
    for diagnostic in diagnostics:
        path = relative_path(diagnostic.path, base) or os.path.abspath(diagnostic.path)
        text = line_text(diagnostic, sources(diagnostic.path))
        basis = "line:" + " ".join(text.split()) if text is not None else "message:" + diagnostic.message
        bases.append((diagnostic.code, path, basis))
    order = sorted(
        range(len(diagnostics)),
        key=lambda i: (bases[i][1], diagnostics[i].cell or 0, diagnostics[i].line, diagnostics[i].column, i),
    )
    seen: Counter[tuple[str, str, str]] = Counter()
    fingerprints = [""] * len(diagnostics)
    for i in order:
        occurrence = seen[bases[i]]
        seen[bases[i]] += 1
        material = "\x00".join((*bases[i], str(occurrence)))
        fingerprints[i] = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()
    return fingerprints


def artifact_location(path: str, root: Path) -> dict[str, str]:
    """``{uri, uriBaseId: %SRCROOT%}`` for a path under ``root``, else ``{uri: file:///...}``."""
    relative = relative_path(path, root)
    if relative is not None:
        return {"uri": quote(relative, safe="/"), "uriBaseId": SRCROOT}
    return {"uri": Path(os.path.abspath(path)).as_uri()}


def region(line: int, column: int, end_line: int, end_column: int) -> dict[str, int]:
    """A 1-based SARIF region; an end before the start is taken as the start (an empty region)."""
    start = (max(line, 1), max(column, 1))
    end = max(start, (end_line, end_column))
    return {"startLine": start[0], "startColumn": start[1], "endLine": end[0], "endColumn": end[1]}


_RANKS = {Confidence.CERTAIN: 100.0, Confidence.LIKELY: 70.0, Confidence.POSSIBLE: 40.0}


def _result(
    diagnostic: Diagnostic, source: SourceFile | None, root: Path, rule_index: int, fingerprint: str
) -> dict[str, Any]:
    location = artifact_location(diagnostic.path, root)
    message = diagnostic.message if diagnostic.cell is None else f"cell {diagnostic.cell}: {diagnostic.message}"
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "ruleIndex": rule_index,
        "level": level(diagnostic.severity),
        "message": {"text": message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": location,
                    "region": region(diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column),
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
    }
    properties: dict[str, Any] = {}
    if diagnostic.cell is not None:
        properties["cell"] = diagnostic.cell
    if diagnostic.since is not None:
        properties["since"] = diagnostic.since
    if diagnostic.change is not None:
        properties["change"] = diagnostic.change
    # How sure the finding is that the receiver is a tensor (torchup.analysis.receivers), also as
    # SARIF's `rank` (0-100, higher first) for viewers that sort by it.
    properties["confidence"] = diagnostic.confidence.value
    result["rank"] = _RANKS[diagnostic.confidence]
    result["properties"] = properties
    fix = diagnostic.fix
    if fix is not None and diagnostic.cell is None and source is not None:
        edits = sorted(set((*fix.edits, *fix.import_edits)))
        if edits:
            result["fixes"] = [
                {
                    "description": {"text": fix.message},
                    "artifactChanges": [
                        {"artifactLocation": dict(location), "replacements": [_replacement(source, e) for e in edits]}
                    ],
                    "properties": {"applicability": fix.applicability.value},
                }
            ]
    return result


def _replacement(source: SourceFile, edit: Edit) -> dict[str, Any]:
    start = source.position(edit.start)
    end = source.position(edit.end)
    replacement: dict[str, Any] = {"deletedRegion": region(*start, *end)}
    if edit.content:
        replacement["insertedContent"] = {"text": edit.content}
    return replacement
