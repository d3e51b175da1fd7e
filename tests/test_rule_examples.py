"""Every rule's documented examples are tests: findings, fix output, idempotence, safety class."""

from __future__ import annotations

import ast

import pytest

import helpers
from torchup.analysis.rule import Example, Rule
from torchup.api import check_source, fix_source
from torchup.core.diagnostics import Applicability, Diagnostic
from torchup.rules import all_rules

CASES = [
    pytest.param(rule, example, id=f"{rule.code}-{example.title}")
    for rule in all_rules()
    for example in rule.examples
]


def check(source: str, select: list[str], floor: str | None = None) -> list[Diagnostic]:
    """The example's findings, with the project's floor it states (``Example.floor``)."""
    if floor is None:
        return helpers.check(source, select=select)
    return check_source(source, path="snippet.py", select=select, from_version=floor)


def fix(source: str, unsafe: bool, select: list[str], floor: str | None = None) -> str:
    """The fixed text (it parses, and fixing again changes nothing), with the example's floor."""
    if floor is None:
        return helpers.fix(source, unsafe=unsafe, select=select)
    first = fix_source(source, path="snippet.py", select=select, unsafe_fixes=unsafe, from_version=floor).source
    ast.parse(first)
    again = fix_source(first, path="snippet.py", select=select, unsafe_fixes=unsafe, from_version=floor).source
    assert again == first, "fixing twice changed the file"
    return first


@pytest.mark.parametrize(("rule", "example"), CASES)
def test_example_findings(rule: Rule, example: Example) -> None:
    found = [d for d in check(example.source, [rule.code], example.floor) if d.code == rule.code]
    assert len(found) == example.findings, [d.message for d in found]


@pytest.mark.parametrize(("rule", "example"), CASES)
def test_example_fix(rule: Rule, example: Example) -> None:
    fixed = fix(example.source, example.unsafe, [rule.code], example.floor)
    expected = example.fixed if example.fixed is not None else example.source
    assert fixed == expected


@pytest.mark.parametrize(("rule", "example"), [c for c in CASES if c.values[1].unsafe and c.values[1].fixed])
def test_unsafe_examples_need_the_flag(rule: Rule, example: Example) -> None:
    assert fix(example.source, False, [rule.code], example.floor) != example.fixed


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_declared_fix_availability_matches_examples(rule: Rule) -> None:
    applicabilities = set()
    for example in rule.examples:
        for diagnostic in check(example.source, [rule.code], example.floor):
            if diagnostic.fix is not None:
                applicabilities.add(diagnostic.fix.applicability)
    declared = rule.fix_availability.value
    if declared == "none":
        assert not applicabilities
    elif declared == "safe":
        assert applicabilities == {Applicability.SAFE}
    elif declared == "unsafe":
        assert applicabilities == {Applicability.UNSAFE}
    else:
        assert applicabilities, "a rule that sometimes fixes should show a fix in its examples"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_docs_have_every_section(rule: Rule) -> None:
    docs = rule.render_docs()
    for section in ("## What it does", "## Why", "## Fix", "## Fix safety"):
        assert section in docs
    assert rule.code in docs and rule.name in docs
    if rule.examples:
        assert "## Examples" in docs


def test_codes_are_unique_and_stable() -> None:
    assert [r.code for r in all_rules()] == [
        "TU000", "TU001", "TU002", "TU101", "TU102", "TU103", "TU104", "TU105", "TU110", "TU120", "TU130", "TU140",
        "TU150", "TU151", "TU152", "TU160", "TU161", "TU170", "TU171", "TU172", "TU173", "TU201", "TU202", "TU301", "TU401",
        "TU501", "TU502", "TU503", "TU504", "TU505",
        "TU601", "TU602", "TU603", "TU604", "TU605", "TU606", "TU607", "TU608", "TU609", "TU610", "TU611", "TU612", "TU613",
        "TU614", "TU615", "TU616", "TU617", "TU618", "TU619",
        "TU620", "TU621", "TU622", "TU623", "TU624", "TU625", "TU626", "TU627", "TU628", "TU629",
        "TU630", "TU631", "TU632", "TU633", "TU634", "TU635", "TU636", "TU637", "TU638", "TU639", "TU640", "TU641", "TU642", "TU643", "TU644",
        "TU701", "TU702", "TU703", "TU704", "TU705", "TU706", "TU707", "TU708", "TU711", "TU712", "TU713",
        "TU801",
    ]
    assert len({r.name for r in all_rules()}) == len(all_rules())
