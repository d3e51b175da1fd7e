"""TU160: optimizers warn in torch 2.15 when their parameters come in a set."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, as_argument
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix, Severity
from torchup.core.facts import FACTS
from torchup.prefilter.words import is_word_char

if TYPE_CHECKING:
    from torchup.core.lexing import Spans

_FACTS = FACTS["deprecated_arguments"]["torch.optim.Optimizer(params=set)"]
WARNING = _FACTS["warning"]
GROUP_ERROR = _FACTS["group_error"]
# Every optimizer class, under torch.optim and under its own module (torch.optim.adam.Adam).
OPTIMIZERS = frozenset(
    {*_FACTS["classes"], *(f"{module}.{cls.rpartition('.')[2]}" for cls, module in _FACTS["modules"].items())}
)
_SET_OPERATORS = (ast.BitOr, ast.BitAnd, ast.Sub, ast.BitXor)
_SET_METHODS = frozenset({"union", "intersection", "difference", "symmetric_difference", "copy"})
_MAX_DEPTH = 8
_NO_NAMES = _MAX_DEPTH + 1  # a starting depth for is_set that follows no names (only literal sets)
_MAX_STEPS = _NO_NAMES + 64  # operators and method calls followed at most (`s | a | b | ...`): no RecursionError
_WORD = re.compile(r"\w+")
# A brace that surely opens a dict display: `{}`, `{**m`, or a key (a string, a number or a dotted
# name, not `lambda`) and then a colon that is not `:=`. Any other may open a set display.
_DICT_START = r"""\{\s*(?:\}|\*\*|(?:"[^"\n\\]*"|'[^'\n\\]*'|(?!lambda\b)[\w.]+)\s*:(?!=))"""
_DICT_STARTS = {str: re.compile(_DICT_START), bytes: re.compile(_DICT_START.encode("ascii"))}
# The name `set` called: `(` next (blanks, a comment or a backslash between: unsure, so yes). Not
# `set[int]` in an annotation, which builds no set. The word boundary before it is checked apart
# (``_starts_a_word``): a pattern that starts with `\b` is tried at every character, one that
# starts with a literal is found by a fast search (twenty times faster over a large file).
_SET_CALL = r"set\b(?=\s*(?:[(#\\]|$))"
_SET_CALLS = {str: re.compile(_SET_CALL), bytes: re.compile(_SET_CALL.encode("ascii"))}
_CLASS_NAME = re.compile(r"class(?:[ \t]|\\\n)+(\w+)")
# After an optimizer's name: a call's parenthesis (blanks, line breaks, comments, backslashes and
# closing parentheses between), or an import's `as` (blanks, line breaks, comments, backslashes).
_CALLED_OR_RENAMED_TEXT = r"(?:[ \t\f\r\n)\\]|#[^\n]*)*\(|(?:[ \t\f\r\n\\]|#[^\n]*)+as\b"
_CALLED_OR_RENAMED = {
    str: re.compile(_CALLED_OR_RENAMED_TEXT), bytes: re.compile(_CALLED_OR_RENAMED_TEXT.encode("ascii"))
}
_HEADER_LINES = 64  # a class header longer than this is taken to spell an optimizer
HELP = "pass a list; `list(dict.fromkeys(...))` keeps the set's de-duplication in a fixed order"


def is_set(ctx: Context, node: ast.expr, depth: int = 0) -> bool:
    """Whether ``node`` certainly evaluates to a ``set`` (not a frozenset: 2.15 does not warn for one)."""
    if depth > _MAX_STEPS:
        return False
    if isinstance(node, (ast.Set, ast.SetComp)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "set":
        return ctx.resolver.is_unbound("set", ctx.scope_of(node))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SET_METHODS:
        return is_set(ctx, node.func.value, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _SET_OPERATORS):
        return is_set(ctx, node.left, depth + 1)  # set | x is a set (or a TypeError)
    if isinstance(node, ast.Name) and depth < _MAX_DEPTH:
        bindings = ctx.resolver.lookup_name(node).bindings
        return len(bindings) == 1 and bindings[0].value is not None and is_set(ctx, bindings[0].value, depth + 1)
    return False


def _list_of(ctx: Context, node: ast.expr) -> str | None:
    """The text of ``list(dict.fromkeys(...))`` for a set expression; None when there is no exact spelling."""
    if isinstance(node, ast.Set):
        inner = f"[{ctx.segment(node)[1:-1]}]"
    elif isinstance(node, ast.SetComp):
        inner = ctx.segment(node)[1:-1]  # a generator expression as the sole argument
        if _is_async(node):
            inner = f"[{inner}]"  # `{p async for ...}` as a generator would be an async one: not iterable
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "set":
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
            return None  # set() is empty: the optimizer raises anyway
        inner = as_argument(ctx.source, node.args[0])
        if isinstance(node.args[0], ast.GeneratorExp) and inner.startswith("(") and inner.endswith(")"):
            inner = inner[1:-1]  # `set(p for p in ...)`: the generator shares the call's parentheses
    else:
        inner = as_argument(ctx.source, node)
    return f"list(dict.fromkeys({inner}))"


def _is_async(node: ast.SetComp) -> bool:
    """Whether the comprehension is asynchronous (``async for`` or ``await`` in it, outside nested scopes)."""
    if any(generator.is_async for generator in node.generators):
        return True
    # (The first iterable is evaluated outside the comprehension: an `await` there does not count.)
    stack: list[ast.AST] = [node.elt, *(g.iter for g in node.generators[1:])]
    stack += [condition for generator in node.generators for condition in generator.ifs]
    while stack:
        child = stack.pop()
        if isinstance(child, ast.Await) or (isinstance(child, ast.comprehension) and child.is_async):
            return True
        if not isinstance(child, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(child))
    return False


class OptimizerSetParams(Rule):
    change = Change.WARNS
    code = "TU160"
    name = "optimizer-set-params"
    summary = "Optimizers warn in torch 2.15 when `params` is a set (its order changes between runs); pass a list."
    since = "2.15"
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    # Any mention: a subclass, an alias, a call (``may_report`` and ``focus_lines`` narrow it).
    looks_for = LooksFor(words=tuple(sorted({name.rpartition(".")[2] for name in OPTIMIZERS})))
    # ``is_set`` reads a set where the call is, or follows a name bound in the call's own scopes.
    reports_from_kept_code = True
    docs = RuleDocs(
        what="""
        Finds optimizers constructed with a set as their parameters (first argument or
        `params=`): `torch.optim.SGD`, `Adam`, `AdamW`, ... every class in `torch.optim` and
        `torch.optim.Optimizer` itself, through any import form; classes defined in the same
        file that derive from one of them (when their `__init__`, if any, takes `params` first
        and hands it to the base class as it is, or takes `*args` and passes them on);
        and the `super().__init__(...)` (or `torch.optim.X.__init__(self, ...)`) call in the
        `__init__` of such a class. A set is a set display `{a, b}`, a set comprehension, a call
        of the built-in `set(...)`, `s | t` / `s & t` / `s - t` / `s ^ t` and `s.union(...)` ...
        on one of those, or a name assigned once from one of them. Optimizer subclasses imported
        from other files are not known. Not reported: lists, tuples, generators,
        `model.parameters()`, `frozenset(...)` (2.15 does not warn for it), and sets inside
        parameter-group dicts, which already raise in 2.13 and 2.14.
        """,
        why=f"""
        A tensor hashes by its identity (its memory address), so a set of tensors iterates in an
        order that changes from run to run, and with it the parameters' order in `param_groups`
        and the integer ids that `state_dict()` gives them. torch 2.15 warns in
        `Optimizer.__init__`:

            {WARNING}

        (A set inside a parameter group dict already raises in 2.13.0 and 2.14.1:
        `{GROUP_ERROR}`)
        """,
        fix="""
        The set becomes a list that keeps its de-duplication: `{a, b}` ->
        `list(dict.fromkeys([a, b]))`, `set(x)` -> `list(dict.fromkeys(x))`,
        `{p for p in ...}` -> `list(dict.fromkeys(p for p in ...))` (`[...]` inside when the
        comprehension is asynchronous: `async for` or `await`), any other set expression
        `s` -> `list(dict.fromkeys(s))`. Where the elements are known to be distinct, a plain
        list (`[a, b]`, `list(model.parameters())`) is simpler.
        """,
        fix_safety="""
        Unsafe. The same tensors go to the optimizer, each once (`dict.fromkeys` de-duplicates
        exactly as a set does: by identity for tensors); what changes is their order, from the
        set's order (different on every run) to the order in which the code lists them.
        Per-parameter optimizers (SGD, Adam, AdamW, ...) compute the same steps in either order
        (a differential test runs both versions under torch 2.14.1 and compares the parameters
        bit for bit). The order still matters for `state_dict()`: parameters are saved by
        position, so a checkpoint written by the old code loads its per-parameter state onto
        whichever parameter now has that position - as it already did between two runs of the
        old code. LBFGS flattens the parameters in this order, so its results differ by rounding
        (up to 1.5e-8 relative in float64 after three steps in that test; between two runs of
        the old code they differ the same way). `list(set(x))` would keep the old behaviour exactly, run-to-run order
        included; it silences the warning without fixing what it warns about.
        """,
        wheels_vs_notes="""
        The release notes say passing a set warns. The 2.15.0 sources show that it warns only
        for `isinstance(params, set)` at the constructor (so not for a frozenset), that the
        warning announces an error in a future release, and that a set inside a parameter group
        is a TypeError already in 2.13.0 and 2.14.1. torch 2.14.1 accepts a set as `params`
        without a warning.
        """,
    )
    examples = (
        Example(
            "a set display and set(...)",
            """
            import torch
            from torch.optim import AdamW

            w = torch.nn.Parameter(torch.ones(3))
            b = torch.nn.Parameter(torch.zeros(3))
            model = torch.nn.Linear(3, 3)
            sgd = torch.optim.SGD({w, b}, lr=0.1)
            adamw = AdamW(set(model.parameters()), lr=1e-3)
            """,
            fixed="""
            import torch
            from torch.optim import AdamW

            w = torch.nn.Parameter(torch.ones(3))
            b = torch.nn.Parameter(torch.zeros(3))
            model = torch.nn.Linear(3, 3)
            sgd = torch.optim.SGD(list(dict.fromkeys([w, b])), lr=0.1)
            adamw = AdamW(list(dict.fromkeys(model.parameters())), lr=1e-3)
            """,
            findings=2,
            unsafe=True,
            executable=False,
        ),
        Example(
            "a comprehension, a set built earlier, and a subclass",
            """
            import torch.optim as optim

            class Clipped(optim.Adam):
                pass

            def build(model, head):
                trainable = set(model.parameters()) | set(head.parameters())
                first = optim.Adam(params={p for p in model.parameters() if p.requires_grad})
                second = Clipped(trainable, lr=1e-4)
                return first, second
            """,
            fixed="""
            import torch.optim as optim

            class Clipped(optim.Adam):
                pass

            def build(model, head):
                trainable = set(model.parameters()) | set(head.parameters())
                first = optim.Adam(params=list(dict.fromkeys(p for p in model.parameters() if p.requires_grad)))
                second = Clipped(list(dict.fromkeys(trainable)), lr=1e-4)
                return first, second
            """,
            findings=2,
            unsafe=True,
            executable=False,
        ),
        Example(
            "not reported: lists, frozensets, generators",
            """
            import torch

            model = torch.nn.Linear(3, 3)
            a = torch.optim.SGD(list(model.parameters()), lr=0.1)
            b = torch.optim.SGD(frozenset(model.parameters()), lr=0.1)
            c = torch.optim.Adam(p for p in model.parameters())
            """,
            findings=0,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        # A finding needs a set, and a set in this file (``is_set`` follows assignments here only),
        # where the call can reach it: not in the body of a function that spells no trigger word;
        # and a call of an optimizer (or of a subclass defined here), not only annotations,
        # `isinstance` tests or imports.
        return _may_build_a_set(spans) and _may_construct(spans, self.triggers)

    def focus_lines(self, text: str) -> list[int]:
        # The uses of the optimizer subclasses this file defines, and their `__init__`: its
        # parameters and its call of the base's.
        names = _local_subclass_names(text, frozenset(self.triggers))
        return _lines_of(text, {*names, "__init__"}) if names else []

    def check(self, ctx: Context) -> None:
        if not ctx.resolver.imports_torch:
            return
        local = _local_optimizers(ctx)
        visited = {id(call) for call in ctx.resolver.calls}
        # (call, what is constructed, index of `params` among the positional arguments, may follow names)
        found = [(call, qualname.rpartition(".")[2], 0, True) for call, qualname in ctx.calls_to(OPTIMIZERS)]
        for call in ctx.resolver.calls:
            if isinstance(call.func, ast.Name):  # a subclass defined in this file
                bindings = ctx.resolver.lookup_name(call.func).bindings
                if len(bindings) == 1 and local.get(id(bindings[0].node)):
                    found.append((call, call.func.id, 0, True))
        shadowed: set[int] = set()  # calls in a body that binds `list`, `dict` or `super` itself
        for cls, init, call, position in _base_initialisations(ctx, local):
            # A method body without a trigger word is not walked by the resolver: follow no names there.
            what = f"{ctx.segment(call.func)}` in `{cls.name}"
            found.append((call, what, position, id(call) in visited))
            if _binds(init, ("list", "dict", "super")):
                shadowed.add(id(call))
        for call, what, position, follow_names in found:
            params = call.args[position] if len(call.args) > position else \
                next((k.value for k in call.keywords if k.arg == "params"), None)
            if params is None or isinstance(params, ast.Starred) or any(
                isinstance(a, ast.Starred) for a in call.args[:position]
            ) or not is_set(ctx, params, 0 if follow_names else _NO_NAMES):
                continue
            text = _list_of(ctx, params)
            names_free = id(call) not in shadowed and all(
                ctx.resolver.is_unbound(name, ctx.scope_of(call)) for name in ("list", "dict")
            )
            fix = None
            if text is not None and names_free:
                short_text = len(text) <= 60 and "\n" not in text
                fix = Fix(f"use `{text}`" if short_text else "use `list(dict.fromkeys(...))`",
                          Applicability.UNSAFE, (Edits(ctx.source).replace(params, text),))
            ctx.report(
                params,
                f"`{what}` warns in torch 2.15 when its parameters come in a set: their order changes from run to "
                "run (FutureWarning; an error in a future release)",
                fix=fix,
                help=None if fix else HELP,
            )


def _may_build_a_set(spans: Spans[str] | Spans[bytes]) -> bool:
    """Might the code of ``spans.text`` build a set: a call of `set`, a set display or a set
    comprehension, outside comments and strings (replacement fields of f-strings count)? What
    ``is_set`` accepts comes down to one of those in the same file."""
    text = spans.text
    kind = type(text)
    calls = _SET_CALLS[kind].finditer(text)  # type: ignore[arg-type]
    if any(_starts_a_word(text, match.start()) and spans.in_expression(match.start()) for match in calls):
        return True
    brace = "{" if kind is str else b"{"
    dict_start = _DICT_STARTS[kind]
    position = text.find(brace)  # type: ignore[arg-type]
    while position >= 0:
        if dict_start.match(text, position) is None and spans.in_expression(position):  # type: ignore[arg-type]
            return True
        position = text.find(brace, position + 1)  # type: ignore[arg-type]
    return False


def _may_construct(spans: Spans[str] | Spans[bytes], words: tuple[str, ...]) -> bool:
    """Might the code call an optimizer class? A call's callee resolves to one only through an
    import (``Resolver.qualified_name`` follows no assignment): the callee spells the word (`SGD(`,
    `optim.SGD (`, `(torch.optim.SGD)(`), or an import renames it (`SGD as S`), or the file
    defines a subclass, whose calls and `__init__` TU160 reads too (``_local_subclass_names``)."""
    text = spans.text
    kind = type(text)
    follows = _CALLED_OR_RENAMED[kind]
    for word in words:
        needle = word if kind is str else word.encode("ascii")
        position = text.find(needle)  # type: ignore[arg-type]
        while position >= 0:
            end = position + len(needle)
            if (
                _starts_a_word(text, position)
                and not is_word_char(text[end : end + 1])
                and follows.match(text, end) is not None  # type: ignore[arg-type]
                and spans.in_expression(position)
            ):
                return True
            position = text.find(needle, end)  # type: ignore[arg-type]
    plain = text if isinstance(text, str) else text.decode("latin-1")  # (offsets and ASCII kept)
    return bool(_local_subclass_names(plain, frozenset(words)))


def _starts_a_word(text: str | bytes, start: int) -> bool:
    """Does no ASCII letter, digit or `_` stand right before ``start``: may a word start there (or
    one end before it)? (Where ``\\b`` would also see a non-ASCII letter as part of the word, this
    says yes: a match more, never one less.)"""
    return not is_word_char(text[start - 1 : start])


def _local_subclass_names(text: str, words: frozenset[str]) -> set[str]:
    """The names of the classes ``text`` defines whose header may spell one of ``words``, or the
    name of another such class: every local optimizer subclass (an alias of an optimizer or a star
    import makes the engine walk every body anyway: resolver.Focus). A header is taken to spell
    one when unsure: a backslash, a triple quote or an f-string, brackets that do not close, a
    `class` line inside a string."""
    headers = []
    position = text.find("class")
    while position >= 0:
        line_start = text.rfind("\n", 0, position) + 1
        name = _CLASS_NAME.match(text, position)  # (not `classes`, `class_`)
        if name is not None and not text[line_start:position].strip(" \t\f"):
            headers.append((name.group(1), line_start))
        position = text.find("class", position + 5)
    names: set[str] = set()
    while True:  # (a subclass of a subclass: until no header names one more)
        spelled = words.union(names)
        more = {name for name, start in headers if name not in names and _header_may_spell(text, start, spelled)}
        if not more:
            return names
        names |= more


def _header_may_spell(text: str, start: int, words: frozenset[str]) -> bool:
    """The class header whose line starts at ``start``: read to the line where its brackets close."""
    from torchup.core.lexing import code_of_line  # (loaded already where a file is analysed)

    depth = 0
    for _ in range(_HEADER_LINES):
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        code = code_of_line(line)
        if code is None or not words.isdisjoint(_WORD.findall(line)):
            return True
        depth += code.count("(") + code.count("[") + code.count("{")
        depth -= code.count(")") + code.count("]") + code.count("}")
        if depth < 0 or "\\" in code:
            return True
        if depth == 0:
            return ":" not in code  # the header ends on this line, which spells no word
        if end < 0:
            return True
        start = end + 1
    return True


def _lines_of(text: str, words: set[str]) -> list[int]:
    """The numbers of the lines where one of ``words`` occurs as a whole word (in code or not;
    boundaries as ``_starts_a_word`` reads them: a line more, never one less)."""
    offsets = []
    for word in words:  # (a literal search each: an alternation would be tried at every character)
        position = text.find(word)
        while position >= 0:
            end = position + len(word)
            if _starts_a_word(text, position) and (end == len(text) or _starts_a_word(text, end + 1)):
                offsets.append(position)
            position = text.find(word, position + 1)
    lines: list[int] = []
    number, counted = 1, 0
    for offset in sorted(offsets):
        number += text.count("\n", counted, offset)
        counted = offset
        lines.append(number)
    return lines


def _local_optimizers(ctx: Context) -> dict[int, bool]:
    """The ClassDefs in this file that derive from an optimizer (by id), each with whether it takes
    ``params`` first (its own ``__init__``'s first parameter, or the one it inherits)."""
    classes = _classes(ctx)
    derived: dict[int, bool] = {}
    changed = True
    while changed:
        changed = False
        for cls in classes:
            if id(cls) in derived:
                continue
            for base in cls.bases:
                bindings = ctx.resolver.lookup_name(base).bindings if isinstance(base, ast.Name) else ()
                inherited = True if ctx.qualified_name(base) in OPTIMIZERS else (
                    derived.get(id(bindings[0].node)) if len(bindings) == 1 else None
                )
                if inherited is not None:
                    own = _takes_params_first(cls)
                    derived[id(cls)] = inherited if own is None else own
                    changed = True
                    break
    return derived


def _classes(ctx: Context) -> list[ast.ClassDef]:
    """The class statements in the scopes the resolver walked, in source order (``focus_lines``
    has it walk every body that names a local optimizer subclass)."""
    found = {
        id(binding.node): binding.node
        for scope in ctx.resolver.iter_scopes()
        for bindings in scope.bindings.values()
        for binding in bindings
        if isinstance(binding.node, ast.ClassDef)
    }
    return sorted(found.values(), key=lambda node: (node.lineno, node.col_offset))  # type: ignore[attr-defined]


def _base_initialisations(
    ctx: Context, local: dict[int, bool]
) -> list[tuple[ast.ClassDef, ast.FunctionDef, ast.Call, int]]:
    """``super().__init__(params, ...)`` and ``Optimizer.__init__(self, params, ...)`` in the ``__init__``
    of a local optimizer subclass, with the position of ``params`` among the positional arguments."""
    found = []
    for cls in _classes(ctx):
        if id(cls) not in local:
            continue
        for init in cls.body:
            if not isinstance(init, ast.FunctionDef) or init.name != "__init__":
                continue
            for call in _calls_in(init.body):
                func = call.func
                if not isinstance(func, ast.Attribute) or func.attr != "__init__":
                    continue
                if isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name) \
                        and func.value.func.id == "super" and ctx.resolver.is_unbound("super", ctx.scope_of(call)):
                    found.append((cls, init, call, 0))
                elif ctx.qualified_name(func.value) in OPTIMIZERS:
                    found.append((cls, init, call, 1))
    return found


def _binds(function: ast.FunctionDef, names: tuple[str, ...], parameters: bool = True) -> bool:
    """Whether ``function`` binds one of ``names`` itself (a parameter, an assignment, an import,
    a ``nonlocal`` name a nested function assigns); with ``parameters=False``, in its body only.
    (A nested function's own names are its own: its body, if it spells no trigger word, is not
    even parsed; see torchup/prefilter/skeleton.py.)"""
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    if parameters and any(a is not None and a.arg in names for a in every):
        return True
    stack: list[ast.AST] = [*function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in names:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            (alias.asname or alias.name.partition(".")[0]) in names for alias in node.names
        ):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            if any(isinstance(inner, ast.Nonlocal) and set(inner.names) & set(names) for inner in ast.walk(node)):
                return True  # (a simplification: `nonlocal name` in a nested function counts as a binding)
            stack.extend(_outside(node))
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _outside(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef) -> list[ast.AST]:
    """The parts of a nested definition evaluated in the enclosing scope: decorators, defaults,
    bases (a walrus there binds in the enclosing function)."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    arguments = node.args
    outside: list[ast.AST] = [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
    if not isinstance(node, ast.Lambda):
        outside += node.decorator_list
    return outside


def _calls_in(statements: list[ast.stmt]) -> list[ast.Call]:
    """The calls in a function body, not in the functions, lambdas and classes nested in it."""
    calls, stack = [], list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            calls.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return calls


def _takes_params_first(cls: ast.ClassDef) -> bool | None:
    """Whether the class's own ``__init__`` takes ``params`` first and hands it to the base class as it
    is; None when it has none (inherited).

    ``def __init__(self, params, ...)`` counts unless its base call gets something else as ``params``
    (``super().__init__(list(params), ...)``: the set never reaches ``Optimizer.__init__``) or the body
    rebinds ``params``; ``def __init__(self, *args, **kwargs)`` counts when the base call starts with
    ``*args``."""
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return None
    parameters = [*init.args.posonlyargs, *init.args.args]
    base_calls = [call for call in _calls_in(init.body)
                  if isinstance(call.func, ast.Attribute) and call.func.attr == "__init__"]
    if len(parameters) < 2:
        vararg = init.args.vararg
        return vararg is not None and any(_first_argument(call, vararg.arg, starred=True) for call in base_calls)
    name = parameters[1].arg
    if name != "params" or _binds(init, (name,), parameters=False):
        return False
    return not base_calls or any(_first_argument(call, name) for call in base_calls)


def _first_argument(call: ast.Call, name: str, starred: bool = False) -> bool:
    """Whether a base ``__init__`` call passes the parameter ``name`` itself as the optimizer's ``params``:
    first after ``super().__init__(``, second after ``Base.__init__(self, ``; ``*name`` when ``starred``."""
    position = 0 if isinstance(call.func.value, ast.Call) else 1  # type: ignore[attr-defined]
    if len(call.args) > position:
        argument = call.args[position]
        if starred:
            return isinstance(argument, ast.Starred) and isinstance(argument.value, ast.Name) \
                and argument.value.id == name
        return isinstance(argument, ast.Name) and argument.id == name
    keyword = next((k for k in call.keywords if k.arg == "params"), None)
    return not starred and keyword is not None and isinstance(keyword.value, ast.Name) and keyword.value.id == name


RULE = OptimizerSetParams()
