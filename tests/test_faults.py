"""Faults during ``torchup fix``: a run killed at random moments, and files that change under it.

- A ``fix`` over 300 files is killed with SIGKILL (its whole process group, workers included) at
  random moments: every file is then byte for byte either its original or its fully fixed version.
  A kill between creating the temporary file and renaming it over the original leaves a
  ``.torchup-XXXXXXXX.tmp`` beside it (nothing can prevent that); the next ``fix`` removes it, so
  after the next run no temporary file is left. Disk writes are slowed down (``os.fsync`` sleeps)
  in some trials so that kills land inside writes; the seed is printed for a failing trial and can
  be set with ``TORCHUP_FAULT_SEED``.
- A file that changes on disk between torchup's read and its write is not overwritten, and the
  run says so; the other files are fixed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import torchup
from torchup.cli.main import main
from torchup.run import runner

REPO_ROOT = Path(__file__).resolve().parent.parent
FILES = 300

# Run the CLI with os.fsync slowed down: a disk where each write takes a while.
SLOW_DISK = (
    "import os, sys, time\n"
    "_fsync = os.fsync\n"
    "def fsync(fd):\n"
    "    time.sleep(float(os.environ['SLOW_FSYNC']))\n"
    "    _fsync(fd)\n"
    "os.fsync = fsync\n"
    "from torchup.cli.main import main\n"
    "sys.exit(main())\n"
)

TEMPLATES = [
    "import torch\n\nQ, R = torch.qr(A{i})\nL = torch.cholesky(B, True)\n",
    "from torch import cholesky\n\n\ndef f{i}(A):\n    return cholesky(A)  # n{i}\n",
    "import torch\r\ng = torch.compile(model{i}, shapes_spec=spec)\r\n",
    '"""Doc {i}."""\nimport torch\nwith torch.autograd.profiler.profile(use_cuda=True) as p:\n    Q, R = torch.qr(x, some=False)\n',
    "import torch as th\n\nclass M{i}:\n    def go(self, A):\n        return th.cholesky(A, upper=False) + th.qr(A)[0]\n",
]


def originals() -> dict[str, bytes]:
    files = {}
    for i in range(FILES):
        text = TEMPLATES[i % len(TEMPLATES)].format(i=i) + "x = 1\n" * (i % 7)
        files[f"pkg{i % 10}/m{i:03d}.py"] = text.encode()
    return files


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The files, and what each becomes after a complete ``fix`` (computed through the library API)."""
    files = originals()
    root = tmp_path_factory.mktemp("names")
    fixed = {}
    for name, data in files.items():
        path = root / name  # the same settings as the CLI will find: none (a temporary directory)
        result = torchup.fix_source(data, path=str(path))
        fixed[name] = result.source.encode()  # the templates are UTF-8 without a byte-order mark
        assert fixed[name] != data, name  # every file has something to fix
        assert not [f for f in result.remaining if f.fix is not None], name
    return files, fixed


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def temporaries(root: Path) -> list[Path]:
    return sorted(root.rglob(".torchup-*.tmp"))


def environment(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **extra}
    for name in ("TORCHUP_DEBUG", "FORCE_COLOR"):
        env.pop(name, None)
    return env


def start_fix(root: Path, jobs: int, slow_fsync: float) -> subprocess.Popen:
    args = ["fix", "--no-cache", "--jobs", str(jobs), "-q", "--output-format", "concise", str(root)]
    if slow_fsync:
        command = [sys.executable, "-c", SLOW_DISK, *args]
        env = environment(SLOW_FSYNC=str(slow_fsync))
    else:
        command = [sys.executable, "-m", "torchup", *args]
        env = environment()
    return subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )


def classify(root: Path, files: dict[str, bytes], fixed: dict[str, bytes]) -> tuple[int, int]:
    """(files still original, files fully fixed); fails on anything else."""
    counts = [0, 0]
    for name in files:
        data = (root / name).read_bytes()
        assert data in (files[name], fixed[name]), f"{name} is neither its original nor its fixed version:\n{data!r}"
        counts[data == fixed[name]] += 1
    return counts[0], counts[1]


def finish_and_check(root: Path, files: dict[str, bytes], fixed: dict[str, bytes]) -> None:
    """The next (complete) run removes the killed run's leftovers and fixes the rest."""
    leftovers = temporaries(root)
    if leftovers:
        # Leftovers younger than this are spared: they could belong to a torchup still running.
        time.sleep(runner.STALE_TEMPORARY_AGE + 0.2)
    process = start_fix(root, jobs=2, slow_fsync=0)
    out, err = process.communicate(timeout=300)
    text = (out + err).decode()
    assert process.returncode == 0, text
    assert "Traceback" not in text
    assert temporaries(root) == [], "the next fix run left a temporary file in place"
    assert classify(root, files, fixed) == (0, len(files))


def test_a_complete_run_fixes_every_file_and_leaves_no_temporary(tmp_path, corpus):
    files, fixed = corpus
    write_tree(tmp_path, files)
    process = start_fix(tmp_path, jobs=2, slow_fsync=0)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, (out + err).decode()
    assert temporaries(tmp_path) == []
    assert classify(tmp_path, files, fixed) == (0, FILES)


# (jobs, seconds each fsync takes): one worker and several; real and slowed-down writes.
TRIALS = [(1, 0.0), (2, 0.0), (2, 0.01)]
KILLS = 4


@pytest.mark.parametrize(("jobs", "slow_fsync"), TRIALS, ids=[f"jobs{j}-fsync{s}" for j, s in TRIALS])
def test_sigkill_at_random_moments_leaves_each_file_original_or_fixed(tmp_path, corpus, jobs, slow_fsync):
    """Kill a run over the original files and look, several times (the killed runs' temporaries pile up
    in the tree), then let a run finish: it removes them."""
    files, fixed = corpus
    seed = int(os.environ.get("TORCHUP_FAULT_SEED", random.randrange(2**32)))
    rng = random.Random(seed)
    # How long a complete run takes here: the kills are spread over it.
    write_tree(tmp_path / "probe", files)
    began = time.monotonic()
    start_fix(tmp_path / "probe", jobs, slow_fsync).communicate(timeout=300)
    duration = time.monotonic() - began
    shutil.rmtree(tmp_path / "probe")

    root = tmp_path / "tree"
    kills = []
    for _ in range(KILLS):
        write_tree(root, files)
        delay = rng.uniform(0.0, duration)
        process = start_fix(root, jobs, slow_fsync)
        time.sleep(delay)
        os.killpg(process.pid, signal.SIGKILL)  # the parent and its workers, mid-flight
        process.communicate(timeout=60)
        _, done = classify(root, files, fixed)
        kills.append((round(delay, 3), done, len(temporaries(root))))
    print(f"seed={seed} duration={duration:.2f}s kills (delay, files fixed, temporaries left)={kills}")
    finish_and_check(root, files, fixed)


def test_a_stale_temporary_is_removed_by_the_next_fix_and_a_fresh_one_is_spared(capsys, tmp_path):
    (tmp_path / "m.py").write_bytes(b"import torch\nQ, R = torch.qr(A)\n")
    stale = tmp_path / ".torchup-abcd1234.tmp"
    stale.write_bytes(b"import torch\nQ, R = torch.linalg.qr(A)\n")
    old = time.time() - 60
    os.utime(stale, (old, old))
    fresh = tmp_path / ".torchup-fresh_01.tmp"  # could be another torchup's write in progress
    fresh.write_bytes(b"partial")
    unrelated = [tmp_path / ".torchup-notes.tmp", tmp_path / "torchup-abcd1234.tmp"]  # not our names
    for path in unrelated:
        path.write_bytes(b"keep me")
        os.utime(path, (old, old))

    assert main(["check", "--no-cache", str(tmp_path)]) == 1  # check writes nothing, removes nothing
    assert stale.exists()
    assert main(["fix", "--diff", "--no-cache", str(tmp_path)]) == 1  # nor does --diff
    assert stale.exists()
    capsys.readouterr()

    assert main(["fix", "--no-cache", str(tmp_path)]) == 0
    assert not stale.exists()
    assert fresh.exists()
    assert all(path.read_bytes() == b"keep me" for path in unrelated)
    assert (tmp_path / "m.py").read_bytes() == b"import torch\nQ, R = torch.linalg.qr(A)\n"


def test_a_stale_temporary_beside_a_named_file_is_removed(capsys, tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "m.py").write_bytes(b"import torch\nL = torch.cholesky(A)\n")
    stale = sub / ".torchup-zz99zz99.tmp"
    stale.write_bytes(b"")
    os.utime(stale, (time.time() - 60,) * 2)
    assert main(["fix", "--no-cache", str(sub / "m.py")]) == 0
    assert not stale.exists()


# -- a file changed between read and write -------------------------------------------------------

GOOD = b"import torch\nQ, R = torch.qr(A)\n"
GOOD_FIXED = b"import torch\nQ, R = torch.linalg.qr(A)\n"
VICTIM = b"import torch\nL = torch.cholesky(A)\n"


def concurrent_change(monkeypatch, path: Path, change) -> None:
    """After torchup has read ``path`` and computed its fix, but before writing, ``change`` it."""
    real = runner.fix_source

    def fix_then_change(checker, source, *, unsafe):
        outcome = real(checker, source, unsafe=unsafe)
        if os.path.samefile(source.path, path):
            change(path)
        return outcome

    monkeypatch.setattr(runner, "fix_source", fix_then_change)


def edit_appending(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"print('edited meanwhile')\n")


def edit_same_size_same_mtime(path: Path) -> None:
    """An edit that keeps the size and the modification time: only the content tells."""
    info = path.stat()
    data = path.read_bytes()
    path.write_bytes(data.replace(b"(A)", b"(B)"))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def edit_by_rename(path: Path) -> None:
    """An editor that saves by writing a new file and renaming it over the old one."""
    new = path.with_suffix(".new")
    new.write_bytes(b"# rewritten by the editor\n" + path.read_bytes())
    os.replace(new, path)


EDITS = {"append": edit_appending, "same-size-and-mtime": edit_same_size_same_mtime, "rename": edit_by_rename}


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_a_file_changed_between_read_and_write_is_not_overwritten(capsys, monkeypatch, tmp_path, edit):
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    victim = tmp_path / "victim.py"
    victim.write_bytes(VICTIM)
    expected = {}

    def change(path: Path) -> None:
        edit(path)
        expected["data"] = path.read_bytes()

    concurrent_change(monkeypatch, victim, change)
    code = main(["fix", "--no-cache", "--jobs", "1", "--output-format", "concise", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 1
    assert victim.read_bytes() == expected["data"]  # the concurrent edit survives
    assert good.read_bytes() == GOOD_FIXED  # the run went on
    assert f"{victim}:1:1: TU000 {victim} changed on disk while torchup was fixing it; nothing was written" in out
    assert "Traceback" not in out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.py", "victim.py"]  # no temporary left


def test_a_file_deleted_between_read_and_write_is_not_recreated(capsys, monkeypatch, tmp_path):
    good = tmp_path / "good.py"
    good.write_bytes(GOOD)
    victim = tmp_path / "victim.py"
    victim.write_bytes(VICTIM)
    concurrent_change(monkeypatch, victim, Path.unlink)
    code = main(["fix", "--no-cache", "--jobs", "1", "--output-format", "concise", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 1
    assert not victim.exists()
    assert good.read_bytes() == GOOD_FIXED
    assert f"{victim}:1:1: TU000 cannot write the fixed {victim}" in out
    assert "Traceback" not in out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.py"]


def test_a_notebook_changed_between_read_and_write_is_not_overwritten(capsys, monkeypatch, tmp_path):
    notebook = tmp_path / "nb.ipynb"
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": ["import torch\n", "Q, R = torch.qr(A)"]}
    notebook.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    import torchup.run.notebook

    real = torchup.run.notebook.process

    def process_then_change(*args, **kwargs):
        outcome = real(*args, **kwargs)
        if kwargs.get("fix"):  # (a fix run checks every file first, then fixes: the change comes in between)
            edit_appending(notebook)
        return outcome

    monkeypatch.setattr(torchup.run.notebook, "process", process_then_change)  # (the runner imports it when needed)
    edited_before = notebook.read_bytes() + b"print('edited meanwhile')\n"
    code = main(["fix", "--no-cache", "--jobs", "1", "--output-format", "concise", str(notebook)])
    out, _ = capsys.readouterr()
    assert code == 1
    assert notebook.read_bytes() == edited_before
    assert "changed on disk while torchup was fixing it" in out
