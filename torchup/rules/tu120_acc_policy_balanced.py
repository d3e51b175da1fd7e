"""TU120: ``LinearCrossEntropyOptions(acc_policy="balanced")`` is a ValueError in torch 2.14."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, bind_call, literal_dict_keyword
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix

OPTIONS = frozenset({
    "torch.nn.LinearCrossEntropyOptions",
    "torch.nn.modules.LinearCrossEntropyOptions",
    "torch.nn.modules.loss.LinearCrossEntropyOptions",
    "torch.nn.modules.linear_cross_entropy_options.LinearCrossEntropyOptions",
})
REPLACE = frozenset({"dataclasses.replace"})
# Field order of the frozen dataclass (same in 2.13 and 2.14): acc_policy is the fourth.
FIELDS = ["allow_retain_graph", "batch_chunk_size", "chunking_method", "acc_policy", "acc_dtype"]
ERROR = "ValueError: invalid acc_policy: 'balanced'; expected one of 'auto', 'accurate', 'compact'"


def _balanced(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value == "balanced"


def _compact_fix(ctx: Context, literal: ast.expr) -> Fix:
    text = ctx.segment(literal)
    quote = text[-1] if text[-1:] in ("'", '"') else '"'
    prefix = text[: text.index(quote)] if quote in text else ""
    edit = Edits(ctx.source).replace(literal, f"{prefix}{quote}compact{quote}")
    return Fix('use `acc_policy="compact"`', Applicability.UNSAFE, (edit,))


class AccPolicyBalanced(Rule):
    code = "TU120"
    name = "acc-policy-balanced-removed"
    summary = '`LinearCrossEntropyOptions(acc_policy="balanced")` is a ValueError in torch 2.14; use "compact".'
    fix_availability = FixAvailability.UNSAFE
    looks_for = LooksFor(strings=("balanced",))
    docs = RuleDocs(
        what="""
        Finds `acc_policy="balanced"` given to `torch.nn.LinearCrossEntropyOptions` (by keyword,
        as the fourth positional argument, or in a visible `**{"acc_policy": "balanced"}`), and
        `dataclasses.replace(options, acc_policy="balanced")` in files that import torch.
        """,
        why=f"""
        torch 2.14 dropped the policy; constructing the options raises

            {ERROR}
        """,
        fix='`"balanced"` becomes `"compact"`, the replacement the release names.',
        fix_safety="""
        Unsafe. Measured on the wheels (CPU, float32 and bfloat16): the loss and the gradients
        of the input and bias are bit-identical between 2.13 "balanced" and 2.14 "compact", but
        the gradient of the weight is not (up to 5e-7 in float32, 5e-4 in bfloat16 without an
        accumulation dtype): "balanced" accumulated it through a scratch buffer. Training
        results will differ in the last bits.
        """,
        wheels_vs_notes="""
        In the 2.13 wheel "balanced" is bit-identical to "accurate" in every configuration we
        tried, and 2.14 "accurate" still matches it when `batch_chunk_size` is set explicitly;
        with automatic chunking 2.14 "accurate" picks larger chunks (32 rows instead of 16 in
        our test), so no 2.14 policy reproduces "balanced" exactly in every case. The release
        names "compact", and so does the fix; choose "accurate" with an explicit
        `batch_chunk_size` if bit-exact weight gradients matter more than memory.
        """,
    )
    examples = (
        Example(
            "keyword",
            """
            import torch
            import torch.nn.functional as F
            weight = torch.linspace(-1, 1, 5 * A.shape[-1], dtype=A.dtype).reshape(5, -1)
            target = torch.tensor([0, 1, 4, 2, 3][: A.shape[0]])
            options = torch.nn.LinearCrossEntropyOptions(acc_policy="balanced")
            loss = F.linear_cross_entropy(A, weight, target, options=options)
            """,
            fixed="""
            import torch
            import torch.nn.functional as F
            weight = torch.linspace(-1, 1, 5 * A.shape[-1], dtype=A.dtype).reshape(5, -1)
            target = torch.tensor([0, 1, 4, 2, 3][: A.shape[0]])
            options = torch.nn.LinearCrossEntropyOptions(acc_policy="compact")
            loss = F.linear_cross_entropy(A, weight, target, options=options)
            """,
            unsafe=True,
            bit_exact=False,
        ),
        Example(
            "positional, replace() and a dict",
            """
            import dataclasses
            from torch.nn import LinearCrossEntropyOptions
            a = LinearCrossEntropyOptions(False, None, "auto", 'balanced')
            b = dataclasses.replace(a, acc_policy="balanced")
            c = LinearCrossEntropyOptions(**{"acc_policy": "balanced"})
            """,
            findings=3,
            fixed="""
            import dataclasses
            from torch.nn import LinearCrossEntropyOptions
            a = LinearCrossEntropyOptions(False, None, "auto", 'compact')
            b = dataclasses.replace(a, acc_policy="compact")
            c = LinearCrossEntropyOptions(**{"acc_policy": "compact"})
            """,
            unsafe=True,
        ),
        Example(
            "other policies and other balanced things",
            """
            import torch
            options = torch.nn.LinearCrossEntropyOptions(acc_policy="compact")
            sampler = dict(mode="balanced")
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for call, qualname in ctx.calls_to(OPTIONS | REPLACE):
            if qualname in REPLACE and not ctx.resolver.imports_torch:
                continue
            literal = self._balanced_argument(call, qualname)
            if literal is None:
                continue
            ctx.report(
                literal,
                '`acc_policy="balanced"` was removed in torch 2.14 (ValueError)',
                help='use "compact" (the replacement the release names); see `torchup rule TU120` for numerics',
                fix=_compact_fix(ctx, literal),
            )

    @staticmethod
    def _balanced_argument(call: ast.Call, qualname: str) -> ast.expr | None:
        keyword = next((k for k in call.keywords if k.arg == "acc_policy"), None)
        if keyword is not None:
            return keyword.value if _balanced(keyword.value) else None
        spread = literal_dict_keyword(call, "acc_policy")
        if spread is not None:
            return spread[2] if _balanced(spread[2]) else None
        if qualname in OPTIONS:
            bound = bind_call(call, FIELDS)
            argument = bound.get("acc_policy") if bound else None
            if argument is not None and _balanced(argument.value):
                return argument.value
        return None


RULE = AccPolicyBalanced()
