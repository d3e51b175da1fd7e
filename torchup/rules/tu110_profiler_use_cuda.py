"""TU110: the profilers' ``use_cuda`` parameter is gone in torch 2.14."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, as_condition, literal_bool, literal_dict_keyword
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix

AUTOGRAD_PROFILE = "torch.autograd.profiler.profile"
KINETO_PROFILE = frozenset({"torch.profiler.profile", "torch.profiler.profiler.profile"})
# Takes `use_device=` like the autograd profiler; its `use_cuda=` went to `list()` already in 2.13
# ("TypeError: list() takes no keyword arguments", run under 2.5.1 and 2.13.0).
EVENT_LIST = frozenset({"torch.autograd.profiler_util.EventList", "torch.autograd.profiler.EventList"})
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
        Finds `use_cuda=` passed to `torch.autograd.profiler.profile`, `torch.profiler.profile`
        and `torch.autograd.profiler_util.EventList` (a TypeError already in 2.13), in any import
        form; also a `"use_cuda"` key of a dict that reaches one of them through `**`: a literal
        `**{"use_cuda": ...}`, or a name the scope binds to such a dict (`kwargs = {} if new else
        {"use_cuda": False}`, `dict(use_cuda=...)`, `kwargs["use_cuda"] = ...`), reported at the
        key. Not reported: `torch.autograd.profiler_legacy.profile`, which still takes `use_cuda`
        in 2.14; Lightning's `PyTorchProfiler(use_cuda=...)`, which passes on only the arguments
        the installed profiler's signature takes; and any variable or parameter that is merely
        called `use_cuda`.
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
            "a dict that reaches the profiler through a name, reported at its key",
            """
            import torch
            new_torch = False
            kwargs = {} if new_torch else {"use_cuda": False}
            with torch.profiler.profile(**kwargs) as prof:
                y = A @ A
            """,
        ),
        Example(
            "EventList took use_device already in 2.13",
            """
            import torch
            from torch.autograd.profiler_util import EventList
            events = EventList([], use_cuda=False)
            """,
            fixed="""
            import torch
            from torch.autograd.profiler_util import EventList
            events = EventList([])
            """,
            versions=("2.0", "2.14"),
        ),
        Example(
            "a parameter and a dict of one's own called use_cuda",
            """
            import torch
            def train(model, use_cuda=True):
                options = {"use_cuda": use_cuda}
                return model, options
            """,
            findings=0,
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
        for call, qualname in ctx.calls_to(frozenset({AUTOGRAD_PROFILE, *KINETO_PROFILE, *EVENT_LIST})):
            keyword = _keyword(call, "use_cuda")
            by_device = qualname == AUTOGRAD_PROFILE or qualname in EVENT_LIST
            if keyword is not None:
                fix = (autograd_fix if by_device else kineto_fix)(ctx, call, keyword)
                replacement = 'use_device="cuda"' if by_device else \
                    "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"
                ctx.report(
                    keyword,
                    f"`{qualname}` no longer takes `use_cuda` {_when(qualname)}",
                    help=None if fix else f"use `{replacement}` instead",
                    fix=fix,
                )
                continue
            spread = literal_dict_keyword(call, "use_cuda")
            keys = [spread[1]] if spread is not None else _keys_spread_by_name(ctx, call)
            for key in keys:
                ctx.report(
                    key,
                    f"`{qualname}` no longer takes `use_cuda` {_when(qualname)}, even through `**`",
                    help='remove the "use_cuda" key; use "use_device": "cuda" (autograd profiler) or '
                    "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] (torch.profiler)",
                )


def _when(qualname: str) -> str:
    return "(TypeError already in torch 2.13)" if qualname in EVENT_LIST else "in torch 2.14 (TypeError)"


def _keys_spread_by_name(ctx: Context, call: ast.Call) -> list[ast.expr]:
    """The `"use_cuda"` keys of the dicts a `**kwargs` of ``call`` may hold, as the scope builds
    them: `kwargs = {} if new else {"use_cuda": False}`, `dict(use_cuda=...)`, and
    `kwargs["use_cuda"] = ...` (issue 22)."""
    found: list[ast.expr] = []
    for keyword in call.keywords:
        if keyword.arg is not None or not isinstance(keyword.value, ast.Name):
            continue
        name = keyword.value
        for binding in ctx.resolver.lookup_name(name).bindings:
            if binding.value is not None:
                found += _use_cuda_keys(binding.value)
        scope = ctx.resolver.scope_of(name)
        for node in ctx.walk(scope.node if scope.node is not None else None):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                            and target.value.id == name.id and _is_use_cuda(target.slice) \
                            and ctx.resolver.scope_of(target.value) is scope:
                        found.append(target.slice)
    return sorted(found, key=lambda key: (key.lineno, key.col_offset))


def _use_cuda_keys(value: ast.expr) -> list[ast.expr]:
    """The `"use_cuda"` keys of the dict literals (and `dict(use_cuda=...)` calls) ``value`` may be."""
    if isinstance(value, ast.Dict):
        return [key for key in value.keys if key is not None and _is_use_cuda(key)]
    if isinstance(value, ast.IfExp):
        return _use_cuda_keys(value.body) + _use_cuda_keys(value.orelse)
    if isinstance(value, ast.BoolOp):
        return [key for operand in value.values for key in _use_cuda_keys(operand)]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        return [keyword for keyword in value.keywords if keyword.arg == "use_cuda"]
    return []


def _is_use_cuda(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == "use_cuda"


RULE = ProfilerUseCuda()
