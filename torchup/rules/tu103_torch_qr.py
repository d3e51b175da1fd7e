"""TU103: ``torch.qr`` raises in torch 2.14; ``torch.linalg.qr`` with ``mode=`` replaces it exactly."""

from __future__ import annotations

import ast
from typing import ClassVar

from torchup.analysis.context import Context
from torchup.analysis.patterns import BoundCall, Edits, as_condition, literal_bool
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability
from torchup.rules._linalg import (
    NO_EXACT_FIX,
    ArgumentEdits,
    Signature,
    function_call_fix,
    keyword_or_positional_replace,
    removed_error,
    report_imports,
    report_reference,
)

SIGNATURE = Signature(("input", "some"), ("out",))


def qr_arguments(ctx: Context, bound: BoundCall) -> ArgumentEdits | None:
    """``some`` (bool) becomes ``mode`` (str); the input keyword is ``A`` in ``torch.linalg.qr``."""
    edits = Edits(ctx.source)
    result = ArgumentEdits([])
    source_input = bound.get("input")
    if source_input is not None and source_input.keyword is not None:
        result.edits.append(edits.rename_keyword(source_input.keyword, "A"))
    some = bound.get("some")
    if some is None:
        return result
    if isinstance(some.value, ast.Constant) and not isinstance(some.value.value, bool):
        return None  # `some=None` or `some=1` raised TypeError in 2.13: nothing exact to keep
    value = literal_bool(some.value)
    q = ctx.quote(bound.call)
    if value is True:  # the default of torch.linalg.qr: drop the argument
        node = some.keyword if some.keyword is not None else some.value
        removal = edits.remove_argument(bound.call, node)
        if removal is None:
            return None
        result.edits.append(removal)
        result.removed += 1
    elif value is False:
        result.edits.append(keyword_or_positional_replace(ctx, bound, "some", f"mode={q}complete{q}"))
    else:
        condition = as_condition(ctx.source, some.value)
        result.edits.append(
            keyword_or_positional_replace(
                ctx, bound, "some", f"mode={q}reduced{q} if {condition} else {q}complete{q}"
            )
        )
    return result


class TorchQr(Rule):
    code = "TU103"
    name = "torch-qr-removed"
    summary = "`torch.qr` raises in torch 2.14; use `torch.linalg.qr` with `mode=`."
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(names=("torch.qr",))
    renames: ClassVar[dict[str, str]] = {"torch.qr": "torch.linalg.qr"}
    docs = RuleDocs(
        what="Finds calls of and references to `torch.qr`, through any import form.",
        why=f"""
        torch 2.14 keeps `torch.qr` only as a stub that raises:

            {removed_error()} `torch.qr` is deprecated in favor of `torch.linalg.qr` and the
            boolean parameter `some` has been replaced with a string parameter `mode`.
        """,
        fix="""
        `torch.qr(A)` and `torch.qr(A, some=True)` become `torch.linalg.qr(A)`;
        `some=False` becomes `mode="complete"`; any other expression `s` becomes
        `mode="reduced" if s else "complete"` (evaluated once, as before); `out=` is kept.
        A keyword `input=` is renamed `A=`, the parameter's name in `torch.linalg.qr`.
        """,
        fix_safety="""
        Safe: same kernel, bit-identical Q and R on real, complex, batched, wide, tall and empty
        inputs, and the same named tuple fields (`Q`, `R`), proven by the differential tests.
        Calls with `**kwargs` are reported without a fix (they may hold `some`).
        """,
        wheels_vs_notes="`torch.return_types.qr` is gone in 2.14; the result is now "
        "`torch.return_types.linalg_qr`. Code that checks the type by name must change by hand.",
    )
    examples = (
        Example(
            "reduced (the default)",
            """
            import torch
            Q, R = torch.qr(A)
            """,
            fixed="""
            import torch
            Q, R = torch.linalg.qr(A)
            """,
        ),
        Example(
            "complete, positionally and by keyword",
            """
            import torch
            Q1, R1 = torch.qr(A, False)
            Q2, R2 = torch.qr(A, some=False)
            """,
            fixed="""
            import torch
            Q1, R1 = torch.linalg.qr(A, mode="complete")
            Q2, R2 = torch.linalg.qr(A, mode="complete")
            """,
            findings=2,
        ),
        Example(
            "a flag decided at run time",
            """
            from torch import qr
            reduced = A.shape[-2] > 2
            Q, R = qr(A, some=reduced)
            """,
            fixed="""
            import torch
            reduced = A.shape[-2] > 2
            Q, R = torch.linalg.qr(A, mode="reduced" if reduced else "complete")
            """,
            findings=2,  # the import line too (TorchFix's TOR103): the call's fix drops it
        ),
        Example(
            "some=True is dropped",
            """
            import torch as th
            Q, R = th.qr(input=A, some=True)
            """,
            fixed="""
            import torch as th
            Q, R = th.linalg.qr(A=A)
            """,
        ),
        Example(
            "references, and numpy's qr",
            """
            import numpy as np
            import torch
            decompositions = [torch.qr, torch.linalg.svd]
            Q, R = np.linalg.qr(np.eye(3))
            """,
        ),
    )

    def check(self, ctx: Context) -> None:
        report_imports(ctx, frozenset({"torch.qr"}))
        for node, qualname, call in ctx.references_to(frozenset({"torch.qr"})):
            if call is None:
                report_reference(ctx, node, qualname)
                continue
            fix = function_call_fix(ctx, call, "torch.linalg.qr", SIGNATURE, qr_arguments, Applicability.SAFE)
            ctx.report(
                node,
                "`torch.qr` is removed in torch 2.14 (it raises RuntimeError)",
                help=None if fix else f'use `torch.linalg.qr(A, mode="reduced" | "complete")`; {NO_EXACT_FIX}',
                fix=fix,
                subject=qualname,
            )


RULE = TorchQr()
