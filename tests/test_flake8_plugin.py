"""The flake8 plugin: real `flake8 --select TU` sees torchup's findings, positions and suppressions.

The plugin is found through the `flake8.extension` entry point of the *installed* torchup
distribution (`pip install .` or `pip install '.[test]'`, as `.ci/run` does); the subprocesses put
this checkout first on PYTHONPATH, so the code they run is the working tree's.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from torchup.check.checker import Checker
from torchup.core.source import SourceFile
from torchup.flake8_plugin import TorchupChecker
from torchup.rules import all_rules
from torchup.settings.selection import select_rules

ROOT = Path(__file__).resolve().parent.parent

SAMPLE = """\
import torch
from torch.profiler import profile

Q, R = torch.qr(A)
L = torch.cholesky(A)  # noqa: TU101
x = "é"; U = torch.cholesky(B, upper=True)
with profile(use_cuda=True) as prof:
    y = torch.clamp(x, 0, 1)
"""


def _entry_point() -> metadata.EntryPoint | None:
    return next((ep for ep in metadata.entry_points(group="flake8.extension") if ep.name == "TU"), None)


def _flake8(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def _reported(output: str) -> list[tuple[int, int, str]]:
    return [
        (int(m.group(1)), int(m.group(2)), m.group(3))
        for m in re.finditer(r"^[^:\n]+:(\d+):(\d+): (\w+) ", output, re.MULTILINE)
    ]


@pytest.fixture(scope="module", autouse=True)
def plugin_is_registered() -> None:
    pytest.importorskip("flake8", reason="flake8 is a test dependency: pip install '.[test]'")
    entry = _entry_point()
    if entry is None:
        pytest.fail(
            "the flake8 plugin is not registered: no `TU` entry point in the `flake8.extension` group of the "
            "installed torchup. Install this checkout (`python3 -m pip install .`) and run the tests again."
        )
    assert entry.value == "torchup.flake8_plugin:TorchupChecker"


def test_flake8_reports_torchup_findings(tmp_path: Path) -> None:
    (tmp_path / "sample.py").write_text(SAMPLE, encoding="utf-8")
    result = _flake8("--select", "TU", "sample.py", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert _reported(result.stdout) == [(4, 8, "TU103"), (6, 14, "TU101"), (7, 14, "TU110")], result.stdout
    assert "sample.py:4:8: TU103 `torch.qr` is removed in torch 2.14" in result.stdout


def test_flake8_reports_what_torchup_check_reports(tmp_path: Path) -> None:
    (tmp_path / "sample.py").write_text(SAMPLE, encoding="utf-8")
    source = SourceFile.from_bytes("sample.py", SAMPLE.encode())
    expected = [(d.line, d.column, d.code) for d in Checker(select_rules(all_rules())).analyze(source).diagnostics]
    assert _reported(_flake8("--select", "TU", "sample.py", cwd=tmp_path).stdout) == expected


def test_flake8_options_and_its_own_filters(tmp_path: Path) -> None:
    (tmp_path / "sample.py").write_text(SAMPLE, encoding="utf-8")
    # Off-by-default rules only on request, as with `torchup check --extend-select`.
    extended = _flake8("--select", "TU", "--torchup-extend-select", "TU201", "sample.py", cwd=tmp_path)
    assert "TU201" not in _flake8("--select", "TU", "sample.py", cwd=tmp_path).stdout
    assert [c for _, _, c in _reported(extended.stdout)].count("TU201") == 1, extended.stdout
    # flake8's own selection and noqa apply on top.
    ignored = _flake8("--select", "TU", "--extend-ignore", "TU103", "sample.py", cwd=tmp_path)
    assert [c for _, _, c in _reported(ignored.stdout)] == ["TU101", "TU110"]
    (tmp_path / "silenced.py").write_text("import torch\nQ, R = torch.qr(A)  # noqa\n")
    assert _flake8("--select", "TU", "silenced.py", cwd=tmp_path).returncode == 0
    # Unused torchup noqa comments, when asked for.
    (tmp_path / "stale.py").write_text("import torch\nQ, R = torch.linalg.qr(A)  # noqa: TU103\n")
    stale = _flake8("--select", "TU", "--torchup-extend-select", "TU002", "stale.py", cwd=tmp_path)
    assert _reported(stale.stdout) == [(2, 28, "TU002")], stale.stdout
    # A bad option value is an error, not a crash.
    bad = _flake8("--select", "TU", "--torchup-target-python", "three", "sample.py", cwd=tmp_path)
    assert bad.returncode != 0 and "--torchup-target-python" in bad.stderr
    unknown = _flake8("--select", "TU", "--torchup-extend-select", "TU9", "sample.py", cwd=tmp_path)
    assert unknown.returncode != 0 and "--torchup-extend-select 'TU9' matches no rule" in unknown.stderr


def test_flake8_follows_the_torchup_configuration(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.torchup]\nignore = ["TU103"]\nextend-select = ["TU201"]\n')
    (tmp_path / "sample.py").write_text(SAMPLE, encoding="utf-8")
    result = _flake8("--select", "TU", "sample.py", cwd=tmp_path)
    assert [c for _, _, c in _reported(result.stdout)] == ["TU101", "TU110", "TU201"], result.stdout


def test_plugin_interface_in_process() -> None:
    TorchupChecker.parse_options(type("Options", (), {})())  # flake8 defaults: nothing set
    lines = SAMPLE.splitlines(keepends=True)
    plugin = TorchupChecker(ast.parse(SAMPLE), "sample.py", lines)
    results = list(plugin.run())
    assert [(line, col, text.split()[0]) for line, col, text, _ in results] == [
        (4, 7, "TU103"),
        (6, 13, "TU101"),
        (7, 13, "TU110"),
    ]
    assert all(kind is TorchupChecker for *_, kind in results)
    assert TorchupChecker.name == "torchup" and TorchupChecker.version
