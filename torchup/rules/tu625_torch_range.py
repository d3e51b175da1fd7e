"""TU625: `torch.range` warns; `torch.arange` with the end moved one step on gives the same tensor.

The entry's facts, docs and examples are in torchup/data/catalogue.toml (`rule_module` names this
module); the fix is written here, because its end is computed, not templated.
"""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, has_comment
from torchup.analysis.rule import FixAvailability
from torchup.core.diagnostics import Applicability, Fix
from torchup.rules._catalogue import CatalogueRule, base_names, entry_by_code, reference_for_new_name, rule_for

OLD, NEW = "torch.range", "torch.arange"
# torch.range(start, end, step=1, *, out=None, dtype=None, layout=..., device=None, requires_grad=False):
# the keywords other than the three bounds mean the same to arange.
BOUNDS = ("start", "end", "step")
KEYWORDS = frozenset({"out", "dtype", "layout", "device", "requires_grad"})


class TorchRange(CatalogueRule):
    def _reference_fix(
        self, ctx: Context, node: ast.expr, qualname: str, call: ast.Call | None, import_fixes: dict[int, Fix | None]
    ) -> Fix | None:
        if qualname != OLD or call is None or call.func is not node:
            return None
        bounds = _bounds(call)
        if bounds is None or has_comment(ctx.source, *ctx.source.node_range(call)):
            return None  # (a comment in the call: the rewrite would drop it)
        start, end, step = bounds
        arange = reference_for_new_name(ctx, NEW, node, OLD)
        torch = ctx.module_reference("torch", call)
        exclusive = _exclusive_end(ctx, start, end, step)
        if arange is None or torch is None or exclusive is None:
            return None
        end_text, exact = exclusive
        arguments = [ctx.segment(start), end_text] + ([ctx.segment(step)] if step is not None else [])
        arguments += [f"{k.arg}={ctx.segment(k.value)}" for k in call.keywords if k.arg not in BOUNDS]
        if not any(k.arg == "dtype" for k in call.keywords):
            arguments.append(f"dtype={torch[0]}.get_default_dtype()")  # (range's; arange's follows the bounds)
        text = f"{arange[0]}({', '.join(arguments)})"
        return Fix(
            f"use `{text}`" if len(text) < 80 else "use `torch.arange` with the end one step on",
            Applicability.SAFE if exact else Applicability.UNSAFE,
            (Edits(ctx.source).replace(call, text),),
            (*arange[1], *torch[1]),
            base_names(node),
            replaces=OLD,
        )


def _bounds(call: ast.Call) -> tuple[ast.expr, ast.expr, ast.expr | None] | None:
    """(start, end, step or None) of a call whose arguments are all written out, else None."""
    if len(call.args) > 3 or any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    given: dict[str, ast.expr] = dict(zip(BOUNDS, call.args, strict=False))
    for keyword in call.keywords:
        if keyword.arg in BOUNDS and keyword.arg not in given:
            given[keyword.arg] = keyword.value
        elif keyword.arg not in KEYWORDS:
            return None  # (`**options`, a repeated bound, or a keyword torchup does not know)
    if "start" not in given or "end" not in given:
        return None  # (`torch.range(5)` raises TypeError)
    return given["start"], given["end"], given.get("step")


def _exclusive_end(ctx: Context, start: ast.expr, end: ast.expr, step: ast.expr | None) -> tuple[str, bool] | None:
    """arange's end for range's inclusive one, and whether the two give the same tensor surely:

    - integer literals: the first value past the last one range gives, `start + n * step` for its
      `n = (end - start) // step + 1` values (exact: the same values, and `dtype=` keeps the dtype);
    - `end` written `x - 1` with a step of 1: `x`, the same count only when `x` is an integer."""
    first, last = _integer(start), _integer(end)
    stride = 1 if step is None else _integer(step)
    if stride is None or stride == 0 or first is None:
        return None
    if last is not None:
        if (last - first) * stride < 0:
            return None  # (range raises for bounds that disagree with the step's sign)
        count = (last - first) // stride + 1
        return str(first + count * stride), True
    if stride == 1 and isinstance(end, ast.BinOp) and isinstance(end.op, ast.Sub) and _integer(end.right) == 1:
        return ctx.segment(end.left), False
    return None


def _integer(node: ast.expr) -> int | None:
    """An integer literal's value (`3`, `-2`), else None (a bool, a float, a name)."""
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    value = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd) else node
    if isinstance(value, ast.Constant) and type(value.value) is int:
        return -value.value if negative else value.value
    return None


RULE = rule_for(entry_by_code("TU625"), TorchRange, FixAvailability.SOMETIMES)
