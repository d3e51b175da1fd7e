"""Which files a run checks: default excludes, .gitignore, --exclude / --extend-exclude, explicit paths.

Every source file in these trees holds the same finding (TU103 on line 2), so the set of paths with
a finding is the set of files checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torchup.cli.main import main
from torchup.discover.discovery import display_path

REPO_ROOT = Path(__file__).resolve().parent.parent
FINDING = b"import torch\nQ, R = torch.qr(A)\n"


def make_tree(root: Path, *files: str) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(FINDING)


def make_git_repo(root: Path, gitignore: str) -> None:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / ".gitignore").write_text(gitignore)


def checked(capsys, root: Path, *args: str) -> list[str]:
    """Paths (relative to ``root``, POSIX) that got a finding; asserts one finding per file."""
    code = main(["check", "--output-format", "json", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    findings = json.loads(out)
    assert code == (1 if findings else 0)
    paths = [Path(f["path"]).resolve().relative_to(root.resolve()).as_posix() for f in findings]
    assert all(f["code"] == "TU103" for f in findings), findings
    return sorted(paths)


# -- default excludes -------------------------------------------------------------------------


def test_default_excludes(capsys, tmp_path):
    make_tree(
        tmp_path,
        "main.py",
        "pkg/mod.py",
        "build.py",  # a file named like an excluded directory is fine
        "dist_utils.py",
        ".git/hooks/hook.py",
        ".venv/lib/python3.11/mod.py",
        "venv/lib/mod.py",
        "lib/python3.11/site-packages/thirdparty/mod.py",
        "build/lib/mod.py",
        "pkg/build/mod.py",
        "dist/mod.py",
        "__pycache__/mod.py",
        "pkg/__pycache__/mod.py",
        "node_modules/mod.py",
        ".tox/py311/mod.py",
        ".mypy_cache/mod.py",
    )
    assert checked(capsys, tmp_path, str(tmp_path)) == ["build.py", "dist_utils.py", "main.py", "pkg/mod.py"]


def test_a_virtual_environment_with_any_name_is_skipped(capsys, tmp_path):
    make_tree(tmp_path, "main.py", "my-env/lib/python3.11/site/mod.py", "envs/py311/bin/tool.py")
    (tmp_path / "my-env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "envs" / "py311" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert checked(capsys, tmp_path, str(tmp_path)) == ["main.py"]


def test_a_virtual_environment_named_on_the_command_line_is_walked(capsys, tmp_path):
    make_tree(tmp_path, "env/tool.py", "env/lib/site/mod.py", "env/lib/inner/pyvenv.cfg", "env/lib/inner/skip.py")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert checked(capsys, tmp_path, str(tmp_path / "env")) == ["env/lib/site/mod.py", "env/tool.py"]


def test_a_directory_without_pyvenv_cfg_is_walked(capsys, tmp_path):
    make_tree(tmp_path, "my-env/mod.py")
    assert checked(capsys, tmp_path, str(tmp_path)) == ["my-env/mod.py"]


def test_pyi_files_are_included_other_suffixes_are_not(capsys, tmp_path):
    make_tree(tmp_path, "mod.py", "stubs/mod.pyi", "notes.txt", "mod.pyx", "script", "mod.py.bak")
    assert checked(capsys, tmp_path, str(tmp_path)) == ["mod.py", "stubs/mod.pyi"]


def test_the_default_path_is_the_current_directory(capsys, tmp_path, monkeypatch):
    make_tree(tmp_path, "a.py", "sub/b.py", "build/c.py")
    monkeypatch.chdir(tmp_path)
    assert checked(capsys, tmp_path) == ["a.py", "sub/b.py"]


# -- .gitignore -------------------------------------------------------------------------------

GITIGNORE = """\
# generated code
generated/
*_pb2.py
!keep_pb2.py
/rootonly.py
docs/*.py
"""

GIT_TREE = (
    "main.py",
    "generated/a.py",
    "sub/generated/b.py",
    "generated.py",  # `generated/` matches directories only
    "foo_pb2.py",
    "sub/bar_pb2.py",
    "keep_pb2.py",
    "sub/keep_pb2.py",
    "rootonly.py",
    "sub/rootonly.py",
    "docs/conf.py",
    "docs/deep/page.py",
)


def test_gitignore_is_respected_in_a_git_repository(capsys, tmp_path):
    make_git_repo(tmp_path, GITIGNORE)
    make_tree(tmp_path, *GIT_TREE)
    assert checked(capsys, tmp_path, str(tmp_path)) == [
        "docs/deep/page.py",
        "generated.py",
        "keep_pb2.py",
        "main.py",
        "sub/keep_pb2.py",
        "sub/rootonly.py",
    ]


def test_no_respect_gitignore(capsys, tmp_path):
    make_git_repo(tmp_path, GITIGNORE)
    make_tree(tmp_path, *GIT_TREE)
    assert checked(capsys, tmp_path, "--no-respect-gitignore", str(tmp_path)) == sorted(GIT_TREE)


def test_nested_gitignore(capsys, tmp_path):
    make_git_repo(tmp_path, "*_pb2.py\n")
    make_tree(tmp_path, "local_a.py", "sub/local_b.py", "sub/other.py", "sub/deeper/local_c.py", "sub/x_pb2.py")
    (tmp_path / "sub" / ".gitignore").write_text("local_*.py\n")
    assert checked(capsys, tmp_path, str(tmp_path)) == ["local_a.py", "sub/other.py"]


def test_gitignore_of_the_repository_applies_when_walking_a_subdirectory(capsys, tmp_path):
    make_git_repo(tmp_path, GITIGNORE)
    make_tree(tmp_path, *GIT_TREE)
    assert checked(capsys, tmp_path, str(tmp_path / "sub")) == ["sub/keep_pb2.py", "sub/rootonly.py"]


def test_gitignore_applies_to_a_relative_path(capsys, tmp_path, monkeypatch):
    make_git_repo(tmp_path, GITIGNORE)
    make_tree(tmp_path, *GIT_TREE)
    monkeypatch.chdir(tmp_path / "sub")
    assert checked(capsys, tmp_path, ".") == ["sub/keep_pb2.py", "sub/rootonly.py"]


def test_gitignore_decision_does_not_depend_on_which_directory_is_named(capsys, tmp_path):
    """Without a ``.git``: naming ``root`` or ``root/sub`` must check the same files under ``sub``."""
    (tmp_path / ".gitignore").write_text("*_pb2.py\n")
    make_tree(tmp_path, "sub/x_pb2.py", "sub/mod.py")
    from_root = checked(capsys, tmp_path, str(tmp_path))
    from_sub = checked(capsys, tmp_path, str(tmp_path / "sub"))
    assert from_root == from_sub


def test_an_explicit_file_is_checked_even_if_gitignored(capsys, tmp_path):
    make_git_repo(tmp_path, GITIGNORE)
    make_tree(tmp_path, *GIT_TREE)
    explicit = [str(tmp_path / "foo_pb2.py"), str(tmp_path / "generated" / "a.py")]
    assert checked(capsys, tmp_path, *explicit) == ["foo_pb2.py", "generated/a.py"]


# -- --exclude / --extend-exclude -------------------------------------------------------------

EXCLUDE_TREE = ("main.py", "legacy/old.py", "pkg/a.py", "pkg/a_old.py", "pkg/gen/x.py", "build/b.py", "other/c.py")


def test_extend_exclude_a_directory_name(capsys, tmp_path):
    make_tree(tmp_path, *EXCLUDE_TREE)
    assert checked(capsys, tmp_path, "--extend-exclude", "legacy", str(tmp_path)) == [
        "main.py", "other/c.py", "pkg/a.py", "pkg/a_old.py", "pkg/gen/x.py",
    ]


def test_extend_exclude_a_file_glob(capsys, tmp_path):
    make_tree(tmp_path, *EXCLUDE_TREE)
    assert checked(capsys, tmp_path, "--extend-exclude", "*_old.py", str(tmp_path)) == [
        "legacy/old.py", "main.py", "other/c.py", "pkg/a.py", "pkg/gen/x.py",
    ]


def test_extend_exclude_a_path_with_a_slash(capsys, tmp_path):
    make_tree(tmp_path, *EXCLUDE_TREE)
    assert checked(capsys, tmp_path, "--extend-exclude", "pkg/gen", str(tmp_path)) == [
        "legacy/old.py", "main.py", "other/c.py", "pkg/a.py", "pkg/a_old.py",
    ]


def test_extend_exclude_repeated_and_comma_separated(capsys, tmp_path):
    make_tree(tmp_path, *EXCLUDE_TREE)
    args = ["--extend-exclude", "legacy,other", "--extend-exclude", "*_old.py", str(tmp_path)]
    assert checked(capsys, tmp_path, *args) == ["main.py", "pkg/a.py", "pkg/gen/x.py"]


def test_exclude_replaces_the_defaults(capsys, tmp_path):
    make_tree(tmp_path, *EXCLUDE_TREE)
    assert checked(capsys, tmp_path, "--exclude", "other", str(tmp_path)) == [
        "build/b.py", "legacy/old.py", "main.py", "pkg/a.py", "pkg/a_old.py", "pkg/gen/x.py",
    ]


def test_explicit_files_are_checked_even_if_excluded(capsys, tmp_path):
    make_tree(tmp_path, *EXCLUDE_TREE)
    args = ["--extend-exclude", "*_old.py", str(tmp_path / "build" / "b.py"), str(tmp_path / "pkg" / "a_old.py")]
    assert checked(capsys, tmp_path, *args) == ["build/b.py", "pkg/a_old.py"]


def test_an_explicit_excluded_directory_is_walked(capsys, tmp_path):
    make_tree(tmp_path, *EXCLUDE_TREE)
    assert checked(capsys, tmp_path, str(tmp_path / "build")) == ["build/b.py"]


def test_explicit_file_with_another_suffix_is_checked(capsys, tmp_path):
    make_tree(tmp_path, "tool")
    assert checked(capsys, tmp_path, str(tmp_path / "tool")) == ["tool"]


def test_exclude_applies_to_fix_too(capsys, tmp_path):
    make_tree(tmp_path, "main.py", "legacy/old.py")
    code = main(["fix", "--extend-exclude", "legacy", str(tmp_path)])
    capsys.readouterr()
    assert code == 0
    assert (tmp_path / "main.py").read_bytes() == b"import torch\nQ, R = torch.linalg.qr(A)\n"
    assert (tmp_path / "legacy" / "old.py").read_bytes() == FINDING


# -- each file once ---------------------------------------------------------------------------


def test_a_file_named_twice_is_checked_once(capsys, tmp_path):
    make_tree(tmp_path, "pkg/a.py")
    assert checked(capsys, tmp_path, str(tmp_path), str(tmp_path / "pkg" / "a.py")) == ["pkg/a.py"]
    assert checked(capsys, tmp_path, str(tmp_path / "pkg" / "a.py"), str(tmp_path / "pkg" / "a.py")) == ["pkg/a.py"]


def test_files_checked_counts_each_file_once(capsys, tmp_path):
    make_tree(tmp_path, "pkg/a.py", "pkg/b.py")
    code = main(["check", str(tmp_path), str(tmp_path / "pkg")])
    out, _ = capsys.readouterr()
    assert code == 1
    assert "(2 files checked)" in out


# -- through the real entry point -------------------------------------------------------------


@pytest.mark.parametrize("extra", [[], ["--no-prefilter"]], ids=["prefilter", "no-prefilter"])
def test_subprocess_walk_respects_gitignore_and_excludes(tmp_path, extra):
    make_git_repo(tmp_path, "*_pb2.py\n")
    make_tree(tmp_path, "main.py", "x_pb2.py", "build/b.py", "stub.pyi")
    result = subprocess.run(
        [sys.executable, "-m", "torchup", "check", "--output-format", "json", *extra, str(tmp_path)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1, result.stderr
    paths = sorted(Path(f["path"]).relative_to(tmp_path).as_posix() for f in json.loads(result.stdout))
    assert paths == ["main.py", "stub.pyi"]


# -- how paths are shown ---------------------------------------------------------------------------


def shown(capsys, *args: str) -> list[str]:
    """The paths the concise report shows, in order."""
    main(["check", "--output-format", "concise", "--no-cache", *args])
    return [line.split(":", 1)[0] for line in capsys.readouterr().out.splitlines() if ": TU103" in line]


def test_paths_show_one_form_relative_to_the_cwd(capsys, tmp_path, monkeypatch):
    """`./a.py` beside `sub/b.py` was two spellings; like ruff, every path is relative to the cwd."""
    make_tree(tmp_path, "a.py", "sub/b.py")
    monkeypatch.chdir(tmp_path)
    assert shown(capsys, ".") == ["a.py", "sub/b.py"]
    assert shown(capsys, "./a.py", "sub/../sub/b.py") == ["a.py", "sub/b.py"]
    assert shown(capsys, str(tmp_path)) == ["a.py", "sub/b.py"]
    assert shown(capsys, ".", "sub/b.py", "./a.py") == ["a.py", "sub/b.py"]  # each file once
    main(["check", "--output-format", "json", "--no-cache", "./sub"])
    assert [f["path"] for f in json.loads(capsys.readouterr().out)] == ["sub/b.py"]


def test_a_path_outside_the_cwd_is_absolute(capsys, tmp_path, monkeypatch):
    make_tree(tmp_path, "a.py", "sub/b.py")
    monkeypatch.chdir(tmp_path / "sub")
    # The files under the cwd stay relative even when reached from above it.
    assert shown(capsys, "..") == [str(tmp_path / "a.py"), "b.py"]
    assert shown(capsys, "../a.py", "nothing.py") == [str(tmp_path / "a.py")]
    assert capsys.readouterr().out == ""
    main(["check", "--output-format", "concise", "--no-cache", "../missing.py"])
    assert f"{tmp_path / 'missing.py'}:1:1: TU000" in capsys.readouterr().out


def test_display_path_keeps_a_parent_of_a_symbolic_link(tmp_path):
    """`link/..` is the link target's parent, not the cwd: the text alone cannot undo it."""
    make_tree(tmp_path, "real/deep/x.py", "cwd/y.py")
    (tmp_path / "cwd" / "link").symlink_to(tmp_path / "real" / "deep")
    cwd = str(tmp_path / "cwd")
    assert display_path("link/../deep/x.py", cwd) == "link/../deep/x.py"
    assert display_path("y.py", cwd) == display_path("./y.py", cwd) == display_path(f"{cwd}/y.py", cwd) == "y.py"
    assert display_path(".", cwd) == display_path(cwd, cwd) == "."
    assert display_path("../real", cwd) == str(tmp_path / "real")
    assert display_path("/", cwd) == "/"


def test_sarif_stays_repository_relative_from_a_subdirectory(capsys, tmp_path, monkeypatch):
    """The display form is not what SARIF names: %SRCROOT% is the repository root."""
    make_git_repo(tmp_path, "")
    make_tree(tmp_path, "a.py", "sub/b.py")
    monkeypatch.chdir(tmp_path / "sub")
    main(["check", "--output-format", "sarif", "--no-cache", ".."])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in results]
    assert sorted((loc["uri"], loc["uriBaseId"]) for loc in locations) == [("a.py", "%SRCROOT%"), ("sub/b.py", "%SRCROOT%")]
