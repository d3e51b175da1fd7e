"""Run-time helpers for code that must keep torch 2.13's numerics on torch 2.14 (or get 2.14's on 2.13).

Import it explicitly (``from torchup.compat import clamp``); nothing else in torchup imports this module,
so the linter itself never needs torch. Code that imports it needs torchup installed wherever it runs. With
number bounds torch alone does the same: ``torch.where((x >= min) & (x <= max), x, torch.clamp(x, min,
max).detach())`` has torch.clamp's values and 2.13's gradient (the form TU201's fix prefers).

``clamp`` / ``clip`` compute exactly ``torch.clamp(x, min, max)`` (values, dtype, shape, broadcasting, type
promotion, NaN handling and error messages all come from ``torch.clamp`` itself) and choose the gradient
rule at the bounds with ``boundary_grad``, whichever torch is installed:

``"legacy"`` — torch 2.13's rule:

- Number bounds: ``dx = g`` where ``min <= x <= max`` (bounds included), else 0.
- Tensor bounds, both given: ``dx = g`` where ``min <= x <= max``; ``dmin = g`` where ``x < min`` and
  ``min < max``; ``dmax = g`` where ``x > max`` or ``max < min``. Hence when ``min == max`` the
  elements below the bound send their gradient nowhere, and when ``min > max`` everything goes to ``max``.
- Tensor bound, only one given: ``dx = g`` where ``x >= min`` (``x <= max``), the bound gets the rest
  (``x < min``, ``x > max``).

``"2.14"`` — torch 2.14's rule:

- Number bounds: ``dx = g`` where ``min < x < max`` strictly, else 0 (``min == max`` gives 0 everywhere).
- Tensor bounds, both given, with ``ok = min < max``: ``dx = 0`` where ``x < min`` or ``x > max``,
  ``g / 2`` where ``ok`` and ``x`` equals a bound, else ``g`` (so a NaN ``x`` keeps its gradient);
  ``dmin = g`` where ``x < min`` and ``min <= max``, ``g / 2`` where ``ok`` and ``x == min``;
  ``dmax = g`` where (``x > max`` and ``min <= max``) or ``max < min``, ``g / 2`` where ``ok`` and ``x == max``.
  The halves are split even when the bound does not require grad (that half is then lost).
- Tensor bound, only one given (like ``torch.maximum`` / ``torch.minimum``): ``dx = g / 2`` at a tie,
  0 where ``x < min`` (``x > max``), else ``g``; the bound gets ``g / 2`` at a tie, 0 where ``x > min``
  (``x < max``), else ``g`` — a NaN in ``x`` or in the bound sends the full gradient to both.

"Number bounds" means what ``torch.clamp`` takes as numbers: when one bound is a Python number, the other may
be a 0-dim tensor that does not require grad, and it counts as a number (torch.clamp raises TypeError for any
other tensor next to a number). Gradients of tensor bounds that were broadcast are summed to the bound's shape.
``torch.clip``, ``torch.clamp_min`` / ``clamp_max`` and the Tensor methods (in-place ones included) follow the
same rules, so ``clamp(x, min=t)`` reproduces ``torch.clamp_min(x, t)``.

Forward-mode AD (eager, ``torch.func.jvp`` / ``jacfwd``) follows each version's ``torch.clamp`` too; it is not
the transpose of the backward rule (in 2.13 a tangent below ``min == max`` goes to ``min``; both versions send
``max``'s tangent wherever ``min > max``). One difference remains: in 2.13 ``torch.clamp_min(x, t)`` gives the
tangent at a tie to ``x``, while ``torch.clamp(x, min=t)`` (and this function) gives it to ``t``.
Under ``torch.compile`` only reverse mode is available (Dynamo cannot trace a Function with ``jvp``).
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from torch import Tensor

__all__ = ["BOUNDARY_GRAD_RULES", "BoundaryGrad", "clamp", "clip"]

BoundaryGrad = Literal["legacy", "2.14"]
BOUNDARY_GRAD_RULES: tuple[str, ...] = ("legacy", "2.14")

Bound = Tensor | float | int | bool | None


def _zero(like: Tensor) -> Tensor:
    return torch.zeros((), dtype=like.dtype, device=like.device)


def _reduce(grad: Tensor | None, like: Any) -> Tensor | None:
    """What autograd does to an input's gradient: sum over broadcast dimensions, then cast (in that order)."""
    if grad is None or not isinstance(like, Tensor):
        return None
    if grad.shape != like.shape:
        grad = grad.sum_to_size(like.shape)
    if grad.dtype != like.dtype:
        grad = grad.to(like.dtype)
    return grad


def _inside(x: Tensor, lo: Any, hi: Any, strict: bool) -> Tensor:
    """Where ``x`` lies within number bounds: the closed interval (torch 2.13) or the open one (2.14)."""
    above = None if lo is None else (x > lo if strict else x >= lo)
    below = None if hi is None else (x < hi if strict else x <= hi)
    if above is None or below is None:
        return above if below is None else below
    return above & below


def _backward_legacy(g: Tensor, x: Tensor, lo: Any, hi: Any, tensors: bool) -> tuple[Any, Any, Any]:
    zero = _zero(g)
    if not tensors:
        return torch.where(_inside(x, lo, hi, strict=False), g, zero), None, None
    if lo is not None and hi is not None:
        gx = torch.where((x >= lo) & (x <= hi), g, zero)
        glo = torch.where((x < lo) & (lo < hi), g, zero)
        ghi = torch.where((x > hi) | (hi < lo), g, zero)
        return gx, glo, ghi
    if lo is not None:
        return torch.where(x >= lo, g, zero), torch.where(x < lo, g, zero), None
    return torch.where(x <= hi, g, zero), None, torch.where(x > hi, g, zero)


def _backward_214(g: Tensor, x: Tensor, lo: Any, hi: Any, tensors: bool) -> tuple[Any, Any, Any]:
    zero = _zero(g)
    if not tensors:
        return torch.where(_inside(x, lo, hi, strict=True), g, zero), None, None
    half = g / 2
    if lo is not None and hi is not None:
        ordered = lo < hi
        at_lo = (x == lo) & ordered
        at_hi = (x == hi) & ordered
        gx = torch.where((x < lo) | (x > hi), zero, torch.where(at_lo | at_hi, half, g))
        glo = torch.where((x < lo) & (lo <= hi), g, torch.where(at_lo, half, zero))
        ghi = torch.where(((x > hi) & (lo <= hi)) | (hi < lo), g, torch.where(at_hi, half, zero))
        return gx, glo, ghi
    bound = lo if lo is not None else hi
    split = torch.where(x == bound, half, g)
    below, above = x < bound, x > bound
    gx = torch.where(below if lo is not None else above, zero, split)
    gb = torch.where(above if lo is not None else below, zero, split)
    return (gx, gb, None) if lo is not None else (gx, None, gb)


def _tangent(t: Tensor | None, like: Tensor) -> Tensor:
    return t if t is not None else _zero(like)


def _jvp_legacy(x: Tensor, lo: Any, hi: Any, tensors: bool, xt: Tensor, lot: Tensor, hit: Tensor) -> Tensor:
    zero = _zero(xt)
    if not tensors:
        return torch.where(_inside(x, lo, hi, strict=False), xt, zero)
    if lo is not None and hi is not None:
        return torch.where(lo > hi, hit, torch.where(x < lo, lot, torch.where(x > hi, hit, xt)))
    if lo is not None:
        return torch.where(x > lo, xt, lot)
    return torch.where(x < hi, xt, hit)


def _jvp_214(x: Tensor, lo: Any, hi: Any, tensors: bool, xt: Tensor, lot: Tensor, hit: Tensor) -> Tensor:
    zero = _zero(xt)
    if not tensors:
        return torch.where(_inside(x, lo, hi, strict=True), xt, zero)
    if lo is not None and hi is not None:
        ordered = lo < hi
        inner = torch.where(
            (x == lo) & ordered, (xt + lot) / 2, torch.where((x == hi) & ordered, (xt + hit) / 2, xt)
        )
        return torch.where(lo > hi, hit, torch.where(x < lo, lot, torch.where(x > hi, hit, inner)))
    if lo is not None:
        return torch.where(x > lo, xt, torch.where(x == lo, (xt + lot) / 2, lot))
    return torch.where(x < hi, xt, torch.where(x == hi, (xt + hit) / 2, hit))


class _Clamp(torch.autograd.Function):
    """``torch.clamp`` forward; the backward rule at the bounds of torch 2.13 or 2.14."""

    generate_vmap_rule = True  # torch.func.vmap / jacfwd / hessian: forward and backward are plain torch ops

    @staticmethod
    def forward(x: Tensor, lo: Bound, hi: Bound, legacy: bool, tensors: bool) -> Tensor:
        return torch.clamp(x, lo, hi)  # noqa: TU201 - the reference this module wraps

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Tensor) -> None:
        x, lo, hi, legacy, tensors = inputs
        ctx.legacy = legacy
        ctx.tensors = tensors
        ctx.out_dtype = output.dtype
        ctx.lo_is_tensor = isinstance(lo, Tensor)
        ctx.hi_is_tensor = isinstance(hi, Tensor)
        # Number bounds stay on ctx; tensors are saved (the version counter guards against in-place changes).
        ctx.lo_number = None if ctx.lo_is_tensor else lo
        ctx.hi_number = None if ctx.hi_is_tensor else hi
        ctx.save_for_backward(x, lo if ctx.lo_is_tensor else None, hi if ctx.hi_is_tensor else None)

    @staticmethod
    def _bounds(ctx: Any, saved: tuple[Any, ...]) -> tuple[Tensor, Any, Any]:
        x, lo_t, hi_t = saved
        lo = lo_t if ctx.lo_is_tensor else ctx.lo_number
        hi = hi_t if ctx.hi_is_tensor else ctx.hi_number
        return x, lo, hi

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        x, lo, hi = _Clamp._bounds(ctx, ctx.saved_tensors)
        rule = _backward_legacy if ctx.legacy else _backward_214
        gx, glo, ghi = rule(grad, x, lo, hi, ctx.tensors)
        wants = ctx.needs_input_grad
        return (
            _reduce(gx, x) if wants[0] else None,
            _reduce(glo, lo) if wants[1] else None,
            _reduce(ghi, hi) if wants[2] else None,
            None,
            None,
        )


class _ClampWithJvp(_Clamp):
    """``_Clamp`` plus forward-mode AD, for eager mode (Dynamo cannot trace a Function that defines ``jvp``)."""

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Tensor) -> None:
        _Clamp.setup_context(ctx, inputs, output)
        x, lo, hi = inputs[:3]
        ctx.save_for_forward(x, lo if ctx.lo_is_tensor else None, hi if ctx.hi_is_tensor else None)

    @staticmethod
    def jvp(ctx: Any, xt: Tensor | None, lot: Tensor | None, hit: Tensor | None, *_: Any) -> Tensor:
        x, lo, hi = _Clamp._bounds(ctx, ctx.saved_tensors)
        like = x if xt is None else xt
        rule = _jvp_legacy if ctx.legacy else _jvp_214
        tangents = (_tangent(xt, like), _tangent(lot, like), _tangent(hit, like))
        return rule(x, lo, hi, ctx.tensors, *tangents).to(ctx.out_dtype)


def clamp(x: Tensor, min: Bound = None, max: Bound = None, *, boundary_grad: BoundaryGrad = "legacy") -> Tensor:
    """``torch.clamp(x, min, max)`` with the gradient at the bounds of torch 2.13 (``"legacy"``) or 2.14.

    Args:
        x: the input tensor.
        min: lower bound: a Python number, a 0-dim tensor or a tensor broadcastable with ``x``; or None.
        max: upper bound, likewise. At least one of ``min`` and ``max`` must be given.
        boundary_grad: ``"legacy"`` for torch 2.13's gradient rule (elements on a bound get the full
            gradient), ``"2.14"`` for torch 2.14's (0 with number bounds, split half and half with
            tensor bounds). Either works on either torch version.

    Returns:
        Exactly what ``torch.clamp(x, min, max)`` returns; only the gradients follow ``boundary_grad``.

    Raises:
        ValueError: ``boundary_grad`` is not one of ``"legacy"`` and ``"2.14"``.
        RuntimeError, TypeError: whatever ``torch.clamp`` raises for these arguments (for instance when
            both bounds are None).
    """
    if boundary_grad not in BOUNDARY_GRAD_RULES:
        raise ValueError(
            f"boundary_grad must be 'legacy' (torch 2.13's clamp gradient) or '2.14' (torch 2.14's), "
            f"got {boundary_grad!r}"
        )
    if not isinstance(x, Tensor) or (min is None and max is None):
        return torch.clamp(x, min, max)  # noqa: TU201 - torch's own error for these arguments
    # The overload torch.clamp picks decides the rule: clamp.Tensor when every bound is a tensor (or None); else
    # clamp.Scalar, which takes a 0-dim tensor that does not require grad as a number (any other tensor next to
    # a number is a TypeError, which torch.clamp raises in forward).
    tensors = all(bound is None or isinstance(bound, Tensor) for bound in (min, max))
    function = _Clamp if torch.compiler.is_compiling() else _ClampWithJvp
    return function.apply(x, min, max, boundary_grad == "legacy", tensors)


def clip(x: Tensor, min: Bound = None, max: Bound = None, *, boundary_grad: BoundaryGrad = "legacy") -> Tensor:
    """Alias for :func:`clamp`, as ``torch.clip`` is for ``torch.clamp``."""
    return clamp(x, min, max, boundary_grad=boundary_grad)
