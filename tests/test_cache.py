"""The findings cache, worker processes, progress and `torchup clean`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import torchup.run.cache
import torchup.run.replay
from torchup.cli.main import main

QR = "import torch\nQ, R = torch.qr(A)\n"
CHOL = "import torch\nL = torch.cholesky(A)\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(QR)
    (tmp_path / "b.py").write_text(CHOL)
    (tmp_path / "clean.py").write_text("x = 1\n")
    return tmp_path


def check(capsys: pytest.CaptureFixture[str], *extra: str) -> list[str]:
    main(["check", "--output-format", "concise", "-q", *extra, "."])
    out = capsys.readouterr().out
    return sorted(line.split()[0] + line.split()[1] for line in out.splitlines() if ": TU" in line)


def cache_file(root: Path) -> Path:
    return root / ".torchup_cache" / torchup.__version__ / "findings.json"


def analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record which files are really analysed (not answered from the cache)."""
    seen: list[str] = []
    from torchup.check.checker import Checker

    original = Checker.analyze

    def spy(self: Checker, source, *args):  # type: ignore[no-untyped-def]
        seen.append(Path(source.path).name)
        return original(self, source, *args)

    monkeypatch.setattr(Checker, "analyze", spy)
    return seen


def test_warm_run_reads_from_the_cache(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    first = check(capsys)
    assert cache_file(project).is_file()
    assert (project / ".torchup_cache" / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (project / ".torchup_cache" / ".gitignore").read_text().strip().endswith("*")
    seen = analyses(monkeypatch)
    assert check(capsys) == first == ["a.py:2:8:TU103", "b.py:2:5:TU101"]
    assert seen == []


def test_edit_rename_delete_invalidate_the_right_entries(project: Path, capsys, monkeypatch) -> None:
    check(capsys)
    seen = analyses(monkeypatch)
    (project / "a.py").write_text(QR + "Q2, R2 = torch.qr(B)\n")  # edited
    os.rename(project / "b.py", project / "c.py")  # renamed
    assert check(capsys) == ["a.py:2:8:TU103", "a.py:3:10:TU103", "c.py:2:5:TU101"]
    assert sorted(seen) == ["a.py", "c.py"]
    seen.clear()
    (project / "a.py").unlink()  # deleted
    assert check(capsys) == ["c.py:2:5:TU101"]
    assert seen == []


def test_same_size_edit_is_caught_by_the_content_hash(project: Path, capsys, monkeypatch) -> None:
    check(capsys)
    (project / "a.py").write_text(QR.replace("A)", "B)"))  # same size, new mtime
    seen = analyses(monkeypatch)
    assert check(capsys) == ["a.py:2:8:TU103", "b.py:2:5:TU101"]
    assert seen == ["a.py"]


def test_touched_but_unchanged_file_stays_cached(project: Path, capsys, monkeypatch) -> None:
    check(capsys)
    os.utime(project / "a.py")  # new mtime, same bytes: the hash matches
    seen = analyses(monkeypatch)
    check(capsys)
    assert seen == []


def test_settings_and_version_changes_invalidate(project: Path, capsys, monkeypatch) -> None:
    check(capsys)
    seen = analyses(monkeypatch)
    assert check(capsys, "--select", "TU101") == ["b.py:2:5:TU101"]
    assert seen == ["b.py"]  # re-analysed; a.py has no TU101 trigger word and is not parsed at all
    seen.clear()
    monkeypatch.setattr(torchup.run.cache, "__version__", "9.9.9")
    check(capsys)
    assert sorted(seen) == ["a.py", "b.py"]
    assert (project / ".torchup_cache" / "9.9.9" / "findings.json").is_file()


def test_corrupt_cache_is_ignored_with_a_warning(project: Path, capsys, monkeypatch) -> None:
    first = check(capsys)
    cache_file(project).write_text("{not json")
    seen = analyses(monkeypatch)
    main(["check", "--output-format", "concise", "-q", "."])
    captured = capsys.readouterr()
    assert "cache" in captured.err and "corrupt" in captured.err
    assert sorted(line.split()[0] + line.split()[1] for line in captured.out.splitlines()) == first
    assert sorted(seen) == ["a.py", "b.py"]
    json.loads(cache_file(project).read_text())  # rewritten whole


def test_tampered_entry_is_not_trusted(project: Path, capsys, monkeypatch) -> None:
    check(capsys)
    document = json.loads(cache_file(project).read_text())
    for entry in document["files"].values():
        entry["diagnostics"] = [{"garbage": True}]
    cache_file(project).write_text(json.dumps(document))
    assert check(capsys) == ["a.py:2:8:TU103", "b.py:2:5:TU101"]


def test_no_cache_neither_reads_nor_writes(project: Path, capsys) -> None:
    check(capsys, "--no-cache")
    assert not (project / ".torchup_cache").exists()


def test_fix_uses_the_cache_only_for_files_without_fixes(project: Path, capsys, monkeypatch) -> None:
    check(capsys)
    seen = analyses(monkeypatch)
    main(["fix", "-q", "."])
    capsys.readouterr()
    assert "torch.linalg.qr(A)" in (project / "a.py").read_text()
    assert "clean.py" not in seen and "a.py" in seen
    assert check(capsys) == []


def test_jobs_give_identical_findings(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for index in range(60):
        (tmp_path / f"m{index:02}.py").write_text(QR if index % 2 else CHOL)
    serial = check(capsys, "--no-cache", "--jobs", "1")
    parallel = check(capsys, "--no-cache", "--jobs", "2")
    assert serial == parallel and len(serial) == 60


def test_progress_is_silent_when_not_a_terminal(project: Path, capsys) -> None:
    main(["check", "."])
    assert "files/s" not in capsys.readouterr().err


def test_clean_removes_only_our_cache(project: Path, capsys) -> None:
    check(capsys)
    assert main(["clean"]) == 0
    assert not (project / ".torchup_cache").exists()
    (project / ".torchup_cache").mkdir()  # not ours: no CACHEDIR.TAG
    assert main(["clean"]) == 0
    assert (project / ".torchup_cache").exists()


def test_a_file_replaced_with_the_same_size_and_mtime_is_read_again(project: Path, capsys) -> None:
    """An atomic save, a `cp -p` or a checkout: size and mtime as before, but the inode and ctime differ."""
    check(capsys)
    info = (project / "a.py").stat()
    (project / "new").write_text(QR.replace("qr", "xy"))
    os.utime(project / "new", ns=(info.st_atime_ns, info.st_mtime_ns))
    os.replace(project / "new", project / "a.py")
    assert check(capsys) == ["b.py:2:5:TU101"]  # (the cached finding in a.py would be stale)


def test_a_file_written_just_before_the_run_is_hashed_until_it_settles(project: Path, capsys, monkeypatch) -> None:
    """Its status could hide a second write in the same clock tick, so the bytes decide."""
    check(capsys)
    entries = json.loads(cache_file(project).read_text())["files"]
    assert len(entries) == 3 and all(entry["racy"] for entry in entries.values())
    hashed: list[int] = []
    original = torchup.run.cache.digest
    monkeypatch.setattr(torchup.run.cache, "digest", lambda raw: hashed.append(1) or original(raw))
    seen = analyses(monkeypatch)
    assert check(capsys) == ["a.py:2:8:TU103", "b.py:2:5:TU101"]
    assert len(hashed) == 3 and seen == []
    monkeypatch.setattr(torchup.run.replay, "SETTLE_SECONDS", -3600.0)  # as if the files were old now
    check(capsys)
    assert len(hashed) == 6  # hashed once more, and found settled
    assert not any(entry["racy"] for entry in json.loads(cache_file(project).read_text())["files"].values())
    check(capsys)
    assert len(hashed) == 6 and seen == []


def test_another_spelling_of_the_same_files_reads_the_cache(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    """Paths are shown relative to the cwd; the cache keys on absolute paths, so `.` and the
    absolute path of the same tree share entries (and print alike)."""
    first = check(capsys)
    seen = analyses(monkeypatch)
    main(["check", "--output-format", "concise", "-q", str(project)])
    out = capsys.readouterr().out
    assert sorted(line.split()[0] + line.split()[1] for line in out.splitlines() if ": TU" in line) == first
    assert seen == []


def test_the_cache_tells_what_the_findings_of_this_run_came_from(project: Path, capsys) -> None:
    """For torchup.run.replay, which pins a file written just before the run by these bytes: those the
    run read and stored, or those of an entry it used; and whether the report quotes lines read
    from the file again (a cached finding: then that second reading is not covered)."""
    from torchup.run.cache import Cache, file_state

    check(capsys)
    cache = Cache.open(project)
    assert cache.used == {}
    for name in ("a.py", "clean.py"):
        entry = cache.entries[str(project / name)]
        assert cache.lookup(str(project / name), entry["settings"]) is not None
        assert cache.used[str(project / name)] == (entry["size"], entry["digest"], entry["settings"], name == "a.py")
    (project / "new.py").write_text("y = 2\n")
    state = file_state(str(project / "new.py"), b"y = 2\n")
    assert state is not None
    cache.store(str(project / "new.py"), state, "S", [], [])
    assert cache.used[str(project / "new.py")] == (6, torchup.run.cache.digest(b"y = 2\n"), "S", False)


def test_a_run_in_the_test_process_saves_nothing_to_replay(project: Path, capsys) -> None:
    """conftest makes every status count as just written here, torchup's own files too, and those
    cannot be kept by content: a run saves nothing for a replay (one a subprocess could pick up)."""
    check(capsys)
    assert cache_file(project).is_file()
    assert not (project / ".torchup_cache" / torchup.__version__ / "runs").exists()


def test_a_cache_that_cannot_be_written_warns_what_to_do(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `.torchup_cache` that is no directory (a read-only checkout fails the same way): the findings
    are still reported, and the warning says what it costs and what to do."""
    (project / ".torchup_cache").write_text("not a directory\n")
    code = main(["check", "--output-format", "concise", "."])
    captured = capsys.readouterr()
    assert code == 1 and "a.py:2:8: TU103" in captured.out and "b.py:2:5: TU101" in captured.out
    warning = next(line for line in captured.err.splitlines() if "cannot write the cache" in line)
    assert str(project / ".torchup_cache") in warning and "--no-cache" in warning and "every file again" in warning
