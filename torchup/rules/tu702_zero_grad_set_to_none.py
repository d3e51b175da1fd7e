"""TU702: `zero_grad(set_to_none=False)` keeps zero-filled gradients (TorchFix's TOR402)."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix, Severity

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
    looks_for = LooksFor(keywords=(KEYWORD,))
    docs = RuleDocs(
        what="""
        Finds `.zero_grad(set_to_none=False)` (an optimizer's or a module's, written with the
        literal `False`) in files that import torch. Off by default, like TorchFix's TOR402:
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
            keyword = next((k for k in call.keywords if k.arg == KEYWORD), None)
            if keyword is None or not (isinstance(keyword.value, ast.Constant) and keyword.value.value is False):
                continue
            removal = Edits(ctx.source).remove_argument(call, keyword)
            fix = Fix("drop `set_to_none=False`", Applicability.UNSAFE, (removal,)) if removal else None
            ctx.report(keyword, "`zero_grad(set_to_none=False)` fills every gradient with zeros; the default "
                       "(`None`, since torch 2.0) is cheaper", fix=fix)


RULE = ZeroGradSetToNone()
