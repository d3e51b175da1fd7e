"""grep as stage 1 of the pre-filter (torchup/prefilter/grep.py) gives Python's answers, or none at all."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import torchup.run.runner as runner
from torchup.check.checker import Checker
from torchup.core import source
from torchup.discover.discovery import Discovery
from torchup.prefilter import grep as fastscan
from torchup.prefilter.words import TriggerPattern
from torchup.rules import all_rules
from torchup.settings.selection import select_rules

ROOT = Path(__file__).resolve().parent.parent
WORDS = ["qr", "eig", "use_cuda", "Adam", "AdamW"]
needs_grep = pytest.mark.skipif(shutil.which("grep") is None, reason="no grep on this machine")


def lines_with_words(
    paths: list[str], words: list[str], or_not_plain: bool = False, also: tuple[str, ...] = ()
) -> dict[str, tuple[tuple[int, int], ...]] | None:
    """What one grep (``fastscan.Grep``) says of ``paths``."""
    grep = fastscan.Grep.start(paths, TriggerPattern(words), also, or_not_plain)
    return None if grep is None else grep.result()


def files_with_words(paths: list[str], words: list[str], or_not_plain: bool = False) -> set[str] | None:
    """The files grep names, without the lines."""
    found = lines_with_words(paths, words, or_not_plain)
    return None if found is None else set(found)

TRICKY = {
    "start.py": b"qr = 1\n",
    "end-no-newline.py": b"x = torch.qr",
    "inside-words.py": b"weight = requirement\nmy_qr = qr_ = qrs\n",
    "non-ascii-before.py": "é".encode() + b"qr\n",
    "non-ascii-after.py": b"qr" + "é".encode() + b"\n",
    "crlf.py": b"import torch\r\nq = torch.qr(a)\r\n",
    "lone-cr.py": b"import torch\rq = torch.qr(a)\r",
    "nul.py": b"x = 1\x00\nuse_cuda\n",
    "nul-and-colons-on-the-line.py": b"x = qr\x00y:1:2\n",  # (grep prints the line: its text may hold both)
    "prefix-of-another.py": b"AdamWx = Adamax\n",
    "longer-word.py": b"opt = AdamW(params)\n",
    "latin-1.py": b"# \xe9t\xe9\nx = torch.eig(a)\n",
    "utf-16.py": "q = torch.qr(a)\n".encode("utf-16"),
    "empty.py": b"",
    "name with spaces.py": b"torch.qr(a)\n",
    "-starts-with-dash.py": b"torch.qr(a)\n",
    "new\nline.py": b"torch.qr(a)\n",
}


def python_answer(paths: list[str], words: list[str]) -> set[str]:
    pattern = TriggerPattern(words).bytes
    return {path for path in paths if pattern.search(Path(path).read_bytes())}


@needs_grep
def test_tricky_files_get_pythons_answer(tmp_path: Path) -> None:
    paths = []
    for name, data in TRICKY.items():
        path = tmp_path / name
        path.write_bytes(data)
        paths.append(str(path))
    found = files_with_words(paths, WORDS)
    assert found is not None
    assert found == python_answer(paths, WORDS)
    assert str(tmp_path / "start.py") in found and str(tmp_path / "inside-words.py") not in found


@needs_grep
def test_the_repository_gets_pythons_answer() -> None:
    paths = sorted(
        str(path) for folder in ("torchup", "tests", "examples", "bench", "tools") for path in (ROOT / folder).rglob("*.py")
    )
    words = sorted({word for rule in all_rules() for word in rule.triggers})
    found = files_with_words(paths, words)
    assert found is not None and found == python_answer(paths, words)
    assert len(found) > 50  # the test corpus is full of legacy torch code


@needs_grep
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_skipped_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    plain = tmp_path / "plain.py"
    plain.write_bytes(b"torch.qr(a)\n")
    assert files_with_words([str(fifo), str(plain)], WORDS) == {str(plain)}


def test_no_grep_means_no_answer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(fastscan, "_which", lambda _: None)
    assert files_with_words([str(tmp_path / "x.py")], WORDS) is None


def test_grep_is_found_as_shutil_finds_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``_which`` (no shutil import at start-up) agrees with ``shutil.which`` on a PATH that holds a
    directory, a file that is not executable, and the program itself."""
    (tmp_path / "a" / "grep").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "grep").write_text("")
    program = tmp_path / "c" / "grep"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    path = os.pathsep.join(str(tmp_path / name) for name in ("a", "b", "c"))
    monkeypatch.setenv("PATH", path)
    assert fastscan._which("grep") == shutil.which("grep") == str(program)
    monkeypatch.setenv("PATH", os.pathsep.join(str(tmp_path / name) for name in ("a", "b")))
    assert fastscan._which("grep") is None and shutil.which("grep") is None
    monkeypatch.chdir(program.parent)
    monkeypatch.setenv("PATH", "")
    assert fastscan._which("grep") is None and shutil.which("grep") is None  # (not the one here)


@pytest.mark.parametrize("memfd", [True, False], ids=["memfd", "temporary-file"])
def test_greps_output_file_reads_back_what_was_written(monkeypatch: pytest.MonkeyPatch, memfd: bool) -> None:
    if not memfd:
        monkeypatch.delattr(os, "memfd_create", raising=False)
    elif not hasattr(os, "memfd_create"):
        pytest.skip("no memfd_create here")
    with fastscan._anonymous_file() as output:
        subprocess.run([sys.executable, "-c", "print('qr')"], stdout=output, check=True)
        output.seek(0)
        assert output.read() == b"qr\n"


@needs_grep
def test_a_missing_file_means_no_answer(tmp_path: Path) -> None:
    present = tmp_path / "a.py"
    present.write_bytes(b"qr\n")
    assert files_with_words([str(present), str(tmp_path / "gone.py")], WORDS) is None


def test_words_that_are_not_identifiers_get_no_pattern() -> None:
    assert fastscan.pattern_for(["qr", "max-autotune"]) is None
    assert fastscan.pattern_for([]) is None
    assert fastscan.pattern_for(["qr", "eig"]) == "(^|[^A-Za-z0-9_])(eig|qr)([^A-Za-z0-9_]|$)"


@needs_grep
@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("corpus", ["examples/legacy-project", "tests"])
def test_runs_with_and_without_grep_find_the_same(monkeypatch: pytest.MonkeyPatch, corpus: str, jobs: int) -> None:
    """With two jobs the workers start on the first batch grep has read, while discovery goes on."""

    def findings() -> list[tuple[str, int, int, str]]:
        checker = Checker(select_rules(all_rules(), ["TU1", "TU2", "TU3", "TU4", "TU5"]))  # TU002 reads every file
        result = runner.run([str(ROOT / corpus)], checker, Discovery(), runner.RunOptions(jobs=jobs))
        assert result.files_checked == len(result.targets)
        return [(d.path, d.line, d.column, d.code) for d in result.diagnostics]

    monkeypatch.setattr(runner, "SCAN_MIN_FILES", 1)
    monkeypatch.setattr(runner, "SCAN_BATCH_FILES", 7)  # several batches, started while discovery goes on
    used = []
    real = fastscan.Grep.start
    monkeypatch.setattr(fastscan.Grep, "start", lambda paths, *args: used.append(len(paths)) or real(paths, *args))
    with_grep = findings()
    monkeypatch.setattr(runner, "SCAN_MIN_FILES", 10**9)
    assert used and with_grep == findings()


@needs_grep
def test_unused_noqa_runs_use_grep_and_read_every_file_that_spells_noqa(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """TU002 reports a suppression nothing needs: grep also looks for `noqa` (any case), and a file
    that spells it is read whether or not it holds a trigger word; the findings are those of a run
    without grep."""
    for index in range(30):
        (tmp_path / f"plain{index}.py").write_text("x = 1\n")
    (tmp_path / "unused.py").write_text("x = 1  # noqa: TU101\n")
    (tmp_path / "upper.py").write_text("y = 2  # NOQA: TU103\n")
    (tmp_path / "used.py").write_text("import torch\nL = torch.cholesky(A)  # noqa: TU101\n")
    (tmp_path / "found.py").write_text("import torch\nQ = torch.qr(A)\n")

    def findings() -> list[tuple[str, int, str]]:
        checker = Checker(select_rules(all_rules(), ["TU002", "TU1"]))
        result = runner.run([str(tmp_path)], checker, Discovery(), runner.RunOptions(jobs=1))
        return sorted((Path(d.path).name, d.line, d.code) for d in result.diagnostics)

    monkeypatch.setattr(runner, "SCAN_MIN_FILES", 1)
    used = []
    real = fastscan.Grep.start
    monkeypatch.setattr(fastscan.Grep, "start", lambda paths, *args: used.append(args) or real(paths, *args))
    with_grep = findings()
    assert used and all(args[-1] is True for args in used)  # (noqa looked for)
    assert with_grep == [("found.py", 2, "TU103"), ("unused.py", 1, "TU002"), ("upper.py", 1, "TU002")]
    monkeypatch.setattr(runner, "SCAN_MIN_FILES", 10**9)
    assert with_grep == findings()


NOT_PLAIN = {  # what may keep a file from decoding, without a trigger word
    "utf-16-le.py": "x = 1\n".encode("utf-16-le").join([b"\xff\xfe", b""]),
    "utf-16-be.py": "x = 1\n".encode("utf-16"),
    "utf-16-no-mark.py": "x = 1\n".encode("utf-16-le"),
    "utf-32-be.py": b"\x00\x00\xfe\xff" + "x = 1\n".encode("utf-32-be"),
    "utf-32-le.py": b"\xff\xfe\x00\x00" + "x = 1\n".encode("utf-32-le"),
    "nul-on-line-3.py": b"x = 1\ny = 2\nz = b'\x00'\n",
    "not-utf-8.py": b"x = 1\ns = '\xff'\n",
    "split-sequence.py": b"x = 1\ns = '\xc3\n\xa9'\n",  # (valid UTF-8 bytes, but not line by line)
    "cookie-on-line-1.py": b"# -*- coding: no-such-codec -*-\nx = 1\n",
    "cookie-on-line-2.py": b"#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\nx = 1\n",  # (decodes)
}
PLAIN = {  # what grep can tell decodes
    "plain.py": b"x = 1\n",
    "utf-8.py": "x = 1\ns = 'é'\n".encode(),
    "bom.py": b"\xef\xbb\xbfx = 1\n",
    "encoding-on-line-3.py": b"x = 1\ny = 2\nopen(f, encoding='utf-8')\n",  # (tokenize reads lines 1-2 only)
    "control-characters.py": b"x = '\x01\x1b\x7f'\n",
    "crlf.py": b"x = 1\r\n# coding\r\n",
}


@needs_grep
def test_what_may_not_decode_is_a_hit_when_asked(tmp_path: Path) -> None:
    """Such files are read in full (which reports them if they do not decode), so that a file grep
    misses needs no glance: it decodes as UTF-8, and its status from discovery is enough."""
    words = {"word.py": "torch.qr(a)\ns = 'é'\n".encode(), "word-and-nul.py": b"torch.qr(a)\n\x00\n"}
    files = {**NOT_PLAIN, **PLAIN, **words}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    paths = sorted(str(tmp_path / name) for name in files)
    found = lines_with_words(paths, WORDS, or_not_plain=True)
    assert found is not None
    # A file that may not decode comes with None (scan and decode it in Python), words or not.
    assert {Path(p).name: lines for p, lines in found.items()} == {
        **dict.fromkeys(NOT_PLAIN), "word-and-nul.py": None, "word.py": ((1, 0), (2, 12))
    }
    assert {Path(p).name for p in files_with_words(paths, WORDS) or ()} == set(words)
    for name in PLAIN:  # (what no hit may be: a file that does not decode)
        assert source.decodes(files[name]), name


@needs_grep
@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache"])
def test_files_without_words_that_do_not_decode_are_reported_among_many(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: bool
) -> None:
    """Through grep: the files it finds no word in are settled in this process without a read
    (``--no-cache``) or read by the workers to be hashed; the others are read and decoded."""
    monkeypatch.setattr(runner, "SCAN_MIN_FILES", 1)
    for name, data in {**NOT_PLAIN, **PLAIN}.items():
        (tmp_path / name).write_bytes(data)
    started = []
    real = fastscan.Grep.start
    monkeypatch.setattr(fastscan.Grep, "start", lambda *args: started.append(real(*args)) or started[-1])
    options = runner.RunOptions(jobs=2, record_states=cache)
    found = runner.run([str(tmp_path)], Checker(select_rules(all_rules(), ["TU1"])), Discovery(), options)
    assert started and all(grep is not None for grep in started)
    undecodable = {name for name, data in NOT_PLAIN.items() if not source.decodes(data)}
    assert undecodable == set(NOT_PLAIN) - {"cookie-on-line-2.py"}
    assert sorted((Path(d.path).name, d.code) for d in found.diagnostics) == sorted(
        (name, "TU001") for name in undecodable
    )
    assert found.files_checked == len(NOT_PLAIN) + len(PLAIN)
    assert found.files_not_parsed == found.files_checked - len(undecodable)


@needs_grep
def test_a_wide_file_among_many_is_reported_and_a_fifo_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "SCAN_MIN_FILES", 1)
    (tmp_path / "wide.py").write_bytes("import torch\n".encode("utf-16"))
    (tmp_path / "plain.py").write_bytes(b"x = 1\n")
    os.mkfifo(tmp_path / "pipe.py")
    checker = Checker(select_rules(all_rules(), ["TU1"]))
    found = runner.run([str(tmp_path / "wide.py"), str(tmp_path / "plain.py"), str(tmp_path / "pipe.py")],
                       checker, Discovery(), runner.RunOptions())
    assert sorted((Path(d.path).name, d.code) for d in found.diagnostics) == [("pipe.py", "TU000"), ("wide.py", "TU001")]
    assert found.files_checked == 2 and found.files_failed == 1


def python_lines(data: bytes, words: list[str]) -> set[int]:
    """The lines (counted by `\\n`) that hold one of ``words``."""
    pattern = TriggerPattern(words).bytes
    return {data.count(b"\n", 0, match.start()) + 1 for match in pattern.finditer(data)}


@needs_grep
def test_grep_reports_every_line_that_holds_a_word(tmp_path: Path) -> None:
    """Every line, with where it starts; `qr,eig` once (grep's `-o` would have given two matches)."""
    files = {
        **TRICKY,
        "adjacent.py": b"x = qr,eig(a)\ny = 1\n# qr\n",
        "many.py": b"".join(b"%d qr eig\n" % n if n % 3 else b"pass\n" for n in range(50)),
    }
    paths = []
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))
    found = lines_with_words(paths, WORDS)
    assert found is not None
    for name, data in files.items():
        if name in ("utf-16.py",):
            continue  # (UTF-16: no word is visible in its bytes to either)
        expected = python_lines(data, WORDS)
        lines = found.get(str(tmp_path / name), ())
        assert {number for number, _ in lines} == expected, name
        for number, offset in lines:  # each line's offset is where it starts
            assert offset == 0 or data[offset - 1 : offset] == b"\n", name
            assert data.count(b"\n", 0, offset) + 1 == number, name
    assert found[str(tmp_path / "adjacent.py")] == ((1, 0), (3, 20))


@needs_grep
def test_grep_names_the_lines_of_the_other_words_only_in_files_with_a_word(tmp_path: Path) -> None:
    """``also`` (the scope words the focus needs) adds lines, never files: a file whose only matches
    are `global` or `nonlocal` has no trigger word, and a file with both gets the lines of both."""
    files = {
        "both.py": b"global x\nx = torch.qr(a)\ny = 1\nnonlocal z\n",
        "scope-only.py": b"def f():\n    global qrs\n",
        "same-line.py": b"global qr\n",  # -o would have taken the space after `global`: not so here
        "neither.py": b"x = 1\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    found = lines_with_words(sorted(str(tmp_path / name) for name in files), WORDS, also=("global", "nonlocal"))
    assert found == {
        str(tmp_path / "both.py"): ((1, 0), (2, 9), (4, 31)),
        str(tmp_path / "same-line.py"): ((1, 0),),
    }


@needs_grep
def test_a_run_that_fails_during_discovery_stops_its_greps_and_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers and greps started on the first batches must not outlive the error (nor hang)."""
    import multiprocessing
    import signal

    monkeypatch.setattr(runner, "SCAN_BATCH_FILES", 3)
    started: list[fastscan.Grep] = []
    real_start = fastscan.Grep.start
    monkeypatch.setattr(fastscan.Grep, "start", lambda *args: started.append(real_start(*args)) or started[-1])
    real_targets = Discovery.targets

    def failing(self: Discovery, paths: list[str]):  # type: ignore[no-untyped-def]
        for count, target in enumerate(real_targets(self, paths)):
            if count == 20:
                raise KeyboardInterrupt
            yield target

    monkeypatch.setattr(Discovery, "targets", failing)
    pools = []
    real_pool = runner._Workers.start
    monkeypatch.setattr(runner._Workers, "start", lambda self, files: real_pool(self, files) or pools.append(self._pool))
    checker = Checker(select_rules(all_rules(), ["TU1"]))
    signal.alarm(60)  # (a hang fails the test instead of the suite)
    try:
        with pytest.raises(KeyboardInterrupt):
            runner.run([str(ROOT / "tests")], checker, Discovery(), runner.RunOptions(jobs=2))
    finally:
        signal.alarm(0)
    assert len(started) >= 5 and all(grep is not None and grep._process.poll() is not None for grep in started)
    assert pools and pools[0] is not None  # the workers had started
    assert not multiprocessing.active_children()


@pytest.mark.parametrize("failure", ["no grep", "no temporary file"])
def test_a_run_without_grep_scans_in_python(monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    """The pipelined run (workers started on the first batch) falls back to Python's scan."""

    def findings() -> list[tuple[str, int, int, str]]:
        checker = Checker(select_rules(all_rules(), ["TU1", "TU2", "TU3", "TU4", "TU5"]))
        result = runner.run([str(ROOT / "tests")], checker, Discovery(), runner.RunOptions(jobs=2))
        assert result.files_checked == len(result.targets)
        return [(d.path, d.line, d.column, d.code) for d in result.diagnostics]

    monkeypatch.setattr(runner, "SCAN_MIN_FILES", 1)
    monkeypatch.setattr(runner, "SCAN_BATCH_FILES", 7)
    expected = findings()

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    if failure == "no grep":
        monkeypatch.setattr(fastscan, "_which", lambda _: None)
    else:  # (neither in memory nor in the temporary directory)
        monkeypatch.setattr(os, "memfd_create", refuse, raising=False)
        monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    assert fastscan.Grep.start(["x.py"], TriggerPattern(WORDS)) is None
    assert findings() == expected


def test_a_fix_names_each_file_once_before_a_worker_writes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fix replaces a file (a new inode), so the workers start only after discovery has told every
    file by its identity: a file named twice is fixed and counted once."""
    from torchup.cli.main import main

    for index in range(30):
        (tmp_path / f"m{index:02d}.py").write_text("import torch\nQ, R = torch.qr(A)\n")
    monkeypatch.setattr(runner, "SCAN_MIN_FILES", 1)
    monkeypatch.setattr(runner, "SCAN_BATCH_FILES", 3)
    named = [str(tmp_path), str(tmp_path / "m29.py"), str(tmp_path / "m00.py")]
    real_targets = Discovery.targets

    def slow(self: Discovery, paths: list[str]):  # type: ignore[no-untyped-def]
        """A long walk: the named files come after a worker could have rewritten the first."""
        import time

        for target in real_targets(self, paths):
            deadline = time.monotonic() + 1.0
            while target.explicit and "linalg" not in (tmp_path / "m00.py").read_text() and time.monotonic() < deadline:
                time.sleep(0.01)
            yield target

    monkeypatch.setattr(Discovery, "targets", slow)
    capsys.readouterr()
    assert main(["fix", "--no-cache", "--jobs", "2", "--output-format", "concise", *named]) == 0
    out, err = capsys.readouterr()
    assert "Fixed 30 findings in 30 files" in out + err and "(30 files checked)" in out + err
    assert (tmp_path / "m29.py").read_text() == "import torch\nQ, R = torch.linalg.qr(A)\n"


@needs_grep
def test_a_batch_ends_at_its_command_lines_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """Long names make shorter batches: grep's command line stays far below any limit."""
    monkeypatch.setattr(runner, "SCAN_MIN_FILES", 1)
    monkeypatch.setattr(runner, "SCAN_BATCH_BYTES", 2000)
    sizes: list[int] = []
    real_start = fastscan.Grep.start
    monkeypatch.setattr(fastscan.Grep, "start", lambda paths, *args: sizes.append(sum(len(p) + 1 for p in paths)) or real_start(paths, *args))
    checker = Checker(select_rules(all_rules(), ["TU1"]))
    result = runner.run([str(ROOT / "tests")], checker, Discovery(), runner.RunOptions())
    assert len(sizes) >= 2 and max(sizes[:-1]) < 2000 + 300 and result.files_checked == len(result.targets)


def test_the_pool_does_not_wake_its_worker_thread_for_each_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """multiprocessing's Pool wakes the thread that maintains its workers whenever a result waits
    to be read, and that thread loops until another has read it: hundreds of turns a run, in the
    process that walks the tree. ``runner._pool_class`` keeps it asleep until a worker exits or
    the pool ends."""
    import multiprocessing.pool

    turns: list[int] = []
    real = multiprocessing.pool.Pool._maintain_pool
    monkeypatch.setattr(
        multiprocessing.pool.Pool, "_maintain_pool", staticmethod(lambda *args: turns.append(1) or real(*args))
    )
    monkeypatch.setattr(runner, "SCAN_MIN_FILES", 10**9)  # (no grep: the workers start at once)
    checker = Checker(select_rules(all_rules(), ["TU1", "TU2", "TU3", "TU4", "TU5"]))
    result = runner.run([str(ROOT / "tests")], checker, Discovery(), runner.RunOptions(jobs=2))
    assert result.files_checked == len(result.targets) > 50
    assert 1 <= len(turns) <= 5
