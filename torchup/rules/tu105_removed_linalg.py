"""TU105: linear-algebra functions removed before 2.13 that still raise (or no longer exist)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from torchup.analysis.context import Context
from torchup.analysis.patterns import BoundCall, Edits, as_argument, as_condition, bind_call, has_comment, literal_bool
from torchup.analysis.receivers import receiver_confidence
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Confidence, Fix
from torchup.core.facts import FACTS, removed
from torchup.rules._linalg import method_calls, removed_error, report_imports, report_reference

# What releases before 2.13 removed (2.14's removals are TU101-TU104's).
_OLD = frozenset(name for name, facts in FACTS["removed"].items() if facts["removed_in"] != "2.14")
FUNCTIONS = frozenset(name for name in _OLD if not name.startswith("torch.Tensor."))
UNBOUND = frozenset(name for name in _OLD if name.startswith("torch.Tensor."))  # torch.Tensor.gesv(x, A)
METHODS = tuple(sorted(name.rsplit(".", 1)[1] for name in UNBOUND))

# Old signatures: the 1.x functions (torch/functional.py of 1.1.0; the 2.13 stubs for the rest), which
# their Tensor methods share with `self` first. btrifact's second positional parameter was `info` in
# 1.0 and `pivot` in 1.1, so `pivot` binds by keyword only; btriunpack's unpack_* flags are left out:
# set to False they gave None where torch.lu_unpack gives empty tensors.
SIGNATURES: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "torch.symeig": (["input", "eigenvectors", "upper"], ("out",)),
    "torch.matrix_rank": (["input", "tol", "symmetric"], ("out",)),
    "torch.solve": (["input", "A"], ("out",)),
    "torch.gesv": (["input", "A"], ("out",)),
    "torch.potrf": (["a", "upper"], ("out",)),
    "torch.potrs": (["b", "u", "upper"], ("out",)),
    "torch.potri": (["u", "upper"], ("out",)),
    "torch.btrifact": (["A"], ("pivot", "out")),
    "torch.btrifact_with_info": (["A"], ("pivot", "out")),
    "torch.btriunpack": (["LU_data", "LU_pivots"], ()),
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
    if vectors is None or literal_bool(vectors.value) is not True or bound.get("out"):
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


def _lu_factor(function: str) -> Rewrite:
    """btrifact -> lu_factor, btrifact_with_info -> lu_factor_ex: 1.1 defined both as torch.lu calls,
    which torch.lu's own docs map onto these (tests/test_differential.py runs the pairs)."""

    def rewrite(ctx: Context, bound: BoundCall, linalg: str) -> str | None:
        if bound.get("out"):
            return None  # 1.0's btrifact had no out=; 1.1's passed it on to torch.lu
        pivot = f", pivot={_text(ctx, bound, 'pivot')}" if bound.get("pivot") else ""  # keyword-only now
        return f"{linalg}.{function}({_text(ctx, bound, 'A')}{pivot})"

    return rewrite


def _btriunpack(ctx: Context, bound: BoundCall, linalg: str) -> str | None:
    torch = linalg.rsplit(".", 1)[0]
    return f"{torch}.lu_unpack({_text(ctx, bound, 'LU_data')}, {_text(ctx, bound, 'LU_pivots')})"


REWRITES: dict[str, Rewrite] = {
    "torch.symeig": _symeig,
    "torch.matrix_rank": _matrix_rank,
    "torch.potrf": _potrf,
    "torch.potrs": _potrs,
    "torch.potri": _potri,
    "torch.btrifact": _lu_factor("lu_factor"),
    "torch.btrifact_with_info": _lu_factor("lu_factor_ex"),
    "torch.btriunpack": _btriunpack,
}
SOLVERS = ("torch.solve", "torch.gesv")  # (B, A) -> solution, LU: exact only where .solution / [0] is taken


class RemovedLinalg(Rule):
    code = "TU105"
    name = "removed-linalg-function"
    summary = "Linear-algebra functions and Tensor methods torch 1.x removed (`symeig`, `btrifact`, `gels`, ...)."
    since = None
    fix_availability = FixAvailability.UNSAFE
    looks_for = LooksFor(names=tuple(sorted(FUNCTIONS | UNBOUND)), methods=METHODS)
    docs = RuleDocs(
        what="""
        Finds the linear-algebra functions torch 1.x and 2.0 removed, through any import form, and
        their Tensor methods: `symeig`, `eig`, `lstsq`, `solve`, `matrix_rank` (deprecated in 1.9,
        stubs that raise since 1.12-2.0), and the LAPACK-era names removed in 1.2 (`btrifact`,
        `btrifact_with_info`, `btrisolve`, `btriunpack`, `gesv`, `trtrs`, `potrf`, `potrs`, `potri`,
        `pstrf`) and 1.3 (`gels`). Each message names the release that removed it and the
        replacement (`torch.linalg.lu_factor`, `torch.lu_unpack`, `torch.linalg.lu_solve`, ...),
        and the help says how arguments and results differ. Methods follow the engine's policy
        for receivers (torchup/analysis/receivers.py; README, "Is the receiver a tensor?"):
        `x.symeig()` is reported unless `x` is evidently something else (an array of another
        library, an instance of a class that defines the method, in the file or anywhere in the
        project), with its confidence (`certain`, `likely`, `possible`) and "if the receiver is a
        tensor" when `x` is not evidently a tensor; `solve` and `lstsq`, method names CVXPY, SciPy
        and SymPy objects have too, only when `x` is at least likely a tensor.
        """,
        why=f"""
        These already fail in torch 2.13 and still do in 2.14: `symeig`, `eig`, `lstsq`, `solve`
        and `matrix_rank` are stubs raising

            {removed_error()} ...

        and the LAPACK-era names do not exist at all (AttributeError). Code that still calls them is
        dead code or code that was never run against a modern torch; an upgrade is the moment to
        port it. The releases are read from the wheels (torch 1.0.0 to 2.0.0 and 2.13.0):
        `torchup/data/torch_api.json` cites, for each name, the wheel files that show it going.
        """,
        fix="""
        Only where the rewrite is mechanical, for `torch.f(x, ...)`, `torch.Tensor.f(x, ...)` and
        `x.f(...)` alike (the method only where `x` is evidently a tensor):
        `symeig(A, eigenvectors=True[, upper=U])` -> `torch.linalg.eigh(A, UPLO="U")` (symeig read
        the upper triangle by default, eigh the lower); `matrix_rank(A, tol, symmetric)` ->
        `torch.linalg.matrix_rank(A, atol=tol, rtol=0, hermitian=symmetric)`;
        `solve(B, A).solution` or `solve(B, A)[0]` (also `gesv`) -> `torch.linalg.solve(A, B)`;
        `potrf(A, upper=True)` -> `torch.linalg.cholesky(A, upper=True)`; `potrs(b, u)` ->
        `torch.cholesky_solve(b, u, upper=True)`; `potri(u)` -> `torch.cholesky_inverse(u, upper=True)`
        (the LAPACK-era functions defaulted to the upper factor); `btrifact(A[, pivot=P])` ->
        `torch.linalg.lu_factor(A[, pivot=P])`; `btrifact_with_info(A)` ->
        `torch.linalg.lu_factor_ex(A)`; `btriunpack(LU, pivots)` -> `torch.lu_unpack(LU, pivots)`.
        Everything else is guidance only: `eig` returns complex tensors now, `lstsq` and `gels` pad
        no more, `trtrs` and `btrisolve` changed argument order and result shape, `pstrf` (pivoted
        Cholesky) has no counterpart, a positional second argument of `btrifact` was `info` in 1.0
        and `pivot` in 1.1, and `btriunpack(..., unpack_data=False)` gave None where `lu_unpack`
        gives empty tensors.
        """,
        fix_safety="""
        Always unsafe: the original code cannot run on 2.13 or 2.14, so the differential test
        cannot execute it, and the result types differ (named tuples of another class). Review
        each change. The examples' `btrifact`, `btriunpack`, `Tensor.btrifact_with_info` and
        `Tensor.potrf` fixes are proven through their last definition instead: torch 1.1.0 defined
        each as one call of a function 2.13 still has (`torch.lu`, `torch.lu_unpack`,
        `torch._lu_with_info`, `Tensor.cholesky`); the differential test runs those calls under
        2.13 and the fixed code under 2.14 and compares the results bit for bit. That 1.0 and 1.1
        behaved like the 1.1 definitions rests on the wheels' sources, not on a run.
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
            "btrifact and btriunpack",
            """
            import torch
            LU, pivots = torch.btrifact(A)
            P, L, U = torch.btriunpack(LU, pivots)
            """,
            findings=2,
            fixed="""
            import torch
            LU, pivots = torch.linalg.lu_factor(A)
            P, L, U = torch.lu_unpack(LU, pivots)
            """,
            unsafe=True,
            executable=False,  # proven through torch 1.1's definitions (tests/test_differential.py)
        ),
        Example(
            "methods of an evident tensor",
            """
            import torch
            M = torch.as_tensor(A)
            LU, pivots, info = M.btrifact_with_info()
            U = M.potrf()
            """,
            findings=2,
            fixed="""
            import torch
            M = torch.as_tensor(A)
            LU, pivots, info = torch.linalg.lu_factor_ex(M)
            U = torch.linalg.cholesky(M, upper=True)
            """,
            unsafe=True,
            executable=False,  # proven through torch 1.1's definitions (tests/test_differential.py)
        ),
        Example(
            "guidance only: a receiver of unknown type, results that changed shape",
            """
            import torch

            def lu_solve(x, b):
                LU, pivots = x.btrifact()
                return b.btrisolve(LU, pivots)

            X, QR = torch.lstsq(B, A)
            w, v = torch.eig(A, eigenvectors=True)
            """,
            findings=4,
            unsafe=True,
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
        Example(
            "NumPy arrays and a class's own methods are not torch's",
            """
            import numpy as np
            import torch

            class Factorization:
                def btrifact(self):
                    return self

                def refresh(self):
                    return self.btrifact()

            a = np.eye(3)
            f = a.potrf()
            g = Factorization().btrifact()
            x = np.linalg.solve(a, a[0])
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        report_imports(ctx, FUNCTIONS)
        for node, qualname, call in ctx.references_to(FUNCTIONS | UNBOUND):
            if call is None:
                report_reference(ctx, node, qualname)
                continue
            function = qualname.replace("torch.Tensor.", "torch.", 1)  # the unbound method takes self first
            facts = removed(qualname)
            ctx.report(
                node,
                f"`{qualname}` is {_when(facts)}; use `{facts['replacement']}`",
                help=removed(function).get("differences"),
                fix=self._fix(ctx, call, function),
            )
        for method in METHODS:
            for call in method_calls(ctx, method):
                confidence = receiver_confidence(ctx, call)
                if confidence is None:
                    continue
                facts = removed(f"torch.Tensor.{method}")
                assert isinstance(call.func, ast.Attribute)
                # `x.m(args)` is `torch.m(x, args)`: the same rewrite, only where x is surely a tensor.
                receiver = call.func.value
                as_function = ast.copy_location(
                    ast.Call(func=call.func, args=[receiver, *call.args], keywords=call.keywords), call
                )
                certain = confidence is Confidence.CERTAIN
                fix = self._fix(ctx, call, f"torch.{method}", as_function) if certain else None
                kind = "" if certain else " if the receiver is a tensor"
                ctx.report(
                    call.func,
                    f"`Tensor.{method}()` is {_when(facts)}; use `{facts['replacement']}`{kind}",
                    help=removed(f"torch.{method}").get("differences"),
                    fix=fix,
                    confidence=confidence,
                    receiver_method=method,
                )

    def _fix(self, ctx: Context, call: ast.Call, qualname: str, as_function: ast.Call | None = None) -> Fix | None:
        """The rewrite of ``call`` (a function call, or a method call read as ``as_function``)."""
        reference = ctx.module_reference("torch.linalg", call)
        if reference is None or qualname not in SIGNATURES:
            return None
        positional, keyword_only = SIGNATURES[qualname]
        bound = bind_call(as_function or call, positional, keyword_only)
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
        return f"removed in torch {facts['removed_in']} (AttributeError in 2.13 and 2.14)"
    return f"removed in torch {facts['removed_in']} (only a stub that raises is left in 2.13 and 2.14)"


RULE = RemovedLinalg()
