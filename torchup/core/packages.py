"""The package a file belongs to, read from the `__init__` files above it (never imported)."""

from __future__ import annotations

import os
from functools import cache

_INITS = ("__init__.py", "__init__.pyi")


def top_package(path: str) -> str | None:
    """The outermost regular package that the file ``path`` is part of: `torch` for
    `.../torch/nn/modules/linear.py`, when `nn/modules`, `nn` and `torch` each hold an `__init__.py`
    (or `.pyi`). None for a file outside any package, a namespace package's (no `__init__`), and a
    source with no file (`<stdin>`)."""
    if path.startswith("<"):
        return None
    return _package_of(os.path.dirname(path))


@cache  # (asked for every file, several times: keyed by the directory as written, no abspath each time)
def _package_of(directory: str) -> str | None:
    return _top_package(os.path.abspath(directory or "."))


@cache  # (one answer per directory: a corpus's files share a few hundred)
def _top_package(directory: str) -> str | None:
    if not any(os.path.isfile(os.path.join(directory, name)) for name in _INITS):
        return None
    parent = os.path.dirname(directory)
    above = _top_package(parent) if parent != directory else None
    return above or os.path.basename(directory) or None


def forget_packages() -> None:
    """Drop the answers kept: for a caller that runs again after files may have changed (an editor)."""
    _package_of.cache_clear()
    _top_package.cache_clear()
