"""What a check produces: findings, and the fixes they carry as edits on exact text ranges."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Applicability(enum.Enum):
    SAFE = "safe"  # keeps the program's behaviour; applied by `torchup fix`
    UNSAFE = "unsafe"  # may change behaviour; applied only with --unsafe-fixes


class Severity(enum.Enum):
    ERROR = "error"  # raises under the target release
    WARNING = "warning"  # works, but differently or with a warning
    INFO = "info"


class Confidence(enum.Enum):
    """How sure a finding is that it concerns torch: a method rule's receiver evidently a tensor
    (``CERTAIN``, as every finding on a resolved name), a tensor or a container of tensors
    (``LIKELY``: `torch.load(f)`), or of unknown type in a file that uses torch (``POSSIBLE``)."""

    CERTAIN = "certain"
    LIKELY = "likely"
    POSSIBLE = "possible"

    @property
    def rank(self) -> int:
        """0 for the surest: findings below a chosen level (``--min-confidence``) are left out."""
        return _CONFIDENCE_ORDER.index(self)


_CONFIDENCE_ORDER = (Confidence.CERTAIN, Confidence.LIKELY, Confidence.POSSIBLE)


@dataclass(frozen=True, order=True)
class Edit:
    """Replace text[start:end] with ``content`` (start == end inserts)."""

    start: int
    end: int
    content: str


@dataclass(frozen=True)
class ImportRequest:
    """A name the fixed code needs in scope: ``module`` (``name`` None) or ``from module import name``."""

    module: str
    name: str | None = None


@dataclass
class Fix:
    """The edits that resolve one finding, and how safe they are."""

    message: str
    applicability: Applicability
    edits: tuple[Edit, ...]
    imports: tuple[ImportRequest, ...] = ()
    # Name nodes (by id()) this fix stops referring to: lets the fixer drop an import left unused.
    released_names: tuple[Any, ...] = ()
    # The import edits this fix makes when applied alone (for JSON consumers; the fixer recomputes
    # them for all fixes of a pass together).
    import_edits: tuple[Edit, ...] = ()
    # The qualified name this fix stops using in favour of another (`torch.cholesky`): a mock of
    # that name elsewhere in the project must change with it (torchup.analysis.project).
    replaces: str | None = None
    # What the fixed code uses that the engine cannot read off the edits (a method of an object whose
    # type it does not know: `torch.profiler.profile.key_averages(include_python_functions=)`), in the
    # keys of torchup/data/introduced.json; torchup.analysis.fix_window reads the rest itself.
    requires: tuple[str, ...] = ()
    # Forms of the same fix for older releases, in order: where this one needs a newer torch than the
    # project's floor, the first that runs on the floor is applied instead (torchup.analysis.fix_window).
    alternatives: tuple[Fix, ...] = ()
    # The torch release the fix needs, where newer than the project's floor: kept only for
    # `fix --raise-floor`, which raises the requirement to it.
    needs: str | None = None


@dataclass
class Diagnostic:
    """One finding: what, where, why, and how to fix it."""

    code: str
    name: str
    message: str
    path: str
    line: int  # 1-based
    column: int  # 1-based, in characters
    end_line: int
    end_column: int
    severity: Severity = Severity.ERROR
    help: str | None = None
    fix: Fix | None = None
    start: int = 0  # text offsets, for fixing and noqa
    end: int = 0
    cell: int | None = None  # notebooks: the 1-based index of the code cell; line/column are in that cell
    notes: list[str] = field(default_factory=list)
    # What the project's other files decide about this finding (torchup.analysis.project):
    patches: str | None = None  # a mock or patch of this qualified name (`mock.patch("torch.cholesky")`)
    subject: str | None = None  # the qualified name a finding on a use of a renamed function is about
    receiver_method: str | None = None  # `x.<method>()` on a receiver of unknown type: one of the
    # project's own classes may define the method
    # ... and where that receiver comes from when it is (part of) what a function imported from a
    # module of the project returns: (module, function, steps) (torchup.analysis.origins)
    receiver_origin: tuple[str, str, tuple[int | str, ...]] | None = None
    # Which release made the change and what its wheel does to the old code (the rule's
    # ``since`` and ``change``: torchup.analysis.rule.Change's value, "raises", "warns", ...); None
    # for the engine's own findings (TU000-TU002).
    since: str | None = None
    change: str | None = None
    confidence: Confidence = Confidence.CERTAIN

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.code)

    def tags(self) -> str:
        """`` [possible] [since torch 2.14: raises]``: the confidence unless certain, and the change
        (text outputs that cannot style them apart: GitHub annotations, JUnit)."""
        change = self.change_text()
        tags = [] if self.confidence is Confidence.CERTAIN else [self.confidence.value]
        return "".join(f" [{tag}]" for tag in (*tags, *([change] if change else [])))

    def change_text(self) -> str | None:
        """``since torch 2.6: raises``, as ``Rule.describe_change`` says it; None without a change."""
        if self.change is None:
            return None
        return self.change if self.since is None else f"since torch {self.since}: {self.change}"


def apply_edits(text: str, edits: list[Edit]) -> str:
    unique = sorted(set(edits), key=lambda e: (e.start, e.end))
    parts: list[str] = []
    position = 0
    for edit in unique:
        parts.append(text[position:edit.start])
        parts.append(edit.content)
        position = max(position, edit.end)
    parts.append(text[position:])
    return "".join(parts)


def preview(text: str, start: int, end: int, edits: tuple[Edit, ...] | list[Edit]) -> str | None:
    """``text[start:end]`` after the edits that fall inside it; None if one crosses its edges."""
    inside = [e for e in edits if start <= e.start and e.end <= end]
    if any(e not in inside and e.start < end and start < e.end for e in edits):
        return None
    shifted = [Edit(e.start - start, e.end - start, e.content) for e in inside]
    return apply_edits(text[start:end], shifted)
