"""Which Python a ``torchup trace`` command names, and how to run the tracer inside it.

The tracer has to live in the traced process (it wraps torch's functions), so the program must run
in the interpreter the command names: ``torchup trace -- /venv/bin/python train.py`` from a torchup
installed with pipx, or ``-- python train.py`` with another environment first on PATH. When that is
not the interpreter running torchup, it is re-executed with a small ``-c`` bootstrap that imports
this copy of torchup (pure Python) from its own directory and runs the same trace there. ``exec``
keeps the process: its pid, stdin/stdout/stderr, signals (Ctrl-C) and exit status are the program's.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
from collections.abc import Sequence

# python, python3, python3.12, python3.13t, pythonw.exe, pypy3: names a Python interpreter goes by.
_PYTHON_NAME = re.compile(r"^(python|pypy)(\d+(\.\d+)?)?[a-z]?(\.exe)?$", re.IGNORECASE)
# Interpreter options that keep their meaning when the program is started by the bootstrap.
_FLAGS = re.compile(r"^-[bBdEIOPqRsSuv]+$")
_WITH_VALUE = ("-W", "-X")
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HOW_TO = (
    "Name the Python that runs the program, and the program:\n"
    "    torchup trace -- /path/to/python train.py [args]\n"
    "    torchup trace -- /path/to/python -m package.module [args]\n"
)


class UsageError(Exception):
    """A command trace cannot run; the message says what to do instead (exit status 2)."""


class Program:
    """What to run: ``command`` (``script args...`` or ``-m module args...``), in this process when
    ``interpreter`` is None, else in that interpreter started with ``options``. (A plain class:
    dataclasses costs 5 ms of import on every trace.)"""

    def __init__(self, command: list[str], interpreter: str | None = None, options: list[str] | None = None) -> None:
        self.command = command
        self.interpreter = interpreter
        self.options = options or []


def is_python_name(name: str) -> bool:
    return bool(_PYTHON_NAME.match(os.path.basename(name)))


def same_interpreter(path: str) -> bool:
    """Whether ``path`` starts the interpreter running torchup: the same file, or another name for
    it in the same directory (python / python3 in one venv). A venv's python resolves to the base
    interpreter's binary, but it is another environment, so resolved paths alone do not count."""
    here = sys.executable
    if not here:
        return False
    path, here = os.path.abspath(path), os.path.abspath(here)
    if path == here:
        return True
    return os.path.dirname(path) == os.path.dirname(here) and os.path.realpath(path) == os.path.realpath(here)


def resolve(command: Sequence[str]) -> Program:
    """The program and interpreter a trace command names (``command`` follows ``--``)."""
    first, rest = command[0], list(command[1:])
    if first == "-m":
        return Program(list(command))
    if is_python_name(first) or os.path.abspath(first) == os.path.abspath(sys.executable or ""):
        return _interpreter(_find(first, "Python interpreter"), first, rest, [])
    if first.endswith((".py", ".pyw")):
        return Program(list(command))  # like `coverage run train.py`: this interpreter
    path = first if os.sep in first or (os.altsep and os.altsep in first) else shutil.which(first)
    if path is None or not os.path.isfile(path):
        raise UsageError(f"no such script or program: {first}\n{HOW_TO}")
    shebang = _python_shebang(path)
    if shebang is None:
        raise UsageError(
            f"{first} is not a Python interpreter or a Python script. trace watches torch from inside the "
            "Python process, so it starts that Python itself; it cannot look into a shell script or another "
            f"program (for a shell script, trace the python command in it).\n{HOW_TO}"
        )
    interpreter, options = shebang  # a script that names its Python: pytest, torchrun, ./train
    return _interpreter(interpreter, first, [path, *rest], options)


def _find(name: str, what: str) -> str:
    if os.sep in name or (os.altsep and os.altsep in name):
        if not os.path.isfile(name):
            raise UsageError(f"no such {what}: {name}\n{HOW_TO}")
        return os.path.abspath(name)
    found = shutil.which(name)
    if found is None:
        raise UsageError(f"{name} is not on PATH (no such {what})\n{HOW_TO}")
    return os.path.abspath(found)  # not realpath: a venv's python is known by its own path


def _interpreter(path: str, named: str, rest: list[str], options: list[str]) -> Program:
    own = _options(rest)
    command = rest[len(own):]
    if not command or command == ["-m"]:
        raise UsageError(f"give the program {named} runs: torchup trace -- {named} script.py [args] (or -m module)")
    options = options + own
    if same_interpreter(path) and not options:  # no re-exec: options like -u could not apply here
        return Program(command)
    return Program(command, path, options)


def _options(args: list[str]) -> list[str]:
    """The interpreter options before the script (``python -u -X dev train.py``), one item per word."""
    options: list[str] = []
    for arg in args:
        if options and options[-1] in _WITH_VALUE:
            options.append(arg)  # the value of -W / -X
        elif arg in _WITH_VALUE or (arg.startswith(_WITH_VALUE) and len(arg) > 2) or _FLAGS.match(arg):
            options.append(arg)
        elif arg.startswith("-c") or arg == "-":
            raise UsageError(f"trace runs a script or a module (-m), not {arg}: save the code to a file.\n{HOW_TO}")
        elif arg.startswith("-") and arg != "-m":
            raise UsageError(
                f"interpreter option {arg} is not supported by trace (-b, -B, -d, -E, -I, -O, -P, -q, -R, -s, -S, "
                "-u, -v, -W and -X are)"
            )
        else:
            break
    return options


def _python_shebang(path: str) -> tuple[str, list[str]] | None:
    """The interpreter (and its options) a script's ``#!`` line names, when that is a Python."""
    try:
        with open(path, "rb") as handle:
            line = handle.readline(1024)
    except OSError:
        return None
    if not line.startswith(b"#!"):
        return None
    words = line[2:].decode("utf-8", "replace").split()
    if words and os.path.basename(words[0]) == "env":  # #!/usr/bin/env [-S] python3 [-u]
        words = words[1:]
        while words and (words[0].startswith("-") or "=" in words[0]):
            words = words[1:]
    if not words or not is_python_name(words[0]):
        return None
    try:
        return _find(words[0], "Python interpreter"), words[1:]
    except UsageError:
        return None


# Runs in the named interpreter. Python 2 syntax too, so that an old interpreter gets the message.
BOOTSTRAP = """\
import sys
if sys.version_info < (3, 10):
    sys.stderr.write("torchup trace: error: %s is Python %d.%d; the tracer runs inside the traced Python, which "
                     "must be 3.10 or newer: run the program under Python 3.10+ to trace it\\n"
                     % ((sys.executable,) + tuple(sys.version_info[:2])))
    sys.exit(2)
if sys.path and sys.path[0] == "":
    del sys.path[0]  # -c's entry: the program gets the sys.path that `python script.py` would give it
import importlib.util, os
package = sys.argv.pop(1)
spec = importlib.util.spec_from_file_location(
    "torchup", os.path.join(package, "__init__.py"), submodule_search_locations=[package])
module = importlib.util.module_from_spec(spec)
sys.modules["torchup"] = module
spec.loader.exec_module(module)
from torchup.trace import run_here
sys.exit(run_here(sys.argv[1:]))
"""


def run_in(program: Program, trace_options: list[str]) -> int:
    """Run the trace in ``program.interpreter``: this process becomes it (POSIX), so nothing stands
    between the program and its terminal, signals and parent. torchup itself is imported there from
    its own directory, not through sys.path or PYTHONPATH: its neighbours in site-packages stay
    invisible to the program, and nothing leaks into the program's child processes."""
    assert program.interpreter is not None
    argv = [program.interpreter, *program.options, "-c", BOOTSTRAP, PACKAGE_DIR, *trace_options, "--",
            *program.command]
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        if os.name == "posix":
            os.execv(program.interpreter, argv)
        return _spawn(argv)
    except OSError as exc:
        sys.stderr.write(
            f"torchup trace: error: cannot start {program.interpreter}: {exc.strerror or exc}. "
            f"Is it a Python interpreter?\n{HOW_TO}"
        )
        return 2


def _spawn(argv: list[str]) -> int:
    """Where exec cannot keep the process (Windows): a child, waited for. Ctrl-C reaches the child
    from the console; this process ignores it meanwhile and returns the child's status."""
    import subprocess

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return subprocess.call(argv)
    finally:
        signal.signal(signal.SIGINT, previous)
