"""``torchup fix --raise-floor``: after the fixes that need a newer torch than the floor were applied,
raise the project's torch requirement to the release they need, in the file it came from.

Each applied fix says the release it needs (``Fix.needs``, torchup.analysis.fix_window); the files
fixed in one project (the nearest one up the tree that names torch: torchup.settings.torch_requirement)
need the newest of them, and every torch requirement of that project that admits an older release is
raised to it (torchup.settings.raise_floor), as one edit per file: written atomically, or printed as a
diff with ``--diff``. A floor that no requirement set (``--floor``, the configuration, the installed
torch or the default), a pin or a cap that excludes the release, are left alone and said so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from torchup.core.diagnostics import Diagnostic
from torchup.fix.fixer import ChangedOnDisk, write_atomic
from torchup.settings.raise_floor import raise_requirement
from torchup.settings.torch_requirement import Detector, TorchRequirement


@dataclass
class FloorRaise:
    """What raising the floor did: a line for each requirement raised or left, and the diffs."""

    lines: list[str] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    failed: bool = False


def raise_floors(fixed: list[Diagnostic], detector: Detector, *, diff: bool) -> FloorRaise:
    """Raise the requirements of the projects whose files the applied fixes ``fixed`` need newer
    torch in (see the module docstring); ``diff``: print, write nothing."""
    outcome = FloorRaise()
    for (directory, requirements), release in _needs_by_project(fixed, detector).items():
        if not requirements:
            outcome.lines.append(f"the fixes in {_shown(directory)} need torch>={release}, and no requirement file "
                                 f"of the project names torch: state `torch>={release}` where the project lists "
                                 "its dependencies")
            continue
        by_file: dict[str, list[TorchRequirement]] = {}
        for requirement in requirements:
            by_file.setdefault(requirement.path, []).append(requirement)
        for path, found in sorted(by_file.items()):
            _raise_file(path, found, release, outcome, diff=diff)
    return outcome


Project = tuple[str, tuple[TorchRequirement, ...]]  # (a directory of it, its torch requirements)


def _needs_by_project(fixed: list[Diagnostic], detector: Detector) -> dict[Project, str]:
    """The newest release the applied fixes need, by the project their files belong to."""
    needs: dict[Project, str] = {}
    by_requirements: dict[tuple[TorchRequirement, ...], Project] = {}
    for diagnostic in sorted(fixed, key=lambda d: d.path):
        release = diagnostic.fix.needs if diagnostic.fix is not None else None
        if release is None:
            continue
        directory = os.path.dirname(os.path.abspath(diagnostic.path))
        requirements = tuple(detector.all_requirements(directory))
        project = by_requirements.setdefault(requirements, (directory, requirements))
        known = needs.get(project)
        if known is None or _key(release) > _key(known):
            needs[project] = release
    return needs


def _raise_file(path: str, requirements: list[TorchRequirement], release: str, outcome: FloorRaise,
                *, diff: bool) -> None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        outcome.lines.append(f"{_shown(path)}: not raised to torch>={release}: cannot read it ({exc})")
        outcome.failed = True
        return
    new_text = text
    for requirement in sorted(requirements, key=lambda r: r.line, reverse=True):  # (later lines first: offsets hold)
        result = raise_requirement(new_text, requirement, release)
        if result.text is None:
            outcome.lines.append(f"{result.description}: raise it by hand")
            outcome.failed = True
            continue
        if result.changed:
            outcome.lines.append(("would raise " if diff else "raised ") + result.description)
        new_text = result.text
    if new_text == text:
        return
    if diff:
        from torchup.run.runner import unified_diff  # (the same diff the fixed files get)

        outcome.diffs.append(unified_diff(_shown(path), text, new_text))
        return
    try:
        write_atomic(path, new_text.encode("utf-8"), data)
    except (OSError, ChangedOnDisk) as exc:
        outcome.lines.append(f"{_shown(path)}: not written ({exc})")
        outcome.failed = True


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith(os.pardir) else relative


def _key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))
