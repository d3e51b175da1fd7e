"""Which Python versions the checked code targets: ``--target-python``, else the nearest
``pyproject.toml``'s ``requires-python``, else the interpreter running torchup."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

Version = tuple[int, int]
# Minor versions we reason about; a spec admitting any of them "includes" it.
_KNOWN_MINORS = tuple((3, minor) for minor in range(8, 30))
_CLAUSE = re.compile(r"^\s*(===|==|!=|~=|>=|<=|>|<)\s*([0-9]+(?:\.[0-9*]+)*)\s*$")


@dataclass(frozen=True)
class PythonTarget:
    """The Python versions the checked code may run on."""

    versions: frozenset[Version]  # the minor versions the code may run on
    source: str  # where that came from, for messages

    def includes_at_least(self, version: Version) -> bool:
        return any(v >= version for v in self.versions)

    def describe(self) -> str:
        ordered = sorted(self.versions)
        if not ordered:
            return f"no Python version ({self.source})"
        low, high = ordered[0], ordered[-1]
        if high == _KNOWN_MINORS[-1]:
            span = f">={low[0]}.{low[1]}"
        else:
            span = f"{low[0]}.{low[1]}" if low == high else f"{low[0]}.{low[1]}–{high[0]}.{high[1]}"
        return f"Python {span} ({self.source})"


def parse_version(text: str) -> Version:
    """``"3.15"`` -> (3, 15); ValueError on anything else."""
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", text)
    if match is None:
        raise ValueError(f"expected a Python version like 3.15, got {text!r}")
    return int(match.group(1)), int(match.group(2))


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.replace(".*", "").split(".") if part != "*")


def _admits(clause: str, version: Version) -> bool:
    """Does one PEP 440 clause admit some release of the minor version ``version``?"""
    match = _CLAUSE.match(clause)
    if match is None:
        raise ValueError(f"cannot read the version clause {clause!r}")
    operator, text = match.groups()
    wanted = _release(text)
    head = wanted[:2] if len(wanted) >= 2 else (*wanted, 0)
    if operator in ("==", "==="):
        return version == head if len(wanted) >= 2 else version[0] == wanted[0]
    if operator == "!=":  # only `!=X.Y.*` rules out a whole minor version
        return not (text.endswith(".*") and len(wanted) >= 2 and version == head)
    if operator in (">=", ">"):  # `>3.14` still admits 3.14.1
        return version >= head
    if operator == "<=":
        return version <= head
    if operator == "<":
        return version < head or (len(wanted) > 2 and version == head and any(wanted[2:]))
    # ~=X.Y admits X.Y and later X.*; ~=X.Y.Z admits X.Y.*
    if len(wanted) >= 3:
        return version == head
    return version[0] == head[0] and version >= head


def versions_admitted(spec: str, known: tuple[Version, ...] = _KNOWN_MINORS) -> frozenset[Version]:
    """The minor versions of ``known`` (Python's by default) some release of which ``spec`` admits."""
    clauses = [c for c in spec.split(",") if c.strip()]
    return frozenset(v for v in known if all(_admits(c, v) for c in clauses))


_PYPROJECT = "pyproject.toml"


@lru_cache(maxsize=256)
def _requires_python_near(directory: Path) -> tuple[str, Path] | None:
    """Cached per directory; each directory asks its parent (one look per folder in a tree)."""
    pyproject = directory / _PYPROJECT
    if os.path.isfile(pyproject):
        spec = _read_requires_python(pyproject)
        # The nearest pyproject decides, even without requires-python.
        return (spec, pyproject) if spec is not None else None
    return None if directory.parent == directory else _requires_python_near(directory.parent)


def _read_requires_python(pyproject: Path) -> str | None:
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # Python 3.10: the one key we need, read by hand
        match = re.search(r"""(?m)^\s*requires-python\s*=\s*["']([^"']*)["']""", text)
        return match.group(1) if match else None
    try:
        project = tomllib.loads(text).get("project", {})
    except tomllib.TOMLDecodeError:
        return None
    value = project.get("requires-python") if isinstance(project, dict) else None
    return value if isinstance(value, str) else None


def resolve_target(explicit: str | None, file_path: str) -> PythonTarget:
    if explicit is not None:
        return _explicit(explicit)
    directory = os.path.dirname(file_path)
    if not os.path.isabs(directory):  # (relative to the working directory, which may change between calls)
        directory = os.path.abspath(directory or os.curdir)
    found = _declared_for(directory)
    return found if found is not None else _running(sys.version_info[0], sys.version_info[1])


@lru_cache(maxsize=4096)
def _declared_for(directory: str) -> PythonTarget | None:
    """``_declared_in`` by the directory as the path spells it (one lookup per directory, not per file)."""
    return _declared_in(os.path.normpath(directory))


@lru_cache(maxsize=64)
def _explicit(version: str) -> PythonTarget:
    return PythonTarget(frozenset({parse_version(version)}), "--target-python")


@lru_cache(maxsize=8)
def _running(major: int, minor: int) -> PythonTarget:
    return PythonTarget(frozenset({(major, minor)}), "the running interpreter")


@lru_cache(maxsize=4096)
def _declared_in(directory: str) -> PythonTarget | None:
    """What the nearest pyproject.toml declares (per directory: its files share it)."""
    parent = os.path.dirname(directory)
    own = os.path.join(directory, _PYPROJECT)
    if parent != directory and not os.path.islink(directory) and not os.path.isfile(own):
        # Its parent's answer: two system calls here, where `realpath` makes one per path component.
        return _declared_in(parent)
    found = _requires_python_near(Path(os.path.realpath(directory)))
    if found is None:
        return None
    spec, pyproject = found
    try:
        return PythonTarget(versions_admitted(spec), f"requires-python {spec!r} in {pyproject}")
    except ValueError:
        return None


def forget_files() -> None:
    """Drop what was read from pyproject.toml files (a long-lived process calls this per run)."""
    _declared_for.cache_clear()
    _declared_in.cache_clear()
    _requires_python_near.cache_clear()
