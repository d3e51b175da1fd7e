"""Which Python versions code targets: --target-python, requires-python, or the interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torchup.core.python_target import parse_version, resolve_target, versions_admitted


@pytest.mark.parametrize(
    ("spec", "includes_3_15"),
    [
        (">=3.10", True),
        (">=3.10,<3.15", False),
        ("~=3.11", True),
        ("==3.12.*", False),
        (">=3.11,!=3.15.*", True),  # 3.16 and later
        ("<3.15.1", True),
        (">3.14", True),
        ("<=3.14", False),
        ("~=3.14.2", False),
    ],
)
def test_requires_python_specifiers(spec: str, includes_3_15: bool, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\nrequires-python = "{spec}"\n')
    (tmp_path / "pkg").mkdir()
    target = resolve_target(None, str(tmp_path / "pkg" / "mod.py"))
    assert target.includes_at_least((3, 15)) is includes_3_15
    assert "requires-python" in target.source
    assert versions_admitted(spec)


def test_explicit_flag_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.15"\n')
    target = resolve_target("3.12", str(tmp_path / "mod.py"))
    assert not target.includes_at_least((3, 15)) and target.source == "--target-python"


def test_falls_back_to_the_running_interpreter(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "no-requires-python"\n')
    target = resolve_target(None, str(tmp_path / "mod.py"))
    assert target.versions == {sys.version_info[:2]}


def test_bad_version_is_rejected() -> None:
    with pytest.raises(ValueError):
        parse_version("3")


def test_a_file_reached_through_a_symbolic_link_takes_its_real_projects_pyproject(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "pkg" / "deep").mkdir(parents=True)
    (real / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.15"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text('[project]\nrequires-python = "<3.13"\n')
    (elsewhere / "link").symlink_to(real / "pkg")
    through_link = resolve_target(None, str(elsewhere / "link" / "deep" / "mod.py"))
    assert through_link.includes_at_least((3, 15)) and str(real / "pyproject.toml") in through_link.source
    beside_link = resolve_target(None, str(elsewhere / "mod.py"))
    assert not beside_link.includes_at_least((3, 15))


def test_a_relative_path_is_read_from_the_working_directory_of_each_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived process (an editor's, a test run) may change directory between two calls for
    the same relative path: each answer is that of its own directory, not the first one cached."""
    for name, spec in (("old", ">=3.8,<3.12"), ("new", ">=3.14")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nrequires-python = "{spec}"\n')
    monkeypatch.chdir(tmp_path / "old")
    assert (3, 15) not in resolve_target(None, "snippet.py").versions
    monkeypatch.chdir(tmp_path / "new")
    assert (3, 15) in resolve_target(None, "snippet.py").versions
