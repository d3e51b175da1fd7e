"""Shared by the numerics rules (TU711-TU713: TorchFix's TOR106-TOR108): a call of one torch
function on `1 + x`, `torch.exp(x) - 1` or a log of a sum of exps, written with the function made
for it."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.inference import Evidence, tensor_evidence
from torchup.analysis.rule import Change, FixAvailability, Rule
from torchup.core.diagnostics import Applicability, Edit, Fix, Severity


class NumericsHint(Rule):
    """What the numerics rules share: hints (off by default, unlike TorchFix's TOR106/TOR107:
    `--select TU711` or `TOR106`), for functions every release torchup knows has."""

    change = Change.ADOPT
    since = None
    enabled_by_default = False
    severity = Severity.INFO
    fix_availability = FixAvailability.SOMETIMES


def is_one(node: ast.expr) -> bool:
    """The literal `1` or `1.0` (not `True`)."""
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 1


def rewrite(
    ctx: Context, replaced: ast.expr, function: str, operand: ast.expr, anchor: ast.AST, more: tuple[str, ...] = ()
) -> Fix | None:
    """``replaced`` -> `torch.<function>(<operand>, *more)`: safe when the operand is evidently a
    tensor (then the original ran only on one), unsafe otherwise; None where `torch` is shadowed."""
    reference = ctx.module_reference("torch", anchor)
    if reference is None:
        return None
    module, imports = reference
    start, end = ctx.source.node_range(replaced)
    text = f"{module}.{function}({', '.join([ctx.segment(operand), *more])})"
    evident = tensor_evidence(ctx, operand) is Evidence.TENSOR
    applicability = Applicability.SAFE if evident else Applicability.UNSAFE
    return Fix(f"use `{text}`", applicability, (Edit(start, end, text),), imports)
