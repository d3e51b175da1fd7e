"""``torchup trace``: run a program in the process of the Python it names, like ``coverage run``, and
report at exit what torch 2.14 changes for the calls it actually made.

    torchup trace [--json PATH] [--target-python X.Y] -- python train.py args...
    torchup trace -- /path/to/venv/bin/python -m package.module args...
    python -m torchup.trace train.py args...

A named Python other than the one running torchup gets the trace by re-exec (``launch``).

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


def _parser() -> argparse.ArgumentParser:
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
    parser.add_argument(
        "command", nargs=argparse.REMAINDER, help="[--] [python [options]] script.py args | -m module args"
    )
    return parser


def parse(argv: Sequence[str], *, here: bool = False) -> argparse.Namespace:
    """The options, and in ``args.program`` what to run where. ``here``: the command is already the
    program (``script args`` or ``-m module args``) for this interpreter: the bootstrap's call."""
    from torchup.trace.launch import Program, UsageError, resolve

    parser = _parser()
    args = parser.parse_args(argv)
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command or command == ["-m"]:
        parser.error("give the program to run: torchup trace -- python script.py [args] (or -m module)")
    if here:
        args.program = Program(command)
        return args
    try:
        args.program = resolve(command)
    except UsageError as exc:
        sys.stderr.write(f"torchup trace: error: {exc}")
        sys.stderr.write("" if str(exc).endswith("\n") else "\n")
        raise SystemExit(2) from None
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """``torchup trace``: run the program in this interpreter, or in the one its command names."""
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.program.interpreter is None:
        return _trace(args)
    error = _check(args)
    if error is not None:  # (caught here, before another interpreter starts)
        return error
    from torchup.trace.launch import run_in

    options = [*(["--json", args.json] if args.json else []), *(["--all-calls"] if args.all_calls else []),
               *(["--target-python", args.target_python] if args.target_python else [])]
    return run_in(args.program, options)


def run_here(argv: Sequence[str]) -> int:
    """The trace inside the interpreter a command named: what ``launch.BOOTSTRAP`` calls there."""
    return _trace(parse(argv, here=True))


def _check(args: argparse.Namespace) -> int | None:
    """Exit status 2 for options or a program that cannot run, after saying why; else None."""
    if args.target_python is not None:
        from torchup.core.python_target import parse_version

        try:
            parse_version(args.target_python)
        except ValueError as exc:
            sys.stderr.write(f"torchup trace: error: --target-python: {exc}\n")
            return 2
    command = args.program.command
    if command[0] != "-m" and not Path(command[0]).is_file():
        sys.stderr.write(f"torchup trace: error: no such script: {command[0]}\n")
        return 2
    return None


def _trace(args: argparse.Namespace) -> int:
    error = _check(args)
    if error is not None:
        return error
    from torchup.core.python_target import resolve_target

    is_module = args.program.command[0] == "-m"
    command = args.program.command[1:] if is_module else args.program.command
    target = command[0]
    python_target = resolve_target(args.target_python, target if not is_module else os.path.join(os.getcwd(), "x"))

    try:
        import torch  # noqa: F401  (trace needs the real torch; check and fix never import it)
    except ImportError:
        sys.stderr.write(
            f"torchup trace: error: torch is not importable in {sys.executable}. Name the Python that has torch "
            f"(torchup trace -- /path/to/python script.py), or install torch in this one "
            f"({sys.executable} -m pip install torch)\n"
        )
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
    sys.argv = command
    # sys.path[0] as `python script.py` (the script's directory) or `python -m` (the working
    # directory) sets it, unless -P / -I asked for none.
    if not getattr(sys.flags, "safe_path", False):
        entry = os.getcwd() if is_module else os.path.dirname(os.path.abspath(target))
        if sys.path[:1] != [entry]:
            sys.path.insert(0, entry)
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
