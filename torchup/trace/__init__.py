"""``torchup trace``: run a program in this process, like ``coverage run``, and report at exit what
torch 2.14 changes for the calls it actually made.

    torchup trace [--json PATH] [--target-python X.Y] -- python train.py args...
    torchup trace -- python -m package.module args...
    python -m torchup.trace train.py args...

The report goes to stderr (the program's stdout is left alone); the program's exit code is kept.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

PYTHON_NAMES = ("python", "python3")


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="torchup trace",
        description="Run a Python program and report the torch 2.14 behaviour changes its calls hit.",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the findings as JSON to PATH")
    parser.add_argument("--target-python", metavar="X.Y", help="the Python the program will run on (for TU301)")
    parser.add_argument(
        "--all-calls",
        action="store_true",
        help="watch through a TorchFunctionMode too (sees clamp calls on methods fetched before tracing began; "
        "slower: a Python call on every torch operation)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="[--] [python] script.py args | -m module args")
    args = parser.parse_args(argv)
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if command and (os.path.basename(command[0]) in PYTHON_NAMES or os.path.basename(command[0]).startswith(
        "python3."
    ) or os.path.abspath(command[0]) == os.path.abspath(sys.executable)):
        command = command[1:]
    if not command or command == ["-m"]:
        parser.error("give the program to run: torchup trace -- python script.py [args] (or -m module)")
    args.command = command
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    from torchup.python_target import parse_version, resolve_target

    if args.target_python is not None:
        try:
            parse_version(args.target_python)
        except ValueError as exc:
            sys.stderr.write(f"torchup trace: error: --target-python: {exc}\n")
            return 2
    is_module = args.command[0] == "-m"
    target = args.command[1] if is_module else args.command[0]
    if not is_module and not Path(target).is_file():
        sys.stderr.write(f"torchup trace: error: no such script: {target}\n")
        return 2
    python_target = resolve_target(args.target_python, target if not is_module else os.path.join(os.getcwd(), "x"))

    try:
        import torch  # noqa: F401  (trace needs the real torch; check and fix never import it)
    except ImportError:
        sys.stderr.write("torchup trace: error: torch is not importable in this Python; install torch first\n")
        return 2
    from torchup.trace.monitor import BoundaryMode, BoundaryWatch, Patcher, Recorder, install, install_boundary_wrappers
    from torchup.trace.report import render_text, write_json

    recorder = Recorder()
    patcher = Patcher()
    install(recorder, patcher, compile_unsupported=python_target.includes_at_least((3, 15)))
    watch = BoundaryWatch(recorder)
    mode = BoundaryMode(watch) if args.all_calls else contextlib.nullcontext()
    if not args.all_calls:
        install_boundary_wrappers(watch, patcher)
    exit_code = 0
    saved_argv = sys.argv[:]
    sys.argv = args.command[1:] if is_module else args.command
    if not is_module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    try:
        with mode:
            if is_module:
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(target, run_name="__main__")
    except SystemExit as exc:
        exit_code = _exit_code(exc.code)
    except KeyboardInterrupt:
        sys.stderr.write("KeyboardInterrupt\n")
        exit_code = 130
    except BaseException as exc:
        _print_user_traceback(exc)
        exit_code = 1
    finally:
        sys.argv = saved_argv
        patcher.restore()
        findings = sorted(recorder.findings.values(), key=lambda f: (f.site.path, f.site.line, f.code))
        sys.stderr.write(render_text(findings, python_target.describe()))
        if args.json:
            write_json(args.json, findings, exit_code)
    return exit_code


def _print_user_traceback(exc: BaseException) -> None:
    """The traceback Python would print, without torchup's and runpy's frames."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not os.path.abspath(frame.filename).startswith(here) and "runpy" not in frame.filename
    ]
    sys.stderr.write("Traceback (most recent call last):\n")
    sys.stderr.write("".join(traceback.format_list(frames)))
    sys.stderr.write("".join(traceback.format_exception_only(type(exc), exc)))


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1
