"""The command line: ``torchup check | fix | rule CODE | rules``.

Exit codes: 0 nothing left to report, 1 findings remain, 2 usage or internal error.
"""

from __future__ import annotations

import os
import sys

from torchup import __version__
from torchup.core.guard import guarded

TYPE_CHECKING = False  # (not typing's: a replayed warm run imports neither typing nor collections)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any, NoReturn

    from torchup.run.replay import Recorder

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _parser_class() -> type[argparse.ArgumentParser]:
    import argparse  # (here: a replayed warm run never builds a parser)

    class Formatter(argparse.HelpFormatter):
        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                     width: int | None = None) -> None:
            # (argparse's own default width imports shutil, and shutil the compression modules)
            width = _terminal_width() - 2 if width is None else width
            super().__init__(prog, indent_increment, max_help_position, width)

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("formatter_class", Formatter)
            super().__init__(*args, **kwargs)

        def error(self, message: str) -> None:  # type: ignore[override]
            self.print_usage(sys.stderr)
            sys.stderr.write(f"torchup: error: {message}\n")
            raise SystemExit(EXIT_ERROR)

    return Parser


def _terminal_width() -> int:
    """What ``shutil.get_terminal_size`` says of the columns: ``COLUMNS``, else the terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", 0))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _add_check_options(parser: argparse.ArgumentParser) -> None:
    from torchup.settings.config import CONFIDENCES, KNOWN_RELEASES, OUTPUT_FORMATS  # not needed for --version
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or directories (default: .)")
    parser.add_argument("--select", action="append", metavar="CODES", help="only these codes or prefixes (TU1,TU101)")
    parser.add_argument("--extend-select", action="append", metavar="CODES", help="add codes to the selection")
    parser.add_argument("--ignore", action="append", metavar="CODES", help="drop codes or prefixes")
    parser.add_argument("--exclude", action="append", metavar="GLOB", help="replace the default excluded paths")
    parser.add_argument("--extend-exclude", action="append", metavar="GLOB", help="exclude more paths")
    parser.add_argument("--no-respect-gitignore", action="store_true", help="also check files .gitignore ignores")
    parser.add_argument(
        "--follow-links", action="store_true", help="follow symbolic links that lead out of the directories walked"
    )
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that may change behaviour")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    parser.add_argument("--output-format", choices=OUTPUT_FORMATS, help="how to print findings (default: full)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write .torchup_cache")
    parser.add_argument(
        "--jobs", "-j", type=int, metavar="N", default=os.cpu_count() or 1, help="worker processes (default: CPU count)"
    )
    parser.add_argument("--output-file", metavar="PATH", help="write the report to PATH instead of stdout")
    parser.add_argument("--statistics", action="store_true", help="print the number of findings per code instead")
    parser.add_argument(
        "--add-noqa", action="store_true", help="write `# noqa: CODE` for every current finding (adopt on legacy code)"
    )
    parser.add_argument("--show-fixes", action="store_true", help="after fixing, list what was fixed")
    parser.add_argument("--stdin-filename", metavar="PATH", help="the name of the source read from `-` (stdin)")
    parser.add_argument("--config", metavar="PATH", help="use this torchup.toml / pyproject.toml for every file")
    parser.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    parser.add_argument("--show-settings", action="store_true", help="print the resolved settings and exit")
    parser.add_argument(
        "--target-version", choices=KNOWN_RELEASES, help="the torch release to migrate to (default: the newest known)"
    )
    parser.add_argument(
        "--floor",
        "--from-version",
        dest="from_version",
        type=_from_release,
        metavar="X.Y",
        help="the oldest torch release the code must still run on: which changes of behaviour are new, and which "
        "fixes are safe (default: the lower bound of the project's torch requirement, else the installed torch, "
        "else 2.0; --from-version is its old name)",
    )
    parser.add_argument(
        "--raise-floor",
        action="store_true",
        help="with fix: also apply the fixes that need a newer torch than the floor, and raise the torch "
        "requirement to the release they need, in the file it came from",
    )
    parser.add_argument(
        "--min-confidence",
        choices=CONFIDENCES,
        help="the least sure findings of method rules to report: possible (the default: every receiver not known "
        "to be something else), likely, or certain (evidently a tensor)",
    )
    parser.add_argument("--no-prefilter", action="store_true", help="parse every file, even those that cannot match")
    parser.add_argument(
        "--target-python",
        metavar="X.Y",
        help="the Python the code will run on (default: requires-python of the nearest pyproject.toml, "
        "else the running interpreter)",
    )
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    parser.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    parser.add_argument("--verbose", action="store_true", help="show tracebacks of internal errors")


def _from_release(value: str) -> str:
    import argparse

    from torchup.settings.torch_requirement import from_release

    try:
        return from_release(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser_class = _parser_class()
    parser = parser_class(
        prog="torchup",
        description="The upgrade assistant for PyTorch: find and fix what breaks when you move to torch 2.14.",
    )
    from torchup.settings.config import KNOWN_RELEASES

    parser.add_argument("--version", action="version", version=f"torchup {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=parser_class)
    check = commands.add_parser("check", help="report what breaks under the new torch release")
    _add_check_options(check)
    check.add_argument("--fix", action="store_true", help="apply fixes (same as `torchup fix`)")
    fix = commands.add_parser("fix", help="apply safe fixes (--unsafe-fixes for the rest)")
    _add_check_options(fix)
    rule = commands.add_parser("rule", help="print one rule's documentation")
    rule.add_argument("code", metavar="CODE")
    rules = commands.add_parser("rules", help="list every rule")
    rules.add_argument(
        "--since",
        "--floor",
        dest="since",
        type=_from_release,
        metavar="X.Y",
        help="only the rules that run by default for code on torch X.Y: the changes after it, and the breaks",
    )
    rules.add_argument(
        "--target-version", choices=KNOWN_RELEASES, help="the torch release to migrate to (default: the newest known)"
    )
    commands.add_parser("clean", help="remove the .torchup_cache directory here")
    commands.add_parser(
        "doctor", help="what to install for torch 2.14 / 2.15 on this machine, and what will not work", add_help=False
    )
    commands.add_parser(
        "trace",
        help="run a program and report the torch 2.14 changes its calls hit (torchup trace -- python x.py)",
        add_help=False,
    )
    return parser


def console(argv: Sequence[str] | None = None) -> NoReturn:
    """The ``torchup`` command (the console script, ``python -m torchup``): ``main``, then an exit
    that skips the interpreter's teardown. Freeing every module and object one by one takes 15-30 ms
    after a large run, a twentieth of a cold run over torch's sources, and nothing needs it: by
    then the workers are reaped, the files written and closed, the cache saved. The output is
    flushed first. ``torchup trace`` exits as usual: the program it ran may count on its own
    ``atexit`` handlers and finalizers."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        code = main(args)
    except SystemExit as exc:  # (what argparse and --version raise)
        if args[:1] == ["trace"] or not isinstance(exc.code, (int, type(None))):
            raise  # (a message to print: the interpreter's usual exit does it)
        code = exc.code or 0
    if args[:1] == ["trace"]:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # (the reader went away, or the stream was closed)
            pass
        except OSError as exc:  # (a full disk, say: the report is incomplete)
            code = EXIT_ERROR
            try:
                sys.stderr.write(f"torchup: error: cannot write the output: {exc}\n")
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # the fast path: no parser, no configuration code (exits as argparse does)
        sys.stdout.write(f"torchup {__version__}\n")
        raise SystemExit(EXIT_CLEAN)
    if argv[:1] == ["trace"]:  # its own parser: everything after it belongs to the traced program
        from torchup.trace import main as trace_main

        return trace_main(argv[1:])
    if argv[:1] == ["doctor"]:
        from torchup.doctor import main as doctor_main

        return doctor_main(argv[1:])
    from torchup.run.replay import Invocation, Recorder, replayed

    invocation = Invocation.parse(argv)
    if invocation is not None:  # a warm run over an unchanged tree ends here
        code = replayed(invocation)
        if code is not None:
            return code
    parser = build_parser()
    args = parser.parse_args(argv)
    verbose = bool(getattr(args, "verbose", False))
    try:
        recorder = Recorder(invocation) if invocation is not None else None
    except OSError:  # no working directory: nothing to record against
        recorder = None
    if recorder is None:
        return guarded(lambda: _dispatch(parser, args), "torchup", verbose)
    try:
        code = guarded(lambda: _dispatch(parser, args, recorder), "torchup", verbose)
    finally:
        recorder.stop()
    recorder.save(code)
    return code


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace, recorder: Recorder | None = None) -> int:
    if args.command in ("check", "fix"):
        from torchup.cli.commands import run_check

        return run_check(args, fix=args.command == "fix" or args.fix or args.diff, recorder=recorder)
    if args.command == "rule":
        from torchup.cli.commands import show_rule

        return show_rule(args.code)
    if args.command == "rules":
        from torchup.cli.commands import list_rules

        return list_rules(since=args.since, target_version=args.target_version)
    if args.command == "clean":
        from torchup.cli.commands import clean

        return clean()
    parser.print_help()
    return EXIT_ERROR
