"""TU608: ``torch.testing.assert_allclose`` warns since torch 1.12; ``assert_close`` is what it calls."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.inference import Evidence, tensor_evidence
from torchup.analysis.patterns import Edits, bind_call
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Edit, Fix, Severity
from torchup.rules._arguments import append_argument, from_imports, rename_reference

OLD = "torch.testing.assert_allclose"
NEW_NAME = "assert_close"
PARAMETERS = ["actual", "expected", "rtol", "atol", "equal_nan", "msg"]  # assert_allclose's, all positional
WARNING = (
    "FutureWarning: `torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
    "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
    "https://github.com/pytorch/pytorch/issues/61844."
)
# assert_allclose's own defaults for rtol and atol when both are omitted (2.14.1
# torch/testing/_comparison.py:1718-1727; the same table since 1.12): the loosest of the two inputs'.
OLD_TOLERANCES = "float16: 1e-3 / 1e-3, float32: 1e-4 / 1e-5, float64: 1e-5 / 1e-8, any other dtype: 0 / 0"


def _number(node: ast.expr | None) -> bool:
    """A literal int or float (``1e-5``, ``-0.0``): never None at run time."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _message_edits(ctx: Context, call: ast.Call, argument: ast.expr, keyword: ast.keyword | None) -> list[Edit]:
    """assert_allclose passed ``msg or None`` on (an empty message meant the generated one)."""
    edits = Edits(ctx.source)
    nonempty_fstring = isinstance(argument, ast.JoinedStr) and any(
        isinstance(part, ast.Constant) and part.value for part in argument.values
    )
    if (isinstance(argument, ast.Constant) and isinstance(argument.value, str) and argument.value) or nonempty_fstring:
        return [] if keyword else edits.positional_to_keyword(call, argument, "msg")
    if isinstance(argument, ast.Constant) and argument.value in ("", None):
        return [edits.replace_argument(call, keyword or argument, "msg=None")]
    text = ctx.segment(argument)
    plain = isinstance(argument, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    return [edits.replace_argument(call, keyword or argument, f"msg={text if plain else f'({text})'} or None")]


class AssertAllcloseDeprecated(Rule):
    change = Change.WARNS
    code = "TU608"
    name = "assert-allclose-deprecated"
    summary = "`torch.testing.assert_allclose` warns (deprecated since 1.12); call `assert_close` with its arguments."
    since = "1.12"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SOMETIMES
    looks_for = LooksFor(names=(OLD,))
    docs = RuleDocs(
        what="""
        Finds references to `torch.testing.assert_allclose` (any import form: `torch.testing.`,
        `from torch.testing import assert_allclose`, a module alias). Not reported: `assert_close`,
        `numpy.testing.assert_allclose` and other libraries' functions of that name.
        """,
        why=f"""
        Every call warns (2.14.1 torch/testing/_comparison.py:1692-1697; 1.12.0 introduced the
        warning, 1.11.0 had the decorator commented out):

            {WARNING}

        It still exists, and still warns, in 2.15.0.
        """,
        fix="""
        `assert_allclose` is a wrapper around `assert_close`; the fix writes the call it makes:
        `assert_allclose(a, b, rtol, atol, equal_nan, msg)` ->
        `assert_close(a, b, rtol=rtol, atol=atol, equal_nan=..., check_dtype=False, msg=...)`.
        Positional tolerances become keywords (they are keyword-only in `assert_close`);
        `equal_nan=True` (assert_allclose's default, assert_close's is False) and
        `check_dtype=False` (what assert_allclose passed) are added; an empty `msg` becomes
        `msg=None` and an expression `m` becomes `m or None`, as the wrapper passed it.
        `check_device=True` and `check_stride=False`, which it also passed, are `assert_close`'s
        defaults. An `expected` written as a number or a list of numbers becomes `torch.tensor(...)`,
        as the wrapper made it (`assert_close` raises TypeError on a number). A call with `*args` or
        `**kwargs` is reported without a fix.
        """,
        fix_safety=f"""
        Safe when the call gives a tolerance as a number (`rtol=1e-4, atol=1e-6`) and both inputs
        are evidently tensors: the fixed call is then exactly the one the wrapper made. Unsafe
        otherwise, for two reasons. Without tolerances, `assert_allclose` chose its own per dtype
        ({OLD_TOLERANCES}; rtol / atol), looser than `assert_close`'s (float32 1.3e-6 / 1e-5,
        float64 1e-7 / 1e-7), so a comparison that passed may fail: pass tolerances explicitly
        if you rely on them. And `assert_allclose` converted inputs that are not tensors with
        `torch.tensor(...)` (the expected value to the actual one's dtype), where `assert_close`
        compares a tensor with a list, number or NumPy array only by raising TypeError: the fix
        wraps a written number or list, not a name or expression of unknown type.
        """,
        wheels_vs_notes="""
        The warning says "deprecated since 1.12 and will be removed in a future release" (1.12.0's
        said "removed in 1.14"); 2.15.0 still has it. The wheels show the wrapper's call to
        `assert_close`, and its tolerance table, unchanged from 1.12.0
        (torch/testing/_deprecated.py) to 2.15.0 (torch/testing/_comparison.py).
        """,
    )
    examples = (
        Example(
            "tolerances given, tensors on both sides: safe",
            """
            import torch
            M = torch.as_tensor(A)
            N = M + 1e-6
            try:
                torch.testing.assert_allclose(M, N, 1e-5, 1e-8)
                passed = torch.tensor(True)
            except AssertionError:
                passed = torch.tensor(False)
            """,
            fixed="""
            import torch
            M = torch.as_tensor(A)
            N = M + 1e-6
            try:
                torch.testing.assert_close(M, N, rtol=1e-5, atol=1e-8, equal_nan=True, check_dtype=False)
                passed = torch.tensor(True)
            except AssertionError:
                passed = torch.tensor(False)
            """,
        ),
        Example(
            "a failing comparison fails alike, NaN equal by default",
            """
            import torch
            from torch.testing import assert_allclose
            M = torch.as_tensor(A)
            M = M.masked_fill(M.real <= 1, float("nan"))
            assert_allclose(M, M.double(), rtol=0, atol=0, msg="")
            try:
                assert_allclose(M, M * 1.001, atol=1e-6, rtol=1e-6, msg="too far")
                passed = torch.tensor(True)
            except AssertionError:
                passed = torch.tensor(False)
            """,
            fixed="""
            import torch
            from torch.testing import assert_close
            M = torch.as_tensor(A)
            M = M.masked_fill(M.real <= 1, float("nan"))
            assert_close(M, M.double(), rtol=0, atol=0, msg=None, equal_nan=True, check_dtype=False)
            try:
                assert_close(M, M * 1.001, atol=1e-6, rtol=1e-6, msg="too far", equal_nan=True, check_dtype=False)
                passed = torch.tensor(True)
            except AssertionError:
                passed = torch.tensor(False)
            """,
            findings=3,
        ),
        Example(
            "default tolerances: unsafe (assert_close's are tighter)",
            """
            import torch
            M = torch.as_tensor(A)
            try:
                torch.testing.assert_allclose(M, M + 1e-7)
                passed = torch.tensor(True)
            except AssertionError:
                passed = torch.tensor(False)
            """,
            fixed="""
            import torch
            M = torch.as_tensor(A)
            try:
                torch.testing.assert_close(M, M + 1e-7, equal_nan=True, check_dtype=False)
                passed = torch.tensor(True)
            except AssertionError:
                passed = torch.tensor(False)
            """,
            unsafe=True,
            # Not run by the harness: on complex input the original fails (assert_allclose's complex
            # tolerance is 0) and the fix passes; tests/test_rules_upgrade_misc.py runs that difference.
            executable=False,
        ),
        Example(
            "not reported: assert_close and NumPy's assert_allclose",
            """
            import numpy as np
            import torch
            M = torch.as_tensor(A)
            torch.testing.assert_close(M, M)
            np.testing.assert_allclose(np.ones(2), np.ones(2))
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for alias, _ in from_imports(ctx.resolver, frozenset({OLD})):
            ctx.report(
                alias,
                "`torch.testing.assert_allclose` (imported) is deprecated (FutureWarning)",
                help="torchup fixes the uses; this import goes when none is left",
            )
        for node, _, call in ctx.references_to(frozenset({OLD})):
            fix = self._fix(ctx, node, call) if call is not None else None
            ctx.report(
                node,
                "`torch.testing.assert_allclose` is deprecated (FutureWarning); `assert_close` is what it calls, "
                "with other defaults",
                help=None if fix else "call `torch.testing.assert_close(actual, expected, rtol=..., atol=..., "
                "equal_nan=True, check_dtype=False)` (`torchup rule TU608`)",
                fix=fix,
            )

    def _fix(self, ctx: Context, node: ast.expr, call: ast.Call) -> Fix | None:
        bound = bind_call(call, PARAMETERS)
        if bound is None or bound.has_star_args or bound.has_star_kwargs or "actual" not in bound.arguments \
                or "expected" not in bound.arguments:
            return None
        renamed = rename_reference(ctx, node, OLD, NEW_NAME)
        if renamed is None:
            return None
        edits = list(renamed.edits)
        for name in ("rtol", "atol", "equal_nan"):
            argument = bound.get(name)
            if argument is not None and argument.positional:
                edits += Edits(ctx.source).positional_to_keyword(call, argument.value, name)
        message = bound.get("msg")
        if message is not None:
            edits += _message_edits(ctx, call, message.value, message.keyword)
        added = ([] if bound.get("equal_nan") else ["equal_nan=True"]) + ["check_dtype=False"]
        append = append_argument(ctx.source, call, ", ".join(added))
        if append is None:
            return None
        edits.append(append)
        imports = tuple(renamed.imports)
        expected = bound.arguments["expected"].value
        if _literal(expected):  # (assert_allclose made it a tensor; assert_close raises TypeError on a number)
            torch = ctx.module_reference("torch", call)
            if torch is None:
                return None
            edits.append(Edits(ctx.source).replace(expected, f"{torch[0]}.tensor({ctx.segment(expected)})"))
            imports += torch[1]
        tolerance = _number(bound.arguments["rtol"].value if "rtol" in bound.arguments else None) or \
            _number(bound.arguments["atol"].value if "atol" in bound.arguments else None)
        tensors = all(tensor_evidence(ctx, bound.arguments[name].value) is Evidence.TENSOR
                      for name in ("actual", "expected"))
        safe = tolerance and tensors
        return Fix(
            "call `assert_close` as `assert_allclose` did" if safe
            else "call `assert_close` (its default tolerances are tighter, and it does not convert non-tensors)",
            Applicability.SAFE if safe else Applicability.UNSAFE,
            tuple(edits),
            imports,
            renamed.released_names,
        )


def _literal(node: ast.expr) -> bool:
    """A number, or a list or tuple of them (`1.0`, `-2`, `[1.0, 2.0]`): what assert_allclose
    turned into a tensor of the actual value's dtype and assert_close refuses to compare."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    if isinstance(node, ast.List | ast.Tuple):
        return bool(node.elts) and all(_literal(element) for element in node.elts)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, complex)


RULE = AssertAllcloseDeprecated()
