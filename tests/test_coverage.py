"""docs/coverage.md is generated from the release items, the API changes, the reasons and the rules,
and must not go stale; every API change maps to a rule or a reason, and each rule's `since` agrees
with the changes it handles."""

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
    data["items"] = [item for item in data["items"] if "TU105" not in item.get("handled_by", [])]
    expected = "TU105 handles no item and no API change: add it to an item's handled_by"
    assert expected in TOOL.problems(data, TOOL.rules_by_code())


def test_a_rule_that_handles_api_changes_needs_no_release_item() -> None:
    data = {"releases": ["2.14"], "items": []}
    rules = {code: rule for code, rule in TOOL.rules_by_code().items() if code == "TU624"}
    assert TOOL.problems(data, rules) == []
    assert TOOL.problems(data, rules, api={"changes": []}, reasons={}) != []


def test_every_api_change_maps_to_a_rule_or_a_reason() -> None:
    missing = TOOL.unmapped(TOOL.load_api(), TOOL.rules_by_code(), TOOL.load_reasons(), TOOL.load_items())
    assert missing == [], "\n".join(missing)


def test_an_unmapped_change_is_named_with_what_to_do() -> None:
    api = {"changes": [{"release": "2.3", "kind": "removed", "name": "torch.nothing_looks_for_this", "evidence": {}}]}
    found = TOOL.unmapped(api, TOOL.rules_by_code(), {"reasons": []}, {"items": []})
    assert len(found) == 1 and "torch.nothing_looks_for_this" in found[0]
    assert "add a rule" in found[0] and "coverage_reasons.json" in found[0]
    reasons = {"reasons": [{"match": "torch.nothing_looks_for_this", "kinds": ["removed"], "reason": "why"}]}
    assert TOOL.unmapped(api, TOOL.rules_by_code(), reasons, {"items": []}) == []


def test_a_pattern_explains_only_the_changes_it_lists() -> None:
    """A reason whose `match` is a pattern excuses the changes it was written for (`covers`), not
    the next one the diff finds that happens to fit it: that one is named, with the pattern."""
    api = {"changes": [
        {"release": "2.3", "kind": "removed", "name": "torch.nothing_looks_for_this", "evidence": {}},
        {"release": "2.4", "kind": "removed", "name": "torch.nothing_else_either", "evidence": {}},
    ]}
    reasons = {"reasons": [{"match": "torch.nothing_*", "reason": "why",
                            "covers": ["2.3 removed torch.nothing_looks_for_this"]}]}
    found = TOOL.unmapped(api, TOOL.rules_by_code(), reasons, {"items": []})
    assert len(found) == 1 and found[0].startswith("2.4 removed torch.nothing_else_either")
    assert "`torch.nothing_*`" in found[0] and "covers" in found[0]
    assert TOOL.stale_covers(api, reasons) == []
    reasons["reasons"][0]["covers"] += ["2.5 removed torch.gone_from_the_data", "2.3 removed torch.qr"]
    stale = TOOL.stale_covers(api, reasons)
    assert len(stale) == 2 and "no change of api_changes.json" in stale[0]


def test_every_pattern_reason_says_what_it_covers() -> None:
    """The committed reasons: each pattern lists the changes it explains, and only real ones."""
    reasons = TOOL.load_reasons()
    assert all(entry.get("covers") for entry in reasons["reasons"] if TOOL.is_pattern(entry["match"]))
    assert TOOL.stale_covers(TOOL.load_api(), reasons) == []


def test_a_change_maps_to_the_rule_that_looks_for_its_name() -> None:
    rules = TOOL.rules_by_code()
    member = {"name": "torch.optim.lr_scheduler.StepLR.__init__", "parameter": "verbose", "kind": "parameter-removed"}
    assert TOOL.rules_for(member, rules) == ["TU609"]
    assert TOOL.rules_for({"name": "torch.chain_matmul", "kind": "deprecated"}, rules) == ["TU624"]
    # A rule that looks at torch.compile for another reason does not claim its parameters.
    assert "TU301" not in TOOL.rules_for({"name": "torch.compile", "parameter": "backend", "kind": "default-changed"}, rules)
    assert TOOL.rules_for({"name": "torch.optim.lr_scheduler.StepLR.gamma", "kind": "removed"}, rules) == []


def test_a_reason_can_take_a_rule_off_a_change_it_does_not_handle() -> None:
    change = {"release": "2.0", "kind": "deprecated", "name": "torch.svd", "evidence": {}}
    rules = TOOL.rules_by_code()
    assert TOOL.rules_for(change, rules) == ["TU505"]
    [(_, handlers, reason)] = TOOL.classify({"changes": [change]}, rules, TOOL.load_reasons())
    assert handlers == [] and reason is not None


def test_each_rule_since_agrees_with_the_changes_it_handles() -> None:
    found = TOOL.since_problems(TOOL.load_api(), TOOL.rules_by_code(), TOOL.load_reasons(), TOOL.load_items())
    assert found == [], "\n".join(found)


def test_a_since_that_disagrees_is_a_problem_unless_explained() -> None:
    api = {"changes": [{"release": "2.1", "kind": "deprecated", "name": "torch.chain_matmul", "evidence": {}}]}
    rules = TOOL.rules_by_code()
    assert any(p.startswith("TU624: since 2.0") for p in TOOL.since_problems(api, rules, {}, {}))
    explained = {"since_differs": {"TU624": "why"}}
    assert TOOL.since_problems(api, rules, explained, {}) == []


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
