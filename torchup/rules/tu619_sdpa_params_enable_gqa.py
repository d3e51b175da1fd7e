"""TU619: ``SDPAParams(query, key, value, mask, dropout, is_causal)``: since torch 2.5 the constructor
takes a seventh argument, ``enable_gqa``, and the six-argument call raises TypeError."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix
from torchup.prefilter.requirements import TextPattern
from torchup.rules._arguments import append_argument
from torchup.rules.tu601_torch_load_weights_only import uses

if TYPE_CHECKING:
    from torchup.core.lexing import Spans

# The one class under its public names (torch.backends.cuda's and torch.nn.attention's) and its own.
SDPA_PARAMS = frozenset({"torch.backends.cuda.SDPAParams", "torch.nn.attention.SDPAParams", "torch._C._SDPAParams"})
OLD_ARITY = 6  # query, key, value, attn_mask, dropout, is_causal (positional only, torch 2.1-2.4)
# A finding is a call (or a partial): torch's own sources import and re-export the class in more files.
_CALLED = TextPattern(r"SDPAParams\s*[(,]")


class SDPAParamsEnableGQA(Rule):
    code = "TU619"
    name = "sdpa-params-enable-gqa"
    summary = "`SDPAParams(q, k, v, mask, dropout, is_causal)` raises TypeError since torch 2.5: add `enable_gqa`."
    since = "2.5"
    change = Change.RAISES
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(names=tuple(sorted(SDPA_PARAMS)))
    docs = RuleDocs(
        what="""
        Finds calls of `torch.backends.cuda.SDPAParams` (also `torch.nn.attention.SDPAParams`, the
        same class, any import form) with the six positional arguments of torch 2.4 and older:
        `query, key, value, attn_mask, dropout, is_causal`. Such calls build the parameters that
        `can_use_flash_attention(params)` and `can_use_efficient_attention(params)` judge, mostly
        in tests and in code that picks an attention kernel.
        """,
        why="""
        torch 2.5 added grouped-query attention to scaled dot-product attention, and the
        parameters' constructor got a seventh positional argument, `enable_gqa`, with no default
        (it is a pybind11 constructor: positional only). The six-argument call fails in every
        release since:

            TypeError: __init__(): incompatible constructor arguments. The following argument
            types are supported: 1. torch._C._SDPAParams(arg0: Tensor, ..., arg5: bool, arg6: bool)
        """,
        fix="""
        Append `False` for `enable_gqa`. A call with `*args` is not reported (what it passes is
        unknown). Code that must still run on torch 2.4 has to pass six or seven arguments by the
        release (`hasattr(params, "enable_gqa")` after a try, as some projects do).
        """,
        fix_safety="""
        Safe: before 2.5 no kernel did grouped-query attention, so `enable_gqa=False` asks for what
        the old call meant (key and value with as many heads as the query). Proven by running the
        original under torch 2.4.1 and the fix under 2.14.1 (docs/proofs.md).
        """,
    )
    examples = (
        Example(
            "the parameters a kernel check takes",
            """
            import torch
            from torch.backends.cuda import SDPAParams

            q = torch.zeros(1, 2, 4, 8)
            params = SDPAParams(q, q, q, None, 0.0, True)
            causal, dropout = params.is_causal, params.dropout
            """,
            fixed="""
            import torch
            from torch.backends.cuda import SDPAParams

            q = torch.zeros(1, 2, 4, 8)
            params = SDPAParams(q, q, q, None, 0.0, True, False)
            causal, dropout = params.is_causal, params.dropout
            """,
            versions=("2.4", "2.14"),
        ),
        Example(
            "not reported: seven arguments, and unknown ones",
            """
            import torch

            q = torch.zeros(1, 2, 4, 8)
            params = torch.backends.cuda.SDPAParams(q, q, q, None, 0.0, True, False)
            arguments = (q, q, q, None, 0.0, False)
            more = torch.backends.cuda.SDPAParams(*arguments)
            """,
            findings=0,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        return _CALLED.found_in(spans.text) and super().may_report(spans)

    def check(self, ctx: Context) -> None:
        for use in uses(ctx, SDPA_PARAMS):
            call = use.call
            if call is None or use.skip or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
                continue
            if len(call.args) != OLD_ARITY:
                continue
            edit = append_argument(ctx.source, call, "False")
            ctx.report(
                use.node,
                "`SDPAParams` with six arguments raises TypeError since torch 2.5: the constructor takes "
                "`enable_gqa` seventh",
                # (a seventh argument by position: what the engine cannot read off the edit)
                fix=Fix("append `False` (no grouped-query attention, as before 2.5)", Applicability.SAFE,
                        (edit,), requires=("torch.backends.cuda.SDPAParams(enable_gqa=)",))
                if edit is not None else None,
            )


RULE = SDPAParamsEnableGQA()
