"""Name resolution, modelled on pyflakes: scopes, bindings, and one question rules may ask —
"what is the qualified name of this expression, if certain?".

A name bound several ways in one scope (``try: import a as x`` / ``except: x = None``) is
ambiguous and resolves to nothing: a wrong guess would make a wrong rewrite. No rule reads
import statements itself.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import enum
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from torchup.prefilter.words import renames_a_word

_BUILTINS = frozenset(dir(builtins))


class ScopeKind(enum.Enum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    LAMBDA = "lambda"
    COMPREHENSION = "comprehension"


class BindingKind(enum.Enum):
    IMPORT = "import"  # import a.b as c  -> c means a.b
    SUBMODULE_IMPORT = "submodule-import"  # import a.b -> a means a
    FROM_IMPORT = "from-import"  # from a import b as c -> c means a.b
    ASSIGNMENT = "assignment"
    AUGMENTED = "augmented-assignment"
    PARAMETER = "parameter"
    DEFINITION = "definition"  # def / class
    OTHER = "other"  # for-targets, with-as, except-as, match captures, walrus, ...


IMPORT_KINDS = frozenset({BindingKind.IMPORT, BindingKind.SUBMODULE_IMPORT, BindingKind.FROM_IMPORT})


ITEM = "item"  # a step of ``Origin.path``: one item of an iterable


@dataclass(frozen=True)
class Origin:
    """Where a name bound by unpacking or a loop comes from: ``path`` steps into ``source``, each an
    index into a tuple (`a, (b, c) = ...`) or ``ITEM``, an item of an iterable (`for x in xs`)."""

    source: ast.expr
    path: tuple[int | str, ...]


@dataclass(eq=False)
class Binding:
    """One place that binds a name: an import, a definition, an assignment, a parameter."""

    name: str
    kind: BindingKind
    # A scope owns its bindings; a binding refers back to its scope weakly. A cycle between the two
    # would keep every scope, and through them the whole syntax tree, alive after an analysis until
    # Python's cycle collector traversed it all: a third of the time spent on large files.
    scope_ref: weakref.ref[Scope]
    node: ast.AST  # alias for imports, the def/class, the target Name, or the ast.arg
    target: str | None = None  # qualified name an import binds
    statement: ast.stmt | None = None  # the import statement, for rewriting it
    value: ast.expr | None = None  # right-hand side of `name = value`
    annotation: ast.expr | None = None
    typing_only: bool = False  # bound under `if TYPE_CHECKING:`: absent at run time

    @property
    def is_import(self) -> bool:
        return self.kind in IMPORT_KINDS

    @property
    def scope(self) -> Scope:
        scope = self.scope_ref()
        if scope is None:
            raise ReferenceError(f"binding of {self.name!r} outlived its resolver")
        return scope


@dataclass(eq=False)
class Scope:
    """A module, class, function, lambda or comprehension, and the names it binds."""

    kind: ScopeKind
    node: ast.AST
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    global_names: set[str] = field(default_factory=set)
    nonlocal_names: set[str] = field(default_factory=set)
    star_imports: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Lookup:
    """What a name lookup found: the bindings (empty: unbound here), or the star-imported module."""

    bindings: tuple[Binding, ...] = ()
    star_module: str | None = None
    ambiguous_star: bool = False

    @property
    def qualified_name_prefix(self) -> str | None:
        if self.bindings:
            targets = {b.target if b.is_import else None for b in self.bindings}
            return targets.pop() if len(targets) == 1 else None
        return None


@dataclass(frozen=True)
class Focus:
    """Where rules can look: the lines that spell a trigger word (or ``global``/``nonlocal``).

    A function or class body that contains none of these lines cannot hold a finding: every
    reference spells its name, and a binding the body makes stays local unless declared
    global/nonlocal. So its body is not walked. A name bound to a trigger word under another name
    (``from torch import qr as q``), or a name imported through a module a rule's path names
    (``from m.cond import f`` or ``from m.cond import *``: ``Rule.path_words``) would let later
    uses hide the word; the resolver then walks everything. Any other star import cannot: a name
    ``n`` it brings resolves to ``module.n``, which reaches a rule's name only if the use spells
    the word after ``n`` or ``n`` is the word (``from torch import *`` and ``qr(a)``), since a
    trigger word inside a rule's dotted name is a path word (tests/test_focus.py checks that).
    """

    lines: tuple[int, ...]  # sorted
    words: frozenset[str]  # the trigger words of the rules that may run
    present: frozenset[str] = frozenset()  # those that occur in the file
    path_words: frozenset[str] = frozenset()  # those that name a module on a rule's path (Rule.path_words)
    # The lines that spell `global` or `nonlocal` (each declaration's first line does); None: unknown.
    declaring: tuple[int, ...] | None = None

    def touches(self, node: ast.stmt) -> bool:
        return _spans_one_of(self.lines, node)

    def may_declare(self, node: ast.stmt) -> bool:
        """May a `global` or `nonlocal` statement stand inside ``node``?"""
        return self.declaring is None or _spans_one_of(self.declaring, node)

    def walk(self, node: ast.AST) -> Iterator[ast.AST]:
        """``ast.walk`` of ``node`` that skips every statement or expression (its decorators
        counted in) that spans none of the lines: what it skips spells no trigger word."""
        lines = self.lines
        stack = [node]
        while stack:
            current = stack.pop()
            yield current
            for child in ast.iter_child_nodes(current):
                first = getattr(child, "lineno", None)
                if first is not None:  # (`arguments`, `comprehension`, `withitem`, ... have no position)
                    decorators = getattr(child, "decorator_list", None)
                    if decorators:
                        first = decorators[0].lineno
                    index = bisect.bisect_left(lines, first)
                    if index == len(lines) or lines[index] > (child.end_lineno or first):
                        continue
                stack.append(child)


def _spans_one_of(lines: tuple[int, ...], node: ast.stmt) -> bool:
    """Does ``node`` span one of the sorted ``lines``?"""
    end = node.end_lineno or node.lineno
    index = bisect.bisect_left(lines, node.lineno)
    return index < len(lines) and lines[index] <= end


def _imports_star_at_top(tree: ast.Module, path_words: frozenset[str]) -> bool:
    """Does a statement of the module itself star-import a module whose path holds a path word
    (what ``_aliases_a_word`` would find after a focused walk, which is then spared)?"""
    return any(
        isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level and stmt.names[0].name == "*"
        and not path_words.isdisjoint(stmt.module.split("."))
        for stmt in tree.body
    )


class Resolver:
    """Built once per module; answers questions about names at any node it has seen."""

    def __init__(
        self, tree: ast.Module, focus: Focus | None = None, whole_tree: Callable[[], ast.Module] | None = None
    ) -> None:
        """``whole_tree``: when ``tree`` left out the bodies outside the focus (a skeleton), the
        parse of the whole text, for a module where the focus does not hold."""
        self.tree = tree
        if focus is not None and _imports_star_at_top(tree, focus.path_words):  # the focus cannot hold: walk all once
            if whole_tree is not None:
                self.tree = whole_tree()
            focus = None
        self._build(self.tree, focus)
        if focus is not None and self._aliases_a_word(focus.words, focus.path_words):
            if whole_tree is not None:
                self.tree = whole_tree()
            self._build(self.tree, None)

    def _build(self, tree: ast.Module, focus: Focus | None) -> None:
        self.focus = focus
        self.module_scope = Scope(ScopeKind.MODULE, tree, None)
        self.calls: list[ast.Call] = []
        self.attributes: list[ast.Attribute] = []
        self.names: list[ast.Name] = []
        self._scope_of: dict[int, Scope] = {}  # id(Name or Attribute or Call) -> scope it is in
        self._names_by_id: dict[str, list[ast.Name]] = {}
        self._attributes_by_name: dict[str, list[int]] | None = None  # attr -> indices in attributes
        self._callee: dict[int, ast.Call] = {}
        self._outer: dict[int, ast.expr] = {}  # id(call) -> `call.attr` or `call[...]` around it
        self._origins: dict[int, Origin] = {}  # id(a target Name in a tuple or loop) -> what it is taken from
        self._lookup_cache: dict[tuple[int, str], Lookup] = {}
        self.imports_torch = False
        self.scopes: list[Scope] = [self.module_scope]
        self.import_bindings: list[Binding] = []
        _ScopeBuilder(self).run(tree)

    def _aliases_a_word(self, words: frozenset[str], path_words: frozenset[str]) -> bool:
        """Could a use elsewhere reach a trigger word without spelling it? Through a name bound to
        it under another name (`from torch import qr as q`), a name imported through a module of a
        rule's path (`from m.cond import f`: ``Rule.path_words``), or a star import."""
        if any(not path_words.isdisjoint(module.split(".")) for module in self.module_scope.star_imports):
            return True  # (a name it brings resolves under that module, which spells a word: see Focus)
        return any(
            binding.target and renames_a_word(binding.name, binding.target.split("."), words, path_words)
            for binding in self.import_bindings
        )

    # -- questions rules ask ------------------------------------------------------------
    def scope_of(self, node: ast.AST) -> Scope:
        return self._scope_of.get(id(node), self.module_scope)

    def call_of_callee(self, node: ast.AST) -> ast.Call | None:
        """The call whose function expression is ``node``, if any."""
        return self._callee.get(id(node))

    def outer_access(self, call: ast.Call) -> ast.expr | None:
        """The ``call.attr`` or ``call[index]`` expression that directly uses the call's result."""
        return self._outer.get(id(call))

    def origin(self, target: ast.Name) -> Origin | None:
        """What a name bound by unpacking or a loop is taken from: `b` in `a, b = pair` is element 1
        of `pair`; `x` in `for x in xs` (or a comprehension's `for`) is an item of `xs`."""
        return self._origins.get(id(target))

    def lookup(self, name: str, scope: Scope) -> Lookup:
        key = (id(scope), name)
        found = self._lookup_cache.get(key)
        if found is None:
            found = self._lookup(name, scope)
            self._lookup_cache[key] = found
        return found

    def lookup_name(self, node: ast.Name) -> Lookup:
        return self.lookup(node.id, self.scope_of(node))

    def qualified_name(self, expr: ast.AST) -> str | None:
        """``torch.linalg.qr`` for ``th.linalg.qr`` after ``import torch as th``; None if unsure."""
        if isinstance(expr, ast.Name):
            found = self.lookup_name(expr)
            if found.bindings:
                return found.qualified_name_prefix
            if found.star_module:
                return f"{found.star_module}.{expr.id}"
            return None
        if isinstance(expr, ast.Attribute):
            base = self.qualified_name(expr.value)
            return f"{base}.{expr.attr}" if base else None
        return None

    def name_in_scope(self, name: str, scope: Scope) -> str | None:
        """The qualified name a bare ``name`` has at ``scope`` (None: unbound or not an import)."""
        found = self.lookup(name, scope)
        if found.bindings:
            return found.qualified_name_prefix
        return None

    def is_unbound(self, name: str, scope: Scope) -> bool:
        found = self.lookup(name, scope)
        return not found.bindings and not found.star_module and not found.ambiguous_star

    def attributes_named(self, names: Iterable[str]) -> list[ast.Attribute]:
        """The ``x.<name>`` reads recorded, in the order recorded (`a.b.c` before `a.b`, which starts
        at the same place): indexed on the first question (rules ask one each; a scan of every
        attribute per rule added up on large files)."""
        if self._attributes_by_name is None:
            self._attributes_by_name = {}
            for index, node in enumerate(self.attributes):
                self._attributes_by_name.setdefault(node.attr, []).append(index)
        indices = sorted(index for name in names for index in self._attributes_by_name.get(name, ()))
        return [self.attributes[index] for index in indices]

    def names_spelled(self, names: Iterable[str]) -> list[ast.Name]:
        """The names read that spell one of ``names``."""
        return [node for name in names for node in self._names_by_id.get(name, ())]

    def references(self, binding: Binding) -> list[ast.Name] | None:
        """Every use of ``binding``; None when some use might also mean another binding."""
        refs = []
        for node in self._names_by_id.get(binding.name, ()):
            found = self.lookup_name(node)
            if binding in found.bindings:
                if len(found.bindings) > 1:
                    return None
                refs.append(node)
        return refs

    def names_bound_to(self, targets: frozenset[str]) -> set[str]:
        """Local names that imports bind to any of ``targets`` (``q`` in ``from torch import qr as q``)."""
        return {b.name for b in self.import_bindings if b.target in targets}

    def exported_names(self) -> set[str]:
        """Strings in a module-level ``__all__``: removing their imports would break re-exports."""
        names: set[str] = set()
        for binding in self.module_scope.bindings.get("__all__", ()):
            if binding.statement is not None:
                for node in ast.walk(binding.statement):
                    if isinstance(node, ast.Constant) and isinstance(node.value, str):
                        names.add(node.value)
        return names

    def binding_usable_at(self, binding: Binding, node: ast.AST) -> bool:
        """Is ``binding`` in effect when ``node`` runs? Module-level code runs top to bottom; a
        function body runs later. A TYPE_CHECKING-only import is never in effect."""
        if binding.typing_only:
            return False
        scope: Scope | None = self.scope_of(node)
        while scope is not None:
            if scope.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
                return True
            scope = scope.parent
        line = getattr(binding.statement or binding.node, "lineno", 0)
        return line <= getattr(node, "lineno", 0)

    def enclosing_class(self, scope: Scope) -> ast.ClassDef | None:
        """The class a method's scope belongs to, if ``scope`` is a function directly in a class."""
        parent = scope.parent
        if scope.kind is ScopeKind.FUNCTION and parent and parent.kind is ScopeKind.CLASS:
            assert isinstance(parent.node, ast.ClassDef)
            return parent.node
        return None

    # -- internals -------------------------------------------------------------------------
    def _lookup(self, name: str, scope: Scope) -> Lookup:
        current: Scope | None = scope
        innermost = True
        while current is not None:
            # Class bodies are invisible to the functions and comprehensions nested in them.
            if current.kind is ScopeKind.CLASS and not innermost:
                current = current.parent
                continue
            if name in current.global_names:
                return self._lookup_module(name)
            if name in current.bindings:
                return Lookup(tuple(current.bindings[name]))
            innermost = False
            current = current.parent
        return self._lookup_star(name)

    def _lookup_module(self, name: str) -> Lookup:
        if name in self.module_scope.bindings:
            return Lookup(tuple(self.module_scope.bindings[name]))
        return self._lookup_star(name)

    def _lookup_star(self, name: str) -> Lookup:
        if name.startswith("_"):
            return Lookup()  # `import *` skips private names (unless `__all__` lists them: unknown here)
        modules = set(self.module_scope.star_imports)
        if len(modules) == 1:
            return Lookup(star_module=modules.pop())
        if modules:
            return Lookup(ambiguous_star=True)
        return Lookup()

    def iter_scopes(self) -> Iterator[Scope]:
        return iter(self.scopes)


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Nodes with nothing below them that binds a name or refers to one.
_LEAVES = (ast.Constant, ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def _skip(builder: _ScopeBuilder, node: ast.AST) -> None:
    return None


# The visit function of each node class, unbound: a table of bound methods would make each builder a
# reference cycle that kept its resolver, and so the whole tree, alive until the cycle collector ran.
_VISITS: dict[type, Callable[[_ScopeBuilder, Any], None]] = {}
# The fields of each node class that may hold a node to visit: all but those that never do (names,
# flags, numbers) or hold only what ``_LEAVES`` skips (a Load/Store marker, an operator).
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "asname", "module", "level", "is_async",
                          "conversion", "kind", "type_comment"})  # (not `name`: a `type` alias's is a node)


class _ScopeBuilder(ast.NodeVisitor):
    """One walk over the tree: scopes, bindings, and the nodes rules are dispatched on."""

    def __init__(self, resolver: Resolver) -> None:
        self.r = resolver
        self.scope = resolver.module_scope
        self.typing_only = False

    def run(self, tree: ast.Module) -> None:
        for stmt in tree.body:
            self.visit(stmt)

    # The walk is most of the resolver's time: dispatch through a per-class table, and skip what
    # has nothing to bind or record (constants, Load/Store markers, operators).
    def visit(self, node: ast.AST) -> None:
        method = _VISITS.get(type(node))
        if method is None:
            visitor = getattr(_ScopeBuilder, f"visit_{type(node).__name__}", _ScopeBuilder.generic_visit)
            method = _skip if isinstance(node, _LEAVES) else visitor
            _VISITS[type(node)] = method
        method(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        fields = _CHILD_FIELDS.get(type(node))
        if fields is None:
            fields = _CHILD_FIELDS[type(node)] = tuple(name for name in node._fields if name not in _LEAF_FIELDS)
        for name in fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    # -- helpers ---------------------------------------------------------------------------
    def in_focus(self, node: ast.stmt) -> bool:
        return self.r.focus is None or self.r.focus.touches(node)

    def bind(self, name: str, kind: BindingKind, node: ast.AST, **extra: object) -> None:
        scope = self.scope
        if name in scope.global_names:
            scope = self.r.module_scope
        elif name in scope.nonlocal_names:
            parent = scope.parent
            while parent is not None and (parent.kind is ScopeKind.CLASS or name not in parent.bindings):
                if parent.kind is ScopeKind.MODULE:
                    break
                parent = parent.parent
            scope = parent or scope
        elif scope.kind is ScopeKind.COMPREHENSION and kind is BindingKind.OTHER and extra.get("walrus"):
            while scope.kind is ScopeKind.COMPREHENSION and scope.parent is not None:
                scope = scope.parent
        extra.pop("walrus", None)
        binding = Binding(name, kind, weakref.ref(scope), node, typing_only=self.typing_only, **extra)  # type: ignore[arg-type]
        scope.bindings.setdefault(name, []).append(binding)
        if binding.is_import:
            self.r.import_bindings.append(binding)

    def push(self, kind: ScopeKind, node: ast.AST) -> Scope:
        previous = self.scope
        self.scope = Scope(kind, node, previous)
        self.r.scopes.append(self.scope)
        return previous

    def visit_arguments_defaults(self, args: ast.arguments) -> None:
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.visit(default)

    def bind_parameters(self, args: ast.arguments) -> None:
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            self.bind(arg.arg, BindingKind.PARAMETER, arg, annotation=arg.annotation)
        for arg in (args.vararg, args.kwarg):
            if arg is not None:
                self.bind(arg.arg, BindingKind.PARAMETER, arg)

    def visit_annotations(self, args: ast.arguments) -> None:
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None and arg.annotation is not None:
                self.visit(arg.annotation)

    # -- imports ---------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "torch" or alias.name.startswith("torch."):
                self.r.imports_torch = True
            if alias.asname:
                self.bind(alias.asname, BindingKind.IMPORT, alias, target=alias.name, statement=node)
            else:
                top = alias.name.split(".", 1)[0]
                kind = BindingKind.IMPORT if top == alias.name else BindingKind.SUBMODULE_IMPORT
                self.bind(top, kind, alias, target=top, statement=node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module if not node.level else None  # relative imports are the user's own code
        if module and (module == "torch" or module.startswith("torch.")):
            self.r.imports_torch = True
        for alias in node.names:
            if alias.name == "*":
                if module:
                    self.r.module_scope.star_imports.append(module)
                continue
            target = f"{module}.{alias.name}" if module else None
            self.bind(alias.asname or alias.name, BindingKind.FROM_IMPORT, alias, target=target, statement=node)

    # -- definitions -----------------------------------------------------------------------
    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit_arguments_defaults(node.args)
        self.visit_annotations(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        self.bind(node.name, BindingKind.DEFINITION, node, statement=node)
        if not self.in_focus(node):
            return
        previous = self.push(ScopeKind.FUNCTION, node)
        self.bind_parameters(node.args)
        if self.r.focus is None or self.r.focus.may_declare(node):
            self._predeclare(node.body)
        for stmt in node.body:
            self.visit(stmt)
        self.scope = previous

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit_arguments_defaults(node.args)
        previous = self.push(ScopeKind.LAMBDA, node)
        self.bind_parameters(node.args)
        self.visit(node.body)
        self.scope = previous

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(expr)
        if self.in_focus(node):
            previous = self.push(ScopeKind.CLASS, node)
            for stmt in node.body:
                self.visit(stmt)
            self.scope = previous
        self.bind(node.name, BindingKind.DEFINITION, node, statement=node)

    def _predeclare(self, body: list[ast.stmt]) -> None:
        """Record global/nonlocal declarations before the body binds anything."""
        stack = list(body)
        while stack:
            stmt = stack.pop()
            if isinstance(stmt, ast.Global):
                self.scope.global_names.update(stmt.names)
            elif isinstance(stmt, ast.Nonlocal):
                self.scope.nonlocal_names.update(stmt.names)
            elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.extend(child for child in ast.iter_child_nodes(stmt) if isinstance(child, ast.stmt))

    def _visit_comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        generators = node.generators
        self.visit(generators[0].iter)  # evaluated in the enclosing scope
        previous = self.push(ScopeKind.COMPREHENSION, node)
        for index, generator in enumerate(generators):
            if index:
                self.visit(generator.iter)
            self._mark_origins(generator.target, generator.iter, (ITEM,))
            self.visit(generator.target)
            for condition in generator.ifs:
                self.visit(condition)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        self.scope = previous

    visit_ListComp = _visit_comprehension
    visit_SetComp = _visit_comprehension
    visit_DictComp = _visit_comprehension
    visit_GeneratorExp = _visit_comprehension

    # -- assignments -----------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.bind(target.id, BindingKind.ASSIGNMENT, target, value=node.value, statement=node)
            else:
                self._mark_origins(target, node.value, ())
                self.visit(target)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._mark_origins(node.target, node.iter, (ITEM,))
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def _mark_origins(self, target: ast.expr, source: ast.expr, path: tuple[int | str, ...]) -> None:
        """Record what each name of an unpacking or loop target is taken from (``Resolver.origin``);
        the names after a starred one are counted from the end: none is recorded there."""
        if isinstance(target, ast.Name):
            self.r._origins[id(target)] = Origin(source, path)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for index, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    return
                self._mark_origins(element, source, (*path, index))

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.annotation)
        if isinstance(node.target, ast.Name):
            if node.value is not None or self.scope.kind is not ScopeKind.MODULE:
                self.bind(
                    node.target.id,
                    BindingKind.ASSIGNMENT,
                    node.target,
                    value=node.value,
                    annotation=node.annotation,
                    statement=node,
                )
        else:
            self.visit(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._record_name(node.target)  # reads the name too
            self.bind(node.target.id, BindingKind.AUGMENTED, node.target, statement=node)
        else:
            self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.bind(node.target.id, BindingKind.OTHER, node.target, value=node.value, walrus=True)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.bind(node.name, BindingKind.OTHER, node)
        for stmt in node.body:
            self.visit(stmt)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self.bind(node.name, BindingKind.OTHER, node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.bind(node.name, BindingKind.OTHER, node)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.generic_visit(node)
        if node.rest:
            self.bind(node.rest, BindingKind.OTHER, node)

    # -- leaves ----------------------------------------------------------------------------
    def _record_name(self, node: ast.Name) -> None:
        self._remember(node)
        self.r.names.append(node)
        self.r._names_by_id.setdefault(node.id, []).append(node)

    def _remember(self, node: ast.AST) -> None:
        self.r._scope_of[id(node)] = self.scope

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self.bind(node.id, BindingKind.OTHER, node)
        else:  # (``_record_name``, inlined: a tenth of the nodes walked are names read)
            resolver = self.r
            resolver._scope_of[id(node)] = self.scope
            resolver.names.append(node)
            resolver._names_by_id.setdefault(node.id, []).append(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        current: ast.expr = node
        while isinstance(current, ast.Attribute):  # `a.b.c...`: down the chain without recursing
            self._remember(current)
            if isinstance(current.ctx, ast.Load):
                self.r.attributes.append(current)
            if isinstance(current.value, ast.Call):
                self.r._outer[id(current.value)] = current
            current = current.value
        self.visit(current)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        """Left operands first, without recursing down the chain: generated code joins thousands
        of terms with `+`, deeper than Python's recursion limit."""
        rights = []
        left: ast.expr = node
        while isinstance(left, ast.BinOp):
            rights.append(left.right)
            left = left.left
        self.visit(left)
        for right in reversed(rights):
            self.visit(right)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        """`a if p else b if q else ...` chains, generated thousands deep, walked without recursing."""
        current: ast.expr = node
        while isinstance(current, ast.IfExp):
            self.visit(current.test)
            self.visit(current.body)
            current = current.orelse
        self.visit(current)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.value, ast.Call):
            self.r._outer[id(node.value)] = node
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self._remember(node)
        self.r.calls.append(node)
        self.r._callee[id(node.func)] = node
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        is_type_checking = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        )
        self.visit(test)
        previous = self.typing_only
        self.typing_only = previous or is_type_checking
        for stmt in node.body:
            self.visit(stmt)
        self.typing_only = previous
        for stmt in node.orelse:
            self.visit(stmt)

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.global_names.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.scope.nonlocal_names.update(node.names)
