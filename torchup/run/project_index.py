"""The methods the rest of a project defines, for a run that names only part of it (issue 22).

`torchup check src/model.py` reports `lazy.cholesky()` on a receiver of unknown type unless a class
of the project defines `cholesky` (torchup.analysis.project); that class usually lives in another
file of the same project. So when a run has such a finding, the files of its project that the run
did not check are read for `def <method>` in a class (text only, no parse): the answer is the same
for a single file as for the whole directory. The project is the nearest directory above the file
that holds `pyproject.toml`, `setup.py`, `setup.cfg` or `.git`; with none, the run's own files are
all there is. Cost: nothing for a run without such a finding, or one that names the whole project.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path

from torchup.analysis.project import MethodDefinition, defined_methods_in_text
from torchup.core.diagnostics import Confidence, Diagnostic
from torchup.core.project_root import project_root
from torchup.core.source import is_notebook
from torchup.discover.discovery import Discovery, Target

_MAX_BYTES = 8 * 1024 * 1024  # (as the runner: larger files are not sources it reads)


def methods_elsewhere(
    diagnostics: Iterable[Diagnostic], paths: list[str], checked: Iterable[str], discovery: Discovery
) -> list[MethodDefinition]:
    """The methods that findings on receivers of unknown type name, as the classes of their
    projects' files outside this run (``checked``: the files it read) define them."""
    asked = [d for d in diagnostics if d.receiver_method and d.confidence is not Confidence.CERTAIN]
    if not asked:
        return []
    words = frozenset(d.receiver_method for d in asked if d.receiver_method)
    named = [Path(p).resolve() for p in paths]
    roots = {root for d in asked if (root := project_root(Path(d.path).resolve().parent)) is not None}
    roots = {root for root in roots if not any(root == n or n in root.parents for n in named)}
    if not roots:
        return []
    seen = {os.path.realpath(path) for path in checked}
    walker = dataclasses.replace(discovery, listed=[])  # (the run's own walk feeds its replay: keep it apart)
    found: list[MethodDefinition] = []
    for root in sorted(roots):
        for target in walker.targets([str(root)]):
            if not isinstance(target, Target) or is_notebook(target.path) or os.path.realpath(target.path) in seen:
                continue
            try:
                if os.path.getsize(target.path) > _MAX_BYTES:
                    continue
                text = Path(target.path).read_bytes().decode("utf-8", "replace")
            except OSError:
                continue
            found += defined_methods_in_text(text, words, target.path)
    return found
