"""The warm fast path (torchup.run.replay): an unchanged tree gets the last run's output back without a
run; any change the output could depend on makes a full run, whose output then matches a cold one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import torchup.cli.commands
from torchup.cli.main import main
from torchup.run import replay

QR = "import torch\nQ, R = torch.qr(A)\n"
CHOL = "import torch\nL = torch.cholesky(A)\n"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project (the working directory) whose files count as settled at once. The tests change them
    later than the clock's tick (a run is longer), or show the change in size, inode or mtime."""
    monkeypatch.setattr(replay, "SETTLE_SECONDS", -3600.0)
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "a.py").write_text(QR)
    (root / "pkg" / "b.py").write_text(CHOL)
    (root / "pkg" / "clean.py").write_text("x = 1\n")
    monkeypatch.chdir(root)
    return root


class Runs:
    """Counts the full runs (``run_check`` calls) behind ``main``; ``then``, if set, runs once after
    the next one has printed its report, before the run is recorded (a change during the run)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = 0
        self.then: Callable[[], None] | None = None
        original = torchup.cli.commands.run_check

        def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
            self.full += 1
            try:
                return original(*args, **kwargs)
            finally:
                then, self.then = self.then, None
                if then is not None:
                    then()

        monkeypatch.setattr(torchup.cli.commands, "run_check", counted)


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> Runs:
    return Runs(monkeypatch)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def cold(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """What a run without any cache prints (the reference for a replay or a re-run)."""
    code, out, err = run(capsys, argv[0], "--no-cache", *argv[1:])
    return code, out, err


def manifests(root: Path) -> list[Path]:
    return sorted((root / ".torchup_cache" / replay.__version__ / "runs").glob("*.bin"))


def pinned(root: Path, names: bool = False) -> dict[str, int]:
    """The paths the one manifest under ``root`` keeps by content, and their kinds; ``names``: also
    the directories kept by the names that matter in them for good (the from-version's, NAMES)."""
    [path] = manifests(root)
    manifest = replay._decode(path.read_bytes())
    assert manifest is not None
    return {pin[0]: pin[1] for pin in manifest[3] if names or pin[1] != replay.NAMES}


def edit(path: Path, text: str) -> None:
    """Write ``text`` and move the mtime a second on: a change no clock tick can hide."""
    before = path.stat().st_mtime_ns if path.exists() else time.time_ns()
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


COMMANDS = [
    ("check", "."),
    ("check", "--output-format", "concise", "."),
    ("check", "--output-format", "json", "a.py", "pkg"),
    ("check", "--output-format", "sarif", "--select", "TU101", "."),
    ("check", "--statistics", "."),
    ("check", "--exit-zero", "-q", "."),
    ("fix", "--diff", "."),
    ("check", "missing.py", "."),
]


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(argv) for argv in COMMANDS])
def test_an_unchanged_tree_is_replayed_exactly(project: Path, capsys, runs: Runs, argv: tuple[str, ...]) -> None:
    first = run(capsys, *argv)
    assert runs.full == 1 and len(manifests(project)) == 1
    assert run(capsys, *argv) == first == cold(capsys, *argv)
    assert runs.full == 2  # the replay ran nothing; the cold reference did


def _edit_same_size(root: Path) -> None:
    edit(root / "a.py", QR.replace("qr", "xy"))


def _add_in_subdirectory(root: Path) -> None:
    (root / "pkg" / "new.py").write_text(QR)


def _delete(root: Path) -> None:
    (root / "pkg" / "b.py").unlink()


def _rename(root: Path) -> None:
    os.rename(root / "pkg" / "b.py", root / "pkg" / "c.py")


def _replace_keeping_size_and_mtime(root: Path) -> None:
    """An editor's atomic save of the same size, its mtime set back: the inode and ctime tell."""
    info = (root / "a.py").stat()
    (root / "tmp").write_text(QR.replace("qr", "xy"))
    os.utime(root / "tmp", ns=(info.st_mtime_ns, info.st_mtime_ns))
    os.replace(root / "tmp", root / "a.py")


def _config_in_subdirectory(root: Path) -> None:
    (root / "pkg" / "pyproject.toml").write_text('[tool.torchup]\nignore = ["TU101"]\n')


def _nested_config(root: Path) -> None:
    """A configuration in a directory the walk reaches (not one named on the command line)."""
    (root / "pkg" / "sub").mkdir()
    (root / "pkg" / "sub" / "d.py").write_text(CHOL)
    (root / "pkg" / "sub" / "pyproject.toml").write_text("[tool.torchup]\nignore = []\n")


def _nested_config_edited(root: Path) -> None:
    edit(root / "pkg" / "sub" / "pyproject.toml", '[tool.torchup]\nignore = ["TU101"]\n')


def _write_config(root: Path) -> None:
    (root / "pyproject.toml").write_text("[tool.torchup]\nignore = []\n")


def _config_edited(root: Path) -> None:
    edit(root / "pyproject.toml", '[tool.torchup]\nignore = ["TU103"]\n')


def _config_in_a_parent(root: Path) -> None:
    (root.parent / "torchup.toml").write_text('ignore = ["TU101"]\n')


def _make_repository(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("# nothing yet\n")


def _gitignore_edited(root: Path) -> None:
    edit(root / ".gitignore", "b.py\n")


def _ignore_pkg(root: Path) -> None:
    (root / ".gitignore").write_text("b.py\n")


def _repository_appears(root: Path) -> None:
    (root / ".git").mkdir()


def _file_becomes_a_directory(root: Path) -> None:
    (root / "a.py").unlink()
    (root / "a.py").mkdir()


def _missing_path_appears(root: Path) -> None:
    (root / "missing.py").write_text(QR)


def _nothing(root: Path) -> None:
    pass


# The from-version (torchup.settings.torch_requirement) turns TU140, a change of behaviour new in 2.14, off for a
# project on 2.14: a change to the torch requirement changes the report.
def _torchscript(root: Path) -> None:
    # (TU140: a change of behaviour in 2.14, reported only for a floor before it)
    (root / "pkg" / "s.py").write_text("import torch\nwith torch.profiler.profile(with_stack=True) as prof:\n"
                                       "    pass\nrows = prof.key_averages()\n")


def _torch_requirement_above(root: Path) -> None:
    (root / "requirements-gpu.txt").write_text("torch==2.14.*\n")  # (the project itself is not walked)


def _torch_requirement_in_a_parent(root: Path) -> None:
    (root.parent / "requirements.txt").write_text("torch==2.14.*\n")


def _torchscript_and_requirements_directory(root: Path) -> None:
    _torchscript(root)
    (root / "requirements").mkdir()
    (root / "requirements" / "base.txt").write_text("numpy\n")


def _torchscript_and_an_include(root: Path) -> None:
    _torchscript(root)
    (root / "requirements.txt").write_text("-r ci/pinned.txt\n")
    (root / "ci").mkdir()
    (root / "ci" / "pinned.txt").write_text("torch>=2.1\n")


def _torch_requirement_in_requirements_directory(root: Path) -> None:
    (root / "requirements" / "gpu.txt").write_text("torch==2.14.*\n")


def _included_torch_requirement_edited(root: Path) -> None:
    edit(root / "ci" / "pinned.txt", "torch>=2.14\n")


def _torchscript_and_pyproject(root: Path) -> None:
    _torchscript(root)
    (root / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["torch>=2.1"]\n')


def _pyproject_torch_edited(root: Path) -> None:
    edit(root / "pyproject.toml", '[project]\nname = "p"\ndependencies = ["torch>=2.14"]\n')


# (what the project has before the first run, the change after it)
CHANGES: list[tuple[Callable[[Path], None], Callable[[Path], None]]] = [
    (_nothing, _edit_same_size), (_nothing, _add_in_subdirectory), (_nothing, _delete), (_nothing, _rename),
    (_nothing, _replace_keeping_size_and_mtime), (_nothing, _config_in_subdirectory), (_nested_config, _nested_config_edited),
    (_write_config, _config_edited),
    (_nothing, _config_in_a_parent), (_make_repository, _gitignore_edited), (_ignore_pkg, _repository_appears),
    (_nothing, _file_becomes_a_directory), (_nothing, _missing_path_appears),
    (_torchscript, _torch_requirement_above), (_torchscript, _torch_requirement_in_a_parent),
    (_torchscript_and_requirements_directory, _torch_requirement_in_requirements_directory),
    (_torchscript_and_an_include, _included_torch_requirement_edited),
    (_torchscript_and_pyproject, _pyproject_torch_edited),
]


@pytest.mark.parametrize("split", [False, True], ids=["one-process", "split-with-a-fork"])
@pytest.mark.parametrize(("prepare", "change"), CHANGES, ids=[c.__name__.strip("_") for _, c in CHANGES])
def test_a_change_makes_a_full_run(project: Path, capsys, runs: Runs, prepare: Callable[[Path], None],
                                   change: Callable[[Path], None], split: bool, monkeypatch) -> None:
    """Also where a long list of paths is compared in two processes (``replay.SPLIT_PATHS``): the
    change may be in either half."""
    if split:
        if not hasattr(os, "fork"):
            pytest.skip("no fork")
        monkeypatch.setattr(replay, "SPLIT_PATHS", 2)
    prepare(project)
    argv = ("check", "--output-format", "concise", "a.py", "pkg", "missing.py")  # (the project itself is not walked)
    first = run(capsys, *argv)
    assert run(capsys, *argv) == first and runs.full == 1  # replayed
    change(project)
    after = run(capsys, *argv)
    assert runs.full == 2
    assert after == cold(capsys, *argv) != first


def test_what_cannot_change_the_from_version_is_replayed(project: Path, capsys, runs: Runs) -> None:
    """The directories above the paths are kept by the names in them that can hold a torch
    requirement: a temporary file made there, or the cache, changes nothing."""
    _torchscript(project)
    argv = ("check", "--output-format", "concise", "pkg")
    first = run(capsys, *argv)
    assert "TU140" in first[1]
    (project / "notes.txt").write_text("x\n")
    (project.parent / "scratch.tmp").write_text("x\n")
    assert run(capsys, *argv) == first and runs.full == 1
    _torch_requirement_above(project)
    assert run(capsys, *argv) == cold(capsys, *argv) != first and runs.full == 3


def test_a_from_version_option_is_replayed(project: Path, capsys, runs: Runs) -> None:
    _torchscript(project)
    for version, found in (("2.13", True), ("2.14", False)):
        argv = ("check", "--output-format", "concise", "--from-version", version, ".")
        first = run(capsys, *argv)
        assert ("TU140" in first[1]) is found
        assert run(capsys, *argv) == first
    assert runs.full == 2


def test_other_command_lines_and_environments_are_not_answered(project: Path, capsys, runs: Runs, monkeypatch) -> None:
    run(capsys, "check", ".")
    run(capsys, "check", "--select", "TU101", ".")
    monkeypatch.setenv("FORCE_COLOR", "1")
    coloured = run(capsys, "check", ".")
    assert runs.full == 3 and "\033[" in coloured[1]
    assert len(manifests(project)) == 3
    monkeypatch.delenv("FORCE_COLOR")
    run(capsys, "check", ".")
    assert runs.full == 3


def test_a_new_torchup_version_or_an_edited_torchup_makes_a_full_run(project: Path, capsys, runs: Runs,
                                                                       monkeypatch, tmp_path_factory) -> None:
    package = tmp_path_factory.mktemp("package")
    (package / "rule.py").write_text("x = 1\n")
    monkeypatch.setattr(replay, "__file__", str(package / "run" / "replay.py"))  # torchup's files, as the recorder sees them
    run(capsys, "check", ".")
    run(capsys, "check", ".")
    assert runs.full == 1
    edit(package / "rule.py", "x = 2\n")
    run(capsys, "check", ".")
    assert runs.full == 2
    monkeypatch.setattr(replay, "__version__", "9.9.9")
    run(capsys, "check", ".")
    assert runs.full == 3


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project written just now, as a copy or a checkout leaves it (the working directory): every
    status in it is racy, whatever the pace of the test. (torchup's own files, which would be racy
    too, are left out of what the recorder sees: an edited torchup is tested above.)"""
    monkeypatch.setattr(replay, "SETTLE_SECONDS", 3600.0)  # (an hour: the tree is younger)
    monkeypatch.setattr(replay, "__file__", str(tmp_path / "no-package" / "run" / "replay.py"))
    root = tmp_path / "fresh"
    (root / "pkg").mkdir(parents=True)
    (root / "a.py").write_text(QR)
    (root / "pkg" / "b.py").write_text(CHOL)
    (root / "pkg" / "clean.py").write_text("x = 1\n")
    monkeypatch.chdir(root)
    return root


FRESH_COMMANDS = [
    ("check", "."),  # (the cache is made in `.` during the first run)
    ("check", "--output-format", "concise", "a.py", "pkg", "missing.py"),
    ("check", "--statistics", "."),
]


@pytest.mark.parametrize("config", [False, True], ids=["plain", "with-a-config"])
@pytest.mark.parametrize("argv", FRESH_COMMANDS, ids=[" ".join(argv) for argv in FRESH_COMMANDS])
def test_a_tree_written_just_now_is_replayed_from_the_second_run(fresh: Path, capsys, runs: Runs,
                                                                 argv: tuple[str, ...], config: bool) -> None:
    """The hard case: every status is racy (the first run even adds the cache to the tree it walks).
    The files are kept by the digests of what the run read, the directories and the configuration
    by their contents; the second run compares them, and replays."""
    if config:
        (fresh / "pyproject.toml").write_text('[tool.torchup]\nignore = ["TU103"]\n')
    first = run(capsys, *argv)
    assert runs.full == 1
    kinds = pinned(fresh)
    assert kinds["pkg/b.py"] == replay.FILE and kinds["pkg"] == replay.LISTING
    assert any(path.endswith("pyproject.toml") for path in kinds) is config
    assert run(capsys, *argv) == first == cold(capsys, *argv)
    assert runs.full == 2  # the replay ran nothing; the cold reference did


def test_a_file_rewritten_in_the_tick_of_its_status_is_never_replayed_stale(fresh: Path, capsys, runs: Runs,
                                                                            monkeypatch) -> None:
    """Same size, same mtime, after the run: only the content tells (the ctime would not, were the
    clock coarse enough), and the content is what a racy file is kept by."""
    argv = ("check", "--output-format", "concise", "-q", ".")  # (-q: a warm summary may count cache hits)
    first = run(capsys, *argv)
    assert pinned(fresh)["a.py"] == replay.FILE
    info = (fresh / "a.py").stat()
    (fresh / "a.py").write_text(QR.replace("qr", "xy"))
    os.utime(fresh / "a.py", ns=(info.st_atime_ns, info.st_mtime_ns))
    assert (fresh / "a.py").stat().st_size == info.st_size
    monkeypatch.setattr(replay, "SETTLE_SECONDS", -3600.0)  # (and the pins count as settled: no matter)
    after = run(capsys, *argv)
    assert runs.full == 2 and after == cold(capsys, *argv) != first
    assert run(capsys, *argv) == after and runs.full == 3  # recorded anew, and replayed


def _edit_read_file(root: Path) -> None:
    (root / "a.py").write_text(QR.replace("qr", "xy"))  # (same size, the same tick as likely as not)


_add_file, _remove_file, _rename_file = _add_in_subdirectory, _delete, _rename  # (the same changes, during a run)


def _add_directory(root: Path) -> None:
    (root / "pkg" / "sub").mkdir()
    (root / "pkg" / "sub" / "d.py").write_text(CHOL)


def _add_config(root: Path) -> None:
    (root / "pkg" / "pyproject.toml").write_text('[tool.torchup]\nignore = ["TU101"]\n')


def _remove_config(root: Path) -> None:
    (root / "pkg" / "pyproject.toml").unlink()


def _with_ignored_file(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("b.py\n")


def _remove_gitignore(root: Path) -> None:
    (root / ".gitignore").unlink()


def _with_gitignore(root: Path) -> None:
    (root / ".gitignore").write_text("b.py\n")


def _make_repository(root: Path) -> None:
    (root / ".git").mkdir()  # (the .gitignore, there all along, counts from now on)


# (what the project has before the first run, the change while it runs)
DURING: list[tuple[Callable[[Path], None], Callable[[Path], None]]] = [
    (_nothing, _edit_read_file), (_nothing, _add_file), (_nothing, _remove_file), (_nothing, _rename_file),
    (_nothing, _add_directory), (_nothing, _add_config), (_add_config, _remove_config),
    (_with_ignored_file, _remove_gitignore), (_with_gitignore, _make_repository),
    (_torchscript, _torch_requirement_above), (_torchscript, _torch_requirement_in_a_parent),
    (_torchscript_and_pyproject, _pyproject_torch_edited),
]


@pytest.mark.parametrize(("prepare", "change"), DURING, ids=[c.__name__.strip("_") for _, c in DURING])
def test_a_change_during_the_run_is_never_replayed(fresh: Path, capsys, runs: Runs, prepare: Callable[[Path], None],
                                                   change: Callable[[Path], None]) -> None:
    """Made after the run read the tree and printed its report, before it is recorded: with every
    status racy, nothing but content tells. The next run is a full one, and prints what a cold run
    prints."""
    prepare(fresh)
    argv = ("check", "--output-format", "concise", "-q", ".")  # (-q: a warm summary may count cache hits)
    runs.then = lambda: change(fresh)
    first = run(capsys, *argv)
    after = run(capsys, *argv)
    assert runs.full == 2
    assert after == cold(capsys, *argv) != first


def test_pinned_paths_that_settle_are_kept_by_their_status(fresh: Path, capsys, runs: Runs, monkeypatch) -> None:
    """A replay that finds a pinned path settled saves its status instead: the next one only stats it."""
    argv = ("check", "--output-format", "concise", "-q", ".")  # (-q: a warm summary may count cache hits)
    first = run(capsys, *argv)
    assert len(pinned(fresh)) == 5  # a.py, pkg/b.py, pkg/clean.py, ., pkg
    monkeypatch.setattr(replay, "SETTLE_SECONDS", -3600.0)  # as if an hour had passed
    assert run(capsys, *argv) == first and pinned(fresh) == {}
    assert run(capsys, *argv) == first and runs.full == 1
    edit(fresh / "pkg" / "b.py", "x = 2\n")
    assert run(capsys, *argv) == cold(capsys, *argv) != first and runs.full == 3


def test_what_cannot_be_kept_by_content_is_not_recorded(fresh: Path, capsys, runs: Runs) -> None:
    """Racy files read by a fix (it reads the files it fixes again), or with findings from the cache
    (the report quotes their lines from another reading): nothing is saved, until they settle."""
    run(capsys, "check", ".")
    assert len(manifests(fresh)) == 1
    run(capsys, "fix", "--diff", ".")
    run(capsys, "check", "--statistics", ".")  # (the findings in a.py and pkg/b.py from the cache)
    assert len(manifests(fresh)) == 1 and runs.full == 3


def test_a_torchup_written_just_now_is_not_recorded(project: Path, capsys, runs: Runs, monkeypatch) -> None:
    """torchup's own files were read when it started: nothing kept of them but their status."""
    monkeypatch.setattr(replay, "SETTLE_SECONDS", 1e9)  # (every status racy: torchup's files too)
    run(capsys, "check", ".")
    assert manifests(project) == []


def test_a_corrupt_manifest_is_ignored_with_a_warning(project: Path, capsys, runs: Runs) -> None:
    first = run(capsys, "check", ".")
    [saved] = manifests(project)
    data = bytearray(saved.read_bytes())
    data[len(data) // 2] ^= 0x20  # one bit, inside the saved output or a status
    saved.write_bytes(bytes(data))
    code, out, err = run(capsys, "check", ".")
    assert "saved run" in err and "corrupt" in err and "ignoring it" in err
    assert (code, out) == first[:2] and runs.full == 2
    assert run(capsys, "check", ".") == first and runs.full == 2  # saved anew, and replayed


@pytest.mark.parametrize("garbage", [b"", b"abc", b"\0\0\0\0", b"\x00\x00\x00\x00\xff"])
def test_garbage_in_a_manifest_is_never_trusted(project: Path, capsys, runs: Runs, garbage: bytes) -> None:
    first = run(capsys, "check", ".")
    [saved] = manifests(project)
    saved.write_bytes(garbage)
    assert run(capsys, "check", ".")[:2] == first[:2] and runs.full == 2


def test_a_fix_that_writes_or_a_run_that_warns_is_not_recorded(project: Path, capsys, runs: Runs) -> None:
    run(capsys, "fix", ".")
    assert "torch.linalg.qr" in (project / "a.py").read_text() and manifests(project) == []
    cache = project / ".torchup_cache" / replay.__version__ / "findings.json"
    cache.write_text("{not json")
    assert "corrupt" in run(capsys, "check", ".")[2]
    assert manifests(project) == []
    run(capsys, "check", ".")
    assert manifests(project) != []  # once nothing warns


def test_options_that_are_never_replayed(project: Path, capsys, runs: Runs) -> None:
    for argv in (["--no-cache", "."], ["--output-file", "report.txt", "."], ["--add-noqa", "."], ["--no-c", "."]):
        run(capsys, "check", *argv)
        run(capsys, "check", *argv)
    assert runs.full == 8


def test_command_lines_the_fast_path_accepts() -> None:
    parse = replay.Invocation.parse
    accepted = parse(["check", "--select=TU101", "-q", "src", "--config", "x/torchup.toml", "tests"])
    assert accepted is not None and accepted.paths == ["src", "tests"] and accepted.config == "x/torchup.toml"
    assert parse(["fix", "--isolated"]) is not None and parse(["fix", "--isolated"]).paths == ["."]  # type: ignore[union-attr]
    for refused in (["rules"], ["check", "-"], ["check", "--no-cache"], ["check", "--select"], ["check", "--help"],
                    ["check", "--", "x.py"], ["check", "-j4"], ["check", "--quiet=yes"]):
        assert parse(refused) is None, refused


def test_a_replay_imports_nothing_of_the_checker(tmp_path: Path) -> None:
    """From a fresh interpreter, with the real settle time, over a tree written just now (and the
    cache made in it): the second run answers from the manifest without importing the engine (so
    it costs an interpreter's start, the stat calls, and reading the files written just now)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(QR)
    (tmp_path / "src" / "b.py").write_text("x = 1\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-X", "importtime", "-m", "torchup", "check", "."]
    first = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    second = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert first.returncode == second.returncode == 1
    assert first.stdout == second.stdout and "TU103" in first.stdout
    assert "torchup.cli.commands" in first.stderr and "torchup.cli.commands" not in second.stderr


def test_the_progress_line_is_shown_but_not_replayed(tmp_path: Path, capsys, runs: Runs, monkeypatch) -> None:
    """On a terminal the progress line goes to stderr; it is not part of the report kept for a replay."""
    import io

    monkeypatch.setattr(replay, "SETTLE_SECONDS", -3600.0)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    for index in range(250):
        (tmp_path / "src" / f"m{index}.py").write_text(QR if index == 0 else "x = 1\n")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    main(["check", "--output-format", "concise", "--jobs", "1", "src"])
    assert "files/s" in terminal.getvalue()
    first = capsys.readouterr().out
    terminal.seek(0)
    terminal.truncate()
    main(["check", "--output-format", "concise", "--jobs", "1", "src"])
    assert runs.full == 1 and capsys.readouterr().out == first
    assert "files/s" not in terminal.getvalue()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
@pytest.mark.parametrize("where", ["none", "first", "middle", "last", "first pin", "last pin"])
def test_a_long_list_is_compared_in_two_processes_and_either_half_tells(tmp_path: Path, where: str) -> None:
    paths = []
    for index in range(replay.SPLIT_PATHS + 1):
        path = tmp_path / f"m{index:05d}.py"
        path.write_text("x = 1\n")
        paths.append(str(path))
    statuses: list[object] = [hash(replay._status(path)) for path in paths]
    for index in range(4):
        (tmp_path / f"p{index}.py").write_text(f"y = {index}\n")
    pins = [(str(tmp_path), replay.LISTING, 0, replay._content(str(tmp_path))[2])]  # type: ignore[index]
    pins += [(str(tmp_path / f"p{i}.py"), replay.FILE, 6, replay.digest(f"y = {i}\n".encode())) for i in range(4)]
    changed = {"none": None, "first": 0, "middle": len(paths) // 2, "last": len(paths) - 1}.get(where)
    if changed is not None:
        statuses[changed] = hash((1, 2, 3, 4, 5))  # (as if the file had another status when saved)
    if where.endswith("pin"):
        (tmp_path / ("p0.py" if where == "first pin" else "p3.py")).write_text("y = 9\n")  # (same size)
    settled = replay._unchanged(paths, statuses, pins)
    assert (settled is not None) is (where == "none")
    if settled is not None:  # the statuses of the pinned paths, from both halves, in order: all just written
        assert settled == [None] * len(pins)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_settled_pins_come_back_from_both_halves(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(replay, "SETTLE_SECONDS", -3600.0)  # (settled at once)
    pins = []
    for index in range(replay.SPLIT_PATHS // replay.PIN_WEIGHT + 2):
        (tmp_path / f"p{index}.py").write_text(f"y = {index:04d}\n")
        pins.append((str(tmp_path / f"p{index}.py"), replay.FILE, 9, replay.digest(f"y = {index:04d}\n".encode())))
    settled = replay._unchanged([], [], pins)
    assert settled == [hash(replay._status(path)) for path, *_ in pins]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_the_child_that_compares_half_the_paths_always_ends_there(tmp_path: Path) -> None:
    """An error in the child's half (a manifest of another layout: one status short) answers
    "changed", and the child exits there: were it to run on, the parent would wait for it forever."""
    import signal

    paths = [str(tmp_path / f"m{index:05d}.py") for index in range(replay.SPLIT_PATHS + 1)]
    for path in paths:
        Path(path).write_text("x = 1\n")
    statuses: list[object] = [hash(replay._status(path)) for path in paths]
    signal.alarm(30)  # (a hang fails the test instead of the suite)
    try:
        assert replay._unchanged(paths, statuses, []) == []
        assert replay._unchanged(paths, statuses[:-1], []) is None  # (the second half's zip fails in the child)
    finally:
        signal.alarm(0)
