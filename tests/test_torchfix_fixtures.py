"""tools/torchfix_fixtures.py on a small git repository laid out as TorchFix's: it reads the
fixtures and their expected findings at a commit, runs this checkout's torchup, and says which
expected lines torchup reports."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import load_tool


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_expected_lines_are_matched_by_line_and_code(tmp_path: Path) -> None:
    repo = tmp_path / "torchfix"
    checker = repo / "tests" / "fixtures" / "misc" / "checker"
    checker.mkdir(parents=True)
    (checker / "calls.py").write_text("import torch\nL = torch.cholesky(a)\nx = torch.logsumexp(a, 0)\n")
    (checker / "calls.txt").write_text(
        "2:5 TOR101 Use of deprecated function torch.cholesky\n3:5 TOR108 Use torch.logsumexp\n"
    )
    (checker / "no_expectations.py").write_text("x = 1\n")  # (no .txt: not a fixture)

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixtures")
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()

    tool = load_tool("torchfix_fixtures")
    fixtures = tool.compare(repo, commit)
    assert [fixture.path for fixture in fixtures] == ["tests/fixtures/misc/checker/calls.py"]
    (fixture,) = fixtures
    mapping = tool.torchfix_mapping()
    assert [fixture.answered(item, mapping) for item in fixture.expected] == ["TU101", None]
    section = tool.render(fixtures, commit)
    assert "**1 of 2 expected lines reported.**" in section
    assert "| TOR101 | 1 | 1 |" in section and "| TOR108 | 1 | 0 |" in section
