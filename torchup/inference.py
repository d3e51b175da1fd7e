"""Is this expression a torch.Tensor? Only evidence a reader would accept counts.

``TENSOR``: evidently a tensor (a torch factory's result, arithmetic on one, a parameter annotated
``torch.Tensor``); ``NOT_TENSOR``: evidently something else (a literal, a numpy/scipy/sympy/cupy
result, a module); ``UNKNOWN`` otherwise. Rules use it to decide between safe, unsafe and no fix.
"""

from __future__ import annotations

import ast
import enum

from torchup.context import Context
from torchup.facts import FACTS
from torchup.resolver import BindingKind

_NOT_TENSOR_ROOTS = frozenset(FACTS["non_tensor_libraries"])
_TENSOR_FUNCTIONS = frozenset(FACTS["tensor_functions"])
_TENSOR_METHODS = frozenset(FACTS["tensor_methods"])
_TENSOR_ATTRIBUTES = frozenset(FACTS["tensor_attributes"])
_TENSOR_TYPES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_LITERALS = (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.JoinedStr, ast.ListComp, ast.DictComp,
             ast.SetComp, ast.GeneratorExp, ast.Lambda)


class Evidence(enum.Enum):
    TENSOR = "tensor"
    NOT_TENSOR = "not-tensor"
    UNKNOWN = "unknown"


def tensor_evidence(ctx: Context, expr: ast.expr, depth: int = 0) -> Evidence:
    if depth > 8:
        return Evidence.UNKNOWN
    if isinstance(expr, _LITERALS):
        return Evidence.NOT_TENSOR
    if isinstance(expr, ast.Call):
        return _call_evidence(ctx, expr, depth)
    if isinstance(expr, ast.BinOp):
        sides = {tensor_evidence(ctx, expr.left, depth + 1), tensor_evidence(ctx, expr.right, depth + 1)}
        if Evidence.TENSOR in sides:
            return Evidence.TENSOR
        return Evidence.NOT_TENSOR if sides == {Evidence.NOT_TENSOR} else Evidence.UNKNOWN
    if isinstance(expr, ast.UnaryOp) and not isinstance(expr.op, ast.Not):
        return tensor_evidence(ctx, expr.operand, depth + 1)
    if isinstance(expr, ast.Attribute):
        qualname = ctx.qualified_name(expr)
        if qualname is not None:  # a module attribute such as np.linalg: never a tensor itself
            return Evidence.NOT_TENSOR if not qualname.startswith("torch.") else Evidence.UNKNOWN
        if expr.attr in _TENSOR_ATTRIBUTES:
            return tensor_evidence(ctx, expr.value, depth + 1)
        return Evidence.UNKNOWN
    if isinstance(expr, ast.Name):
        return _name_evidence(ctx, expr, depth)
    return Evidence.UNKNOWN


def _root_library(qualname: str) -> str:
    return qualname.split(".", 1)[0]


def _call_evidence(ctx: Context, call: ast.Call, depth: int) -> Evidence:
    qualname = ctx.qualified_name(call.func)
    if qualname is not None:
        if qualname in _TENSOR_FUNCTIONS:
            return Evidence.TENSOR
        if _root_library(qualname) in _NOT_TENSOR_ROOTS:
            return Evidence.NOT_TENSOR
        return Evidence.UNKNOWN
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _TENSOR_METHODS:
        receiver = tensor_evidence(ctx, func.value, depth + 1)
        return Evidence.TENSOR if receiver is Evidence.TENSOR else Evidence.UNKNOWN
    return Evidence.UNKNOWN


def _name_evidence(ctx: Context, name: ast.Name, depth: int) -> Evidence:
    found = ctx.resolver.lookup_name(name)
    if not found.bindings:
        return Evidence.UNKNOWN
    verdicts = set()
    for binding in found.bindings:
        if binding.is_import:
            verdicts.add(Evidence.NOT_TENSOR if binding.target else Evidence.UNKNOWN)
        elif binding.kind is BindingKind.AUGMENTED:
            continue  # `x += 1` keeps what x was
        elif binding.annotation is not None:
            verdicts.add(_annotation_evidence(ctx, binding.annotation))
        elif binding.kind is BindingKind.ASSIGNMENT and binding.value is not None:
            verdicts.add(tensor_evidence(ctx, binding.value, depth + 1))
        elif binding.kind is BindingKind.DEFINITION:
            verdicts.add(Evidence.NOT_TENSOR)
        else:
            verdicts.add(Evidence.UNKNOWN)
    return verdicts.pop() if len(verdicts) == 1 else Evidence.UNKNOWN


def _annotation_evidence(ctx: Context, annotation: ast.expr) -> Evidence:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return Evidence.TENSOR if annotation.value in ("torch.Tensor", "Tensor") else Evidence.UNKNOWN
    qualname = ctx.qualified_name(annotation)
    if qualname in _TENSOR_TYPES:
        return Evidence.TENSOR
    if qualname is not None and _root_library(qualname) in _NOT_TENSOR_ROOTS:
        return Evidence.NOT_TENSOR
    return Evidence.UNKNOWN
