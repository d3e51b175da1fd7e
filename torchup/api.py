"""The library API, for editors and other tools that embed torchup.

    >>> import torchup
    >>> findings = torchup.check_source("import torch\\nQ, R = torch.qr(A)\\n", path="model.py")
    >>> [f.code for f in findings]
    ['TU103']
    >>> torchup.fix_source("import torch\\nQ, R = torch.qr(A)\\n").source
    'import torch\\nQ, R = torch.linalg.qr(A)\\n'

Neither function reads configuration files or touches the disk; ``path`` only names the source in
findings (and decides the target Python through the nearest ``pyproject.toml`` when it exists).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from torchup.check.checker import Checker, FileSettings
from torchup.core.diagnostics import Diagnostic
from torchup.core.packages import forget_packages
from torchup.core.python_target import forget_files
from torchup.core.source import DecodeError, SourceFile
from torchup.fix.fixer import fix_source as _fix
from torchup.rules import all_rules
from torchup.settings.selection import select_rules

Finding = Diagnostic


@dataclass
class FixResult:
    """What ``fix`` made of one text."""

    source: str  # the fixed text (the input when nothing applied)
    fixed: list[Finding]  # what the applied fixes resolved
    remaining: list[Finding]  # what is still reported in the fixed text


def _checker(
    select: Sequence[str] | None, ignore: Sequence[str], target_python: str | None, from_version: str | None = None
) -> Checker:
    forget_files()  # an editor calls us again and again while pyproject.toml files change
    forget_packages()  # (and `__init__.py` files)
    rules = select_rules(all_rules(), select, (), ignore, from_version=from_version)
    if from_version is None:
        return Checker(rules, target_python=target_python)
    settings = FileSettings(tuple(rules), target_python, from_version=from_version)
    return Checker(rules, target_python=target_python, settings_for=lambda _path: settings)


def _source(source: str | bytes, path: str) -> SourceFile:
    raw = source.encode("utf-8") if isinstance(source, str) else source
    return SourceFile.from_bytes(path, raw)


def check_source(
    source: str | bytes,
    path: str = "<string>",
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    target_python: str | None = None,
    from_version: str | None = None,
) -> list[Finding]:
    """Findings for one source text; ``select``/``ignore`` take codes or prefixes as the CLI does;
    ``from_version``: the oldest torch the code must still run on (``--from-version``: the floor)."""
    checker = _checker(select, ignore, target_python, from_version)
    try:
        return checker.analyze_alone(_source(source, path)).diagnostics
    except DecodeError as exc:
        return [checker.decode_error(path, exc)]


def fix_source(
    source: str | bytes,
    path: str = "<string>",
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    unsafe_fixes: bool = False,
    target_python: str | None = None,
    from_version: str | None = None,
) -> FixResult:
    """The source with fixes applied (safe ones; unsafe too with ``unsafe_fixes``); ``from_version``
    as for ``check_source``."""
    checker = _checker(select, ignore, target_python, from_version)
    try:
        parsed = _source(source, path)
    except DecodeError as exc:
        text = source if isinstance(source, str) else source.decode("utf-8", "replace")
        return FixResult(text, [], [checker.decode_error(path, exc)])
    outcome = _fix(checker, parsed, unsafe=unsafe_fixes)
    return FixResult(outcome.text, outcome.fixed, outcome.remaining)
