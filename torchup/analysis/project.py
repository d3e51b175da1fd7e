"""What a file's findings owe to the rest of the checked project: decided once per run, after every
file was read, before anything is fixed.

Two facts cross files:
- **The project's own methods.** `lazy.cholesky()` on a receiver of unknown type may call
  `LazyTensor.cholesky`, which the project defines (GPyTorch's lazy tensors): such a finding
  (confidence ``possible``) is dropped. On a receiver that is likely a tensor (``likely``) it is
  kept without a fix, safe or unsafe, and says which class: rewriting it to
  `torch.linalg.cholesky(x)` would bypass that method. The index covers every file of the run,
  and the rest of the project when the run names only some of its files (``project_methods``).
- **Mocks of a renamed function.** A test that patches `torch.cholesky` and counts calls fails once
  the library calls `torch.linalg.cholesky`. The calls' fixes and the patches' fixes (torchup.
  patch_targets) form one change: all of them apply in the same mode, the weakest of theirs, or
  none (a patch torchup cannot rewrite leaves the calls' fixes unsafe, naming it). A mock whose
  stand-in would be called with other arguments (TU602's `torch.amp.autocast("cuda", ...)`) has an
  unsafe fix, so the safe fix changes neither it nor the calls. Besides patches, a rule may mark
  any reference that stops being true when the calls change and that it cannot rewrite
  (``Diagnostic.patches`` without a fix: TU602's `isinstance(s, torch.cuda.amp.GradScaler)` where
  `torch` is shadowed): the calls' fixes are then unsafe, naming it.
- **What the project's functions return.** `_, t = linear_cg(...)` then `t.symeig()`: when every
  `return` of the imported `linear_cg`, read in its own file, gives a tensor there, the finding is
  ``likely`` rather than ``possible`` (torchup.analysis.origins), and is kept.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from torchup.analysis.fix_window import NEEDS_NOTE
from torchup.analysis.resolver import Focus
from torchup.core.diagnostics import Applicability, Confidence, Diagnostic

if TYPE_CHECKING:
    from torchup.analysis.origins import Returns


@dataclass(frozen=True)
class MethodDefinition:
    """`def <method>(...)` in the body of class ``owner``, or `self.<method> = ...` in one of its
    methods (an attribute of its instances, by the name a rule looks for), at ``path:line``."""

    method: str
    owner: str
    path: str
    line: int


def defined_methods(
    tree: ast.Module, focus: Focus | None, words: frozenset[str], path: str, text: str | None = None
) -> list[MethodDefinition]:
    """The methods named by one of ``words`` that the classes of one file define. Under a focus
    only its classes are walked: a `def word` line holds the word, so its class is one of them.
    ``text``: the tree's, when at hand: one that spells no `def word` is not walked (as
    ``defined_methods_in_text`` reads it; with every rule selected, a walk of each tree parsed)."""
    if text is not None and (not words or not _defines_one(words, text)):
        return []
    nodes = ast.walk(tree) if focus is None else focus.walk(tree)
    found = []
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if statement.name in words:
                        found.append(MethodDefinition(statement.name, node.name, path, statement.lineno))
                    found += [MethodDefinition(name, node.name, path, line) for name, line in
                              _assigned_to_self(statement, words)]
    return found


def _assigned_to_self(function: ast.FunctionDef | ast.AsyncFunctionDef, words: frozenset[str]) -> list[tuple[str, int]]:
    """`self.word = ...` in a method (`self`: its first parameter): (word, line) for each."""
    parameters = [*function.args.posonlyargs, *function.args.args]
    if not parameters:
        return []
    self_name = parameters[0].arg
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            if (isinstance(target, ast.Attribute) and target.attr in words and isinstance(target.value, ast.Name)
                    and target.value.id == self_name):
                found.append((target.attr, target.lineno))
    return found


def defined_methods_in_text(
    content: str | bytes, words: frozenset[str], path: str, lines: tuple[tuple[int, int], ...] | None = None
) -> list[MethodDefinition]:
    """``defined_methods`` of a file the pre-filter does not parse (its only use of a method word
    is a `def`, which is no reference): read off the text (or its UTF-8 bytes), each indented
    `def word` owned by the nearest `class` line above it that is indented less. ``lines``: where
    each line of the bytes that spells one of ``words`` starts (grep's, as (number, offset)), when
    known: a `def word` line is one of them, so a file none of whose lines holds one is settled
    without reading the rest (transformers: 1,469 such files, 36 MB, 3% of a cold run)."""
    if not words:
        return []
    if lines is not None and isinstance(content, bytes) and all(_starts_a_line(content, at) for _, at in lines):
        if not any(_defines_one(words, content, start, _line_end(content, start)) for _, start in lines):
            return []
    elif not _defines_one(words, content):
        return []  # (most files: a search or two of the bytes, no loop)
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    found = []
    classes: list[tuple[int, str]] = []  # (indentation, name) of the classes open at this line
    for number, line in enumerate(text.splitlines(), 1):
        match = _CLASS_OR_DEF.match(line)
        if match is None:
            assigned = _SELF_ASSIGNED.match(line)
            if assigned is not None and assigned["name"] in words and classes \
                    and classes[-1][0] < len(assigned["indent"].expandtabs(8)):
                found.append(MethodDefinition(assigned["name"], classes[-1][1], path, number))
            continue
        indent = len(match["indent"].expandtabs(8))
        while classes and classes[-1][0] >= indent:
            classes.pop()
        if match["keyword"] == "class":
            classes.append((indent, match["name"]))
        elif classes and match["name"] in words and classes[-1][0] < indent:
            found.append(MethodDefinition(match["name"], classes[-1][1], path, number))
    return found


def _starts_a_line(content: bytes, start: int) -> bool:
    """(grep's offsets are the file's as it read it: one that is not a line's start says it changed)"""
    return start <= len(content) and (start == 0 or content[start - 1] == 10)  # (10: `\n`)


def _line_end(content: bytes, start: int) -> int:
    end = content.find(b"\n", start)
    return len(content) if end < 0 else end


def _defines_one(words: frozenset[str], text: str | bytes, start: int = 0, end: int | None = None) -> bool:
    """Does the text (between ``start`` and ``end``) spell `def word` or `self.word =`?"""
    stop = len(text) if end is None else end
    return any(
        pattern.search(text, start, stop) is not None  # type: ignore[arg-type]
        for pattern in _definition_patterns(words, type(text))
    )


@functools.cache
def _definition_patterns(words: frozenset[str], kind: type[str] | type[bytes]) -> tuple[re.Pattern[Any], ...]:
    # (two patterns, each starting with a literal, `def` or `self.`, which the regex engine finds
    # by a fast search; an alternation of the two would be tried at every position. No leading
    # `\b`: `undef cholesky` would only cost the loop over the lines)
    alternatives = "|".join(sorted(words))
    patterns = (rf"def[ \t]+(?:{alternatives})\b", rf"self\.(?:{alternatives})[ \t]*(?::[^=\n]*)?=(?!=)")
    return tuple(re.compile(p.encode("ascii") if kind is bytes else p) for p in patterns)


_CLASS_OR_DEF = re.compile(r"(?P<indent>[ \t]*)(?:async[ \t]+)?(?P<keyword>class|def)[ \t]+(?P<name>\w+)")
_SELF_ASSIGNED = re.compile(r"(?P<indent>[ \t]+)self\.(?P<name>\w+)[ \t]*(?::[^=\n]*)?=(?!=)")


@dataclass(frozen=True)
class _Decision:
    """How every fix of one renamed function's group applies: ``applicability`` (None: no fix)."""

    applicability: Applicability | None
    note: str


class ProjectView:
    """The project's methods and the groups of fixes that must apply together, from the findings
    and method definitions of every file of a run."""

    def __init__(self, diagnostics: Iterable[Diagnostic], methods: Iterable[MethodDefinition]) -> None:
        self.methods: dict[str, list[MethodDefinition]] = {}
        for definition in sorted(methods, key=lambda d: (d.path, d.line)):
            self.methods.setdefault(definition.method, []).append(definition)
        self.groups = _decide(list(diagnostics))
        self._returns: Returns | None = None

    def adjust(self, diagnostics: list[Diagnostic]) -> None:
        """Apply what the project decides to these findings (in place: some are dropped)."""
        for diagnostic in diagnostics:
            self._imported_receiver(diagnostic)
        diagnostics[:] = [d for d in diagnostics if not self.defines_method_of(d)]
        for diagnostic in diagnostics:
            self._own_method(diagnostic)
            name = diagnostic.patches or (diagnostic.fix.replaces if diagnostic.fix is not None else None)
            decision = self.groups.get(name) if name is not None else None
            if decision is None:
                continue
            fix = diagnostic.fix
            if fix is None and decision.applicability is None:
                continue  # (nothing to take back: the note is about fixes)
            if fix is not None and decision.applicability is None:
                diagnostic.fix = None
            elif fix is not None and decision.applicability is Applicability.UNSAFE:
                fix.applicability = Applicability.UNSAFE
            _note(diagnostic, decision.note)

    def defines_method_of(self, diagnostic: Diagnostic) -> bool:
        """Is the finding's receiver of unknown type, and its method one the project defines?"""
        return diagnostic.confidence is Confidence.POSSIBLE and bool(self.methods.get(diagnostic.receiver_method or ""))

    def _imported_receiver(self, diagnostic: Diagnostic) -> None:
        """A possible finding whose receiver a function of the project returns as a tensor: likely."""
        origin = diagnostic.receiver_origin
        if origin is None or diagnostic.confidence is not Confidence.POSSIBLE:
            return
        if self._returns is None:
            from torchup.analysis.origins import Returns  # (parses: only for such findings)

            self._returns = Returns()
        where = self._returns.of_tensors(diagnostic.path, origin)
        if where is None:
            return
        diagnostic.confidence = Confidence.LIKELY
        _note(diagnostic, f"likely a tensor: `{origin[1]}` ({where}) returns tensors there")

    def _own_method(self, diagnostic: Diagnostic) -> None:
        definitions = self.methods.get(diagnostic.receiver_method or "")
        if not definitions or diagnostic.fix is None or diagnostic.confidence is Confidence.CERTAIN:
            return
        first = definitions[0]
        more = f" and {len(definitions) - 1} more" if len(definitions) > 1 else ""
        diagnostic.fix = None
        _note(diagnostic, f"no fix: the project defines `{first.owner}.{first.method}` ({first.path}:{first.line}"
                          f"{more}); the receiver may be one of its instances, whose own method a rewrite would bypass")


def _note(diagnostic: Diagnostic, note: str) -> None:
    if note not in diagnostic.notes:
        diagnostic.notes.append(note)


def _where(diagnostic: Diagnostic) -> str:
    cell = f"cell {diagnostic.cell}:" if diagnostic.cell is not None else ""
    return f"{diagnostic.path}:{cell}{diagnostic.line}:{diagnostic.column}"


def _decide(diagnostics: list[Diagnostic]) -> dict[str, _Decision]:
    """One decision per rewritten name that something in the project patches (or checks) by name."""
    patched = {d.patches for d in diagnostics if d.patches is not None}
    decisions = {}
    for name in sorted(patched):
        patches = [d for d in diagnostics if d.patches == name]
        calls = [d for d in diagnostics if d.patches is None and d.fix is not None and d.fix.replaces == name]
        mocks = ", ".join(_where(d) for d in patches[:3])
        mocks += f" and {len(patches) - 3} more" if len(patches) > 3 else ""
        if not calls:
            decisions[name] = _Decision(None, f"no fix: no call of `{name}` in the checked files is rewritten, so "
                                              "renaming this patch would change what it intercepts")
            continue
        unfixable = [d for d in patches if d.fix is None]
        unfixed = [d for d in diagnostics if d.subject == name and d.patches is None and d.fix is None]
        held = next((d for d in unfixed if any(note.startswith(NEEDS_NOTE) for note in d.notes)), None)
        if held is not None:  # (the use stays on every release: a renamed mock would miss it on all of them)
            decisions[name] = _Decision(None, f"no fix: `{name}` is mocked by name ({mocks}), and its use at "
                                              f"{_where(held)} keeps no fix for the project's floor: a mock renamed "
                                              "with the other calls would no longer see that one")
            continue
        unsafe = [d for d in [*calls, *patches] if d.fix is not None and d.fix.applicability is Applicability.UNSAFE]
        if unfixable:
            decisions[name] = _Decision(Applicability.UNSAFE, f"unsafe: `{name}` is patched, checked or re-exported "
                                        f"by name at {_where(unfixable[0])}, which torchup cannot rewrite; it would "
                                        "no longer see the fixed calls")
        elif unfixed:
            decisions[name] = _Decision(Applicability.UNSAFE, f"unsafe: `{name}` is mocked by name ({mocks}), and "
                                        f"its use at {_where(unfixed[0])} has no fix: a mock renamed with the other "
                                        "calls would no longer see that one")
        elif unsafe:
            decisions[name] = _Decision(Applicability.UNSAFE, f"applied with the {len(calls) + len(patches) - 1} "
                                        f"other fixes of `{name}` and its mocks ({mocks}), in one mode: one of them, "
                                        f"at {_where(unsafe[0])}, is unsafe")
        else:
            decisions[name] = _Decision(Applicability.SAFE, f"`{name}` is mocked by name ({mocks}): the calls and "
                                        f"the mocks ({len(calls) + len(patches)} fixes) change together")
    return decisions
