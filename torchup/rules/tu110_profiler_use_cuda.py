"""TU110: the profilers' ``use_cuda`` parameter is gone in torch 2.14."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, as_condition, literal_bool, literal_dict_keyword
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix

AUTOGRAD_PROFILE = "torch.autograd.profiler.profile"
KINETO_PROFILE = frozenset({"torch.profiler.profile", "torch.profiler.profiler.profile"})
ACTIVITY = "torch.profiler.ProfilerActivity"
ERROR = "TypeError: profile.__init__() got an unexpected keyword argument 'use_cuda'"


def _keyword(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def _spread(call: ast.Call) -> bool:
    """A ``**kwargs`` may hold ``use_device`` or ``activities``: no rewrite can be sure."""
    return any(keyword.arg is None for keyword in call.keywords)


def autograd_fix(ctx: Context, call: ast.Call, keyword: ast.keyword) -> Fix | None:
    """2.13 treated a truthy use_cuda exactly as use_device="cuda" (and ignored use_device)."""
    if _keyword(call, "use_device") is not None or _spread(call):
        return None
    edits = Edits(ctx.source)
    value = literal_bool(keyword.value)
    if value is False:
        removal = edits.remove_argument(call, keyword)
        return Fix("drop `use_cuda=False`", Applicability.SAFE, (removal,)) if removal else None
    q = ctx.quote(call)
    content = f"use_device={q}cuda{q}" if value else \
        f"use_device={q}cuda{q} if {as_condition(ctx.source, keyword.value)} else None"
    return Fix(f"use `{content}`", Applicability.SAFE, (edits.replace(keyword, content),))


def kineto_fix(ctx: Context, call: ast.Call, keyword: ast.keyword) -> Fix | None:
    if _spread(call):
        return None
    edits = Edits(ctx.source)
    if _keyword(call, "activities") is not None:
        # 2.13 computed an activity set from use_cuda and then discarded it: dropping is exact.
        removal = edits.remove_argument(call, keyword)
        # Dropping a call or other expression would also drop its side effects: unsafe then.
        plain = isinstance(keyword.value, (ast.Constant, ast.Name, ast.Attribute))
        applicability = Applicability.SAFE if plain else Applicability.UNSAFE
        return Fix("drop `use_cuda` (it had no effect next to `activities=`)", applicability,
                   (removal,)) if removal else None
    reference = ctx.symbol_reference(ACTIVITY, call)
    if reference is None:
        return None
    name, imports = reference
    cpu_cuda = f"[{name}.CPU, {name}.CUDA]"
    cpu = f"[{name}.CPU]"
    value = literal_bool(keyword.value)
    if value is True:
        content, applicability = f"activities={cpu_cuda}", Applicability.SAFE
    elif value is False:
        content, applicability = f"activities={cpu}", Applicability.UNSAFE
    else:
        condition = as_condition(ctx.source, keyword.value)
        content, applicability = f"activities={cpu_cuda} if {condition} else {cpu}", Applicability.UNSAFE
    return Fix(f"use `{content}`", applicability, (edits.replace(keyword, content),), imports)


class ProfilerUseCuda(Rule):
    code = "TU110"
    name = "profiler-use-cuda-removed"
    summary = "The profilers' `use_cuda=` raises TypeError in torch 2.14; use `use_device=` / `activities=`."
    fix_availability = FixAvailability.SOMETIMES
    looks_for = LooksFor(keywords=("use_cuda",))
    docs = RuleDocs(
        what="""
        Finds `use_cuda=` passed to `torch.autograd.profiler.profile` and `torch.profiler.profile`
        (any import form; also a visible `**{"use_cuda": ...}`). Not reported:
        `torch.autograd.profiler_legacy.profile`, which still takes `use_cuda` in 2.14, and any
        variable or parameter that is merely called `use_cuda`.
        """,
        why=f"""
        torch 2.14 removed the parameter from both profilers:

            {ERROR}
        """,
        fix="""
        `torch.autograd.profiler.profile`: `use_cuda=True` -> `use_device="cuda"`; `use_cuda=False`
        is dropped; an expression `x` -> `use_device="cuda" if x else None`.
        `torch.profiler.profile`: `use_cuda=True` -> `activities=[ProfilerActivity.CPU,
        ProfilerActivity.CUDA]`; `False` -> `activities=[ProfilerActivity.CPU]`; an expression ->
        the conditional of both. `ProfilerActivity` is imported from `torch.profiler` when the
        file does not have it. Next to an explicit `activities=`, `use_cuda` is dropped.
        """,
        fix_safety="""
        Safe for the autograd profiler: 2.13's code set `use_device = "cuda"` for a truthy
        `use_cuda` and nothing else. For `torch.profiler.profile`, `use_cuda=True` -> CPU+CUDA is
        safe (the default activity set on a CUDA machine, the only place CUDA can be recorded);
        `False` and expressions are unsafe, see below.
        """,
        wheels_vs_notes="""
        The release notes say `use_cuda=False` removed CUDA from `torch.profiler.profile`'s
        activities. In the 2.13.0 wheel it did not: `profile.__init__` built an activity set from
        `use_cuda` and then passed the original `activities` on, so `use_cuda` only warned. On a
        CUDA machine, `use_cuda=False` therefore still recorded CUDA activity in 2.13; the fix
        `activities=[ProfilerActivity.CPU]` does what the code asked for, which changes the
        profile. That is why those fixes are unsafe. The `prof.use_cuda` attribute is gone too.
        """,
    )
    examples = (
        Example(
            "autograd profiler",
            """
            import torch
            with torch.autograd.profiler.profile(use_cuda=True) as prof:
                y = A @ A
            """,
            fixed="""
            import torch
            with torch.autograd.profiler.profile(use_device="cuda") as prof:
                y = A @ A
            """,
        ),
        Example(
            "a module alias, and a flag",
            """
            import torch
            import torch.autograd.profiler as profiler
            gpu = torch.cuda.is_available()
            with profiler.profile(record_shapes=True, use_cuda=gpu) as prof:
                y = A @ A
            with profiler.profile(use_cuda=False, record_shapes=True) as prof2:
                z = A + A
            """,
            fixed="""
            import torch
            import torch.autograd.profiler as profiler
            gpu = torch.cuda.is_available()
            with profiler.profile(record_shapes=True, use_device="cuda" if gpu else None) as prof:
                y = A @ A
            with profiler.profile(record_shapes=True) as prof2:
                z = A + A
            """,
            findings=2,
        ),
        Example(
            "torch.profiler: the import is added",
            """
            import torch
            from torch.profiler import profile
            with profile(use_cuda=True, record_shapes=True) as prof:
                y = A @ A
            """,
            fixed="""
            import torch
            from torch.profiler import profile
            from torch.profiler import ProfilerActivity
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
                y = A @ A
            """,
        ),
        Example(
            "torch.profiler with use_cuda=False: unsafe",
            """
            import torch
            with torch.profiler.profile(use_cuda=False) as prof:
                y = A @ A
            """,
            fixed="""
            import torch
            from torch.profiler import ProfilerActivity
            with torch.profiler.profile(activities=[ProfilerActivity.CPU]) as prof:
                y = A @ A
            """,
            unsafe=True,
        ),
        Example(
            "a dict of options",
            """
            import torch
            with torch.autograd.profiler.profile(**{"use_cuda": True}) as prof:
                y = A @ A
            """,
        ),
        Example(
            "not reported: the legacy profiler and a variable",
            """
            import torch
            from torch.autograd import profiler_legacy
            use_cuda = torch.cuda.is_available()
            with profiler_legacy.profile(use_cuda=use_cuda) as prof:
                y = A @ A
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for call, qualname in ctx.calls_to(frozenset({AUTOGRAD_PROFILE, *KINETO_PROFILE})):
            keyword = _keyword(call, "use_cuda")
            if keyword is not None:
                build = autograd_fix if qualname == AUTOGRAD_PROFILE else kineto_fix
                fix = build(ctx, call, keyword)
                replacement = 'use_device="cuda"' if qualname == AUTOGRAD_PROFILE else \
                    "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"
                ctx.report(
                    keyword,
                    f"`{qualname}` no longer takes `use_cuda` in torch 2.14 (TypeError)",
                    help=None if fix else f"use `{replacement}` instead",
                    fix=fix,
                )
                continue
            spread = literal_dict_keyword(call, "use_cuda")
            if spread is not None:
                ctx.report(
                    spread[1],
                    f"`{qualname}` no longer takes `use_cuda` in torch 2.14 (TypeError), even through `**`",
                    help='remove the "use_cuda" key; use "use_device": "cuda" (autograd profiler) or '
                    "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] (torch.profiler)",
                )


RULE = ProfilerUseCuda()
