"""torchup as a flake8 plugin: ``flake8 --select TU`` reports torchup's findings (never fixes).

Registered as the ``TU`` entry point of ``flake8.extension`` (see pyproject.toml), so installing
torchup next to flake8 is enough::

    flake8 --select TU src/            # torchup's default rules
    flake8 --extend-select TU src/     # with flake8's own checks

The rules are those ``torchup check`` would run on each file: the defaults, changed by the nearest
``[tool.torchup]`` table (pyproject.toml) or torchup.toml, like ``torchup check``, and by these flake8
options (command line, or the flake8 configuration without the leading dashes)::

    --torchup-select TU1,TU201         replaces the selection
    --torchup-extend-select TU201      adds to it (rules that are off by default: TU002, TU201, ...)
    --torchup-target-python 3.15       the Python the code will run on (for TU301)

flake8 filters what the plugin reports with its own ``--select``/``--ignore`` and ``# noqa``
comments; torchup's ``# noqa`` and ``# torchup: noqa`` comments apply as well. Column numbers are
characters, as in torchup's own output.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from typing import Any

from torchup import __version__
from torchup.check.checker import IO_ERROR, Checker
from torchup.core.python_target import parse_version
from torchup.core.source import DecodeError, SourceFile
from torchup.rules import all_rules
from torchup.settings.config import ConfigError
from torchup.settings.provider import SettingsProvider
from torchup.settings.selection import SelectionError, select_rules


def _codes(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    parts = value if isinstance(value, (list, tuple)) else str(value).split(",")
    codes = tuple(part.strip() for part in parts if part and part.strip())
    return codes or None


class TorchupChecker:
    """The flake8 AST-plugin interface: constructed per file, ``run`` yields the findings."""

    name = "torchup"
    version = __version__

    _select: tuple[str, ...] | None = None
    _extend_select: tuple[str, ...] | None = None
    _target_python: str | None = None
    _checker: Checker | None = None

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str] | None = None) -> None:
        self.tree = tree  # flake8 parsed the file already; torchup parses its own text (positions in characters)
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, parser: Any) -> None:
        parser.add_option(
            "--torchup-select",
            default=None,
            parse_from_config=True,
            comma_separated_list=True,
            help="torchup rules to run, as `torchup check --select` (default: torchup's defaults or [tool.torchup])",
        )
        parser.add_option(
            "--torchup-extend-select",
            default=None,
            parse_from_config=True,
            comma_separated_list=True,
            help="torchup rules to run in addition, as `torchup check --extend-select` (e.g. TU201)",
        )
        parser.add_option(
            "--torchup-target-python",
            default=None,
            parse_from_config=True,
            help="the Python version the code will run on, as `torchup check --target-python` (for TU301)",
        )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls._select = _codes(getattr(options, "torchup_select", None))
        cls._extend_select = _codes(getattr(options, "torchup_extend_select", None))
        cls._target_python = getattr(options, "torchup_target_python", None) or None
        if cls._target_python is not None:
            try:
                parse_version(cls._target_python)
            except ValueError as exc:
                raise SystemExit(f"flake8: --torchup-target-python: {exc}") from None
        try:
            select_rules(all_rules(), cls._select, cls._extend_select or ())
        except SelectionError as exc:
            raise SystemExit(f"flake8: torchup: {str(exc).replace('--', '--torchup-', 1)}") from None
        cls._checker = None

    @classmethod
    def checker(cls) -> Checker:
        if cls._checker is None:
            overrides = {
                "select": cls._select,
                "extend_select": cls._extend_select,
                "target_python": cls._target_python,
            }
            cls._checker = Checker([], settings_for=SettingsProvider(overrides))
        return cls._checker

    def _source(self) -> SourceFile:
        if self.lines is not None:
            text = "".join(self.lines)
            return SourceFile(self.filename, text.encode("utf-8", "surrogatepass"), text, "utf-8")
        with open(self.filename, "rb") as handle:
            return SourceFile.from_bytes(self.filename, handle.read())

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        checker = self.checker()
        try:
            source = self._source()
            diagnostics = checker.analyze(source).diagnostics
        except ConfigError as exc:
            yield 1, 0, f"{IO_ERROR} torchup configuration error: {exc}", type(self)
            return
        except (OSError, DecodeError):
            return  # flake8 reports unreadable files itself (E902)
        for diagnostic in diagnostics:
            if not checker.reports(diagnostic.code, diagnostic.path):
                continue
            message = " ".join(diagnostic.message.split())
            yield diagnostic.line, max(diagnostic.column - 1, 0), f"{diagnostic.code} {message}", type(self)
