"""TU201: torch 2.14 changed the gradient of the clamp family where the input equals a bound."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import BoundCall, Edits, bind_call
from torchup.analysis.receivers import receiver_confidence, receiver_kind
from torchup.analysis.resolver import Binding, BindingKind
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Edit, Fix, ImportRequest, Severity
from torchup.rules._arguments import append_argument
from torchup.rules._linalg import method_calls

FUNCTIONS = frozenset({
    "torch.clamp", "torch.clip", "torch.clamp_min", "torch.clamp_max",
    "torch.clamp_", "torch.clip_", "torch.clamp_min_", "torch.clamp_max_",
})
METHODS = ("clamp", "clamp_", "clip", "clip_", "clamp_min", "clamp_min_", "clamp_max", "clamp_max_")
UNBOUND = frozenset(f"torch.Tensor.{method}" for method in METHODS)
# The bounds each out-of-place entry point takes, in order.
BOUNDS: dict[str, tuple[str, ...]] = {
    "clamp": ("min", "max"), "clip": ("min", "max"), "clamp_min": ("min",), "clamp_max": ("max",),
}
# Where no bound is evidently a number, only these have a drop-in replacement: torchup.compat.clamp.
COMPAT_FIXABLE = frozenset({"clamp", "clip"})
COMPAT = "torchup.compat"
LEGACY = 'boundary_grad="legacy"'
DEPENDENCY = "adds a run-time dependency on torchup (`torchup.compat`)"
CHANGE = "its gradient where the input equals a bound changed in torch 2.14"
HELP = (
    "scalar bounds: gradient 1 -> 0 at x == bound (0 everywhere when min == max); tensor bounds: "
    "0.5 to x and 0.5 to the bound at a tie. `torchup trace -- python your_script.py` shows whether "
    "inputs hit a bound at run time. 2.13's gradient, number bounds: "
    "`torch.where((x >= min) & (x <= max), x, torch.clamp(x, min, max).detach())` (torch only); "
    'tensor bounds: `torchup.compat.clamp(x, min, max, boundary_grad="legacy")`, which ' + DEPENDENCY
)
# What evidently holds a Python number: the results of these, and math's constants.
NUMBER_CONSTANTS = frozenset({"math.inf", "math.nan", "math.pi", "math.e", "math.tau"})
NUMBER_BUILTINS = frozenset({"float", "int"})
NOT_NUMBER_MATH = frozenset({"math.frexp", "math.modf", "math.isclose", "math.isfinite", "math.isinf", "math.isnan"})
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def is_number(ctx: Context, expr: ast.expr, seen: frozenset[int] = frozenset()) -> bool:
    """Whether ``expr`` evidently holds a Python number: a literal, arithmetic on numbers, a math
    constant or function, ``float(...)``/``int(...)``, ``t.item()``, or a name every binding of
    which is one of these (or a parameter annotated ``float``/``int``). ``seen``: the bindings
    being looked at (``lo = lo * 2`` proves nothing)."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return is_number(ctx, expr.operand, seen)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ARITHMETIC):
        return is_number(ctx, expr.left, seen) and is_number(ctx, expr.right, seen)
    if isinstance(expr, ast.Attribute):
        return ctx.qualified_name(expr) in NUMBER_CONSTANTS
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr == "item" and not expr.args and not expr.keywords:
            return True
        if isinstance(func, ast.Name) and func.id in NUMBER_BUILTINS:
            return ctx.resolver.is_unbound(func.id, ctx.resolver.scope_of(func))
        qualname = ctx.qualified_name(func)
        return qualname is not None and qualname.startswith("math.") and qualname not in NOT_NUMBER_MATH
    if isinstance(expr, ast.Name) and len(seen) < 8:
        bindings = ctx.resolver.lookup_name(expr).bindings
        return bool(bindings) and all(
            id(b) not in seen and _number_binding(ctx, b, seen | {id(b)}) for b in bindings
        )
    return False


def _number_binding(ctx: Context, binding: Binding, seen: frozenset[int]) -> bool:
    annotation = binding.annotation
    if annotation is not None:
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            return annotation.value.strip() in NUMBER_BUILTINS
        scope = binding.scope.parent or binding.scope  # annotations are evaluated outside the function
        return (isinstance(annotation, ast.Name) and annotation.id in NUMBER_BUILTINS
                and ctx.resolver.is_unbound(annotation.id, scope))
    if binding.kind is BindingKind.ASSIGNMENT and binding.value is not None:
        return is_number(ctx, binding.value, seen)
    return False


def reevaluable(ctx: Context, node: ast.expr, bound: bool) -> str | None:
    """The text of ``node`` when evaluating it again is harmless and cheap: a name or an attribute
    of one; for a bound also a number and arithmetic on these. None otherwise."""
    def plain(n: ast.expr) -> bool:
        if isinstance(n, ast.Name):
            return True
        if isinstance(n, ast.Attribute):
            return plain(n.value)
        if not bound:
            return False
        if isinstance(n, ast.Constant):
            return isinstance(n.value, (int, float)) and not isinstance(n.value, bool)
        if isinstance(n, ast.UnaryOp):
            return isinstance(n.op, (ast.USub, ast.UAdd)) and plain(n.operand)
        return isinstance(n, ast.BinOp) and isinstance(n.op, ARITHMETIC) and plain(n.left) and plain(n.right)

    text = ctx.segment(node)
    return text if plain(node) and "#" not in text and "\n" not in text else None


def inline_fix(ctx: Context, call: ast.Call, x: ast.expr, lo: ast.expr | None, hi: ast.expr | None) -> Fix | None:
    """``clamp(x, lo, hi)`` -> ``torch.where((x >= lo) & (x <= hi), x, clamp(x, lo, hi).detach())``.

    Only for number bounds (torch.clamp takes a bound as a number when either one is a Python number),
    where it is exact: inside the closed interval the value is ``x`` itself (bit for bit: with number
    bounds torch.clamp returns ``x`` there) and the gradient ``g``, as in 2.13; elsewhere the value is
    torch.clamp's own and the gradient 0. ``x`` and the bounds are evaluated more than once.
    """
    present = [b for b in (lo, hi) if b is not None]
    if not any(is_number(ctx, b) for b in present):
        return None  # a bound may be a tensor: its gradient would be lost
    x_text = reevaluable(ctx, x, bound=False)
    lo_text = None if lo is None else reevaluable(ctx, lo, bound=True)
    hi_text = None if hi is None else reevaluable(ctx, hi, bound=True)
    if x_text is None or (lo is not None and lo_text is None) or (hi is not None and hi_text is None):
        return None
    reference = ctx.module_reference("torch", call)
    if reference is None:
        return None
    tests = [f"{x_text} {op} {text}" for op, text in ((">=", lo_text), ("<=", hi_text)) if text is not None]
    mask = tests[0] if len(tests) == 1 else " & ".join(f"({test})" for test in tests)
    start, end = ctx.source.node_range(call)
    torch_text, imports = reference
    edits = (Edit(start, start, f"{torch_text}.where({mask}, {x_text}, "), Edit(end, end, ".detach())"))
    message = (f"use `{torch_text}.where(<{x_text} within the bounds>, {x_text}, <this call>.detach())` "
               "(2.13's gradient, torch only)")
    return Fix(message, Applicability.UNSAFE, edits, imports)


def compat_reference(ctx: Context, at: ast.AST) -> tuple[str, tuple[ImportRequest, ...]] | None:
    """Text naming ``torchup.compat`` at ``at``, plus ``import torchup.compat`` unless the module
    already imports that submodule (``import torchup`` alone does not load it)."""
    reference = ctx.module_reference(COMPAT, at)
    if reference is None:
        return None
    text, imports = reference
    if imports:  # `torchup` is unbound here: `import torchup.compat` binds it and loads the submodule
        return text, (ImportRequest(COMPAT),)
    module = ctx.resolver.module_scope
    loaded = any(
        b.scope is module
        and (
            (b.target is not None and (b.target == COMPAT or b.target.startswith(COMPAT + ".")))
            or (isinstance(b.node, ast.alias) and (b.node.name == COMPAT or b.node.name.startswith(COMPAT + ".")))
        )
        for b in ctx.resolver.import_bindings
    )
    if loaded:
        return text, ()
    # `import torchup.compat` binds the name `torchup`: only where that cannot shadow anything else.
    if not (ctx.resolver.is_unbound("torchup", module) or ctx.resolver.name_in_scope("torchup", module) == "torchup"):
        return None
    return text, (ImportRequest(COMPAT),)


def _compat_fix(ctx: Context, call: ast.Call, head: Edit, reference: tuple[str, tuple[ImportRequest, ...]],
                released: tuple[int, ...]) -> Fix | None:
    append = append_argument(ctx.source, call, LEGACY)
    if append is None:
        return None
    return Fix(f"use `{reference[0]}.clamp(..., {LEGACY})` (2.13's gradient); this {DEPENDENCY}", Applicability.UNSAFE,
               (head, append), reference[1], released)


def compat_function_fix(ctx: Context, call: ast.Call) -> Fix | None:
    """``torch.clamp(x, lo, hi)`` -> ``torchup.compat.clamp(x, lo, hi, boundary_grad="legacy")``."""
    bound = bind_call(call, ["input", "min", "max"], ("out",))
    if bound is None or bound.has_star_args or bound.has_star_kwargs or bound.get("out") is not None:
        return None
    data = bound.get("input")
    if data is None or not data.positional or (bound.get("min") is None and bound.get("max") is None):
        return None  # `input=` has another name in torchup.compat.clamp; no bound at all raises anyway
    reference = compat_reference(ctx, call)
    if reference is None:
        return None
    head = Edits(ctx.source).replace(call.func, f"{reference[0]}.clamp")
    released = (id(call.func),) if isinstance(call.func, ast.Name) else ()
    return _compat_fix(ctx, call, head, reference, released)


def compat_method_fix(ctx: Context, call: ast.Call) -> Fix | None:
    """``x.clamp(lo, hi)`` -> ``torchup.compat.clamp(x, lo, hi, boundary_grad="legacy")``."""
    assert isinstance(call.func, ast.Attribute)
    bound = bind_call(call, ["min", "max"])
    if bound is None or bound.has_star_args or bound.has_star_kwargs or not bound.arguments:
        return None
    _, call_end = ctx.source.node_range(call)
    open_paren = Edits(ctx.source).open_paren_after(call.func, call_end)
    reference = compat_reference(ctx, call)
    receiver = call.func.value
    _, receiver_end = ctx.source.node_range(receiver)
    if open_paren is None or reference is None or "#" in ctx.source.text[receiver_end:open_paren]:
        return None
    receiver_text = ctx.segment(receiver)
    if isinstance(receiver, (ast.Yield, ast.YieldFrom, ast.Starred)):
        receiver_text = f"({receiver_text})"
    separator = "," if ctx.source.text[open_paren:].lstrip(" \t").startswith(("\n", "\r")) else ", "
    head_start, _ = ctx.source.node_range(call.func)
    head = Edit(head_start, open_paren, f"{reference[0]}.clamp({receiver_text}{separator}")
    return _compat_fix(ctx, call, head, reference, ())


def _bound(bound: BoundCall, name: str) -> ast.expr | None:
    """The argument passed for bound ``name``; None when absent or a literal None."""
    argument = bound.get(name)
    if argument is None or (isinstance(argument.value, ast.Constant) and argument.value.value is None):
        return None
    return argument.value


def fix_for(ctx: Context, call: ast.Call, operation: str, form: str) -> Fix | None:
    """The fix of a call of ``operation`` (``clamp``, ``clamp_min_``...) written as a ``function``
    (``torch.clamp(x, ...)``), a ``method`` (``x.clamp(...)``) or ``unbound`` (``torch.Tensor.clamp(x, ...)``):
    the torch-only form where a bound is evidently a number, else torchup.compat for clamp and clip."""
    if operation not in BOUNDS:
        return None  # in-place: see the docs
    first = {"function": "input", "unbound": "self"}.get(form)
    parameters = [*([first] if first else []), *BOUNDS[operation]]
    bound = bind_call(call, parameters, ("out",) if form == "function" else ())
    if bound is None or bound.has_star_args or bound.has_star_kwargs or bound.get("out") is not None:
        return None
    if first is None:
        assert isinstance(call.func, ast.Attribute)
        x: ast.expr | None = call.func.value
    else:
        data = bound.get(first)
        x = data.value if data is not None else None
    lo, hi = _bound(bound, "min"), _bound(bound, "max")
    if x is None or (lo is None and hi is None):
        return None  # no bound at all raises anyway
    inline = inline_fix(ctx, call, x, lo, hi)
    if inline is not None or operation not in COMPAT_FIXABLE:
        return inline
    if form == "function":
        return compat_function_fix(ctx, call)
    return compat_method_fix(ctx, call) if form == "method" else None


def detached_calls(ctx: Context) -> set[int]:
    """The calls whose result is detached on the spot (``torch.clamp(...).detach()``): no gradient."""
    return {
        id(call.func.value)
        for call in ctx.resolver.calls
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("detach", "detach_")
        and isinstance(call.func.value, ast.Call) and not call.args and not call.keywords
    }


class ClampBoundaryGradient(Rule):
    change = Change.BEHAVES
    code = "TU201"
    name = "clamp-boundary-gradient"
    summary = "The gradient of `clamp`/`clip`/`clamp_min`/`clamp_max` at their bounds changed in torch 2.14."
    enabled_by_default = False
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    looks_for = LooksFor(names=tuple(sorted(FUNCTIONS | UNBOUND)), methods=METHODS)
    docs = RuleDocs(
        what="""
        Finds calls of `torch.clamp`, `torch.clip`, `torch.clamp_min`, `torch.clamp_max` (and their
        in-place `torch.clamp_` ... forms), of the Tensor methods `clamp`, `clamp_`, `clip`, `clip_`,
        `clamp_min`, `clamp_min_`, `clamp_max`, `clamp_max_`, and of the unbound
        `torch.Tensor.clamp(x, ...)`, through any import form. A method call is not reported when
        its receiver is evidently not a tensor (a literal, a NumPy or SciPy result, a class that is
        not a `torch.Tensor`), nor in a file that never imports torch, nor a call whose result is
        detached on the spot (`torch.clamp(x, 0, 1).detach()`: no gradient). References that are not
        calls (`f = torch.clamp`) are not reported. Off by default: most code never feeds a clamp
        an input exactly equal to a bound, and a static check cannot tell.
        """,
        why="""
        torch 2.14 changed the derivative where the input equals a bound, in eager backward,
        compiled code (`torch.compile(backend="aot_eager")`) and forward-mode AD alike. Values are
        unchanged; gradients are not (both wheels, CPU):

            x = torch.tensor([0., .5, 1., 2.], requires_grad=True)
            torch.clamp(x, 0., 1.).sum().backward()
            # 2.13: x.grad == [1., 1., 1., 0.]    2.14: x.grad == [0., 1., 0., 0.]
            torch.clamp(x, 1., 1.)                # min == max: 2.13 [0., 0., 1., 0.], 2.14 all 0

        - Scalar bounds: at `x == min` or `x == max` the gradient goes 1 -> 0; with `min == max`
          it is 0 everywhere.
        - Tensor bounds: at a tie the gradient is split, 0.5 to `x` and 0.5 to the bound, also when
          the bound does not require grad (then half of `x`'s gradient is lost). A 0-dim bound
          broadcast over ties accumulates: three ties give it 1.5.
        - `clamp_min`, `clamp_max`, `clip` and every in-place form change the same way.
        - Unchanged: `F.hardtanh`, `F.relu6`, `F.relu`, `torch.where` formulations,
          `torch.maximum`/`torch.minimum`. `torch.fmax`/`torch.fmin` changed too (TU202).

        Models trained with clipping (ReLU-like activations written as `clamp(min=0)` on inputs
        that are exactly 0, quantisation ranges, probability clipping) may train differently.
        """,
        fix="""
        `torchup trace -- python train.py` runs the program and reports which of these calls
        actually received inputs equal to a bound. Where 2.13's gradient matters, the unsafe fix
        keeps it, with torch alone where that is exact:

        - Number bounds, the default: when a bound is evidently a Python number (a literal,
          arithmetic on numbers, `float(...)`, `t.item()`, a `math` constant, or a name bound only to
          these or annotated `float`/`int`; torch then takes the other bound as a number too), the
          call `c` of `clamp`, `clip`, `clamp_min` or `clamp_max` (function, method or unbound)
          becomes `torch.where((x >= min) & (x <= max), x, c.detach())`, one test for one bound.
          Inside the closed interval that is `x` itself (with number bounds torch.clamp returns `x`
          there, bit for bit) with the full gradient, as in 2.13; elsewhere it is `c`'s own value
          with gradient 0. Nothing new to install. `x` and the bounds are evaluated again, so they
          must be names, attributes of names or numbers: assign `model(x)` to a name first.
        - Bounds that may be tensors, or an input that is an expression: `clamp`/`clip` become
          `torchup.compat.clamp(x, min, max, boundary_grad="legacy")` and `import torchup.compat` is
          added. That makes torchup a run-time dependency of your code: the fix says so, and
          `torchup fix` names the files at the end of its run. No fix there for
          `clamp_min`/`clamp_max` (torchup.compat.clamp differs from them in forward-mode AD).
        - In-place forms, `out=`, `*args`/`**kwargs`: reported, no fix.

        Why not torch alone for tensor bounds: where `x` and a tensor bound are zeros of opposite
        sign, torch.clamp returns the bound's zero in its vectorised loop and `x`'s in the scalar
        tail, so the sign depends on the element's position, and no expression of other torch
        operations that passes the full gradient to `x` there reproduces it; 2.13's routing of the
        bounds' gradients (min == max, min > max, NaN bounds) also takes nested `torch.where`s.
        Why not in-place: `x.copy_(torch.where(...))` is exact except that an upstream gradient of
        -0.0 comes back as +0.0 (copy_ gives the overwritten tensor a zero gradient, which autograd
        adds).
        """,
        fix_safety="""
        Unsafe: it keeps the old gradient, which may not be what you want on 2.14; a receiver whose
        type torchup cannot see may not be a tensor (a NumPy array's `.clip`). The torch-only form
        evaluates `x` and the bounds more than once, and where torch.clamp would raise, it may raise
        another error first; the torchup.compat form makes the program depend on torchup at run
        time. The fixed examples, and both forms on inputs exactly on the bounds (ties, -0.0, NaN,
        infinities, `min == max`, float32/float64/bfloat16, broadcast and 0-dim tensor bounds, odd
        upstream gradients), are checked by the differential tests: 2.13 as written vs. 2.14 as
        fixed, values and gradients bit for bit.
        """,
        wheels_vs_notes="""
        The release notes mention only scalar `clamp` at its boundary (1 -> 0) and the 0.5/0.5
        split for tensor bounds. The wheels also change `min == max` (0 everywhere), `clip`,
        `clamp_min`, `clamp_max` and the in-place forms; the tensor-bound split happens even when
        the bound does not require grad, and 0-dim bounds accumulate the halves.
        """,
    )
    examples = (
        Example(
            "number bounds: torch only (unsafe fix)",
            """
            import torch
            X = torch.as_tensor(A)
            top = X.detach().max().item()  # the largest entry sits exactly on the bound
            y = torch.clamp(X, min=0.0, max=top)
            z = torch.clip(X, top, top)
            m = X.clamp_min(-top)
            n = torch.clamp_max(X, top)
            """,
            fixed="""
            import torch
            X = torch.as_tensor(A)
            top = X.detach().max().item()  # the largest entry sits exactly on the bound
            y = torch.where((X >= 0.0) & (X <= top), X, torch.clamp(X, min=0.0, max=top).detach())
            z = torch.where((X >= top) & (X <= top), X, torch.clip(X, top, top).detach())
            m = torch.where(X >= -top, X, X.clamp_min(-top).detach())
            n = torch.where(X <= top, X, torch.clamp_max(X, top).detach())
            """,
            findings=4,
            unsafe=True,
        ),
        Example(
            "a from-import, and a multi-line call: torch only (unsafe fix)",
            """
            from torch import clip
            top = A.detach().max().item()
            y = clip(
                A,
                max=top,  # upper bound only
            )
            """,
            fixed="""
            from torch import clip
            import torch
            top = A.detach().max().item()
            y = torch.where(A <= top, A, clip(
                A,
                max=top,  # upper bound only
            ).detach())
            """,
            unsafe=True,
        ),
        Example(
            "bounds that may be tensors, an input that is an expression: torchup.compat (unsafe fix,"
            " adds a run-time dependency on torchup)",
            """
            import torch
            X = torch.as_tensor(A)
            lo = torch.zeros_like(X)
            y = X.clamp(lo, X.detach())
            w = torch.clamp(X * 2, 0.0, X.detach().max().item() * 2)
            """,
            fixed="""
            import torch
            import torchup.compat
            X = torch.as_tensor(A)
            lo = torch.zeros_like(X)
            y = torchup.compat.clamp(X, lo, X.detach(), boundary_grad="legacy")
            w = torchup.compat.clamp(X * 2, 0.0, X.detach().max().item() * 2, boundary_grad="legacy")
            """,
            findings=2,
            unsafe=True,
        ),
        Example(
            "in-place forms, out= and clamp_min/clamp_max with a tensor bound: reported, no fix",
            """
            import torch
            h = torch.as_tensor(A).clone()
            h.clamp_(min=0.0)
            torch.clamp_max_(h, 1.0)
            m = torch.clamp_min(A, torch.zeros_like(A))
            o = torch.empty_like(A)
            torch.clamp(A, 0.0, 1.0, out=o)
            """,
            findings=4,
        ),
        Example(
            "not reported: NumPy, hardtanh, maximum, a detached result and a local function",
            """
            import numpy as np
            import torch
            import torch.nn.functional as F

            def clamp(v, lo, hi):
                return v

            a = np.clip(np.ones(3), 0, 1)
            b = np.ones(3).clip(0, 1)
            c = F.hardtanh(A, 0.0, 1.0)
            d = torch.maximum(A, torch.zeros_like(A))
            e = clamp(A, 0, 1)
            f = torch.clamp(A, 0.0, 1.0).detach()
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        detached = detached_calls(ctx)
        for call, qualname in ctx.calls_to(FUNCTIONS | UNBOUND):
            if id(call) in detached:
                continue
            form = "unbound" if qualname in UNBOUND else "function"
            fix = fix_for(ctx, call, qualname.rsplit(".", 1)[1], form)
            ctx.report(call.func, f"`{qualname}`: {CHANGE}", help=HELP, fix=fix)
        for method in METHODS:
            for call in method_calls(ctx, method):
                confidence = receiver_confidence(ctx, call)
                if confidence is None or id(call) in detached:
                    continue
                fix = fix_for(ctx, call, method, "method")
                ctx.report(call.func, f"`Tensor.{method}()`: {CHANGE}{receiver_kind(confidence)}", help=HELP,
                           fix=fix, confidence=confidence, receiver_method=method)


RULE = ClampBoundaryGradient()
