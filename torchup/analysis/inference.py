"""Is this expression a torch.Tensor? Only evidence a reader would accept counts.

``TENSOR``: evidently a tensor (a torch factory's result, arithmetic on one, a parameter annotated
``torch.Tensor``); ``NOT_TENSOR``: evidently something else (a literal, a numpy/scipy/sympy/cupy
result, a module); ``UNKNOWN`` otherwise. Rules use it to decide between safe, unsafe and no fix.
"""

from __future__ import annotations

import ast
import enum

from torchup.analysis.context import Context
from torchup.analysis.flow import reaching_assignment
from torchup.analysis.resolver import Binding, BindingKind, Scope
from torchup.core.facts import FACTS

_NOT_TENSOR_ROOTS = frozenset(FACTS["non_tensor_libraries"])
_TENSOR_FUNCTIONS = frozenset(FACTS["tensor_functions"])
_TENSOR_METHODS = frozenset(FACTS["tensor_methods"])
_TENSOR_ATTRIBUTES = frozenset(FACTS["tensor_attributes"])
# Methods no other library's objects have (`new_empty`, `masked_fill`): a receiver of unknown type
# that has one is a tensor, and so is its result.
_TORCH_ONLY_METHODS = frozenset(FACTS.get("torch_only_methods", ()))
# The tensor fields of the named tuples functions and methods return (`x.qr().Q`, `torch.linalg.eigh(a).eigenvectors`).
_TENSOR_FIELDS: dict[str, frozenset[str]] = {
    name: frozenset(fields) for name, fields in FACTS.get("tensor_fields", {}).items()
}
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
        # A tensor on the left (or a number left of a tensor) makes a tensor: Python asks the left
        # operand first. An unknown object on the left may define its own operator.
        sides = [_operand_evidence(ctx, side, depth) for side in (expr.left, expr.right)]
        if sides[0] is Evidence.TENSOR or (sides[0] is None and sides[1] is Evidence.TENSOR):
            return Evidence.TENSOR
        return Evidence.NOT_TENSOR if all(s is Evidence.NOT_TENSOR for s in sides) else Evidence.UNKNOWN
    if isinstance(expr, ast.UnaryOp) and not isinstance(expr.op, ast.Not):
        return tensor_evidence(ctx, expr.operand, depth + 1)
    if isinstance(expr, ast.Attribute):
        qualname = ctx.qualified_name(expr)
        if qualname is not None:  # a module attribute such as np.linalg: never a tensor itself
            return Evidence.NOT_TENSOR if not qualname.startswith("torch.") else Evidence.UNKNOWN
        if expr.attr in _TENSOR_ATTRIBUTES:
            return tensor_evidence(ctx, expr.value, depth + 1)
        if isinstance(expr.value, ast.Call) and _returns_tensor_fields(ctx, expr.value, depth, expr.attr):
            return Evidence.TENSOR
        return Evidence.UNKNOWN
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Call) and isinstance(expr.slice, ast.Constant) \
            and isinstance(expr.slice.value, int) and _returns_tensor_fields(ctx, expr.value, depth, None):
        return Evidence.TENSOR  # `torch.linalg.qr(a)[0]`
    if isinstance(expr, ast.Name):
        return _name_evidence(ctx, expr, depth)
    return Evidence.UNKNOWN


def bound_nowhere(ctx: Context, expr: ast.expr) -> bool:
    """Is ``expr`` (`tf`, `tf.linalg`) rooted in a name nothing in the file binds, not even a star
    import: a builtin or a NameError, never a tensor? (The rules' examples, run with inputs the
    differential harness supplies, are the exception a rule may choose to allow.)"""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name) and ctx.resolver.is_unbound(expr.id, ctx.resolver.scope_of(expr))


def _returns_tensor_fields(ctx: Context, call: ast.Call, depth: int, field: str | None) -> bool:
    """Does ``call`` return a named tuple of tensors (with ``field`` among them, when given)?"""
    qualname = ctx.qualified_name(call.func)
    if qualname is not None:
        fields = _TENSOR_FIELDS.get(qualname)
    elif isinstance(call.func, ast.Attribute):
        fields = _TENSOR_FIELDS.get(call.func.attr)
        if fields is not None and tensor_evidence(ctx, call.func.value, depth + 1) is not Evidence.TENSOR:
            return False
    else:
        return False
    return fields is not None and (field is None or field in fields)


def _operand_evidence(ctx: Context, node: ast.expr, depth: int) -> Evidence | None:
    """None for a number literal (neutral in arithmetic), else the operand's evidence."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex)):
        return None
    return tensor_evidence(ctx, node, depth + 1)


def class_evidence(ctx: Context, cls: ast.ClassDef, method: str | None = None, depth: int = 0) -> Evidence:
    """Are instances of ``cls`` tensors whose ``method`` is torch's? A class that defines
    ``method`` itself is not a finding (its own method runs), tensor subclass or not."""
    if depth > 8:
        return Evidence.UNKNOWN
    if method is not None and method in _defined_names(cls):
        return Evidence.NOT_TENSOR
    verdicts = set()
    for base in cls.bases:
        qualname = ctx.qualified_name(base)
        local = _local_class(ctx, base) if qualname is None else None
        if qualname in _TENSOR_TYPES:
            return Evidence.TENSOR
        if local is not None:
            verdict = class_evidence(ctx, local, method, depth + 1)
            if verdict is Evidence.TENSOR:
                return verdict
            verdicts.add(verdict)
        elif qualname is not None and (qualname.startswith("torch.") or _root_library(qualname) in _NOT_TENSOR_ROOTS):
            verdicts.add(Evidence.NOT_TENSOR)
        else:
            verdicts.add(Evidence.UNKNOWN)
    return Evidence.UNKNOWN if Evidence.UNKNOWN in verdicts else Evidence.NOT_TENSOR


def _defined_names(cls: ast.ClassDef) -> set[str]:
    names = set()
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _local_class(ctx: Context, expr: ast.expr) -> ast.ClassDef | None:
    """The class statement a name refers to, when it is defined in this file (and only once)."""
    if not isinstance(expr, ast.Name):
        return None
    found = ctx.resolver.lookup_name(expr)
    if len(found.bindings) == 1 and isinstance(found.bindings[0].node, ast.ClassDef):
        return found.bindings[0].node
    return None


def _root_library(qualname: str) -> str:
    return qualname.split(".", 1)[0]


def _call_evidence(ctx: Context, call: ast.Call, depth: int) -> Evidence:
    if isinstance(call.func, ast.Name) and call.func.id == "__import__":
        return Evidence.NOT_TENSOR  # a module
    local = _local_class(ctx, call.func)
    if local is not None:
        return class_evidence(ctx, local, None, depth + 1)
    qualname = ctx.qualified_name(call.func)
    if qualname is not None:
        if qualname in _TENSOR_FUNCTIONS:
            return Evidence.TENSOR
        if _root_library(qualname) in _NOT_TENSOR_ROOTS:
            return Evidence.NOT_TENSOR
        return Evidence.UNKNOWN
    func = call.func
    if isinstance(func, ast.Attribute) and (func.attr in _TENSOR_METHODS or func.attr in _TORCH_ONLY_METHODS):
        receiver = tensor_evidence(ctx, func.value, depth + 1)
        if receiver is Evidence.TENSOR or (receiver is Evidence.UNKNOWN and func.attr in _TORCH_ONLY_METHODS):
            return Evidence.TENSOR
    return Evidence.UNKNOWN


def _name_evidence(ctx: Context, name: ast.Name, depth: int) -> Evidence:
    found = ctx.resolver.lookup_name(name)
    if not found.bindings:
        return Evidence.UNKNOWN
    reaching = reaching_assignment(ctx, name, found.bindings)
    if reaching is not None:
        return _binding_evidence(ctx, reaching, depth)
    # A name rebound from itself in a loop (`n = n - x @ n`, `n = n.qr().Q`) is a tensor if every
    # binding is one when the name is: judged with that assumption (a greatest fixed point).
    key = (id(found.bindings[0].scope), name.id)
    if key in _ASSUMED:
        return Evidence.TENSOR
    _ASSUMED.add(key)
    try:
        verdicts = {_binding_evidence(ctx, binding, depth) for binding in found.bindings
                    if binding.kind is not BindingKind.AUGMENTED}  # `x += 1` keeps what x was
    finally:
        _ASSUMED.discard(key)
    return verdicts.pop() if len(verdicts) == 1 else Evidence.UNKNOWN


# The names assumed tensors while their own bindings are judged (see ``_name_evidence``).
_ASSUMED: set[tuple[int, str]] = set()


def _binding_evidence(ctx: Context, binding: Binding, depth: int) -> Evidence:
    if binding.is_import:
        # `import x` and `from . import x` bind modules; `from .m import x` may bind anything.
        statement = binding.statement
        module_binding = binding.kind is not BindingKind.FROM_IMPORT or (
            isinstance(statement, ast.ImportFrom) and statement.module is None
        )
        return Evidence.NOT_TENSOR if binding.target or module_binding else Evidence.UNKNOWN
    if binding.annotation is not None:
        # Annotations are evaluated where the function is defined, outside its own scope.
        return _annotation_evidence(ctx, binding.annotation, binding.scope.parent or binding.scope)
    if binding.kind is BindingKind.ASSIGNMENT and binding.value is not None:
        return tensor_evidence(ctx, binding.value, depth + 1)
    if binding.kind is BindingKind.DEFINITION:
        return Evidence.NOT_TENSOR
    return Evidence.UNKNOWN


def _annotation_evidence(ctx: Context, annotation: ast.expr, scope: Scope) -> Evidence:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        head, _, rest = annotation.value.strip().partition(".")
        prefix = ctx.resolver.name_in_scope(head, scope) if head.isidentifier() else None
        qualname = f"{prefix}.{rest}" if prefix and rest else prefix
    else:
        qualname = ctx.qualified_name(annotation)
    if qualname in _TENSOR_TYPES:
        return Evidence.TENSOR
    if qualname is not None and _root_library(qualname) in _NOT_TENSOR_ROOTS:
        return Evidence.NOT_TENSOR
    return Evidence.UNKNOWN
