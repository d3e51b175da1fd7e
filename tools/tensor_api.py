#!/usr/bin/env python3
"""Regenerate the tensor facts in ``torchup/data/torch_api.json`` from a torch installation's stubs.

    python3 tools/tensor_api.py [TORCH] [--output FILE] [--numpy-python PYTHON] [--check]

TORCH is the `torch` package directory, the site-packages holding it, a virtual environment or its
python (default: the 2.13.0 environment torchup's differential tests build). Nothing from torch is
imported: the `.pyi` and `.py` files are parsed with `ast`, and the ops that have no stub
(`torch._C._linalg`, `_fft`, `_special`) are read from the schemas the wheel ships in
torchgen/packaged/ATen/native/native_functions.yaml. Numpy's `dir(numpy.ndarray)` comes from running
the environment's python (numpy, not torch).

Written keys (every other key, and the file's hand formatting, stay as they are):
- tensor_functions: public `torch.X`, `torch.linalg.X`, `torch.nn.functional.X`, `torch.fft.X` and
  `torch.special.X` whose every overload returns exactly `Tensor`.
- tensor_methods: public `Tensor` methods (TensorBase in torch/_C/__init__.pyi, overridden by
  torch/_tensor.py) whose every overload returns `Tensor` or `Self`.
- torch_only_methods: the tensor_methods numpy's ndarray lacks, less NOT_TORCH_ONLY below.
- tensor_fields: function or method name -> the fields of the named tuple it returns, when every field
  is a Tensor (torch.return_types in the stubs, named returns in the schemas).

How names are followed: a module's statements are read in order (both branches of an `if`, only the
body of `if TYPE_CHECKING:`), `from m import *` uses m's `__all__`, and `x = _add_docstr(op, ...)` or
`x = op` binds x to op. A function whose body only raises is a removed API, not a tensor function.

Where the stubs say nothing, three other files of the wheel do (the names typed this way are printed):
- A Python `def` without a return annotation that replaces a stub-typed name keeps the stub's type
  (`Tensor.istft` over `TensorBase.istft`): such wrappers forward to the op of the same name.
- torch/functional.py's unannotated wrappers whose op the stubs leave out (`torch.block_diag`,
  `torch.cdist`, `torch.norm`) take the returns of the ATen function of that name in the schemas.
- Methods bound in C++ without a stub (`Tensor.cfloat`, `Tensor.cdouble`) take the signatures their
  docs in torch/_tensor_docs.py start with (`cfloat(memory_format=torch.preserve_format) -> Tensor`).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "torchup" / "data" / "torch_api.json"
DEFAULT_TORCH = Path.home() / ".cache/torchup/envs/torch-2.13.0/lib/python3.11/site-packages/torch"
COMMAND = "python3 tools/tensor_api.py"

# The namespaces whose functions tensor_functions lists, in the order they are reported.
FUNCTION_MODULES = ("torch", "torch.linalg", "torch.nn.functional", "torch.fft", "torch.special")
# Extension modules without stubs: their ops come from the schemas (python_module: <suffix>).
SCHEMA_MODULES = {"torch._C._linalg": "linalg", "torch._C._fft": "fft", "torch._C._special": "special"}
SCHEMAS = "torchgen/packaged/ATen/native/native_functions.yaml"

# Tensor methods numpy's ndarray lacks that other objects have too (pandas, scipy.sparse, sympy, tf,
# cupy, xarray, Python's own types) or that are plain English a user class may define: a call of one
# says nothing about the type of an object nobody declared.
_PANDAS = "pandas Series and DataFrame have it (xarray DataArray too)"
_SPARSE = "scipy.sparse matrices have it"
_SYMPY = "sympy matrices or expressions have it"
_DTYPE = "a dtype cast named like a type: a common method name (Java-style APIs, ctypes wrappers)"
_VERB = "a common English verb or noun a user class may define"
NOT_TORCH_ONLY: dict[str, str] = {
    "abs": _PANDAS,
    "add": "set.add; pandas and sympy too",
    "adjoint": _SYMPY,
    "angle": "geometry vectors (pygame, sympy) have it",
    "arcsin": _SPARSE,
    "arcsinh": _SPARSE,
    "arctan": _SPARSE,
    "arctanh": _SPARSE,
    "bool": _DTYPE,
    "byte": _DTYPE,
    "ceil": _SPARSE,
    "char": _DTYPE,
    "cholesky": _SYMPY,
    "clamp": "pygame Rect.clamp; common in vector math classes",
    "clone": _VERB,
    "coalesce": "pyspark DataFrame.coalesce",
    "cos": "a math function other array types (mxnet, paddle) have as a method",
    "cosh": "a math function other array types (mxnet, paddle) have as a method",
    "count_nonzero": _SPARSE,
    "cov": _PANDAS,
    "cpu": "tf EagerTensor.cpu()",
    "cross": _SYMPY,
    "cuda": "other array libraries move to the GPU with .cuda() (mxnet, paddle)",
    "deg2rad": _SPARSE,
    "det": _SYMPY,
    "detach": "io buffers and text files have .detach(); mxnet arrays too",
    "diag": "sympy Matrix.diag",
    "diff": "sympy Expr.diff; pandas and xarray too",
    "dist": "geometry points and vectors have it",
    "div": _PANDAS,
    "divide": _PANDAS,
    "double": _DTYPE,
    "eq": _PANDAS,
    "exp": "decimal.Decimal.exp; sympy Matrix.exp",
    "expand": "sympy Expr.expand",
    "expm1": _SPARSE,
    "fix": _VERB,
    "flip": _VERB,
    "float": _DTYPE,
    "floor": _SPARSE,
    "gather": "mpi4py communicators have it; a common verb",
    "gcd": "sympy numbers and polynomials have it",
    "ge": _PANDAS,
    "gt": _PANDAS,
    "half": _DTYPE,
    "indices": "slice.indices",
    "int": _DTYPE,
    "inverse": "sympy and other matrix classes have it",
    "lcm": "sympy numbers and polynomials have it",
    "le": _PANDAS,
    "lerp": "vector and colour classes (pygame) have it",
    "log": "sympy Matrix.log; mpmath and decimal-like number types",
    "log10": "decimal.Decimal.log10",
    "log1p": _SPARSE,
    "long": _DTYPE,
    "lt": _PANDAS,
    "maximum": _SPARSE,
    "minimum": _SPARSE,
    "mul": _PANDAS,
    "multiply": "pandas, scipy.sparse and sympy have it",
    "ne": _PANDAS,
    "new": "a common constructor name (hashlib-, hmac-style factories)",
    "outer": "numpy ufuncs have .outer",
    "permute": "sympy Matrix.permute",
    "pow": "pandas and sympy have it",
    "quantile": _PANDAS,
    "rad2deg": _SPARSE,
    "roll": "xarray DataArray.roll",
    "scatter": "mpi4py communicators have it; a common verb",
    "scatter_add": "cupy ndarray.scatter_add and tf.Variable.scatter_add",
    "select": _VERB,
    "short": _DTYPE,
    "sign": _SPARSE,
    "sin": _SPARSE,
    "sinh": _SPARSE,
    "sqrt": "decimal.Decimal.sqrt, mpmath numbers and scipy.sparse have it",
    "square": _VERB,
    "sub": "re.Pattern.sub; pandas too",
    "subtract": _PANDAS,
    "t": "a one-letter name: anything may have it",
    "tan": _SPARSE,
    "tanh": _SPARSE,
    "tile": _VERB,
    "to": "astropy and pint quantities convert units with .to()",
    "to_dense": "pandas sparse arrays have it",
    "to_sparse": "pandas had it",
    "trunc": _SPARSE,
    "values": "dict.values; pandas too",
    "where": _PANDAS,
}

# What the tool writes: key -> a sorted list of names, or (tensor_fields) name -> field names.
Facts = dict[str, list[str] | dict[str, list[str]]]

TENSOR_NAMES = frozenset({"Tensor", "torch.Tensor", "TensorBase", "_C.TensorBase", "torch._C.TensorBase"})
_NAMED_TUPLE_PREFIX = "torch.return_types."


@dataclass(frozen=True)
class Returns:
    """One overload's return type."""

    text: str  # as written; "" when the def has no annotation
    tensor: bool = False
    fields: tuple[str, ...] = ()  # a named tuple whose fields are all tensors


@dataclass(frozen=True)
class Sig:
    """What calling a function gives, over all its overloads."""

    returns: tuple[Returns, ...]
    raises: bool = False  # the body only raises: a removed API kept as a stub

    @property
    def unannotated(self) -> bool:
        return not self.raises and all(not r.text for r in self.returns)


@dataclass(frozen=True)
class ModRef:
    name: str


@dataclass(frozen=True)
class Ref:
    """`name` as bound in `module` (resolved on use: most imports are never asked for)."""

    module: str
    name: str


@dataclass(frozen=True)
class ExprRef:
    """An expression (`_linalg.linalg_inv`, `_C.TensorBase.abs`) read in a module, or a class body."""

    module: str
    expr: ast.expr
    scope: Scope | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Shadow:
    """A name bound again: `new` wins unless it is an unannotated def, then `old` gives the type."""

    new: Binding
    old: Binding


@dataclass
class Scope:
    """The names a module or a class body binds, in binding order."""

    module: str
    bindings: dict[str, Binding] = field(default_factory=dict)
    exports: list[str] | None = None  # a literal __all__
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)

    def bind(self, name: str, value: Binding) -> None:
        old = self.bindings.pop(name, None)
        self.bindings[name] = value if old is None else Shadow(value, old)


@dataclass(frozen=True)
class ClassRef:
    module: str
    name: str


Binding = Sig | ModRef | Ref | ExprRef | Shadow | ClassRef | None
Resolved = Sig | ModRef | ClassRef | None


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name | ast.Attribute) and ast.unparse(test).endswith("TYPE_CHECKING")


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.add(ast.unparse(target).rsplit(".", 1)[-1])
    return names


def _only_raises(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return len(body) == 1 and isinstance(body[0], ast.Raise)


def _schema_returns(text: str) -> Returns:
    """`Tensor(a!)`, `(Tensor Q, Tensor R)`, `Tensor[]`: a return of native_functions.yaml."""
    tensor = re.compile(r"Tensor(\([a-z]!?\))?")
    if tensor.fullmatch(text):
        return Returns(text, tensor=True)
    if text.startswith("(") and text.endswith(")"):
        parts = [part.strip().rsplit(" ", 1) for part in text[1:-1].split(",")]
        if all(len(part) == 2 and tensor.fullmatch(part[0]) for part in parts):
            return Returns(text, fields=tuple(name for _, name in parts))
    return Returns(text)


class Stubs:
    """A torch installation read statically."""

    def __init__(self, torch_dir: Path) -> None:
        self.torch_dir = torch_dir
        self.site = torch_dir.parent
        self.scopes: dict[str, Scope] = {}
        # Names typed without a stub of their own, by where the type came from.
        self.typed_by: dict[str, set[str]] = {"replaced stub": set(), "schema": set(), "docs": set()}
        self.schema_modules_used: set[str] = set()
        self._schemas: dict[str, dict[str, list[Returns]]] | None = None
        self._named_tuples: dict[str, Returns] | None = None
        self._resolving: set[int] = set()

    # Files and modules

    def module_file(self, module: str) -> Path | None:
        parts = module.split(".")
        if parts[0] != "torch":
            return None
        base = self.site.joinpath(*parts)
        for candidate in (
            base.with_suffix(".pyi"),
            base.with_suffix(".py"),
            base / "__init__.pyi",
            base / "__init__.py",
        ):
            if candidate.is_file():
                return candidate
        return None

    def is_module(self, module: str) -> bool:
        if module in SCHEMA_MODULES:
            return True
        return self.module_file(module) is not None or self.site.joinpath(*module.split(".")).is_dir()

    def version(self) -> str:
        tree = ast.parse((self.torch_dir / "version.py").read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__version__":
                value = node.value
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    return value.value
        raise SystemExit("tensor_api: no __version__ in torch/version.py")

    def scope(self, module: str) -> Scope:
        if module in self.scopes:
            return self.scopes[module]
        scope = self.scopes[module] = Scope(module)  # bound first: import cycles see a partial module
        path = self.module_file(module)
        if path is not None and not (module in SCHEMA_MODULES and path.suffix == ".py"):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            package = module if path.stem == "__init__" else module.rpartition(".")[0]
            self._read(tree.body, scope, package, in_class=False)
        elif module in SCHEMA_MODULES:
            self.schema_modules_used.add(module)
            for name, returns in self.schemas().get(SCHEMA_MODULES[module], {}).items():
                scope.bindings[name] = Sig(tuple(returns))
        return scope

    def schemas(self) -> dict[str, dict[str, list[Returns]]]:
        """python_module -> op name -> the returns of its overloads, from native_functions.yaml.

        Ops without a python_module are under "" when they are functions (torch.X), not only methods.
        """
        if self._schemas is None:
            path = self.site / SCHEMAS
            if not path.is_file():
                raise SystemExit(f"tensor_api: {path} is missing: no stubs and no schemas for torch._C._linalg")
            self._schemas = {}
            entries: list[dict[str, str]] = []
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("- func:"):
                    entries.append({"func": line.removeprefix("- func:").strip()})
                elif entries and line.startswith("  ") and ":" in line and not line.lstrip().startswith("#"):
                    key, _, value = line.strip().partition(":")
                    entries[-1].setdefault(key, value.strip())
            for entry in entries:
                match = re.fullmatch(r"(\w+)(?:\.\w+)?\(.*\) -> (.+)", entry["func"])
                if match is None or "function" not in entry.get("variants", "function"):
                    continue
                ops = self._schemas.setdefault(entry.get("python_module", ""), {})
                ops.setdefault(match[1], []).append(_schema_returns(match[2]))
        return self._schemas

    def named_tuples(self) -> dict[str, Returns]:
        """torch.return_types.X -> its fields, when they are all tensors (torch/return_types.pyi)."""
        if self._named_tuples is None:
            self._named_tuples = {}
            path = self.torch_dir / "return_types.pyi"
            for node in ast.parse(path.read_text(encoding="utf-8")).body if path.is_file() else []:
                if not isinstance(node, ast.ClassDef):
                    continue
                props = [
                    item
                    for item in node.body
                    if isinstance(item, ast.FunctionDef) and "property" in _decorator_names(item)
                ]
                fields = tuple(prop.name for prop in props)
                tensors = all(prop.returns is not None and ast.unparse(prop.returns) in TENSOR_NAMES for prop in props)
                self._named_tuples[node.name] = Returns(
                    _NAMED_TUPLE_PREFIX + node.name, fields=fields if tensors else ()
                )
        return self._named_tuples

    # Reading statements

    def _read(self, body: list[ast.stmt], scope: Scope, package: str, in_class: bool) -> None:
        overloads: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        # A class body sees its module's TypeVars (`def cuda(self: S) -> S` in TensorBase) and Self.
        module_body = self._module_body(scope.module) if in_class else body
        tensor_vars = set(TENSOR_NAMES) | self._tensor_typevars(module_body) | ({"Self"} if in_class else set())
        for node in self._flatten(body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                decorators = _decorator_names(node)
                if decorators & {"property", "setter", "deleter", "staticmethod", "classmethod", "cached_property"}:
                    scope.bind(node.name, None)
                    continue
                returns = self._returns(node.returns, tensor_vars)
                if decorators & {"overload", "_overload", "_overload_method"}:
                    overloads.setdefault(node.name, []).append(node)
                    pending = overloads[node.name]
                    scope.bindings[node.name] = Sig(tuple(self._returns(n.returns, tensor_vars) for n in pending))
                elif node.name in overloads:  # the implementation after its overloads: they are the types
                    del overloads[node.name]
                else:
                    scope.bind(node.name, Sig((returns,), raises=_only_raises(node)))
            elif isinstance(node, ast.ClassDef):
                scope.classes[node.name] = node
                scope.bind(node.name, ClassRef(scope.module, node.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        scope.bind(alias.asname, ModRef(alias.name))
                    else:
                        head = alias.name.split(".")[0]
                        scope.bind(head, ModRef(head))
            elif isinstance(node, ast.ImportFrom):
                source = self._absolute(node, package)
                for alias in node.names:
                    if alias.name == "*":
                        for name in self.exports(source):
                            scope.bind(name, Ref(source, name))
                    else:
                        scope.bind(alias.asname or alias.name, Ref(source, alias.name))
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                self._assign(node, scope)
            elif isinstance(node, ast.Delete):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        scope.bindings.pop(target.id, None)
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                self._all_call(node.value, scope)

    def _flatten(self, body: list[ast.stmt]) -> Iterator[ast.stmt]:
        """The statements a module runs at its top level, if and try blocks opened."""
        for node in body:
            if isinstance(node, ast.If):
                if _is_type_checking(node.test):
                    yield from self._flatten(node.body)  # what type checkers see
                else:
                    yield from self._flatten(node.body)
                    yield from self._flatten(node.orelse)
            elif isinstance(node, ast.Try):
                yield from self._flatten(node.body + node.orelse + node.finalbody)
            elif isinstance(node, ast.With):
                yield from self._flatten(node.body)
            else:
                yield node

    def _module_body(self, module: str) -> list[ast.stmt]:
        path = self.module_file(module)
        return ast.parse(path.read_text(encoding="utf-8")).body if path is not None else []

    def _tensor_typevars(self, body: list[ast.stmt]) -> set[str]:
        """Names of TypeVars bound to Tensor: a function returning one returns a Tensor."""
        found = set()
        for node in self._flatten(body):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1:
                call = node.value
                if ast.unparse(call.func).endswith("TypeVar") and isinstance(node.targets[0], ast.Name):
                    bound = next((kw.value for kw in call.keywords if kw.arg == "bound"), None)
                    if bound is not None and self._annotation_text(bound) in TENSOR_NAMES:
                        found.add(node.targets[0].id)
        return found

    @staticmethod
    def _annotation_text(node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                return ast.unparse(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                return node.value
        return ast.unparse(node)

    def _returns(self, node: ast.expr | None, tensor_vars: set[str]) -> Returns:
        if node is None:
            return Returns("")
        text = self._annotation_text(node)
        if text in tensor_vars:
            return Returns(text, tensor=True)
        if text.startswith(_NAMED_TUPLE_PREFIX):
            return self.named_tuples().get(text.removeprefix(_NAMED_TUPLE_PREFIX), Returns(text))
        return Returns(text)

    @staticmethod
    def _absolute(node: ast.ImportFrom, package: str) -> str:
        if not node.level:
            return node.module or ""
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - node.level + 1])
        return f"{base}.{node.module}" if node.module else base

    def _assign(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: Scope) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            if target.id == "__all__":
                self._all_assign(node, scope)
            elif isinstance(node, ast.AugAssign):
                continue
            elif value is None:  # `shape: Size` in a class: an attribute
                scope.bind(target.id, None)
            else:
                scope.bind(target.id, self._alias(value, scope))

    def _alias(self, value: ast.expr, scope: Scope) -> Binding:
        """`x = _add_docstr(op, doc)` and `x = op` bind x to op; other values are not functions we know."""
        if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("_add_docstr") and value.args:
            value = value.args[0]
        if isinstance(value, ast.Name | ast.Attribute):
            return ExprRef(scope.module, value, scope)
        return None

    def _all_assign(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: Scope) -> None:
        names = self._literal_names(node.value)
        if names is None:
            return
        if isinstance(node, ast.AugAssign):
            scope.exports = [*(scope.exports or []), *names]
        else:
            scope.exports = names

    def _all_call(self, call: ast.Call, scope: Scope) -> None:
        func = call.func
        if isinstance(func, ast.Attribute) and ast.unparse(func.value) == "__all__" and call.args:
            names = self._literal_names(call.args[0])
            if func.attr == "extend" and names is not None:
                scope.exports = [*(scope.exports or []), *names]
            elif func.attr == "append" and isinstance(call.args[0], ast.Constant):
                scope.exports = [*(scope.exports or []), str(call.args[0].value)]

    @staticmethod
    def _literal_names(node: ast.expr | None) -> list[str] | None:
        if not isinstance(node, ast.List | ast.Tuple):
            return None
        names = [item.value for item in node.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
        return names if len(names) == len(node.elts) else None

    def exports(self, module: str) -> list[str]:
        """What `from module import *` binds."""
        scope = self.scope(module)
        if scope.exports is not None:
            return list(scope.exports)
        return [name for name in scope.bindings if not name.startswith("_")]

    # Resolving

    def lookup(self, module: str, name: str, depth: int = 0) -> Resolved:
        return self.resolve(Ref(module, name), f"{module}.{name}", depth)

    def resolve(self, binding: Binding, where: str, depth: int = 0) -> Resolved:
        if depth > 30:  # an alias cycle
            return None
        if isinstance(binding, Sig | ModRef | ClassRef) or binding is None:
            return binding
        if isinstance(binding, Shadow):
            if id(binding) in self._resolving:  # the new value reads the name: it sees the old one
                return self.resolve(binding.old, where, depth + 1)
            self._resolving.add(id(binding))
            try:
                new = self.resolve(binding.new, where, depth + 1)
            finally:
                self._resolving.discard(id(binding))
            if isinstance(new, Sig) and new.unannotated:
                old = self.resolve(binding.old, where, depth + 1)
                if isinstance(old, Sig):
                    self.typed_by["replaced stub"].add(where)
                    return old
            return new
        if isinstance(binding, Ref):
            if self.is_module(f"{binding.module}.{binding.name}"):  # `from torch import _C as _C` in torch
                return ModRef(f"{binding.module}.{binding.name}")
            return self.resolve(self.scope(binding.module).bindings.get(binding.name), where, depth + 1)
        return self._evaluate(binding, where, depth + 1)

    def _evaluate(self, ref: ExprRef, where: str, depth: int) -> Resolved:
        expr = ref.expr
        if isinstance(expr, ast.Name):
            local = ref.scope.bindings.get(expr.id) if ref.scope is not None else None
            if local is None:
                local = self.scope(ref.module).bindings.get(expr.id)
            return self.resolve(local, where, depth)
        if isinstance(expr, ast.Attribute):
            owner = self._evaluate(ExprRef(ref.module, expr.value, ref.scope), where, depth + 1)
            if isinstance(owner, ModRef):
                return self.lookup(owner.name, expr.attr, depth + 1)
            if isinstance(owner, ClassRef):
                return self.resolve(self.members(owner).get(expr.attr), where, depth + 1)
        return None

    def members(self, cls: ClassRef) -> dict[str, Binding]:
        """A class's members, its bases' first (bases outside the tree are left out)."""
        key = f"{cls.module}:{cls.name}"
        if key in self.scopes:
            return self.scopes[key].bindings
        node = self.scope(cls.module).classes[cls.name]
        scope = self.scopes[key] = Scope(cls.module)
        for base in node.bases:
            resolved = self._evaluate(ExprRef(cls.module, base), key, 0)
            if isinstance(resolved, ClassRef):
                scope.bindings.update(self.members(resolved))
        module_path = self.module_file(cls.module)
        package = (
            cls.module if module_path is not None and module_path.stem == "__init__" else cls.module.rpartition(".")[0]
        )
        self._read(node.body, scope, package, in_class=True)
        return scope.bindings

    # The facts

    def public_functions(self, module: str) -> dict[str, Sig]:
        scope = self.scope(module)
        names = [*scope.bindings, *(scope.exports or [])]  # torch.fft.__all__ leaves out hfft2, a public function
        aten = self.schemas().get("", {}) if module == "torch" else {}
        found = {}
        for name in dict.fromkeys(names):
            if not name.startswith("_"):
                resolved = self.lookup(module, name)
                if isinstance(resolved, Sig) and resolved.unannotated and name in aten:
                    # torch/functional.py wraps these ops; the stubs leave them out, the schemas have them
                    resolved = Sig(tuple(aten[name]))
                    self.typed_by["schema"].add(f"{module}.{name}")
                if isinstance(resolved, Sig):
                    found[f"{module}.{name}"] = resolved
        return found

    def tensor_methods(self) -> dict[str, Sig]:
        tensor = self.lookup("torch._tensor", "Tensor")
        if not isinstance(tensor, ClassRef):
            raise SystemExit("tensor_api: no class Tensor in torch/_tensor.py")
        found = {}
        members = self.members(tensor)
        for name, binding in members.items():
            resolved = self.resolve(binding, f"Tensor.{name}")
            if not name.startswith("_") and isinstance(resolved, Sig):
                found[name] = resolved
        for name, sig in self.documented_methods().items():
            if name not in members:  # bound in C++ without a stub (cfloat, cdouble)
                found[name] = sig
                self.typed_by["docs"].add(name)
        return found

    def documented_methods(self) -> dict[str, Sig]:
        """Methods by the signatures their docs start with: `cfloat(memory_format=...) -> Tensor`."""
        path = self.torch_dir / "_tensor_docs.py"
        found = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if path.is_file() else []:
            if not (
                isinstance(node, ast.Call) and ast.unparse(node.func).endswith("add_docstr_all") and len(node.args) == 2
            ):
                continue
            name, doc = node.args[0], node.args[1]
            while isinstance(doc, ast.BinOp | ast.Call):  # "...".format(...), "..." + "..."
                doc = doc.left if isinstance(doc, ast.BinOp) else doc.func
                doc = doc.value if isinstance(doc, ast.Attribute) else doc
            if isinstance(name, ast.Constant) and isinstance(doc, ast.Constant) and isinstance(doc.value, str):
                lines = [line for line in doc.value.strip().splitlines() if line.startswith(f"{name.value}(")]
                returns = [line.rpartition("->")[2].strip() if "->" in line else "" for line in lines]
                if returns:
                    found[str(name.value)] = Sig(tuple(Returns(r, tensor=r == "Tensor") for r in returns))
        return found


def returns_tensor(sig: Sig) -> bool:
    return not sig.raises and bool(sig.returns) and all(r.tensor for r in sig.returns)


def named_fields(sig: Sig) -> tuple[str, ...]:
    """The fields of the one named tuple of tensors the overloads return, if there is exactly one."""
    fields = {r.fields for r in sig.returns if r.fields}
    return fields.pop() if len(fields) == 1 and not sig.raises else ()


def facts(stubs: Stubs, ndarray_names: Iterable[str]) -> Facts:
    functions = {name: sig for module in FUNCTION_MODULES for name, sig in stubs.public_functions(module).items()}
    methods = stubs.tensor_methods()
    tensor_methods = sorted(name for name, sig in methods.items() if returns_tensor(sig))
    fields = {name: list(named_fields(sig)) for name, sig in {**functions, **methods}.items() if named_fields(sig)}
    numpy = set(ndarray_names)
    return {
        "tensor_functions": sorted(name for name, sig in functions.items() if returns_tensor(sig)),
        "tensor_methods": tensor_methods,
        "torch_only_methods": [name for name in tensor_methods if name not in numpy and name not in NOT_TORCH_ONLY],
        "tensor_fields": dict(sorted(fields.items())),
    }


def about(stubs: Stubs, generated: Facts, version: str, numpy_version: str) -> dict[str, str]:
    """The provenance comment of each generated key."""
    schema_ops = ", ".join(sorted(stubs.schema_modules_used))
    made = f"Generated by `{COMMAND}` from the torch {version} wheel, read statically; do not edit by hand."
    schemas = f" {schema_ops} have no stubs: their ops' returns come from {SCHEMAS}." if schema_ops else ""
    wrappers = ", ".join(sorted(stubs.typed_by["schema"] & set(generated["tensor_functions"])))
    documented = ", ".join(sorted(stubs.typed_by["docs"] & set(generated["tensor_methods"])))
    return {
        "_about_tensor_functions": (
            f"{made} Public functions whose every overload returns exactly Tensor (not a tuple, named tuple, "
            "Optional or list): torch (torch/_C/_VariableFunctions.pyi, torch/functional.py, torch/__init__.py), "
            "torch.linalg, torch.fft and torch.special (their __init__.py), torch.nn.functional "
            f"(torch/nn/functional.pyi, torch/_C/_nn.pyi).{schemas}"
            + (
                f" Unannotated wrappers in torch/functional.py take their ATen op's schema: {wrappers}."
                if wrappers
                else ""
            )
            + " Functions whose body only raises (removed APIs) are left out."
        ),
        "_about_tensor_methods": (
            f"{made} Public methods of torch.Tensor (TensorBase in torch/_C/__init__.pyi, overridden by "
            "torch/_tensor.py), in-place x_ variants included, whose every overload returns Tensor or Self."
            + (
                f" Without a stub, typed by their docs' signatures in torch/_tensor_docs.py: {documented}."
                if documented
                else ""
            )
        ),
        "_about_torch_only_methods": (
            f"{made} The tensor_methods that numpy {numpy_version}'s ndarray does not have (dir(numpy.ndarray)), "
            "less the names other libraries' objects have too (NOT_TORCH_ONLY in the tool, each with its reason): "
            "an object of unknown type with one of these methods is a tensor."
        ),
        "_about_tensor_fields": (
            f"{made} Function (qualified) or Tensor method (bare name) -> the fields, in order, of the named tuple "
            "it returns, when every field is a Tensor: torch.return_types in torch/return_types.pyi, and the named "
            f"returns in the schemas of {schema_ops or 'the ops without stubs'}."
        ),
    }


# The JSON file: only the generated keys are rewritten, in the file's own style.

GENERATED_ORDER = ("tensor_functions", "tensor_methods", "tensor_attributes", "torch_only_methods", "tensor_fields")
WIDTH = 120


def top_level_spans(text: str) -> dict[str, tuple[int, int, int]]:
    """Key -> (where its line starts, where its value starts, where its value ends)."""
    decoder = json.JSONDecoder()
    spans: dict[str, tuple[int, int, int]] = {}
    index = text.index("{") + 1
    while True:
        index = _skip_space(text, index)
        if text[index] == "}":
            return spans
        key, key_end = decoder.raw_decode(text, index)
        line_start = text.rindex("\n", 0, index) + 1
        value_start = _skip_space(text, text.index(":", key_end) + 1)
        _, value_end = decoder.raw_decode(text, value_start)
        spans[key] = (line_start, value_start, value_end)
        index = _skip_space(text, value_end)
        if text[index] == ",":
            index += 1


def _skip_space(text: str, index: int) -> int:
    while text[index] in " \t\r\n":
        index += 1
    return index


def render(value: object, indent: int = 2) -> str:
    """A list wrapped at WIDTH like the hand-written keys; a dict one entry a line; the rest on one line."""
    pad = " " * (indent + 2)
    if isinstance(value, list) and value and len(json.dumps(value)) + indent + 30 > WIDTH:
        lines: list[str] = []
        items = [json.dumps(item) for item in value]
        for position, item in enumerate(items):
            piece = item + ("," if position < len(items) - 1 else "")
            if lines and len(pad) + len(lines[-1]) + 1 + len(piece) <= WIDTH:
                lines[-1] += " " + piece
            else:
                lines.append(piece)
        return "[\n" + "\n".join(pad + line for line in lines) + "\n" + " " * indent + "]"
    if isinstance(value, dict) and value:
        entries = [f"{pad}{json.dumps(key)}: {render(item, indent + 2)}" for key, item in value.items()]
        return "{\n" + ",\n".join(entries) + "\n" + " " * indent + "}"
    return json.dumps(value)


def update_text(text: str, updates: dict[str, object]) -> str:
    """`text` with each key of `updates` set; new keys go after their neighbour in GENERATED_ORDER.

    A comment key `_about_K` sits right before K.
    """
    for key, value in updates.items():
        spans = top_level_spans(text)
        if key in spans:
            _, start, end = spans[key]
            text = text[:start] + render(value) + text[end:]
            continue
        entry = f"  {json.dumps(key)}: {render(value)},\n"
        if key.startswith("_about_") and key.removeprefix("_about_") in spans:
            at = spans[key.removeprefix("_about_")][0]
        else:
            before = (
                [k for k in GENERATED_ORDER[: GENERATED_ORDER.index(key)] if k in spans]
                if key in GENERATED_ORDER
                else []
            )
            if not before:
                raise SystemExit(f"tensor_api: no place for {key!r} in the file")
            last = spans[before[-1]][2]
            at = text.index("\n", last) + 1
        text = text[:at] + entry + text[at:]
    return text


def write_facts(path: Path, generated: Facts, comments: dict[str, str], check: bool = False) -> bool:
    """Rewrite the generated keys of `path`; True when the file changed (with check: would change)."""
    old = path.read_text(encoding="utf-8")
    updates: dict[str, object] = {}
    for key, value in generated.items():
        updates[key] = value
        updates[f"_about_{key}"] = comments[f"_about_{key}"]
    new = update_text(old, updates)
    before, after = json.loads(old), json.loads(new)
    kept = [key for key in before if key not in updates]
    assert [key for key in after if key in before] == list(before), "the order of the keys changed"
    assert all(before[key] == after[key] for key in kept), "a key the tool does not own changed"
    if new != old and not check:
        path.write_text(new, encoding="utf-8")
    return new != old


# The installation


def locate(spec: Path) -> tuple[Path, Path | None]:
    """The torch package directory and the environment's python, from any of the accepted paths."""
    candidates = [spec, spec / "torch"]
    venv = spec if spec.is_dir() else spec.parent.parent
    candidates += [path / "torch" for path in sorted(venv.glob("lib/python*/site-packages"))]
    torch_dir = next((c for c in candidates if (c / "__init__.py").is_file() and c.name == "torch"), None)
    if torch_dir is None:
        raise SystemExit(f"tensor_api: no torch package in {spec}")
    if spec.is_file():
        return torch_dir, spec
    site = torch_dir.parent  # <venv>/lib/pythonX.Y/site-packages: the venv's python has the numpy
    python = site.parent.parent.parent / "bin" / "python"
    return torch_dir, python if site.name == "site-packages" and python.exists() else None


def ndarray_names(python: Path) -> tuple[str, list[str]]:
    """numpy's version and dir(numpy.ndarray), asked of `python` (numpy is imported there, torch never)."""
    code = "import json, numpy; print(json.dumps([numpy.__version__, dir(numpy.ndarray)]))"
    out = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True, check=True, timeout=120)
    version, names = json.loads(out.stdout)
    return version, names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "torch", nargs="?", type=Path, default=DEFAULT_TORCH, help="torch dir, site-packages, venv or python"
    )
    parser.add_argument("--output", type=Path, default=OUTPUT, help="the JSON file to update")
    parser.add_argument("--numpy-python", type=Path, help="a python with numpy (default: the environment's)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale; write nothing")
    args = parser.parse_args(argv)
    torch_dir, python = locate(args.torch)
    python = args.numpy_python or python
    if python is None:
        raise SystemExit("tensor_api: no python found next to torch for numpy; pass --numpy-python")
    numpy_version, names = ndarray_names(python)
    stubs = Stubs(torch_dir)
    version = stubs.version()
    generated = facts(stubs, names)
    changed = write_facts(args.output, generated, about(stubs, generated, version, numpy_version), check=args.check)
    for key, value in generated.items():
        print(f"{key}: {len(value)}")
    for source, typed in stubs.typed_by.items():
        print(f"typed by the {source}: {', '.join(sorted(typed)) or '-'}")
    if args.check and changed:
        print(f"{args.output} is stale: run {COMMAND}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
