"""Where a project starts: the files above it are someone else's."""

from __future__ import annotations

from pathlib import Path

_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_root(directory: Path) -> Path | None:
    """The nearest directory at or above ``directory`` with a project marker (``_MARKERS``)."""
    for candidate in (directory, *directory.parents):
        if any((candidate / marker).exists() for marker in _MARKERS):
            return candidate
    return None
