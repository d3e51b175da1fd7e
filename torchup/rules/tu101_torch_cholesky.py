"""TU101: ``torch.cholesky`` raises in torch 2.14; ``torch.linalg.cholesky`` is its exact replacement."""

from __future__ import annotations

from typing import ClassVar

from torchup.analysis.context import Context
from torchup.analysis.patterns import BoundCall, Edits
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability
from torchup.rules._linalg import (
    NO_EXACT_FIX,
    ArgumentEdits,
    Signature,
    function_call_fix,
    removed_error,
    report_imports,
    report_reference,
)

SIGNATURE = Signature(("input", "upper"), ("out",), star_kwargs_ok=True)


def cholesky_arguments(ctx: Context, bound: BoundCall) -> ArgumentEdits:
    """``upper`` is keyword-only in ``torch.linalg.cholesky``: a positional one gets its name."""
    upper = bound.get("upper")
    if upper is not None and upper.positional:
        return ArgumentEdits(Edits(ctx.source).positional_to_keyword(bound.call, upper.value, "upper"))
    return ArgumentEdits([])


class TorchCholesky(Rule):
    code = "TU101"
    name = "torch-cholesky-removed"
    summary = "`torch.cholesky` raises in torch 2.14; use `torch.linalg.cholesky` (same arguments)."
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(names=("torch.cholesky",))
    renames: ClassVar[dict[str, str]] = {"torch.cholesky": "torch.linalg.cholesky"}
    docs = RuleDocs(
        what="Finds calls of and references to `torch.cholesky`, through any import form "
        "(`import torch as th`, `from torch import cholesky as chol`, `from torch import *`).",
        why=f"""
        torch 2.14 keeps `torch.cholesky` only as a stub that raises:

            {removed_error()} `torch.cholesky` is deprecated in favor of `torch.linalg.cholesky`.

        It was deprecated in 1.9 and warned on every call since.
        """,
        fix="""
        `torch.cholesky(A, upper=X, out=O)` becomes `torch.linalg.cholesky(A, upper=X, out=O)`.
        A positional `upper` becomes the keyword (it is keyword-only in `torch.linalg`). A
        `from torch import cholesky` left unused is removed and `import torch` added if needed.
        A reference that is not a call (`functools.partial(torch.cholesky, upper=True)`) is
        reported without a fix: check its arguments by hand.
        """,
        fix_safety="""
        Safe: both functions run the same kernel, and the results are bit-identical on real,
        complex, batched and empty inputs, including `upper=True` on input that is not exactly
        Hermitian (proven by the differential tests: original under 2.13.0, fix under 2.14.1).
        """,
        wheels_vs_notes="""
        The 2.14 error message, TorchFix and PyTorch's own deprecation warning suggest
        `torch.linalg.cholesky(A).mH` for `upper=True`. That reads the other triangle of `A` and
        gives different results when `A` is not exactly Hermitian (e.g. after round-off), so
        torchup keeps `upper=True` instead, which matches 2.13 bit for bit.
        """,
    )
    examples = (
        Example(
            "upper triangle, passed positionally",
            """
            import torch
            U = torch.cholesky(A, True)
            """,
            fixed="""
            import torch
            U = torch.linalg.cholesky(A, upper=True)
            """,
        ),
        Example(
            "alias and out=",
            """
            import torch as th
            L = th.empty_like(A)
            th.cholesky(A, upper=False, out=L)
            """,
            fixed="""
            import torch as th
            L = th.empty_like(A)
            th.linalg.cholesky(A, upper=False, out=L)
            """,
        ),
        Example(
            "from-import: the stale import goes",
            """
            from torch import cholesky, eye
            L = cholesky(A + eye(A.shape[-1]))
            """,
            fixed="""
            from torch import eye
            import torch
            L = torch.linalg.cholesky(A + eye(A.shape[-1]))
            """,
            findings=2,  # the import line too (TorchFix's TOR103): the call's fix drops it
        ),
        Example(
            "a reference, not a call",
            """
            import functools
            import torch
            upper_factor = functools.partial(torch.cholesky, upper=True)
            """,
        ),
        Example(
            "not torch: a local function and other libraries",
            """
            import numpy as np
            import scipy.linalg
            import torch

            def cholesky(m):
                return m

            L1 = cholesky(A)
            L2 = np.linalg.cholesky(np.eye(2))
            L3 = scipy.linalg.cholesky(np.eye(2))
            L4 = torch.linalg.cholesky(A)  # torch.cholesky(A) in a comment
            doc = "torch.cholesky(A)"
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        report_imports(ctx, frozenset({"torch.cholesky"}))
        for node, qualname, call in ctx.references_to(frozenset({"torch.cholesky"})):
            if call is None:
                report_reference(ctx, node, qualname)
                continue
            fix = function_call_fix(
                ctx, call, "torch.linalg.cholesky", SIGNATURE, cholesky_arguments, Applicability.SAFE
            )
            ctx.report(
                node,
                "`torch.cholesky` is removed in torch 2.14 (it raises RuntimeError)",
                help=None if fix else f"use `torch.linalg.cholesky`; {NO_EXACT_FIX}",
                fix=fix,
                subject=qualname,
            )


RULE = TorchCholesky()
