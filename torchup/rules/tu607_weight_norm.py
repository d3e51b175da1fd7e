"""TU607: ``torch.nn.utils.weight_norm`` warns since torch 2.1; the parametrization replaces it."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, bind_call
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Edit, Fix, ImportRequest, Severity
from torchup.rules._arguments import append_argument, from_imports

UTILS = "torch.nn.utils"
OLD_MODULE = "torch.nn.utils.weight_norm"  # the module that defines both (torch.nn.utils re-exports them)
APPLY = frozenset({f"{UTILS}.weight_norm", f"{OLD_MODULE}.weight_norm"})
REMOVE = frozenset({f"{UTILS}.remove_weight_norm", f"{OLD_MODULE}.remove_weight_norm"})
NEW_APPLY = ("torch.nn.utils.parametrizations", "weight_norm")
NEW_REMOVE = ("torch.nn.utils.parametrize", "remove_parametrizations")
WARNING = (
    "FutureWarning: `torch.nn.utils.weight_norm` is deprecated in favor of "
    "`torch.nn.utils.parametrizations.weight_norm`."
)
WHY_UNSAFE = (
    "the module's state_dict keys change (`weight_g` / `weight_v` -> `parametrizations.weight.original0` / "
    "`original1`), `module.weight_g` is gone, and `torch.save(module)` refuses parametrized modules"
)


class WeightNormDeprecated(Rule):
    change = Change.WARNS
    code = "TU607"
    name = "weight-norm-deprecated"
    summary = "`torch.nn.utils.weight_norm` warns since torch 2.1; use `torch.nn.utils.parametrizations.weight_norm`."
    since = "2.1"
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    looks_for = LooksFor(names=tuple(sorted(APPLY | REMOVE)))
    docs = RuleDocs(
        what="""
        Finds references to `torch.nn.utils.weight_norm` and `torch.nn.utils.remove_weight_norm`
        (any import form, also from their module `torch.nn.utils.weight_norm`): calls, and the
        functions passed on. Not reported: `torch.nn.utils.parametrizations.weight_norm` (the
        replacement), `torch.nn.utils.spectral_norm`, and other libraries' `weight_norm`.
        """,
        why=f"""
        torch 2.1 deprecated the hook-based weight norm in favour of the parametrization added
        in the same release (`torch.nn.utils.parametrizations.weight_norm`). Applying it warns
        (`WeightNorm.apply`; a UserWarning in 2.1-2.3, since 2.4 a FutureWarning through
        `@deprecated`, 2.14.1 torch/nn/utils/weight_norm.py:32-36):

            {WARNING}

        2.15.0 still has it, with the same warning. `remove_weight_norm` does not warn itself,
        but it only undoes what the deprecated function did.
        """,
        fix="""
        `weight_norm(module, name, dim)` -> `torch.nn.utils.parametrizations.weight_norm(module,
        name, dim)` (same parameters); `remove_weight_norm(module, name="weight")` ->
        `torch.nn.utils.parametrize.remove_parametrizations(module, name)`, with the name
        `"weight"` written out when the call leaves it to the default (the new function has no
        default) and `name=` spelled `tensor_name=`. A reference that is not a call is reported without a fix.
        """,
        fix_safety=f"""
        Unsafe: the forward results are the same (both compute `torch._weight_norm(v, g, dim)`
        from `g = norm_except_dim(weight, 2, dim)` and `v = weight`; the examples run under 2.13.0
        and, fixed, under 2.14.1 give bit-identical outputs and removed weights), but {WHY_UNSAFE}
        ("Serialization of parametrized modules is only supported through state_dict()"). Old
        checkpoints still load into the fixed model (the parametrization registers a
        `load_state_dict` hook that renames `weight_g` / `weight_v`), but checkpoints the fixed
        code saves no longer load into code using the old function. The weight is also
        recomputed on every access of `module.weight` instead of once per forward (wrap the
        forward in `torch.nn.utils.parametrize.cached()` for the old cost). Fix the
        `weight_norm` and `remove_weight_norm` calls of a module together:
        `remove_parametrizations` raises ValueError on a module the old function set up.
        """,
        wheels_vs_notes="""
        The old function's own docstring says the new one "is compatible with state_dict
        generated from old weight_norm": the 2.14.1 wheel agrees for loading old checkpoints
        into new code (`_weight_norm_compat_hook`), not the other way round. The warning was a
        UserWarning in 2.1 to 2.3 and is a FutureWarning since 2.4.
        """,
    )
    examples = (
        Example(
            "weight norm on a layer, and its removal",
            """
            import torch
            import torch.nn as nn
            layer = nn.utils.weight_norm(nn.Linear(4, 3))
            y = layer(torch.ones(2, 4))
            nn.utils.remove_weight_norm(layer)
            w = layer.weight.detach()
            """,
            fixed="""
            import torch
            import torch.nn as nn
            layer = nn.utils.parametrizations.weight_norm(nn.Linear(4, 3))
            y = layer(torch.ones(2, 4))
            nn.utils.parametrize.remove_parametrizations(layer, "weight")
            w = layer.weight.detach()
            """,
            findings=2,
            unsafe=True,
        ),
        Example(
            "from-imports, a named parameter and dim=None",
            """
            import torch
            from torch.nn.utils import weight_norm, remove_weight_norm
            conv = weight_norm(torch.nn.Conv1d(2, 3, 3), name="weight", dim=None)
            y = conv(torch.arange(12.0).reshape(1, 2, 6))
            remove_weight_norm(conv, "weight")
            """,
            fixed="""
            import torch
            conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 3, 3), name="weight", dim=None)
            y = conv(torch.arange(12.0).reshape(1, 2, 6))
            torch.nn.utils.parametrize.remove_parametrizations(conv, "weight")
            """,
            findings=4,
            unsafe=True,
        ),
        Example(
            "not reported: the parametrization and spectral norm",
            """
            import torch
            from torch.nn.utils.parametrizations import weight_norm
            layer = weight_norm(torch.nn.Linear(4, 3))
            other = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3))
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for alias, qualname in from_imports(ctx.resolver, APPLY | REMOVE):
            ctx.report(
                alias,
                f"`torch.nn.utils.{qualname.rpartition('.')[2]}` (imported) is deprecated in favour of "
                "the parametrization",
                help="torchup fixes the uses (`--unsafe-fixes`); this import goes when none is left",
            )
        for node, qualname, call in ctx.references_to(APPLY | REMOVE):
            removal = qualname in REMOVE
            module, function = NEW_REMOVE if removal else NEW_APPLY
            fix = self._fix(ctx, node, call, removal) if call is not None else None
            old = qualname.rpartition(".")[2]
            ctx.report(
                node,
                f"`torch.nn.utils.{old}` is deprecated in favour of the parametrization "
                + ("(it undoes the deprecated `weight_norm`)" if removal else "(FutureWarning)"),
                help=None if fix else f"use `{module}.{function}`" + ('(module, "weight")' if removal else "")
                + f"; {WHY_UNSAFE}",
                fix=fix,
            )

    def _fix(self, ctx: Context, node: ast.expr, call: ast.Call, removal: bool) -> Fix | None:
        module, function = NEW_REMOVE if removal else NEW_APPLY
        parameters = ["module", "name"] if removal else ["module", "name", "dim"]
        bound = bind_call(call, parameters)
        if bound is None or bound.has_star_args or bound.has_star_kwargs or bound.get("module") is None:
            return None
        callee = _callee(ctx, node, module, function)
        if callee is None:
            return None
        text, imports = callee
        edits: list[Edit] = [Edits(ctx.source).replace(node, text)]
        if removal:
            name = bound.get("name")
            q = ctx.quote(call)
            if name is None:
                added = append_argument(ctx.source, call, f"{q}weight{q}")
                if added is None:
                    return None
                edits.append(added)
            elif not name.positional:
                assert name.keyword is not None
                edits.append(Edits(ctx.source).rename_keyword(name.keyword, "tensor_name"))  # its name there
        released = (id(node),) if isinstance(node, ast.Name) else ()
        return Fix(f"use `{module}.{function}`", Applicability.UNSAFE, tuple(edits), imports, released)


def _callee(ctx: Context, node: ast.expr, module: str, function: str) -> tuple[str, tuple[ImportRequest, ...]] | None:
    """``nn.utils.weight_norm`` -> ``nn.utils.parametrizations.weight_norm`` (the same prefix, when it
    names ``torch.nn.utils``); otherwise the new module as this file can name it."""
    submodule = module.rpartition(".")[2]
    if isinstance(node, ast.Attribute) and ctx.qualified_name(node.value) == UTILS:
        return f"{ctx.segment(node.value)}.{submodule}.{function}", ()
    reference = ctx.module_reference(module, node)
    if reference is None:
        return None
    return f"{reference[0]}.{function}", reference[1]


RULE = WeightNormDeprecated()
