"""TU105: linear-algebra functions removed before 2.13 that still raise (or no longer exist)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import ClassVar

from torchup.context import Context
from torchup.diagnostics import Applicability, Fix
from torchup.facts import FACTS, removed
from torchup.inference import Evidence
from torchup.patterns import BoundCall, Edits, as_argument, as_condition, bind_call, has_comment, literal_bool
from torchup.prefilter import CODE
from torchup.rule import Example, FixAvailability, Rule, RuleDocs
from torchup.rules._linalg import method_calls, method_receiver_evidence, removed_error, report_reference

FUNCTIONS = frozenset(
    name for name in FACTS["removed"] if name.startswith("torch.") and not name.startswith("torch.Tensor.")
    and name.rsplit(".", 1)[1] not in ("cholesky", "qr")
)
METHODS = ("symeig", "eig", "lstsq", "solve")

# Old positional signatures (torch 2.13 stubs; pre-1.0 docs for the absent names).
SIGNATURES: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "torch.symeig": (["input", "eigenvectors", "upper"], ("out",)),
    "torch.matrix_rank": (["input", "tol", "symmetric"], ("out",)),
    "torch.solve": (["input", "A"], ("out",)),
    "torch.gesv": (["input", "A"], ("out",)),
    "torch.potrf": (["a", "upper"], ("out",)),
    "torch.potrs": (["b", "u", "upper"], ("out",)),
    "torch.potri": (["u", "upper"], ("out",)),
}

# Builds the replacement text of the whole call from its bound arguments; None: guidance only.
Rewrite = Callable[[Context, BoundCall, str], "str | None"]


def _text(ctx: Context, bound: BoundCall, name: str) -> str:
    return as_argument(ctx.source, bound.arguments[name].value)


def _upper_keyword(ctx: Context, bound: BoundCall, default: bool) -> str | None:
    """The ``upper=`` text for a replacement whose default is False, given the old default."""
    argument = bound.get("upper")
    if argument is None:
        return ", upper=True" if default else ""
    value = literal_bool(argument.value)
    if value is None:
        return f", upper={_text(ctx, bound, 'upper')}"
    return ", upper=True" if value else ""


def _symeig(ctx: Context, bound: BoundCall, linalg: str) -> str | None:
    vectors = bound.get("eigenvectors")
    if vectors is None or literal_bool(vectors.value) is not True:
        return None  # eigenvalues only returned (values, empty tensor): the shape of the result changes
    upper = bound.get("upper")
    upper_value = True if upper is None else literal_bool(upper.value)
    q = ctx.quote(bound.call)
    if upper is not None and upper_value is None:
        uplo = f", UPLO={q}U{q} if {as_condition(ctx.source, upper.value)} else {q}L{q}"
    else:
        uplo = f", UPLO={q}U{q}" if upper_value else ""
    return f"{linalg}.eigh({_text(ctx, bound, 'input')}{uplo})"


def _matrix_rank(ctx: Context, bound: BoundCall, linalg: str) -> str | None:
    parts = [_text(ctx, bound, "input")]
    tol = bound.get("tol")
    if tol is not None and not (isinstance(tol.value, ast.Constant) and tol.value.value is None):
        if not isinstance(tol.value, ast.Constant):
            return None  # a tolerance that may be None at run time meant "the default", atol= does not
        parts.append(f"atol={_text(ctx, bound, 'tol')}, rtol=0")
    if bound.get("symmetric") is not None:
        parts.append(f"hermitian={_text(ctx, bound, 'symmetric')}")
    if bound.get("out") is not None:
        parts.append(f"out={_text(ctx, bound, 'out')}")
    return f"{linalg}.matrix_rank({', '.join(parts)})"


def _potrf(ctx: Context, bound: BoundCall, linalg: str) -> str | None:
    upper = _upper_keyword(ctx, bound, default=True)
    return None if upper is None or bound.get("out") else f"{linalg}.cholesky({_text(ctx, bound, 'a')}{upper})"


def _potrs(ctx: Context, bound: BoundCall, linalg: str) -> str | None:
    upper = _upper_keyword(ctx, bound, default=True)
    torch = linalg.rsplit(".", 1)[0]
    if upper is None or bound.get("out"):
        return None
    return f"{torch}.cholesky_solve({_text(ctx, bound, 'b')}, {_text(ctx, bound, 'u')}{upper})"


def _potri(ctx: Context, bound: BoundCall, linalg: str) -> str | None:
    upper = _upper_keyword(ctx, bound, default=True)
    torch = linalg.rsplit(".", 1)[0]
    return None if upper is None or bound.get("out") else f"{torch}.cholesky_inverse({_text(ctx, bound, 'u')}{upper})"


REWRITES: dict[str, Rewrite] = {
    "torch.symeig": _symeig,
    "torch.matrix_rank": _matrix_rank,
    "torch.potrf": _potrf,
    "torch.potrs": _potrs,
    "torch.potri": _potri,
}
SOLVERS = ("torch.solve", "torch.gesv")  # (B, A) -> solution, LU: exact only where .solution / [0] is taken


class RemovedLinalg(Rule):
    code = "TU105"
    name = "removed-linalg-function"
    summary = "Old linear-algebra functions (`symeig`, `eig`, `lstsq`, `solve`, `matrix_rank`, `potrf`, ...) raise."
    since = None
    fix_availability = FixAvailability.UNSAFE
    triggers = tuple(sorted({name.rsplit(".", 1)[1] for name in FUNCTIONS} | set(METHODS)))
    # Never a string; a method of that name keeps its class in the parse (inference.class_evidence).
    word_roles: ClassVar[dict[str, frozenset[str]]] = dict.fromkeys(triggers, frozenset({CODE}))
    docs = RuleDocs(
        what="""
        Finds `torch.symeig`, `torch.eig`, `torch.lstsq`, `torch.solve`, `torch.matrix_rank`, the
        Tensor methods `symeig`, `eig`, `lstsq`, `solve` (on receivers that are evidently tensors:
        `solve` is too common a method name to guess), and the pre-1.0 names `potrf`, `potrs`,
        `potri`, `gesv`, `trtrs`, `btrifact`, `btrisolve`. Each message names the `torch.linalg`
        replacement and how arguments and results differ.
        """,
        why=f"""
        These already fail in torch 2.13 and still do in 2.14: the first five are stubs raising

            {removed_error()} ...

        and the pre-1.0 names do not exist at all (AttributeError). Code that still calls them is
        dead code or code that was never run against a modern torch; an upgrade is the moment to
        port it.
        """,
        fix="""
        Only where the rewrite is mechanical:
        `symeig(A, eigenvectors=True[, upper=U])` -> `torch.linalg.eigh(A, UPLO="U")` (symeig read
        the upper triangle by default, eigh the lower); `matrix_rank(A, tol, symmetric)` ->
        `torch.linalg.matrix_rank(A, atol=tol, rtol=0, hermitian=symmetric)`;
        `solve(B, A).solution` or `solve(B, A)[0]` (also `gesv`) -> `torch.linalg.solve(A, B)`;
        `potrf(A, upper=True)` -> `torch.linalg.cholesky(A, upper=True)`; `potrs(b, u)` ->
        `torch.cholesky_solve(b, u, upper=True)`; `potri(u)` -> `torch.cholesky_inverse(u, upper=True)`
        (the pre-1.0 functions defaulted to the upper factor). Everything else is guidance only:
        `eig` returns complex tensors now, `lstsq` pads no more, `trtrs` and `btrisolve` changed
        argument order and result shape.
        """,
        fix_safety="""
        Always unsafe: the original code cannot run on 2.13 or 2.14, so the rewrite cannot be
        proven by executing both, and the result types differ (named tuples of another class).
        Review each change.
        """,
    )
    examples = (
        Example(
            "symeig with eigenvectors",
            """
            import torch
            e, V = torch.symeig(A, eigenvectors=True)
            """,
            fixed="""
            import torch
            e, V = torch.linalg.eigh(A, UPLO="U")
            """,
            unsafe=True,
            executable=False,
        ),
        Example(
            "solve's solution",
            """
            import torch
            X = torch.solve(B, A).solution
            """,
            fixed="""
            import torch
            X = torch.linalg.solve(A, B)
            """,
            unsafe=True,
            executable=False,
        ),
        Example(
            "guidance only: the results changed shape",
            """
            import torch
            X, QR = torch.lstsq(B, A)
            w, v = torch.eig(A, eigenvectors=True)
            """,
            findings=2,
        ),
        Example(
            "a solver object is not a tensor",
            """
            import torch
            from scipy.optimize import root

            class Solver:
                def solve(self, b):
                    return b

            x = Solver().solve(B)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for node, qualname, call in ctx.references_to(FUNCTIONS):
            if call is None:
                report_reference(ctx, node, qualname)
                continue
            facts = removed(qualname)
            fix = self._fix(ctx, call, qualname)
            ctx.report(
                node,
                f"`{qualname}` is {_when(facts)}; use `{facts['replacement']}`",
                help=facts.get("differences"),
                fix=fix,
            )
        for method in METHODS:
            for call in method_calls(ctx, method):
                if method_receiver_evidence(ctx, call) is not Evidence.TENSOR:
                    continue
                facts = removed(f"torch.Tensor.{method}")
                details = removed(f"torch.{method}").get("differences")
                ctx.report(
                    call.func,
                    f"`Tensor.{method}()` is {_when(facts)}; use `{facts['replacement']}`",
                    help=details,
                )

    def _fix(self, ctx: Context, call: ast.Call, qualname: str) -> Fix | None:
        reference = ctx.module_reference("torch.linalg", call)
        if reference is None or qualname not in SIGNATURES:
            return None
        positional, keyword_only = SIGNATURES[qualname]
        bound = bind_call(call, positional, keyword_only)
        if bound is None or bound.has_star_args or bound.has_star_kwargs:
            return None
        linalg, imports = reference
        target: ast.AST = call
        if qualname in SOLVERS:
            outer = ctx.resolver.outer_access(call)
            if not _takes_solution(outer) or bound.get("out") or len(bound.arguments) != 2:
                return None
            assert outer is not None
            target = outer
            text: str | None = f"{linalg}.solve({_text(ctx, bound, 'A')}, {_text(ctx, bound, 'input')})"
        else:
            text = REWRITES[qualname](ctx, bound, linalg)
        start, end = ctx.source.node_range(target)
        if text is None or has_comment(ctx.source, start, end):
            return None  # the rewrite replaces the whole call: never drop a comment
        released = (id(call.func),) if isinstance(call.func, ast.Name) else ()
        edit = Edits(ctx.source).replace(target, text)
        return Fix(f"rewrite as `{text}`", Applicability.UNSAFE, (edit,), imports, released)


def _takes_solution(outer: ast.expr | None) -> bool:
    if isinstance(outer, ast.Attribute):
        return outer.attr == "solution"
    if isinstance(outer, ast.Subscript):
        return isinstance(outer.slice, ast.Constant) and outer.slice.value == 0 and isinstance(outer.ctx, ast.Load)
    return False


def _when(facts: dict[str, str]) -> str:
    if facts.get("absent"):
        return "long removed from torch (AttributeError in 2.13 and 2.14)"
    return "removed (it already raises in torch 2.13 and still does in 2.14)"


RULE = RemovedLinalg()
