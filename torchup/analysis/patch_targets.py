"""Mocks and patches of a name a fix rewrites: `mock.patch("torch.cholesky")`, `patch.object(torch,
"cholesky")`, `monkeypatch.setattr(torch, "cholesky", f)`, `getattr(torch, "cholesky")`,
`MagicMock(wraps=torch.cholesky)`.

A test that patches `torch.cholesky` and counts its calls stops seeing them once the library calls
`torch.linalg.cholesky`: the patch is part of the same change. The engine reports each one under
the code of the rule that rewrites the name (``Rule.renames``: functions and classes alike), with a
fix that names the new one; torchup.analysis.project then applies the calls' fixes and the
patches' together, or neither.

Where the new name is called with other arguments than the old (TU602: `torch.cuda.amp.autocast(...)`
becomes `torch.amp.autocast("cuda", ...)`), a mock moved with the calls records other calls and a
fake receives arguments it was not written for: the rule reports its patch targets itself, first,
with ``other_arguments`` saying why; their fixes are then unsafe, which makes the whole group unsafe
(so the safe fix changes neither the calls nor the mocks), and a read by name (`getattr`), whose
caller passes the old arguments, gets no fix at all.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from torchup.analysis.context import Context
from torchup.core.diagnostics import Applicability, Edit, Fix, ImportRequest

# Callees that take a dotted path as their first argument (or `target=`).
_BY_PATH = frozenset({"patch", "setattr", "delattr"})
# Callees that take an object and an attribute's name: `patch.object`, `setattr`, `monkeypatch.setattr`.
_BY_OBJECT = frozenset({"object", "setattr", "getattr", "delattr"})
# Keywords whose value a mock calls in place of the patched function.
_STAND_INS = frozenset({"wraps", "side_effect", "new"})
_VERBS = {"patch": "patches", "object": "patches", "setattr": "replaces", "delattr": "deletes", "getattr": "reads"}
_STRING_PREFIXES = ("", "r", "R", "u", "U")
_REEXPORTS = "`__all__` re-exports"


@dataclass(frozen=True)
class PatchTarget:
    """One place that names a renamed function for a mock: the node to report, the old and new
    names, how it names it, and the edits that name the new one (None: no exact rewrite here)."""

    node: ast.expr
    old: str
    new: str
    verb: str
    edits: tuple[Edit, ...] | None
    imports: tuple[ImportRequest, ...] = ()
    released: tuple[int, ...] = ()


def report_patch_targets(ctx: Context, renames: dict[str, str], other_arguments: str | None = None) -> None:
    """Report every patch target of ``renames`` in the file, under ``ctx.rule``'s code. A finding
    the rule made at the same place (a reference it could not fix: `wraps=torch.cholesky`) takes
    the fix instead of a second finding; one already reported as a patch target keeps its own.
    ``other_arguments``: why the new names are called with other arguments than the old (see the
    module's docstring); None where the calls keep theirs."""
    assert ctx.rule is not None
    for target in _targets(ctx, renames):
        fix = _fix(target, other_arguments)
        start, end = ctx.source.node_range(target.node)
        existing = next((d for d in ctx.diagnostics if d.code == ctx.rule.code and (d.start, d.end) == (start, end)),
                        None)
        # (a finding whose fix the rule made and that renames nothing, `isinstance(s, torch.amp.GradScaler)`,
        # is no patch: it keeps its fix, whatever the calls do)
        if existing is not None and existing.patches is None and (existing.fix is None or existing.fix.replaces):
            existing.patches = target.old
            if existing.fix is None and fix is not None:
                existing.fix, existing.help = fix, None
        if existing is not None:
            continue
        if target.verb == _REEXPORTS:
            message = (f"{_REEXPORTS} `{target.old}` by name: code that imports or patches it through this module "
                       f"keeps the old function while the module's own calls become `{target.new}`")
            help = f"export `{target.new}` under its own name and move the users to it (its arguments differ)"
        else:
            message = (f"{target.verb} `{target.old}`, whose calls torchup rewrites to `{target.new}`: after that "
                       "fix this would no longer reach them")
            help = f"make it name `{target.new}` when the calls change (no exact rewrite here)"
        if other_arguments is not None:
            message += f" ({other_arguments})"
        ctx.report(target.node, message, help=None if fix else help, fix=fix, patches=target.old)


def _fix(target: PatchTarget, other_arguments: str | None) -> Fix | None:
    """The fix that names the new name; unsafe where its calls take other arguments, and none for a
    read by name then (its caller, which torchup does not follow, passes the old ones)."""
    if target.edits is None or (other_arguments is not None and target.verb == _VERBS["getattr"]):
        return None
    applicability = Applicability.SAFE if other_arguments is None else Applicability.UNSAFE
    return Fix(f"name `{target.new}` instead", applicability, target.edits, target.imports, target.released,
               replaces=target.old)


def _targets(ctx: Context, renames: dict[str, str]) -> list[PatchTarget]:
    """The patch targets, and in a file that has one, the other references to a patched function
    that are not calls: `real = torch.cholesky` saved before patching, for the fake to call."""
    found = [*_patches(ctx, renames), *_reexports(ctx, renames)]
    patched = {target.old for target in found}
    taken = {id(target.node) for target in found}
    for node, _, call in ctx.references_to(frozenset(patched)) if patched else ():
        if call is None and id(node) not in taken:
            target = _stand_in(ctx, node, renames, "")
            if target is not None:
                found.append(target)
    return found


def _patches(ctx: Context, renames: dict[str, str]) -> Iterator[PatchTarget]:
    for call in ctx.resolver.calls:
        callee = _callee_name(call.func)
        if callee in _BY_PATH:
            found = _by_path(ctx, call, renames, callee)
            if found is not None:
                yield found
        if callee in _BY_OBJECT and (callee != "object" or _is_patch(call.func)):
            found = _by_object(ctx, call, renames, callee)
            if found is not None:
                yield found
        for keyword in call.keywords:
            if keyword.arg in _STAND_INS:
                found = _stand_in(ctx, keyword.value, renames, keyword.arg)
                if found is not None:
                    yield found


def _reexports(ctx: Context, renames: dict[str, str]) -> Iterator[PatchTarget]:
    """`__all__ = ["cholesky"]` beside `from torch import cholesky`: the module hands the old function
    on by name (to `from pkg import cholesky`, or to `mock.patch("pkg.mod.cholesky")`, which its own
    calls went through). No rewrite keeps both sides: the new function takes other arguments."""
    module = ctx.resolver.module_scope
    exported: dict[str, str] = {}
    for name, bindings in module.bindings.items():
        targets = {binding.target for binding in bindings if binding.is_import}
        if len(targets) == 1 and (target := targets.pop()) in renames:
            exported[name] = target
    if not exported:
        return
    for binding in module.bindings.get("__all__", ()):
        for node in ast.walk(binding.statement) if binding.statement is not None else ():
            name = _string(node) if isinstance(node, ast.expr) else None
            if name in exported:
                old = exported[name]
                yield PatchTarget(node, old, renames[old], _REEXPORTS, None)


def _callee_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _is_patch(func: ast.expr) -> bool:
    """`patch.object` / `mock.patch.object` / `mocker.patch.object`."""
    return isinstance(func, ast.Attribute) and _callee_name(func.value) == "patch"


def _string(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _renamed(path: str, renames: dict[str, str]) -> tuple[str, str] | None:
    """The renamed function a dotted path names (`pkg.mod.torch.cholesky` reaches `torch` too)."""
    for old, new in renames.items():
        if path == old or path.endswith("." + old):
            return old, new
    return None


def _string_edit(ctx: Context, node: ast.expr, value: str) -> Edit | None:
    """An edit that makes the plain string literal ``node`` hold ``value``; None for any other
    spelling (escapes, implicit concatenation, an f-string), which no edit should guess at."""
    text = ctx.segment(node)
    old = _string(node)
    if old is None:
        return None
    for prefix in _STRING_PREFIXES:
        for quote in ('"', "'"):
            if text == f"{prefix}{quote}{old}{quote}":
                start, end = ctx.source.node_range(node)
                return Edit(start + len(prefix) + 1, end - 1, value)
    return None


def _by_path(ctx: Context, call: ast.Call, renames: dict[str, str], callee: str) -> PatchTarget | None:
    argument = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "target"), None)
    path = _string(argument)
    renamed = _renamed(path, renames) if path is not None else None
    if argument is None or path is None or renamed is None:
        return None
    old, new = renamed
    edit = _string_edit(ctx, argument, path[: len(path) - len(old)] + new)
    return PatchTarget(argument, old, new, _VERBS[callee], None if edit is None else (edit,))


def _by_object(ctx: Context, call: ast.Call, renames: dict[str, str], callee: str) -> PatchTarget | None:
    if len(call.args) < 2:
        return None
    owner, attribute = call.args[0], call.args[1]
    module, name = ctx.qualified_name(owner), _string(attribute)
    if module is None or name is None or f"{module}.{name}" not in renames:
        return None
    old = f"{module}.{name}"
    new = renames[old]
    new_module, _, new_name = new.rpartition(".")
    edits: list[Edit] = []
    imports: tuple[ImportRequest, ...] = ()
    if new_module != module:
        reference = ctx.module_reference(new_module, call)
        if reference is None:
            return PatchTarget(attribute, old, new, _VERBS[callee], None)
        start, end = ctx.source.node_range(owner)
        edits.append(Edit(start, end, reference[0]))
        imports = reference[1]
    if new_name != name:
        edit = _string_edit(ctx, attribute, new_name)
        if edit is None:
            return PatchTarget(attribute, old, new, _VERBS[callee], None)
        edits.append(edit)
    return PatchTarget(attribute, old, new, _VERBS[callee], tuple(edits), imports)


def _stand_in(ctx: Context, value: ast.expr, renames: dict[str, str], keyword: str) -> PatchTarget | None:
    if not isinstance(value, (ast.Name, ast.Attribute)):
        return None
    old = ctx.qualified_name(value)
    if old not in renames:
        return None
    new = renames[old]
    verb = f"`{keyword}=` names" if keyword else "saves or passes"
    module, _, name = new.rpartition(".")
    reference = ctx.module_reference(module, value)
    if reference is None:
        return PatchTarget(value, old, new, verb, None)
    start, end = ctx.source.node_range(value)
    released = (id(value),) if isinstance(value, ast.Name) else ()
    return PatchTarget(value, old, new, verb, (Edit(start, end, f"{reference[0]}.{name}"),), reference[1], released)
