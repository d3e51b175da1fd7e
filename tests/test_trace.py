"""End-to-end tests of ``torchup trace`` on real programs, under torch 2.13.0 and 2.14.1."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from differential.envs import TORCH_VERSIONS, ensure_env

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).resolve().parent / "trace_programs"


def activated(python: Path) -> dict[str, str]:
    """The environment of a shell where ``python``'s venv is activated: ``python`` on PATH is it."""
    return {**os.environ, "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": str(ROOT)}


def trace(version: str, tmp_path: Path, *command: str, options: tuple[str, ...] = ()) -> tuple[Any, str, int]:
    python = ensure_env(version)
    report = tmp_path / f"report-{version}.json"
    completed = subprocess.run(
        [str(python), "-m", "torchup", "trace", "--json", str(report), *options, "--", "python", *command],
        cwd=PROGRAMS,
        env=activated(python),
        capture_output=True,
        text=True,
        timeout=300,
    )
    frames = [line for line in completed.stderr.splitlines() if line.startswith('  File "')]
    assert not [f for f in frames if str(ROOT / "torchup") in f], completed.stderr  # the user traceback only
    return json.loads(report.read_text()), completed.stdout + completed.stderr, completed.returncode


def only(findings: list[dict[str, Any]], code: str) -> dict[str, Any]:
    (finding,) = [f for f in findings if f["code"] == code]
    return finding


@pytest.fixture(params=TORCH_VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_quantization_clamp_is_reported_with_line_and_counts(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "quantize.py")
    assert code == 0
    finding = only(report["findings"], "TU201")
    assert (Path(finding["path"]).name, finding["line"], finding["api"]) == ("quantize.py", 6, "torch.clamp")
    assert (finding["calls"], finding["calls_on_bound"], finding["elements_on_bound"], finding["elements"]) == (
        2, 2, 6, 12,
    )
    assert finding["bound_kinds"] == ["scalar"]
    assert "quantize.py:6: TU201" in output and "gradient 0 instead of 1" in output


def test_clamp_min_on_exact_zeros(version: str, tmp_path: Path) -> None:
    report, _, _ = trace(version, tmp_path, "relu_zeros.py")
    finding = only(report["findings"], "TU201")
    assert (finding["line"], finding["api"], finding["elements_on_bound"], finding["elements"]) == (
        5, "Tensor.clamp", 2, 4,
    )
    assert finding["calls"] == 1  # the no_grad call is not counted


def test_no_boundary_hits_reports_nothing(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "no_hits.py")
    assert code == 0 and report["findings"] == []
    assert "no call in this run hits a torch 2.14 change" in output


def test_a_program_that_raises_keeps_its_exit_code_and_gets_its_report(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "raises.py")
    assert code == 1 and "ValueError: boom" in output
    assert only(report["findings"], "TU201")["line"] == 5
    assert report["exit_code"] == 1


def test_sys_exit_code_is_kept(version: str, tmp_path: Path) -> None:
    report, _, code = trace(version, tmp_path, "exits.py")
    assert code == 3 and report["exit_code"] == 3
    assert only(report["findings"], "TU201")["api"] == "torch.clip"


def test_removed_api_reached_dynamically(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "removed_api.py")
    finding = only(report["findings"], "TU101")
    assert (finding["line"], finding["api"]) == (6, "torch.cholesky")
    if version.startswith("2.13"):
        assert code == 0
    else:  # 2.14 raises: the program fails as it would without trace, and the report says why
        assert code == 1 and "RuntimeError" in output


def test_compile_on_python_3_15_target(version: str, tmp_path: Path) -> None:
    report, _, code = trace(version, tmp_path, "compile_use.py", options=("--target-python", "3.15"))
    assert code == 0
    assert only(report["findings"], "TU301")["line"] == 8
    report, _, _ = trace(version, tmp_path, "compile_use.py", options=("--target-python", "3.12"))
    assert [f for f in report["findings"] if f["code"] == "TU301"] == []


def test_module_form(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "-m", "pkg.job")
    assert code == 0 and "module ran __main__" in output
    finding = only(report["findings"], "TU201")
    assert (Path(finding["path"]).name, finding["line"]) == ("job.py", 4)


def test_training_losses_are_identical_with_and_without_trace(version: str, tmp_path: Path) -> None:
    python = ensure_env(version)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    plain = subprocess.run(
        [str(python), "train_mlp.py", "20"], cwd=PROGRAMS, env=env, capture_output=True, text=True, timeout=300
    )
    traced = subprocess.run(
        [str(python), "-m", "torchup.trace", "train_mlp.py", "20"],
        cwd=PROGRAMS, env=env, capture_output=True, text=True, timeout=300,
    )
    assert plain.returncode == 0 and traced.returncode == 0, traced.stderr
    losses = plain.stdout.split()
    assert len(losses) == 20 and traced.stdout.split() == losses
    assert "torchup trace" in traced.stderr


def test_usage_errors() -> None:
    python = ensure_env(TORCH_VERSIONS[0])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    missing = subprocess.run(
        [str(python), "-m", "torchup", "trace", "--", "python", "nope.py"], env=env, capture_output=True, text=True
    )
    assert missing.returncode == 2 and "no such script: nope.py" in missing.stderr
    empty = subprocess.run([str(python), "-m", "torchup", "trace"], env=env, capture_output=True, text=True)
    assert empty.returncode == 2 and "give the program to run" in empty.stderr


def test_all_calls_mode_reports_the_same(version: str, tmp_path: Path) -> None:
    """--all-calls watches through a TorchFunctionMode instead of wrappers: same findings."""
    report, _, code = trace(version, tmp_path, "quantize.py", options=("--all-calls",))
    assert code == 0
    finding = only(report["findings"], "TU201")
    assert (finding["line"], finding["elements_on_bound"], finding["elements"]) == (6, 6, 12)


def test_fmax_ties(version: str, tmp_path: Path) -> None:
    report, _, code = trace(version, tmp_path, "ties.py")
    assert code == 0
    finding = only(report["findings"], "TU202")
    assert (finding["line"], finding["api"], finding["elements_on_bound"], finding["elements"]) == (
        6, "torch.fmax", 2, 4,
    )


def test_ctrl_c_still_reports(version: str, tmp_path: Path) -> None:
    report, output, code = trace(version, tmp_path, "interrupted.py")
    assert code == 130 and "KeyboardInterrupt" in output
    assert only(report["findings"], "TU201")["line"] == 5


# -- `torchup trace -- /other/python script.py`: the program runs in the Python the command names ------
# torchup runs here in the interpreter running the tests, as a pipx install would: importable there
# only (not through PYTHONPATH), the named venv having torch but not torchup.
CONSOLE = "import sys; sys.path.insert(0, sys.argv.pop(1)); from torchup.cli.main import console; console()"


def outside_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def from_outside(*arguments: str, stdin: str = "", cwd: Path = PROGRAMS) -> tuple[str, str, int, int]:
    """``torchup <arguments>`` run by this interpreter: stdout, stderr, exit status, pid."""
    process = subprocess.Popen(
        [sys.executable, "-c", CONSOLE, str(ROOT), *arguments], cwd=cwd, env=outside_env(),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    stdout, stderr = process.communicate(stdin, timeout=300)
    return stdout, stderr, process.returncode, process.pid


def test_named_interpreter_runs_the_program_without_torchup_installed(version: str, tmp_path: Path) -> None:
    python = ensure_env(version)
    probe = subprocess.run([str(python), "-c", "import torchup"], cwd=PROGRAMS, env=outside_env(), capture_output=True)
    assert probe.returncode != 0  # the case of the issue: torchup is not in the venv
    report_path = tmp_path / "report.json"
    stdout, stderr, code, pid = from_outside(
        "trace", "--json", str(report_path), "--", str(python), "echo_env.py", "4", stdin="from stdin\n"
    )
    assert code == 4, stderr
    report = json.loads(report_path.read_text())
    assert report["torch"].startswith(version) and report["exit_code"] == 4
    finding = only(report["findings"], "TU201")
    assert (Path(finding["path"]).name, finding["line"], finding["elements_on_bound"]) == ("echo_env.py", 9, 2)
    assert "echo_env.py:9: TU201 torch.clamp" in stderr
    seen = json.loads(stdout)
    assert seen["executable"] == str(python) and seen["argv"] == ["echo_env.py", "4"]
    assert seen["path0"] == str(PROGRAMS) and not seen["torchup_on_path"]  # as `python echo_env.py` sets it
    assert seen["stdin"] == "from stdin\n"
    if os.name == "posix":
        assert seen["pid"] == pid  # exec: no process stands between the program and its caller


def test_named_interpreter_module_form_options_and_interpreter_flags(tmp_path: Path) -> None:
    python = str(ensure_env(TORCH_VERSIONS[0]))
    report_path = tmp_path / "module.json"
    stdout, stderr, code, _ = from_outside("trace", "--json", str(report_path), "--", python, "-m", "pkg.job")
    assert code == 0 and "module ran __main__" in stdout, stderr
    finding = only(json.loads(report_path.read_text())["findings"], "TU201")
    assert (Path(finding["path"]).name, finding["line"]) == ("job.py", 4)

    report_path = tmp_path / "compile.json"
    _, stderr, code, _ = from_outside(
        "trace", "--all-calls", "--target-python", "3.15", "--json", str(report_path), "--", python, "compile_use.py"
    )
    assert code == 0, stderr
    assert only(json.loads(report_path.read_text())["findings"], "TU301")["line"] == 8

    stdout, stderr, code, _ = from_outside("trace", "--", python, "-u", "-X", "dev", "echo_env.py", "0")
    seen = json.loads(stdout)
    assert code == 0 and seen["dev_mode"] and seen["unbuffered"], stderr


def test_a_script_that_names_its_python_runs_there(tmp_path: Path) -> None:
    """`torchup trace -- pytest ...` / `-- torchrun ...` / `-- ./train`: the #! line names the Python."""
    python = ensure_env(TORCH_VERSIONS[0])
    script = tmp_path / "train"
    script.write_text(f"#!{python}\n" + (PROGRAMS / "exits.py").read_text())
    script.chmod(0o755)
    report_path = tmp_path / "report.json"
    _, stderr, code, _ = from_outside("trace", "--json", str(report_path), "--", str(script))
    assert code == 3, stderr
    report = json.loads(report_path.read_text())
    assert report["torch"].startswith(TORCH_VERSIONS[0]) and only(report["findings"], "TU201")["line"] == 7


@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT")
def test_ctrl_c_reaches_the_program_in_a_named_interpreter(tmp_path: Path) -> None:
    python = ensure_env(TORCH_VERSIONS[0])
    report_path = tmp_path / "report.json"
    process = subprocess.Popen(
        [sys.executable, "-c", CONSOLE, str(ROOT), "trace", "--json", str(report_path), "--", str(python), "waits.py"],
        cwd=PROGRAMS, env=outside_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # As from a terminal: a test run started in the background (`pytest &` in a script) ignores
        # SIGINT, and an ignored signal stays ignored across exec, in the program too.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        process.send_signal(signal.SIGINT)
        try:
            _, stderr = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # say how the program stood towards the signal
            status = Path(f"/proc/{process.pid}/status")
            masks = [line for line in status.read_text().splitlines() if line.startswith("Sig")] if status.exists() else []
            pytest.fail(f"Ctrl-C did not end the program within 60 s; its signal masks: {masks}")
    finally:
        process.kill()
    assert process.returncode == 130 and "KeyboardInterrupt" in stderr
    assert only(json.loads(report_path.read_text())["findings"], "TU201")["line"] == 7


def test_named_interpreter_without_torch_is_named_in_the_error(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    bare = tmp_path / "bare" / "bin" / "python"
    _, stderr, code, _ = from_outside("trace", "--", str(bare), "quantize.py")
    assert code == 2
    assert f"torch is not importable in {bare}" in stderr and "torchup trace -- /path/to/python" in stderr


def _old_python() -> str | None:
    """A Python older than torchup's 3.10, when this machine has one."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [shutil.which(f"python3.{minor}") for minor in (9, 8, 7)] + sorted(
        str(path) for path in pyenv.glob("3.[789].*/bin/python3")
    )
    for found in candidates:
        if found and subprocess.run([found, "-c", "pass"], capture_output=True).returncode == 0:
            return found
    return None


def test_a_program_that_is_not_python_gets_an_actionable_error(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o755)
    stdout, stderr, code, _ = from_outside("trace", "--", str(script))
    assert code == 2 and stdout == ""  # never started
    assert f"{script} is not a Python interpreter or a Python script" in stderr
    assert "torchup trace -- /path/to/python train.py" in stderr
    _, stderr, code, _ = from_outside("trace", "--", "no-such-program-here")
    assert code == 2 and "no such script or program: no-such-program-here" in stderr
    _, stderr, code, _ = from_outside("trace", "--", str(tmp_path / "bin" / "python"), "x.py")
    assert code == 2 and "no such Python interpreter" in stderr
    _, stderr, code, _ = from_outside("trace", "--", sys.executable, "-c", "print(1)")
    assert code == 2 and "not -c" in stderr
    old = _old_python()
    if old is not None:
        _, stderr, code, _ = from_outside("trace", "--", old, "quantize.py")
        assert code == 2 and "must be 3.10 or newer" in stderr


def test_which_interpreter_a_command_names(tmp_path: Path) -> None:
    from torchup.trace.launch import resolve

    here = resolve([sys.executable, "train.py", "--epochs", "1"])
    assert (here.interpreter, here.command) == (None, ["train.py", "--epochs", "1"])  # no re-exec
    assert resolve(["-m", "pkg.job"]).interpreter is None and resolve(["train.py"]).interpreter is None
    flagged = resolve([sys.executable, "-u", "-X", "dev", "-W", "error", "-m", "pkg.job", "-u"])
    assert flagged.interpreter == os.path.abspath(sys.executable)  # -u cannot apply in this process
    assert (flagged.options, flagged.command) == (["-u", "-X", "dev", "-W", "error"], ["-m", "pkg.job", "-u"])
    other = tmp_path / "venv" / "bin"
    other.mkdir(parents=True)
    (other / "python3").symlink_to(os.path.realpath(sys.executable))  # a venv's python: another environment
    assert resolve([str(other / "python3"), "x.py"]).interpreter == str(other / "python3")


def test_the_program_gets_the_sys_path_python_script_gives_it(tmp_path: Path) -> None:
    """`python -m torchup.trace sub/prog.py` from a directory: the program's sys.path is what `python
    sub/prog.py` gives it (its own directory first, not the working directory `python -m` adds), and a
    project module there named like the standard library's (`queue.py`) does not break torchup itself."""
    python = ensure_env(TORCH_VERSIONS[0])
    (tmp_path / "sub").mkdir()
    (tmp_path / "queue.py").write_text('raise ImportError("the project\'s own queue module")\n')
    (tmp_path / "sub" / "prog.py").write_text("import sys\n\nprint(sys.path[:3])\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    plain = subprocess.run([str(python), "sub/prog.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
    traced = subprocess.run([str(python), "-m", "torchup.trace", "sub/prog.py"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0 and traced.returncode == 0, traced.stderr
    assert traced.stdout == plain.stdout and str(tmp_path / "sub") in plain.stdout
