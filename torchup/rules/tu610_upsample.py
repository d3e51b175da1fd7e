"""TU610: ``nn.functional.upsample``, ``upsample_nearest`` and ``upsample_bilinear`` warn; they call ``interpolate``."""

from __future__ import annotations

import ast
from typing import ClassVar

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix, Severity
from torchup.rules._arguments import append_argument, rename_reference

# The modules that define the three functions (the quantized ones as well, and their old location,
# which re-exports them with `from torch.ao.nn.quantized.functional import *`).
MODULES = ("torch.nn.functional", "torch.ao.nn.quantized.functional", "torch.nn.quantized.functional")
# What each one adds to `interpolate(input, size, scale_factor, ...)` in its body: `upsample` passes
# its five parameters on in interpolate's own order, the other two add keywords (torch 1.0.0 to 2.15.0).
ADDED: dict[str, tuple[tuple[str, str], ...]] = {
    "upsample": (),
    "upsample_nearest": (("mode", "nearest"),),
    "upsample_bilinear": (("mode", "bilinear"), ("align_corners", "True")),
}
NAMES = {f"{module}.{function}": function for module in MODULES for function in ADDED}
NEW_NAME = "interpolate"
# Only `upsample` is the same function as `interpolate` under another name: a mock of it can follow.
RENAMES = {name: f"{name.rpartition('.')[0]}.{NEW_NAME}" for name, function in NAMES.items() if function == "upsample"}
WARNING = "UserWarning: `nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead."


def _keywords(ctx: Context, at: ast.AST, function: str) -> str:
    """``mode="nearest"`` (and ``align_corners=True``) in the file's quotes."""
    q = ctx.quote(at)
    return ", ".join(
        f"{name}={q}{value}{q}" if name == "mode" else f"{name}={value}" for name, value in ADDED[function]
    )


class UpsampleDeprecated(Rule):
    change = Change.WARNS
    code = "TU610"
    name = "upsample-deprecated"
    summary = "`F.upsample`, `F.upsample_nearest` and `F.upsample_bilinear` warn; call `F.interpolate` (what they run)."
    since = "1.0"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(names=tuple(sorted(NAMES)))
    renames: ClassVar[dict[str, str]] = RENAMES
    docs = RuleDocs(
        what="""
        Finds references to `torch.nn.functional.upsample`, `upsample_nearest` and
        `upsample_bilinear` (any import form: `F.upsample(...)`, `from torch.nn.functional import
        upsample_nearest`), and to the quantized ones of `torch.ao.nn.quantized.functional` (and
        its old name `torch.nn.quantized.functional`). Not reported: the modules `nn.Upsample`,
        `nn.UpsamplingNearest2d` and `nn.UpsamplingBilinear2d` (their documentation calls the last
        two deprecated, but none of them warns), `interpolate` itself, and functions of other
        libraries or of the project that have the same names.
        """,
        why=f"""
        Each of the three is a wrapper that warns on every call and then calls `interpolate`
        (torch 2.14.1, torch/nn/functional.py:4923-4928, 5399-5404, 5471-5476):

            {WARNING}

        (likewise for `upsample_nearest` and `upsample_bilinear`; a UserWarning, not the
        DeprecationWarning the comments in that file mention, so it is shown by default). The
        quantized module's three warn in the same way ("nn.quantized.functional.upsample is
        deprecated. Use nn.quantized.functional.interpolate instead.").
        """,
        fix="""
        Call `interpolate` of the same module with what the wrapper passes on:
        `upsample(...)` -> `interpolate(...)` (same parameters, same order);
        `upsample_nearest(input, size, scale_factor)` -> `interpolate(input, size, scale_factor,
        mode="nearest")`; `upsample_bilinear(input, size, scale_factor)` -> `interpolate(input, size,
        scale_factor, mode="bilinear", align_corners=True)`. A name from `from ... import upsample`
        becomes `interpolate`, imported from the same module (the old import goes when nothing
        else uses it). A reference to `upsample` that is not called (`partial(F.upsample, ...)`) is
        renamed too; one to `upsample_nearest` or `upsample_bilinear` is reported without a fix.
        """,
        fix_safety="""
        Safe: the fixed call is the wrapper's own body, read in every wheel from 1.0.0 to 2.15.0
        (`return interpolate(input, size, scale_factor, mode, align_corners)`, `return
        interpolate(input, size, scale_factor, mode="nearest")`, `return interpolate(input, size,
        scale_factor, mode="bilinear", align_corners=True)`), so the results are bit-identical
        (the examples run under 2.13.0 and, fixed, under 2.14.1, gradients included). Arguments
        the wrapper would have rejected (`antialias=`, a fourth argument of `upsample_nearest`)
        fail in the fixed call too, or are accepted by `interpolate`; code that ran is unchanged.
        """,
        wheels_vs_notes="""
        The three have warned since before torch 1.0 (`interpolate` came in 0.4.1); 1.0.0 is the
        oldest wheel the package index here serves, and it already has the wrapper bodies above,
        so the rule's release is given as 1.0. They still warn, and still exist, in 2.15.0.
        """,
    )
    examples = (
        Example(
            "all three through F",
            """
            import torch
            import torch.nn.functional as F
            img = A.real.reshape(1, 1, -1, A.shape[-1])
            up = F.upsample(img, scale_factor=2, mode="bilinear", align_corners=False)
            near = F.upsample_nearest(img, scale_factor=2)
            bil = F.upsample_bilinear(img, (5, 7))
            """,
            fixed="""
            import torch
            import torch.nn.functional as F
            img = A.real.reshape(1, 1, -1, A.shape[-1])
            up = F.interpolate(img, scale_factor=2, mode="bilinear", align_corners=False)
            near = F.interpolate(img, scale_factor=2, mode="nearest")
            bil = F.interpolate(img, (5, 7), mode="bilinear", align_corners=True)
            """,
            findings=3,
        ),
        Example(
            "a from-import: the name follows",
            """
            import torch
            from torch.nn.functional import upsample_nearest

            img = A.real.reshape(1, 1, -1, A.shape[-1])
            near = upsample_nearest(img, None, 3)
            """,
            fixed="""
            import torch
            from torch.nn.functional import interpolate

            img = A.real.reshape(1, 1, -1, A.shape[-1])
            near = interpolate(img, None, 3, mode="nearest")
            """,
        ),
        Example(
            "not reported: the modules, interpolate, and a function of the project's",
            """
            import torch
            import torch.nn.functional as F

            def upsample(t, factor):
                return t.repeat_interleave(factor, dim=-1)

            img = A.real.reshape(1, 1, -1, A.shape[-1])
            a = torch.nn.Upsample(scale_factor=2)(img)
            b = torch.nn.UpsamplingNearest2d(scale_factor=2)(img)
            c = F.interpolate(img, scale_factor=2)
            d = upsample(img, 2)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for node, qualname, call in ctx.references_to(frozenset(NAMES)):
            function = NAMES[qualname]
            module = qualname.rpartition(".")[0]
            added = _keywords(ctx, call, function) if call is not None else ""
            fix = self._fix(ctx, node, qualname, call, added)
            if call is None and function != "upsample":
                help_text = f"refer to `{module}.{NEW_NAME}` and pass `{_keywords(ctx, node, function)}`"
            else:
                help_text = f"call `{module}.{NEW_NAME}` instead" + (f" with `{added}`" if added else "")
            ctx.report(
                node,
                f"`{qualname}` is deprecated (it warns on every call, then calls `{NEW_NAME}`)",
                help=None if fix else help_text,
                fix=fix,
                subject=qualname if qualname in RENAMES else None,
            )

    def _fix(self, ctx: Context, node: ast.expr, qualname: str, call: ast.Call | None, added: str) -> Fix | None:
        function = NAMES[qualname]
        if call is None and function != "upsample":
            return None  # a bare reference to upsample_nearest cannot take its keyword along
        renamed = rename_reference(ctx, node, qualname, NEW_NAME)
        if renamed is None:
            return None
        edits = list(renamed.edits)
        if added:
            assert call is not None
            if any(keyword.arg in dict(ADDED[function]) for keyword in call.keywords):
                return None  # the wrapper would have rejected it; a repeated keyword would not compile
            edit = append_argument(ctx.source, call, added)
            if edit is None:
                return None
            edits.append(edit)
        message = f"use `{NEW_NAME}`" + (f" with `{added}`" if added else "")
        return Fix(
            message,
            Applicability.SAFE,
            tuple(edits),
            renamed.imports,
            renamed.released_names,
            replaces=qualname if qualname in RENAMES else None,
        )


RULE = UpsampleDeprecated()
