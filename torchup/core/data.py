"""The package's data files (``torchup/data``), read as plain files.

``importlib.resources`` would be the general way; it imports ``tempfile`` and ``zipfile`` (and
through them ``random``, ``shutil``, ``bz2``, ``lzma``), which no check otherwise needs: about
10 ms of every run's start-up. torchup is installed as files, so a path next to this module is
enough.
"""

from __future__ import annotations

import os

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


def data_text(name: str) -> str:
    """The text of ``torchup/data/<name>``."""
    with open(os.path.join(DATA, name), encoding="utf-8") as file:
        return file.read()
