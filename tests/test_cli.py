"""The command line, end to end: sub-commands, options, exit codes and output formats.

Most tests call ``torchup.cli.main.main`` in-process (output through ``capsys``); a few run
``python -m torchup`` in a subprocess, as a user would.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

import torchup
from torchup.cli.main import main

REPO_ROOT = Path(__file__).resolve().parent.parent
ALL_CODES = [
    "TU000", "TU001", "TU002", "TU101", "TU102", "TU103", "TU104", "TU105", "TU110", "TU120", "TU130", "TU140",
    "TU150", "TU151", "TU152", "TU160", "TU161", "TU170", "TU171", "TU172", "TU173", "TU201", "TU202",
    "TU301", "TU401", "TU501", "TU502", "TU503", "TU504", "TU505",
    "TU601", "TU602", "TU603", "TU604", "TU605", "TU606", "TU607", "TU608", "TU609", "TU610", "TU611", "TU612", "TU613", "TU614", "TU615", "TU616", "TU617", "TU618",
    "TU619",
    "TU620", "TU621", "TU622", "TU623", "TU624", "TU625", "TU626", "TU627", "TU628", "TU629",
    "TU630", "TU631", "TU632", "TU633", "TU634", "TU635", "TU636", "TU637", "TU638", "TU639", "TU640", "TU641", "TU642", "TU643", "TU644",
    "TU701", "TU702", "TU703", "TU704", "TU705", "TU706", "TU707", "TU708", "TU711", "TU712", "TU713", "TU801",
]
ANSI = "\033["

QR_FILE = "import torch\ntorch.qr(A)\n"
# TU101 on line 2, TU103 on line 3; both with safe fixes.
TWO_RULES_FILE = "import torch\nL = torch.cholesky(A)\nQ, R = torch.qr(A)\n"
# `m` is an untyped parameter: it may not be a tensor, so the fix is unsafe.
UNSAFE_FILE = "import torch\n\ndef factor(m):\n    return m.cholesky()\n"
UNSAFE_FIXED = "import torch\n\ndef factor(m):\n    return torch.linalg.cholesky(m)\n"


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch):
    """Colour decisions must come from the stream, not from the developer's shell."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *args: str) -> tuple[int, list[dict]]:
    code, out, err = cli(capsys, "check", "--output-format", "json", *args)
    assert "Traceback" not in out + err
    return code, json.loads(out)


def subprocess_cli(*args: str, cwd: Path = REPO_ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = dict(os.environ if env is None else env)
    environment["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + environment.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "torchup", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


# -- version, help --------------------------------------------------------------------------


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"torchup {torchup.__version__}\n"


def test_help_lists_the_subcommands(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: torchup")
    for command in ("check", "fix", "rule", "rules"):
        assert re.search(rf"^\s+{command}\s+\S", out, re.MULTILINE), command


def test_check_help_lists_the_options(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for option in ("--select", "--extend-select", "--ignore", "--exclude", "--extend-exclude", "--unsafe-fixes",
                   "--diff", "--output-format", "--no-prefilter", "--fix"):
        assert option in out


def test_no_command_prints_help_and_exits_2(capsys):
    code, out, _ = cli(capsys)
    assert code == 2
    assert "usage: torchup" in out


def test_unknown_option_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--no-such-option"])
    assert exit_info.value.code == 2
    assert "--no-such-option" in capsys.readouterr().err


# -- rules, rule ----------------------------------------------------------------------------


def test_rules_lists_every_code_with_fix_kind_and_default(capsys):
    code, out, _ = cli(capsys, "rules")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["CODE", "NAME", "FIX", "DEFAULT"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert sorted(rows) == ALL_CODES
    for row in rows.values():
        assert row[2] in {"safe", "unsafe", "safe/unsafe", "none"}
        assert row[3] in {"on", "off"}
    assert rows["TU000"][1:4] == ["io-error", "none", "on"]
    assert rows["TU001"][1:4] == ["invalid-syntax", "none", "on"]
    assert rows["TU101"][1:4] == ["torch-cholesky-removed", "safe", "on"]
    assert rows["TU102"][2] == "safe/unsafe"
    assert rows["TU103"][2] == "safe"


def test_rules_table_matches_the_registry(capsys):
    from torchup.rules import all_rules

    _, out, _ = cli(capsys, "rules")
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    for rule in all_rules():
        assert rows[rule.code][1] == rule.name
        assert rows[rule.code][2] == rule.fix_availability.value
        assert rows[rule.code][3] == ("on" if rule.enabled_by_default else "off")
    assert rows["TU101"][4] == ">=2.14" and rows["TU150"][4] == ">=2.15" and rows["TU170"][4] == ">=2.14,<2.15"
    assert rows["TU301"][4] == "<2.15"
    assert rows["TU000"][4] == "any"


def test_rule_prints_its_documentation(capsys):
    code, out, _ = cli(capsys, "rule", "TU101")
    assert code == 0
    assert out.startswith("# TU101 torch-cholesky-removed\n")
    headings = re.findall(r"^## (.+)$", out, re.MULTILINE)
    for section in ("What it does", "Why", "Fix", "Fix safety", "Examples"):
        assert section in headings
    # Sections come in reading order.
    assert headings.index("What it does") < headings.index("Why") < headings.index("Fix") \
        < headings.index("Fix safety") < headings.index("Examples")
    assert "torch.linalg.cholesky" in out
    assert "```python" in out


def test_rule_code_is_case_insensitive(capsys):
    code, out, _ = cli(capsys, "rule", "tu103")
    assert code == 0
    assert out.startswith("# TU103 ")


def test_unknown_rule_exits_2_with_a_message(capsys):
    code, out, err = cli(capsys, "rule", "XX999")
    assert code == 2
    assert out == ""
    assert "XX999" in err
    assert "TU101" in err  # the message lists the known codes


def test_rule_without_a_code_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["rule"])
    assert exit_info.value.code == 2


# -- selection ------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
def test_unknown_selector_exits_2(capsys, tmp_path, option):
    path = write(tmp_path / "a.py", QR_FILE)
    code, out, err = cli(capsys, "check", option, "ZZ", str(path))
    assert code == 2
    assert "ZZ" in err
    assert "TU103" not in out  # nothing was checked


def codes_of(findings: list[dict]) -> list[str]:
    return [finding["code"] for finding in findings]


def test_default_selection(capsys, tmp_path):
    path = write(tmp_path / "a.py", TWO_RULES_FILE)
    code, findings = cli_json(capsys, str(path))
    assert code == 1
    assert codes_of(findings) == ["TU101", "TU103"]


def test_select_by_prefix(capsys, tmp_path):
    path = write(tmp_path / "a.py", TWO_RULES_FILE)
    missing = tmp_path / "missing.py"
    code, findings = cli_json(capsys, "--select", "TU1", str(path), str(missing))
    assert code == 1
    # A file that could not be checked is always said (ruff keeps its syntax errors too) ...
    assert sorted(codes_of(findings)) == ["TU000", "TU101", "TU103"]
    # ... unless ignored by name.
    code, findings = cli_json(capsys, "--select", "TU1", "--ignore", "TU000", str(path), str(missing))
    assert codes_of(findings) == ["TU101", "TU103"]


def test_select_one_code(capsys, tmp_path):
    path = write(tmp_path / "a.py", TWO_RULES_FILE)
    code, findings = cli_json(capsys, "--select", "TU103", str(path))
    assert code == 1
    assert codes_of(findings) == ["TU103"]


def test_select_comma_separated_and_repeated(capsys, tmp_path):
    path = write(tmp_path / "a.py", TWO_RULES_FILE + "def f(m):\n    return m.cholesky()\n")
    _, findings = cli_json(capsys, "--select", "TU101,TU102", str(path))
    assert codes_of(findings) == ["TU101", "TU102"]
    _, findings = cli_json(capsys, "--select", "TU101", "--select", "TU102", str(path))
    assert codes_of(findings) == ["TU101", "TU102"]


def test_ignore(capsys, tmp_path):
    path = write(tmp_path / "a.py", TWO_RULES_FILE)
    code, findings = cli_json(capsys, "--ignore", "TU101", str(path))
    assert code == 1
    assert codes_of(findings) == ["TU103"]


def test_ignore_everything_found_exits_0(capsys, tmp_path):
    path = write(tmp_path / "a.py", TWO_RULES_FILE)
    code, findings = cli_json(capsys, "--ignore", "TU101,TU103", str(path))
    assert code == 0
    assert findings == []


def test_extend_select_adds_to_select(capsys, tmp_path):
    path = write(tmp_path / "a.py", TWO_RULES_FILE)
    _, findings = cli_json(capsys, "--select", "TU103", "--extend-select", "TU101", str(path))
    assert codes_of(findings) == ["TU101", "TU103"]


def test_a_specific_select_wins_over_a_broader_ignore(capsys, tmp_path):
    path = write(tmp_path / "a.py", TWO_RULES_FILE)
    _, findings = cli_json(capsys, "--ignore", "TU1", "--extend-select", "TU101", str(path))
    assert codes_of(findings) == ["TU101"]


# -- exit codes -----------------------------------------------------------------------------


def test_clean_file_exits_0(capsys, tmp_path):
    path = write(tmp_path / "clean.py", "import torch\nQ, R = torch.linalg.qr(A)\n")
    code, out, err = cli(capsys, "check", str(path))
    assert code == 0
    assert "All checks passed" in out
    assert err == ""


def test_findings_exit_1(capsys, tmp_path):
    path = write(tmp_path / "a.py", QR_FILE)
    code, _, _ = cli(capsys, "check", str(path))
    assert code == 1


def test_default_path_is_the_current_directory(capsys, tmp_path, monkeypatch):
    write(tmp_path / "pkg" / "a.py", QR_FILE)
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "check", "--output-format", "concise")
    assert code == 1
    assert "a.py:2:1: TU103" in out


# -- fix ------------------------------------------------------------------------------------


def test_fix_writes_the_file_and_a_second_fix_changes_nothing(capsys, tmp_path):
    path = write(tmp_path / "a.py", TWO_RULES_FILE)
    code, out, _ = cli(capsys, "fix", str(path))
    assert code == 0
    assert path.read_text() == "import torch\nL = torch.linalg.cholesky(A)\nQ, R = torch.linalg.qr(A)\n"
    assert "Fixed 2 findings in 1 file." in out

    before = path.read_bytes()
    stat_before = path.stat()
    code, out, _ = cli(capsys, "fix", str(path))
    assert code == 0
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == stat_before.st_mtime_ns  # not even rewritten
    assert "Fixed" not in out
    assert "All checks passed" in out


def test_fix_exits_1_while_findings_remain(capsys, tmp_path):
    # A reference that is not a call has no automatic fix.
    path = write(tmp_path / "a.py", "import functools\nimport torch\nQ, R = torch.qr(A)\n"
                 "g = functools.partial(torch.qr, some=False)\n")
    code, out, _ = cli(capsys, "fix", str(path))
    assert code == 1
    assert path.read_text() == ("import functools\nimport torch\nQ, R = torch.linalg.qr(A)\n"
                                "g = functools.partial(torch.qr, some=False)\n")
    assert "1 finding remaining" in out


def test_check_fix_is_the_same_as_fix(capsys, tmp_path, monkeypatch):
    results = []
    for name, args in (("one", ["check", "--fix"]), ("two", ["fix"])):
        root = tmp_path / name
        write(root / "a.py", TWO_RULES_FILE)
        write(root / "b.py", UNSAFE_FILE)
        write(root / "c.py", "import functools, torch\nf = functools.partial(torch.qr)\n")
        monkeypatch.chdir(root)
        code, out, err = cli(capsys, *args, ".")
        contents = {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}  # not .torchup_cache
        results.append((code, out, err, contents))
    assert results[0] == results[1]
    assert results[0][0] == 1  # the unsafe fix and the reference remain
    assert results[0][3]["a.py"] == b"import torch\nL = torch.linalg.cholesky(A)\nQ, R = torch.linalg.qr(A)\n"
    assert results[0][3]["b.py"] == UNSAFE_FILE.encode()


def diff_body(out: str, path: str) -> str:
    """The hunks of a one-file unified diff, after checking its two header lines name ``path``."""
    lines = out.splitlines(keepends=True)
    assert len(lines) > 2, out
    name = re.escape(path)
    assert re.fullmatch(rf"--- (a/)?{name}\n", lines[0]), lines[0]
    assert re.fullmatch(rf"\+\+\+ (b/)?{name}\n", lines[1]), lines[1]
    return "".join(lines[2:])


def test_fix_diff_prints_a_unified_diff_and_writes_nothing(capsys, tmp_path, monkeypatch):
    write(tmp_path / "a.py", QR_FILE)
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "fix", "--diff", "a.py")
    assert code == 1
    assert diff_body(out, "a.py") == (
        "@@ -1,2 +1,2 @@\n"
        " import torch\n"
        "-torch.qr(A)\n"
        "+torch.linalg.qr(A)\n"
    )
    assert (tmp_path / "a.py").read_text() == QR_FILE
    assert "Would fix 1 finding in 1 file." in err
    assert "Traceback" not in err


def test_fix_diff_lists_files_by_path_whatever_order_the_workers_finish(capsys, tmp_path, monkeypatch):
    # The largest files go to the workers first and finish last: arrival order is not path order.
    names = [f"m{i:02d}.py" for i in range(24)]
    for index, name in enumerate(names):
        write(tmp_path / name, QR_FILE + "x = 1\n" * (index * 400))
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "fix", "--diff", "--no-cache", "--jobs", "2", ".")
    assert code == 1
    listed = [line[4:].strip() for line in out.splitlines() if line.startswith("--- ")]
    assert [Path(p).name for p in listed] == names


def test_check_diff_implies_fix_mode(capsys, tmp_path, monkeypatch):
    write(tmp_path / "a.py", QR_FILE)
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "check", "--diff", "a.py")
    assert code == 1
    assert "+torch.linalg.qr(A)\n" in out
    assert (tmp_path / "a.py").read_text() == QR_FILE


def test_fix_diff_marks_a_missing_final_newline(capsys, tmp_path, monkeypatch):
    write(tmp_path / "a.py", "import torch\nL = torch.cholesky(A)")
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "fix", "--diff", "a.py")
    assert code == 1
    assert diff_body(out, "a.py") == (
        "@@ -1,2 +1,2 @@\n"
        " import torch\n"
        "-L = torch.cholesky(A)\n"
        "\\ No newline at end of file\n"
        "+L = torch.linalg.cholesky(A)\n"
        "\\ No newline at end of file\n"
    )


def test_fix_diff_exits_0_when_nothing_would_change(capsys, tmp_path):
    path = write(tmp_path / "clean.py", "import torch\nQ, R = torch.linalg.qr(A)\n")
    code, out, _ = cli(capsys, "fix", "--diff", str(path))
    assert code == 0
    assert out == ""


def test_fix_diff_with_only_unsafe_fixes_is_empty_without_the_flag(capsys, tmp_path):
    path = write(tmp_path / "a.py", UNSAFE_FILE)
    code, out, _ = cli(capsys, "fix", "--diff", str(path))
    assert code == 0
    assert out == ""
    code, out, _ = cli(capsys, "fix", "--diff", "--unsafe-fixes", str(path))
    assert code == 1
    assert "+    return torch.linalg.cholesky(m)\n" in out
    assert path.read_text() == UNSAFE_FILE


def test_unsafe_fixes_only_with_the_flag(capsys, tmp_path):
    path = write(tmp_path / "a.py", UNSAFE_FILE)
    code, out, _ = cli(capsys, "fix", str(path))
    assert code == 1
    assert path.read_text() == UNSAFE_FILE
    assert "TU102" in out
    assert "--unsafe-fixes" in out

    code, out, _ = cli(capsys, "fix", "--unsafe-fixes", str(path))
    assert code == 0
    assert path.read_text() == UNSAFE_FIXED
    assert "Fixed 1 finding in 1 file." in out


def test_check_reports_the_unsafe_fix_as_unsafe(capsys, tmp_path):
    path = write(tmp_path / "a.py", UNSAFE_FILE)
    code, findings = cli_json(capsys, str(path))
    assert code == 1
    assert [(f["code"], f["fix"]["applicability"]) for f in findings] == [("TU102", "unsafe")]


# -- output formats -------------------------------------------------------------------------


REQUIRED_KEYS = {"code", "name", "message", "path", "line", "column", "end_line", "end_column", "severity", "fix"}


def test_json_output(capsys, tmp_path):
    path = write(tmp_path / "a.py", "import functools\nimport torch\nQ, R = torch.qr(A)\n"
                 "f = functools.partial(torch.cholesky, upper=True)\n")
    code, findings = cli_json(capsys, str(path))
    assert code == 1
    assert isinstance(findings, list) and len(findings) == 2
    for finding in findings:
        assert finding.keys() >= REQUIRED_KEYS
        assert finding["path"] == str(path)
        assert finding["severity"] in {"error", "warning", "info"}

    qr, reference = findings
    assert (qr["code"], qr["name"]) == ("TU103", "torch-qr-removed")
    assert (qr["line"], qr["column"], qr["end_line"], qr["end_column"]) == (3, 8, 3, 16)
    assert qr["fix"]["applicability"] == "safe"
    assert isinstance(qr["fix"]["message"], str) and qr["fix"]["message"]
    assert qr["fix"]["edits"] == [
        {
            "content": "torch.linalg.qr",
            "location": {"line": 3, "column": 8},
            "end_location": {"line": 3, "column": 16},
        }
    ]

    assert (reference["code"], reference["line"], reference["column"]) == ("TU101", 4, 23)
    assert (reference["end_line"], reference["end_column"]) == (4, 37)
    assert reference["fix"] is None


def test_json_output_is_an_empty_list_when_clean(capsys, tmp_path):
    path = write(tmp_path / "clean.py", "x = 1\n")
    code, out, _ = cli(capsys, "check", "--output-format", "json", str(path))
    assert code == 0
    assert json.loads(out) == []  # no summary mixed into the JSON


def test_full_output(capsys, tmp_path, monkeypatch):
    write(tmp_path / "a.py", QR_FILE)
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "check", "a.py")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("a.py:2:1: TU103 ")
    assert lines[1] == "2 | torch.qr(A)"
    assert lines[2] == "  | ^^^^^^^^"
    assert re.fullmatch(r"  help: .+ \[safe fix\]", lines[3])


def test_full_output_caret_under_the_finding(capsys, tmp_path, monkeypatch):
    write(tmp_path / "a.py", "import torch\nL = torch.cholesky(A)\n")
    monkeypatch.chdir(tmp_path)
    _, out, _ = cli(capsys, "check", "a.py")
    lines = out.splitlines()
    assert lines[0].startswith("a.py:2:5: TU101 ")
    assert lines[1] == "2 | L = torch.cholesky(A)"
    assert lines[2] == "  |     ^^^^^^^^^^^^^^"
    assert lines[3].startswith("  help: ")


def test_concise_output(capsys, tmp_path, monkeypatch):
    write(tmp_path / "a.py", TWO_RULES_FILE)
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "check", "--output-format", "concise", "-q", "a.py")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("a.py:2:5: TU101 [*] ")
    assert lines[1].startswith("a.py:3:8: TU103 [*] ")


def test_in_process_report_follows_a_redirected_stdout(tmp_path):
    """``main`` must write to the ``sys.stdout`` of the moment, not to the one seen at import."""
    path = write(tmp_path / "a.py", QR_FILE)
    for _ in range(2):  # the first call imports the output module; the second must not reuse its stream
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            code = main(["check", "--output-format", "concise", str(path)])
        assert code == 1
        assert f"{path}:2:1: TU103" in buffer.getvalue()


def test_unknown_output_format_is_a_usage_error(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--output-format", "xml", str(tmp_path)])
    assert exit_info.value.code == 2


def test_summary_counts_findings_and_files(capsys, tmp_path):
    write(tmp_path / "a.py", TWO_RULES_FILE)
    write(tmp_path / "b.py", QR_FILE)
    write(tmp_path / "c.py", "print('no torch here')\n")
    code, out, _ = cli(capsys, "check", str(tmp_path))
    assert code == 1
    summary = out.rstrip("\n").splitlines()[-1]
    assert summary.startswith("3 findings found (3 files checked; 1 without a trigger word, not parsed).")
    assert "3 fixable with `torchup fix`" in summary


def test_summary_singular(capsys, tmp_path):
    path = write(tmp_path / "b.py", QR_FILE)
    _, out, _ = cli(capsys, "check", str(path))
    assert out.rstrip("\n").splitlines()[-1].startswith("1 finding found (1 file checked).")


def test_quiet_drops_the_summary(capsys, tmp_path):
    path = write(tmp_path / "b.py", QR_FILE)
    _, out, _ = cli(capsys, "check", "-q", str(path))
    assert "finding" not in out
    assert "checked" not in out
    assert "TU103" in out


# -- colour ---------------------------------------------------------------------------------


def test_no_colour_when_not_a_tty(capsys, tmp_path):
    path = write(tmp_path / "a.py", QR_FILE)
    _, out, err = cli(capsys, "check", str(path))
    assert "TU103" in out
    assert ANSI not in out + err


def test_force_colour_and_no_color(capsys, tmp_path, monkeypatch):
    path = write(tmp_path / "a.py", QR_FILE)
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out, _ = cli(capsys, "check", str(path))
    assert ANSI in out  # the styling exists, so the NO_COLOR check below means something
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, err = cli(capsys, "check", str(path))
    assert "TU103" in out
    assert ANSI not in out + err


def _run_on_a_tty(args: list[str], env: dict) -> str:
    leader, follower = pty.openpty()
    try:
        environment = {**env, "PYTHONPATH": str(REPO_ROOT)}
        process = subprocess.Popen(
            [sys.executable, "-m", "torchup", *args],
            cwd=REPO_ROOT, env=environment, stdout=follower, stderr=follower, stdin=subprocess.DEVNULL,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=120)
        return b"".join(chunks).decode()
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)


def test_colour_on_a_tty_unless_no_color(tmp_path):
    path = write(tmp_path / "a.py", QR_FILE)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    coloured = _run_on_a_tty(["check", str(path)], env)
    assert "TU103" in coloured
    assert ANSI in coloured
    plain = _run_on_a_tty(["check", str(path)], {**env, "NO_COLOR": "1"})
    assert "TU103" in plain
    assert ANSI not in plain


# -- python -m torchup ----------------------------------------------------------------------


def test_python_dash_m_version():
    result = subprocess_cli("--version")
    assert result.returncode == 0
    assert result.stdout == f"torchup {torchup.__version__}\n"


def test_python_dash_m_check_and_fix(tmp_path):
    path = write(tmp_path / "a.py", QR_FILE)
    result = subprocess_cli("check", "--output-format", "concise", str(path))
    assert result.returncode == 1
    assert f"{path}:2:1: TU103" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr

    result = subprocess_cli("fix", str(path))
    assert result.returncode == 0
    assert path.read_text() == "import torch\ntorch.linalg.qr(A)\n"


def test_python_dash_m_rules():
    result = subprocess_cli("rules")
    assert result.returncode == 0
    for code in ALL_CODES:
        assert code in result.stdout


def test_python_dash_m_usage_error():
    result = subprocess_cli("check", "--select", "ZZ", ".")
    assert result.returncode == 2
    assert "ZZ" in result.stderr
    assert "Traceback" not in result.stderr


class _Exited(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


@pytest.mark.parametrize(
    ("args", "code", "out"),
    [
        (["--version"], 0, f"torchup {torchup.__version__}\n"),
        (["check", "--no-such-option"], 2, ""),
        (["rules"], 0, "TU101"),
    ],
)
def test_the_command_flushes_and_exits_without_the_teardown(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str], code: int, out: str
) -> None:
    """``cli.console`` (the console script, ``python -m torchup``) ends in ``os._exit`` with
    ``main``'s code, argparse's and ``--version``'s ``SystemExit`` included, after a flush."""
    from torchup.cli import main as cli_module

    flushed: list[str] = []
    monkeypatch.setattr(sys.stdout, "flush", lambda: flushed.append("out"))

    def exit_now(status: int) -> None:
        raise _Exited(status)

    monkeypatch.setattr(cli_module.os, "_exit", exit_now)
    with pytest.raises(_Exited) as exited:
        cli_module.console(args)
    assert exited.value.code == code and flushed == ["out"]
    assert out in capsys.readouterr().out


def test_trace_exits_through_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The traced program may count on its atexit handlers: no ``os._exit`` after ``trace``."""
    from torchup.cli import main as cli_module

    monkeypatch.setattr(cli_module, "main", lambda argv: 3)
    monkeypatch.setattr(cli_module.os, "_exit", lambda status: pytest.fail("os._exit after trace"))
    with pytest.raises(SystemExit) as exited:
        cli_module.console(["trace", "program.py"])
    assert exited.value.code == 3


def test_python_m_torchup_output_survives_the_fast_exit(tmp_path: Path) -> None:
    """Every finding printed, the exit code kept, and no complaint when the reader stops early."""
    for index in range(40):
        write(tmp_path / f"m{index:02d}.py", QR_FILE)
    result = subprocess_cli("check", "--output-format", "concise", "--no-cache", str(tmp_path))
    assert result.returncode == 1 and result.stdout.count("TU103") == 40, result.stderr
    environment = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    shell = f"{sys.executable} -m torchup check --output-format full --no-cache {tmp_path} | head -1"
    piped = subprocess.run(shell, shell=True, env=environment, capture_output=True, text=True, timeout=120)
    assert piped.stdout.count("\n") == 1 and "Traceback" not in piped.stderr, piped.stderr


def test_a_failed_final_flush_is_an_error_unless_the_reader_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk leaves the report incomplete: exit 2 with a message; a reader that went away
    (`| head`) is no error, as for the rest of the run."""
    from torchup.cli import main as cli_module

    def exit_now(status: int) -> None:
        raise _Exited(status)

    monkeypatch.setattr(cli_module.os, "_exit", exit_now)
    monkeypatch.setattr(cli_module, "main", lambda argv: 1)
    for error, code in ((OSError(28, "No space left on device"), 2), (BrokenPipeError(32, "Broken pipe"), 1)):
        written: list[str] = []

        def fail(error: OSError = error) -> None:
            raise error

        monkeypatch.setattr(sys, "stdout", io.StringIO())
        monkeypatch.setattr(sys.stdout, "flush", fail)
        monkeypatch.setattr(sys, "stderr", io.StringIO())
        monkeypatch.setattr(sys.stderr, "write", written.append)
        with pytest.raises(_Exited) as exited:
            cli_module.console(["check"])
        assert exited.value.code == code
        assert any("No space left" in text for text in written) is (code == 2)


def test_python_m_in_a_project_whose_modules_share_standard_library_names(tmp_path: Path) -> None:
    """`python -m torchup` from a project's root, where its own `signal/` and `queue.py` stand (torch's
    own sources have `signal/`): the working directory that `python -m` puts first on sys.path must
    not stand for the standard library that torchup (subprocess, the worker pool) imports."""
    write(tmp_path / "signal" / "__init__.py", 'raise ImportError("the project\'s own signal package")\n')
    write(tmp_path / "queue.py", 'raise ImportError("the project\'s own queue module")\n')
    write(tmp_path / "train.py", 'import torch\n\nstate = torch.load("model.pt")\n')
    # (no empty entry in PYTHONPATH: that one would name the working directory on purpose)
    path = os.pathsep.join(entry for entry in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if entry)
    environment = {**os.environ, "PYTHONPATH": path}

    def run(*command: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", *command], cwd=tmp_path, env=environment,
                              capture_output=True, text=True, timeout=120)

    done = run("torchup", "check", "--isolated", "--no-cache", "--output-format", "concise", "train.py")
    assert "ImportError" not in done.stdout + done.stderr, done.stderr
    assert done.returncode == 1 and "train.py:3:9: TU601" in done.stdout, done.stdout + done.stderr
    for module in ("torchup.doctor", "torchup.trace"):
        shown = run(module, "--help")
        assert shown.returncode == 0 and "ImportError" not in shown.stderr, (module, shown.stderr)
