"""Run the engine on a snippet, in-process, as the CLI would; load a maintainer tool to test it."""

from __future__ import annotations

import ast
import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

from torchup.check.checker import Checker
from torchup.core.diagnostics import Diagnostic
from torchup.core.source import SourceFile
from torchup.fix.fixer import fix_source
from torchup.rules import all_rules
from torchup.settings.selection import select_rules


def _checker(select: list[str] | None = None, prefilter: bool = True) -> Checker:
    return Checker(select_rules(all_rules(), select), prefilter=prefilter)


def check(code: str, select: list[str] | None = None, prefilter: bool = True) -> list[Diagnostic]:
    source = SourceFile.from_bytes("snippet.py", textwrap.dedent(code).encode())
    return _checker(select, prefilter).analyze_alone(source).diagnostics


def codes(code: str, select: list[str] | None = None) -> list[str]:
    return [d.code for d in check(code, select)]


def fix(code: str, unsafe: bool = False, select: list[str] | None = None) -> str:
    """The fixed text; asserts it parses and that fixing again changes nothing."""
    checker = _checker(select)
    source = SourceFile.from_bytes("snippet.py", textwrap.dedent(code).encode())
    first = fix_source(checker, source, unsafe=unsafe).text
    try:
        ast.parse(source.text)
    except SyntaxError:
        assert first == source.text, "a file that does not parse must be left alone"
        return first
    ast.parse(first)
    again = fix_source(checker, SourceFile.from_bytes("snippet.py", first.encode()), unsafe=unsafe).text
    assert again == first, "fixing twice changed the file"
    return first


def load_tool(name: str) -> ModuleType:
    """A script of tools/ (not a package) as a module."""
    return load_script(f"tools/{name}.py", f"{name}_tool")


def load_script(relative: str, module_name: str) -> ModuleType:
    """A script of the repository (``tools/x.py``, ``bench/x.py``: not a package) as a module."""
    path = Path(__file__).resolve().parent.parent / relative
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """``torchup ARGV`` in this process: its exit code, stdout and stderr (``capsys``: pytest's)."""
    from torchup.cli.main import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def git_project(root: Path, files: dict[str, str]) -> Path:
    """A repository (``.git`` ends the search for a torch requirement above it) holding ``files``."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root
