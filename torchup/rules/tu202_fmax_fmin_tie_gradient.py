"""TU202: torch 2.14 changed the gradient of ``torch.fmax`` / ``torch.fmin`` at ties and NaNs."""

from __future__ import annotations

from torchup.analysis.context import Context
from torchup.analysis.receivers import receiver_confidence, receiver_kind
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.rules._linalg import method_calls

METHODS = ("fmax", "fmin")
FUNCTIONS = frozenset({*(f"torch.{m}" for m in METHODS), *(f"torch.Tensor.{m}" for m in METHODS)})
CHANGE = "its gradient changed in torch 2.14 (ties split 0.5/0.5; with a NaN operand 2.14.1 gives both 1)"
HELP = (
    "2.13 gave a tie's whole gradient to the first operand; where that matters, write the selection "
    "explicitly (e.g. with `torch.where`). `torchup trace -- python your_script.py` shows whether ties "
    "or NaNs occur at run time"
)


class FmaxFminTieGradient(Rule):
    change = Change.BEHAVES
    code = "TU202"
    name = "fmax-fmin-tie-gradient"
    summary = "The gradient of `torch.fmax`/`torch.fmin` at ties (and, in 2.14.1, with NaN) changed in torch 2.14."
    enabled_by_default = False
    severity = Severity.WARNING
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(names=tuple(sorted(FUNCTIONS)), methods=METHODS)
    docs = RuleDocs(
        what="""
        Finds calls of `torch.fmax` and `torch.fmin` (any import form, also the unbound
        `torch.Tensor.fmax(a, b)`) and of the Tensor methods `fmax` and `fmin`, except on
        receivers that are evidently not tensors (literals, NumPy or SciPy values) and in files
        that never import torch.
        Off by default: only inputs that tie exactly, or contain NaN, are affected.
        """,
        why="""
        The values are unchanged; the backward is not (both wheels, CPU):

            a = torch.tensor([1., 2., nan], requires_grad=True); b = torch.tensor([1., 1., 1.], requires_grad=True)
            torch.fmax(a, b).sum().backward()
            # 2.13:   a.grad == [1.0, 1.0, 0.0]   b.grad == [0.0, 0.0, 1.0]
            # 2.14.1: a.grad == [0.5, 1.0, 1.0]   b.grad == [0.5, 0.0, 1.0]

        - A tie (`a == b`) now splits the gradient 0.5/0.5, as `torch.maximum`/`torch.minimum`
          already did in 2.13; 2.13 gave it all to the first operand.
        - With a NaN operand, 2.14.1 gives gradient 1 to both operands, although the result is
          the non-NaN one: the NaN operand receives a gradient it did not earn. This is a
          regression, fixed in torch 2.15.0.
        """,
        fix="""
        No automatic fix. If a tie or NaN occurs (`torchup trace` reports it at run time), spell
        out which operand should receive the gradient. 2.13's `torch.fmax(a, b)` is
        `torch.where((a >= b) | b.isnan(), a, b)` and 2.13's `torch.fmin(a, b)` is
        `torch.where((a <= b) | b.isnan(), a, b)`: same values, and under 2.14.1 the same
        gradients as 2.13 gave (ties, one NaN, two NaNs; checked on both wheels).
        """,
        fix_safety="There is no fix: which gradient is right depends on the model.",
        wheels_vs_notes="""
        The release notes do not mention `fmax`/`fmin` at all; the change is in the 2.14 wheels.
        The NaN behaviour of 2.14.1 (gradient 1 to both operands) is a regression; torch 2.15.0
        fixes it (seen in the 2.15.0 sources; no 2.15 wheel is run by torchup's tests).
        """,
    )
    examples = (
        Example(
            "functions, a method and a from-import",
            """
            import torch
            from torch import fmin
            hi = torch.fmax(A, B)
            lo = fmin(A, B)

            def positive(t):
                return t.fmax(torch.zeros_like(t))

            mid = positive(A)
            """,
            findings=3,
        ),
        Example(
            "not reported: NumPy and torch.maximum",
            """
            import numpy as np
            import torch
            a = np.fmax(np.ones(2), np.zeros(2))
            b = torch.maximum(A, B)
            c = np.ones(2).fmax(1.0)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for call, qualname in ctx.calls_to(FUNCTIONS):
            ctx.report(call.func, f"`{qualname}`: {CHANGE}", help=HELP)
        for method in METHODS:
            for call in method_calls(ctx, method):
                confidence = receiver_confidence(ctx, call)
                if confidence is None:
                    continue
                ctx.report(call.func, f"`Tensor.{method}()`: {CHANGE}{receiver_kind(confidence)}", help=HELP,
                           confidence=confidence, receiver_method=method)


RULE = FmaxFminTieGradient()
