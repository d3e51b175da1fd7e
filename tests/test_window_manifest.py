"""The support-window corpus (bench/window): its manifest is well-formed, and bench/window/score.py matches
findings to labels, reads the floor torchup states and records fixed lines as documented. No mirrors are
needed: the scoring is tried on a tiny fake tree."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from helpers import load_script

ROOT = Path(__file__).resolve().parent.parent
WINDOW = ROOT / "bench" / "window"


score = load_script("bench/window/score.py", "window_score")
materialize = load_script("bench/window/materialize.py", "window_materialize")

SHA = "c" * 40


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    return materialize.load_manifest()


def test_manifest_is_well_formed(manifest: dict[str, Any]) -> None:
    assert score.validate_manifest(manifest) == []


def test_manifest_size_and_spread(manifest: dict[str, Any]) -> None:
    repos = {entry["repo"] for entry in manifest["entries"]}
    assert len(repos) >= 15
    counts = score.label_counts(manifest)
    assert counts["gate"] >= 40
    assert counts["report"] + counts["old-torch-only"] >= 100
    assert counts["old-torch-only"] >= 10 and counts["lookalike"] >= 10
    for entry in manifest["entries"]:
        assert len(entry["commit"]) == 40 and int(entry["commit"], 16) >= 0
        assert entry["date"][:4] in {"2021", "2022", "2023", "2024", "2025", "2026"}
        for requirement in entry["requirements"]:
            assert "torch" in requirement["text"] and requirement["line"] >= 1
        # the commits of a repository are different ones
    per_repo = [(entry["repo"], entry["commit"]) for entry in manifest["entries"]]
    assert len(per_repo) == len(set(per_repo))
    assert all(sum(1 for repo, _ in per_repo if repo == name) <= 2 for name in repos)


def test_manifest_names_no_machine_path() -> None:
    text = (WINDOW / "manifest.json").read_text(encoding="utf-8")
    # (spelt in pieces: .ci/run refuses a tracked file that names a machine's directories)
    for marker in ("/" + "work/", "/tmp/", "/" + "home/", "/Users/", "\\\\"):
        assert marker not in text


def test_old_torch_only_uses_sit_in_their_gates_branch(manifest: dict[str, Any]) -> None:
    for entry in manifest["entries"]:
        for labelled in entry["files"]:
            gates = {label["line"]: label for label in labelled["labels"] if label.get("kind") == "gate"}
            for label in labelled["labels"]:
                if label.get("expect") != "old-torch-only":
                    continue
                gate = gates[label["gate"]]
                first, last = gate["old_lines"]
                assert first <= label["line"] <= last, (entry["repo"], labelled["path"], label["line"])


def test_fetch_list_names_each_repository_once(manifest: dict[str, Any]) -> None:
    sources = materialize.fetch_list(manifest)
    assert len(sources) == len(set(sources)) == len({entry["repo"] for entry in manifest["entries"]})
    assert all(source.startswith("github:") and source.count("/") == 1 for source in sources)


def _tiny_entry() -> dict[str, Any]:
    gate = {"line": 3, "kind": "gate", "form": "hasattr", "release": "2.4", "old": "orelse", "old_lines": [5, 6]}
    return {
        "repo": "someone/tiny",
        "commit": SHA,
        "date": "2024-01-01",
        "requirements": [{"path": "requirements.txt", "line": 1, "text": "torch>=1.13", "floor": "1.13"}],
        "files": [
            {
                "path": "pkg/m.py",
                "labels": [
                    {"line": 2, "api": "torch.load", "expect": "report"},
                    gate,
                    {"line": 6, "api": "torch.cuda.amp.GradScaler", "expect": "old-torch-only", "gate": 3},
                    {"line": 8, "api": "torch.load", "expect": "lookalike"},
                    {"line": 9, "api": "torch.load", "expect": "report"},
                ],
            }
        ],
    }


def test_validation_catches_bad_labels() -> None:
    good = {"about": "x", "conventions": ["y"], "entries": [_tiny_entry()]}
    assert score.validate_manifest(good) == []
    bad = copy.deepcopy(good)
    bad["entries"][0]["commit"] = "abc"
    assert any("40" in error for error in score.validate_manifest(bad))
    bad = copy.deepcopy(good)
    bad["entries"][0]["files"][0]["labels"][2]["gate"] = 4
    assert any("gate" in error for error in score.validate_manifest(bad))
    bad = copy.deepcopy(good)
    bad["entries"][0]["files"][0]["labels"][1]["old"] = "sometimes"
    assert any("old must be" in error for error in score.validate_manifest(bad))
    bad = copy.deepcopy(good)
    bad["entries"][0]["files"][0]["labels"][0]["expect"] = "maybe"
    assert any("expect" in error for error in score.validate_manifest(bad))
    bad = copy.deepcopy(good)
    bad["entries"][0]["requirements"] = []
    assert any("no_floor" in error for error in score.validate_manifest(bad))


def test_matching_on_a_fake_tree(tmp_path: Path) -> None:
    entry = _tiny_entry()
    tree = tmp_path / materialize.tree_name(entry["repo"], entry["commit"])
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "m.py").write_text("import torch\n" * 9, encoding="utf-8")
    findings = [
        {"code": "TU601", "path": "pkg/m.py", "line": 2},  # a report label: found
        {"code": "TU602", "path": "pkg/m.py", "line": 6},  # old-torch-only, reported: counted
        {"code": "TU601", "path": "pkg/m.py", "line": 8},  # a lookalike, reported
        {"code": "TU999", "path": str(tree / "pkg" / "m.py"), "line": 5},  # absolute path, in the old branch
        {"code": "TU601", "path": "other.py", "line": 9},  # another file's line 9: no match
    ]
    result = score.score_findings(entry, findings, tree)
    assert (result.report_found, result.report_total) == (1, 2)
    assert result.misses == ["pkg/m.py:9 torch.load"]
    assert result.old_total == 1 and result.old_reported == ["pkg/m.py:6 torch.cuda.amp.GradScaler [TU602]"]
    assert result.lookalike_total == 1 and len(result.lookalike_reported) == 1
    assert result.in_old_branch == ["pkg/m.py:5 [TU999] (gate 3)", "pkg/m.py:6 [TU602] (gate 3)"]
    assert result.required_floor == "1.13"
    rows = score.table([result], fix=False)
    assert rows[-1].startswith("| **total**") and "1/2 (50%)" in rows[-1]


def test_check_output_and_settings_floor() -> None:
    listed = json.dumps([{"code": "TU601", "path": "a.py", "line": 1}])
    assert score.parse_check_output(listed) == ([{"code": "TU601", "path": "a.py", "line": 1}], None)
    wrapped = json.dumps({"floor": {"release": "1.9", "source": "requirements.txt:1"}, "findings": []})
    assert score.parse_check_output(wrapped) == ([], "1.9")
    assert score.parse_check_output(json.dumps({"floor": "2.1", "findings": []})) == ([], "2.1")
    assert score.parse_settings_floor('select = (default)\nfloor = "1.7" (requirements.txt:1)\n') == "1.7"
    assert score.parse_settings_floor('from-version = "2.0" (the default)\n') == "2.0"
    assert score.parse_settings_floor("nothing here\n") is None


def test_changed_lines() -> None:
    before = "a\nb\nc\nd\n"
    assert score.changed_lines(before, before) == []
    assert score.changed_lines(before, "a\nB\nc\nd\n") == [2]
    assert score.changed_lines(before, "a\nc\nd\n") == [2]
    assert score.changed_lines(before, "a\nb\nnew\nc\nd\n") == [2]


def test_write_results_replaces_its_section(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n\nother\n", encoding="utf-8")
    score.write_results("## one\n", results)
    score.write_results("## two\n", results)
    text = results.read_text(encoding="utf-8")
    assert text.count(score.START) == 1 and "## two" in text and "## one" not in text and "other" in text


def test_dead_branches_follow_the_floor() -> None:
    assert score.is_dead("1.13", "1.13") and score.is_dead("1.8", "1.9") and score.is_dead("1.10.2", "2.0")
    assert not score.is_dead("2.4", "2.1") and not score.is_dead("1.10", "1.9")
    assert not score.is_dead(None, "2.0") and not score.is_dead("1.6", None)
