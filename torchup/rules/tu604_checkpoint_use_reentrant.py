"""TU604: ``torch.utils.checkpoint`` without ``use_reentrant=`` warns (since torch 2.1)."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Severity
from torchup.core.lexing import Spans
from torchup.prefilter.calls import every_call_passes
from torchup.rules.tu601_torch_load_weights_only import Given, given, keyword_fix, uses

CHECKPOINT = "torch.utils.checkpoint.checkpoint"
SEQUENTIAL = "torch.utils.checkpoint.checkpoint_sequential"
# checkpoint(function, *args, use_reentrant=None, ...): keyword-only;
# checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs): the 4th.
PARAMETERS = {CHECKPOINT: {"use_reentrant": None}, SEQUENTIAL: {"use_reentrant": 3}}
WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants."
)
HELP = (
    "consider `use_reentrant=False`, which PyTorch recommends (it supports keyword arguments, inputs that need no "
    "gradient, and `torch.autograd.grad`), after checking that training behaves the same"
)


class CheckpointUseReentrant(Rule):
    change = Change.WARNS
    code = "TU604"
    name = "checkpoint-use-reentrant"
    summary = "`torch.utils.checkpoint` without `use_reentrant=` warns (since torch 2.1); pass it explicitly."
    since = "2.1"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(names=(CHECKPOINT, SEQUENTIAL))
    docs = RuleDocs(
        what="""
        Finds calls of `torch.utils.checkpoint.checkpoint` and `checkpoint_sequential` (any
        import form: `from torch.utils.checkpoint import checkpoint`, `import
        torch.utils.checkpoint as cp`, ...) that do not pass `use_reentrant` (by keyword, as
        `checkpoint_sequential`'s fourth positional argument, or as a key of a visible `**{...}`
        dict); a written `use_reentrant=None` is the default and is reported too. Also
        `functools.partial(checkpoint, ...)` without it, and `checkpoint` passed to another call
        (reported without a fix: its calls cannot be seen). 2.14's decorator form,
        `checkpoint(preserve_rng_state=False)(fn)`, is a call like the others.

        Not reported: calls with `**options` (or, for `checkpoint_sequential`, `*args`) whose
        content is unknown, `deepspeed.checkpointing.checkpoint`, a project's own `checkpoint`,
        the module `torch.utils.checkpoint` itself, and `checkpoint` saved in a variable.
        """,
        why=f"""
        Since torch 2.1 `use_reentrant` defaults to None, and None means True after a warning
        (torch/utils/checkpoint.py in the 2.1.2 wheel: `if use_reentrant is None: warnings.warn(...);
        use_reentrant = True`; 2.0.1 had `use_reentrant: bool = True` and no warning).
        `checkpoint_sequential` followed in 2.2 (2.1.2 still had `use_reentrant=True` there).
        The warning in the 2.13.0 and 2.14.1 wheels (`_checkpoint_impl`, 2.14.1 line 635):

            UserWarning: {WARNING}

        2.9 did not raise: the 2.13.0 and 2.14.1 wheels still warn with that text and go on
        with `use_reentrant = True`; 2.15.0 says "In a future release, calling checkpoint
        without use_reentrant will raise an exception" and still only warns.
        """,
        fix="""
        Adds `use_reentrant=True` as the call's (or the partial's) last argument; a written
        `use_reentrant=None` becomes `True`. This is what the default has meant in every release
        since 2.1, so the checkpointing stays the reentrant one, without the warning. The rule's
        message recommends considering `use_reentrant=False`, PyTorch's recommendation; torchup
        does not make that change, since it changes how checkpointing works (recomputation,
        keyword arguments, inputs without gradients).
        """,
        fix_safety="""
        Safe: in each wheel from 2.1.2 to 2.15.0 `use_reentrant=None` is turned into True right
        after the warning, and nothing else reads whether it was given (checked in the
        2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.6.0, 2.13.0, 2.14.1 and 2.15.0 sources; the example below
        runs the original under 2.0 and the fix under 2.14 and compares results, gradients and
        warnings). Every 2.x release takes the keyword (2.0.1: `use_reentrant: bool = True`), so
        the fixed code runs on all of them.
        """,
        wheels_vs_notes="""
        2.1's warning said "The default value of use_reentrant will be updated to be False in the
        future"; 2.3 changed it to announce an exception instead, and no release changed the
        default (2.15.0 still means True) — an explicit `use_reentrant=True` is safe either way.
        The warning has promised an exception for years, moving the date each time: "In version
        2.4" (2.3.1, 2.4.1), "In version 2.5" (2.5.1 to 2.8.0), "Starting in PyTorch 2.9" (2.9.0 to
        2.14.1; `checkpoint_sequential`: "In version 2.9"), "In a future release" (2.15.0). No
        release raised: 2.14.1 and 2.15.0 still warn and go on with True. The rule therefore
        reports a warning, not an error.
        """,
    )
    examples = (
        Example(
            "checkpoint and checkpoint_sequential",
            """
            import warnings
            import torch
            from torch.utils.checkpoint import checkpoint, checkpoint_sequential

            def double(t):
                return t * 2 + 1

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                y = checkpoint(double, A)
                z = checkpoint_sequential([double, double, double], 2, A)
            warned = sum("use_reentrant" in str(w.message) for w in caught)
            """,
            fixed="""
            import warnings
            import torch
            from torch.utils.checkpoint import checkpoint, checkpoint_sequential

            def double(t):
                return t * 2 + 1

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                y = checkpoint(double, A, use_reentrant=True)
                z = checkpoint_sequential([double, double, double], 2, A, use_reentrant=True)
            warned = sum("use_reentrant" in str(w.message) for w in caught)
            """,
            findings=2,
            versions=("2.0", "2.14"),  # 2.0 did not warn yet
        ),
        Example(
            "a module alias in a model, and a partial",
            """
            import functools
            import torch
            import torch.utils.checkpoint as cp

            class Block(torch.nn.Module):
                def forward(self, x):
                    return cp.checkpoint(self.inner, x, preserve_rng_state=False)

            run = functools.partial(cp.checkpoint, determinism_check="none")
            """,
            fixed="""
            import functools
            import torch
            import torch.utils.checkpoint as cp

            class Block(torch.nn.Module):
                def forward(self, x):
                    return cp.checkpoint(self.inner, x, preserve_rng_state=False, use_reentrant=True)

            run = functools.partial(cp.checkpoint, determinism_check="none", use_reentrant=True)
            """,
            findings=2,
            executable=False,  # defines a class only
        ),
        Example(
            "not reported: explicit, unknown options, other checkpoints",
            """
            import deepspeed
            import torch
            from torch.utils import checkpoint as checkpoint_module

            def checkpoint(fn, *args):
                return fn(*args)

            def forward(block, x, options):
                a = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
                b = torch.utils.checkpoint.checkpoint_sequential(block, 2, x, False)
                c = torch.utils.checkpoint.checkpoint(block, x, **options)
                d = deepspeed.checkpointing.checkpoint(block, x)
                e = checkpoint(block, x)
                return a, b, c, d, e, checkpoint_module
            """,
            findings=0,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        return super().may_report(spans) and not every_call_passes(
            spans, self.triggers, frozenset({"use_reentrant"}), self.name_requirements
        )

    def check(self, ctx: Context) -> None:
        # `checkpoint_wrapper(m, checkpoint_impl=..., checkpoint_fn=checkpoint)` passes `use_reentrant`
        # itself (from its `checkpoint_impl`): the function handed over is no call without it.
        wrapped: set[int] | None = None  # (found when first needed: most files pass nothing on)
        for use in uses(ctx, frozenset(PARAMETERS)):
            short = use.qualname.rpartition(".")[2]
            if use.call is None and wrapped is None:
                wrapped = {
                    id(node.value) for node in ctx.walk()
                    if isinstance(node, ast.keyword) and node.arg == "checkpoint_fn"
                }
            if use.call is None and wrapped is not None and id(use.node) in wrapped:
                continue
            if use.call is None:
                ctx.report(
                    use.node,
                    f"`{short}` passed on: calls made through it without `use_reentrant=` warn (the default None "
                    "means True, with a warning that it must be passed explicitly; it says 2.9 would raise, but the "
                    "wheels up to 2.15 still only warn)",
                    help=f"wrap it as `functools.partial({short}, use_reentrant=True)` (the current default); " + HELP,
                )
                continue
            if given(use.call, PARAMETERS[use.qualname], use.skip, none_is_default=True) is not Given.NO:
                continue
            fix = keyword_fix(ctx, use.call, "use_reentrant", "True",
                              "pass `use_reentrant=True` (what the default means)", Applicability.SAFE,
                              PARAMETERS[use.qualname]["use_reentrant"], use.skip)
            through = " through `functools.partial`" if use.skip else ""
            ctx.report(
                use.node,
                f"`{short}`{through} without `use_reentrant=` warns that it must be passed explicitly "
                "(the default None means True); the warning says 2.9 would raise, but the wheels up to 2.15 "
                "still only warn",
                help=HELP,
                fix=fix,
            )


RULE = CheckpointUseReentrant()
