"""The catalogue: rules for mechanical API changes, one entry each in ``torchup/data/catalogue.toml``.

An entry says which names changed, in which release, what the wheel does, and how each old use is
rewritten; this module turns every entry into a ``Rule`` (the registry module
``tu620_catalogue`` lists them). Changes that need judgement have hand-written rules instead.

What an entry can say of an old name:
- ``moves``: ``old = "new"``: the same object (or the same signature) under another name. Every
  reference is rewritten; a ``from old_module import name`` line is rewritten in place when all
  its names move to one module, and then the uses need no edit.
- ``calls``: ``old = {params = [...], call = "new", args = "{b}, {A}"}``: a call whose arguments
  bind to the old signature becomes ``new(args)``; ``{name}`` is the text of that argument,
  ``{name?}`` with the text before it from its comma (``", upper={upper?}"``) is left out when the
  argument is absent, ``{*name}`` is a star parameter's arguments joined with commas (the
  parameters after it are keyword-only).
- ``values``: ``old = "new_function"``: a name whose value is now what a function returns
  (`torch.has_cuda` -> `torch.backends.cuda.is_built()`); each attribute reference becomes the call
  (a name a `from` import binds is reported without a fix: its value was read at import time).
- ``keywords``: ``function = {old = "new"}``: a keyword argument of ``function`` renamed; each call
  that passes ``old=`` passes ``new=`` instead (not where it passes both). Its words are the old
  keywords, which a call must spell: the function's name, in most files that use it, is not.
- ``gone``: ``old = "what to do instead"``: reported, no automatic fix.
- ``modules``: ``old_module = "new_module"`` (or ``""`` for none): imports of the module.
- ``rule_module``: the registry module whose class makes the entry's rule (``rule_for`` with a
  subclass of ``CatalogueRule``), for a fix that needs judgement beyond a template: the entry keeps
  its facts, docs and examples; the module adds the fix.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, has_comment
from torchup.analysis.resolver import Binding, BindingKind
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.data import data_text
from torchup.core.diagnostics import Applicability, Edit, Fix, ImportRequest, Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_PLACEHOLDER = re.compile(r"(?P<before>[^{}]*)\{(?P<star>\*)?(?P<name>\w+)(?P<optional>\?)?\}")
_VERBS = {
    Change.RAISES: "is gone",
    Change.WARNS: "is deprecated",
    Change.MOVED: "has moved",
    Change.BEHAVES: "behaves differently",
    Change.ADOPT: "has a successor",
}
_FROM_MODULE = re.compile(r"from\s+(?P<module>[\w.]+)\s+import\b")


@dataclass(frozen=True)
class CallTemplate:
    """How a call of an old function is written with the new one."""

    params: tuple[str, ...]  # the old signature's parameters in order; `*name` collects the rest, after it keyword-only
    call: str  # the new function's qualified name
    args: str  # the new arguments, with placeholders
    min_star: int = 0  # fewer arguments than this for the star parameter: no rewrite

    @property
    def reorders(self) -> bool:
        """Whether the new call evaluates the arguments in another order than the old one."""
        order = [m["name"] for m in _PLACEHOLDER.finditer(self.args)]
        params = [p.lstrip("*") for p in self.params]
        return order != sorted(order, key=params.index)

    def render(self, arguments: dict[str, list[str]]) -> str | None:
        """The new argument list, or None when an argument would be dropped or is missing."""
        used: set[str] = set()
        out = []
        position = 0
        for match in _PLACEHOLDER.finditer(self.args):
            position = match.end()
            name = match["name"]
            used.add(name)
            texts = arguments.get(name)
            if match["star"]:
                if len(texts or ()) < self.min_star:
                    return None
                out.append(match["before"] + ", ".join(texts or ()))
            elif texts:
                out.append(match["before"] + texts[0])
            elif not match["optional"]:
                return None
            else:  # (left out from the comma that starts it: `[{*matrices}], out={out?}` keeps the `]`)
                out.append(match["before"].partition(",")[0])
        out.append(self.args[position:])
        if set(arguments) - used:
            return None  # an argument the template has no place for: not this rewrite
        return "".join(out)

    def bind(self, call: ast.Call, segment: Any) -> dict[str, list[str]] | None:
        """Argument texts by old parameter name; None for ``*args``/``**kwargs`` or a mismatch."""
        star_at = next((i for i, p in enumerate(self.params) if p.startswith("*")), len(self.params))
        positional = list(self.params[:star_at])
        keyword_only = list(self.params[star_at + 1:])
        star = self.params[star_at][1:] if star_at < len(self.params) else None
        bound: dict[str, list[str]] = {}
        if self.reorders and not all(_is_plain(arg) for arg in [*call.args, *(k.value for k in call.keywords)]):
            return None  # evaluated in another order: only values without side effects
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                return None
            if index < len(positional):
                bound[positional[index]] = [segment(arg)]
            elif star is not None:
                bound.setdefault(star, []).append(segment(arg))
            else:
                return None
        for keyword in call.keywords:
            if keyword.arg is None or keyword.arg not in (*positional, *keyword_only) or keyword.arg in bound:
                return None
            bound[keyword.arg] = [segment(keyword.value)]
        return bound


@dataclass(frozen=True)
class Entry:
    """One catalogue entry (see the module docstring)."""

    code: str
    name: str
    since: str
    change: Change
    summary: str
    what: str
    why: str
    fix: str
    fix_safety: str
    evidence: str
    notes: str = ""
    until: str | None = None  # the first release where the change is gone again (a warning dropped)
    unsafe: bool = False
    enabled: bool = True
    moves: dict[str, str] = field(default_factory=dict)
    calls: dict[str, CallTemplate] = field(default_factory=dict)
    gone: dict[str, str] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)
    values: dict[str, str] = field(default_factory=dict)
    keywords: dict[str, dict[str, str]] = field(default_factory=dict)
    examples: tuple[Example, ...] = ()
    rule_module: str | None = None

    @property
    def names(self) -> frozenset[str]:
        return frozenset([*self.moves, *self.calls, *self.gone, *self.values])

    def replacement(self, old: str) -> str | None:
        """What the fix writes for ``old``: the new name, function, or call of a value's function."""
        if old in self.values:
            return f"{self.values[old]}()"
        return self.moves.get(old) or (self.calls[old].call if old in self.calls else None)


def _entry(raw: dict[str, Any]) -> Entry:
    calls = {
        old: CallTemplate(tuple(spec["params"]), spec["call"], spec["args"], spec.get("min_star", 0))
        for old, spec in raw.get("calls", {}).items()
    }
    examples = tuple(
        Example(
            item["title"],
            item["source"],
            findings=item.get("findings", 1),
            fixed=item.get("fixed"),
            unsafe=item.get("unsafe", False),
            executable=item.get("executable", True),
            versions=tuple(item.get("versions", ("2.13", "2.14"))),  # type: ignore[arg-type]
        )
        for item in raw.get("example", ())
    )
    return Entry(
        code=raw["code"],
        name=raw["name"],
        since=raw["since"],
        change=Change(raw["change"]),
        summary=raw["summary"],
        what=raw["what"],
        why=raw["why"],
        fix=raw["fix"],
        fix_safety=raw["fix_safety"],
        evidence=raw["evidence"],
        notes=raw.get("notes", ""),
        until=raw.get("until"),
        unsafe=raw.get("unsafe", False),
        enabled=raw.get("enabled", True),
        moves=dict(raw.get("moves", {})),
        calls=calls,
        gone=dict(raw.get("gone", {})),
        modules=dict(raw.get("modules", {})),
        values=dict(raw.get("values", {})),
        keywords={function: dict(renames) for function, renames in raw.get("keywords", {}).items()},
        examples=examples,
        rule_module=raw.get("rule_module"),
    )


@cache
def load_entries() -> tuple[Entry, ...]:
    text = data_text("catalogue.toml")
    return tuple(_entry(raw) for raw in tomllib.loads(text)["entry"])


class CatalogueRule(Rule):
    """A rule made from one catalogue entry."""

    entry: ClassVar[Entry]

    def check(self, ctx: Context) -> None:
        entry = self.entry
        import_fixes: dict[int, Fix | None] = {}  # by id() of the import statement
        for binding in _from_import_bindings(ctx, entry):
            fix = import_fixes.setdefault(id(binding.statement), self._import_fix(ctx, binding))
            old = binding.target or ""
            ctx.report(binding.node, self._message(old, "imported"), fix=fix, help=self._help(old))
        for node, qualname, call in ctx.references_to(entry.names):
            fix = self._reference_fix(ctx, node, qualname, call, import_fixes)
            ctx.report(node, self._message(qualname, "used"), fix=fix, help=self._help(qualname))
        if entry.keywords:
            self._check_keywords(ctx)
        for alias, module in _module_imports(ctx, entry):
            new = entry.modules[module]
            # A module with no new home is gone, whatever the entry's other names do.
            what = f"{_VERBS[entry.change]}; use `{new}`" if new else "is gone (ModuleNotFoundError)"
            ctx.report(alias, f"`{module}` (imported) {what}")

    def _check_keywords(self, ctx: Context) -> None:
        renames = self.entry.keywords
        for call, qualname in ctx.calls_to(frozenset(renames)):
            given = {keyword.arg for keyword in call.keywords}
            for keyword in call.keywords:
                new = renames[qualname].get(keyword.arg or "")
                if new is None:
                    continue
                fix = None if new in given else Fix(
                    f"use `{new}=`", self._applicability, (Edits(ctx.source).rename_keyword(keyword, new),)
                )
                ctx.report(keyword, f"`{qualname}({keyword.arg}=)` {_VERBS[self.entry.change]}; use `{new}=`",
                           fix=fix, help=f"use `{new}=` (the same value)")

    # -- messages ----------------------------------------------------------------------------------
    def _message(self, old: str, how: str) -> str:
        """What happened to ``old`` and what to use; the engine adds the release and what the wheel does."""
        entry = self.entry
        verb = _VERBS[entry.change]
        new = entry.replacement(old)
        advice = f"use `{new}`" if new else entry.gone.get(old, "")
        return f"`{old}` ({how}) {verb}" + (f"; {advice}" if advice else "")

    def _help(self, old: str) -> str | None:
        new = self.entry.replacement(old)
        return f"use `{new}`" if new else self.entry.gone.get(old)

    @property
    def _applicability(self) -> Applicability:
        return Applicability.UNSAFE if self.entry.unsafe else Applicability.SAFE

    # -- fixes -------------------------------------------------------------------------------------
    def _import_fix(self, ctx: Context, binding: Binding) -> Fix | None:
        """``from old.module import a, b`` -> ``from new.module import a, b``, when every name the line
        imports moves to the same module (a renamed name keeps its local name with ``as``: the
        safety check proves a fix by the one node around its edits, so the uses stay as they are)."""
        statement = binding.statement
        if not isinstance(statement, ast.ImportFrom) or statement.level or statement.module is None:
            return None
        targets = [f"{statement.module}.{alias.name}" for alias in statement.names]
        if any(target not in self.entry.moves for target in targets):
            return None
        new_modules = {self.entry.moves[target].rpartition(".")[0] for target in targets}
        if len(new_modules) != 1:
            return None
        start, end = ctx.source.node_range(statement)
        found = _FROM_MODULE.match(ctx.source.text, start, end)
        if found is None or found["module"] != statement.module:
            return None
        new_module = new_modules.pop()
        edits = [Edit(found.start("module"), found.end("module"), new_module)]
        for alias, target in zip(statement.names, targets, strict=True):
            new_name = self.entry.moves[target].rpartition(".")[2]
            if new_name != alias.name:
                alias_start, _ = ctx.source.node_range(alias)
                if ctx.source.text[alias_start : alias_start + len(alias.name)] != alias.name:
                    return None
                keep_local = "" if alias.asname else f" as {alias.name}"
                edits.append(Edit(alias_start, alias_start + len(alias.name), new_name + keep_local))
        return Fix(f"import from `{new_module}`", self._applicability, tuple(edits))

    def _reference_fix(
        self, ctx: Context, node: ast.expr, qualname: str, call: ast.Call | None, import_fixes: dict[int, Fix | None]
    ) -> Fix | None:
        entry = self.entry
        if isinstance(node, ast.Name):
            # A name a `from` import binds changes with that import (the same fix: applied once).
            for binding in ctx.resolver.lookup_name(node).bindings:
                if binding.kind is BindingKind.FROM_IMPORT and id(binding.statement) in import_fixes:
                    fix = import_fixes[id(binding.statement)]
                    if fix is not None and qualname in entry.moves:
                        return fix
        if qualname in entry.calls:
            return self._call_fix(ctx, node, qualname, call)
        new = entry.moves.get(qualname) or entry.values.get(qualname)
        if new is None or not isinstance(node, ast.Attribute):
            return None
        reference = reference_for_new_name(ctx, new, node, qualname)
        if reference is None:
            return None
        text, imports = reference
        if qualname in entry.values:  # (the value is what the new function returns)
            text = f"{text}()"
        return Fix(
            f"use `{text}`", self._applicability, (Edits(ctx.source).replace(node, text),), imports,
            _released(node, qualname, new), replaces=qualname if qualname in entry.moves else None,
        )

    def _call_fix(self, ctx: Context, node: ast.expr, qualname: str, call: ast.Call | None) -> Fix | None:
        template = self.entry.calls[qualname]
        if call is None or not isinstance(node, ast.Attribute | ast.Name):
            return None
        arguments = template.bind(call, ctx.segment)
        rendered = None if arguments is None else template.render(arguments)
        reference = reference_for_new_name(ctx, template.call, node, qualname)
        if rendered is None or reference is None or has_comment(ctx.source, *ctx.source.node_range(call)):
            return None  # (a comment in the call: the rewrite would drop it)
        text, imports = reference
        edit = Edits(ctx.source).replace(call, f"{text}({rendered})")
        released = _released(node, qualname, template.call)
        return Fix(f"use `{text}`", self._applicability, (edit,), imports, released, replaces=qualname)


def reference_for_new_name(
    ctx: Context, qualname: str, at: ast.expr, old: str
) -> tuple[str, tuple[ImportRequest, ...]] | None:
    """Text naming ``qualname`` where ``at`` names ``old``: ``pytree.new`` for ``pytree.old`` of the
    same module; else through its module (``torch`` is imported in most files), else the name
    imported on its own."""
    module, _, name = qualname.rpartition(".")
    if isinstance(at, ast.Attribute) and old.rpartition(".")[0] == module:
        return f"{ctx.segment(at.value)}.{name}", ()
    found = ctx.module_reference(module, at)
    if found is not None:
        return f"{found[0]}.{name}", found[1]
    return ctx.symbol_reference(qualname, at)


def _is_plain(node: ast.expr) -> bool:
    """A name, constant, attribute or subscript of such: evaluating it has no side effect to reorder."""
    if isinstance(node, ast.Name | ast.Constant):
        return True
    if isinstance(node, ast.Attribute):
        return _is_plain(node.value)
    if isinstance(node, ast.Subscript):
        return _is_plain(node.value) and _is_plain(node.slice)
    if isinstance(node, ast.UnaryOp):
        return _is_plain(node.operand)
    return False


def _released(node: ast.expr, old: str, new: str) -> tuple[int, ...]:
    """The names a rewrite of ``node`` (``old`` -> ``new``) stops using: none where the new name is
    reached through the same base (`DLDeviceType.kDLGPU` -> `DLDeviceType.kDLCUDA`, see
    ``reference_for_new_name``), else the leftmost name of the old reference."""
    if isinstance(node, ast.Attribute) and old.rpartition(".")[0] == new.rpartition(".")[0]:
        return ()
    return base_names(node)


def base_names(node: ast.expr) -> tuple[int, ...]:
    """The leftmost name of ``a.b.c`` (by id): the fix stops using it there."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return (id(node),) if isinstance(node, ast.Name) else ()


def _from_import_bindings(ctx: Context, entry: Entry) -> list[Binding]:
    """``from module import name`` bindings of a catalogued name that run (not typing-only)."""
    names = entry.names
    found = [
        b for b in ctx.resolver.import_bindings
        if b.kind is BindingKind.FROM_IMPORT and b.target in names and not b.typing_only
    ]
    return sorted(found, key=lambda b: (b.node.lineno, b.node.col_offset))  # type: ignore[attr-defined]


def _module_imports(ctx: Context, entry: Entry) -> list[tuple[ast.alias, str]]:
    """Imports of a catalogued module: ``import m``, ``import m.sub``, ``from m import x``,
    ``from parent import m``."""
    if not entry.modules:
        return []
    found: list[tuple[ast.alias, str]] = []
    for binding in ctx.resolver.import_bindings:
        statement, alias = binding.statement, binding.node
        if binding.typing_only or not isinstance(alias, ast.alias):
            continue
        if isinstance(statement, ast.Import):
            spelled = alias.name
        elif isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
            spelled = f"{statement.module}.{alias.name}"
            if f"{statement.module}.{alias.name}" in entry.names:
                continue  # reported as a name
        else:
            continue
        module = next((m for m in entry.modules if spelled == m or spelled.startswith(m + ".")), None)
        if module is not None:
            found.append((alias, module))
    return sorted(found, key=lambda item: (item[0].lineno, item[0].col_offset))


def _words(entry: Entry) -> LooksFor:
    keywords = sorted({old for renames in entry.keywords.values() for old in renames})
    return LooksFor(names=tuple(sorted(entry.names)), modules=tuple(sorted(entry.modules)), keywords=tuple(keywords))


def build_rules() -> tuple[Rule, ...]:
    """One rule per entry, but those a hand-written module makes (``rule_module``)."""
    return tuple(rule_for(entry) for entry in load_entries() if entry.rule_module is None)


def entry_by_code(code: str) -> Entry:
    return next(entry for entry in load_entries() if entry.code == code)


def rule_for(
    entry: Entry, base: type[CatalogueRule] | None = None, availability: FixAvailability | None = None
) -> Rule:
    """The rule of one entry, its class made as a rule author would write it by hand; ``base``: a
    subclass that adds to it (a fix), with the ``availability`` of that fix."""
    if availability is None:
        fixable = bool(entry.moves or entry.calls or entry.values or entry.keywords)
        availability = (
            FixAvailability.NONE if not fixable
            else FixAvailability.UNSAFE if entry.unsafe
            else FixAvailability.SAFE if not entry.gone and not entry.modules else FixAvailability.SOMETIMES
        )
    namespace = {
        "code": entry.code,
        "name": entry.name,
        "summary": entry.summary,
        "since": entry.since,
        "until": entry.until,
        "change": entry.change,
        "enabled_by_default": entry.enabled,
        "severity": Severity.WARNING if entry.change is Change.WARNS else Severity.ERROR,
        "fix_availability": availability,
        "looks_for": _words(entry),
        "renames": dict(sorted({**entry.moves, **{old: t.call for old, t in entry.calls.items()}}.items())),
        "docs": RuleDocs(
            what=entry.what,
            why=f"{entry.why}\n\nEvidence: {entry.evidence}",
            fix=entry.fix,
            fix_safety=entry.fix_safety,
            wheels_vs_notes=entry.notes,
        ),
        "examples": entry.examples,
        "entry": entry,
        "__module__": (base or CatalogueRule).__module__,
    }
    cls = type(f"Catalogue{entry.code}", (base or CatalogueRule,), namespace)
    return cls()
