"""The pre-commit hooks, run by real `pre-commit` against a temporary git repository.

The hook repository is a temporary git repository holding this checkout's working tree (tracked and
untracked, not ignored, files) in one commit, so the test sees the current code, committed or not.
pre-commit clones it by path and installs it in its own virtualenv with pip: that needs the build
backend (setuptools) from the package index configured for pip (or a local one).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML comes with pre-commit, a test dependency: pip install '.[test]'")

ROOT = Path(__file__).resolve().parent.parent
LEGACY = "import torch\n\nQ, R = torch.qr(A)\n"


def _git(*args: str, cwd: Path) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=_env(), timeout=120)
    assert result.returncode == 0, f"git {' '.join(args)}: {result.stdout}{result.stderr}"
    return result.stdout.strip()


def _env(home: Path | None = None) -> dict[str, str]:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "torchup tests",
        "GIT_AUTHOR_EMAIL": "tests@example.invalid",
        "GIT_COMMITTER_NAME": "torchup tests",
        "GIT_COMMITTER_EMAIL": "tests@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    env.pop("PYTHONPATH", None)  # the hook runs the torchup installed in pre-commit's own virtualenv
    if home is not None:
        env["PRE_COMMIT_HOME"] = str(home)
    return env


def _init(path: Path) -> None:
    path.mkdir()
    _git("init", "-q", cwd=path)
    _git("config", "commit.gpgsign", "false", cwd=path)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    if shutil.which("git") is None:
        pytest.fail("git is needed to test the pre-commit hooks")
    repo = tmp_path_factory.mktemp("hooks") / "torchup"
    _init(repo)
    listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT)
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is left out
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    assert (repo / ".pre-commit-hooks.yaml").is_file()
    _git("add", "-A", cwd=repo)
    _git("commit", "-q", "-m", "the working tree of torchup", cwd=repo)
    return repo, _git("rev-parse", "HEAD", cwd=repo)


def test_hooks_are_declared() -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"torchup-check", "torchup-fix"}
    assert hooks["torchup-check"]["entry"] == "torchup check"
    assert hooks["torchup-fix"]["entry"] == "torchup fix"
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types_or"] == ["python", "pyi", "jupyter"]
        assert hook["require_serial"] is False


def _pre_commit(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env=_env(home),
        timeout=900,
    )


def test_pre_commit_runs_the_hooks(tmp_path: Path, hook_repo: tuple[Path, str]) -> None:
    pytest.importorskip("pre_commit", reason="pre-commit is a test dependency: pip install '.[test]'")
    repo, rev = hook_repo
    project = tmp_path / "project"
    _init(project)
    config = {"repos": [{"repo": str(repo), "rev": rev, "hooks": [{"id": "torchup-check"}, {"id": "torchup-fix"}]}]}
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    (project / "legacy.py").write_text(LEGACY)
    (project / "clean.py").write_text("x = 1\n")
    _git("add", "-A", cwd=project)
    home = tmp_path / "pre-commit-home"

    check = _pre_commit(project, home, "torchup-check")
    output = check.stdout + check.stderr
    if "An unexpected error has occurred" in output or "CalledProcessError" in output:
        log = home / "pre-commit.log"
        details = log.read_text() if log.is_file() else ""
        pytest.fail(f"pre-commit could not install the hook environment:\n{output}\n{details[-4000:]}")
    assert check.returncode == 1, output
    assert "torchup check" in output and "Failed" in output
    assert "legacy.py:3:8: TU103" in output
    assert (project / "legacy.py").read_text() == LEGACY  # check never writes

    fixed = _pre_commit(project, home, "torchup-fix")
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr  # pre-commit fails a hook that changed files
    assert "files were modified by this hook" in fixed.stdout
    assert (project / "legacy.py").read_text() == "import torch\n\nQ, R = torch.linalg.qr(A)\n"
    assert (project / "clean.py").read_text() == "x = 1\n"

    again = _pre_commit(project, home)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.count("Passed") == 2, again.stdout
