"""TU609: the LR schedulers' ``verbose`` parameter, deprecated in torch 2.2, is gone since 2.7 (TypeError)."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, is_super_init, literal_bool, literal_dict_keyword
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix

MODULE = "torch.optim.lr_scheduler"
# The position of `verbose` among each scheduler's `__init__` parameters (after `self`), always the
# last one. Generated from the torch 2.6.0 wheel, the last release with the parameter: the classes of
# torch/optim/lr_scheduler.py's `__all__` whose `__init__` has `verbose` (ChainedScheduler never had
# it), plus `_LRScheduler`, the old name that inherits LRScheduler's `__init__`. Every wheel from
# 2.0.1 to 2.6.0 gives the same positions.
VERBOSE_POSITION = {
    "LambdaLR": 3,
    "MultiplicativeLR": 3,
    "StepLR": 4,
    "MultiStepLR": 4,
    "ConstantLR": 4,
    "LinearLR": 5,
    "ExponentialLR": 3,
    "SequentialLR": 4,
    "CosineAnnealingLR": 4,
    "ReduceLROnPlateau": 9,
    "CyclicLR": 13,
    "CosineAnnealingWarmRestarts": 5,
    "OneCycleLR": 14,
    "PolynomialLR": 4,
    "LRScheduler": 2,
    "_LRScheduler": 2,
}
SCHEDULERS = {f"{MODULE}.{name}": position for name, position in VERBOSE_POSITION.items()}
ERROR = "TypeError: StepLR.__init__() got an unexpected keyword argument 'verbose'"
WARNING = "UserWarning: The verbose parameter is deprecated. Please use get_last_lr() to access the learning rate."
HELP_PRINT = "print `scheduler.get_last_lr()` after `scheduler.step()` where you want to see the rate"


def _verbose(call: ast.Call, position: int) -> ast.AST | None:
    """The ``verbose`` argument of a scheduler's construction: a keyword, or the positional argument
    at its place (always the last parameter)."""
    keyword = next((k for k in call.keywords if k.arg == "verbose"), None)
    if keyword is not None:
        return keyword
    if len(call.args) == position + 1 and not any(isinstance(a, ast.Starred) for a in call.args):
        return call.args[position]
    return None


def _value(node: ast.AST) -> ast.expr:
    return node.value if isinstance(node, ast.keyword) else node  # type: ignore[return-value]


class LrSchedulerVerbose(Rule):
    change = Change.RAISES
    code = "TU609"
    name = "lr-scheduler-verbose"
    summary = "LR schedulers' `verbose=` warns since torch 2.2 and raises TypeError since 2.7; remove it."
    since = "2.7"
    fix_availability = FixAvailability.SOMETIMES
    # Every finding needs a scheduler spelled in the file (the call, or the base of a subclass):
    # `verbose`, a keyword of countless functions, only adds lines to read (``focus_lines``).
    looks_for = LooksFor(names=tuple(sorted(SCHEDULERS)))
    docs = RuleDocs(
        what="""
        Finds `verbose` passed to a learning-rate scheduler of `torch.optim.lr_scheduler`
        (`StepLR`, `ReduceLROnPlateau`, `OneCycleLR`, ... every class that had the parameter, and
        the base classes `LRScheduler` / `_LRScheduler`), by keyword or in its position (the last
        parameter: `StepLR(opt, 30, 0.1, -1, True)`), any import form; also in a `**{"verbose": ...}`
        literal. In a class that derives from one of them, `super().__init__(..., verbose=...)` (and
        `super(Cls, self).__init__(...)`) is reported too. Not reported: `ChainedScheduler` (it never
        had the parameter), other libraries' schedulers, and any other function's `verbose`.
        """,
        why=f"""
        torch 2.2 deprecated the parameter: every scheduler warned when it was given, and it no
        longer printed anything (2.2.2 torch/optim/lr_scheduler.py:25-31,
        `_check_verbose_deprecated_warning`; `step()` no longer calls `print_lr`):

            {WARNING}

        torch 2.7 removed it from every `__init__` (2.7.0 has no `verbose` in lr_scheduler.py; nor
        have 2.13.0, 2.14.1 and 2.15.0), so any `verbose` argument, even `False`, fails:

            {ERROR}
        """,
        fix=f"""
        Removes the argument (keyword or positional). With `verbose=True` or an expression, the
        removal is offered as an unsafe fix: {HELP_PRINT}. A `**` dict that holds the key is
        reported without a fix.
        """,
        fix_safety="""
        Removing `verbose=False` is safe: False was the behaviour without the argument in every
        release (2.0-2.1: no printing; 2.2-2.6: the default `"deprecated"` became False). Removing
        `True` or an expression is unsafe: torch 2.0 and 2.1 printed the learning rate at each
        step with it (2.2 to 2.6 printed nothing already), and an expression may have side
        effects. The scheduler's `verbose` attribute is gone since 2.7 as well; code that reads
        `scheduler.verbose` needs a hand edit.
        """,
        wheels_vs_notes="""
        The 2.2 release notes list the deprecation; PR #147301, which removed it, says 2.7.0. The
        wheels agree: 2.6.0 still accepts (and warns about) `verbose`, 2.7.0 has no such
        parameter. The wheels add that since 2.2 `verbose=True` printed nothing at all: the
        prints stopped with the deprecation, not with the removal.
        """,
    )
    examples = (
        Example(
            "verbose=False goes",
            """
            import torch
            w = torch.zeros(2, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5, verbose=False)
            opt.step()
            sched.step()
            lr = torch.tensor(sched.get_last_lr())
            """,
            fixed="""
            import torch
            w = torch.zeros(2, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
            opt.step()
            sched.step()
            lr = torch.tensor(sched.get_last_lr())
            """,
            versions=("2.6", "2.14"),
        ),
        Example(
            "positional, and a from-import",
            """
            import torch
            from torch.optim.lr_scheduler import ReduceLROnPlateau
            w = torch.zeros(2, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            sched = ReduceLROnPlateau(opt, "min", 0.5, 0, 1e-4, "rel", 0, 0, 1e-8, False)
            for loss in (1.0, 2.0, 3.0):
                sched.step(loss)
            lr = torch.tensor(sched.get_last_lr())
            """,
            fixed="""
            import torch
            from torch.optim.lr_scheduler import ReduceLROnPlateau
            w = torch.zeros(2, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            sched = ReduceLROnPlateau(opt, "min", 0.5, 0, 1e-4, "rel", 0, 0, 1e-8)
            for loss in (1.0, 2.0, 3.0):
                sched.step(loss)
            lr = torch.tensor(sched.get_last_lr())
            """,
            versions=("2.6", "2.14"),
        ),
        Example(
            "verbose=True: unsafe (2.0 and 2.1 printed the rate)",
            """
            import torch
            from torch.optim import lr_scheduler
            w = torch.zeros(2, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            sched = lr_scheduler.CosineAnnealingLR(opt, T_max=10, verbose=True)
            opt.step()
            sched.step()
            lr = torch.tensor(sched.get_last_lr())
            """,
            fixed="""
            import torch
            from torch.optim import lr_scheduler
            w = torch.zeros(2, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            sched = lr_scheduler.CosineAnnealingLR(opt, T_max=10)
            opt.step()
            sched.step()
            lr = torch.tensor(sched.get_last_lr())
            """,
            unsafe=True,
            versions=("2.6", "2.14"),
        ),
        Example(
            "a subclass passes it on",
            """
            import torch
            from torch.optim.lr_scheduler import LRScheduler

            class Warmup(LRScheduler):
                def __init__(self, optimizer, steps, last_epoch=-1, verbose=False):
                    self.steps = steps
                    super().__init__(optimizer, last_epoch, verbose)

                def get_lr(self):
                    return [base * min(1.0, (self.last_epoch + 1) / self.steps) for base in self.base_lrs]

            w = torch.zeros(2, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            sched = Warmup(opt, 4)
            opt.step()
            sched.step()
            lr = torch.tensor(sched.get_last_lr())
            """,
            fixed="""
            import torch
            from torch.optim.lr_scheduler import LRScheduler

            class Warmup(LRScheduler):
                def __init__(self, optimizer, steps, last_epoch=-1, verbose=False):
                    self.steps = steps
                    super().__init__(optimizer, last_epoch)

                def get_lr(self):
                    return [base * min(1.0, (self.last_epoch + 1) / self.steps) for base in self.base_lrs]

            w = torch.zeros(2, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            sched = Warmup(opt, 4)
            opt.step()
            sched.step()
            lr = torch.tensor(sched.get_last_lr())
            """,
            unsafe=True,
            versions=("2.6", "2.14"),
        ),
        Example(
            "not reported: ChainedScheduler, other functions' verbose",
            """
            import torch
            from torch.optim.lr_scheduler import ChainedScheduler, ExponentialLR
            w = torch.zeros(2, requires_grad=True)
            opt = torch.optim.SGD([w], lr=0.1)
            chain = ChainedScheduler([ExponentialLR(opt, gamma=0.9)])
            report = dict(verbose=True)
            """,
            findings=0,
        ),
    )

    def focus_lines(self, text: str) -> list[int]:
        # A subclass's `super().__init__(...)` spells no scheduler name, nor does a `**{"verbose":
        # ...}` built apart: keep the `__init__` bodies and the `verbose` lines of a file that names
        # a scheduler (over-inclusive, and cheap: such files are few).
        if not any(name in text for name in VERBOSE_POSITION):
            return []
        return [number for number, line in enumerate(text.splitlines(), 1) if "__init__" in line or "verbose" in line]

    def check(self, ctx: Context) -> None:
        for call, qualname in ctx.calls_to(frozenset(SCHEDULERS)):
            self._check_call(ctx, call, qualname, SCHEDULERS[qualname])
        self._check_subclasses(ctx)

    def _check_call(self, ctx: Context, call: ast.Call, qualname: str, position: int) -> None:
        name = qualname.rpartition(".")[2]
        argument = _verbose(call, position)
        if argument is None:
            spread = literal_dict_keyword(call, "verbose")
            if spread is not None:
                ctx.report(
                    spread[1],
                    f"`{name}` no longer takes `verbose` (TypeError), even through `**`",
                    help='remove the "verbose" key; ' + HELP_PRINT,
                )
            return
        value = literal_bool(_value(argument))
        removal = Edits(ctx.source).remove_argument(call, argument)
        fix = None
        if removal is not None:
            safe = value is False
            fix = Fix(
                "remove `verbose=False` (the default)" if safe else "remove `verbose` (it no longer prints anything)",
                Applicability.SAFE if safe else Applicability.UNSAFE,
                (removal,),
            )
        ctx.report(
            argument,
            f"`{name}` no longer takes `verbose` (TypeError; deprecated in 2.2, it had stopped printing then)",
            help=None if value is False else HELP_PRINT,
            fix=fix,
        )

    def _check_subclasses(self, ctx: Context) -> None:
        """``super().__init__(..., verbose)`` in the classes of the file derived from a scheduler."""
        for cls in ctx.walk():
            if not isinstance(cls, ast.ClassDef):
                continue
            positions = [SCHEDULERS[q] for q in map(ctx.qualified_name, cls.bases) if q in SCHEDULERS]
            if len(positions) != 1:
                continue
            for method in cls.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for call in ast.walk(method):
                    if isinstance(call, ast.Call) and is_super_init(call):
                        base = ctx.qualified_name(next(b for b in cls.bases if ctx.qualified_name(b) in SCHEDULERS))
                        assert base is not None
                        self._check_call(ctx, call, base, positions[0])


RULE = LrSchedulerVerbose()
