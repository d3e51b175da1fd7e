"""TU702: `zero_grad(set_to_none=False)` keeps zero-filled gradients (TorchFix's TOR402)."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.flow import assigned_call
from torchup.analysis.inference import Evidence, bound_nowhere, class_evidence, class_of_self, local_class
from torchup.analysis.patterns import Edits
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Confidence, Fix, Severity

METHOD = "zero_grad"
KEYWORD = "set_to_none"


class ZeroGradSetToNone(Rule):
    change = Change.ADOPT
    code = "TU702"
    name = "zero-grad-set-to-none"
    summary = "`zero_grad(set_to_none=False)` fills gradients with zeros; `None` (the default since 2.0) is cheaper."
    since = "2.0"
    enabled_by_default = False  # (a hint, as TorchFix's TOR4 codes: `--select TU702` or `TOR402`)
    severity = Severity.INFO
    fix_availability = FixAvailability.UNSAFE
    looks_for = LooksFor(keywords=(KEYWORD,), methods=(METHOD,))
    docs = RuleDocs(
        what="""
        Finds `.zero_grad(set_to_none=False)` and `.zero_grad(False)` (an optimizer's or a module's,
        written with the literal `False`) in files that import torch. Not on something else: an
        instance of a class that defines `zero_grad` itself (in the file, or, for a receiver of
        unknown type, anywhere in the checked project), or a name nothing in the file binds.
        Certain where the receiver was made by `torch.optim` or `torch.nn` in sight (`opt =
        torch.optim.SGD(...)`), possible otherwise. Off by default, like TorchFix's TOR402:
        select it with `--select TU702` (or `TOR402`).
        """,
        why="""
        Since torch 2.0 `zero_grad()` sets each `.grad` to `None` by default: the next backward
        allocates it afresh instead of adding into a tensor of zeros, one memory write less per
        parameter and step, and less memory held between steps. `set_to_none=False` asks for the
        old zero-filling.
        """,
        fix="`opt.zero_grad(set_to_none=False)` -> `opt.zero_grad()`.",
        fix_safety="""
        Unsafe: code that reads `.grad` between `zero_grad()` and the next backward
        (`p.grad.add_(...)`, `p.grad.norm()`, a parameter that receives no gradient this step)
        now meets `None` and raises AttributeError or TypeError; optimizers skip such
        parameters, so a step without a backward no longer applies weight decay to them.
        """,
    )
    examples = (
        Example(
            "an optimizer's",
            """
            import torch
            model = torch.nn.Linear(2, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            opt.zero_grad(set_to_none=False)
            model(torch.ones(1, 2)).sum().backward()
            opt.step()
            """,
            fixed="""
            import torch
            model = torch.nn.Linear(2, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            opt.zero_grad()
            model(torch.ones(1, 2)).sum().backward()
            opt.step()
            """,
            unsafe=True,
        ),
        Example(
            "already the default, or a flag",
            """
            import torch
            def step(opt, keep):
                opt.zero_grad(set_to_none=True)
                opt.zero_grad(set_to_none=keep)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        if not ctx.resolver.imports_torch:
            return
        for call in ctx.resolver.calls:
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == METHOD):
                continue
            argument = _false_set_to_none(call)
            if argument is None or _not_torchs(ctx, func.value):
                continue
            removal = Edits(ctx.source).remove_argument(call, argument)
            fix = Fix("drop `set_to_none=False`", Applicability.UNSAFE, (removal,)) if removal else None
            ctx.report(argument, "`zero_grad(set_to_none=False)` fills every gradient with zeros; the default "
                       "(`None`, since torch 2.0) is cheaper", fix=fix, receiver_method=METHOD,
                       confidence=Confidence.CERTAIN if _torchs(ctx, func.value) else Confidence.POSSIBLE)


def _false_set_to_none(call: ast.Call) -> ast.expr | ast.keyword | None:
    """The literal `False` given as `set_to_none` (by keyword, or as the one positional argument)."""
    keyword = next((k for k in call.keywords if k.arg == KEYWORD), None)
    if keyword is not None:
        return keyword if isinstance(keyword.value, ast.Constant) and keyword.value.value is False else None
    if len(call.args) == 1 and isinstance(call.args[0], ast.Constant) and call.args[0].value is False:
        return call.args[0]
    return None


def _torchs(ctx: Context, receiver: ast.expr) -> bool:
    """Is the receiver evidently a torch optimizer or module: a name whose reaching assignment is a
    call of something in `torch.optim` or `torch.nn` (`opt = torch.optim.SGD(...)`)?"""
    value = assigned_call(ctx, receiver)
    name = ctx.qualified_name(value.func) if value is not None else None
    return name is not None and name.startswith(("torch.optim.", "torch.nn."))


def _not_torchs(ctx: Context, receiver: ast.expr) -> bool:
    """Is the receiver evidently something else: a name nothing in the file binds (`tape`), or an
    instance of a class of this file that defines `zero_grad` itself (`self` in it, or `Foo()`)?
    A class elsewhere in the project that defines it drops the finding at the end of the run
    (``receiver_method``, torchup.analysis.project)."""
    if bound_nowhere(ctx, receiver):
        return True
    cls = class_of_self(ctx, receiver) if isinstance(receiver, ast.Name) else None
    if cls is None:
        value = assigned_call(ctx, receiver)
        cls = local_class(ctx, value.func) if value is not None else None
    return cls is not None and class_evidence(ctx, cls, METHOD) is Evidence.NOT_TENSOR


RULE = ZeroGradSetToNone()
