"""End-to-end tests of ``torchup trace`` on real programs, under torch 2.13.0 and 2.14.1."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from differential.envs import TORCH_VERSIONS, ensure_env

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).resolve().parent / "trace_programs"


def trace(version: str, tmp_path: Path, *command: str, options: tuple[str, ...] = ()) -> tuple[Any, str, int]:
    python = ensure_env(version)
    report = tmp_path / f"report-{version}.json"
    completed = subprocess.run(
        [str(python), "-m", "torchup", "trace", "--json", str(report), *options, "--", "python", *command],
        cwd=PROGRAMS,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    frames = [line for line in completed.stderr.splitlines() if line.startswith('  File "')]
    assert not [f for f in frames if str(ROOT / "torchup") in f], completed.stderr  # the user traceback only
    return json.loads(report.read_text()), completed.stdout + completed.stderr, completed.returncode


def only(findings: list[dict[str, Any]], code: str) -> dict[str, Any]:
    (finding,) = [f for f in findings if f["code"] == code]
    return finding


@pytest.fixture(params=TORCH_VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_quantization_clamp_is_reported_with_line_and_counts(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "quantize.py")
    assert code == 0
    finding = only(report["findings"], "TU201")
    assert (Path(finding["path"]).name, finding["line"], finding["api"]) == ("quantize.py", 6, "torch.clamp")
    assert (finding["calls"], finding["calls_on_bound"], finding["elements_on_bound"], finding["elements"]) == (
        2, 2, 6, 12,
    )
    assert finding["bound_kinds"] == ["scalar"]
    assert "quantize.py:6: TU201" in output and "gradient 0 instead of 1" in output


def test_clamp_min_on_exact_zeros(version: str, tmp_path: Path) -> None:
    report, _, _ = trace(version, tmp_path, "relu_zeros.py")
    finding = only(report["findings"], "TU201")
    assert (finding["line"], finding["api"], finding["elements_on_bound"], finding["elements"]) == (
        5, "Tensor.clamp", 2, 4,
    )
    assert finding["calls"] == 1  # the no_grad call is not counted


def test_no_boundary_hits_reports_nothing(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "no_hits.py")
    assert code == 0 and report["findings"] == []
    assert "no call in this run hits a torch 2.14 change" in output


def test_a_program_that_raises_keeps_its_exit_code_and_gets_its_report(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "raises.py")
    assert code == 1 and "ValueError: boom" in output
    assert only(report["findings"], "TU201")["line"] == 5
    assert report["exit_code"] == 1


def test_sys_exit_code_is_kept(version: str, tmp_path: Path) -> None:
    report, _, code = trace(version, tmp_path, "exits.py")
    assert code == 3 and report["exit_code"] == 3
    assert only(report["findings"], "TU201")["api"] == "torch.clip"


def test_removed_api_reached_dynamically(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "removed_api.py")
    finding = only(report["findings"], "TU101")
    assert (finding["line"], finding["api"]) == (6, "torch.cholesky")
    if version.startswith("2.13"):
        assert code == 0
    else:  # 2.14 raises: the program fails as it would without trace, and the report says why
        assert code == 1 and "RuntimeError" in output


def test_compile_on_python_3_15_target(version: str, tmp_path: Path) -> None:
    report, _, code = trace(version, tmp_path, "compile_use.py", options=("--target-python", "3.15"))
    assert code == 0
    assert only(report["findings"], "TU301")["line"] == 8
    report, _, _ = trace(version, tmp_path, "compile_use.py", options=("--target-python", "3.12"))
    assert [f for f in report["findings"] if f["code"] == "TU301"] == []


def test_module_form(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "-m", "pkg.job")
    assert code == 0 and "module ran __main__" in output
    finding = only(report["findings"], "TU201")
    assert (Path(finding["path"]).name, finding["line"]) == ("job.py", 4)


def test_training_losses_are_identical_with_and_without_trace(version: str, tmp_path: Path) -> None:
    python = ensure_env(version)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    plain = subprocess.run(
        [str(python), "train_mlp.py", "20"], cwd=PROGRAMS, env=env, capture_output=True, text=True, timeout=300
    )
    traced = subprocess.run(
        [str(python), "-m", "torchup.trace", "train_mlp.py", "20"],
        cwd=PROGRAMS, env=env, capture_output=True, text=True, timeout=300,
    )
    assert plain.returncode == 0 and traced.returncode == 0, traced.stderr
    losses = plain.stdout.split()
    assert len(losses) == 20 and traced.stdout.split() == losses
    assert "torchup trace" in traced.stderr


def test_usage_errors() -> None:
    python = ensure_env(TORCH_VERSIONS[0])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    missing = subprocess.run(
        [str(python), "-m", "torchup", "trace", "--", "python", "nope.py"], env=env, capture_output=True, text=True
    )
    assert missing.returncode == 2 and "no such script: nope.py" in missing.stderr
    empty = subprocess.run([str(python), "-m", "torchup", "trace"], env=env, capture_output=True, text=True)
    assert empty.returncode == 2 and "give the program to run" in empty.stderr


def test_all_calls_mode_reports_the_same(version: str, tmp_path: Path) -> None:
    """--all-calls watches through a TorchFunctionMode instead of wrappers: same findings."""
    report, _, code = trace(version, tmp_path, "quantize.py", options=("--all-calls",))
    assert code == 0
    finding = only(report["findings"], "TU201")
    assert (finding["line"], finding["elements_on_bound"], finding["elements"]) == (6, 6, 12)


def test_fmax_ties(version: str, tmp_path: Path) -> None:
    report, _, code = trace(version, tmp_path, "ties.py")
    assert code == 0
    finding = only(report["findings"], "TU202")
    assert (finding["line"], finding["api"], finding["elements_on_bound"], finding["elements"]) == (
        6, "torch.fmax", 2, 4,
    )


def test_ctrl_c_still_reports(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "interrupted.py")
    assert code == 130 and "KeyboardInterrupt" in output
    assert only(report["findings"], "TU201")["line"] == 5
