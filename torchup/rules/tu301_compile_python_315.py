"""TU301: ``torch.compile`` (and what needs dynamo) raises on Python 3.15+ in torch 2.13 and 2.14 (not 2.15)."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable

from torchup.analysis.context import Context
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.python_target import PythonTarget, Version

COMPILE = frozenset({"torch.compile", "torch.compiler.compile"})
OPTIMIZE = frozenset({"torch._dynamo.optimize", "torch._dynamo.eval_frame.optimize"})
COND = frozenset({"torch.cond", "torch._higher_order_ops.cond", "torch._higher_order_ops.cond.cond"})
DYNAMO_SUPPORTED = frozenset({"torch._dynamo.is_dynamo_supported", "torch._dynamo.eval_frame.is_dynamo_supported"})
# The exact errors, from the 2.13.0 and 2.14.1 wheels (torch/__init__.py, torch/_dynamo/eval_frame.py,
# torch/_higher_order_ops/cond.py).
COMPILE_ERROR = 'RuntimeError("torch.compile is not supported on Python 3.15+")'
OPTIMIZE_ERROR = 'RuntimeError("Python 3.15+ not yet supported for torch.compile")'
COND_ERROR = 'RuntimeError("torch.cond requires dynamo support.")'
FIRST = (3, 15)
HELP = (
    "torch 2.15 supports Python 3.15 (its limit moves to 3.16); on torch 2.13/2.14 keep this code on "
    "Python <= 3.14 (`requires-python`, `--target-python`) or guard it with `if sys.version_info < (3, 15):` "
    "or `torch._dynamo.is_dynamo_supported()`"
)
_COMPARE: dict[type, Callable[[int, int], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
_MIRROR: dict[type, type] = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE,
                             ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}
_CATCHES_RUNTIME_ERROR = frozenset({"RuntimeError", "Exception", "BaseException"})


class _Guards:
    """Is a node reachable on the affected Python versions? Understands the usual guards:
    ``if sys.version_info < (3, 15):`` (also ``[:2]``, ``.minor``, ``not``, ``and``/``or``, the
    ``else`` branch, an earlier ``if ...: return``), ``if torch._dynamo.is_dynamo_supported():``
    and ``try: ... except RuntimeError:``."""

    def __init__(self, ctx: Context, versions: list[Version]) -> None:
        self.ctx = ctx
        self.versions = versions
        self.parents: dict[int, ast.AST] = {}
        for parent in ctx.walk():  # (the ancestors of a node span its lines)
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent

    def guarded(self, node: ast.AST) -> bool:
        child, parent = node, self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                in_body = child is parent.body or (isinstance(parent.body, list) and child in parent.body)
                if self.always(parent.test, not in_body):
                    return True
            if isinstance(parent, ast.Try) and child in parent.body and self._catches(parent):
                return True
            for block in ("body", "orelse", "finalbody"):
                statements = getattr(parent, block, None)
                if isinstance(statements, list) and child in statements and any(
                    self._leaves_early(s) for s in statements[: statements.index(child)]
                ):
                    return True
            child, parent = parent, self.parents.get(id(parent))
        return False

    def always(self, test: ast.expr, value: bool) -> bool:
        """``test`` evaluates to ``value`` on every affected version."""
        return all(self.truth(test, version) is value for version in self.versions)

    def _leaves_early(self, statement: ast.stmt) -> bool:
        """``if <true on 3.15+>: ... return/raise`` with no ``else``."""
        return (
            isinstance(statement, ast.If)
            and not statement.orelse
            and isinstance(statement.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
            and self.always(statement.test, True)
        )

    def _catches(self, statement: ast.Try) -> bool:
        scope = self.ctx.scope_of(statement)
        for handler in statement.handlers:
            kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            for kind in kinds:
                if kind is None or (
                    isinstance(kind, ast.Name)
                    and kind.id in _CATCHES_RUNTIME_ERROR
                    and self.ctx.resolver.is_unbound(kind.id, scope)
                ):
                    return True
        return False

    def truth(self, test: ast.expr, version: Version) -> bool | None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.truth(test.operand, version)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            values = [self.truth(value, version) for value in test.values]
            decisive = isinstance(test.op, ast.Or)  # `or` is decided by a True, `and` by a False
            if decisive in values:
                return decisive
            return None if None in values else not decisive
        if isinstance(test, ast.Call) and not test.args and self.ctx.qualified_name(test.func) in DYNAMO_SUPPORTED:
            return False  # dynamo is unsupported on every affected version
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            return self._compare(test.left, type(test.ops[0]), test.comparators[0], version)
        return None

    def _compare(self, left: ast.expr, op: type, right: ast.expr, version: Version) -> bool | None:
        if op not in _COMPARE:
            return None
        side = self._version_side(left, version)
        other = right
        if side is None:
            side, other, op = self._version_side(right, version), left, _MIRROR[op]
        if side is None:
            return None
        known, exact = side
        literal = _int_tuple(other)
        if literal is None or (not isinstance(known, int) and not isinstance(other, ast.Tuple)):
            return None
        if isinstance(known, int):  # sys.version_info.minor / [1] / .major / [0]
            if len(literal) != 1 or not isinstance(other, ast.Constant):
                return None
            return _COMPARE[op](known - literal[0], 0)
        sign = _tuple_sign(known, exact, literal)
        return None if sign is None else _COMPARE[op](sign, 0)

    def _version_side(self, expr: ast.expr, version: Version) -> tuple[tuple[int, ...] | int, bool] | None:
        """(what ``expr`` is on ``version``, whether that is all of it) for forms of ``sys.version_info``."""
        if self.ctx.qualified_name(expr) == "sys.version_info":
            return version, False
        if isinstance(expr, ast.Attribute) and expr.attr in ("major", "minor"):
            if self.ctx.qualified_name(expr.value) == "sys.version_info":
                return version[0 if expr.attr == "major" else 1], True
            return None
        if isinstance(expr, ast.Subscript) and self.ctx.qualified_name(expr.value) == "sys.version_info":
            index = expr.slice
            if isinstance(index, ast.Constant) and index.value in (0, 1):
                return version[index.value], True
            if (
                isinstance(index, ast.Slice)
                and index.lower is None
                and index.step is None
                and isinstance(index.upper, ast.Constant)
                and index.upper.value in (1, 2)
            ):
                return version[: index.upper.value], True
        return None


def _int_tuple(node: ast.expr) -> tuple[int, ...] | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return (node.value,)
    if isinstance(node, ast.Tuple) and node.elts and all(
        isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts
    ):
        return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
    return None


def _tuple_sign(known: tuple[int, ...], exact: bool, literal: tuple[int, ...]) -> int | None:
    """-1, 0 or 1 as the version tuple compares with ``literal``; None when the micro version decides.

    ``known`` is what we know of the version (major, minor); ``exact`` says the compared value is
    exactly that (a ``[:2]`` slice), not the longer ``sys.version_info``.
    """
    common = min(len(known), len(literal))
    if known[:common] != literal[:common]:
        return -1 if known[:common] < literal[:common] else 1
    if len(literal) > len(known):
        return -1 if exact else None
    if len(known) > len(literal) or not exact:
        return 1
    return 0


class CompileOnPython315(Rule):
    code = "TU301"
    name = "compile-on-python-3.15"
    summary = "`torch.compile` raises RuntimeError on Python 3.15+ in torch 2.13 and 2.14."
    since = None  # torch 2.13 and 2.14 alike
    until = "2.15"  # 2.15.0 moves the limit to Python 3.16 (torch/__init__.py:3236, torch/_dynamo/eval_frame.py:1749)
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(names=tuple(sorted(COMPILE | OPTIMIZE | COND)))
    docs = RuleDocs(
        what="""
        When the checked code may run on Python 3.15 or later, finds `torch.compile(...)` (also
        `torch.compiler.compile`), `@torch.compile` and `@torch.compile(...)`,
        `torch._dynamo.optimize(...)`, and calls of `torch.cond` outside compiled code, through
        any import form. The Python versions come from `--target-python`, else the
        `requires-python` of the nearest `pyproject.toml` (an open-ended `>=3.10` includes 3.15),
        else the interpreter running torchup; the message names the source. Not reported: code
        under a guard that rules 3.15+ out (`if sys.version_info < (3, 15):`, its `else` branch,
        `[:2]`/`.minor` forms, an earlier `if sys.version_info >= (3, 15): return`,
        `if torch._dynamo.is_dynamo_supported():`, `try: ... except RuntimeError:`), a `torch.cond`
        whose predicate is a Python literal (it just runs a branch), and references that are not
        called or used as decorators (`original = torch.compile`).
        """,
        why=f"""
        Both the torch 2.13.0 and the 2.14.1 wheels refuse to compile on Python 3.15+, at the
        `torch.compile` call itself, so `@torch.compile` fails when the function is defined
        (decoration time), before any input is seen. `torch.compile` and `torch.compiler.compile`:

            {COMPILE_ERROR}

        `torch._dynamo.optimize(...)`:

            {OPTIMIZE_ERROR}

        `torch.cond(pred, ...)` with a tensor predicate, run eagerly (it needs dynamo):

            {COND_ERROR}

        Eager code is unaffected (per the release facts, so are non-strict `torch.export`,
        `make_fx` and `torch.jit.script`/`trace`). torch 2.14 is the first release with Python 3.15
        wheels (on download.pytorch.org only), so an upgrade that also moves to 3.15 hits this.
        """,
        fix="""
        No automatic fix. Move to torch 2.15, which supports Python 3.15 (its limit moves to
        3.16); or keep the project on Python <= 3.14 (declare it in `requires-python`); or guard
        the call: `model = torch.compile(model) if sys.version_info < (3, 15) else model`, or
        `if torch._dynamo.is_dynamo_supported():`. The rule does not run when the target torch
        release is 2.15 or later (`--target-version 2.15`, the default): there `torch.compile`
        works on Python 3.15.
        """,
        fix_safety="There is no fix: the choice of Python, torch release or eager fallback is yours.",
        wheels_vs_notes="""
        The release notes say only that `torch.compile` is not supported on 3.15 and raises
        RuntimeError. The wheels show the same limit already in 2.13.0 (`sys.version_info >=
        (3, 15)` in `torch.compile`), a different message from `torch._dynamo.optimize`, and that
        eager `torch.cond` with a tensor predicate fails too. The 2.14.x Python 3.15 wheels are
        not on the package index, only on download.pytorch.org. The 2.15.0 sources move both
        checks to Python 3.16 (`torch.compile is not supported on Python 3.16+`, `Python 3.16+
        not yet supported for torch.compile`), keep the refusal of free-threaded builds below
        3.13.3, and `torch.cond` then works eagerly on 3.15 as dynamo does.
        """,
    )
    examples = (
        Example(
            "decorators and calls (the repository's requires-python admits 3.15)",
            """
            import torch

            @torch.compile
            def f(t):
                return t.sin()

            @torch.compile(backend="eager")
            def g(t):
                return t.cos()

            fast = torch.compile(torch.nn.Linear(4, 4))
            """,
            findings=3,
        ),
        Example(
            "dynamo's entry point and eager torch.cond",
            """
            import torch
            import torch._dynamo as dynamo

            step = dynamo.optimize("eager")(lambda t: t + 1)
            y = torch.cond(A.sum() > 0, lambda t: t + 1, lambda t: t - 1, (A,))
            """,
            findings=2,
        ),
        Example(
            "not reported: guarded, a literal predicate, a mere reference",
            """
            import sys
            import torch

            if sys.version_info < (3, 15):
                fast = torch.compile(torch.nn.Linear(4, 4))
            else:
                fast = torch.nn.Linear(4, 4)
            slow = torch.compile(fast) if sys.version_info[:2] <= (3, 14) else fast
            if torch._dynamo.is_dynamo_supported():
                fast = torch.compile(fast)
            try:
                fast = torch.compile(fast)
            except RuntimeError:
                pass
            y = torch.cond(True, lambda t: t + 1, lambda t: t - 1, (A,))
            original_compile = torch.compile
            """,
            findings=0,
        ),
    )

    def applies_to(self, python: PythonTarget) -> bool:
        return python.includes_at_least(FIRST)

    def check(self, ctx: Context) -> None:
        references = ctx.references_to(COMPILE | OPTIMIZE | COND)
        if not references:
            return
        decorators = {
            id(d) for node in ctx.walk()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for d in node.decorator_list
        }
        candidates = []
        for node, qualname, call in references:
            if call is None and id(node) not in decorators:
                continue
            if qualname in COND and (call is None or _literal_predicate(call)):
                continue
            candidates.append((node, qualname, call))
        if not candidates:
            return
        target = ctx.python_target
        affected = sorted(v for v in target.versions if v >= FIRST)
        if not affected:
            return
        guards = _Guards(ctx, affected)
        for node, qualname, call in candidates:
            if guards.guarded(node):
                continue
            if qualname in COND:
                what = f"`{qualname}` with a tensor predicate outside compiled code raises {COND_ERROR}"
            elif qualname in OPTIMIZE:
                what = f"`{qualname}` raises {OPTIMIZE_ERROR}"
            else:
                what = f"`{qualname}` raises {COMPILE_ERROR}"
            when = " (at decoration time)" if call is None or id(call) in decorators else ""
            ctx.report(
                node,
                f"{what} on Python 3.15+ in torch 2.13 and 2.14{when}; the code targets {target.describe()}",
                help=HELP,
            )


def _literal_predicate(call: ast.Call) -> bool:
    predicate = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "pred"), None)
    return isinstance(predicate, ast.Constant)


RULE = CompileOnPython315()
