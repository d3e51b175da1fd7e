"""``torchup doctor``: what to install for torch 2.14 / 2.15 on this machine, and what will not work there.

    torchup doctor                                  # this machine, the newest release in the data
    torchup doctor --target 2.14 --python 3.15t     # what if: another Python
    torchup doctor --platform linux-aarch64 --accelerator cu130 --gpu-arch 9.0 --output-format json
    torchup doctor --verbose                        # list the unverified facts behind the report, not just count them

An installed torch that already fits the target (its newest patch, a build that works here) means nothing to
install: no command is printed, and the JSON says ``"nothing_to_install": true``.

Exit codes: 0 ready, 1 problems found (any error verdict), 2 usage error. torch is never imported, except in a
child interpreter with ``--import-torch``.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from torchup.core.guard import guarded

if TYPE_CHECKING:
    from torchup.doctor.probes import Environment

EXIT_READY, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
PYTHON_ARG = re.compile(r"^3\.(\d+)(?:\.(\d+))?(t?)$")
ARCH_ARG = re.compile(r"^(?:sm_?)?(\d+)\.?(\d)$")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"torchup doctor: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _python_arg(text: str) -> tuple[str, bool]:
    match = PYTHON_ARG.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a Python version like 3.11, 3.15t or 3.13.2t")
    version = f"3.{match.group(1)}" + (f".{match.group(2)}" if match.group(2) else "")
    return version, bool(match.group(3))


def _arch_arg(text: str) -> str:
    match = ARCH_ARG.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a CUDA compute capability like 8.6 or sm_86")
    return f"{int(match.group(1))}.{match.group(2)}"


def _timeout_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 60:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds between 0 and 60")
    return value


def build_parser(releases: Sequence[str], platforms: Sequence[str], accelerators: Sequence[str]) -> _Parser:
    parser = _Parser(
        prog="torchup doctor",
        description="What to install for PyTorch on this machine (or another one: the what-if options), from "
        "which index, and what will not work there. torch is not imported.",
        epilog="Exit codes: 0 ready, 1 problems found, 2 usage error. Facts the build matrix marks unverified are "
        'printed as "unverified".',
    )
    parser.add_argument("--target", choices=releases, default=releases[-1],
                        help=f"the torch release to install (default: the newest known, {releases[-1]})")
    parser.add_argument("--python", type=_python_arg, metavar="X.Y[t]",
                        help="what if the Python were this one (t: free-threaded), e.g. 3.15t")
    parser.add_argument("--platform", choices=platforms, help="what if the machine were this platform")
    parser.add_argument("--accelerator", choices=accelerators, help="the build to install (default: chosen from the "
                        "GPUs found)")
    parser.add_argument("--gpu-arch", type=_arch_arg, action="append", metavar="X.Y",
                        help="what if the machine had an NVIDIA GPU of this compute capability (repeatable)")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument("--import-torch", action="store_true",
                        help="also import the installed torch, in a child interpreter, to read its build")
    parser.add_argument("--probe-timeout", type=_timeout_arg, default=3.0, metavar="SECONDS",
                        help="how long each probe (nvidia-smi, rocminfo...) may take (default: 3)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="list the unverified facts behind the report (by default: their number)")
    return parser


def apply_what_if(
    env: Environment, args: argparse.Namespace, platforms: Mapping[str, Mapping[str, str]]
) -> Environment:
    """The environment with the what-if options applied."""
    from torchup.doctor.probes import Gpu

    changes: dict[str, Any] = {}
    simulated = list(env.simulated)
    if args.python is not None:
        changes["python"], changes["free_threaded"] = args.python
        simulated.append("python")
    if args.platform is not None and args.platform != env.platform_key:
        info = platforms[args.platform]
        changes["os"], changes["machine"] = info["os"], info["machine"]
        apple = (Gpu("apple", "Apple Silicon GPU (MPS)"),) if args.platform == "macos-arm64" else ()
        changes["gpus"] = apple  # this machine's GPUs do not travel to another platform
        simulated.append("platform")
    if args.gpu_arch:
        changes["gpus"] = tuple(Gpu("nvidia", "simulated NVIDIA GPU", arch) for arch in args.gpu_arch)
        simulated.append("gpu-arch")
    if not changes:
        return env
    changes["simulated"] = tuple(simulated)
    changes["packages_checked"] = env.packages_checked and "python" not in simulated and "platform" not in simulated
    return dataclasses.replace(env, **changes)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    return guarded(lambda: _run(args_list), "torchup doctor")


def _run(argv: list[str]) -> int:
    from torchup.doctor.matrix import load

    matrix = load()
    parser = build_parser(matrix.releases, list(matrix.platforms), matrix.accelerators())
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (2) and --help (0) end here, without a traceback
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    from torchup.doctor.advice import diagnose
    from torchup.doctor.probes import detect
    from torchup.doctor.report import render_json, render_text

    env = apply_what_if(detect(args.probe_timeout, import_torch_too=args.import_torch), args, matrix.platforms)
    report = diagnose(env, matrix, args.target, args.accelerator)
    if args.output_format == "json":
        text = render_json(report, matrix)  # lists every unverified fact: it is for tools
    else:
        text = render_text(report, matrix, verbose=args.verbose)
    sys.stdout.write(text)
    sys.stdout.flush()
    return report.exit_code
