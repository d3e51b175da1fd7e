"""Files torchup cannot read, decode or parse: a clear finding naming the file, never a traceback.

Every bad input sits beside a good file (``good.py``), which must still be checked and reported.
The exit code is 1 when something was checked, 2 when nothing at all could be read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from torchup.cli.main import main
from torchup.prefilter import grep as fastscan
from torchup.run import runner

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


# -- nothing unreadable passes silently: files without a trigger word (issue 20) ----------------
#
# The pre-filter settles a file without a trigger word unparsed; one that cannot be decoded is still
# a finding (TU001), through grep or not, with the cache or not, as with --no-prefilter.

UNREADABLE = {  # name: bytes, and the expected line, column and words of the message
    "bad.py": (b'x = 1\ny = "\xff\xfe abc"\n', 2, 6, ["not valid utf-8"]),
    "nul.py": (b"x = 1\n\x00\n", 2, 1, ["NUL byte"]),
    "utf16.py": ("x = 1\n".encode("utf-16"), 1, 1, ["UTF-16"]),
    "utf16-no-mark.py": ("x = 1\nprint(x)\n".encode("utf-16-le"), 1, 1, ["UTF-16"]),
    "utf32.py": ("x = 1\n".encode("utf-32"), 1, 1, ["UTF-32"]),
    "cookie.py": (b"# -*- coding: no-such-codec -*-\nx = 1\n", 1, 1, ["unknown encoding"]),
    "ascii-cookie.py": (b"# coding: ascii\nx = '\xc3\xa9'\n", 2, 6, ["not valid ascii"]),
    "broken.ipynb": (b"{not json", 1, 2, ["not valid JSON"]),
    "notanb.ipynb": (b'{"a": 1}', 1, 1, ["not a Jupyter notebook"]),
}
READABLE = {  # no trigger word either, and nothing wrong: checked by the pre-filter alone
    "plain.py": b"x = 1\n",
    "utf8.py": "s = 'é'\n".encode(),
    "latin1.py": b"# -*- coding: latin-1 -*-\ns = '\xe9'\n",
    "bom.py": b"\xef\xbb\xbfx = 1\n",
}
ALL_FILES = len(UNREADABLE) + len(READABLE)


def unreadable_tree(root: Path) -> list[tuple[str, str, int, int]]:
    """The files above under ``root``/src; the (path, code, line, column) of each finding expected."""
    (root / "src").mkdir()
    for name, data in {**{name: data for name, (data, *_) in UNREADABLE.items()}, **READABLE}.items():
        (root / "src" / name).write_bytes(data)
    return sorted((f"src/{name}", "TU001", line, column) for name, (_, line, column, _) in UNREADABLE.items())


@pytest.fixture(params=["python", "grep"])
def stage_one(request, monkeypatch) -> list[object]:
    """Stage 1 of the pre-filter in Python, or by grep (even for a few files); the greps started."""
    if request.param == "grep" and shutil.which("grep") is None:
        pytest.skip("no grep on this machine")
    monkeypatch.setattr(runner, "SCAN_MIN_FILES", 1 if request.param == "grep" else 10**9)
    started: list[object] = []
    real = fastscan.Grep.start
    monkeypatch.setattr(fastscan.Grep, "start", lambda *args: started.append(real(*args)) or started[-1])
    return started


@pytest.mark.parametrize("cache", [["--no-cache"], []], ids=["no-cache", "cache"])
def test_files_without_a_trigger_word_that_cannot_be_read_are_reported(capsys, tmp_path, monkeypatch, stage_one, cache):
    monkeypatch.chdir(tmp_path)  # (the cache, when used, goes here)
    expected = unreadable_tree(tmp_path)

    code, out, _ = run(capsys, "check", "--output-format", "concise", *cache, "src")
    assert code == 1
    assert out.splitlines()[-1] == (
        f"{len(UNREADABLE)} findings found ({ALL_FILES} files checked; {len(READABLE)} without a trigger word, "
        "not parsed)."
    )
    assert all(stage_one) and bool(stage_one) == (runner.SCAN_MIN_FILES == 1)

    code, findings = check_json(capsys, *cache, "src")  # (with the cache: its findings, the same)
    assert code == 1
    assert sorted((f["path"], f["code"], f["line"], f["column"]) for f in findings) == expected
    for finding in findings:
        assert finding["fix"] is None
        for word in UNREADABLE[Path(finding["path"]).name][3]:
            assert word in finding["message"]
    code, everything = check_json(capsys, "--no-cache", "--no-prefilter", "src")
    assert code == 1
    assert [(f["path"], f["message"]) for f in everything] == [(f["path"], f["message"]) for f in findings]


def test_the_summary_and_sarif_say_what_was_parsed_and_a_rerun_says_the_same(capsys, tmp_path, monkeypatch):
    """Findings from the cache count as the run that made them did: a re-run prints what a cold run does."""
    monkeypatch.chdir(tmp_path)
    unreadable_tree(tmp_path)
    (tmp_path / "src" / "good.py").write_bytes(GOOD)
    counts = {"filesChecked": ALL_FILES + 1, "filesNotParsed": len(READABLE), "filesUnreadable": 0}

    def sarif_counts(out: str) -> dict[str, int]:  # (the run's properties also state the support window)
        return {k: v for k, v in json.loads(out)["runs"][0]["properties"].items() if k.startswith("files")}

    code, out, _ = run(capsys, "check", "--output-format", "sarif", "src")
    assert code == 1
    assert sarif_counts(out) == counts
    code, out, _ = run(capsys, "check", "--output-format", "sarif", "src", "src/missing.py")  # (from the cache)
    assert code == 1
    assert sarif_counts(out) == {**counts, "filesUnreadable": 1}

    summary = (f"{len(UNREADABLE) + 1} findings found ({ALL_FILES + 1} files checked; {len(READABLE)} without a "
               "trigger word, not parsed).")
    cold = run(capsys, "check", "--no-cache", "src")
    assert cold[0] == 1 and cold[1].splitlines()[-1].startswith(summary)
    assert run(capsys, "check", "src") == cold  # (every finding from the cache)
    (tmp_path / "src" / "plain.py").write_bytes(b"y = 2\n")
    assert run(capsys, "check", "src") == cold  # (one file read again)
    code, out, _ = run(capsys, "check", "--no-cache", "--no-prefilter", "src")
    assert out.splitlines()[-1].startswith(f"{len(UNREADABLE) + 1} findings found ({ALL_FILES + 1} files checked).")


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
    assert "All checks passed (1 file checked; 1 without a trigger word, not parsed)." in out


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
