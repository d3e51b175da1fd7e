"""TU201: torch 2.14 changed the gradient of the clamp family where the input equals a bound."""

from __future__ import annotations

import ast

from torchup.context import Context
from torchup.diagnostics import Applicability, Edit, Fix, ImportRequest, Severity
from torchup.inference import Evidence
from torchup.patterns import Edits, bind_call
from torchup.rule import Example, FixAvailability, Rule, RuleDocs
from torchup.rules._arguments import append_argument
from torchup.rules._linalg import method_calls, method_receiver_evidence

FUNCTIONS = frozenset({
    "torch.clamp", "torch.clip", "torch.clamp_min", "torch.clamp_max",
    "torch.clamp_", "torch.clip_", "torch.clamp_min_", "torch.clamp_max_",
})
METHODS = ("clamp", "clamp_", "clip", "clip_", "clamp_min", "clamp_min_", "clamp_max", "clamp_max_")
UNBOUND = frozenset(f"torch.Tensor.{method}" for method in METHODS)
# Only the out-of-place forms with both bounds optional have a drop-in replacement.
FIXABLE_FUNCTIONS = frozenset({"torch.clamp", "torch.clip"})
FIXABLE_METHODS = frozenset({"clamp", "clip"})
COMPAT = "torchup.compat"
LEGACY = 'boundary_grad="legacy"'
CHANGE = "its gradient where the input equals a bound changed in torch 2.14"
HELP = (
    "scalar bounds: gradient 1 -> 0 at x == bound (0 everywhere when min == max); tensor bounds: "
    "0.5 to x and 0.5 to the bound at a tie. `torchup trace -- python your_script.py` shows whether "
    'inputs hit a bound at run time; `torchup.compat.clamp(x, min, max, boundary_grad="legacy")` keeps '
    "2.13's gradient"
)


def compat_reference(ctx: Context, at: ast.AST) -> tuple[str, tuple[ImportRequest, ...]] | None:
    """Text naming ``torchup.compat`` at ``at``, plus ``import torchup.compat`` unless the module
    already imports that submodule (``import torchup`` alone does not load it)."""
    reference = ctx.module_reference(COMPAT, at)
    if reference is None:
        return None
    text, imports = reference
    if imports:  # `torchup` is unbound here: `import torchup.compat` binds it and loads the submodule
        return text, (ImportRequest(COMPAT),)
    module = ctx.resolver.module_scope
    loaded = any(
        b.scope is module
        and (
            (b.target is not None and (b.target == COMPAT or b.target.startswith(COMPAT + ".")))
            or (isinstance(b.node, ast.alias) and (b.node.name == COMPAT or b.node.name.startswith(COMPAT + ".")))
        )
        for b in ctx.resolver.import_bindings
    )
    if loaded:
        return text, ()
    # `import torchup.compat` binds the name `torchup`: only where that cannot shadow anything else.
    if not (ctx.resolver.is_unbound("torchup", module) or ctx.resolver.name_in_scope("torchup", module) == "torchup"):
        return None
    return text, (ImportRequest(COMPAT),)


def _fix(ctx: Context, call: ast.Call, head: Edit, reference: tuple[str, tuple[ImportRequest, ...]],
         released: tuple[int, ...]) -> Fix | None:
    append = append_argument(ctx.source, call, LEGACY)
    if append is None:
        return None
    return Fix(f"use `{reference[0]}.clamp(..., {LEGACY})` (2.13's gradient)", Applicability.UNSAFE,
               (head, append), reference[1], released)


def function_fix(ctx: Context, call: ast.Call) -> Fix | None:
    """``torch.clamp(x, lo, hi)`` -> ``torchup.compat.clamp(x, lo, hi, boundary_grad="legacy")``."""
    bound = bind_call(call, ["input", "min", "max"], ("out",))
    if bound is None or bound.has_star_args or bound.has_star_kwargs or bound.get("out") is not None:
        return None
    data = bound.get("input")
    if data is None or not data.positional or (bound.get("min") is None and bound.get("max") is None):
        return None  # `input=` has another name in torchup.compat.clamp; no bound at all raises anyway
    reference = compat_reference(ctx, call)
    if reference is None:
        return None
    head = Edits(ctx.source).replace(call.func, f"{reference[0]}.clamp")
    released = (id(call.func),) if isinstance(call.func, ast.Name) else ()
    return _fix(ctx, call, head, reference, released)


def method_fix(ctx: Context, call: ast.Call) -> Fix | None:
    """``x.clamp(lo, hi)`` -> ``torchup.compat.clamp(x, lo, hi, boundary_grad="legacy")``."""
    assert isinstance(call.func, ast.Attribute)
    bound = bind_call(call, ["min", "max"])
    if bound is None or bound.has_star_args or bound.has_star_kwargs or not bound.arguments:
        return None
    _, call_end = ctx.source.node_range(call)
    open_paren = Edits(ctx.source).open_paren_after(call.func, call_end)
    reference = compat_reference(ctx, call)
    receiver = call.func.value
    _, receiver_end = ctx.source.node_range(receiver)
    if open_paren is None or reference is None or "#" in ctx.source.text[receiver_end:open_paren]:
        return None
    receiver_text = ctx.segment(receiver)
    if isinstance(receiver, (ast.Yield, ast.YieldFrom, ast.Starred)):
        receiver_text = f"({receiver_text})"
    separator = "," if ctx.source.text[open_paren:].lstrip(" \t").startswith(("\n", "\r")) else ", "
    head_start, _ = ctx.source.node_range(call.func)
    head = Edit(head_start, open_paren, f"{reference[0]}.clamp({receiver_text}{separator}")
    return _fix(ctx, call, head, reference, ())


class ClampBoundaryGradient(Rule):
    code = "TU201"
    name = "clamp-boundary-gradient"
    summary = "The gradient of `clamp`/`clip`/`clamp_min`/`clamp_max` at their bounds changed in torch 2.14."
    enabled_by_default = False
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    triggers = ("clamp", "clip", "clamp_min", "clamp_max", "clamp_", "clip_", "clamp_min_", "clamp_max_")
    docs = RuleDocs(
        what="""
        Finds calls of `torch.clamp`, `torch.clip`, `torch.clamp_min`, `torch.clamp_max` (and their
        in-place `torch.clamp_` ... forms), of the Tensor methods `clamp`, `clamp_`, `clip`, `clip_`,
        `clamp_min`, `clamp_min_`, `clamp_max`, `clamp_max_`, and of the unbound
        `torch.Tensor.clamp(x, ...)`, through any import form. A method call is not reported when
        its receiver is evidently not a tensor (a literal, a NumPy or SciPy result, a class that is
        not a `torch.Tensor`), nor in a file that never imports torch. References that are not
        calls (`f = torch.clamp`) are not reported. Off by default: most code never feeds a clamp
        an input exactly equal to a bound, and a static check cannot tell.
        """,
        why="""
        torch 2.14 changed the derivative where the input equals a bound, in eager backward,
        compiled code (`torch.compile(backend="aot_eager")`) and forward-mode AD alike. Values are
        unchanged; gradients are not (both wheels, CPU):

            x = torch.tensor([0., .5, 1., 2.], requires_grad=True)
            torch.clamp(x, 0., 1.).sum().backward()
            # 2.13: x.grad == [1., 1., 1., 0.]    2.14: x.grad == [0., 1., 0., 0.]
            torch.clamp(x, 1., 1.)                # min == max: 2.13 [0., 0., 1., 0.], 2.14 all 0

        - Scalar bounds: at `x == min` or `x == max` the gradient goes 1 -> 0; with `min == max`
          it is 0 everywhere.
        - Tensor bounds: at a tie the gradient is split, 0.5 to `x` and 0.5 to the bound, also when
          the bound does not require grad (then half of `x`'s gradient is lost). A 0-dim bound
          broadcast over ties accumulates: three ties give it 1.5.
        - `clamp_min`, `clamp_max`, `clip` and every in-place form change the same way.
        - Unchanged: `F.hardtanh`, `F.relu6`, `F.relu`, `torch.where` formulations,
          `torch.maximum`/`torch.minimum`. `torch.fmax`/`torch.fmin` changed too (TU202).

        Models trained with clipping (ReLU-like activations written as `clamp(min=0)` on inputs
        that are exactly 0, quantisation ranges, probability clipping) may train differently.
        """,
        fix="""
        `torchup trace -- python train.py` runs the program and reports which of these calls
        actually received inputs equal to a bound. Where 2.13's gradient matters, the unsafe fix
        rewrites the out-of-place forms `torch.clamp(x, min, max)`, `torch.clip(...)`,
        `x.clamp(...)` and `x.clip(...)` to `torchup.compat.clamp(x, min, max,
        boundary_grad="legacy")`, keeping the argument texts and `min=`/`max=` keywords as
        written, and adds `import torchup.compat`. `torchup.compat.clamp` computes `torch.clamp`'s
        values with 2.13's gradient. No fix for in-place forms, `clamp_min`/`clamp_max`, `out=`,
        `input=`, `*args`/`**kwargs`, or the unbound `torch.Tensor.clamp(x, ...)`.
        """,
        fix_safety="""
        Unsafe: it makes the program depend on torchup at run time, and it keeps the old gradient,
        which may not be what you want on 2.14; a receiver whose type torchup cannot see may also
        not be a tensor (a NumPy array's `.clip`). The fixed examples are checked by the
        differential tests (2.13 as written vs. 2.14 as fixed, values and gradients bit for bit).
        """,
        wheels_vs_notes="""
        The release notes mention only scalar `clamp` at its boundary (1 -> 0) and the 0.5/0.5
        split for tensor bounds. The wheels also change `min == max` (0 everywhere), `clip`,
        `clamp_min`, `clamp_max` and the in-place forms; the tensor-bound split happens even when
        the bound does not require grad, and 0-dim bounds accumulate the halves.
        """,
    )
    examples = (
        Example(
            "scalar bounds: functions (unsafe fix)",
            """
            import torch
            top = A.detach().max().item()  # the largest entry sits exactly on the bound
            y = torch.clamp(A, min=0.0, max=top)
            z = torch.clip(A, top, top)
            """,
            fixed="""
            import torch
            import torchup.compat
            top = A.detach().max().item()  # the largest entry sits exactly on the bound
            y = torchup.compat.clamp(A, min=0.0, max=top, boundary_grad="legacy")
            z = torchup.compat.clamp(A, top, top, boundary_grad="legacy")
            """,
            findings=2,
            unsafe=True,
        ),
        Example(
            "tensor bounds: a method (unsafe fix)",
            """
            import torch
            lo = torch.zeros_like(A)
            y = A.clamp(lo, A.detach())
            """,
            fixed="""
            import torch
            import torchup.compat
            lo = torch.zeros_like(A)
            y = torchup.compat.clamp(A, lo, A.detach(), boundary_grad="legacy")
            """,
            unsafe=True,
        ),
        Example(
            "a from-import, and a multi-line call",
            """
            from torch import clip
            y = clip(
                A,
                max=A.detach().max().item(),  # upper bound only
            )
            """,
            fixed="""
            import torchup.compat
            y = torchup.compat.clamp(
                A,
                max=A.detach().max().item(), boundary_grad="legacy",  # upper bound only
            )
            """,
            unsafe=True,
        ),
        Example(
            "in-place forms, clamp_min/clamp_max and out=: reported, no fix",
            """
            import torch
            h = A.clone()
            h.clamp_(min=0.0)
            m = torch.clamp_min(A, 0.0)
            n = A.clamp_max(1.0)
            o = torch.empty_like(A)
            torch.clamp(A, 0.0, 1.0, out=o)
            """,
            findings=4,
        ),
        Example(
            "not reported: NumPy, hardtanh, maximum and a local function",
            """
            import numpy as np
            import torch
            import torch.nn.functional as F

            def clamp(v, lo, hi):
                return v

            a = np.clip(np.ones(3), 0, 1)
            b = np.ones(3).clip(0, 1)
            c = F.hardtanh(A, 0.0, 1.0)
            d = torch.maximum(A, torch.zeros_like(A))
            e = clamp(A, 0, 1)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for call, qualname in ctx.calls_to(FUNCTIONS | UNBOUND):
            fix = function_fix(ctx, call) if qualname in FIXABLE_FUNCTIONS else None
            ctx.report(call.func, f"`{qualname}`: {CHANGE}", help=HELP, fix=fix)
        for method in METHODS:
            for call in method_calls(ctx, method):
                evidence = method_receiver_evidence(ctx, call)
                if evidence is Evidence.NOT_TENSOR:
                    continue
                fix = method_fix(ctx, call) if method in FIXABLE_METHODS else None
                kind = "" if evidence is Evidence.TENSOR else " (if the receiver is a tensor)"
                ctx.report(call.func, f"`Tensor.{method}()`: {CHANGE}{kind}", help=HELP, fix=fix)


RULE = ClampBoundaryGradient()
