"""Shared by the numerics rules (TU711-TU713: TorchFix's TOR106-TOR108): a call of one torch
function on `1 + x`, `torch.exp(x) - 1` or a log of a sum of exps, written with the function made
for it."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from torchup.analysis.context import Context
from torchup.analysis.inference import Evidence, tensor_evidence
from torchup.analysis.patterns import has_comment
from torchup.analysis.rule import Change, FixAvailability, Rule
from torchup.core.diagnostics import Applicability, Edit, Fix, Severity
from torchup.prefilter.calls import call_arguments

if TYPE_CHECKING:
    from torchup.core.lexing import Spans


class NumericsHint(Rule):
    """What the numerics rules share: hints (off by default, unlike TorchFix's TOR106/TOR107:
    `--select TU711` or `TOR106`), for functions every release torchup knows has."""

    change = Change.ADOPT
    since = None
    enabled_by_default = False
    severity = Severity.INFO
    fix_availability = FixAvailability.SOMETIMES


# The literal 1 as the text spells it (`1`, `1.`, `1.0`), and a word called in a text.
_ONE = re.compile(r"(?<![\w.])1(?:\.0*)?(?![\w.])")


def some_call(spans: Spans[str] | Spans[bytes], word: str, holds: Callable[[str, int, int], bool]) -> bool:
    """Does a call of ``word`` in the text have arguments (text, start, end) for which ``holds``,
    or one that cannot be read to its end? What ``may_report`` of these rules asks: the shape they
    rewrite is rare, and the words (`log`, `exp`, `sum`) are in most files that import torch."""
    return any(found is None or holds(*found) for found in call_arguments(spans, word))


def spells_one(text: str, start: int, end: int) -> bool:
    return _ONE.search(text, start, end) is not None


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
    if has_comment(ctx.source, start, end):
        return None  # (the rewrite would drop it: reported without a fix)
    text = f"{module}.{function}({', '.join([ctx.segment(operand), *more])})"
    evident = tensor_evidence(ctx, operand) is Evidence.TENSOR
    applicability = Applicability.SAFE if evident else Applicability.UNSAFE
    return Fix(f"use `{text}`", applicability, (Edit(start, end, text),), imports)
