"""What each `python -m torchup...` entry point does before it imports anything else."""

import os
import sys


def drop_working_directory() -> None:
    """`python -m` puts the working directory first on ``sys.path``: a project's own `signal/`,
    `types.py` or `queue.py` there (torch's own sources have `signal/` and `types.py`) would then
    stand for the standard library modules torchup imports, and a check run from the project's root
    would fail on an import. The `torchup` command never had it; pip's `python -m pip` drops it too.
    (This package was found already: its other modules are found through its own path.)"""
    if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]
