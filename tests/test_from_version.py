"""The from-version: the torch release the code runs on today (``--from-version``, ``from-version`` in
``[tool.torchup]``, else read from the project's torch requirement, else the installed torch, else 2.0),
the rules it turns on by default, ``torchup rules --since``, and the release and change every finding
names in every output format."""

from __future__ import annotations

import json
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers import check, git_project, run_cli
from torchup.analysis.rule import release_tuple
from torchup.check.checker import Checker, applies_to_release
from torchup.cli.main import main
from torchup.core.diagnostics import Diagnostic
from torchup.rules import all_rules, rule_by_code
from torchup.run import replay
from torchup.settings import torch_requirement
from torchup.settings.provider import SettingsProvider
from torchup.settings.selection import select_rules
from torchup.settings.torch_requirement import (
    Detector,
    FromVersion,
    from_release,
    lowest_release,
    pep508_release,
)

INSTALLED_TORCH = torch_requirement.installed_torch  # (tests/conftest.py makes it find nothing)
# TU140 behaves differently since 2.14 (on by default for a floor before 2.14 only); TU101 raises since 2.14
# (always on).
SOURCE = ("import torch\nwith torch.profiler.profile(with_stack=True) as prof:\n    y = A @ A\n"
          "rows = len(prof.key_averages())\nL = torch.cholesky(A)\n")
TWO = ["TU101", "TU140"]


run = run_cli
project = git_project


def detect(root: Path, files: dict[str, str], where: str = "") -> FromVersion:
    project(root, files)
    return Detector().from_version(str(root / where))


def found_codes(out: str, wanted: list[str] = TWO) -> list[str]:
    """The codes of the concise findings in ``out``, of those in ``wanted`` (other rules may be added)."""
    return sorted(line.split()[1] for line in out.splitlines() if ": TU" in line and line.split()[1] in wanted)


# -- specifiers ------------------------------------------------------------------------------------------------

SPECIFIERS = [
    (">=2.1,<2.5", "2.1"), ("<2.5", None), ("==2.4.1", "2.4"), (">2.3", "2.3"), ("~=2.3.0", "2.3"),
    ("~=2.3", "2.3"), ("==2.4.*", "2.4"), (">=1.12", "1.12"), ("==1.12.1", "1.12"), (">=1.7", "1.7"),
    (">=0.4.1", "0.4"), ("==1.13.1", "1.13"), ("!=2.4", None), ("", None),
    (">=3.0", None), ("==2.5.0rc1", "2.5"), ("==2.4.1+cu121", "2.4"), (">= 2.1 , < 2.5", "2.1"),
    (">=2.1,!=2.1.*", "2.2"), ("===2.6.0", "2.6"), ("<=2.4", None), (">=2.1,<2.1", None), ("==2", "2.0"),
]


@pytest.mark.parametrize(("specifier", "release"), SPECIFIERS, ids=[s or "empty" for s, _ in SPECIFIERS])
def test_a_specifier_means_the_lowest_release_it_admits(specifier: str, release: str | None) -> None:
    """A range means its lowest known release (`>2.3` admits 2.3.1: 2.3); without a lower bound, none."""
    assert lowest_release(specifier) == release


@pytest.mark.parametrize(("requirement", "expected"), [
    ("torch", (True, None)),
    ("torch>=2.1", (True, "2.1")),
    ("Torch>=2.3", (True, "2.3")),
    ("torch[opt,cuda]==2.4.*; python_version > '3.9'", (True, "2.4")),
    ("torch (>=2.2)", (True, "2.2")),
    ("torch @ https://download.pytorch.org/whl/cpu/torch-2.1.0%2Bcpu-cp311-cp311-linux_x86_64.whl", (True, None)),
    ("torch<2.5", (True, None)),
    ("torchvision>=0.16", (False, None)),
    ("torch-tensorrt>=2.1", (False, None)),
])
def test_pep508_requirements(requirement: str, expected: tuple[bool, str | None]) -> None:
    assert pep508_release(requirement) == expected


@pytest.mark.parametrize(("value", "release"), [("2.4", "2.4"), ("2.4.1", "2.4"), (" 2.15 ", "2.15"), ("1.13", "1.13"),
                                                ("2.0", "2.0"), ("1.13.1", "1.13"), ("1.12", "1.12"), ("1.7.1", "1.7"),
                                                ("0.4", "0.4")])
def test_from_release_accepts_known_releases_and_patches(value: str, release: str) -> None:
    assert from_release(value) == release


@pytest.mark.parametrize("value", ["2.16", "1.14", "0.5", "3.0", "2", "2.x", "", "v2.4", 2.4, None])
def test_from_release_rejects_the_rest(value: object) -> None:
    with pytest.raises(ValueError, match=r"0\.1 to 2\.15"):
        from_release(value)


# -- the files of a project ------------------------------------------------------------------------------------

PYPROJECTS = [
    ("PEP 621 dependencies", """
        [project]
        name = "p"
        dependencies = [
            "numpy",
            "torch>=2.1,<2.5",
        ]
        """, "2.1", 5, "torch>=2.1,<2.5"),
    ("PEP 621 optional-dependencies", """
        [project]
        name = "p"
        dependencies = ["numpy"]

        [project.optional-dependencies]
        gpu = ["torch==2.3.*"]
        """, "2.3", 6, "torch==2.3.*"),
    ("Poetry, a string", """
        [tool.poetry.dependencies]
        python = "^3.10"
        torch = "^2.2"
        """, "2.2", 3, 'torch = "^2.2"'),
    ("Poetry, a table", """
        [tool.poetry.dependencies]
        torch = { version = "~2.4", source = "pytorch" }
        """, "2.4", 2, 'torch = { version = "~2.4", source = "pytorch" }'),
    ("Poetry, one table per marker", """
        [tool.poetry.dependencies]
        torch = [{ version = "2.5.*", markers = "sys_platform == 'darwin'" }, { version = ">=2.3", markers = "sys_platform == 'linux'" }]
        """, "2.3", 2, None),
    ("Poetry, a group", """
        [tool.poetry.dependencies]
        python = "^3.10"

        [tool.poetry.group.dev.dependencies]
        torch = ">=2.6"
        """, "2.6", 5, 'torch = ">=2.6"'),
    ("Poetry, the old dev-dependencies", """
        [tool.poetry.dev-dependencies]
        torch = "2.7"
        """, "2.7", 2, 'torch = "2.7"'),
    ("PDM dev-dependencies", """
        [tool.pdm.dev-dependencies]
        test = ["pytest", "torch>=2.8"]
        """, "2.8", 2, "torch>=2.8"),
    ("uv dev-dependencies", """
        [tool.uv]
        dev-dependencies = ["torch~=2.9.0"]
        """, "2.9", 2, "torch~=2.9.0"),
    ("dependency-groups", """
        [dependency-groups]
        dev = [{ include-group = "test" }, "torch==2.10.*"]
        test = ["pytest"]
        """, "2.10", 2, "torch==2.10.*"),
]


@pytest.mark.parametrize(("text", "release", "line", "shown"), [p[1:] for p in PYPROJECTS], ids=[p[0] for p in PYPROJECTS])
def test_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, release: str, line: int,
                   shown: str | None) -> None:
    monkeypatch.chdir(tmp_path)
    found = detect(tmp_path, {"pyproject.toml": text})
    assert found.release == release
    assert found.source.startswith(f"pyproject.toml:{line} `"), found.source
    if shown is not None:
        assert found.source == f"pyproject.toml:{line} `{shown}`"


def test_pyproject_without_torch_and_broken_toml_name_nothing(tmp_path: Path) -> None:
    assert detect(tmp_path / "a", {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["torchvision"]\n'}) == \
        FromVersion("2.0", "default: no torch requirement found")
    assert detect(tmp_path / "b", {"pyproject.toml": "[project\n"}).release == "2.0"


REQUIREMENTS = [
    ("comments, options, markers, a continuation, hashes", {"requirements.txt": """
        # pinned for CI
        numpy>=1.24  # a comment
        --index-url https://download.pytorch.org/whl/cpu
        -e ./vendored
        torch[opt]==2.4.1 ; sys_platform == "linux" \\
            --hash=sha256:0123456789abcdef
        """}, "2.4", "requirements.txt:5 `torch[opt]==2.4.1 ; sys_platform == \"linux\"`"),
    ("-r", {"requirements.txt": "-r base.txt\n", "base.txt": "torch~=2.3.0\n"}, "2.3", "base.txt:1 `torch~=2.3.0`"),
    ("-rFILE", {"requirements.txt": "-rbase.txt\n", "base.txt": "torch>=2.2\n"}, "2.2", "base.txt:1 `torch>=2.2`"),
    ("--requirement=", {"requirements.txt": "--requirement=ci/base.txt\n", "ci/base.txt": "torch>=2.5\n"}, "2.5",
     "ci/base.txt:1 `torch>=2.5`"),
    ("--requirement", {"requirements.txt": "--requirement ci/base.txt\n", "ci/base.txt": "torch>=2.5\n"}, "2.5",
     "ci/base.txt:1 `torch>=2.5`"),
    ("-c", {"requirements.txt": "torch\n-c constraints.txt\n", "constraints.txt": "torch==2.6.0\n"}, "2.6",
     "constraints.txt:1 `torch==2.6.0`"),
    ("--constraint", {"requirements.txt": "--constraint constraints.txt\n", "constraints.txt": "torch==2.6.*\n"}, "2.6",
     "constraints.txt:1 `torch==2.6.*`"),
    ("includes in a cycle", {"requirements.txt": "-r other.txt\n", "other.txt": "-r requirements.txt\ntorch>=2.7\n"},
     "2.7", "other.txt:2 `torch>=2.7`"),
    ("requirements-dev.txt", {"requirements-dev.txt": "torch>=2.8,<3\n"}, "2.8", "requirements-dev.txt:1 `torch>=2.8,<3`"),
    ("requirements/*.txt", {"requirements/gpu.txt": "torch==2.9.*\n"}, "2.9", "requirements/gpu.txt:1 `torch==2.9.*`"),
    ("the lowest of several", {"requirements.txt": "torch>=2.5\n", "requirements-old.txt": "torch>=2.1\n"}, "2.1",
     "requirements-old.txt:1 `torch>=2.1`"),
]


@pytest.mark.parametrize(("files", "release", "source"), [r[1:] for r in REQUIREMENTS], ids=[r[0] for r in REQUIREMENTS])
def test_requirements_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], release: str,
                            source: str) -> None:
    monkeypatch.chdir(tmp_path)
    assert detect(tmp_path, files) == FromVersion(release, source)


@pytest.mark.parametrize("requirement", ["torch @ https://example.com/torch-2.1.0-cp311-none-any.whl", "torch<2.5",
                                         "torch"])
def test_a_requirement_without_a_lower_bound_falls_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           requirement: str) -> None:
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"requirements.txt": requirement + "\n"})
    assert Detector().from_version(str(tmp_path)) == FromVersion(
        "2.0", f"default: requirements.txt:1 `{requirement}` sets no lower bound and torch is not installed")
    monkeypatch.setattr(torch_requirement, "installed_torch", lambda listed=None, read=None: ("2.12.1", None))
    assert Detector().from_version(str(tmp_path)) == FromVersion(
        "2.12", f"installed torch 2.12.1; requirements.txt:1 `{requirement}` sets no lower bound")


SETUP_CFG = """
    [metadata]
    name = p

    [options]
    packages = find:
    install_requires =
        numpy
        torch>=2.2,<3  # the CUDA wheels
    """


def test_setup_cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert detect(tmp_path / "a", {"setup.cfg": SETUP_CFG}) == FromVersion(
        "2.2", f"{Path('a', 'setup.cfg')}:8 `torch>=2.2,<3`")
    extras = textwrap.dedent(SETUP_CFG).lstrip("\n") + "\n[options.extras_require]\ngpu = torch==2.1.*\n"
    assert detect(tmp_path / "b", {"setup.cfg": extras}) == FromVersion(
        "2.1", f"{Path('b', 'setup.cfg')}:11 `torch==2.1.*`")
    one_line = "[options]\ninstall_requires = numpy; torch>=2.4\n"
    assert detect(tmp_path / "c", {"setup.cfg": one_line}).release == "2.4"


SETUP_PYS = [
    ("a module-level list", """
        from setuptools import setup

        REQUIRES = ["numpy", "torch>=2.3"]

        setup(name="p", install_requires=REQUIRES)
        """, "2.3", 3),
    ("a literal", """
        import setuptools

        setuptools.setup(
            name="p",
            install_requires=[
                "torch==2.5.*",
            ],
        )
        """, "2.5", 6),
    ("extras_require", """
        from setuptools import setup
        setup(name="p", install_requires=("numpy",), extras_require={"gpu": ["torch>=2.4"]})
        """, "2.4", 2),
]


@pytest.mark.parametrize(("text", "release", "line"), [s[1:] for s in SETUP_PYS], ids=[s[0] for s in SETUP_PYS])
def test_setup_py_is_read_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, release: str,
                                  line: int) -> None:
    monkeypatch.chdir(tmp_path)
    text = "raise SystemExit('never run')\n" + textwrap.dedent(text).lstrip("\n")
    found = detect(tmp_path, {"setup.py": text})
    assert found.release == release and found.source.startswith(f"setup.py:{line + 1} `torch")


ENVIRONMENT = """
    name: train
    channels:
      - pytorch
      - conda-forge
    dependencies:
      - python=3.11
      - {spec}        # the conda package
      - pytorch-cuda=12.1
      - pip
      - pip:
        - numpy
    """


@pytest.mark.parametrize(("spec", "release"), [
    ("pytorch=2.1", "2.1"), ("pytorch==2.1.*", "2.1"), ("pytorch>=2.1,<2.5", "2.1"), ("\"pytorch 2.1.*\"", "2.1"),
    ("conda-forge::pytorch=2.1.0=cuda120_py311h0000000_300", "2.1"), ("pytorch[version='>=2.3']", "2.3"),
    ("pytorch==2.2.0=py3.11_cuda12.1_cudnn8.9.2_0", "2.2"), ("pytorch-gpu=2.4", "2.4"),
])
def test_environment_yml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str, release: str) -> None:
    monkeypatch.chdir(tmp_path)
    found = detect(tmp_path, {"environment.yml": ENVIRONMENT.format(spec=spec)})
    assert found.release == release and found.source.startswith("environment.yml:7 `"), found.source


def test_environment_yml_pip_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = textwrap.dedent(ENVIRONMENT.format(spec="numpy")).strip() + "\n    - torch>=2.2  # from PyPI\n"
    assert detect(tmp_path, {"environment.yaml": text}) == FromVersion("2.2", "environment.yaml:12 `torch>=2.2`")
    # a bare `pytorch` sets no lower bound; pytorch-cuda is the CUDA runtime's version, not torch's
    bare = ENVIRONMENT.format(spec="pytorch")
    assert detect(tmp_path / "bare", {"environment.yml": bare}).source.endswith("sets no lower bound and torch is "
                                                                               "not installed")


# -- the nearest project ---------------------------------------------------------------------------------------


def test_the_nearest_project_naming_torch_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {
        "requirements.txt": "torch>=2.1\n",
        "pkg/deep/m.py": SOURCE,
        "sub/pyproject.toml": '[project]\nname = "sub"\ndependencies = ["numpy"]\n',  # names no torch: passed over
        "sub/m.py": SOURCE,
        "other/requirements.txt": "torch==2.6.*\n",
        "other/m.py": SOURCE,
    })
    detector = Detector()
    assert detector.from_version(str(tmp_path / "pkg" / "deep")) == FromVersion("2.1", "requirements.txt:1 `torch>=2.1`")
    assert detector.from_version(str(tmp_path / "sub")).release == "2.1"
    assert detector.from_version(str(tmp_path / "other")) == FromVersion(
        "2.6", f"{Path('other', 'requirements.txt')}:1 `torch==2.6.*`")


def test_the_search_ends_at_the_repository_root(tmp_path: Path) -> None:
    project(tmp_path, {"requirements.txt": "torch>=2.1\n"})
    project(tmp_path / "inner", {"m.py": SOURCE})  # a repository of its own
    assert Detector().from_version(str(tmp_path / "inner")).release == "2.0"


def test_each_directory_is_looked_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project(tmp_path, {"requirements.txt": "torch>=2.1\n", "a/b/c/m.py": "", "a/b/d/m.py": ""})
    listed: list[str] = []
    real = torch_requirement.os.listdir

    def counting(path: str) -> list[str]:
        listed.append(path)
        return real(path)

    monkeypatch.setattr(torch_requirement.os, "listdir", counting)
    detector = Detector()
    for where in ("a/b/c", "a/b/d", "a/b/c", "a", "a/b/d"):
        assert detector.from_version(str(tmp_path / where)).release == "2.1"
    assert sorted(listed) == sorted([str(tmp_path / p) for p in ("a/b/c", "a/b/d", "a/b", "a")] + [str(tmp_path)])


def test_what_the_detector_lists_is_what_a_replay_compares(tmp_path: Path) -> None:
    """The replay keeps the directories looked in by the names that can matter (replay.project_names):
    every file the detector read from a listing must be among them."""
    project(tmp_path, {
        "pyproject.toml": '[project]\nname = "p"\n', "setup.cfg": "[metadata]\n", "setup.py": "",
        "environment.yml": "name: x\n", "environment.yaml": "name: x\n", "requirements-ci.txt": "numpy\n",
        "requirements/gpu.txt": "torch>=2.4\n", "notes.txt": "", "pkg/m.py": "",
    })
    detector = Detector()
    detector.from_version(str(tmp_path / "pkg"))
    assert str(tmp_path / "requirements") in detector.listed
    for path in detector.read:
        directory, name = Path(path).parent, Path(path).name
        if name in detector.listed.get(str(directory), ()):
            assert name in replay.project_names(str(directory), detector.listed[str(directory)]), path
    assert "notes.txt" not in replay.project_names(str(tmp_path), detector.listed[str(tmp_path)])


# -- the installed torch ---------------------------------------------------------------------------------------


def test_the_installed_torch_is_read_from_its_metadata(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty, site = tmp_path / "empty", tmp_path / "site"
    empty.mkdir()
    (site / "torch-2.13.0.dist-info").mkdir(parents=True)
    (site / "torch-2.13.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.13.0\n")
    (site / "torchvision-0.28.0.dist-info").mkdir()
    with monkeypatch.context() as patched:
        patched.setattr(sys, "path", [str(empty), str(site / "missing.zip"), str(site)])
        read: set[str] = set()
        assert INSTALLED_TORCH({}, read) == ("2.13.0", str(site / "torch-2.13.0.dist-info" / "METADATA"))
        patched.setattr(sys, "path", [str(empty)])
        assert INSTALLED_TORCH() == (None, None)
    assert str(site / "missing.zip") in read


def test_an_egg_info_counts_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "torch-2.7.1.egg-info").mkdir()
    (tmp_path / "torch-2.7.1.egg-info" / "PKG-INFO").write_text("Name: torch\nVersion: 2.7.1\n")
    with monkeypatch.context() as patched:
        patched.setattr(sys, "path", [str(tmp_path)])
        assert INSTALLED_TORCH()[0] == "2.7.1"


@pytest.mark.parametrize(("version", "release"), [("2.13.0", "2.13"), ("2.13.0+cu130", "2.13"), ("1.9.1", "1.9"),
                                                  ("2.17.0.dev20260101", "2.15"), ("2.4.0a0+git1234", "2.4")])
def test_the_installed_torch_decides_where_no_project_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               version: str, release: str) -> None:
    project(tmp_path, {"pyproject.toml": '[project]\nname = "p"\n'})
    monkeypatch.setattr(torch_requirement, "installed_torch", lambda listed=None, read=None: (version, None))
    assert Detector().from_version(str(tmp_path)) == FromVersion(release, f"installed torch {version}")


# -- precedence and --show-settings ----------------------------------------------------------------------------


def from_line(out: str) -> str:
    [line] = [line for line in out.splitlines() if line.startswith("floor = ")]
    return line


def test_precedence_cli_config_detected_installed_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"m.py": SOURCE})
    assert from_line(run(capsys, "check", "--show-settings", ".")[1]) == \
        'floor = "2.0" (default: no torch requirement found; rules run as for 2.0; fixes are not held to a floor: '\
        '`--floor X.Y` sets one)'
    monkeypatch.setattr(torch_requirement, "installed_torch", lambda listed=None, read=None: ("2.13.0", None))
    assert from_line(run(capsys, "check", "--show-settings", ".")[1]) == 'floor = "2.13" (installed torch 2.13.0)'
    (tmp_path / "requirements.txt").write_text("torch==2.4.*\n")
    assert from_line(run(capsys, "check", "--show-settings", ".")[1]) == \
        'floor = "2.4" (requirements.txt:1 `torch==2.4.*`)'
    (tmp_path / "torchup.toml").write_text('floor = "2.6"\n')
    assert from_line(run(capsys, "check", "--show-settings", ".")[1]) == \
        f'floor = "2.6" (floor in {tmp_path / "torchup.toml"})'
    code, out, _ = run(capsys, "check", "--show-settings", "--from-version", "2.8.1", ".")
    assert code == 0 and from_line(out) == 'floor = "2.8" (--floor)'
    assert 'target-version = "2.15" (the default: the newest release known)' in out
    out = run(capsys, "check", "--show-settings", "--target-version", "2.14", "--isolated", ".")[1]
    assert 'target-version = "2.14"\n' in out and from_line(out) == \
        'floor = "2.4" (requirements.txt:1 `torch==2.4.*`)'  # (--isolated: no torchup.toml; still detected)


def test_show_settings_of_a_file_in_a_subproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"requirements.txt": "torch>=2.2\n", "sub/requirements.txt": "torch>=2.5\n", "sub/m.py": ""})
    assert from_line(run(capsys, "check", "--show-settings", "sub/m.py")[1]) == \
        f'floor = "2.5" ({Path("sub", "requirements.txt")}:1 `torch>=2.5`)'


def test_show_settings_of_a_directory_names_the_projects_below_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Each file is checked with its nearest project's from-version: a directory's settings say
    which projects below it decide otherwise (and not those that agree, nor hidden directories)."""
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"old/requirements.txt": "torch==2.3.*\n", "old/m.py": "", "new/pyproject.toml":
                       '[project]\nname = "n"\ndependencies = ["torch>=2.5"]\n', "new/m.py": "",
                       "same/setup.cfg": "[metadata]\nname = s\n", ".hidden/requirements.txt": "torch==2.1.*\n"})
    out = run(capsys, "check", "--show-settings", ".")[1]
    below = [line.strip() for line in out.splitlines() if line.startswith("  ")]
    assert below == [
        f'new: floor = "2.5" ({Path("new", "pyproject.toml")}:3 `torch>=2.5`)',
        f'old: floor = "2.3" ({Path("old", "requirements.txt")}:1 `torch==2.3.*`)',
    ]
    assert "projects below" not in run(capsys, "check", "--show-settings", "--from-version", "2.4", ".")[1]


@pytest.mark.parametrize(("value", "message"), [('"3.1"', "'3.1'"), ("2.4", "2.4"), ('"2.16"', "'2.16'")])
def test_a_bad_from_version_in_the_configuration_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         value: str, message: str) -> None:
    (tmp_path / "torchup.toml").write_text(f"from-version = {value}\n")
    (tmp_path / "m.py").write_text(SOURCE)
    code, _, err = run(capsys, "check", str(tmp_path))
    assert code == 2 and "`from-version`" in err and "torchup.toml" in err and f"got {message}" in err


def test_a_patch_release_in_the_configuration_counts_as_its_minor(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.torchup]\nfrom-version = "2.13.1"\n')
    assert from_line(run(capsys, "check", "--show-settings", str(tmp_path))[1]).startswith('floor = "2.13" (')


@pytest.mark.parametrize("value", ["9.9", "2.16", "latest"])
def test_a_bad_from_version_option_is_a_usage_error(capsys: pytest.CaptureFixture[str], value: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--from-version", value, "."])
    assert exit_info.value.code == 2
    assert "--from-version" in capsys.readouterr().err


# -- which rules run --------------------------------------------------------------------------------------------


def test_selection_follows_the_from_version() -> None:
    codes = {version: {r.code for r in select_rules(all_rules(), from_version=version)} for version in ("2.13", "2.14")}
    assert {"TU101", "TU140"} <= codes["2.13"]
    assert "TU101" in codes["2.14"] and "TU140" not in codes["2.14"]
    assert "TU140" in {r.code for r in select_rules(all_rules())}  # (None: as old as can be)
    assert "TU140" in {r.code for r in select_rules(all_rules(), ["TU140"], from_version="2.14")}
    assert "TU140" in {r.code for r in select_rules(all_rules(), None, ["TU140"], from_version="2.15")}
    assert "TU201" not in codes["2.13"]  # off by default whatever the from-version


@pytest.mark.parametrize(("options", "expected"), [
    (["--from-version", "2.13"], TWO),
    (["--from-version", "2.14"], ["TU101"]),  # the warning was already there at 2.14: not new
    (["--from-version", "2.15"], ["TU101"]),  # a break is reported even where it was already there
    (["--from-version", "2.14", "--extend-select", "TU140"], TWO),
    (["--from-version", "2.14", "--select", "TU140"], ["TU140"]),
    (["--from-version", "1.13"], TWO),
    ([], TWO),  # nothing says: 2.0
])
def test_a_warns_rule_runs_only_where_its_warning_is_new(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         options: list[str], expected: list[str]) -> None:
    project(tmp_path, {"m.py": SOURCE})
    _, out, _ = run(capsys, "check", "--no-cache", "--output-format", "concise", *options, str(tmp_path))
    assert found_codes(out) == expected


def test_a_from_version_newer_than_the_target_is_a_usage_error(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    project(tmp_path, {"m.py": SOURCE})
    status, _, err = run(capsys, "check", "--no-cache", "--from-version", "2.15", "--target-version", "2.14",
                         str(tmp_path))
    assert status == 2 and "from-version 2.15 is newer than target-version 2.14" in err
    status, _, _ = run(capsys, "check", "--no-cache", "--from-version", "2.14", "--target-version", "2.14",
                       str(tmp_path))
    assert status == 1  # (the same release: breaks already there are still reported)


@pytest.mark.parametrize(("from_version", "expected"), [
    ("2.4", ["TU622", "TU634"]),
    ("2.6", ["TU634"]),  # the import raises on 2.6 as on 2.14: the break stays; the move was already done
])
def test_a_module_removed_before_the_from_version_is_still_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], from_version: str, expected: list[str]
) -> None:
    """The shim's names moved (TU622, off once the from-version has the new home), but its other
    submodules are gone: an import of one runs on neither release (TU634, a break)."""
    project(tmp_path, {"m.py": "from torch.distributed._tensor.op_schema import OpSchema\n"
                                "from torch.distributed._tensor import DTensor\n"})
    _, out, _ = run(capsys, "check", "--no-cache", "--output-format", "concise", "--from-version", from_version,
                    str(tmp_path))
    assert found_codes(out, ["TU622", "TU634"]) == expected


@pytest.mark.parametrize(("requirement", "expected"), [("torch==2.13.*", TWO), ("torch==2.14.*", ["TU101"]),
                                                       ("torch>=2.1,<2.15", TWO), ("torch~=2.14.1", ["TU101"])])
def test_the_detected_from_version_selects(tmp_path: Path, capsys: pytest.CaptureFixture[str], requirement: str,
                                           expected: list[str]) -> None:
    project(tmp_path, {"requirements.txt": requirement + "\n", "pkg/m.py": SOURCE})
    _, out, _ = run(capsys, "check", "--no-cache", "--output-format", "concise", str(tmp_path))
    assert found_codes(out) == expected


def test_each_file_has_its_own_projects_from_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project(tmp_path, {"old/requirements.txt": "torch==2.13.*\n", "old/m.py": SOURCE,
                       "new/requirements.txt": "torch==2.14.*\n", "new/m.py": SOURCE})
    _, out, _ = run(capsys, "check", "--no-cache", "--output-format", "concise", str(tmp_path))
    found = sorted((Path(line.split(":")[0]).parent.name, line.split()[1]) for line in out.splitlines()
                   if ": TU" in line and line.split()[1] in TWO)
    assert found == [("new", "TU101"), ("old", "TU101"), ("old", "TU140")]


def test_the_cache_never_gives_one_from_versions_findings_to_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"requirements.txt": "torch==2.13.*\n", "m.py": SOURCE})
    argv = ("check", "--output-format", "concise", ".")
    assert found_codes(run(capsys, *argv)[1]) == TWO
    assert (tmp_path / ".torchup_cache").is_dir()
    assert found_codes(run(capsys, *argv)[1]) == TWO  # (from the cache)
    (tmp_path / "requirements.txt").write_text("torch==2.14.*\n")
    assert found_codes(run(capsys, *argv)[1]) == ["TU101"]
    assert found_codes(run(capsys, *argv, "--from-version", "2.13")[1]) == TWO


def test_the_fingerprint_names_the_from_version(tmp_path: Path) -> None:
    path = str(tmp_path / "m.py")
    prints = {Checker([], settings_for=SettingsProvider({"from_version": v}, isolated=True)).fingerprint(path)
              for v in ("2.13", "2.14", "2.15")}
    assert len(prints) == 3
    # (2.14 and 2.15 run the same rules today: the from-version itself still tells them apart)


# -- torchup rules --since -------------------------------------------------------------------------------------


def rows(out: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split() for line in out.splitlines()[1:]}


@pytest.mark.parametrize(("since", "target"), [("2.4", None), ("2.13", None), ("2.14", None), ("2.14", "2.14"),
                                               ("2.15", None), ("1.13", "2.14")])
def test_rules_since_lists_what_runs_by_default(capsys: pytest.CaptureFixture[str], since: str,
                                                target: str | None) -> None:
    code, out, _ = run(capsys, "rules", "--since", since, *(["--target-version", target] if target else []))
    assert code == 0 and out.splitlines()[0].split()[:7] == ["CODE", "NAME", "FIX", "DEFAULT", "RELEASE", "CHANGE",
                                                             "SUMMARY"]
    expected = {rule.code for rule in all_rules()
                if rule.on_by_default(since) and applies_to_release(rule, target or "2.15")}
    assert set(rows(out)) == expected
    assert ("TU140" in expected) is (since in ("2.4", "2.13", "1.13"))
    assert "TU101" in expected and "TU201" not in expected
    assert ("TU150" in expected) is (target is None)


def test_rules_shows_each_rules_change(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "rules")[1]
    table = rows(out)
    assert out.splitlines()[0].split()[5] == "CHANGE"
    assert table["TU101"][4:6] == [">=2.14", "raises"]
    assert table["TU140"][3:6] == ["on", ">=2.14", "behaves-differently"]
    assert table["TU140"][5] == "behaves-differently" and table["TU501"][5] == "new-feature"
    assert table["TU001"][5] == "-"
    assert set(table) == {rule.code for rule in all_rules()}


def test_rules_since_rejects_an_unknown_release(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["rules", "--since", "3.0"])
    assert exit_info.value.code == 2 and "--since" in capsys.readouterr().err


# -- what each finding says about its release --------------------------------------------------------------------

EXAMPLES = [(rule, example) for rule in all_rules() if not rule.engine_emitted for example in rule.examples
            if example.findings]


@pytest.mark.parametrize(("rule", "example"), EXAMPLES, ids=[f"{r.code}-{e.title}" for r, e in EXAMPLES])
def test_every_finding_carries_its_rules_change(rule, example) -> None:
    for diagnostic in [d for d in check(example.source, [rule.code]) if d.code == rule.code]:
        assert diagnostic.change == rule.change.value
        if diagnostic.since != rule.since:  # a rule whose facts span releases: one of its later ones
            assert rule.since is not None and diagnostic.since is not None
            assert release_tuple(diagnostic.since) > release_tuple(rule.since)
        release = "" if diagnostic.since is None else f"since torch {diagnostic.since}: "
        assert diagnostic.change_text() == release + diagnostic.change


def test_engine_findings_carry_no_change() -> None:
    [finding] = check("def broken(:\n", ["TU001"])
    assert finding.code == "TU001" and finding.change is None and finding.change_text() is None
    assert Diagnostic("TU101", "n", "m", "p", 1, 1, 1, 1, since="2.6", change="raises").change_text() == \
        "since torch 2.6: raises"
    assert Diagnostic("TU105", "n", "m", "p", 1, 1, 1, 1, change="raises").change_text() == "raises"


def formats(tmp_path: Path, capsys: pytest.CaptureFixture[str], output_format: str, *more: str) -> str:
    project(tmp_path, {"m.py": SOURCE})
    code, out, _ = run(capsys, "check", "--from-version", "2.13", "--select", "TU101,TU140", "--output-format",
                       output_format, *more, str(tmp_path / "m.py"))
    assert code == 1
    return out


def test_text_formats_name_the_release_and_the_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    concise = [line for line in formats(tmp_path, capsys, "concise").splitlines() if ": TU" in line]
    assert ": TU140 " in concise[0] and concise[0].endswith("[since torch 2.14: behaves differently]")
    assert concise[1].endswith("[since torch 2.14: raises]") and ": TU101 [*] " in concise[1]
    full = formats(tmp_path, capsys, "full").splitlines()
    headers = [line for line in full if ": TU" in line]
    assert headers == concise


def test_json_formats_have_since_and_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = json.loads(formats(tmp_path, capsys, "json"))
    assert [(r["code"], r["since"], r["change"]) for r in records] == [("TU140", "2.14", "behaves differently"),
                                                                       ("TU101", "2.14", "raises")]
    lines = [json.loads(line) for line in formats(tmp_path, capsys, "json-lines").splitlines()]
    assert lines == records


def test_sarif_has_since_and_change_properties(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = json.loads(formats(tmp_path, capsys, "sarif"))
    results = log["runs"][0]["results"]
    assert [r["properties"] for r in results] == [{"since": "2.14", "change": "behaves differently", "confidence": "certain"},
                                                  {"since": "2.14", "change": "raises", "confidence": "certain"}]
    descriptors = {d["id"]: d for d in log["runs"][0]["tool"]["driver"]["rules"]}
    assert descriptors["TU140"]["properties"]["change"] == "behaves differently" and "change" not in descriptors["TU001"]["properties"]


def test_github_and_junit_messages_name_the_release_and_the_change(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    github = formats(tmp_path, capsys, "github").splitlines()
    assert github[0].endswith("[since torch 2.14: behaves differently]") and github[1].endswith("[since torch 2.14: raises]")
    junit = ET.fromstring(formats(tmp_path, capsys, "junit").encode())
    failures = junit.findall("./testsuite/testcase/failure")
    assert [f.get("message", "").rpartition(" [")[2] for f in failures] == ["since torch 2.14: behaves differently]",
                                                                            "since torch 2.14: raises]"]
    assert all((f.text or "").endswith("]") for f in failures)


def test_findings_from_the_cache_keep_their_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    project(tmp_path, {"m.py": SOURCE})
    argv = ("check", "--from-version", "2.13", "--output-format", "json", ".")
    first = json.loads(run(capsys, *argv)[1])
    cached = json.loads(run(capsys, *argv)[1])
    assert cached == first and {(r["since"], r["change"]) for r in cached if r["code"] in TWO} == {
        ("2.14", "behaves differently"), ("2.14", "raises")}
    assert '"since": "2.14"' in next((tmp_path / ".torchup_cache").rglob("findings.json")).read_text()


def test_tu173_is_a_deprecation_on_by_default_before_2_14() -> None:
    rule = rule_by_code("TU140")
    assert rule is not None and rule.enabled_by_default and rule.change.value == "behaves differently" and rule.since == "2.14"
    assert rule.on_by_default("2.13") and not rule.on_by_default("2.14") and rule.on_by_default(None)
