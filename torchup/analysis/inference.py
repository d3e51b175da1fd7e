"""Is this expression a torch.Tensor? Only evidence a reader would accept counts.

``TENSOR``: evidently a tensor (a torch factory's result, arithmetic on one, a parameter annotated
``torch.Tensor``, a row, slice or element of one, an item of `x.unbind(0)`, a loop or comprehension
variable over those, `self.w` that the class assigns only tensors, what the file's own function
returns when every `return` is a tensor); ``LIKELY``: a tensor or a container of tensors
(`torch.load(f)` and what is taken from it); ``NOT_TENSOR``: evidently something else (a literal, a
numpy/scipy/sympy/cupy/gpytorch result, a module); ``UNKNOWN`` otherwise. Rules use it to decide
between safe, unsafe and no fix, and the method rules how sure a finding is
(torchup.analysis.receivers).
"""

from __future__ import annotations

import ast
import enum

from torchup.analysis.context import Context
from torchup.analysis.flow import reaching_assignment
from torchup.analysis.resolver import ITEM, Binding, BindingKind, Scope
from torchup.core.facts import FACTS

_NOT_TENSOR_ROOTS = frozenset(FACTS["non_tensor_libraries"])
_TENSOR_FUNCTIONS = frozenset(FACTS["tensor_functions"])
_TENSOR_METHODS = frozenset(FACTS["tensor_methods"])
_TENSOR_ATTRIBUTES = frozenset(FACTS["tensor_attributes"])
# Methods no other library's objects have (`new_empty`, `masked_fill`): a receiver of unknown type
# that has one is a tensor, and so is its result.
_TORCH_ONLY_METHODS = frozenset(FACTS.get("torch_only_methods", ()))
_TENSOR_LIKE_ROOTS = frozenset(FACTS["tensor_like_libraries"])
# The tensor fields of the named tuples functions and methods return (`x.qr().Q`, `torch.linalg.eigh(a).eigenvectors`).
_TENSOR_FIELDS: dict[str, frozenset[str]] = {
    name: frozenset(fields) for name, fields in FACTS.get("tensor_fields", {}).items()
}
_TENSOR_TYPES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_LITERALS = (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.JoinedStr, ast.ListComp, ast.DictComp,
             ast.SetComp, ast.GeneratorExp, ast.Lambda)


class Evidence(enum.Enum):
    TENSOR = "tensor"
    LIKELY = "tensor-or-container"  # `torch.load(f)`: tensors, or a dict or list of them
    NOT_TENSOR = "not-tensor"
    UNKNOWN = "unknown"


def combined(verdicts: set[Evidence]) -> Evidence:
    """What several possible values together are: tensors only if each is one."""
    if len(verdicts) == 1:
        return next(iter(verdicts))
    if verdicts == {Evidence.TENSOR, Evidence.LIKELY}:
        return Evidence.LIKELY
    return Evidence.UNKNOWN


# Functions and methods that return a tuple of tensors (`q, r = ...` and `for part in ...` give tensors).
_TENSOR_SEQUENCE_FUNCTIONS = frozenset({
    "torch.unbind", "torch.split", "torch.chunk", "torch.tensor_split", "torch.meshgrid", "torch.broadcast_tensors",
    "torch.hsplit", "torch.vsplit", "torch.dsplit", "torch.atleast_1d", "torch.atleast_2d", "torch.atleast_3d",
})
_TENSOR_SEQUENCE_METHODS = frozenset({"unbind", "split", "chunk", "tensor_split", "hsplit", "vsplit", "dsplit"})
_TORCH_ONLY_SEQUENCE_METHODS = frozenset({"unbind", "tensor_split"})  # no other library's objects have them
# Containers whose items are those of their argument (`for i, x in enumerate(xs)`: `x` is an item of `xs`).
_PASS_ITEMS = frozenset({"list", "tuple", "reversed", "sorted", "iter"})
# What `torch.load` returns: tensors, or containers of them (or any pickled object: only likely).
_LOADERS = frozenset({"torch.load", "torch.serialization.load"})


def tensor_evidence(ctx: Context, expr: ast.expr, depth: int = 0) -> Evidence:
    if depth > 8:
        return Evidence.UNKNOWN
    if isinstance(expr, ast.Subscript):
        return _subscript_evidence(ctx, expr, depth)
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
        if _in_a_module(ctx, expr):
            return Evidence.NOT_TENSOR  # `linalg.batch_linalg` after `from . import linalg`: a module's function
        return _self_attribute_evidence(ctx, expr, depth)
    if isinstance(expr, ast.Name):
        return _name_evidence(ctx, expr, depth)
    return Evidence.UNKNOWN


def _in_a_module(ctx: Context, expr: ast.Attribute) -> bool:
    """Is ``expr`` (`pkg.sub`, `linalg.batch_linalg`) an attribute path of a name bound only by
    importing a module (`import pkg`, `from . import linalg`)?"""
    root: ast.expr = expr
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    bindings = ctx.resolver.lookup_name(root).bindings
    return bool(bindings) and all(_binds_a_module(b) for b in bindings)


def _binds_a_module(binding: Binding) -> bool:
    if binding.kind in (BindingKind.IMPORT, BindingKind.SUBMODULE_IMPORT):
        return True
    statement = binding.statement
    relative = isinstance(statement, ast.ImportFrom) and statement.module is None  # (`from . import linalg`)
    return binding.kind is BindingKind.FROM_IMPORT and relative


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
    if method is not None and (method in _defined_names(cls) or _assigns_to_self(cls, method)):
        return Evidence.NOT_TENSOR  # (`self.cholesky = lapack.potrf` in `__init__` is one too)
    verdicts = set()
    for base in cls.bases:
        qualname = ctx.qualified_name(base)
        local = local_class(ctx, base) if qualname is None else None
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


def _assigns_to_self(cls: ast.ClassDef, name: str) -> bool:
    """Does a method of ``cls`` assign `self.<name>` (its first parameter's attribute)?"""
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = [*statement.args.posonlyargs, *statement.args.args]
            if arguments and any(_assigned_to(node, arguments[0].arg, name) for node in _own_statements(statement)):
                return True
    return False


def _defined_names(cls: ast.ClassDef) -> set[str]:
    names = set()
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def local_class(ctx: Context, expr: ast.expr) -> ast.ClassDef | None:
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
    local = local_class(ctx, call.func)
    if local is not None:
        return class_evidence(ctx, local, None, depth + 1)
    function = _local_function(ctx, call.func)
    if function is not None:
        return _returns_evidence(ctx, function, depth)
    qualname = ctx.qualified_name(call.func)
    if qualname is not None:
        if qualname in _TENSOR_FUNCTIONS or qualname in _TENSOR_TYPES:  # (`nn.Parameter(t)` is a tensor)
            return Evidence.TENSOR
        if qualname in _LOADERS:
            return Evidence.LIKELY
        if _root_library(qualname) in _NOT_TENSOR_ROOTS:
            return Evidence.NOT_TENSOR
        return Evidence.UNKNOWN
    func = call.func
    if isinstance(func, ast.Attribute) and (func.attr in _TENSOR_METHODS or func.attr in _TORCH_ONLY_METHODS):
        receiver = tensor_evidence(ctx, func.value, depth + 1)
        if receiver is Evidence.TENSOR or (
            receiver is Evidence.UNKNOWN and func.attr in _TORCH_ONLY_METHODS and not _imports_tensor_like(ctx)
        ):
            return Evidence.TENSOR
    return Evidence.UNKNOWN


def _imports_tensor_like(ctx: Context) -> bool:
    """Does the file import a library whose objects copy the tensor's methods (GPyTorch's lazy
    tensors have `requires_grad_`, `evaluate`, `symeig`): then such a method proves nothing."""
    return any(
        binding.is_import and binding.target is not None and _root_library(binding.target) in _TENSOR_LIKE_ROOTS
        for bindings in ctx.resolver.module_scope.bindings.values() for binding in bindings
    )


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
    return combined(verdicts) if verdicts else Evidence.UNKNOWN


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
    if binding.kind is BindingKind.OTHER and isinstance(binding.node, ast.Name):
        origin = ctx.resolver.origin(binding.node)
        if origin is not None:
            return _element_evidence(ctx, origin.source, origin.path, depth + 1)
    return Evidence.UNKNOWN


def _subscript_evidence(ctx: Context, expr: ast.Subscript, depth: int) -> Evidence:
    """`t[i]`, `t[1:, 0]` of a tensor: a tensor; `parts[0]` of a tuple of tensors: one of them."""
    if isinstance(expr.slice, ast.Slice):
        whole = _sequence_evidence(ctx, expr.value, depth + 1)  # (a slice of a tuple of tensors is one too)
        return Evidence.TENSOR if whole is Evidence.TENSOR else tensor_evidence(ctx, expr.value, depth + 1)
    index = expr.slice.value if isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, int) else ITEM
    return _element_evidence(ctx, expr.value, (index,), depth + 1)


def _element_evidence(ctx: Context, source: ast.expr, path: tuple[int | str, ...], depth: int) -> Evidence:
    """What ``path`` (``Origin.path``) reaches in ``source``: elements and items of tensors, and of
    tuples of tensors, are tensors; of `torch.load(f)`, likely tensors."""
    if not path:
        return tensor_evidence(ctx, source, depth)
    if depth > 8:
        return Evidence.UNKNOWN
    step, rest = path[0], path[1:]
    if isinstance(source, ast.Call) and isinstance(source.func, ast.Name) and step == ITEM \
            and ctx.resolver.is_unbound(source.func.id, ctx.resolver.scope_of(source.func)):
        builtin, arguments = source.func.id, source.args
        if builtin == "enumerate" and arguments:  # items are (index, item)
            if not rest:
                return Evidence.NOT_TENSOR
            return _element_evidence(ctx, arguments[0], (ITEM, *rest[1:]), depth + 1) if rest[0] == 1 \
                else Evidence.NOT_TENSOR
        if builtin == "zip" and rest and isinstance(rest[0], int) and rest[0] < len(arguments) \
                and not any(isinstance(a, ast.Starred) for a in arguments):
            return _element_evidence(ctx, arguments[rest[0]], (ITEM, *rest[1:]), depth + 1)
        if builtin in _PASS_ITEMS and len(arguments) == 1:
            return _element_evidence(ctx, arguments[0], path, depth + 1)
        if builtin == "range":
            return Evidence.NOT_TENSOR
    if isinstance(source, (ast.Tuple, ast.List)) and isinstance(step, int):
        elements = source.elts
        if step < len(elements) and not any(isinstance(e, ast.Starred) for e in elements[: step + 1]):
            return _element_evidence(ctx, elements[step], rest, depth + 1)
        return Evidence.UNKNOWN
    whole = tensor_evidence(ctx, source, depth + 1)
    if whole in (Evidence.TENSOR, Evidence.LIKELY):
        return whole  # a row, an element or a slice of a tensor is a tensor (of a loaded object: likely)
    if _sequence_evidence(ctx, source, depth + 1) is Evidence.TENSOR:
        return Evidence.TENSOR  # one of the tensors (and whatever is taken from it)
    return Evidence.UNKNOWN


def _sequence_evidence(ctx: Context, expr: ast.expr, depth: int) -> Evidence:
    """TENSOR when ``expr`` is a tuple or list of tensors: `x.unbind(0)`, `torch.split(...)`,
    `[a, b]` of tensors, `[f(x) for x in xs]` of tensors, `torch.linalg.qr(a)`; else UNKNOWN."""
    if depth > 8:
        return Evidence.UNKNOWN
    if isinstance(expr, ast.Call):
        qualname = ctx.qualified_name(expr.func)
        if qualname in _TENSOR_SEQUENCE_FUNCTIONS or _returns_tensor_fields(ctx, expr, depth, None):
            return Evidence.TENSOR
        func = expr.func
        if isinstance(func, ast.Attribute) and qualname is None and func.attr in _TENSOR_SEQUENCE_METHODS:
            receiver = tensor_evidence(ctx, func.value, depth + 1)
            if receiver is Evidence.TENSOR or (
                receiver is Evidence.UNKNOWN and func.attr in _TORCH_ONLY_SEQUENCE_METHODS
            ):
                return Evidence.TENSOR
        return Evidence.UNKNOWN
    if isinstance(expr, (ast.Tuple, ast.List)):
        if expr.elts and all(not isinstance(e, ast.Starred) and tensor_evidence(ctx, e, depth + 1) is Evidence.TENSOR
                             for e in expr.elts):
            return Evidence.TENSOR
        return Evidence.UNKNOWN
    if isinstance(expr, (ast.ListComp, ast.GeneratorExp)):
        return Evidence.TENSOR if tensor_evidence(ctx, expr.elt, depth + 1) is Evidence.TENSOR else Evidence.UNKNOWN
    if isinstance(expr, ast.Name):
        found = ctx.resolver.lookup_name(expr)
        values = [b.value for b in found.bindings if b.kind is BindingKind.ASSIGNMENT]
        if values and len(values) == len(found.bindings) and all(
            v is not None and _sequence_evidence(ctx, v, depth + 1) is Evidence.TENSOR for v in values
        ):
            return Evidence.TENSOR
    return Evidence.UNKNOWN


def _local_function(ctx: Context, func: ast.expr) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The file's own function a call names, when the name is bound to it alone (`f(x)`,
    `self.f(x)` in a method of the class that defines `f`)."""
    if isinstance(func, ast.Name):
        found = ctx.resolver.lookup_name(func)
        if len(found.bindings) == 1 and isinstance(found.bindings[0].node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return found.bindings[0].node
        return None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        cls = class_of_self(ctx, func.value)
        if cls is not None:
            methods = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and s.name == func.attr]
            if len(methods) == 1 and not methods[0].decorator_list:
                return methods[0]
    return None


def returned_evidence(
    ctx: Context, function: ast.FunctionDef | ast.AsyncFunctionDef, path: tuple[int | str, ...] = ()
) -> Evidence:
    """What ``path`` (``Origin.path``: `_, t = f()` is ``(1,)``) reaches in what a call of
    ``function``, a function of the file ``ctx`` reads, returns (torchup.analysis.origins)."""
    return _returns_evidence(ctx, function, 0, path)


def _returns_evidence(
    ctx: Context, function: ast.FunctionDef | ast.AsyncFunctionDef, depth: int, path: tuple[int | str, ...] = ()
) -> Evidence:
    """What a call of the file's own function returns: a tensor when every `return` gives one.
    With a ``path`` that unpacks the result (`_, t = f()`), the `return`s of a tuple long enough
    are those the caller's unpacking expects, when there are any (`return x` beside `return x, t`
    is another mode of the function)."""
    if isinstance(function, ast.AsyncFunctionDef) or depth > 6:
        return Evidence.UNKNOWN  # (a call gives a coroutine)
    values: list[ast.expr] = []
    for node in _own_statements(function):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return Evidence.NOT_TENSOR  # a generator
        if isinstance(node, ast.Return):
            if node.value is None:
                return Evidence.UNKNOWN
            values.append(node.value)
    if path and isinstance(path[0], int):
        index = path[0]
        unpacked = [v for v in values if isinstance(v, (ast.Tuple, ast.List)) and len(v.elts) > index]
        values = unpacked or values
    verdicts = {_element_evidence(ctx, value, path, depth + 2) for value in values}
    return combined(verdicts) if verdicts else Evidence.UNKNOWN


def _own_statements(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The nodes of a function's body, not of the functions, classes and lambdas inside it."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return found


def _self_attribute_evidence(ctx: Context, expr: ast.Attribute, depth: int) -> Evidence:
    """`self.w` in a method: a tensor when the class assigns `self.w` only tensors (`nn.Parameter`,
    a factory's result; `None` aside) or annotates `w: torch.Tensor`, or registers a buffer `w`."""
    if not isinstance(expr.value, ast.Name):
        return Evidence.UNKNOWN
    cls = class_of_self(ctx, expr.value)
    if cls is None or depth > 6:
        return Evidence.UNKNOWN
    verdicts: set[Evidence] = set()
    for statement in cls.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                and statement.target.id == expr.attr:
            verdicts.add(_annotation_evidence(ctx, statement.annotation, ctx.resolver.scope_of(expr)))
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        arguments = [*statement.args.posonlyargs, *statement.args.args]
        if not arguments:
            continue
        own = arguments[0].arg
        for node in _own_statements(statement):
            for value in _assigned_to(node, own, expr.attr):
                if not (isinstance(value, ast.Constant) and value.value is None):
                    verdicts.add(tensor_evidence(ctx, value, depth + 2))
    return combined(verdicts) if verdicts else Evidence.UNKNOWN


def _assigned_to(node: ast.AST, own: str, attribute: str) -> list[ast.expr]:
    """The values ``node`` assigns to `<own>.<attribute>` (`self.w = v`, `self.register_buffer("w", v)`)."""
    def is_target(target: ast.expr) -> bool:
        if isinstance(target, (ast.Tuple, ast.List)):  # `self.cholesky, = get_lapack_funcs(...)`
            return any(is_target(element) for element in target.elts)
        if isinstance(target, ast.Starred):
            return is_target(target.value)
        return isinstance(target, ast.Attribute) and target.attr == attribute \
            and isinstance(target.value, ast.Name) and target.value.id == own

    if isinstance(node, ast.Assign):
        return [node.value] if any(is_target(t) for t in node.targets) else []
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return [node.value] if is_target(node.target) else []
    if isinstance(node, ast.AugAssign):
        return []  # (`self.w += x` keeps what it was)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "register_buffer" \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == own and len(node.args) >= 2 \
            and isinstance(node.args[0], ast.Constant) and node.args[0].value == attribute:
        return [node.args[1]]
    return []


def class_of_self(ctx: Context, name: ast.Name) -> ast.ClassDef | None:
    """The class when ``name`` is the first parameter of one of its methods (``self``, ``cls``)."""
    found = ctx.resolver.lookup_name(name)
    if len(found.bindings) != 1:
        return None
    binding = found.bindings[0]
    cls = ctx.resolver.enclosing_class(binding.scope)
    function = binding.scope.node
    if cls is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    parameters = [*function.args.posonlyargs, *function.args.args]
    is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
    return cls if parameters and parameters[0] is binding.node and not is_static else None


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
