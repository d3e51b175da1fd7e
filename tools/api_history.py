#!/usr/bin/env python3
"""The public API changes of every torch minor release, from the wheels, into one JSON file.

    python3 tools/api_history.py [--wheels DIR] [--releases 2.0.1 2.1.2 ...] [--output FILE] [--no-markdown]

For each release (the newest patch of every minor release, RELEASES below) the wheel is taken from DIR
(default ~/.cache/torchup/wheels), downloaded with `pip download --no-deps` when missing. Nothing is
imported or extracted: tools/api_diff.py reads the `.py`/`.pyi` files of `torch` and `functorch` (a second
top-level package of the same wheel) in place. Then:

- each consecutive pair is compared by api_diff (removed, renamed, made-private names, removed or renamed
  parameters, changed literal defaults, ...) and written to docs/api-diff/torch-A-to-B.md;
- each release is scanned for deprecations (below) and for defaults resolved in a function's body;
- everything is written to torchup/data/api_changes.json, one change a line, sorted; a change's `release`
  is the minor release that first shows it (for a deprecation: the first release whose source warns).
  Facts that tools/confirm_facts.py confirmed by running code (docs/api-diff/confirmed.json) are marked
  `confirmed_by_run`.

What counts as a deprecation of a public function, method or class (its `__init__`/`__new__` included):
- `warnings.warn(...)` in its body (not in nested functions) with category FutureWarning,
  DeprecationWarning or PendingDeprecationWarning, or another category (UserWarning by default) when the
  message says "deprecated", "will be removed" or "in a future release";
- a call in its body to a helper whose name says `deprecat` or `warn` and that warns so (one or two calls
  deep: `warn_deprecated("vmap")` in torch._functorch.deprecated, the LR schedulers'
  `_check_verbose_deprecated_warning(verbose)`), and `super().__init__(...)` of a base class that warns;
- a decorator `@deprecated(...)` from typing_extensions, typing or warnings, or a decorator of the package
  that wraps the function in one that warns (torch.onnx._deprecation.deprecated);
- a module-level `x = helper(y)` where `helper` returns a function that warns (torch.nn.init.uniform);
- its docstring, when a sentence says that this function (or the object by its name) is deprecated: the only
  trace of warnings raised in C++ (torch.lu_solve, torch.range, torch.chain_matmul), evidence `docstring`
  (for C functions: the stub's docstring, or before 2.3 the `add_docstr(torch.x, ...)` of torch/_torch_docs.py;
  a value documented by `lu.__doc__ = _lu_impl.__doc__` counts as that function);
- a message `torch.<name>(...) is deprecated...` compiled into torch/lib/libtorch_python.so, for a public
  `torch.<name>` (torch.get_autocast_gpu_dtype and the other device-specific autocast functions warn in C++
  and have no docstring), evidence `C++ message`.
A warning under a condition on one of the function's parameters (`if verbose is not None`, `if
use_reentrant is None`, followed through local aliases, early returns and helper arguments) deprecates
that parameter (`parameter-deprecated`) rather than the function. A module that warns when imported (a
warning at its top level, or a module `__getattr__` that warns), or whose docstring says it moved or is
deprecated, is deprecated itself; private modules count here (torch.distributed._tensor is imported by
users), except the test suites'.

Changed defaults: api_diff reports literal default changes; here a `None` default resolved in the body
(`if weights_only is None: weights_only = ...`) is compared too, and its resolved value is recorded.

Not seen: warnings raised by other C++ libraries (libtorch_cpu.so is not read) whose docstrings say nothing,
messages built at run time (recorded as `{expression}` pieces), warnings in helpers whose names say neither
`deprecat` nor `warn`, and base classes' `__init__` in files that never spell a warning. NOT_DETECTABLE
lists the known misses with the evidence found by hand.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import contextlib

import api_diff as ad

ROOT = Path(__file__).resolve().parent.parent
WHEELS = Path.home() / ".cache" / "torchup" / "wheels"
OUTPUT = ROOT / "torchup" / "data" / "api_changes.json"
MARKDOWN_DIR = ROOT / "docs" / "api-diff"
CONFIRMED = MARKDOWN_DIR / "confirmed.json"
# The newest patch of every minor release.
RELEASES = (
    "2.0.1", "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1",
    "2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0",
)  # fmt: skip
PACKAGE, ALSO = "torch", ("functorch",)
# Private modules whose names users call anyway: their top-level functions are scanned for deprecations.
WIDELY_USED_PRIVATE = ("torch.utils._pytree",)
# Modules never scanned for module-level deprecations: test suites and their helpers.
NOT_SCANNED = ("torch.testing._internal", "torch.utils.benchmark.examples")
DEPRECATION_CATEGORIES = frozenset({"FutureWarning", "DeprecationWarning", "PendingDeprecationWarning"})
DEPRECATED_DECORATORS = frozenset({"typing_extensions.deprecated", "typing.deprecated", "warnings.deprecated"})
WARN_FUNCTIONS = frozenset({"warnings.warn", "warn", "warnings.warn_explicit"})
# A message of another category that announces a deprecation.
SAYS_DEPRECATED = re.compile(
    r"deprecat|will be removed|removed in a future|in a future (?:release|version|pytorch)|we will raise"
    r"|will raise an (?:exception|error)|(?:default|behaviou?r) (?:value )?(?:will|is going to) (?:change|be)",
    re.IGNORECASE,
)
HELPER_NAME = re.compile(r"deprecat|warn", re.IGNORECASE)
# A replacement named in a warning or docstring: "in favor of `torch.linalg.lu_solve`", "Please use X".
REPLACEMENT = re.compile(
    r"(?:in favou?r of|[Pp]lease use|[Uu]se|replaced (?:by|with)|moved to|instead of it use|migrate to)"
    r"\s+(?::\w+:)?[`'\"]*~?((?:torch|functorch|nn|F)\.[\w.]+|torch\.amp\.\w+\(\s*\"\w+\")"
)
MAX_HELPER_DEPTH = 3
CHANGE_KINDS = (
    *ad.CHANGE_ORDER,
    "deprecated",
    "parameter-deprecated",
    "module-deprecated",
)
# Deprecations the wheels show nowhere: neither a warning in Python, nor a docstring, nor a message in
# torch/lib/libtorch_python.so (warnings of other C++ libraries are not read: libtorch_cpu.so is large).
NOT_DETECTABLE: list[dict] = []
# The C++ library whose warning messages are read, and the messages: "torch.<name>(...) is deprecated...".
NATIVE_LIBRARY = "torch/lib/libtorch_python.so"
NATIVE_MESSAGE = re.compile(rb"\x00(torch\.[A-Za-z_][\w.]*)(?:\([^)\x00]{0,40}\))? is deprecated[^\x00]{0,300}")


# --- The source of one release -------------------------------------------------------------------


@dataclass(frozen=True)
class Warn:
    """A warning a function raises: its message pieces, category, where, and the parameters whose
    values decide whether it is raised."""

    text: str
    category: str
    file: str
    line: int | None  # None: a message in a compiled library
    params: tuple[str, ...] = ()
    conditional: bool = False
    how: str = "warnings.warn"  # warnings.warn, decorator, helper <name>, docstring, module, __getattr__


@dataclass(frozen=True)
class Def:
    module: str
    file: str
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    cls: Def | None = None  # the class a method belongs to


def flat(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a block and of the `if`/`try`/`with` blocks in it, as api_diff's Collector reads them."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from flat(stmt.body)
            yield from flat(stmt.orelse)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            for block in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                yield from flat(block)
        elif isinstance(stmt, ast.With):
            yield from flat(stmt.body)


def is_overload(node: ast.AST) -> bool:
    names = ad.decorator_names(node) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else []
    return any(n.rpartition(".")[2] == "overload" or n.endswith((".setter", ".deleter")) for n in names)


def find_in(body: list[ast.stmt], parts: list[str]) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    """The definition of a dotted qualname: the last one (what runs), an overload only when nothing else."""
    found = fallback = None
    for stmt in flat(body):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and stmt.name == parts[0]:
            if is_overload(stmt):
                fallback = fallback or stmt
            else:
                found = stmt
    found = found or fallback
    if found is None or len(parts) == 1:
        return found
    return find_in(found.body, parts[1:]) if isinstance(found, ast.ClassDef) else None


def message(expr: ast.expr | None, consts: dict[str, str]) -> str:
    """The literal pieces of a message; what is computed at run time is kept as `{expression}`."""
    if expr is None:
        return ""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.JoinedStr):
        return "".join(
            message(v, consts) if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}" for v in expr.values
        )
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Mod):
        left = message(expr.left, consts)
        return left + message(expr.right, consts) if isinstance(expr.op, ast.Add) else left
    if isinstance(expr, ast.Name) and expr.id in consts:
        return consts[expr.id]
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "format":
        return message(expr.func.value, consts)
    return "{" + ast.unparse(expr) + "}"


def string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level `NAME = "..."` (messages shared by several warnings: torch.ao.quantization)."""
    consts: dict[str, str] = {}
    for stmt in flat(tree.body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            text = message(stmt.value, consts)
            if text and not text.startswith("{"):
                consts[stmt.targets[0].id] = text
    return consts


def docstring_of(node: ast.AST) -> str:
    try:
        return ast.get_docstring(node, clean=True) or ""  # type: ignore[arg-type]
    except TypeError:
        return ""


def says_deprecated(
    doc: str,
    name: str,
    what: str = "function|method|class|api|context manager|decorator|"
    "property|module|function call|constructor|operator",
) -> str | None:
    """The sentence of a docstring that deprecates the object itself, if any."""
    if "deprecat" not in doc.lower():
        return None
    text = re.sub(r":\w+:`~?", "`", re.sub(r"\s+", " ", doc))
    short = re.escape(name.rpartition(".")[2])
    subject = rf"(?:this (?:{what})|`(?:[\w.]*\.)?{short}(?:\([^`]*\))?`|{short}\(\))"
    pattern = rf"{subject} (?:is|are|has been|was|will be) (?:now |being |officially )?deprecated"
    match = re.search(pattern, text, re.IGNORECASE)
    if match is None:
        return None
    start = max(text.rfind(". ", 0, match.start()) + 2, 0) if text.rfind(". ", 0, match.start()) >= 0 else 0
    end = text.find(". ", match.end())
    sentence = text[start : len(text) if end < 0 else end + 1].strip()
    return re.sub(r"^\.*\s*(?:warning|note|deprecated)::\s*", "", sentence)


def replacement_in(text: str) -> str | None:
    text = text.replace("``", "`")
    match = REPLACEMENT.search(text)
    if match is None or text[match.end() : match.end() + 1] == "{":
        return None  # a name built at run time
    return match.group(1).rstrip(".`'\"")


class Source:
    """The syntax trees of one release, on demand, and the deprecation analysis of its functions."""

    def __init__(self, api: ad.Api):
        self.api = api
        self._trees: dict[str, list[tuple[str, ast.Module]]] = {}
        self._consts: dict[str, dict[str, str]] = {}
        self._warns: dict[tuple[str, int], list[Warn]] = {}
        self._nested: dict[tuple[str, int], list[Warn]] = {}
        self._may_warn: dict[str, bool] = {}
        self._index: dict[str, dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]] = {}

    def trees(self, module: str) -> list[tuple[str, ast.Module]]:
        """(file, tree) of a module, the `.py` before the `.pyi`."""
        if module not in self._trees:
            files = self.api.tree.modules.get(module, {})
            parsed: list[tuple[str, ast.Module]] = []
            for suffix in (".py", ".pyi"):
                if suffix in files:
                    with contextlib.suppress(SyntaxError, ValueError):
                        parsed.append((files[suffix], ast.parse(self.api.tree.read(files[suffix]))))
            self._trees[module] = parsed
        return self._trees[module]

    def doc_aliases(self, module: str) -> dict[str, str]:
        """`lu.__doc__ = _lu_impl.__doc__` at the top of a module: lu -> _lu_impl."""
        found = {}
        for _, tree in self.trees(module)[:1]:
            for stmt in flat(tree.body):
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    target, value = ad.dotted_name(stmt.targets[0]) or "", ad.dotted_name(stmt.value) or ""
                    if target.endswith(".__doc__") and value.endswith(".__doc__"):
                        found[target[: -len(".__doc__")]] = value[: -len(".__doc__")]
        return found

    def may_warn(self, file: str) -> bool:
        """Whether a file spells a warning or a deprecation at all (most do not: they are not walked; a
        class whose base in another such file warns is missed)."""
        if file not in self._may_warn:
            text = self.api.tree.read(file)
            self._may_warn[file] = any(word in text for word in (b"warn", b"deprecat", b"Warning"))
        return self._may_warn[file]

    def consts(self, module: str) -> dict[str, str]:
        if module not in self._consts:
            trees = self.trees(module)
            self._consts[module] = string_constants(trees[0][1]) if trees else {}
        return self._consts[module]

    def definitions(self, module: str, qualname: str) -> list[Def]:
        """Where `module:qualname` is defined: in the `.py` and in the `.pyi`."""
        found = []
        for file, tree in self.trees(module):
            index = self.index(file, tree)
            node = index.get(qualname)
            if node is None:
                continue
            cls = index.get(qualname.rpartition(".")[0]) if "." in qualname else None
            owner = Def(module, file, cls) if isinstance(cls, ast.ClassDef) else None
            found.append(Def(module, file, node, owner))
        return found

    def index(self, file: str, tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
        """Qualname -> definition, as find_in would answer, for a whole file at once."""
        if file not in self._index:
            index: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = {}

            def add(body: list[ast.stmt], prefix: str) -> None:
                fallback: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = {}
                chosen: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = {}
                for stmt in flat(body):
                    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        if is_overload(stmt):
                            fallback.setdefault(stmt.name, stmt)
                        else:
                            chosen[stmt.name] = stmt
                for name, node in {**fallback, **chosen}.items():
                    index[prefix + name] = node
                    if isinstance(node, ast.ClassDef):
                        add(node.body, f"{prefix}{name}.")

            add(tree.body, "")
            self._index[file] = index
        return self._index[file]

    def qualify(self, module: str, dotted: str) -> str:
        """A dotted name as the module's imports spell it out (`deprecated` -> typing_extensions.deprecated)."""
        first, _, rest = dotted.partition(".")
        info = self.api.module(module)
        binding = info.bindings.get(first) if info else None
        if isinstance(binding, ad.FromImport):
            base = f"{binding.module}.{binding.name}"
        elif isinstance(binding, ad.ModRef):
            base = binding.module
        elif binding is not None:
            base = f"{module}.{first}"
        else:
            base = first
        return f"{base}.{rest}" if rest else base

    def resolve(self, module: str, dotted: str) -> Def | None:
        """The definition a dotted name of `module` refers to, inside the release."""
        qualified = self.qualify(module, dotted)
        if qualified.split(".")[0] not in self.api.packages:
            return None
        sym = self.api.resolve_dotted(module, dotted)
        if sym is None or not isinstance(sym.binding, ad.Func | ad.Klass) or not sym.qualname:
            return None
        found = [d for d in self.definitions(sym.origin, sym.qualname) if d.file.endswith(".py")]
        return found[0] if found else None

    # -- warnings ------------------------------------------------------------------------------------

    def warn_call(self, module: str, call: ast.Call) -> tuple[ast.expr | None, str] | None:
        """(message, category) of a `warnings.warn(...)` call."""
        dotted = ad.dotted_name(call.func)
        if dotted is None or (self.qualify(module, dotted) not in WARN_FUNCTIONS and dotted not in WARN_FUNCTIONS):
            return None
        keywords = {k.arg: k.value for k in call.keywords}
        text_expr = call.args[0] if call.args else keywords.get("message")
        category_expr = call.args[1] if len(call.args) > 1 else keywords.get("category")
        if isinstance(text_expr, ast.Call) and (ad.dotted_name(text_expr.func) or "").endswith("Warning"):
            category_expr, text_expr = text_expr.func, (text_expr.args[0] if text_expr.args else None)
        category = (ad.dotted_name(category_expr) or "") if category_expr is not None else "UserWarning"
        return text_expr, category.rpartition(".")[2] or "UserWarning"

    def text(self, module: str, expr: ast.expr | None, local: dict[str, ast.expr], depth: int = 0) -> str:
        """A message, through a local variable and a function of the package that returns it
        (functorch's `warning = get_warning(api, ...)`)."""
        if isinstance(expr, ast.Name) and expr.id in local and depth < 3:
            return self.text(module, local[expr.id], local, depth + 1)
        if isinstance(expr, ast.Call) and depth < 3 and (dotted := ad.dotted_name(expr.func)):
            d = self.resolve(module, dotted)
            if d is not None and isinstance(d.node, ast.FunctionDef):
                returns = [n.value for n in ast.walk(d.node) if isinstance(n, ast.Return) and n.value is not None]
                if len(returns) == 1:
                    return self.text(d.module, returns[0], local_values(d.node), depth + 1)
        return message(expr, self.consts(module))

    @staticmethod
    def is_deprecation(text: str, category: str) -> bool:
        if category in DEPRECATION_CATEGORIES or category.endswith("DeprecationWarning"):
            return True
        return bool(SAYS_DEPRECATED.search(text))

    def warnings_of(self, d: Def, depth: int = 0) -> list[Warn]:
        """The deprecation warnings a function's own body raises (helpers and `super()` followed)."""
        key = (d.file, d.node.lineno)
        if key not in self._warns:
            self._warns[key] = []  # a recursion sees none
            if isinstance(d.node, ast.FunctionDef | ast.AsyncFunctionDef) and self.may_warn(d.file):
                self._warns[key] = BodyVisitor(self, d, depth).run()
        return self._warns[key]

    def nested_warnings(self, d: Def) -> list[Warn]:
        """The deprecation warnings of the functions a function defines: a wrapper factory."""
        key = (d.file, d.node.lineno)
        if key not in self._nested:
            self._nested[key] = []
            found = []
            for node in ast.walk(d.node):
                if node is not d.node and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    found += BodyVisitor(self, Def(d.module, d.file, node), MAX_HELPER_DEPTH).run()
            self._nested[key] = [Warn(w.text, w.category, w.file, w.line, (), w.conditional, w.how) for w in found]
        return self._nested[key]

    def decorator_warnings(self, d: Def) -> list[Warn]:
        found = []
        for dec in d.node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            dotted = ad.dotted_name(target)
            if dotted is None:
                continue
            qualified = self.qualify(d.module, dotted)
            args = dec.args if isinstance(dec, ast.Call) else []
            keywords = {k.arg: k.value for k in dec.keywords} if isinstance(dec, ast.Call) else {}
            text = " ".join(message(a, self.consts(d.module)) for a in args[:1] or keywords.values())
            if qualified in DEPRECATED_DECORATORS or (
                qualified.rpartition(".")[2] == "deprecated" and qualified.split(".")[0] not in self.api.packages
            ):
                category = keywords.get("category")
                name = "DeprecationWarning" if category is None else ad.dotted_name(category) or "None"
                if isinstance(category, ast.Constant) and category.value is None:
                    name = "None (static only)"
                found.append(
                    Warn(
                        text,
                        name.rpartition(".")[2] if "(" not in name else name,
                        d.file,
                        dec.lineno,
                        how=f"decorator {qualified}",
                    )
                )
                continue
            helper = self.resolve(d.module, dotted)
            if helper is not None and isinstance(helper.node, ast.FunctionDef):
                nested = self.nested_warnings(helper)
                if nested:
                    texts = [message(a, self.consts(d.module)) for a in args if not isinstance(a, ast.Name)]
                    text = " ".join(texts) or nested[0].text
                    found.append(Warn(text, nested[0].category, d.file, dec.lineno, how=f"decorator {qualified}"))
        return found

    def deprecations(self, d: Def) -> list[Warn]:
        """Every sign that an object (a function, or a class through itself and its `__init__`/`__new__`)
        or one of its parameters is deprecated."""
        found = self.decorator_warnings(d)
        if isinstance(d.node, ast.ClassDef):
            for name in ("__init__", "__new__"):
                member = find_in(d.node.body, [name])
                if member is not None:
                    method = Def(d.module, d.file, member, d)
                    found += self.decorator_warnings(method) + self.warnings_of(method)
        else:
            found += self.warnings_of(d)
        return found


def param_names(node: ast.FunctionDef | ast.AsyncFunctionDef, is_method: bool) -> list[str]:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if is_method and names and not any(ad.dotted_name(dec) == "staticmethod" for dec in node.decorator_list):
        names = names[1:]
    names += [a.arg for a in (args.vararg, *args.kwonlyargs, args.kwarg) if a is not None]
    return names


def local_values(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """What a function first assigns to each name (a message built before the warning; a later
    `warning = warning.replace(...)` keeps its words)."""
    values: dict[str, ast.expr] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            values.setdefault(n.targets[0].id, n.value)
    return values


class BodyVisitor:
    """Walks one function body, keeping the parameters the enclosing conditions test."""

    def __init__(self, source: Source, d: Def, depth: int):
        self.source, self.d, self.depth = source, d, depth
        node = d.node
        assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        self.params = param_names(node, d.cls is not None)
        self.kwargs = node.args.kwarg.arg if node.args.kwarg else None
        self._local: dict[str, ast.expr] | None = None
        self.aliases: dict[str, set[str]] = {}  # local name -> the parameters its value tests
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                mentioned = self.tested(stmt.value)
                if mentioned:
                    self.aliases[stmt.targets[0].id] = mentioned
        self.found: list[Warn] = []

    @property
    def local(self) -> dict[str, ast.expr]:
        if self._local is None:
            self._local = local_values(self.d.node)  # type: ignore[arg-type]
        return self._local

    def tested(self, expr: ast.AST) -> set[str]:
        """The parameters a condition tests directly: `p is None`, `not p`, `p != "deprecated"`,
        `isinstance(p, int)`, `"p" in kwargs`; not `p.shape[0] > 1` (that is about the value's content)."""
        names: set[str] = set()

        def operand(e: ast.AST) -> None:
            if isinstance(e, ast.Name):
                names.update({e.id} & set(self.params) or self.aliases.get(e.id, set()))
            elif isinstance(e, ast.Call) and ad.dotted_name(e.func) in ("isinstance", "callable", "len") and e.args:
                operand(e.args[0])

        def test(e: ast.AST) -> None:
            if isinstance(e, ast.BoolOp):
                for value in e.values:
                    test(value)
            elif isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
                test(e.operand)
            elif isinstance(e, ast.Compare):
                for side in (e.left, *e.comparators):
                    operand(side)
                kwargs = self.kwargs
                if (
                    kwargs
                    and isinstance(e.ops[0], ast.In | ast.NotIn)
                    and isinstance(e.left, ast.Constant)
                    and isinstance(e.left.value, str)
                    and ad.dotted_name(e.comparators[0]) == kwargs
                ):
                    names.add(e.left.value)  # a parameter only **kwargs still accepts
            else:
                operand(e)

        test(expr)
        return names

    def narrowed(self, params: set[str], text: str, cond: bool) -> tuple[str, ...]:
        """The parameters a warning is about: those its message names when it names some. A private
        parameter (`_internal`) is torch's own business: the warning is about the function."""
        params = {p for p in params if not p.startswith("_")}
        named = {p for p in params if re.search(rf"\b{re.escape(p)}\b", text)}
        if named:
            return tuple(sorted(named))
        if params or not cond:
            return tuple(sorted(params))
        pattern = r"`{0}`|\b{0}=|\b{0}\b (?:argument|parameter|keyword)|(?:argument|parameter) `?{0}\b"
        return tuple(sorted(p for p in self.params if re.search(pattern.format(re.escape(p)), text)))

    def run(self) -> list[Warn]:
        self.block(self.d.node.body, frozenset(), False)
        return self.found

    def block(self, stmts: list[ast.stmt], guards: frozenset[str], cond: bool) -> None:
        for stmt in stmts:
            self.visit(stmt, guards, cond)
            # `if verbose == "deprecated": return`: what follows runs only when the test failed (a longer
            # body is another way of doing the work, `if dynamo: ...; return ...`, not a sentinel test)
            if (
                isinstance(stmt, ast.If)
                and not stmt.orelse
                and len(stmt.body) == 1
                and isinstance(stmt.body[0], ast.Return)
            ):
                guards, cond = guards | self.tested(stmt.test), True

    def visit(self, node: ast.AST, guards: frozenset[str], cond: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            return
        if isinstance(node, ast.If | ast.While | ast.IfExp):
            self.visit(node.test, guards, cond)
            inner = guards | self.tested(node.test)
            for part in (node.body, node.orelse):
                if isinstance(part, list):
                    self.block(part, inner, True)
                else:
                    self.visit(part, inner, True)
            return
        if isinstance(node, ast.Call):
            self.call(node, guards, cond)
        cond = cond or isinstance(node, ast.ExceptHandler)
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self.block(value, guards, cond or name != "body")
            else:
                for child in value if isinstance(value, list) else [value]:
                    if isinstance(child, ast.AST):
                        self.visit(child, guards, cond)

    def call(self, call: ast.Call, guards: frozenset[str], cond: bool) -> None:
        source, d = self.source, self.d
        warned = source.warn_call(d.module, call)
        if warned is not None:
            text_expr, category = warned
            text = source.text(d.module, text_expr, self.local)  # type: ignore[arg-type]
            if source.is_deprecation(text, category):
                self.found.append(
                    Warn(text, category, d.file, call.lineno, self.narrowed(set(guards), text, cond), cond)
                )
            return
        if self.depth >= MAX_HELPER_DEPTH:
            return
        helper, args = self.callee(call)
        if helper is None:
            return
        helper_params = param_names(helper.node, helper.cls is not None)  # type: ignore[arg-type]
        bound: dict[str, ast.expr] = dict(zip(helper_params, args, strict=False))
        bound |= {k.arg: k.value for k in call.keywords if k.arg}
        how = f"helper {ast.unparse(call)}"
        how = how if len(how) <= 100 else how[:97] + "..."
        for w in source.warnings_of(helper, self.depth + 1):
            if any(p not in bound for p in w.params):
                continue  # raised for a value the call does not pass: the default does not warn
            params = set(guards)
            for p in w.params:
                params |= self.tested(bound[p])
            self.found.append(
                Warn(
                    w.text,
                    w.category,
                    d.file,
                    call.lineno,
                    self.narrowed(params, w.text, cond or w.conditional),
                    cond or w.conditional,
                    w.how if w.how.startswith("helper") else how,
                )
            )

    def callee(self, call: ast.Call) -> tuple[Def | None, list[ast.expr]]:
        """A helper worth following: one named for warnings or deprecations, or `super().__init__`."""
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Call)
            and (ad.dotted_name(func.value.func) == "super")
        ):
            if func.attr not in ("__init__", "__new__") or self.d.cls is None:
                return None, []
            for base in self.d.cls.node.bases:  # type: ignore[union-attr]
                dotted = ad.dotted_name(base)
                cls = self.source.resolve(self.d.module, dotted) if dotted else None
                if cls is not None and isinstance(cls.node, ast.ClassDef):
                    member = find_in(cls.node.body, [func.attr])
                    if isinstance(member, ast.FunctionDef):
                        return Def(cls.module, cls.file, member, cls), list(call.args)
            return None, []
        dotted = ad.dotted_name(func)
        short = (dotted or "").rpartition(".")[2]
        # named for warnings, or the implementation of this very function (`checkpoint` -> `_checkpoint_impl`)
        own = self.d.node.name.strip("_")
        if dotted is None or not (HELPER_NAME.search(short) or short.endswith("_impl") or (own and own in short)):
            return None, []
        if dotted.startswith("self.") and self.d.cls is not None:
            member = find_in(self.d.cls.node.body, dotted.split(".")[1:])  # type: ignore[union-attr]
            if isinstance(member, ast.FunctionDef):
                return Def(self.d.module, self.d.file, member, self.d.cls), list(call.args)
            return None, []
        helper = self.source.resolve(self.d.module, dotted)
        if helper is None or not isinstance(helper.node, ast.FunctionDef | ast.AsyncFunctionDef):
            return None, []
        return helper, list(call.args)


# --- Scanning one release ------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    kind: str  # deprecated, parameter-deprecated, module-deprecated
    name: str
    parameter: str | None
    warn: Warn
    aliases: tuple[str, ...] = ()


def _docstring_fact(definitions: Iterable[Any], path: str, aliases: tuple[str, ...]) -> list[Fact]:
    """A deprecation that only a docstring states: the first of ``definitions`` whose docstring
    says it is deprecated (`torch.lu`, whose warning the C++ kernel gives)."""
    for d in definitions:
        sentence = says_deprecated(docstring_of(d.node), path)
        if sentence:
            return [Fact("deprecated", path, None, Warn(sentence, "", d.file, d.node.lineno, how="docstring"), aliases)]
    return []


def scan_release(source: Source, items: dict[str, ad.Item]) -> tuple[list[Fact], dict[str, dict[str, str]]]:
    """The deprecations of one release, and the `None` defaults its functions resolve in their bodies."""
    api = source.api
    by_key: dict[str, list[ad.Item]] = defaultdict(list)
    for item in items.values():
        if item.listed and item.kind in (*ad.FUNCTION_KINDS, "class", "property", "variable"):
            by_key[item.key].append(item)
    for module in WIDELY_USED_PRIVATE:
        for _file, tree in source.trees(module)[:1]:
            for stmt in flat(tree.body):
                if isinstance(stmt, ast.FunctionDef | ast.ClassDef) and not stmt.name.startswith("__"):
                    path = f"{module}.{stmt.name}"
                    kind = "class" if isinstance(stmt, ast.ClassDef) else "function"
                    by_key[f"{module}:{stmt.name}"].append(ad.Item(path, module, kind, (), f"{module}:{stmt.name}"))
    # `from torch.functional import *` in torch: torch.lu is torch.functional.lu, a value only the
    # latter's `__all__` names (api_diff counts values only where `__all__` names them)
    star_parents: dict[str, list[str]] = defaultdict(list)
    for module in ad.public_modules(api, []):
        for star in info.stars if (info := api.module(module)) else []:
            star_parents[star].append(module)
    for key, group in by_key.items():
        for item in list(group):
            for parent in star_parents.get(item.path.rpartition(".")[0], []):
                name = item.path.rpartition(".")[2]
                sym = api.lookup(parent, name) if not name.startswith("_") else None
                if sym is not None and sym.key == key and all(i.path != f"{parent}.{name}" for i in group):
                    group.append(ad.Item(f"{parent}.{name}", parent, item.kind, item.sigs, key))
    facts: list[Fact] = []
    defaults: dict[str, dict[str, str]] = {}
    for key, group in sorted(by_key.items()):
        group.sort(key=lambda i: (i.path.count("."), len(i.path), i.path))
        lead, aliases = group[0], tuple(i.path for i in group[1:])
        if lead.path.rpartition(".")[2] in ("__init__", "__new__"):
            continue  # the class answers for them
        origin, _, qualname = key.partition(":")
        defs = source.definitions(origin, qualname)
        documented = source.doc_aliases(origin).get(qualname)
        if not defs and documented:  # `lu = boolean_dispatch(...)`, `lu.__doc__ = _lu_impl.__doc__`
            facts += _docstring_fact(source.definitions(origin, documented), lead.path, aliases)
        if not defs:
            continue
        runtime = next((d for d in defs if d.file.endswith(".py")), None)
        warns = source.deprecations(runtime) if runtime else []
        own = [w for w in warns if not w.params]
        for w in own[:1]:
            facts.append(Fact("deprecated", lead.path, None, w, aliases))
        for param in sorted({p for w in warns for p in w.params}):
            w = next(w for w in warns if param in w.params)
            facts.append(Fact("parameter-deprecated", lead.path, param, w, aliases))
        if not own:
            facts += _docstring_fact(defs, lead.path, aliases)
        if runtime and lead.kind in ad.FUNCTION_KINDS:
            resolved = resolved_defaults(runtime.node)  # type: ignore[arg-type]
            if resolved:
                defaults[lead.path] = resolved
    facts += module_facts(api, source)
    facts += docstring_table_facts(source, items, {f.name for f in facts if f.kind == "deprecated"})
    facts += native_facts(api, items)
    return facts, defaults


def docstring_table_facts(source: Source, items: dict[str, ad.Item], known: set[str]) -> list[Fact]:
    """Docstrings of C functions set in torch/_torch_docs.py, `add_docstr(torch.lu_solve, r\"\"\"...\"\"\")`:
    before 2.3 the stubs carry none (torch.lu_solve, torch.triangular_solve)."""
    facts = []
    for file, tree in source.trees("torch._torch_docs")[:1]:
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and len(node.args) >= 2):
                continue
            if (ad.dotted_name(node.func) or "").rpartition(".")[2] != "add_docstr":
                continue
            name = ad.dotted_name(node.args[0]) or ""
            if name in items and name not in known:
                sentence = says_deprecated(message(node.args[1], source.consts("torch._torch_docs")), name)
                if sentence:
                    facts.append(Fact("deprecated", name, None, Warn(sentence, "", file, node.lineno, how="docstring")))
                    known.add(name)
    return facts


MODULE_SAYS = re.compile(r"deprecat|moved to|will be removed|no longer", re.IGNORECASE)


def native_facts(api: ad.Api, items: dict[str, ad.Item]) -> list[Fact]:
    """Deprecations warned in C++ (torch.get_autocast_gpu_dtype), from the messages compiled into
    torch/lib/libtorch_python.so, for the public names they start with."""
    try:
        data = api.tree.read(NATIVE_LIBRARY)
    except (KeyError, OSError):
        return []
    facts = {}
    for match in NATIVE_MESSAGE.finditer(data):
        name = match.group(1).decode()
        if name in items and name not in facts:
            text = match.group(0)[1:].decode("utf-8", "replace")
            facts[name] = Fact("deprecated", name, None, Warn(text, "", NATIVE_LIBRARY, None, how="C++ message"))
    return [facts[name] for name in sorted(facts)]


def module_facts(api: ad.Api, source: Source) -> list[Fact]:
    """Modules that warn when imported, whose `__getattr__` warns for some names, or whose docstring
    says they moved or are deprecated."""
    facts = []
    for module in sorted(api.tree.modules):
        parent = module.rpartition(".")[0]
        if module.split(".")[0] not in api.packages or ad.under(module, list(NOT_SCANNED)):
            continue
        if parent and ad.is_private_module(parent):
            continue  # a private module of a public package may be a shim users import; deeper ones are not
        py = api.tree.modules[module].get(".py")
        if py is None or not (source.may_warn(py) or b"moved" in api.tree.read(py)):
            continue
        trees = [(f, t) for f, t in source.trees(module) if f.endswith(".py")]
        if not trees:
            continue
        file, tree = trees[0]
        args = ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
        )
        fake = ast.FunctionDef(name="<module>", args=args, body=tree.body, decorator_list=[], lineno=0)
        warns = [w for w in BodyVisitor(source, Def(module, file, fake), 0).run() if MODULE_SAYS.search(w.text)]
        for w in warns[:1]:
            facts.append(
                Fact(
                    "module-deprecated",
                    module,
                    None,
                    Warn(w.text, w.category, w.file, w.line, (), w.conditional, "module"),
                )
            )
        getattr_def = find_in(tree.body, ["__getattr__"])
        if isinstance(getattr_def, ast.FunctionDef):
            found = source.warnings_of(Def(module, file, getattr_def))
            names = getattr_names(tree, getattr_def) if found else []
            for name in names:
                w = found[0]
                facts.append(
                    Fact(
                        "deprecated",
                        f"{module}.{name}",
                        None,
                        Warn(w.text, w.category, w.file, w.line, (), True, "__getattr__"),
                    )
                )
            if found and not names and not warns:
                w = found[0]
                facts.append(
                    Fact(
                        "module-deprecated",
                        module,
                        None,
                        Warn(w.text, w.category, w.file, w.line, (), True, "__getattr__"),
                    )
                )
                warns = found
        if not warns:
            doc = ast.get_docstring(tree) or ""
            moved = re.search(r"[^.\n]*\b(?:has|have) (?:been )?moved to\b[^\n]*", doc)
            sentence = moved.group(0).strip() if moved else says_deprecated(doc, module, "module|package|file")
            if sentence:
                facts.append(Fact("module-deprecated", module, None, Warn(sentence, "", file, 1, how="docstring")))
        facts += assigned_wrappers(source, module, file, tree)
    return facts


def getattr_names(tree: ast.Module, func: ast.FunctionDef) -> list[str]:
    """The names a module `__getattr__` tests before it warns: `name in _deprecated_attrs` (a display
    of the module) or `name == "x"`."""
    displays: dict[str, list[str]] = {}
    for stmt in flat(tree.body):
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
            value = stmt.value
            keys = value.keys if isinstance(value, ast.Dict) else getattr(value, "elts", None)
            if isinstance(target, ast.Name) and keys is not None:
                displays[target.id] = [
                    k.value for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
                ]
    param = func.args.args[0].arg if func.args.args else "name"
    names: set[str] = set()
    tests = []
    for node in ast.walk(func):
        warns = isinstance(node, ast.If) and any(
            isinstance(n, ast.Call) and (ad.dotted_name(n.func) or "").endswith("warn")
            for stmt in node.body
            for n in ast.walk(stmt)
        )
        if warns:
            tests.append(node.test)  # type: ignore[union-attr]
    looked_up: dict[str, str] = {}  # `replacement = _deprecated_attrs.get(name)`: replacement -> the display
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get":
                value = value.func.value
            elif isinstance(value, ast.Subscript):
                value = value.value
            if (dotted := ad.dotted_name(value)) in displays:
                looked_up[node.targets[0].id] = dotted  # type: ignore[assignment]
    for node in (n for test in tests for n in ast.walk(test)):
        if isinstance(node, ast.Name) and node.id in looked_up:
            names.update(displays[looked_up[node.id]])
        if isinstance(node, ast.Compare) and ad.dotted_name(node.left) == param:
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, ast.In) and ad.dotted_name(right) in displays:
                    names.update(displays[ad.dotted_name(right) or ""])
                elif isinstance(op, ast.In) and isinstance(right, ast.Tuple | ast.List | ast.Set):
                    names.update(
                        e.value for e in right.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                    )
                elif isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
                    names.add(right.value)
    return sorted(n for n in names if n.isidentifier())


def assigned_wrappers(source: Source, module: str, file: str, tree: ast.Module) -> list[Fact]:
    """`uniform = _make_deprecate(uniform_)`: a public name bound to a wrapper that warns."""
    facts = []
    for stmt in flat(tree.body):
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        if not isinstance(target, ast.Name) or (target.id.startswith("_") and target.id != "__getattr__"):
            continue
        call = stmt.value.func if isinstance(stmt.value.func, ast.Call) else stmt.value
        dotted = ad.dotted_name(call.func)
        helper = source.resolve(module, dotted) if dotted else None
        if helper is None or not isinstance(helper.node, ast.FunctionDef):
            continue
        nested = source.nested_warnings(helper)
        if nested:
            name = module if target.id == "__getattr__" else f"{module}.{target.id}"
            kind = "module-deprecated" if target.id == "__getattr__" else "deprecated"
            w = nested[0]
            facts.append(Fact(kind, name, None, Warn(w.text, w.category, file, stmt.lineno, how=f"helper {dotted}")))
    return facts


def resolved_defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """`None` defaults the body replaces: `if p is None: p = X`, `p = X if p is None else p`, and
    `unset = p is None` ... `if unset: p = X`. Only straight-line top-level statements are read."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
    nones = {a.arg for a, d in pairs if isinstance(d, ast.Constant) and d.value is None}
    found: dict[str, str] = {}
    unset: dict[str, str] = {}  # local name -> the parameter it says is None

    def is_none_test(test: ast.expr) -> str | None:
        if isinstance(test, ast.Name) and test.id in unset:
            return unset[test.id]
        if (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id in nones
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Is)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        ):
            return test.left.id
        return None

    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, stmt.value
            if (param := is_none_test(value)) is not None:
                unset[target] = param
            elif target in nones and isinstance(value, ast.IfExp) and target not in found:
                param = is_none_test(value.test)
                if param == target:
                    found[target] = ast.unparse(value.body)
        elif isinstance(stmt, ast.If) and (param := is_none_test(stmt.test)) is not None and param not in found:
            for inner in stmt.body:
                if not isinstance(inner, ast.Assign) or len(inner.targets) != 1:
                    continue
                target, value = inner.targets[0], inner.value
                if (
                    isinstance(target, ast.Tuple)
                    and isinstance(value, ast.Tuple)
                    and len(target.elts) == len(value.elts)
                ):  # `weights_only, warn_weights_only = False, True` (torch 2.5)
                    pairs = dict(zip([ad.dotted_name(t) for t in target.elts], value.elts, strict=True))
                    if param in pairs:
                        found[param] = ast.unparse(pairs[param])
                        break
                elif ad.dotted_name(target) == param:
                    found[param] = ast.unparse(value)
                    break
    return found


# --- The history -------------------------------------------------------------------------------


def minor(version: str) -> str:
    return ".".join(version.split("+")[0].split(".")[:2])


def wheel_for(version: str, wheels: Path, download: bool = True) -> Path:
    found = sorted([*wheels.glob(f"torch-{version}-*.whl"), *wheels.glob(f"torch-{version}+*.whl")])
    if found:
        return found[0]
    if not download:
        raise SystemExit(f"api_history: no wheel of torch {version} in {wheels}")
    wheels.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", f"torch=={version}", "-d", str(wheels)]
    print(f"api_history: {shlex.join(command)}", file=sys.stderr)
    if subprocess.run(command, check=False).returncode != 0:
        # a pip configuration may cap torch below the newest release (constraints): retry without it
        subprocess.run(command, check=True, env={**os.environ, "PIP_CONFIG_FILE": os.devnull})
    return wheel_for(version, wheels, download=False)


@dataclass
class Release:
    version: str
    label: str
    api: ad.Api
    items: dict[str, ad.Item]
    facts: list[Fact]
    defaults: dict[str, dict[str, str]]
    source: Source

    def location(self, key: str) -> tuple[str, int] | None:
        origin, _, qualname = key.partition(":")
        defs = self.source.definitions(origin, qualname) if qualname else []
        return (defs[0].file, defs[0].node.lineno) if defs else None


def load_release(path: Path, warn) -> Release:
    tree = ad.open_tree(str(path), PACKAGE, ALSO)
    api = ad.Api(tree, PACKAGE, warn, include_unlisted=True, also=ALSO)
    items = ad.surface(api, [])
    source = Source(api)
    facts, defaults = scan_release(source, items)
    return Release(tree.version, f"torch-{tree.version}", api, items, facts, defaults, source)


def evidence(release: Release, file: str | None, line: int | None, **more) -> dict:
    record: dict = {"wheel": release.label}
    if file:
        record["file"] = file
    if file and line is not None:
        record["line"] = line
    return record | {k: v for k, v in more.items() if v}


def diff_records(old: Release, new: Release, entries: list[ad.Entry]) -> list[dict]:
    records = []
    for e in entries:
        gone = e.change in ("removed", "renamed", "made-private")
        now = new.items.get(e.name)
        side = new if now is not None and not gone else old
        where = side.location(now.key if side is new else e.origin)
        record = {"release": minor(new.version), "kind": e.change, "name": e.name}
        if e.parameter:
            record["parameter"] = e.parameter
        old_value, new_value = e.old_signature, e.new_signature
        if e.change in ("renamed", "made-private"):
            new_value = e.new_name
        elif e.change == "parameter-renamed":
            match = re.match(r"`(\w+)` → `(\w+)`", e.detail or "")
            old_value, new_value = (match.group(1), match.group(2)) if match else (e.parameter, None)
        elif e.change in ("default-changed", "default-removed"):
            match = re.match(r"`(.*)` → `(.*)`$", e.detail or "")
            old_value, new_value = (match.group(1), match.group(2)) if match else (e.detail, None)
        record |= {"old": old_value, "new": new_value}
        if e.change == "renamed":
            record["replacement"] = e.new_name
        record["evidence"] = evidence(side, *(where or (None, None)), detail=e.detail)
        if e.heuristic:
            record["heuristic"] = True
        if not e.listed:
            record["outside_all"] = True
        if e.aliases:
            record["aliases"] = e.aliases
        records.append(record)
    return records


def resolved_default_records(old: Release, new: Release) -> list[dict]:
    """Defaults that are `None` in the signature and resolved in the body to another value now."""
    records = []
    for path, resolved in sorted(new.defaults.items()):
        old_item, new_item = old.items.get(path), new.items.get(path)
        if old_item is None or new_item is None or len(old_item.sigs) != 1 or len(new_item.sigs) != 1:
            continue
        old_params = {p.name: p.default for p in old_item.sigs[0]}
        for param, value in sorted(resolved.items()):
            before = old.defaults.get(path, {}).get(param)
            if before is None and old_params.get(param) not in (None, "None"):
                before = old_params[param]  # a literal default, now None resolved in the body
            if before is None or before == value:
                continue
            where = new.location(new_item.key)
            records.append(
                {
                    "release": minor(new.version),
                    "kind": "default-changed",
                    "name": path,
                    "parameter": param,
                    "old": before,
                    "new": value,
                    "evidence": evidence(
                        new, *(where or (None, None)), detail=f"`None` resolved in the body to `{value}`"
                    ),
                }
            )
    return records


def fact_record(fact: Fact, release: Release) -> dict:
    w = fact.warn
    record = {"release": minor(release.version), "kind": fact.kind, "name": fact.name}
    if fact.parameter:
        record["parameter"] = fact.parameter
    replacement = replacement_in(w.text)
    if replacement:
        record["replacement"] = replacement
    if w.category:
        record["category"] = w.category
    record["evidence"] = evidence(release, w.file, w.line, warning=w.text.strip(), how=w.how, conditional=w.conditional)
    if fact.aliases:
        record["aliases"] = list(fact.aliases)
    return record


def history(paths: list[Path], markdown_dir: Path | None, command: str) -> dict:
    warn = lambda message: None  # noqa: E731  (unparsable files: api_diff already tells)
    changes: list[dict] = []
    first_seen: dict[tuple, dict] = {}
    last_seen: dict[tuple, str] = {}
    releases: dict[str, str] = {}
    previous: Release | None = None
    for path in paths:
        started = time.perf_counter()
        current = load_release(path, warn)
        releases[minor(current.version)] = current.version
        for fact in current.facts:
            key = (fact.kind, fact.name, fact.parameter)
            first_seen.setdefault(key, fact_record(fact, current))
            last_seen[key] = minor(current.version)
        if previous is not None:
            entries = ad.diff(current.api, previous.items, current.items)
            changes += diff_records(previous, current, entries)
            changes += resolved_default_records(previous, current)
            if markdown_dir is not None:
                write_markdown(markdown_dir, previous, current, entries, command, time.perf_counter() - started)
            previous.api.tree.close()
        print(
            f"api_history: {current.label}: {len(current.items)} public paths, {len(current.facts)} deprecations,"
            f" {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )
        previous = current
    if previous is not None:
        previous.api.tree.close()
    newest = minor(previous.version) if previous else ""
    for key, record in first_seen.items():
        if last_seen[key] != newest:
            record["until"] = last_seen[key]  # not seen in the newest release (removed, or no longer warns)
        changes.append(record)
    changes = dedupe(changes)
    return {"releases": releases, "changes": sort_changes(changes)}


def dedupe(changes: list[dict]) -> list[dict]:
    """A resolved default change that api_diff also saw as a literal one is kept once (api_diff's)."""
    seen = set()
    kept = []
    for record in changes:
        key = (record["release"], record["kind"], record["name"], record.get("parameter"))
        if key not in seen:
            seen.add(key)
            kept.append(record)
    return kept


def sort_changes(changes: list[dict]) -> list[dict]:
    order = {kind: i for i, kind in enumerate(CHANGE_KINDS)}
    return sorted(
        changes,
        key=lambda r: (
            ad.version_key(r["release"]),
            order.get(r["kind"], 99),
            r["name"],
            r.get("parameter") or "",
            json.dumps(r, sort_keys=True),
        ),
    )


def write_markdown(
    directory: Path, old: Release, new: Release, entries: list[ad.Entry], command: str, seconds: float
) -> None:
    meta = {
        "old": {"source": old.api.tree.label, "version": old.version, "names": len(old.items)},
        "new": {"source": new.api.tree.label, "version": new.version, "names": len(new.items)},
        "module_prefixes": [],
        "include_unlisted": True,
        "date": datetime.date.today().isoformat(),
        "seconds": round(seconds, 1),
        "command": command,
    }
    directory.mkdir(parents=True, exist_ok=True)
    name = f"torch-{old.version.split('+')[0]}-to-{new.version.split('+')[0]}.md"  # 2.13.0+cpu: 2.13.0
    (directory / name).write_text(ad.markdown(entries, meta, []))


ABOUT = (
    "Public API changes of torch (and functorch, shipped in the same wheel) across the newest patch of each"
    " minor release, found statically in the wheels by tools/api_history.py (which uses tools/api_diff.py);"
    " regenerate with `python3 tools/api_history.py`, then `python3 tools/confirm_facts.py` to mark facts"
    " confirmed by running code. `release`: the first minor release that shows the change (2.0 for a"
    " deprecation means: already in 2.0, the first release read). Kinds: those of api_diff (removed, renamed,"
    " made-private, parameter-removed, parameter-renamed, default-changed, ...) and deprecated,"
    " parameter-deprecated (a warning raised only for some values of the parameter, or when it is not"
    " passed), module-deprecated (warns on import or says it moved). `evidence.how`: warnings.warn,"
    " decorator, helper (a function that warns), docstring (the only trace in Python of a warning raised in"
    " C++), C++ message (a `torch.<name>(...) is deprecated` message compiled into torch/lib/libtorch_python.so),"
    " module, __getattr__; `conditional`: the warning is raised under a condition. `until`: the last release"
    " where a deprecation was seen (gone, or no longer warning, in the newest). `heuristic`: a guessed rename;"
    " `outside_all`: the module's __all__ leaves the name out. tools/api_history.py's docstring says what is"
    " found and what is not; `not_detectable` lists known deprecations the sources cannot show."
)


def apply_confirmations(data: dict, confirmed: dict | None) -> dict:
    data["_about"] = ABOUT
    confirmed_keys = set()
    for probe in (confirmed or {}).get("probes", []):
        if probe.get("confirmed"):
            confirmed_keys.add((probe["kind"], probe["name"], probe.get("parameter")))
    # a probe checks the newest behaviour: it confirms the newest change of its kind, name and parameter
    newest: dict[tuple, dict] = {}
    for record in data["changes"]:
        record["confirmed_by_run"] = False
        key = (record["kind"], record["name"], record.get("parameter"))
        if key in confirmed_keys and ad.version_key(record["release"]) >= ad.version_key(
            newest.get(key, {"release": "0"})["release"]
        ):
            newest[key] = record
    for record in newest.values():
        record["confirmed_by_run"] = True
    data["not_detectable"] = [
        {**item, "confirmed_by_run": (("deprecated", item["name"], None) in confirmed_keys)} for item in NOT_DETECTABLE
    ]
    return data


def dump(data: dict) -> str:
    """One change a line: diffs of the file stay readable."""
    head = {k: v for k, v in data.items() if k not in ("changes", "not_detectable")}
    text = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
    lines = [text + ","]
    for section in ("not_detectable", "changes"):
        rows = data.get(section, [])
        lines.append(f' "{section}": [')
        lines += [
            " " + json.dumps(r, ensure_ascii=False) + ("," if i + 1 < len(rows) else "") for i, r in enumerate(rows)
        ]
        lines.append(" ]," if section != "changes" else " ]")
    return "\n".join(lines) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="api_history.py")
    parser.add_argument("--wheels", type=Path, default=WHEELS, help=f"where the wheels are kept (default {WHEELS})")
    parser.add_argument("--releases", nargs="+", default=list(RELEASES), metavar="VERSION")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--markdown-dir", type=Path, default=MARKDOWN_DIR)
    parser.add_argument("--no-markdown", action="store_true", help="do not write docs/api-diff/torch-A-to-B.md")
    parser.add_argument("--no-download", action="store_true", help="fail when a wheel is missing")
    parser.add_argument("--confirmed", type=Path, default=CONFIRMED, help="tools/confirm_facts.py's results")
    args = parser.parse_args(argv)
    paths = [wheel_for(v, args.wheels, not args.no_download) for v in args.releases]
    command = shlex.join(["python3", "tools/api_history.py", *argv])
    data = {"_about": ABOUT, **history(paths, None if args.no_markdown else args.markdown_dir, command)}
    confirmed = json.loads(args.confirmed.read_text()) if args.confirmed.exists() else None
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(dump(apply_confirmations(data, confirmed)))
    counts = defaultdict(int)
    for record in data["changes"]:
        counts[record["kind"]] += 1
    print(
        f"api_history: {len(data['changes'])} changes: {dict(sorted(counts.items()))} -> {args.output}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
