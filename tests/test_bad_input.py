"""Files torchup cannot read, decode or parse: a clear finding naming the file, never a traceback.

Every bad input sits beside a good file (``good.py``), which must still be checked and reported.
The exit code is 1 when something was checked, 2 when nothing at all could be read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from torchup.cli import main

REPO_ROOT = Path(__file__).resolve().parent.parent
GOOD = b"import torch\ntorch.qr(A)\n"
GOOD_FIXED = b"import torch\ntorch.linalg.qr(A)\n"


@pytest.fixture(autouse=True)
def _no_colour(monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out
    assert "Traceback" not in err
    assert "internal error" not in err
    return code, out, err


def check_json(capsys, *paths: str) -> tuple[int, list[dict]]:
    code, out, _ = run(capsys, "check", "--output-format", "json", *paths)
    return code, json.loads(out)


def findings_for(findings: list[dict], path: Path | str) -> list[dict]:
    return [f for f in findings if f["path"] == str(path)]


def assert_good_file_checked(findings: list[dict], good: Path) -> None:
    assert [(f["code"], f["line"], f["column"]) for f in findings_for(findings, good)] == [("TU103", 2, 1)]


# -- one bad input beside a good file ---------------------------------------------------------
#
# Each maker creates the bad input under the directory it gets and returns the path to name on
# the command line, the path the finding must name, and the expected (code, line, column, words).


def undecodable(root: Path):
    path = root / "undecodable.py"
    path.write_bytes(b'x = torch.cholesky\ny = "\xff\xfe"\n')  # (a word in code: the pre-filter reads it)
    return path, path, ("TU001", 2, 6, ["decode", "utf-8"])


def binary_with_nul(root: Path):
    path = root / "binary.py"
    path.write_bytes(b"L = torch.cholesky(A)\n\x00\x01\x02\x03\xff")  # (a word in code: the pre-filter reads it)
    return path, path, ("TU001", 2, 1, ["NUL"])


def python2(root: Path):
    path = root / "py2.py"
    path.write_bytes(b'import torch\nprint "x"\nL = torch.cholesky(A)\n')
    return path, path, ("TU001", 2, 1, ["syntax"])


def unknown_coding_cookie(root: Path):
    path = root / "cookie.py"
    path.write_bytes(b"# -*- coding: no-such-codec -*-\nimport torch\ntorch.cholesky(A)\n")
    return path, path, ("TU001", 1, 1, ["encoding"])


def missing(root: Path):
    path = root / "missing.py"
    return path, path, ("TU000", 1, 1, ["no such file"])


def explicit_symlink_loop(root: Path):
    path = root / "loop.py"
    os.symlink("loop.py", path)
    return path, path, ("TU000", 1, 1, [])


def symlink_loop_in_a_walked_directory(root: Path):
    directory = root / "pkg"
    directory.mkdir()
    os.symlink("loop.py", directory / "loop.py")
    return directory, directory / "loop.py", ("TU000", 1, 1, [])


BAD_INPUTS: dict[str, Callable] = {
    "undecodable": undecodable,
    "binary-with-nul": binary_with_nul,
    "python2": python2,
    "unknown-coding-cookie": unknown_coding_cookie,
    "missing": missing,
    "explicit-symlink-loop": explicit_symlink_loop,
    "symlink-loop-in-walked-dir": symlink_loop_in_a_walked_directory,
}


@pytest.mark.parametrize("make", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_is_reported_and_the_rest_is_checked(capsys, tmp_path, make):
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    given, named, (code, line, column, words) = make(tmp_path)

    exit_code, findings = check_json(capsys, str(given), str(good))
    assert exit_code == 1
    assert_good_file_checked(findings, good)
    bad = findings_for(findings, named)
    assert [(f["code"], f["line"], f["column"]) for f in bad] == [(code, line, column)]
    message = bad[0]["message"]
    for word in words:
        assert word.lower() in message.lower()
    if code == "TU000":
        assert str(named) in message  # "cannot read <path>: <reason>"
    assert bad[0]["fix"] is None


@pytest.mark.parametrize("make", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_in_full_output_names_the_file(capsys, tmp_path, make):
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    given, named, (code, line, column, _) = make(tmp_path)

    exit_code, out, _ = run(capsys, "check", str(given), str(good))
    assert exit_code == 1
    assert f"{named}:{line}:{column}: {code} " in out
    assert f"{good}:2:1: TU103 " in out


@pytest.mark.parametrize("make", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_fix_leaves_bad_input_alone_and_fixes_the_rest(capsys, tmp_path, make):
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    given, named, (code, line, column, _) = make(tmp_path)
    before = named.read_bytes() if named.is_file() else None

    exit_code, out, _ = run(capsys, "fix", "--output-format", "concise", str(given), str(good))
    assert exit_code == 1  # the bad input is still a finding
    assert good.read_bytes() == GOOD_FIXED
    assert f"{named}:{line}:{column}: {code} " in out
    if before is not None:
        assert named.read_bytes() == before


# -- nothing could be read: exit 2 -----------------------------------------------------------


def test_only_a_missing_path_exits_2(capsys, tmp_path):
    path = tmp_path / "missing.py"
    code, out, _ = run(capsys, "check", str(path))
    assert code == 2
    assert f"{path}:1:1: TU000 " in out
    assert "no such file" in out.lower()


def test_only_missing_paths_exit_2_in_json_too(capsys, tmp_path):
    code, findings = check_json(capsys, str(tmp_path / "a.py"), str(tmp_path / "nowhere"))
    assert code == 2
    assert [f["code"] for f in findings] == ["TU000", "TU000"]


def test_only_an_explicit_symlink_loop_exits_2(capsys, tmp_path):
    path = tmp_path / "loop.py"
    os.symlink("loop.py", path)
    code, out, _ = run(capsys, "check", str(path))
    assert code == 2
    assert f"{path}:1:1: TU000 " in out


def test_fix_on_only_a_missing_path_exits_2(capsys, tmp_path):
    code, out, _ = run(capsys, "fix", str(tmp_path / "missing.py"))
    assert code == 2
    assert "TU000" in out


def test_a_bad_file_alone_was_still_checked_so_exits_1(capsys, tmp_path):
    undecodable(tmp_path)
    code, findings = check_json(capsys, str(tmp_path / "undecodable.py"))
    assert code == 1
    assert [f["code"] for f in findings] == ["TU001"]


# -- inputs that are fine ---------------------------------------------------------------------


@pytest.mark.parametrize("prefilter", [[], ["--no-prefilter"]], ids=["prefilter", "no-prefilter"])
def test_empty_file_is_clean(capsys, tmp_path, prefilter):
    empty = tmp_path / "empty.py"
    empty.write_bytes(b"")
    code, findings = check_json(capsys, *prefilter, str(empty))
    assert code == 0
    assert findings == []

    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    code, findings = check_json(capsys, *prefilter, str(tmp_path))
    assert code == 1
    assert findings_for(findings, empty) == []
    assert_good_file_checked(findings, good)


def test_empty_file_counts_as_checked(capsys, tmp_path):
    (tmp_path / "empty.py").write_bytes(b"")
    code, out, _ = run(capsys, "check", str(tmp_path / "empty.py"))
    assert code == 0
    assert "All checks passed (1 file checked)." in out


def test_python2_is_only_a_syntax_error_with_the_parsers_position(capsys, tmp_path):
    path = tmp_path / "py2.py"
    path.write_bytes(b'import torch\n\ndef f(A):\n    print "factor", torch.cholesky(A)\n')
    code, findings = check_json(capsys, str(path))
    assert code == 1
    assert [(f["code"], f["line"], f["column"]) for f in findings] == [("TU001", 4, 5)]
    assert "print" in findings[0]["message"]


def test_a_directory_named_like_a_source_file_is_walked_not_read(capsys, tmp_path):
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    directory = tmp_path / "x.py"
    directory.mkdir()
    inner = directory / "inner.py"
    inner.write_bytes(b"import torch\nL = torch.cholesky(A)\n")

    # Inside a walked directory.
    code, findings = check_json(capsys, str(tmp_path))
    assert code == 1
    assert_good_file_checked(findings, good)
    assert findings_for(findings, directory) == []
    assert [(f["code"], f["line"]) for f in findings_for(findings, inner)] == [("TU101", 2)]

    # Named on the command line.
    code, findings = check_json(capsys, str(directory), str(good))
    assert code == 1
    assert_good_file_checked(findings, good)
    assert [(f["code"], f["line"]) for f in findings_for(findings, inner)] == [("TU101", 2)]


def test_an_empty_directory_named_like_a_source_file_is_not_an_error(capsys, tmp_path):
    (tmp_path / "x.py").mkdir()
    code, out, _ = run(capsys, "check", str(tmp_path / "x.py"))
    assert code == 0
    assert "TU000" not in out


def test_a_directory_symlink_to_an_ancestor_does_not_loop(capsys, tmp_path):
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    (tmp_path / "sub").mkdir()
    os.symlink("..", tmp_path / "sub" / "up")
    code, findings = check_json(capsys, str(tmp_path))
    assert code == 1
    assert [(f["path"], f["code"]) for f in findings] == [(str(good), "TU103")]


LATIN1 = (
    b"# -*- coding: latin-1 -*-\n"
    b"import torch\n"
    b"caf\xe9 = torch.cholesky(A)  # r\xe9sum\xe9\n"
    b"s = '\xe0 la carte'\n"
)
LATIN1_FIXED = (
    b"# -*- coding: latin-1 -*-\n"
    b"import torch\n"
    b"caf\xe9 = torch.linalg.cholesky(A)  # r\xe9sum\xe9\n"
    b"s = '\xe0 la carte'\n"
)


def test_latin1_coding_cookie_is_checked(capsys, tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(LATIN1)
    code, findings = check_json(capsys, str(path))
    assert code == 1
    # Columns count characters: "café = " is 7 of them (8 bytes in UTF-8).
    assert [(f["code"], f["line"], f["column"], f["end_column"]) for f in findings] == [("TU101", 3, 8, 22)]


def test_latin1_coding_cookie_full_output_shows_the_decoded_line(capsys, tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(LATIN1)
    _, out, _ = run(capsys, "check", str(path))
    assert "3 | café = torch.cholesky(A)  # résumé\n" in out
    assert "  |        ^^^^^^^^^^^^^^\n" in out


def test_latin1_coding_cookie_is_fixed_preserving_bytes(capsys, tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(LATIN1)
    code, _, _ = run(capsys, "fix", str(path))
    assert code == 0
    assert path.read_bytes() == LATIN1_FIXED


def test_subprocess_run_over_bad_inputs_has_no_traceback(tmp_path):
    (tmp_path / "good.py").write_bytes(GOOD)
    for make in BAD_INPUTS.values():
        sub = tmp_path / make.__name__
        sub.mkdir()
        make(sub)
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "latin.py").write_bytes(LATIN1)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("FORCE_COLOR", None)
    result = subprocess.run(
        [sys.executable, "-m", "torchup", "check", "--output-format", "concise", str(tmp_path),
         str(tmp_path / "missing" / "missing.py"), str(tmp_path / "explicit_symlink_loop" / "loop.py")],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    assert f"{tmp_path / 'good.py'}:2:1: TU103" in result.stdout
    assert f"{tmp_path / 'latin.py'}:3:8: TU101" in result.stdout
    for name in ("undecodable.py", "binary.py", "py2.py", "cookie.py", "missing.py", "loop.py"):
        assert name in result.stdout
