"""What a rule sees of one file: the source, the resolver, and a way to report."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from torchup.analysis.fix_window import fix_need
from torchup.analysis.old_torch import gate_reader, runs_only_on_old_torch
from torchup.analysis.resolver import BindingKind, Resolver, Scope
from torchup.core.diagnostics import Applicability, Confidence, Diagnostic, Fix, ImportRequest, Severity
from torchup.core.python_target import PythonTarget, resolve_target
from torchup.core.source import SourceFile

if TYPE_CHECKING:
    from torchup.analysis.rule import Change


class Reporter(Protocol):
    """Who reports through a context: a rule (torchup.analysis.rule.Rule), as far as a finding names it."""

    code: str
    name: str
    severity: Severity
    since: str | None  # the release whose change the findings report
    change: Change  # what that release's wheel does to the old code


@dataclass
class Context:
    """What a rule sees of one file while it checks it, and where it reports."""

    source: SourceFile
    tree: ast.Module
    resolver: Resolver
    rule: Reporter | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    target_python_option: str | None = None  # --target-python, as given
    target_version: str | None = None  # the torch release to migrate to (None: the newest known)
    # The floor: the oldest torch release the project must still run on (FileSettings.from_version;
    # None: not known). Version gates are evaluated against it (torchup.analysis.old_torch).
    floor: str | None = None
    floor_text: str | None = None  # the floor and where it was found, as findings name it
    raise_floor: bool = False  # keep the fixes the floor lacks (`fix --raise-floor`), each saying what it needs

    @cached_property
    def python_target(self) -> PythonTarget:
        """The Python versions this file's code targets (flag, requires-python, or running)."""
        return resolve_target(self.target_python_option, self.source.path)

    # -- reporting ---------------------------------------------------------------------------
    def report(
        self,
        node: ast.AST,
        message: str,
        *,
        help: str | None = None,
        fix: Fix | None = None,
        severity: Severity | None = None,
        receiver_method: str | None = None,
        patches: str | None = None,
        subject: str | None = None,
        confidence: Confidence = Confidence.CERTAIN,
        since: str | None = None,
    ) -> None:
        """``receiver_method``: the finding is on a call of this method; unless the receiver is
        surely a tensor (``confidence``: torchup.analysis.receivers), a class of the project's may
        define it (torchup.analysis.project); ``patches``: the finding is a
        mock or patch of this qualified name (torchup.analysis.patch_targets); ``subject``: the finding is a
        use of this qualified name, one a fix of the rule renames (``Rule.renames``): without a fix,
        the mocks of that name cannot change safely either. ``since``: the release that made the
        change, for a rule whose facts span releases (the rule's own otherwise)."""
        assert self.rule is not None
        if self._runs_only_on_old_torch(node):
            return  # already migrated: the old spelling next to the new one (torchup.analysis.old_torch)
        notes: list[str] = []
        if fix is not None and self.floor is not None:
            fix = self._fix_for_floor(node, fix, notes)
        if fix is not None and confidence is not Confidence.CERTAIN and fix.applicability is Applicability.SAFE:
            fix.applicability = Applicability.UNSAFE  # (torchup.analysis.receivers: never safe unless surely torch's)
        origin = None
        if receiver_method is not None and confidence is Confidence.POSSIBLE:
            from torchup.analysis.origins import imported_origin  # (it reads what this module defines)

            origin = imported_origin(self, node)
        start, end = self.source.node_range(node)
        line, column = self.source.position(start)
        end_line, end_column = self.source.position(end)
        self.diagnostics.append(
            Diagnostic(
                code=self.rule.code,
                name=self.rule.name,
                message=message,
                path=self.source.path,
                line=line,
                column=column,
                end_line=end_line,
                end_column=end_column,
                severity=severity or self.rule.severity,
                help=help,
                fix=fix,
                start=start,
                end=end,
                notes=notes,
                receiver_method=receiver_method,
                receiver_origin=origin,
                patches=patches,
                subject=subject,
                since=since or self.rule.since,
                change=self.rule.change.value,
                confidence=confidence,
            )
        )

    def _fix_for_floor(self, node: ast.AST, fix: Fix, notes: list[str]) -> Fix | None:
        """``fix``, or its first alternative that runs on the floor (``Fix.alternatives``), or None
        with a note saying what it needs (torchup.analysis.fix_window). Under ``raise_floor`` a fix
        the floor lacks is kept, and says what it needs (``Fix.needs``)."""
        assert self.floor is not None
        need = fix_need(self.source, self.tree, self.resolver, node, fix, self.floor)
        if need is None:
            return fix
        if self.raise_floor:
            fix.needs = need.release
            notes.append(need.note(": `--raise-floor` raises the project's requirement to it"))
            return fix
        for alternative in fix.alternatives:
            if fix_need(self.source, self.tree, self.resolver, node, alternative, self.floor) is None:
                notes.append(f"the fix keeps to what torch {self.floor} has: {fix.message} needs {need.describe()}")
                return alternative
        supports = self.floor_text or self.floor
        notes.append(need.note(f"; this project supports torch {supports}: "
                               "`torchup fix --raise-floor` applies it and raises the requirement"))
        return None

    def _runs_only_on_old_torch(self, node: ast.AST) -> bool:
        assert self.rule is not None
        gate_of = gate_reader(self.tree, self.qualified_name, self.target_version, self.source.path)
        return runs_only_on_old_torch(self.tree, node, self.source.segment, self.rule.change.value == "raises", gate_of)

    # -- questions -----------------------------------------------------------------------------
    def qualified_name(self, expr: ast.AST) -> str | None:
        return self.resolver.qualified_name(expr)

    def segment(self, node: ast.AST) -> str:
        return self.source.segment(node)

    def calls_to(self, qualnames: frozenset[str]) -> list[tuple[ast.Call, str]]:
        """Calls whose callee resolves to one of ``qualnames``."""
        last_parts = {name.rsplit(".", 1)[-1] for name in qualnames}
        names = last_parts | self.resolver.names_bound_to(qualnames)  # with aliases
        found = []
        for call in self.resolver.calls:
            func = call.func
            if (isinstance(func, ast.Name) and func.id in names) or (
                isinstance(func, ast.Attribute) and func.attr in last_parts
            ):
                qualname = self.qualified_name(func)
                if qualname in qualnames:
                    found.append((call, qualname))
        return found

    def references_to(self, qualnames: frozenset[str]) -> list[tuple[ast.expr, str, ast.Call | None]]:
        """Every expression that names one of ``qualnames``, with the call it is the callee of."""
        last_parts = {name.rsplit(".", 1)[-1] for name in qualnames}
        found: list[tuple[ast.expr, str, ast.Call | None]] = []
        candidates: list[ast.expr] = [*self.resolver.attributes_named(last_parts)]
        names = last_parts | self.resolver.names_bound_to(qualnames)  # with aliases
        candidates += self.resolver.names_spelled(names)
        for node in candidates:
            qualname = self.qualified_name(node)
            if qualname in qualnames:
                found.append((node, qualname, self.resolver.call_of_callee(node)))
        found.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
        return found

    # -- names the fixed code can use --------------------------------------------------------------
    def module_reference(self, module: str, at: ast.AST) -> tuple[str, tuple[ImportRequest, ...]] | None:
        """Text that names ``module`` (dotted) at ``at``, and the imports it needs; None if shadowed."""
        scope = self.resolver.scope_of(at)
        top, _, rest = module.partition(".")
        suffix = f".{rest}" if rest else ""
        found = self.resolver.lookup(top, scope)
        if self.resolver.name_in_scope(top, scope) == top:
            if any(self.resolver.binding_usable_at(b, at) for b in found.bindings):
                return top + suffix, ()
            if all(b.scope is self.resolver.module_scope for b in found.bindings):
                return top + suffix, (ImportRequest(top),)  # bound later or only for type checkers
            return None
        for name, bindings in self.resolver.module_scope.bindings.items():
            if (
                all(b.kind is BindingKind.IMPORT and b.target == top for b in bindings)
                and self.resolver.name_in_scope(name, scope) == top
                and any(self.resolver.binding_usable_at(b, at) for b in bindings)
            ):
                return name + suffix, ()
        # `from torch import *` does not bind the name `torch` itself.
        if self.resolver.is_unbound(top, scope) or (not found.bindings and found.star_module == top):
            return top + suffix, (ImportRequest(top),)
        return None

    def symbol_reference(self, qualname: str, at: ast.AST) -> tuple[str, tuple[ImportRequest, ...]] | None:
        """Text naming ``qualname`` (``torch.profiler.ProfilerActivity``) at ``at``, plus imports."""
        module, _, name = qualname.rpartition(".")
        scope = self.resolver.scope_of(at)
        if self.resolver.name_in_scope(name, scope) == qualname:
            return name, ()
        if self.resolver.is_unbound(name, scope):
            return name, (ImportRequest(module, name),)
        module_ref = self.module_reference(module, at)
        if module_ref is None:
            return None
        return f"{module_ref[0]}.{name}", module_ref[1]

    def walk(self, node: ast.AST | None = None) -> Iterator[ast.AST]:
        """The nodes below ``node`` (the tree by default), like ``ast.walk`` but in no set order,
        and under the resolver's focus only the statements and expressions that span a line
        spelling a trigger word. A rule runs only on files that spell its own words, so it finds
        every node that spells one of them this way: the cheap way to look for such nodes."""
        start = self.tree if node is None else node
        focus = self.resolver.focus
        return ast.walk(start) if focus is None else focus.walk(start)

    def quote(self, at: ast.AST) -> str:
        """The quote for a string literal written at ``at``: not the enclosing f-string's own."""
        start, end = self.source.node_range(at)
        first, last = getattr(at, "lineno", 1), getattr(at, "end_lineno", None) or 1 << 30
        # Breadth first, into the nodes whose lines hold ``at`` only (walking every node of a
        # large file for each fix cost torch's sources half a second): the outermost f-string first.
        level: list[ast.AST] = [self.tree]
        while level:
            below: list[ast.AST] = []
            for node in level:
                for child in ast.iter_child_nodes(node):
                    lineno = getattr(child, "lineno", None)
                    if lineno is not None:
                        # (a decorated definition's `lineno` is its `def` line: the decorators come first)
                        lineno = min([lineno, *(d.lineno for d in getattr(child, "decorator_list", ()))])
                        if lineno > first or (getattr(child, "end_lineno", None) or lineno) < last:
                            continue
                    if isinstance(child, ast.JoinedStr):
                        outer_start, outer_end = self.source.node_range(child)
                        if outer_start <= start and end <= outer_end:
                            text = self.source.text[outer_start:outer_end]
                            return "'" if next((c for c in text if c in "'\""), '"') == '"' else '"'
                    below.append(child)
            level = below
        return '"'

    def scope_of(self, node: ast.AST) -> Scope:
        return self.resolver.scope_of(node)
