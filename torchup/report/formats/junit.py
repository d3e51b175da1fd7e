"""``junit``: JUnit XML, for CI systems that show test reports.

Layout::

    <testsuites name="torchup" tests="N" failures="N" errors="0">
      <testsuite name="pkg/train.py" tests="2" failures="2" errors="0" skipped="0">
        <testcase name="TU101 pkg/train.py:3:5" classname="pkg/train.py" file="pkg/train.py" line="3">
          <failure message="msg [...]" type="TU101">pkg/train.py:3:5: TU101 (torch-cholesky) msg [...]</failure>
        </testcase>

Each ``testsuite`` starts with ``<properties>`` naming the run's support window (``floor``, ``floorSource``,
``target``, ``targetSource``) when ``torchup check`` made the report.
One ``testsuite`` per file that has findings (in the order the files first appear), one ``testcase`` per
finding, each with one ``failure`` whose ``type`` is the code, and whose message ends with the release that
made the change and what its wheel does, in brackets (``[since torch 2.14: raises]``). Files without findings
are not listed (the report is made from the findings alone); when there are no findings at all the report holds
one suite ``torchup`` with one passing test case ``no findings``, since some CI systems reject an empty report.
Paths under ``root`` are relative to it. A notebook finding's location reads ``nb.ipynb:cell 3:2:5``, and its
``testcase`` has no ``line`` attribute.

The text is UTF-8 with an XML declaration; ``xml.etree`` escapes markup characters, and characters XML 1.0
cannot carry at all (control characters other than tab, LF and CR) are written as ``\\xNN``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from torchup.core.diagnostics import Diagnostic
from torchup.report.formats.common import (
    PathLike,
    Sources,
    SupportWindow,
    display_path,
    location_text,
    no_sources,
    root_path,
)

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """``text`` with the characters XML 1.0 forbids replaced by ``\\xNN`` / ``\\uNNNN`` escapes."""
    return _NOT_XML.sub(lambda m: ascii(m.group())[1:-1], text)


def render_junit(
    diagnostics: Sequence[Diagnostic],
    sources: Sources = no_sources,
    *,
    root: PathLike | None = None,
    window: SupportWindow | None = None,
) -> str:
    """The JUnit XML report (see the module docstring), ending in a newline; ``window``: the run's
    floor and target, as each suite's ``properties``."""
    base = root_path(root)
    by_file: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        by_file.setdefault(display_path(diagnostic.path, base), []).append(diagnostic)
    failures = len(diagnostics)
    suites = ET.Element(
        "testsuites", {"name": "torchup", "tests": str(max(failures, 1)), "failures": str(failures), "errors": "0"}
    )
    if not by_file:
        suite = ET.SubElement(
            suites, "testsuite", {"name": "torchup", "tests": "1", "failures": "0", "errors": "0", "skipped": "0"}
        )
        _properties(suite, window)
        ET.SubElement(suite, "testcase", {"name": "no findings", "classname": "torchup"})
    for path, found in by_file.items():
        path_text = xml_text(path)
        count = str(len(found))
        suite = ET.SubElement(
            suites,
            "testsuite",
            {"name": path_text, "tests": count, "failures": count, "errors": "0", "skipped": "0"},
        )
        _properties(suite, window)
        for diagnostic in found:
            where = xml_text(location_text(diagnostic, path))
            attributes = {"name": f"{diagnostic.code} {where}", "classname": path_text, "file": path_text}
            if diagnostic.cell is None:  # a cell's line counts inside the cell, not in the file
                attributes["line"] = str(diagnostic.line)
            case = ET.SubElement(suite, "testcase", attributes)
            message = diagnostic.message + diagnostic.tags()
            failure = ET.SubElement(case, "failure", {"message": xml_text(message), "type": diagnostic.code})
            failure.text = xml_text(f"{where}: {diagnostic.code} ({diagnostic.name}) {message}")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _properties(suite: ET.Element, window: SupportWindow | None) -> None:
    """``<properties>`` with the floor and target (and where each was decided), first in the suite."""
    if window is None:
        return
    properties = ET.SubElement(suite, "properties")
    for name, value in window.properties().items():
        ET.SubElement(properties, "property", {"name": name, "value": xml_text(value)})
