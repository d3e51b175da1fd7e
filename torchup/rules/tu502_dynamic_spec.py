"""TU502: ``mark_dynamic`` and call-site ``dynamic_shapes=`` dicts; torch 2.14 has ``@dynamic_spec``."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.rules._modernise import feature, keyword, local_function

SPEC = feature("dynamic_spec")
DYNAMIC_SPEC = SPEC["function"]
MARK_DYNAMIC = frozenset(SPEC["mark_dynamic"])
COMPILE = frozenset(SPEC["compile"])
EXPORT = frozenset(SPEC["export"])
CONFLICT = SPEC["conflict_error"]
NEW = (
    "torch 2.14 can declare dynamic shapes on the function (or `forward`) itself with "
    f"`@dynamic_spec(...)` from `{DYNAMIC_SPEC.rpartition('.')[0]}`, read by `torch.compile`, "
    "`torch.export.export` and `make_fx`"
)
UNBACKED = "its dimensions are unbacked: never specialised, not even to 0 or 1"
NOT_BOTH = "do not also pass `dynamic_shapes=` (ValueError)"
MAX_SPELLED_DIM = 8  # the help writes `STATIC, ` once per dim before the marked one, up to this index


def _is_dynamic_spec_decorator(ctx: Context, decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Call) and ctx.qualified_name(decorator.func) == DYNAMIC_SPEC


def _decorated_with_spec(ctx: Context, node: ast.expr) -> bool:
    """Is ``node`` the name of a ``def`` in this file that carries ``@dynamic_spec(...)``?"""
    function = local_function(ctx, node)
    return isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        _is_dynamic_spec_decorator(ctx, d) for d in function.decorator_list
    )


def _module_with_spec(ctx: Context, node: ast.expr) -> str | None:
    """The class, if ``node`` is an instance of a class defined in this file whose ``forward`` carries
    ``@dynamic_spec(...)``: ``Model()``, or a name bound once to ``Model()``. (``_resolve_dynamic_shapes``
    reads a module's ``forward``.)"""
    if isinstance(node, ast.Name):
        bindings = ctx.resolver.lookup_name(node).bindings
        if len(bindings) != 1 or not isinstance(bindings[0].value, ast.Call):
            return None
        node = bindings[0].value
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    bindings = ctx.resolver.lookup_name(node.func).bindings
    cls = bindings[0].node if len(bindings) == 1 else None
    if not isinstance(cls, ast.ClassDef):
        return None
    decorated = any(
        isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "forward"
        and any(_is_dynamic_spec_decorator(ctx, d) for d in item.decorator_list)
        for item in cls.body
    )
    return cls.name if decorated else None


def _compiled(call: ast.Call, qualname: str) -> ast.expr | None:
    """What ``torch.compile`` (``model``) or ``torch.export.export`` (``mod``) is given."""
    if call.args:
        return None if isinstance(call.args[0], ast.Starred) else call.args[0]
    found = keyword(call, "mod" if qualname in EXPORT else "model")
    return found.value if found is not None else None


def _spec_text(ctx: Context, call: ast.Call) -> str:
    """``ShapeVar("x_0", min=2)`` at position 0 of ``TensorSpec([...])``, from a mark_dynamic call."""
    tensor = call.args[0] if call.args else None
    index = call.args[1] if len(call.args) > 1 else None
    name = tensor.id if isinstance(tensor, ast.Name) else "<parameter>"
    bounds = "".join(
        f", {k.arg}={ctx.segment(k.value)}" for k in call.keywords if k.arg in ("min", "max")
    )
    if isinstance(index, ast.Constant) and type(index.value) is int and 0 <= index.value <= MAX_SPELLED_DIM:
        dims = ["STATIC"] * index.value + [f'ShapeVar("{name}_{index.value}"{bounds})']
        return f'@dynamic_spec({{"{name}": TensorSpec([{", ".join(dims)}, ...])}})` (one entry per dim, `STATIC` ' \
            "for the static ones"
    return f'@dynamic_spec({{"{name}": TensorSpec([...])}})` (`ShapeVar(...{bounds})` at the marked dims, `STATIC` ' \
        "at the others"


class DynamicSpec(Rule):
    change = Change.ADOPT
    code = "TU502"
    name = "dynamic-spec-decorator"
    summary = "`mark_dynamic` and call-site `dynamic_shapes=` dicts: torch 2.14 has the `@dynamic_spec` decorator."
    enabled_by_default = False
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(words=("mark_dynamic", "dynamic_shapes"))
    reads_unfocused_bodies = True  # the local function compiled, and the `__init__` of a class
    docs = RuleDocs(
        what=f"""
        Finds `torch._dynamo.mark_dynamic(t, dim, ...)` calls, and `dynamic_shapes=` written
        as a dict (`{{...}}` or `dict(...)`) at a `torch.compile` / `torch.compiler.compile`
        call (or decorator) or a `torch.export.export` call, through any import form. Reported
        as an error instead: `dynamic_shapes=` given to `torch.compile` for a function this
        file decorates with `@dynamic_spec(...)` (as an argument, or as a decorator above it),
        or to `torch.compile` / `torch.export.export` for an instance of a class defined here
        whose `forward` carries it (`Model()`, or a name bound once to `Model()`), which raises

            {CONFLICT}

        Not reported: `dynamic_shapes=None`, a spec held in a variable or built with
        `ShapesSpec(...)`/`ParamsSpec(...)` (already the spec API), `maybe_mark_dynamic` (a
        hint that allows specialisation, which `@dynamic_spec` never does), `dynamic=True`,
        and 2.13's `shapes_spec=` (TU130 renames it first). Off by default; informational.
        """,
        why=f"""
        torch 2.14 adds `{DYNAMIC_SPEC}(spec)`: a decorator that attaches a
        `ShapesSpec` (or the dict / `ParamsSpec` shorthand, keyed by parameter name) to a
        function or to `nn.Module.forward`. `torch.compile`, `torch.export.export` and
        `make_fx(tracing_mode="fake")` read it, so the dynamic dimensions are declared once,
        next to the signature, instead of per tensor object (`mark_dynamic`) or per call site.

        It is not a drop-in equivalent. Its dimensions are unbacked symbols, never specialised
        (not even to 0 or 1): code that branches on such a size (`if x.shape[0] > 4:`) fails to
        trace ("Could not guard on data-dependent expression u0 > 4"; add `torch._check(...)`)
        where a backed `mark_dynamic` dimension guards and recompiles, and Inductor's NVGEMM
        templates skip GEMMs with unbacked sizes. `Dim`-based export specs
        (`{{0: Dim("batch")}}`) have to be rewritten with `ShapeVar`/`TensorSpec`. Stacking
        two `@dynamic_spec` on one function raises ValueError, and so does passing
        `dynamic_shapes=` for a decorated function.
        """,
        fix="""
        No automatic fix: the spec names parameters, which a `mark_dynamic(tensor, dim)` call
        does not, and moving a call-site spec onto a function changes every caller. Write, on
        the function that is compiled or exported (or its `forward`):

            from torch.fx.experimental.dynamic_spec import STATIC, ShapeVar, TensorSpec, dynamic_spec

            @dynamic_spec({"x": TensorSpec([ShapeVar("batch", min=2, max=64), STATIC])})
            def forward(self, x): ...

        (`mark_dynamic`'s `min=`/`max=` become `ShapeVar`'s), then drop the `mark_dynamic` call
        or the `dynamic_shapes=` argument. Keep them where the code must run on torch 2.13.
        """,
        fix_safety="There is no fix: the move from backed to unbacked sizes can break tracing.",
        wheels_vs_notes="""
        The release article says only that `@dynamic_spec` describes dynamic shapes uniformly
        for `torch.compile`, `torch.export` and `make_fx`. The 2.14.1 wheel adds: the import
        path (`torch.fx.experimental.dynamic_spec`; there is no `torch.dynamic_spec`), the
        ValueError when it is combined with `dynamic_shapes=` or stacked, and that its
        dimensions are unbacked symbols only. The module and its spec classes already exist in
        2.13.0; only the decorator is new.
        """,
    )
    examples = (
        Example(
            "mark_dynamic and a dict at the call site",
            """
            import torch
            import torch._dynamo

            def run(model, x):
                torch._dynamo.mark_dynamic(x, 0, min=2, max=64)
                return torch.compile(model)(x)

            def export(model, x):
                batch = torch.export.Dim("batch")
                return torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})
            """,
            findings=2,
        ),
        Example(
            "a decorated function compiled with dynamic_shapes= (ValueError)",
            """
            from torch import compile
            from torch.fx.experimental.dynamic_spec import STATIC, ShapeVar, TensorSpec, dynamic_spec

            @dynamic_spec({"x": TensorSpec([ShapeVar("batch"), STATIC])})
            def double(x):
                return x * 2

            fast = compile(double, dynamic_shapes={"x": TensorSpec([ShapeVar("b"), STATIC])})
            """,
        ),
        Example(
            "not reported: the decorator, a spec object, a hint",
            """
            import torch
            from torch.fx.experimental.dynamic_spec import STATIC, ShapesSpec, ShapeVar, TensorSpec, dynamic_spec

            @dynamic_spec({"x": TensorSpec([ShapeVar("batch"), STATIC])})
            def double(x):
                return x * 2

            fast = torch.compile(double)
            other = torch.compile(lambda y: y + 1, dynamic_shapes=ShapesSpec({"y": TensorSpec([ShapeVar("n")])}))
            torch._dynamo.maybe_mark_dynamic(A, 0)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for call, qualname in ctx.calls_to(MARK_DYNAMIC):
            ctx.report(
                call.func,
                f"`{qualname}` marks one tensor object at run time; {NEW}",
                help=f"decorate the compiled function: `{_spec_text(ctx, call)}; {UNBACKED}); {NOT_BOTH}",
            )
        for call, qualname in ctx.calls_to(COMPILE | EXPORT):
            given = keyword(call, "dynamic_shapes")
            if given is None or (isinstance(given.value, ast.Constant) and given.value.value is None):
                continue
            target = _compiled(call, qualname)
            if target is not None and qualname in COMPILE and _decorated_with_spec(ctx, target):
                self._conflict(ctx, given, f"`{ctx.segment(target)}` carries `@dynamic_spec(...)`")
                continue
            module = _module_with_spec(ctx, target) if target is not None else None
            if module is not None:
                self._conflict(ctx, given, f"`{module}.forward` carries `@dynamic_spec(...)`")
                continue
            if qualname in COMPILE and self._decorates_spec_function(ctx, call):
                self._conflict(ctx, given, "the function below carries `@dynamic_spec(...)`")
                continue
            value = given.value
            literal = isinstance(value, ast.Dict) or (
                isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict"
                and ctx.resolver.is_unbound("dict", ctx.scope_of(value))
            )
            if not literal:
                continue
            where = "`forward` of the exported module" if qualname in EXPORT else "the compiled function"
            translate = " (`Dim(...)` becomes `ShapeVar(...)`, a `{dim: Dim}` dict a `TensorSpec([...])`)" \
                if qualname in EXPORT else ""
            ctx.report(
                given,
                f"`dynamic_shapes=` at the `{qualname}` call; {NEW}",
                help=f"move this spec onto {where} as `@dynamic_spec({{...}})`{translate} and drop "
                f"`dynamic_shapes=` ({UNBACKED})",
            )

    def _decorates_spec_function(self, ctx: Context, call: ast.Call) -> bool:
        """``@torch.compile(dynamic_shapes=...)`` stacked above ``@dynamic_spec(...)`` on one def."""
        for node in ctx.walk():  # (`call` spells `dynamic_shapes`)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and call in node.decorator_list:
                below = node.decorator_list[node.decorator_list.index(call) + 1:]
                return any(_is_dynamic_spec_decorator(ctx, d) for d in below)
        return False

    def _conflict(self, ctx: Context, given: ast.keyword, reason: str) -> None:
        ctx.report(
            given,
            f"`dynamic_shapes=` given while {reason}: torch 2.14 raises {CONFLICT}",
            help="keep one of the two: the decorator's spec or this argument",
            severity=Severity.ERROR,
        )


RULE = DynamicSpec()
