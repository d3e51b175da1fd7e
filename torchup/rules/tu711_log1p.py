"""TU711: `torch.log(1 + x)` loses accuracy near 0; `torch.log1p(x)` does not (TorchFix's TOR106)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torchup.analysis.context import Context
from torchup.analysis.rule import Example, LooksFor, RuleDocs
from torchup.rules._numerics import NumericsHint, is_one, rewrite, some_call, spells_one

if TYPE_CHECKING:
    from torchup.core.lexing import Spans

LOG = frozenset({"torch.log"})


class Log1p(NumericsHint):
    code = "TU711"
    name = "log-of-one-plus"
    summary = "`torch.log(1 + x)`: `torch.log1p(x)` is exact near 0."
    looks_for = LooksFor(names=tuple(LOG))
    docs = RuleDocs(
        what="""
        Finds `torch.log(1 + x)` and `torch.log(x + 1)` (also `1.0`), in any import form, with
        the sum as the only argument. TorchFix's TOR106.
        """,
        why="""
        For `x` much smaller than 1, `1 + x` rounds away most of `x`'s digits before the log
        sees it (in float32, `1 + 1e-8` is `1`, and the log is 0); `torch.log1p(x)` computes
        `log(1 + x)` without forming the sum.
        """,
        fix="`torch.log(1 + x)` -> `torch.log1p(x)`.",
        fix_safety="""
        Safe when `x` is evidently a tensor (the original ran only on one; `log1p` takes the same
        dtypes and promotes integers the same way), unsafe otherwise. The results are not
        bit-identical: they are closer to the exact value, most of all near 0 (the examples are
        compared with a tolerance).
        """,
    )
    examples = (
        Example(
            "a tensor",
            """
            import torch
            x = torch.rand(8) * 1e-3
            y = torch.log(1 + x)
            """,
            fixed="""
            import torch
            x = torch.rand(8) * 1e-3
            y = torch.log1p(x)
            """,
            bit_exact=False,
        ),
        Example(
            "unknown operand: unsafe",
            """
            import torch
            def f(x):
                return torch.log(x + 1.0)
            """,
            fixed="""
            import torch
            def f(x):
                return torch.log1p(x)
            """,
            unsafe=True,
        ),
        Example(
            "other sums and numpy",
            """
            import numpy as np
            import torch
            a = torch.log(2 + torch.ones(2))
            b = np.log(1 + np.ones(2))
            c = torch.log(1 + torch.ones(2), out=torch.empty(2))
            """,
            findings=0,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        # (a call of `log` whose arguments spell `+` and the literal 1)
        return super().may_report(spans) and some_call(
            spans, "log", lambda text, start, end: "+" in text[start:end] and spells_one(text, start, end)
        )

    def check(self, ctx: Context) -> None:
        for call, _ in ctx.calls_to(LOG):
            if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.BinOp):
                continue
            total = call.args[0]
            if not isinstance(total.op, ast.Add):
                continue
            operand = total.right if is_one(total.left) else total.left if is_one(total.right) else None
            if operand is None:
                continue
            ctx.report(call.func, "`torch.log(1 + x)` rounds `x` away near 0: `torch.log1p(x)` does not",
                       fix=rewrite(ctx, call, "log1p", operand, call))


RULE = Log1p()
