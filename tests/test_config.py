"""[tool.torchup] / torchup.toml settings, --config, --isolated, --show-settings, stdin, library API."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

import torchup
from torchup.cli.main import main

QR = "import torch\nQ, R = torch.qr(A)\nL = torch.cholesky(A)\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text(QR)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "b.py").write_text(QR)
    return tmp_path


def codes(out: str) -> list[str]:
    return sorted(line.split()[1] for line in out.splitlines() if ": TU" in line)


def test_pyproject_table_selects_and_ignores(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\n\n[tool.torchup]\nignore = ["TU101"]\n'
        'per-file-ignores = { "scripts/*.py" = ["TU103"] }\n'
    )
    code, out, _ = run(capsys, "check", "--output-format", "concise", str(project))
    assert code == 1
    assert codes(out) == ["TU103"]  # TU101 ignored everywhere, TU103 ignored under scripts/


def test_per_file_ignores_name_one_file_of_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Settings are shared by a directory's files only where no per-file-ignores apply."""
    (tmp_path / "pyproject.toml").write_text('[tool.torchup]\nper-file-ignores = { "b.py" = ["TU103"] }\n')
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(QR)
    _, out, _ = run(capsys, "check", "--output-format", "concise", "--no-cache", str(tmp_path))
    found = sorted((Path(line.split(":")[0]).name, line.split()[1]) for line in out.splitlines() if ": TU" in line)
    assert found == [("a.py", "TU101"), ("a.py", "TU103"), ("b.py", "TU101"), ("c.py", "TU101"), ("c.py", "TU103")]


def test_nearest_config_wins(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "torchup.toml").write_text('ignore = ["TU101"]\n')
    (project / "scripts" / "torchup.toml").write_text('select = ["TU101"]\n')
    _, out, _ = run(capsys, "check", "--output-format", "concise", str(project / "pkg"), str(project / "scripts"))
    assert sorted((Path(line.split(":")[0]).parent.name, line.split()[1]) for line in out.splitlines() if ": TU" in line) == [
        ("pkg", "TU103"),
        ("scripts", "TU101"),
    ]


def test_a_deep_tree_and_a_symbolic_link_find_the_right_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "real"
    deep = real / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "m.py").write_text(QR)
    (real / "torchup.toml").write_text('select = ["TU103"]\n')  # found from four levels down
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "torchup.toml").write_text('select = ["TU101"]\n')
    (elsewhere / "link").symlink_to(real / "a")  # a file reached through it takes its real project's config
    (elsewhere / "own.py").write_text(QR)
    for named in (deep, elsewhere / "link" / "b" / "c" / "m.py", elsewhere / "link"):
        _, out, _ = run(capsys, "check", "--output-format", "concise", "--follow-links", str(named), str(elsewhere / "own.py"))
        found = sorted((Path(line.split(":")[0]).name, line.split()[1]) for line in out.splitlines() if ": TU" in line)
        assert found == [("m.py", "TU103"), ("own.py", "TU101")], named


def test_pyproject_without_a_torchup_table_is_passed_over(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "torchup.toml").write_text('ignore = ["TU103"]\n')
    (project / "pkg" / "pyproject.toml").write_text('[project]\nname = "inner"\n')
    _, out, _ = run(capsys, "check", "--output-format", "concise", str(project / "pkg"))
    assert codes(out) == ["TU101"]


def test_command_line_overrides_and_isolated(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "torchup.toml").write_text('ignore = ["TU101", "TU103"]\noutput-format = "concise"\n')
    _, out, _ = run(capsys, "check", str(project / "pkg"))
    assert codes(out) == []
    _, out, _ = run(capsys, "check", "--ignore", "TU103", str(project / "pkg"))
    assert codes(out) == ["TU101"]  # the command line's --ignore replaces the file's
    _, out, _ = run(capsys, "check", "--isolated", "--output-format", "concise", str(project / "pkg"))
    assert codes(out) == ["TU101", "TU103"]


def test_explicit_config_file(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "elsewhere.toml"
    config.write_text('select = ["TU103"]\n')
    _, out, _ = run(capsys, "check", "--config", str(config), "--output-format", "concise", str(project))
    assert codes(out) == ["TU103", "TU103"]


@pytest.mark.parametrize(
    ("content", "key"),
    [
        ('colour = "always"\n', "colour"),
        ('select = "TU1"\n', "select"),
        ('select = ["ZZ9"]\n', "ZZ9"),
        ('target-version = "2.99"\n', "target-version"),
        ('target-python = "three"\n', "target-python"),
        ('unsafe-fixes = "yes"\n', "unsafe-fixes"),
        ('output-format = "xml"\n', "output-format"),
        ("per-file-ignores = 3\n", "per-file-ignores"),
        ("select = [\n", "TOML"),
    ],
)
def test_bad_config_exits_2_naming_key_and_file(
    project: Path, capsys: pytest.CaptureFixture[str], content: str, key: str
) -> None:
    (project / "torchup.toml").write_text(content)
    code, _, err = run(capsys, "check", str(project))
    assert code == 2
    assert key in err and "torchup.toml" in err and "Traceback" not in err


def test_show_settings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.torchup]\nextend-select = ["TU201"]\ntarget-python = "3.12"\n')
    code, out, _ = run(capsys, "check", "--show-settings", "--unsafe-fixes", str(project))
    assert code == 0
    assert f"config file = {project / 'pyproject.toml'}" in out
    assert "extend-select = ['TU201']" in out and 'target-python = "3.12"' in out and "unsafe-fixes = true" in out


@pytest.mark.parametrize(
    ("options", "extend_select", "ignore"),
    [
        ([], "['TU201']", "['TU101']"),  # the configuration's selection
        (["--extend-select", "TU202"], "['TU202']", "['TU101']"),  # --extend-select replaces its list only
        (["--select", "TU1"], "[]", "[]"),  # --select starts afresh, as ruff's does
        (["--select", "TU1", "--ignore", "TU103"], "[]", "['TU103']"),
    ],
)
def test_select_on_the_command_line_starts_the_selection_afresh(
    project: Path, capsys: pytest.CaptureFixture[str], options: list[str], extend_select: str, ignore: str
) -> None:
    (project / "pyproject.toml").write_text('[tool.torchup]\nextend-select = ["TU201"]\nignore = ["TU101"]\n')
    code, out, _ = run(capsys, "check", "--show-settings", *options, str(project))
    assert code == 0
    assert f"\nextend-select = {extend_select}\n" in out and f"\nignore = {ignore}\n" in out


def test_select_afresh_reports_only_what_the_command_line_selects(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text('[tool.torchup]\nextend-select = ["TU201"]\nignore = ["TU103"]\n')
    (project / "m.py").write_text("import torch\nQ, R = torch.qr(A)\ny = torch.clamp(x, 0, 1)\n")
    code, out, _ = run(capsys, "check", "--output-format", "concise", "--select", "TU103", str(project))
    assert code == 1
    assert "TU103" in out and "TU201" not in out


def test_target_version_limits_rules(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(QR)
    code, out, _ = run(capsys, "check", "--target-version", "2.14", "--output-format", "concise", str(path))
    assert code == 1 and codes(out) == ["TU101", "TU103"]


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(QR.encode())))
    code, out, _ = run(capsys, "check", "-", "--stdin-filename", "model.py", "--output-format", "concise")
    assert code == 1 and out.startswith("model.py:2:8: TU103")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(QR.encode())))
    code, out, err = run(capsys, "fix", "-", "--stdin-filename", "model.py")
    assert code == 0 and "torch.linalg.qr(A)" in out and "torch.linalg.cholesky(A)" in out and err == ""


def test_library_api() -> None:
    findings = torchup.check_source(QR, path="model.py")
    assert [(f.code, f.line, f.path) for f in findings] == [("TU103", 2, "model.py"), ("TU101", 3, "model.py")]
    assert [f.code for f in torchup.check_source(QR, select=["TU101"])] == ["TU101"]
    result = torchup.fix_source(QR)
    assert result.source == "import torch\nQ, R = torch.linalg.qr(A)\nL = torch.linalg.cholesky(A)\n"
    assert sorted(f.code for f in result.fixed) == ["TU101", "TU103"] and result.remaining == []
    assert [f.code for f in torchup.check_source(b"\xff\xfe bad")] == ["TU001"]
    assert isinstance(result, torchup.FixResult)
