"""docs/coverage.md is generated from the release items and the rules, and must not go stale."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("coverage_tool", ROOT / "tools" / "coverage.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL = _tool()


def test_committed_matrix_is_current() -> None:
    expected = TOOL.render(TOOL.load_items(), TOOL.rules_by_code())
    committed = (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8")
    assert committed == expected, "docs/coverage.md is stale: run python3 tools/coverage.py"


def test_items_and_rules_agree() -> None:
    assert TOOL.problems(TOOL.load_items(), TOOL.rules_by_code()) == []


def test_every_public_removal_is_covered_or_excused() -> None:
    removals = ROOT / "docs" / "api-diff" / "removals.json"
    data = json.loads(removals.read_text(encoding="utf-8"))
    assert TOOL.uncovered_removals(TOOL.load_items(), data) == []


def test_a_rule_nobody_lists_is_a_problem() -> None:
    data = TOOL.load_items()
    data["items"] = [item for item in data["items"] if "TU101" not in item.get("handled_by", [])]
    assert "TU101 handles no item: add it to an item's handled_by" in TOOL.problems(data, TOOL.rules_by_code())


def test_an_unknown_handler_or_a_silent_item_is_a_problem() -> None:
    data = {"releases": ["2.14"], "items": [
        {"release": "2.14", "change": "x", "source": "wheels", "handled_by": ["TU999"]},
        {"release": "2.14", "change": "y", "source": "wheels"},
    ]}
    found = TOOL.problems(data, {})
    assert any("unknown handler 'TU999'" in p for p in found)
    assert any("no handler and no out_of_scope reason" in p for p in found)


@pytest.mark.parametrize("excused", [True, False])
def test_an_uncovered_removal_is_reported_unless_excused(excused: bool) -> None:
    data = {"releases": ["2.15"], "items": [], "not_covered": {"torch.gone": "why"} if excused else {}}
    removals = {"pairs": [{"old": "2.14.1", "new": "2.15.0", "removals": [{"name": "torch.gone", "change": "removed"}]}]}
    assert (TOOL.uncovered_removals(data, removals) == []) is excused
