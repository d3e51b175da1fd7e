"""The hand-labelled corpus of real code (issues 21, 22): its manifest is well-formed, and the scoring of
bench/corpus/score.py computes recall and precision (per family, per confidence, per receiver kind) as
documented. No mirrors are needed."""

from __future__ import annotations

import copy
import importlib.util
import re
import sys
from collections import Counter
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
    assert len(info["commits"]) >= 30
    assert 200 <= info["files"] <= 400
    assert info["labels"] >= 700
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


def test_issue_22_corpus_spread(manifest: dict) -> None:
    """The method rules' and the profiler's corpus: 20+ repositories, 150+ method labels of which 40+
    look-alikes and 30+ tensors no single line shows, and every method label says why."""
    new_families = {"methods", "profiler-use-cuda"}
    repos = {entry["repo"] for entry in manifest["files"]
             if any(label["family"] in new_families for label in entry["labels"])}
    assert len(repos) >= 20
    methods = [label for entry in manifest["files"] for label in entry["labels"] if label["family"] == "methods"]
    expects = Counter(label["expect"] for label in methods)
    assert len(methods) >= 150
    assert expects["lookalike"] >= 40 and expects["report"] >= 60
    assert sum(score.hard_positive(label) for label in methods) >= 30
    assert all(score.receiver_kind(label) in score.RECEIVER_KINDS for label in methods)
    # look-alikes of several kinds, not only one library's objects
    assert len({score.receiver_kind(label) for label in methods if label["expect"] == "lookalike"}) >= 5
    profiler = Counter(label["expect"] for entry in manifest["files"] for label in entry["labels"]
                       if label["family"] == "profiler-use-cuda")
    assert profiler["report"] >= 8 and profiler["lookalike"] >= 15
    kinds = Counter(label["expect"] for entry in manifest["files"] for label in entry["labels"]
                    if label["family"] == "argument-kinds")
    assert kinds["report"] >= 1 and kinds["lookalike"] >= 10


def test_files_for_new_families_say_what_they_are_labelled_for(manifest: dict) -> None:
    for entry in manifest["files"]:
        own = {label["family"] for label in entry["labels"]}
        if "families" in entry:
            assert own <= set(entry["families"]), entry["path"]
            assert set(entry["families"]) <= {
                "methods", "profiler-use-cuda", "quantization", "ddp-broadcast-buffers", "argument-kinds",
                "sampler-init", "hub-trust", "onnx-removed", "has-flags",
                "elastic-logs", "cpp-extension", "export-strict",
            }, entry["path"]


def test_manifest_names_no_machine_path(manifest: dict) -> None:
    text = (CORPUS / "manifest.json").read_text(encoding="utf-8")
    assert not re.search(r"/(work|root|home)/", text)


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
        (lambda m: m["files"][1].update(families=["nope"]), "families must be"),
        (lambda m: m["files"][1].update(families=[]), "families must be"),
        (lambda m: m["files"][1].update(families=["six", "six"]), "families must be"),
        (lambda m: m["files"][1].update(families=["load"]), "not in the file's families"),
        (lambda m: m["files"][1].update(other=1), "keys must be"),
        (lambda m: m["files"][0]["labels"][0].update(receiver="evident: x"), "receiver is for"),
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


# --- issue 22: the method rules' receivers, per-confidence scoring, families, --family --------------------


def _method(line: int, expect: str, receiver: str, family: str = "methods") -> dict:
    return {"line": line, "api": ".cholesky", "family": family, "expect": expect, "receiver": receiver}


METHODS = {
    "files": [
        {
            "repo": "o/m", "commit": SHA_A, "path": "m.py", "families": ["methods"],
            "labels": [
                _method(1, "report", "evident: x = torch.randn(3, 3)"),
                _method(2, "report", "parameter: m of f(m)"),
                _method(3, "report", "loop: x for x in xs.unbind(0)"),
                _method(4, "report", "function: torch.symeig(a)"),
                _method(5, "lookalike", "lazy-tensor: a LazyTensor"),
                _method(6, "lookalike", "numpy: an ndarray"),
                _method(7, "old-torch-only", "function: torch.solve on a torch < 1.8 branch"),
            ],
        },
        {
            "repo": "o/p", "commit": SHA_B, "path": "p.py", "families": ["profiler-use-cuda"],
            "labels": [
                {"line": 3, "end_line": 4, "api": "torch.autograd.profiler.profile", "family": "profiler-use-cuda",
                 "expect": "report"},
                {"line": 8, "api": "use_cuda=", "family": "profiler-use-cuda", "expect": "lookalike"},
            ],
        },
    ]
}


def _mfinding(line: int, code: str = "TU102", confidence: str | None = None, path: str = "o+m@aaaaaaaaaaaa/m.py"):
    finding = {"path": path, "line": line, "code": code}
    if confidence is not None:
        finding["confidence"] = confidence
    return finding


def test_methods_manifest_is_valid() -> None:
    assert score.validate_manifest(METHODS) == []
    assert score.receiver_kind(METHODS["files"][0]["labels"][1]) == "parameter"
    hard = [score.hard_positive(label) for label in METHODS["files"][0]["labels"]]
    assert hard == [False, True, True, False, False, False, False]


@pytest.mark.parametrize(
    ("receiver", "expect", "message"),
    [
        (None, "report", "receiver must be"),
        ("parameter", "report", "receiver must be"),
        ("parameter:   ", "report", "receiver must be"),
        ("vibes: trust me", "report", "is not one of"),
        ("numpy: an ndarray", "report", "must be a tensor"),
        ("parameter: m", "lookalike", "cannot be a tensor"),
        ("function: torch.solve", "lookalike", "cannot be a tensor"),
    ],
)
def test_receiver_validation(receiver, expect: str, message: str) -> None:
    broken = copy.deepcopy(METHODS)
    label = broken["files"][0]["labels"][0]
    label["expect"] = expect
    if receiver is None:
        del label["receiver"]
    else:
        label["receiver"] = receiver
    errors = score.validate_manifest(broken)
    assert any(message in error for error in errors), errors


def test_score_per_confidence() -> None:
    findings = [
        _mfinding(1),  # no confidence field: certain
        _mfinding(2, confidence="possible"),
        _mfinding(2, "TU105", confidence="likely"),  # the line takes its most confident finding: likely
        _mfinding(3, confidence="possible"),
        _mfinding(5, confidence="likely"),  # a look-alike: FP, likely
        _mfinding(9, "TU104", confidence="possible"),  # unlabelled: FP, possible
        _mfinding(10, confidence="certain"),  # unlabelled: FP, certain
        _mfinding(7, "TU105", confidence="certain"),  # old-torch-only, reported
    ]
    methods = score.score(METHODS, findings)["methods"]
    assert methods.report == 4 and len(methods.found) == 3
    assert [methods.true_positives_at(level) for level in score.CONFIDENCES] == [1, 1, 1]
    assert [methods.false_positives_at(level) for level in score.CONFIDENCES] == [1, 1, 1]
    assert methods.cumulative(1) == (pytest.approx(1 / 4), pytest.approx(1 / 2))
    assert methods.cumulative(2) == (pytest.approx(2 / 4), pytest.approx(2 / 4))
    assert methods.cumulative(3) == (methods.recall, methods.precision) == (pytest.approx(3 / 4), pytest.approx(3 / 6))
    assert methods.old_reported == [("o+m@aaaaaaaaaaaa/m.py", 7)]
    assert methods.confidence[("o+m@aaaaaaaaaaaa/m.py", 2)] == "likely"
    assert methods.receivers[("report", "parameter")] == [1, 1]
    assert methods.receivers[("report", "function")] == [1, 0]
    assert methods.receivers[("lookalike", "lazy-tensor")] == [1, 1]
    assert methods.receivers[("lookalike", "numpy")] == [1, 0]
    assert ("old-torch-only", "function") not in methods.receivers


def test_score_without_confidence_counts_everything_as_certain() -> None:
    methods = score.score(METHODS, [_mfinding(1), _mfinding(5), _mfinding(9)])["methods"]
    assert [methods.true_positives_at(level) for level in score.CONFIDENCES] == [1, 0, 0]
    assert [methods.false_positives_at(level) for level in score.CONFIDENCES] == [2, 0, 0]
    assert methods.cumulative(1) == methods.cumulative(3) == (methods.recall, methods.precision)


def test_unknown_confidence_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown confidence"):
        score.score(METHODS, [_mfinding(1, confidence="sure")])


def test_files_score_only_the_families_they_are_labelled_for() -> None:
    findings = [
        _mfinding(20, "TU601"),  # load's code in a file labelled for methods only: not scored
        _mfinding(4, "TU110", path="o+p@bbbbbbbbbbbb/p.py"),  # in the span 3-4
        _mfinding(8, "TU110", path="o+p@bbbbbbbbbbbb/p.py"),  # a look-alike
        _mfinding(1, "TU102", path="o+p@bbbbbbbbbbbb/p.py"),  # methods' code in the profiler file: not scored
    ]
    scores = score.score(METHODS, findings)
    assert scores["load"].unlabelled_hits == [] and scores["load"].precision is None
    assert scores["methods"].unlabelled_hits == []
    profiler = scores["profiler-use-cuda"]
    assert (profiler.recall, len(profiler.lookalike_hits), profiler.precision) == (1.0, 1, 0.5)


def test_select_keeps_the_files_labelled_for_the_families() -> None:
    both = {"files": copy.deepcopy(SYNTHETIC["files"]) + copy.deepcopy(METHODS["files"])}
    chosen = score.select(both, ["methods"])
    paths = [entry["path"] for entry in chosen["files"]]
    # the issue-21 files are labelled for every family (they keep no labels here); p.py is not labelled for methods
    assert paths == ["a.py", "a.py", "m.py"]
    assert chosen["files"][0]["labels"] == [] and len(chosen["files"][2]["labels"]) == 7
    scores = score.score(chosen, [_mfinding(1), {"path": "o+r@aaaaaaaaaaaa/a.py", "line": 3, "code": "TU105"}],
                         ["methods"])
    assert list(scores) == ["methods"]
    assert scores["methods"].unlabelled_hits == [("o+r@aaaaaaaaaaaa/a.py", 3)]


def test_render_per_confidence_and_receiver(tmp_path: Path) -> None:
    (tmp_path / "o+m@aaaaaaaaaaaa").mkdir()
    (tmp_path / "o+m@aaaaaaaaaaaa" / "m.py").write_text("y = x.cholesky()\n" * 12)
    findings = [_mfinding(1), _mfinding(2, confidence="possible"), _mfinding(5, confidence="likely")]
    scores = score.score(METHODS, findings, ["methods", "profiler-use-cuda"])
    section = score.render(METHODS, scores, tmp_path, [], findings, "v")
    assert "Only the families methods, profiler-use-cuda are scored" in section
    assert "| methods | TU102, TU104, TU105 | 4 | 2 | 50% | 2 | 1 | 0 | 67% | 1 (0) |" in section
    assert "| methods | 1 | 0 | 1 | 0 | 1 | 0 | 25% / 100% | 25% / 50% | 50% / 67% |" in section
    assert "| methods | report | parameter | 1 | 1 | 100% |" in section
    assert "| methods | lookalike | lazy-tensor | 1 | 1 | 100% |" in section
    assert "likely       o+m@aaaaaaaaaaaa/m.py:5: y = x.cholesky()" in section
    assert "loop         o+m@aaaaaaaaaaaa/m.py:3: y = x.cholesky()" in section  # a missed label's receiver kind
    assert "| load |" not in section


def test_write_results_replaces_the_section_under_its_earlier_heading(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text("# results\n\n## Recall and precision on real code (issue 21)\n\n"
                       f"{score.START}\nold\n{score.END}\n\n## later\n")
    score.write_results(f"{score.HEADING}\n\n{score.START}\nnew\n{score.END}", results)
    text = results.read_text()
    assert "(issue 21)" not in text and "old" not in text
    assert text == f"# results\n\n{score.HEADING}\n\n{score.START}\nnew\n{score.END}\n\n## later\n"


def test_family_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        score.main(["--family", "methods", "--write-results"])
    assert exit_info.value.code == 2
    assert "leave out --family" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        score.main(["--family", "nope"])
    assert exit_info.value.code == 2
