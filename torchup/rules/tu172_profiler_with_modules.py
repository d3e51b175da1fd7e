"""TU172: the profilers' ``with_modules=True`` warns in torch 2.14."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, literal_dict_keyword
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix, Severity
from torchup.core.facts import FACTS

_FACTS = FACTS["deprecated_arguments"]["torch.autograd.profiler.profile(with_modules=True)"]
PROFILERS = frozenset(_FACTS["classes"])
WARNING = _FACTS["warning"]
HELP = "drop it (it records nothing for eager models), or use `with_stack=True` to get nn.Module events"


def _off(value: ast.expr) -> bool:
    """A literal the profiler treats as false (`if with_modules:`): no warning."""
    return isinstance(value, ast.Constant) and not value.value


class ProfilerWithModules(Rule):
    change = Change.WARNS
    code = "TU172"
    name = "profiler-with-modules-deprecated"
    summary = "The profilers' `with_modules=True` warns in torch 2.14 (it only ever worked for TorchScript)."
    since = "2.14"
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    looks_for = LooksFor(keywords=("with_modules",))
    docs = RuleDocs(
        what="""
        Finds `with_modules=` given a value that may be true (`True`, a variable, an expression)
        to `torch.autograd.profiler.profile` and `torch.profiler.profile` (any import form; also
        a visible `**{"with_modules": ...}`). Not reported: `with_modules=False`, and
        `torch.autograd.profiler_legacy.profile`, which takes the parameter without a warning.
        """,
        why=f"""
        torch 2.14 deprecates the option. `torch.autograd.profiler.profile` warns when it is
        constructed, `torch.profiler.profile` when it starts (its `__enter__`/`start()`, which
        builds the autograd profiler):

            {WARNING}

        2.15 warns the same way.
        """,
        fix="""
        A literal `with_modules=True` is removed (unsafe: see below). For eager models it never
        recorded anything, so nothing is lost; to see `nn.Module` events in eager mode, pass
        `with_stack=True` instead (more overhead, and the tables change). A variable or
        expression is reported without a fix.
        """,
        fix_safety="""
        Unsafe. For eager models the option had no effect on the recorded events, but removing it
        changes what the profiler says about itself: `prof.with_modules` becomes False, and a
        trace exported by `torch.profiler.profile` loses its `"with_modules": "1"` metadata
        entry. And a TorchScript model profiled this way no longer gets its module hierarchy.
        """,
        wheels_vs_notes="""
        The release notes only say `with_modules` now emits a FutureWarning. The wheels say what
        it did ("only collects data for TorchScript models ... does nothing in eager mode"),
        that it warns only when true, and that `torch.profiler.profile` warns at start, not at
        construction. torch 2.13.0 took it silently.
        """,
    )
    examples = (
        Example(
            "the autograd profiler and torch.profiler",
            """
            import torch
            from torch.profiler import profile

            with torch.autograd.profiler.profile(with_modules=True) as prof:
                y = A @ A
            with profile(record_shapes=True, with_modules=True) as prof2:
                z = A @ A
            """,
            fixed="""
            import torch
            from torch.profiler import profile

            with torch.autograd.profiler.profile() as prof:
                y = A @ A
            with profile(record_shapes=True) as prof2:
                z = A @ A
            """,
            findings=2,
            unsafe=True,
            executable=False,
        ),
        Example(
            "a flag: reported without a fix",
            """
            import torch

            def trace(step, modules: bool):
                with torch.profiler.profile(with_modules=modules) as prof:
                    step()
                return prof
            """,
        ),
        Example(
            "not reported: False, and the legacy profiler",
            """
            import torch
            from torch.autograd import profiler_legacy

            with torch.profiler.profile(with_modules=False) as prof:
                y = A @ A
            with profiler_legacy.profile(with_modules=True) as prof2:
                z = A @ A
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for call, qualname in ctx.calls_to(PROFILERS):
            keyword = next((k for k in call.keywords if k.arg == "with_modules"), None)
            message = f"`{qualname}(with_modules=...)` warns in torch 2.14 (FutureWarning: deprecated)"
            if keyword is not None and not _off(keyword.value):
                fix = None
                if isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
                    removal = Edits(ctx.source).remove_argument(call, keyword)
                    if removal is not None:
                        fix = Fix("drop `with_modules=True`", Applicability.UNSAFE, (removal,))
                ctx.report(keyword, message, fix=fix, help=HELP)
                continue
            spread = literal_dict_keyword(call, "with_modules")
            if spread is not None and not _off(spread[2]):
                ctx.report(spread[1], message, help=HELP)


RULE = ProfilerWithModules()
