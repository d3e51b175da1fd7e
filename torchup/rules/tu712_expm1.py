"""TU712: `torch.exp(x) - 1` loses accuracy near 0; `torch.expm1(x)` does not (TorchFix's TOR107)."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from torchup.analysis.context import Context
from torchup.analysis.rule import Example, LooksFor, RuleDocs
from torchup.rules._numerics import NumericsHint, is_one, rewrite, some_call

if TYPE_CHECKING:
    from torchup.core.lexing import Spans

EXP = frozenset({"torch.exp"})
# After an `exp(...)` call: `- 1` (or `- 1.0`), across a backslash continuation or a bracket's lines.
_MINUS_ONE = re.compile(r"\s*(?:\\\n\s*)?-\s*(?:\\\n\s*)?1(?:\.0*)?(?![\w.])")


class Expm1(NumericsHint):
    code = "TU712"
    name = "exp-minus-one"
    summary = "`torch.exp(x) - 1`: `torch.expm1(x)` is exact near 0."
    looks_for = LooksFor(names=tuple(EXP))
    docs = RuleDocs(
        what="""
        Finds `torch.exp(x) - 1` (also `1.0`), in any import form, with `x` the only argument.
        TorchFix's TOR107.
        """,
        why="""
        For `x` near 0, `exp(x)` is close to 1 and the subtraction cancels most of its digits
        (in float32, `torch.exp(1e-8) - 1` is 0); `torch.expm1(x)` computes `exp(x) - 1` directly.
        """,
        fix="`torch.exp(x) - 1` -> `torch.expm1(x)`.",
        fix_safety="""
        Safe when `x` is evidently a tensor, unsafe otherwise. The results are not
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
            y = torch.exp(x) - 1
            """,
            fixed="""
            import torch
            x = torch.rand(8) * 1e-3
            y = torch.expm1(x)
            """,
            bit_exact=False,
        ),
        Example(
            "other differences",
            """
            import torch
            x = torch.rand(8)
            a = torch.exp(x) - 2
            b = 1 - torch.exp(x)
            """,
            findings=0,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        # (a call of `exp` followed by `- 1`, across line breaks too)
        return super().may_report(spans) and some_call(
            spans, "exp", lambda text, start, end: _MINUS_ONE.match(text, end + 1) is not None
        )

    def check(self, ctx: Context) -> None:
        for node in ctx.walk():
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and is_one(node.right)):
                continue
            call = node.left
            if not (isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords):
                continue
            if ctx.qualified_name(call.func) not in EXP:
                continue
            ctx.report(call.func, "`torch.exp(x) - 1` cancels most digits near 0: `torch.expm1(x)` does not",
                       fix=rewrite(ctx, node, "expm1", call.args[0], call))


RULE = Expm1()
