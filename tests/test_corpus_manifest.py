"""The hand-labelled corpus of real code (issue 21): its manifest is well-formed, and the scoring of
bench/corpus/score.py computes recall and precision as documented. No mirrors are needed."""

from __future__ import annotations

import copy
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "corpus"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"corpus_{name}", CORPUS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


score = _load("score")
materialize = _load("materialize")

SHA_A = "a" * 40
SHA_B = "b" * 40


@pytest.fixture(scope="module")
def manifest() -> dict:
    return materialize.load_manifest()


def test_manifest_is_well_formed(manifest: dict) -> None:
    assert score.validate_manifest(manifest) == []


def test_manifest_size_and_spread(manifest: dict) -> None:
    info = score.summary(manifest)
    assert len(info["commits"]) >= 10
    assert 60 <= info["files"] <= 150
    assert info["labels"] >= 300
    assert {family for family, _ in info["per"]} <= set(score.FAMILIES)
    # every commit is a full sha, and every label's family is one the script knows
    for entry in manifest["files"]:
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"])
        for label in entry["labels"]:
            assert label["family"] in score.FAMILIES
            assert label["expect"] in score.EXPECTS


def test_manifest_has_no_duplicate_labels(manifest: dict) -> None:
    seen = set()
    for entry in manifest["files"]:
        for label in entry["labels"]:
            key = (entry["repo"], entry["commit"], entry["path"], label["line"], label["family"])
            assert key not in seen, key
            seen.add(key)


def test_families_map_to_distinct_codes() -> None:
    codes = [code for codes in score.FAMILIES.values() for code in codes]
    assert len(codes) == len(set(codes))
    assert all(re.fullmatch(r"TU\d{3}", code) for code in codes)


def test_corpus_paths_keep_two_commits_of_one_repo_apart() -> None:
    one = {"repo": "o/r", "commit": SHA_A, "path": "x/y.py"}
    two = {"repo": "o/r", "commit": SHA_B, "path": "x/y.py"}
    assert materialize.corpus_path(one) == "o+r@aaaaaaaaaaaa/x/y.py"
    assert materialize.corpus_path(one) != materialize.corpus_path(two)


def _label(line: int, family: str, expect: str, **extra: object) -> dict:
    return {"line": line, "api": "x", "family": family, "expect": expect, **extra}


SYNTHETIC = {
    "files": [
        {
            "repo": "o/r", "commit": SHA_A, "path": "a.py",
            "labels": [
                _label(1, "load", "report"),
                _label(2, "load", "report"),
                _label(3, "load", "report"),
                _label(4, "load", "lookalike"),
                _label(5, "amp", "report"),
                _label(5, "torchscript", "report"),
                _label(6, "six", "old-torch-only"),
                _label(7, "dtensor", "report", end_line=9),
            ],
        },
        {
            "repo": "o/r", "commit": SHA_B, "path": "a.py",
            "labels": [_label(1, "load", "report"), _label(2, "six", "old-torch-only")],
        },
    ]
}


def _finding(commit: str, line: int, code: str) -> dict:
    return {"path": f"o+r@{commit[:12]}/a.py", "line": line, "code": code}


def test_synthetic_manifest_is_valid() -> None:
    assert score.validate_manifest(SYNTHETIC) == []


def test_score_recall_and_precision() -> None:
    findings = [
        _finding(SHA_A, 1, "TU601"),
        _finding(SHA_A, 1, "TU601"),  # two findings on one line: one hit
        _finding(SHA_A, 2, "TU173"),  # another family's code on a load line: no hit for load
        _finding(SHA_A, 4, "TU601"),  # a look-alike: false positive
        _finding(SHA_A, 10, "TU601"),  # unlabelled: false positive
        _finding(SHA_A, 5, "TU611"),  # amp's second code
        _finding(SHA_A, 6, "TU621"),  # old-torch-only, reported
        _finding(SHA_A, 8, "TU622"),  # inside the span 7-9
        _finding(SHA_A, 9, "TU622"),  # the same label again
        _finding(SHA_B, 1, "TU601"),
        {"path": "elsewhere.py", "line": 1, "code": "TU103"},  # a code of no family: ignored
    ]
    scores = score.score(SYNTHETIC, findings)
    load = scores["load"]
    assert load.report == 4
    assert len(load.found) == 2 and len(load.missed) == 2
    assert load.recall == pytest.approx(0.5)
    assert load.lookalike_hits == [("o+r@aaaaaaaaaaaa/a.py", 4)]
    assert load.unlabelled_hits == [("o+r@aaaaaaaaaaaa/a.py", 10)]
    assert load.false_positives == 2
    assert load.precision == pytest.approx(2 / 4)
    amp = scores["amp"]
    assert (amp.recall, amp.precision) == (1.0, 1.0)
    torchscript = scores["torchscript"]
    # the TU173 finding on line 2 is not on a torchscript label: a false positive of torchscript
    assert torchscript.recall == 0.0
    assert torchscript.unlabelled_hits == [("o+r@aaaaaaaaaaaa/a.py", 2)]
    assert torchscript.precision == 0.0
    six = scores["six"]
    assert six.report == 0 and six.recall is None and six.precision is None
    assert six.old == 2
    assert six.old_reported == [("o+r@aaaaaaaaaaaa/a.py", 6)]
    assert six.old_silent == [("o+r@bbbbbbbbbbbb/a.py", 2)]
    dtensor = scores["dtensor"]
    assert (dtensor.report, len(dtensor.found), dtensor.unlabelled_hits) == (1, 1, [])
    assert scores["onnx"].recall is None  # no labels, no findings


def test_score_without_findings() -> None:
    scores = score.score(SYNTHETIC, [])
    assert scores["load"].recall == 0.0
    assert scores["load"].precision is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m["files"][0].update(commit="abc123"), "full 40-hex sha"),
        (lambda m: m["files"][0]["labels"][0].update(family="nope"), "unknown family"),
        (lambda m: m["files"][0]["labels"][0].update(expect="maybe"), "expect must be"),
        (lambda m: m["files"][0]["labels"].append(_label(1, "load", "lookalike")), "two labels of family load"),
        (lambda m: m["files"][0]["labels"][0].update(line=0), "positive int"),
        (lambda m: m["files"][0]["labels"][7].update(end_line=3), "end_line"),
        (lambda m: m["files"].append(copy.deepcopy(m["files"][1])), "listed twice"),
        (lambda m: m["files"][1].update(path="../a.py"), "relative .py path"),
        (lambda m: m["files"][1].update(labels=[]), "no labels"),
        (lambda m: m["files"][1]["labels"][0].update(extra=1), "keys must be"),
    ],
)
def test_validate_reports_problems(change, message: str) -> None:
    broken = copy.deepcopy(SYNTHETIC)
    change(broken)
    errors = score.validate_manifest(broken)
    assert any(message in error for error in errors), errors


def test_render_and_write_results(tmp_path: Path) -> None:
    findings = [_finding(SHA_A, 1, "TU601"), _finding(SHA_A, 10, "TU601")]
    (tmp_path / "o+r@aaaaaaaaaaaa").mkdir()
    (tmp_path / "o+r@aaaaaaaaaaaa" / "a.py").write_text("x = torch.load(f)\n" * 12)
    section = score.render(SYNTHETIC, score.score(SYNTHETIC, findings), tmp_path, ["--from-version"], findings, "v")
    assert section.startswith(score.HEADING) and section.endswith(score.END)
    assert "| load | TU601 | 4 | 1 | 25% |" in section
    assert "o+r@aaaaaaaaaaaa/a.py:10: x = torch.load(f)" in section
    assert "has no --from-version" in section
    results = tmp_path / "RESULTS.md"
    results.write_text("# results\n\n## older section\n\ntext\n")
    score.write_results(section, results)
    once = results.read_text()
    assert once.count(score.START) == 1 and "## older section" in once
    score.write_results(section.replace("25%", "26%"), results)
    twice = results.read_text()
    assert twice.count(score.START) == 1 and twice.count(score.HEADING) == 1 and "26%" in twice
    assert twice.startswith("# results\n\n## older section\n\ntext\n")
