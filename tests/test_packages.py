"""A rule that leaves a package's own files alone (``Rule.not_in_package``): TU705 inside torch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torchup.cli.main import main
from torchup.core.packages import forget_packages, top_package

PRIVATE = "from torch.utils.data._utils.collate import default_collate\n\nbatch = default_collate([1, 2])\n"


def package(root: Path, *parts: str) -> Path:
    """``root/parts...``, each directory with an `__init__.py`."""
    directory = root
    for part in parts:
        directory = directory / part
        directory.mkdir(exist_ok=True)
        (directory / "__init__.py").touch()
    return directory


def test_the_outermost_package_with_init_files_all_the_way_down(tmp_path: Path) -> None:
    forget_packages()
    inner = package(tmp_path, "torch", "utils", "data")
    assert top_package(str(inner / "sampler.py")) == "torch"
    assert top_package(str(tmp_path / "torch" / "__init__.py")) == "torch"
    assert top_package(str(tmp_path / "script.py")) is None
    loose = tmp_path / "torch" / "scripts"  # no __init__.py: not part of the package
    loose.mkdir()
    assert top_package(str(loose / "tool.py")) is None
    stubs = tmp_path / "stubs" / "torch"
    stubs.mkdir(parents=True)
    (stubs / "__init__.pyi").touch()
    assert top_package(str(stubs / "nn.pyi")) == "torch"
    assert top_package("<stdin>") is None


def findings(capsys: pytest.CaptureFixture[str], *args: str) -> list[tuple[str, str]]:
    capsys.readouterr()
    main(["check", "--no-cache", "--isolated", "--output-format", "json", "--select", "TU705", *args])
    return sorted((Path(f["path"]).name, f["code"]) for f in json.loads(capsys.readouterr().out or "[]"))


@pytest.mark.parametrize("prefilter", [(), ("--no-prefilter",)])
def test_private_paths_inside_torch_itself_are_not_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prefilter: tuple[str, ...]
) -> None:
    forget_packages()
    own = package(tmp_path, "torch", "utils")
    (own / "helpers.py").write_text(PRIVATE)
    user = package(tmp_path, "mytorchapp")  # a package of its own that uses torch
    (user / "train.py").write_text(PRIVATE)
    (tmp_path / "script.py").write_text(PRIVATE)
    found = findings(capsys, *prefilter, str(tmp_path))
    assert found == [("script.py", "TU705"), ("script.py", "TU705"), ("train.py", "TU705"), ("train.py", "TU705")]
