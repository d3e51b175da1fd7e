"""TU713: `torch.log(torch.sum(torch.exp(x), dim))` overflows; `torch.logsumexp(x, dim)` does not
(TorchFix's TOR108)."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from torchup.analysis.context import Context
from torchup.analysis.rule import Example, LooksFor, RuleDocs
from torchup.core.diagnostics import Fix
from torchup.rules._numerics import NumericsHint, rewrite, some_call

if TYPE_CHECKING:
    from torchup.core.lexing import Spans

LOG, SUM, EXP = "torch.log", "torch.sum", "torch.exp"
# torch.sum(input, dim, keepdim=False, *, dtype=None): what logsumexp(input, dim, keepdim=False) also takes
SUM_PARAMETERS = ("input", "dim", "keepdim")
# In a `log(...)` call's arguments: a call of `sum` and, after it, `exp`.
_SUM_OF_EXP = re.compile(r"\bsum\s*\((?s:.)*\bexp\b")


class LogSumExp(NumericsHint):
    code = "TU713"
    name = "log-sum-exp"
    summary = "`torch.log(torch.sum(torch.exp(x), dim))`: `torch.logsumexp(x, dim)` does not overflow."
    looks_for = LooksFor(names=(LOG, SUM, EXP), together=True)
    docs = RuleDocs(
        what="""
        Finds `torch.log(torch.sum(torch.exp(x), dim))`, in any import form, where the sum is over
        given dimensions (`dim` by position or keyword, not `None`; `keepdim` too) and each call
        takes nothing else. TorchFix's TOR108.
        """,
        why="""
        `torch.exp(x)` overflows to `inf` once `x` passes about 88 in float32 (11 in float16), and
        the log of the sum is then `inf` too; `torch.logsumexp` subtracts the largest value first and
        returns the right result (`logsumexp([1000., 1.])` is 1000, the long form `inf`). A sum over
        every dimension (`dim=None`, or none given) is not rewritten: `logsumexp` needs `dim` (and
        `dim=None` does not mean every dimension there, pytorch/pytorch#144339).
        """,
        fix="`torch.log(torch.sum(torch.exp(x), 1, keepdim=True))` -> `torch.logsumexp(x, 1, keepdim=True)`.",
        fix_safety="""
        Safe when `x` is evidently a tensor (both forms take the same dtypes and keep them, integers
        promoted to the default float alike in the 2.13 and 2.14 wheels), unsafe otherwise. The
        results are not bit-identical: they differ in the last bits, and where the long form
        overflowed (`inf`) `logsumexp` gives the finite value (the examples are compared with a
        tolerance).
        """,
    )
    examples = (
        Example(
            "over a dimension, kept",
            """
            import torch
            x = torch.randn(4, 8)
            y = torch.log(torch.sum(torch.exp(x), 1, keepdim=True))
            """,
            fixed="""
            import torch
            x = torch.randn(4, 8)
            y = torch.logsumexp(x, 1, keepdim=True)
            """,
            bit_exact=False,
        ),
        Example(
            "by keyword, through an alias; an expression inside",
            """
            import torch as T
            x = T.randn(4, 8)
            y = T.log(T.sum(T.exp(2.5 + x), dim=-1))
            """,
            fixed="""
            import torch as T
            x = T.randn(4, 8)
            y = T.logsumexp(2.5 + x, dim=-1)
            """,
            bit_exact=False,
        ),
        Example(
            "unknown operand: unsafe",
            """
            import torch
            def scores(logits):
                return torch.log(torch.sum(torch.exp(logits), 0))
            """,
            fixed="""
            import torch
            def scores(logits):
                return torch.logsumexp(logits, 0)
            """,
            unsafe=True,
        ),
        Example(
            "not the same computation",
            """
            import torch
            x = torch.randn(4, 8)
            a = torch.log(torch.sum(torch.exp(x), 1) + 2.5)
            b = torch.log(torch.sum(torch.exp(x) + 2.5, 1))
            c = torch.log(torch.sum(torch.exp(x)))
            d = torch.log(torch.sum(torch.exp(x), None, keepdim=True))
            e = torch.log(torch.sum(torch.exp(x), 1, dtype=torch.float64))
            f = torch.sum(torch.log(torch.exp(x)), 1)
            """,
            findings=0,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        # (a call of `log` whose arguments spell `sum(` and `exp(`)
        return super().may_report(spans) and some_call(
            spans, "log", lambda text, start, end: _SUM_OF_EXP.search(text, start, end) is not None
        )

    def check(self, ctx: Context) -> None:
        for call, _ in ctx.calls_to(frozenset({LOG})):
            if len(call.args) != 1 or call.keywords:
                continue
            inner = call.args[0]
            if not (isinstance(inner, ast.Call) and ctx.qualified_name(inner.func) == SUM):
                continue
            arguments = _sum_arguments(inner)
            if arguments is None:
                continue
            exp = arguments["input"]
            if not (isinstance(exp, ast.Call) and ctx.qualified_name(exp.func) == EXP and len(exp.args) == 1
                    and not exp.keywords and not isinstance(exp.args[0], ast.Starred)):
                continue
            ctx.report(call.func, "`torch.log(torch.sum(torch.exp(x), dim))` overflows where `x` is large: "
                       "`torch.logsumexp(x, dim)` does not", fix=_fix(ctx, call, inner, exp.args[0]))


def _sum_arguments(call: ast.Call) -> dict[str, ast.expr] | None:
    """`torch.sum`'s arguments by name, where they are only `input`, a `dim` that is not None, and
    `keepdim` (nothing starred, no `dtype`)."""
    if len(call.args) > len(SUM_PARAMETERS) or any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    arguments = dict(zip(SUM_PARAMETERS, call.args, strict=False))
    for keyword in call.keywords:
        if keyword.arg not in SUM_PARAMETERS or keyword.arg in arguments:
            return None
        arguments[keyword.arg] = keyword.value
    dim = arguments.get("dim")
    if "input" not in arguments or dim is None or (isinstance(dim, ast.Constant) and dim.value is None):
        return None
    return arguments


def _fix(ctx: Context, log: ast.Call, total: ast.Call, operand: ast.expr) -> Fix | None:
    rest = [ctx.segment(arg) for arg in total.args[1:]]  # (`input` is the first, or a keyword: left out)
    rest += [f"{keyword.arg}={ctx.segment(keyword.value)}" for keyword in total.keywords if keyword.arg != "input"]
    return rewrite(ctx, log, "logsumexp", operand, log, tuple(rest))


RULE = LogSumExp()
