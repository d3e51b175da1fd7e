#!/usr/bin/env python3
"""List the public API that was removed, renamed or changed between two torch installations.

    python3 tools/api_diff.py OLD NEW [--format md|json] [--output FILE] [--module-prefix torch.distributed ...]
                              [--include-unlisted] [--collapse MODULE ...] [--removals-json FILE] [--package torch]
                              [--also-package functorch]

OLD and NEW are each a site-packages directory (or any directory holding `torch/`), the `torch` package
directory itself, a virtual environment, a venv's python executable, or a `.whl` file (read in place
with zipfile, never extracted). Nothing is imported: the `.py` and `.pyi` files are parsed with `ast`, so
any release can be compared on any machine, in seconds.

What is public:
- Modules: `torch` and every module whose dotted path has no component starting with `_`. Private
  modules (`torch._C`, `torch._tensor`, `torch.testing._internal`) are read only when a public name
  points into them.
- Names of a module: those its `__all__` lists when `__all__` is a literal (lists, tuples, `+=`, `.append`,
  `.extend`, `other_module.__all__`). When `__all__` is absent, or also grows at run time (torch/__init__.py
  appends every name of `dir(_C._VariableFunctions)` in a loop), the module's top-level functions and
  classes not starting with `_` count too, plus names pulled in by `import *`, plus `from x import y` in a
  package `__init__` or written `from x import y as y`. Variables count only when `__all__` names them
  (`torch.distributed.config.pipeline_per_edge_p2p`). With --include-unlisted the top-level functions and
  classes a literal `__all__` leaves out are compared too, and reported apart.
- Members of public classes: methods, properties and class-level attributes not starting with `_`, plus
  `__init__`, `__new__` and `__call__`. Inherited members count when the base class itself is not exported
  by any public module: that is how `torch.Tensor` gets the methods of `TensorBase` from
  torch/_C/__init__.pyi.

C-implemented functions exist only in stubs: `torch.cholesky` is defined in torch/_C/_VariableFunctions.pyi
and reaches `torch` through `from torch._C._VariableFunctions import *` (under `if TYPE_CHECKING:`; the
runtime loop over `dir(_C._VariableFunctions)` adds the same names). Blocks under `if`, `try` and `with` are
followed, so the star import is seen and its `__all__` gives the names. A module with both a `.py` and a
`.pyi` (torch/nn/functional) takes its names from the `.py`; the stub adds the names the `.py` lacks, and its
`def` replaces a `.py` name that is only an assignment (`conv2d = _add_docstr(...)`). Overloads in a stub are
compared together: only a parameter no overload has any more, or one every new overload requires, is
reported. In a `.py` file the implementation, not its `@overload`s, gives the signature.

Removed, yet still defined: torch 2.14 keeps `torch.cholesky` as a function that only raises, and
`Tensor.cholesky` as a method that only returns a call of it. A function whose body always raises (not
NotImplementedError), or only forwards to one that does, is reported as removed.

A module-level `__getattr__` (PEP 562) may serve names lazily: a name that disappears from such a module
but is written as a string in one of its dict, list, tuple or set displays is taken as still there
(torch.utils.mkldnn builds its Mkldnn* classes on first use in 2.14), and its members are not compared.

Not seen: names created at run time (`globals()[name] = ...`, `setattr`), objects replaced by values the
analysis cannot follow (`apply = _C._FunctionBase.__dict__["apply"]`: such kind changes are not reported),
instance attributes set in `__init__`, decorators that change a signature, and annotation changes (types
are not compared). `torch.TensorBase` is bound by `from torch._C import *` but deleted at run time; it is
left out by name. Renames, renamed parameters and made-private names are guesses: a removed name paired
with an added one in the same module or class with a similar name or an identical signature, or a `_name`
that appeared; renames are marked heuristic.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import difflib
import json
import shlex
import subprocess
import sys
import time
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

# Change kinds that make old code fail (the machine-readable removals list holds only these).
REMOVAL_CHANGES = ("removed", "renamed", "made-private", "parameter-removed", "parameter-renamed")
CHANGE_ORDER = (
    *REMOVAL_CHANGES,
    "kind-changed",
    "parameter-added-required",
    "default-removed",
    "default-changed",
    "parameter-kind-changed",
    "parameter-moved",
)
# Dunder methods that are part of how a class is used, so their signatures count as public.
PUBLIC_DUNDERS = frozenset({"__init__", "__new__", "__call__"})
FUNCTION_KINDS = frozenset({"function", "method", "staticmethod", "classmethod"})
MAX_DEPTH = 40  # re-export chains are short; this only stops cycles
# Names the source binds but the running module deletes: torch/__init__.py star-imports torch._C, then
# `delattr`s TensorBase in a loop over dir(_C), which static analysis cannot follow.
HIDDEN_AT_RUNTIME = frozenset({"torch.TensorBase"})


# --- Reading an installation -------------------------------------------------------------------


@dataclass
class Tree:
    """The `.py`/`.pyi` files of one installed package, read lazily (a wheel is never extracted)."""

    label: str
    version: str
    modules: dict[str, dict[str, str]]  # module name -> {".py" | ".pyi": file name for `read`}
    read: Callable[[str], bytes]
    close: Callable[[], None] = lambda: None


def module_name(relpath: str) -> str | None:
    """`torch/nn/functional.pyi` -> `torch.nn.functional`; None for files that cannot be imported."""
    parts = relpath.split("/")
    stem, _, _ = parts[-1].rpartition(".")
    parts = parts[:-1] if stem == "__init__" else [*parts[:-1], stem]
    return ".".join(parts) if all(p.isidentifier() for p in parts) else None


def index_files(names: Iterable[str], packages: tuple[str, ...]) -> dict[str, dict[str, str]]:
    modules: dict[str, dict[str, str]] = defaultdict(dict)
    for name in names:
        relpath = name.replace("\\", "/")
        if relpath.split("/")[0] not in packages or not relpath.endswith((".py", ".pyi")):
            continue
        module = module_name(relpath)
        if module is not None:
            modules[module]["." + relpath.rpartition(".")[2]] = name
    return dict(modules)


def version_from(names: Iterable[str], read: Callable[[str], bytes], package: str) -> str:
    """The release, from the `.dist-info` directory name, else from `<package>/version.py`."""
    for name in names:
        head = name.split("/")[0]
        if head.startswith(package + "-") and head.endswith(".dist-info"):
            return head[len(package) + 1 : -len(".dist-info")]
    try:
        tree = ast.parse(read(f"{package}/version.py"))
    except (KeyError, OSError, SyntaxError):
        return "unknown"
    for node in tree.body:
        is_version = isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__version__" for t in node.targets)
        if is_version and isinstance(node.value, ast.Constant):
            return str(node.value.value)
    return "unknown"


def open_wheel(path: Path, package: str, also: tuple[str, ...] = ()) -> Tree:
    archive = zipfile.ZipFile(path)
    names = archive.namelist()
    version = version_from(names, archive.read, package)
    return Tree(str(path), version, index_files(names, (package, *also)), archive.read, archive.close)


def open_directory(root: Path, package: str, also: tuple[str, ...] = ()) -> Tree:
    """`root` is the directory that holds the package (site-packages); `also`: other top-level packages
    of the same distribution (functorch ships in the torch wheel)."""
    files = [p.relative_to(root).as_posix() for pkg in (package, *also) for p in (root / pkg).rglob("*.py*")]
    dist_infos = [p.name + "/" for p in root.glob(f"{package}-*.dist-info")]
    read = lambda name: (root / name).read_bytes()  # noqa: E731
    return Tree(str(root), version_from(dist_infos, read, package), index_files(files, (package, *also)), read)


def site_packages_of(python: Path) -> list[Path]:
    """Ask an interpreter where its packages live (this does not import torch)."""
    code = "import sysconfig as s; p = s.get_paths(); print(p['purelib']); print(p['platlib'])"
    out = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True, check=True, timeout=60)
    return [Path(line) for line in out.stdout.splitlines() if line]


def package_root(spec: Path, package: str) -> Path | None:
    """The directory holding `package`, from a site-packages, the package itself, a venv or its python."""
    if spec.is_dir() and spec.name == package and (spec / "__init__.py").exists():
        return spec.parent
    venv = spec if spec.is_dir() else spec.parent.parent
    candidates = [spec] if spec.is_dir() else []
    candidates += [*sorted(venv.glob("lib/python*/site-packages")), *venv.glob("Lib/site-packages")]
    found = next((c for c in candidates if (c / package / "__init__.py").exists()), None)
    if found is None and spec.is_file():  # an interpreter outside a venv layout: ask it
        found = next((c for c in site_packages_of(spec) if (c / package / "__init__.py").exists()), None)
    return found


def open_tree(spec: str, package: str, also: tuple[str, ...] = ()) -> Tree:
    path = Path(spec)
    if path.suffix == ".whl" and path.is_file():
        return open_wheel(path, package, also)
    root = package_root(path, package) if path.exists() else None
    if root is None:
        raise SystemExit(f"api_diff: no `{package}` package found in {spec}")
    return open_directory(root, package, also)


# --- Parsing one module ------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # positional-only, positional-or-keyword, var-positional, keyword-only, var-keyword
    default: str | None  # source text; None when the parameter is required

    def render(self) -> str:
        star = {"var-positional": "*", "var-keyword": "**"}.get(self.kind, "")
        return f"{star}{self.name}" + ("" if self.default is None else f"={self.default}")


Sig = tuple[Param, ...]


@dataclass
class Func:
    kind: str  # function, method, staticmethod, classmethod, property
    sigs: list[Sig]  # one, or a stub's overloads
    overloaded: bool = False
    raises: bool = False  # the body always raises: how torch keeps a removed function's name (torch.cholesky)
    forward: str | None = None  # `return f(...)` is all it does: f, a dotted name resolved in `forward_module`
    forward_module: str = ""


@dataclass
class Klass:
    bases: list[str]  # dotted source text, resolved later in the defining module
    members: dict[str, Binding]


@dataclass
class Var:
    pass


@dataclass
class FromImport:
    module: str
    name: str
    redundant: bool  # `from m import x as x`: the typing convention for a deliberate re-export


@dataclass
class ModRef:
    module: str


@dataclass
class Alias:
    dotted: str  # `name = other.name`, resolved later
    callable: bool = False  # `_add_docstr(f, ...)`: a function even when `f` cannot be found (C, no stub)


Binding = Func | Klass | Var | FromImport | ModRef | Alias


@dataclass
class ModuleInfo:
    name: str
    is_package: bool
    bindings: dict[str, Binding] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)  # modules star-imported, in order
    all_ops: list[tuple[str, ast.expr]] | None = None  # ("set" | "add" | "append", value) on `__all__`
    lazy_names: frozenset[str] = frozenset()  # what a module-level `__getattr__` may provide (PEP 562)


def dotted_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[str]:
    names = []
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        names.append(dotted_name(target) or "")
    return names


def signature(args: ast.arguments, drop_first: bool) -> Sig:
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    text = lambda d: None if d is None else ast.unparse(d)  # noqa: E731
    params = [
        Param(a.arg, "positional-only" if i < len(args.posonlyargs) else "positional-or-keyword", text(d))
        for i, (a, d) in enumerate(zip(positional, defaults, strict=True))
    ]
    if drop_first and params:
        params.pop(0)  # self / cls: never passed by the caller
    if args.vararg:
        params.append(Param(args.vararg.arg, "var-positional", None))
    params += [Param(a.arg, "keyword-only", text(d)) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg:
        params.append(Param(args.kwarg.arg, "var-keyword", None))
    return tuple(params)


def always_raises(body: list[ast.stmt]) -> bool:
    """Straight-line code ending in `raise` (NotImplementedError is an abstract method, not a removal)."""
    if not body or not isinstance(body[-1], ast.Raise) or body[-1].exc is None:
        return False
    exc = body[-1].exc.func if isinstance(body[-1].exc, ast.Call) else body[-1].exc
    straight = all(isinstance(s, ast.Expr | ast.Assign | ast.AnnAssign | ast.ImportFrom) for s in body[:-1])
    return straight and dotted_name(exc) != "NotImplementedError"


def forward_target(body: list[ast.stmt], module: str, is_package: bool) -> tuple[str, str] | None:
    """(module, dotted) of `f` when the body is only local imports and `return f(...)`: Tensor.cholesky
    in 2.14 forwards to a function that raises."""
    if not body or not isinstance(body[-1], ast.Return) or not isinstance(body[-1].value, ast.Call):
        return None
    target = dotted_name(body[-1].value.func)
    if target is None or not all(isinstance(s, ast.ImportFrom | ast.Expr) for s in body[:-1]):
        return None
    first, _, rest = target.partition(".")
    for stmt in body[:-1]:
        for alias in stmt.names if isinstance(stmt, ast.ImportFrom) else []:
            if (alias.asname or alias.name) == first:
                source = absolute_module(module, is_package, stmt.module, stmt.level)
                return source, ".".join(filter(None, (alias.name, rest)))
    return module, target


def add_function(
    scope: dict[str, Binding], node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool, info: ModuleInfo
) -> None:
    decorators = decorator_names(node)
    short = {d.rpartition(".")[2] for d in decorators}
    if any(d.endswith((".setter", ".deleter")) for d in decorators):
        return  # the property itself was recorded by its getter
    if "property" in short or "cached_property" in short:
        scope[node.name] = Func("property", [])
        return
    kind = "function"
    if in_class:
        kind = "staticmethod" if "staticmethod" in short else "classmethod" if "classmethod" in short else "method"
    sig = signature(node.args, drop_first=in_class and kind != "staticmethod")
    previous = scope.get(node.name)
    if "overload" in short:
        # In a .py file the implementation that follows replaces its overloads; a stub has only these.
        if isinstance(previous, Func) and previous.kind == kind and previous.overloaded:
            previous.sigs.append(sig)
        else:
            scope[node.name] = Func(kind, [sig], overloaded=True)
        return
    func = Func(kind, [sig], raises=always_raises(node.body))
    target = forward_target(node.body, info.name, info.is_package)
    if target and not target[1].startswith(("self.", "cls.", "super(")):
        func.forward_module, func.forward = target
    scope[node.name] = func


def dataclass_init(node: ast.ClassDef) -> Func | None:
    """The `__init__` a `@dataclass` or a NamedTuple gets from its annotated fields."""
    is_dataclass = any(d.rpartition(".")[2] == "dataclass" for d in decorator_names(node))
    is_namedtuple = any(dotted_name(b) in ("NamedTuple", "typing.NamedTuple") for b in node.bases)
    if not (is_dataclass or is_namedtuple):
        return None
    params = []
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if "ClassVar" in ast.unparse(stmt.annotation):
                continue
            default = stmt.value
            if isinstance(default, ast.Call) and dotted_name(default.func) in ("field", "dataclasses.field"):
                kw = {k.arg: k.value for k in default.keywords}
                default = kw.get("default") or kw.get("default_factory")
            text = None if default is None else ast.unparse(default)
            params.append(Param(stmt.target.id, "positional-or-keyword", text))
    return Func("method", [tuple(params)])


def absolute_module(current: str, is_package: bool, module: str | None, level: int) -> str:
    if level == 0:
        return module or ""
    parts = current.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*parts, module] if module else parts)


def aliased(value: ast.expr) -> Alias | None:
    """What an assignment makes an alias of: `y = x.f`, and torch's way of giving a C function its
    docstring, `cholesky = _add_docstr(_linalg.linalg_cholesky, "...")` (torch.linalg, torch.special)."""
    if isinstance(value, ast.Call) and (dotted_name(value.func) or "").endswith("add_docstr") and value.args:
        target = dotted_name(value.args[0])
        return Alias(target, callable=True) if target else None
    target = dotted_name(value)
    return Alias(target) if target else None


def mentions_all(nodes: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "__all__" for s in nodes for n in ast.walk(s))


class Collector:
    """Records the names a module (or class) body binds, following `if`/`try`/`with` blocks."""

    def __init__(self, info: ModuleInfo):
        self.info = info

    def body(self, stmts: list[ast.stmt], scope: dict[str, Binding], in_class: bool = False) -> None:
        for stmt in stmts:
            self.statement(stmt, scope, in_class)

    def statement(self, stmt: ast.stmt, scope: dict[str, Binding], in_class: bool) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            add_function(scope, stmt, in_class, self.info)
        elif isinstance(stmt, ast.ClassDef):
            scope[stmt.name] = self.klass(stmt)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            self.assignment(stmt, scope, in_class)
        elif isinstance(stmt, ast.Expr) and not in_class:
            self.all_call(stmt.value)
        elif isinstance(stmt, ast.Import | ast.ImportFrom) and not in_class:
            self.import_(stmt, scope)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    scope.pop(target.id, None)
        elif isinstance(stmt, ast.If):
            self.body(stmt.body, scope, in_class)
            self.body(stmt.orelse, scope, in_class)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            for block in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                self.body(block, scope, in_class)
        elif isinstance(stmt, ast.With):
            self.body(stmt.body, scope, in_class)
        elif isinstance(stmt, ast.For | ast.While) and not in_class and mentions_all(stmt.body):
            self.add_all("append", ast.Name("<loop>"))  # names added in a loop: unknown, so __all__ is open

    def klass(self, node: ast.ClassDef) -> Klass:
        members: dict[str, Binding] = {}
        self.body(node.body, members, in_class=True)
        init = dataclass_init(node)
        if init is not None and "__init__" not in members:
            members["__init__"] = init
        return Klass([b for b in map(dotted_name, node.bases) if b], members)

    def assignment(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: dict[str, Binding], in_class: bool):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        for t in targets:
            if isinstance(t, ast.Tuple):
                names += [e.id for e in t.elts if isinstance(e, ast.Name)]
        if "__all__" in names and not in_class and stmt.value is not None:
            self.add_all("add" if isinstance(stmt, ast.AugAssign) else "set", stmt.value)
            return
        if isinstance(stmt, ast.AugAssign):
            return
        alias = aliased(stmt.value) if stmt.value is not None and len(names) == 1 else None
        for name in names:
            scope[name] = alias or Var()

    def all_call(self, expr: ast.expr) -> None:
        """`__all__.append(...)` / `__all__.extend(...)`."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.args):
            return
        if dotted_name(expr.func.value) == "__all__" and expr.func.attr in ("append", "extend"):
            self.add_all("append" if expr.func.attr == "append" else "add", expr.args[0])

    def add_all(self, op: str, value: ast.expr) -> None:
        if self.info.all_ops is None:
            self.info.all_ops = []
        self.info.all_ops.append((op, value))

    def import_(self, stmt: ast.Import | ast.ImportFrom, scope: dict[str, Binding]) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    scope[alias.asname] = ModRef(alias.name)
                else:
                    top = alias.name.split(".")[0]
                    scope[top] = ModRef(top)
            return
        source = absolute_module(self.info.name, self.info.is_package, stmt.module, stmt.level)
        for alias in stmt.names:
            if alias.name == "*":
                self.info.stars.append(source)
            else:
                scope[alias.asname or alias.name] = FromImport(source, alias.name, alias.asname == alias.name)


def parse_module(name: str, is_package: bool, source: bytes) -> ModuleInfo:
    info = ModuleInfo(name, is_package)
    tree = ast.parse(source)
    Collector(info).body(tree.body, info.bindings)
    if isinstance(info.bindings.get("__getattr__"), Func):
        info.lazy_names = listed_strings(tree)
    return info


def listed_strings(tree: ast.Module) -> frozenset[str]:
    """Identifiers written as strings in a dict, list, tuple or set display: the names a module-level
    `__getattr__` serves lazily are kept in one (torch.utils.mkldnn in 2.14 builds its classes on demand)."""
    names = set()
    for node in ast.walk(tree):
        elements = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", [])
        if isinstance(node, ast.Dict | ast.List | ast.Tuple | ast.Set):
            names |= {e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return frozenset(n for n in names if n.isidentifier())


def merge_stub(py: ModuleInfo, pyi: ModuleInfo) -> ModuleInfo:
    """Runtime names come from the .py; the stub adds the names it lacks and says what its plain values are."""
    merge_scopes(py.bindings, pyi.bindings)
    py.stars += [s for s in pyi.stars if s not in py.stars]
    if py.all_ops is None:
        py.all_ops = pyi.all_ops
    return py


def merge_scopes(runtime: dict[str, Binding], stub: dict[str, Binding]) -> None:
    for name, binding in stub.items():
        current = runtime.get(name)
        if current is None or isinstance(current, Var):  # the stub says what a runtime value is
            runtime[name] = binding
        elif isinstance(current, Klass) and isinstance(binding, Klass):
            merge_scopes(current.members, binding.members)


# --- Resolving names ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Sym:
    """What a public name resolves to: where it is defined and what it is."""

    origin: str  # defining module
    qualname: str
    binding: Binding | None  # None: a name `__all__` lists but the analysis cannot see (set at run time)

    @property
    def is_module(self) -> bool:
        return isinstance(self.binding, ModRef)

    @property
    def key(self) -> str:
        return f"{self.origin}:{self.qualname}"


def is_private_module(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


class Api:
    """The public names of one installation, computed on demand (private modules are parsed only when
    a public name points into them)."""

    def __init__(
        self,
        tree: Tree,
        package: str,
        warn: Callable[[str], None],
        include_unlisted: bool = False,
        also: tuple[str, ...] = (),
    ):
        self.tree = tree
        self.package = package
        self.packages = (package, *also)  # top-level packages whose public modules count
        self.warn = warn
        self._modules: dict[str, ModuleInfo | None] = {}
        self._stars: dict[str, list[str]] = {}
        self._exports: dict[str, dict[str, tuple[Sym, bool]]] = {}
        self._all: dict[str, tuple[list[str], bool] | None] = {}
        self._public_classes: set[str] | None = None
        self.include_unlisted = include_unlisted

    def module(self, name: str) -> ModuleInfo | None:
        if name not in self._modules:
            self._modules[name] = self._parse(name)
        return self._modules[name]

    def _parse(self, name: str) -> ModuleInfo | None:
        files = self.tree.modules.get(name)
        if not files:
            return None
        is_package = any(f.rsplit("/", 1)[-1].startswith("__init__.") for f in files.values())
        parsed = {}
        for suffix, path in files.items():
            try:
                parsed[suffix] = parse_module(name, is_package, self.tree.read(path))
            except (SyntaxError, ValueError) as exc:
                self.warn(f"{path}: not parsed ({exc})")
        if ".py" in parsed and ".pyi" in parsed:
            return merge_stub(parsed[".py"], parsed[".pyi"])
        return parsed.get(".py") or parsed.get(".pyi")

    def is_module(self, name: str) -> bool:
        return name in self.tree.modules

    def lookup(self, module: str, name: str, depth: int = 0) -> Sym | None:
        """The definition behind `module.name`, following imports, aliases and star imports."""
        info = self.module(module)
        if info is None or depth > MAX_DEPTH:
            return None
        binding = info.bindings.get(name)
        if binding is not None:
            return self.resolve_binding(module, name, binding, depth)
        for star in reversed(info.stars):
            if name in self.star_names(star):
                return self.lookup(star, name, depth + 1)
        if self.is_module(f"{module}.{name}"):
            return Sym(f"{module}.{name}", "", ModRef(f"{module}.{name}"))
        return None

    def resolve_binding(self, module: str, name: str, binding: Binding, depth: int) -> Sym | None:
        if isinstance(binding, ModRef):
            return Sym(binding.module, "", binding)
        if isinstance(binding, FromImport):
            child = f"{binding.module}.{binding.name}"
            if self.is_module(child):
                return Sym(child, "", ModRef(child))
            return self.lookup(binding.module, binding.name, depth + 1)
        if isinstance(binding, Alias):
            target = self.resolve_dotted(module, binding.dotted, depth + 1)
            if target is None:  # not found in this package: a value, or a C function without a stub
                return Sym(module, name, Func("function", []) if binding.callable else Var())
            return target
        return Sym(module, name, binding)

    def resolve_dotted(self, module: str, dotted: str, depth: int = 0) -> Sym | None:
        first, *rest = dotted.split(".")
        sym = self.lookup(module, first, depth)
        if sym is None and first in self.packages:
            sym = Sym(first, "", ModRef(first))  # the package is always importable by its name
        for part in rest:
            if sym is None:
                return None
            sym = self.attribute(sym, part, depth + 1)
        return sym

    def attribute(self, sym: Sym, name: str, depth: int) -> Sym | None:
        if sym.is_module:
            child = f"{sym.origin}.{name}"
            return Sym(child, "", ModRef(child)) if self.is_module(child) else self.lookup(sym.origin, name, depth)
        if isinstance(sym.binding, Klass):
            return self.class_members(sym, inherited="all", depth=depth).get(name)
        return None

    def star_names(self, module: str) -> list[str]:
        """The names `from module import *` binds."""
        if module not in self._stars:
            self._stars[module] = []  # a cycle sees an empty list
            info = self.module(module)
            if info is not None:
                declared = self.all_names(module)
                names = set(declared[0]) if declared else set()
                if declared is None or declared[1]:
                    names |= {n for n in info.bindings if not n.startswith("_")}
                    names |= {n for s in info.stars for n in self.star_names(s) if not n.startswith("_")}
                self._stars[module] = sorted(names)
        return self._stars[module]

    def all_names(self, module: str) -> tuple[list[str], bool] | None:
        """`__all__` as far as it can be read without running the module, and whether it is open
        (extended at run time by names the source does not spell out)."""
        if module not in self._all:
            self._all[module] = None  # a cycle through `other.__all__` sees no `__all__`
            self._all[module] = self._read_all(module)
        return self._all[module]

    def _read_all(self, module: str) -> tuple[list[str], bool] | None:
        info = self.module(module)
        if info is None or info.all_ops is None:
            return None
        names: list[str] = []
        is_open = False
        for op, value in info.all_ops:
            if op == "append":
                value = ast.List([value])
            part, part_open = self.all_value(module, value, names)
            is_open |= part_open
            names = part if op == "set" else names + part
        return list(dict.fromkeys(names)), is_open

    def all_value(self, module: str, value: ast.expr, current: list[str]) -> tuple[list[str], bool]:
        """The names an expression assigned to `__all__` holds; `current`: `__all__` so far."""
        if isinstance(value, ast.List | ast.Tuple):
            names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            return names, len(names) != len(value.elts)
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            left, right = self.all_value(module, value.left, current), self.all_value(module, value.right, current)
            return left[0] + right[0], left[1] or right[1]
        if isinstance(value, ast.Name) and value.id == "__all__":
            return current, False
        if isinstance(value, ast.Attribute) and value.attr == "__all__":
            target = self.resolve_dotted(module, dotted_name(value.value) or "")
            if target is not None and target.is_module and self.is_module(target.origin):
                declared = self.all_names(target.origin)
                return declared if declared else (self.star_names(target.origin), False)
            return [], False  # another package's names (e.g. the standard library): not torch's API
        return [], True

    def exports(self, module: str) -> dict[str, tuple[Sym, bool]]:
        """The public names of a public module: what each is, and whether it is public by the module's
        own account (False: a top-level name that a closed `__all__` leaves out, with include_unlisted)."""
        if module not in self._exports:
            self._exports[module] = self._compute_exports(module)
        return self._exports[module]

    def _compute_exports(self, module: str) -> dict[str, tuple[Sym, bool]]:
        info = self.module(module)
        if info is None:
            return {}
        declared = self.all_names(module)
        listed = declared[0] if declared else []
        names = list(listed)
        if declared is None or declared[1] or self.include_unlisted:
            names += [n for n, b in info.bindings.items() if self.exported_binding(info, n, b)]
            names += [n for s in info.stars for n in self.star_names(s) if not n.startswith("_")]
        result = {}
        for name in dict.fromkeys(names):
            sym = self.lookup(module, name)
            if sym is None and name in listed:
                sym = Sym(module, name, None)
            if sym is None or sym.is_module or (isinstance(sym.binding, Var) and name not in listed):
                continue  # modules are compared as modules; variables only when `__all__` names them
            if f"{module}.{name}" not in HIDDEN_AT_RUNTIME:
                result[name] = (sym, declared is None or declared[1] or name in listed)
        return result

    def public_classes(self) -> set[str]:
        """Classes some public module exports: subclasses do not repeat their members."""
        if self._public_classes is None:
            self._public_classes = {
                sym.key
                for module in public_modules(self, [])
                for sym, _ in self.exports(module).values()
                if isinstance(sym.binding, Klass)
            }
        return self._public_classes

    @staticmethod
    def exported_binding(info: ModuleInfo, name: str, binding: Binding) -> bool:
        if name.startswith("_") or isinstance(binding, ModRef):
            return False
        if isinstance(binding, FromImport):
            return info.is_package or binding.redundant  # a plain module's imports are its own business
        return True

    def class_members(self, sym: Sym, inherited: str, depth: int = 0) -> dict[str, Sym]:
        """A class's members. inherited="private": also those of bases no public module exports (Tensor
        gets TensorBase's methods from torch/_C/__init__.pyi); "all": every base's."""
        assert isinstance(sym.binding, Klass)
        members: dict[str, Sym] = {}
        if depth <= MAX_DEPTH:
            for base in sym.binding.bases:
                base_sym = self.resolve_dotted(sym.origin, base, depth + 1)
                if base_sym is None or not isinstance(base_sym.binding, Klass) or base_sym.key == sym.key:
                    continue
                if inherited == "all" or base_sym.key not in self.public_classes():
                    members.update(self.class_members(base_sym, inherited, depth + 1))
        for name, binding in sym.binding.members.items():
            qualname = f"{sym.qualname}.{name}"
            if isinstance(binding, Alias):
                target = sym.binding.members.get(binding.dotted)
                binding = target if isinstance(target, Func) else Var()
            if isinstance(binding, Func | Klass | Var):
                members[name] = Sym(sym.origin, qualname, binding)
        return members

    def raises(self, sym: Sym, depth: int = 0) -> bool:
        """Calling it always raises, itself or through the function it forwards to."""
        func = sym.binding
        if not isinstance(func, Func) or depth > MAX_DEPTH:
            return False
        if func.raises or func.forward is None:
            return func.raises
        target = self.resolve_dotted(func.forward_module, func.forward, depth + 1)
        return target is not None and target.key != sym.key and self.raises(target, depth + 1)


# --- The public surface ------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    path: str  # public dotted path
    module: str  # the public module the path starts in
    kind: str
    sigs: tuple[Sig, ...]
    key: str  # origin module + qualname: the same object under several public paths shares it
    raises: bool = False
    listed: bool = True  # False: outside a closed `__all__` (only with include_unlisted)


def kind_of(binding: Binding | None, is_member: bool) -> str:
    if isinstance(binding, Func):
        return binding.kind
    if isinstance(binding, Klass):
        return "class"
    if isinstance(binding, Var):
        return "attribute" if is_member else "variable"
    return "name"


def is_public_member(name: str) -> bool:
    return not name.startswith("_") or name in PUBLIC_DUNDERS


def public_modules(api: Api, prefixes: list[str]) -> list[str]:
    modules = [m for m in api.tree.modules if m.split(".")[0] in api.packages and not is_private_module(m)]
    if prefixes:
        modules = [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]
    return sorted(modules)


def surface(api: Api, prefixes: list[str]) -> dict[str, Item]:
    items: dict[str, Item] = {}
    for module in public_modules(api, prefixes):
        for name, (sym, listed) in api.exports(module).items():
            add_item(api, items, f"{module}.{name}", module, sym, listed)
    return items


def add_item(api: Api, items: dict[str, Item], path: str, module: str, sym: Sym, listed: bool) -> None:
    sigs = tuple(sym.binding.sigs) if isinstance(sym.binding, Func) else ()
    is_member = path.count(".") > module.count(".") + 1
    items[path] = Item(path, module, kind_of(sym.binding, is_member), sigs, sym.key, api.raises(sym), listed)
    if isinstance(sym.binding, Klass) and path.count(".") - module.count(".") <= 3:  # nested classes, bounded
        for name, member in api.class_members(sym, inherited="private").items():
            if is_public_member(name):
                add_item(api, items, f"{path}.{name}", module, member, listed)


def private_twin(api: Api, item: Item) -> str | None:
    """`reduce_event` gone and `_reduce_event` (or `__reduce_event`) present: the name was made private."""
    parent, _, name = item.path.rpartition(".")
    for private in (f"_{name}", f"__{name}"):
        if parent == item.module:
            found = api.lookup(parent, private)
        else:
            owner = api.resolve_dotted(item.module, parent[len(item.module) + 1 :])
            found = api.attribute(owner, private, 0) if owner and isinstance(owner.binding, Klass) else None
        if found is not None:
            return f"{parent}.{private}"
    return None


def still_reachable(api: Api, item: Item) -> bool:
    """A member that moved up into a public base class is still there for callers, and so is a name the
    module's `__getattr__` serves."""
    if item.path.count(".") == item.module.count(".") + 1:
        info = api.module(item.module)
        return info is not None and item.path.rpartition(".")[2] in info.lazy_names
    return api.resolve_dotted(item.module, item.path[len(item.module) + 1 :]) is not None


# --- Comparing ---------------------------------------------------------------------------------


@dataclass
class Entry:
    change: str
    name: str
    kind: str
    module: str
    old_signature: str | None = None
    new_signature: str | None = None
    new_name: str | None = None
    parameter: str | None = None
    detail: str | None = None
    heuristic: bool = False
    aliases: list[str] = field(default_factory=list)
    origin: str = ""  # where OLD defines it, `module:qualname` (TensorBase's methods live in torch._C)
    listed: bool = True  # False: the module's `__all__` leaves the name out (only with --include-unlisted)


def render_sig(item: Item | None) -> str | None:
    if item is None or not item.sigs:
        return None
    short = item.path.rsplit(".", 1)[-1]
    return " | ".join(short + render_params(sig) for sig in item.sigs)


def render_params(sig: Sig) -> str:
    parts: list[str] = []
    for i, p in enumerate(sig):
        if p.kind == "keyword-only" and not any(q.kind in ("keyword-only", "var-positional") for q in sig[:i]):
            parts.append("*")
        parts.append(p.render())
        if p.kind == "positional-only" and (i + 1 == len(sig) or sig[i + 1].kind != "positional-only"):
            parts.append("/")
    return "(" + ", ".join(parts) + ")"


def similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def is_positional(p: Param) -> bool:
    return p.kind in ("positional-only", "positional-or-keyword")


def pair_renamed_params(removed: list[Param], added: list[Param], old: Sig, new: Sig) -> list[tuple[Param, Param]]:
    """Heuristic: a removed and an added parameter of the same kind at the same position, or with
    similar names, or the only two with the same default."""
    old_pos = [p.name for p in old if is_positional(p)]
    new_pos = [p.name for p in new if is_positional(p)]
    scored = []
    for r in removed:
        for a in added:
            if r.kind != a.kind:
                continue
            same_place = is_positional(r) and old_pos.index(r.name) == new_pos.index(a.name)
            only_pair = len(removed) == len(added) == 1 and r.default == a.default and r.default is not None
            score = similarity(r.name, a.name) + (1 if same_place else 0) + (0.5 if only_pair else 0)
            if score >= 0.6:
                scored.append((score, r, a))
    pairs, used = [], set()
    for _, r, a in sorted(scored, key=lambda s: -s[0]):
        if r.name not in used and a.name not in used:
            used |= {r.name, a.name}
            pairs.append((r, a))
    return pairs


def diff_params(old: Sig, new: Sig) -> list[tuple[str, str, str]]:
    """(change, parameter, detail) for one signature against another."""
    old_by, new_by = {p.name: p for p in old}, {p.name: p for p in new}
    removed = [p for p in old if p.name not in new_by]
    added = [p for p in new if p.name not in old_by]
    changes = []
    renamed = {}
    for r, a in pair_renamed_params(removed, added, old, new):
        changes.append(("parameter-renamed", r.name, f"`{r.name}` → `{a.name}` (heuristic)"))
        removed.remove(r)
        added.remove(a)
        renamed[r.name] = a.name
    absorbed = any(p.kind == "var-keyword" for p in new)
    for p in removed:
        changes.append(("parameter-removed", p.name, "now only accepted through **kwargs" if absorbed else ""))
    required = [p.name for p in added if p.default is None and p.kind not in ("var-positional", "var-keyword")]
    changes += [("parameter-added-required", name, "") for name in required]
    for name in [p.name for p in old if p.name in new_by]:
        changes += compare_param(old_by[name], new_by[name])
    changes += moved_params(old, new, renamed, {p.name for p in removed} | set(required))
    return changes


def compare_param(old: Param, new: Param) -> list[tuple[str, str, str]]:
    changes = []
    if old.kind != new.kind:
        changes.append(("parameter-kind-changed", old.name, f"{old.kind} → {new.kind}"))
    if old.default is not None and new.default is None and new.kind not in ("var-positional", "var-keyword"):
        changes.append(("default-removed", old.name, f"was `{old.default}`, now required"))
    elif old.default != new.default and not {old.default, new.default} & {None, "..."}:
        # (`...` in a stub means "has a default", value unknown)
        changes.append(("default-changed", old.name, f"`{old.default}` → `{new.default}`"))
    return changes


def moved_params(old: Sig, new: Sig, renamed: dict[str, str], reported: set[str]) -> list[tuple[str, str, str]]:
    """Positional parameters at another position, so calls that pass them by position change meaning;
    one entry per signature. Shifts caused by a parameter already reported (removed, added required)
    are not moves; an optional parameter inserted before them is."""
    old_pos = [renamed.get(p.name, p.name) for p in old if is_positional(p)]
    new_pos = [p.name for p in new if is_positional(p) and p.name not in reported]
    old_pos = [n for n in old_pos if n in new_pos or n not in reported]
    moved = [
        f"`{name}` {old_pos.index(name)} → {new_pos.index(name)}"
        for name in old_pos
        if name in new_pos and old_pos.index(name) != new_pos.index(name)
    ]
    return [("parameter-moved", "", "positions " + ", ".join(moved))] if moved else []


def diff_overloads(old: tuple[Sig, ...], new: tuple[Sig, ...]) -> list[tuple[str, str, str]]:
    """With overloads on either side compare only what is certain: a parameter no overload has any more,
    and a parameter every new overload requires that no old one had."""
    old_names = {p.name for sig in old for p in sig}
    new_names = {p.name for sig in new for p in sig}
    changes = [("parameter-removed", n, "gone from every overload") for n in sorted(old_names - new_names)]
    for name in sorted(new_names - old_names):
        if all(any(p.name == name and p.default is None and not p.kind.startswith("var") for p in sig) for sig in new):
            changes.append(("parameter-added-required", name, "required by every overload"))
    return changes


def compare_items(old: Item, new: Item) -> list[tuple[str, str, str]]:
    if new.raises and not old.raises:
        return [("removed", "", "the name is kept, but calling it raises an error")]
    if {old.kind, new.kind} & {"variable", "attribute", "name"}:
        return []  # a value the analysis cannot see through (`apply = _C._FunctionBase.__dict__["apply"]`)
    changes = [("kind-changed", "", f"{old.kind} → {new.kind}")] if old.kind != new.kind else []
    if not changes and {old.kind, new.kind} - FUNCTION_KINDS:
        return changes
    if not old.sigs or not new.sigs or old.sigs == new.sigs:
        return changes
    if len(old.sigs) == len(new.sigs) == 1:
        return changes + diff_params(old.sigs[0], new.sigs[0])
    return changes + diff_overloads(old.sigs, new.sigs)


def find_renames(removed: list[Item], added: list[Item]) -> dict[str, Item]:
    """Heuristic: pair a removed name with an added one in the same module or class that has a similar
    name, or (when it is the only such candidate) the same non-trivial signature."""
    by_parent: dict[str, list[Item]] = defaultdict(list)
    for item in added:
        by_parent[item.path.rpartition(".")[0]].append(item)
    scored = []
    for old in removed:
        candidates = [a for a in by_parent.get(old.path.rpartition(".")[0], []) if compatible_kinds(old, a)]
        same_sig = [a for a in candidates if old.sigs and a.sigs == old.sigs and max(map(len, old.sigs)) >= 2]
        for new in candidates:
            name_score = similarity(old.path.rpartition(".")[2], new.path.rpartition(".")[2])
            if name_score >= 0.75 or (new in same_sig and (name_score >= 0.5 or len(same_sig) == 1)):
                scored.append((name_score + (0.5 if new in same_sig else 0), old, new))
    renames: dict[str, Item] = {}
    taken: set[str] = set()
    for _, old, new in sorted(scored, key=lambda s: (-s[0], s[1].path, s[2].path)):
        if old.path not in renames and new.path not in taken:
            renames[old.path] = new
            taken.add(new.path)
    return renames


def compatible_kinds(a: Item, b: Item) -> bool:
    return a.kind == b.kind or (a.kind in FUNCTION_KINDS and b.kind in FUNCTION_KINDS)


def parent_in(item: Item, items: dict[str, Item]) -> bool:
    """A module-level name, or a member of a class that `items` has."""
    parent = item.path.rpartition(".")[0]
    return parent == item.module or parent in items


def diff(new_api: Api, old_items: dict[str, Item], new_items: dict[str, Item]) -> list[Entry]:
    gone = [i for p, i in old_items.items() if p not in new_items and not still_reachable(new_api, i)]
    # Members only of classes NEW visibly has: a removed class's members go with it, and a class served by
    # a module `__getattr__` cannot be looked into.
    gone = [i for i in gone if parent_in(i, new_items)]
    entries = []
    private = {i.path: twin for i in gone if (twin := private_twin(new_api, i))}
    # Members of a class that is new are no rename candidates: the class itself is.
    added = [i for p, i in new_items.items() if p not in old_items and parent_in(i, old_items)]
    renames = find_renames([i for i in gone if i.path not in private], added)
    for item in gone:
        entry = Entry("removed", item.path, item.kind, item.module, render_sig(item), listed=item.listed)
        if new_api.is_module(item.path):
            entry.detail = f"`{item.path}` is now a module"
        elif item.path in private:
            entry.change, entry.new_name = "made-private", private[item.path]
        elif item.path in renames:
            new = renames[item.path]
            entry.change, entry.new_name, entry.heuristic = "renamed", new.path, True
            entry.new_signature = render_sig(new)
        entries.append(entry)
    for path, old in old_items.items():
        new = new_items.get(path)
        for change, param, detail in compare_items(old, new) if new else []:
            entries.append(Entry(change, path, old.kind, old.module, render_sig(old), render_sig(new),
                                 parameter=param or None, detail=detail or None,
                                 heuristic=change == "parameter-renamed", listed=old.listed))
    return merge_aliases(entries, old_items)


def merge_aliases(entries: list[Entry], old_items: dict[str, Item]) -> list[Entry]:
    """One entry per object and change: `torch.nn.Linear` and `torch.nn.modules.linear.Linear` are one."""
    groups: dict[tuple, list[Entry]] = defaultdict(list)
    for e in entries:
        groups[(old_items[e.name].key, e.change, e.parameter, e.detail, e.new_signature)].append(e)
    merged = []
    for group in groups.values():
        group.sort(key=lambda e: (e.name.count("."), len(e.name), e.name))  # the shortest public path leads
        first = group[0]
        first.aliases = [e.name for e in group[1:]]
        first.origin = old_items[first.name].key
        merged.append(first)
    return sorted(merged, key=lambda e: (e.module, e.name, CHANGE_ORDER.index(e.change), e.parameter or ""))


# --- Output ------------------------------------------------------------------------------------


# How each change reads in markdown; the fields are the entry's.
LABELS = {
    "removed": "removed",
    "renamed": "renamed to `{new_name}` (heuristic)",
    "made-private": "made private: `{new_name}`",
    "kind-changed": "changed kind: {detail}",
    "parameter-removed": "parameter `{parameter}` removed",
    "parameter-renamed": "parameter renamed: {detail}",
    "parameter-added-required": "new required parameter `{parameter}`",
    "default-removed": "parameter `{parameter}` lost its default: {detail}",
    "default-changed": "default of `{parameter}` changed: {detail}",
    "parameter-kind-changed": "parameter `{parameter}`: {detail}",
    "parameter-moved": "positional parameters moved: {detail}",
}


def describe(e: Entry) -> str:
    head = LABELS[e.change].format(**asdict(e))
    if e.detail and "{detail}" not in LABELS[e.change]:
        head += f" ({e.detail})"
    text = f"- `{e.name}` ({e.kind}) — {head}"
    if e.old_signature:
        text += f"<br>old: `{e.old_signature}`"
    if e.new_signature and e.new_signature != e.old_signature:
        text += f"<br>new: `{e.new_signature}`"
    if e.aliases:  # all of them are in the JSON output
        more = f" and {len(e.aliases) - 3} more" if len(e.aliases) > 3 else ""
        text += "<br>also as: " + ", ".join(f"`{a}`" for a in e.aliases[:3]) + more
    return text


def markdown(entries: list[Entry], meta: dict, collapse: list[str]) -> str:
    old, new = meta["old"], meta["new"]
    scope = ", ".join(f"`{p}`" for p in meta["module_prefixes"]) or "every public module"
    lines = [
        f"# torch API diff: {old['version']} → {new['version']}",
        "",
        f"Produced on {meta['date']} with `{meta['command']}` ({meta['seconds']:.1f} s).",
        "",
        f"- OLD: torch {old['version']}, `{old['source']}` ({old['names']} public paths)",
        f"- NEW: torch {new['version']}, `{new['source']}` ({new['names']} public paths)",
        f"- Scope: {scope}; private modules (a path component starting with `_`, such as `torch._inductor` or"
        " `torch.testing._internal`) only where a public name points into them.",
        "- Static analysis of the `.py`/`.pyi` sources; the docstring of tools/api_diff.py says what counts as"
        " public and what the analysis cannot see. Renames are guesses from similar names or identical"
        " signatures (*heuristic*). Parameters added with a default are compatible and not listed.",
    ]
    if meta.get("include_unlisted"):
        lines.append("- Top-level names that a module's `__all__` leaves out are compared too; they are listed apart.")
    if collapse:
        lines.append(f"- Collapsed at the end: {', '.join(f'`{p}`' for p in collapse)}.")
    lines += ["", "| change | entries |", "| --- | ---: |"]
    counts = {c: sum(e.change == c for e in entries) for c in CHANGE_ORDER}
    lines += [f"| {c} | {n} |" for c, n in counts.items() if n] + [f"| **total** | {len(entries)} |", ""]
    unlisted = [e for e in entries if not e.listed]
    hidden = [e for e in entries if e.listed and under(e.module, collapse)]
    lines += module_sections([e for e in entries if e.listed and e not in hidden], "##")
    lines += details_section("Names outside `__all__`", unlisted)
    lines += details_section("Collapsed modules", hidden)
    return "\n".join(lines).rstrip() + "\n"


def details_section(title: str, entries: list[Entry]) -> list[str]:
    if not entries:
        return []
    return [f"## {title}", "", f"<details><summary>{len(entries)} entries</summary>", "",
            *module_sections(entries, "###"), "</details>", ""]


def under(module: str, prefixes: list[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def module_sections(entries: list[Entry], level: str) -> list[str]:
    lines = []
    by_module: dict[str, list[Entry]] = defaultdict(list)
    for e in entries:
        by_module[e.module].append(e)
    for module, group in sorted(by_module.items()):
        lines += [f"{level} {module}", "", *map(describe, group), ""]
    return lines


def as_json(entries: list[Entry], meta: dict) -> str:
    return json.dumps({**meta, "entries": [asdict(e) for e in entries]}, indent=1, ensure_ascii=False) + "\n"


def removal_record(e: Entry) -> dict:
    record = {"name": e.name, "change": e.change, "kind": e.kind, "module": e.module, "origin": e.origin,
              "old_signature": e.old_signature, "new_signature": e.new_signature}
    record |= {k: v for k, v in (("new_name", e.new_name), ("parameter", e.parameter), ("detail", e.detail)) if v}
    if not e.listed:
        record["outside_all"] = True
    if e.heuristic:
        record["heuristic"] = True
    if e.aliases:
        record["aliases"] = e.aliases
    return record


def update_removals(path: Path, entries: list[Entry], meta: dict) -> None:
    """Write this pair's removals into `path`, keeping the other pairs already there."""
    data = json.loads(path.read_text()) if path.exists() else {}
    data["_about"] = (
        "Public API removals, renames and removed parameters between torch releases, found statically by"
        " tools/api_diff.py (one object under several public paths is one record with `aliases`)."
        " `heuristic`: the rename was guessed; `outside_all`: the module's `__all__` leaves the name out."
        " Regenerate with tools/api_diff.py --removals-json; its docstring says what counts as public."
    )
    pair = {"old": meta["old"]["version"], "new": meta["new"]["version"], "module_prefixes": meta["module_prefixes"],
            "removals": [removal_record(e) for e in entries if e.change in REMOVAL_CHANGES]}
    pairs = [p for p in data.get("pairs", []) if (p["old"], p["new"]) != (pair["old"], pair["new"])] + [pair]
    data["pairs"] = sorted(pairs, key=lambda p: (version_key(p["old"]), version_key(p["new"])))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def version_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in version.split("+")[0].split("."))


# --- Command line ------------------------------------------------------------------------------


def run(
    old: str,
    new: str,
    package: str = "torch",
    prefixes: Iterable[str] = (),
    include_unlisted: bool = False,
    also: tuple[str, ...] = (),
) -> tuple[list[Entry], dict]:
    """Compare two installations; returns the entries and what describes the run."""
    started = time.perf_counter()
    prefixes = list(prefixes)
    warn = lambda message: print(f"api_diff: {message}", file=sys.stderr)  # noqa: E731
    trees = [open_tree(old, package, also), open_tree(new, package, also)]
    try:
        apis = [Api(tree, package, warn, include_unlisted, also) for tree in trees]
        items = [surface(api, prefixes) for api in apis]
        entries = diff(apis[1], *items)
        sides = {
            side: {"source": tree.label, "version": tree.version, "names": len(found)}
            for side, tree, found in zip(("old", "new"), trees, items, strict=True)
        }
    finally:
        for tree in trees:
            tree.close()
    meta = {**sides, "module_prefixes": prefixes, "include_unlisted": include_unlisted,
            "date": datetime.date.today().isoformat(), "seconds": round(time.perf_counter() - started, 1)}
    return entries, meta


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="api_diff.py")
    parser.add_argument("old", help="site-packages, package directory, venv, venv python, or .whl")
    parser.add_argument("new", help="the same, for the newer release")
    parser.add_argument("--format", choices=("md", "json"), default="md")
    parser.add_argument("--output", type=Path, help="write here instead of stdout")
    parser.add_argument("--module-prefix", action="extend", nargs="+", default=[], metavar="MODULE",
                        help="only modules equal to or under these (e.g. torch.distributed)")
    parser.add_argument("--package", default="torch", help="the top-level package to compare (default: torch)")
    parser.add_argument("--also-package", action="extend", nargs="+", default=[], metavar="PACKAGE",
                        help="other top-level packages of the same distribution to compare (functorch)")
    parser.add_argument("--include-unlisted", action="store_true",
                        help="also compare top-level names a module's __all__ leaves out (reported apart)")
    parser.add_argument("--collapse", action="extend", nargs="+", default=[], metavar="MODULE",
                        help="markdown: put entries of these modules (and below) in a collapsed section")
    parser.add_argument("--removals-json", type=Path, metavar="FILE",
                        help="also record this pair's removals in FILE (other pairs in it are kept)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    entries, meta = run(args.old, args.new, args.package, args.module_prefix, args.include_unlisted,
                        tuple(args.also_package))
    meta["command"] = shlex.join(["python3", "tools/api_diff.py", *argv])
    text = as_json(entries, meta) if args.format == "json" else markdown(entries, meta, args.collapse)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    if args.removals_json:
        update_removals(args.removals_json, entries, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
