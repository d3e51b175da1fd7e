"""TU602: ``torch.cuda.amp`` and ``torch.cpu.amp`` (autocast, GradScaler, custom_fwd/bwd) warn since
torch 2.4; ``torch.amp`` takes the device as an argument."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, bind_call
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Edit, Fix, ImportRequest, Severity
from torchup.rules._arguments import append_argument, call_items, from_imports


@dataclass(frozen=True)
class Old:
    """A deprecated device-specific name: what it is (its name in `torch.amp`) and its device."""

    kind: str  # "autocast", "GradScaler", "custom_fwd" or "custom_bwd"
    device: str  # "cuda" or "cpu"


# Each public name and the module that defines it (torch/{cuda,cpu}/amp/__init__.py re-exports them).
OLD: dict[str, Old] = {
    f"torch.{device}.amp.{path}{kind}": Old(kind, device)
    for device, kinds in (("cuda", ("autocast", "GradScaler", "custom_fwd", "custom_bwd")),
                          ("cpu", ("autocast", "GradScaler")))
    for kind in kinds
    for path in ("", "grad_scaler." if kind == "GradScaler" else "autocast_mode.")
}
NAMES = frozenset(OLD)
# The deprecated modules themselves, as values: `from torch.cuda import amp`, `return torch.cuda.amp`,
# `getattr(torch.cuda.amp, "autocast")`. Reported without a fix (their uses get theirs).
AMP_MODULES = frozenset({"torch.cuda.amp", "torch.cpu.amp"})
# What the old autocast classes pass as `dtype` when none is given (their __init__ defaults);
# torch.amp.autocast's default is None: the current autocast dtype of the device instead.
DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}
AUTOCAST_PARAMETERS = ["enabled", "dtype", "cache_enabled"]  # torch.{cuda,cpu}.amp.autocast.__init__
# The warning each old name gives (2.14.1: torch/cuda/amp/autocast_mode.py:13, 85, 100;
# torch/cuda/amp/grad_scaler.py:18; torch/cpu/amp/autocast_mode.py:12; torch/cpu/amp/grad_scaler.py:15).
WARNINGS = {
    "autocast": "`torch.{device}.amp.autocast(args...)` is deprecated. "
                "Please use `torch.amp.autocast('{device}', args...)` instead.",
    "GradScaler": "`torch.{device}.amp.GradScaler(args...)` is deprecated. "
                  "Please use `torch.amp.GradScaler('{device}', args...)` instead.",
    "custom_fwd": "`torch.{device}.amp.custom_fwd(args...)` is deprecated. "
                  "Please use `torch.amp.custom_fwd(args..., device_type='{device}')` instead.",
    "custom_bwd": "`torch.{device}.amp.custom_bwd(args...)` is deprecated. "
                  "Please use `torch.amp.custom_bwd(args..., device_type='{device}')` instead.",
}


def public_name(old: Old) -> str:
    return f"torch.{old.device}.amp.{old.kind}"


def new_form(old: Old, quote: str = '"') -> str:
    """How the replacement is called: `torch.amp.autocast("cuda", ...)`."""
    device = f"{quote}{old.device}{quote}"
    if old.kind in ("custom_fwd", "custom_bwd"):
        return f"torch.amp.{old.kind}(..., device_type={device})"
    return f"torch.amp.{old.kind}({device}, ...)"


def root_name(node: ast.expr) -> ast.Name | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node if isinstance(node, ast.Name) else None


Target = tuple[Edit, str, tuple[ImportRequest, ...], tuple[int, ...]]


def retarget(ctx: Context, node: ast.expr, kind: str) -> Target | None:
    """The edit that makes ``node`` (the old name, as written) name ``torch.amp.<kind>``, the new
    text, the imports it needs and the names it stops using (a from-import left unused is dropped)."""
    reference = ctx.module_reference("torch.amp", node)
    if reference is None:
        return None  # `torch` is shadowed here
    module, imports = reference
    text = f"{module}.{kind}"
    old_root = root_name(node)
    released = (id(old_root),) if old_root is not None and old_root.id != module.partition(".")[0] else ()
    return Edits(ctx.source).replace(node, text), text, imports, released


def first_argument(ctx: Context, call: ast.Call, text: str) -> Edit | None:
    """Insert ``text`` as the call's first argument: before the first one, on its own line when
    the arguments start on a line of their own (`autocast(\n    enabled=x)`)."""
    items = call_items(call)
    if not items:
        open_at = Edits(ctx.source).open_paren_after(call.func, ctx.source.node_range(call)[1])
        return None if open_at is None else Edit(open_at, open_at, text)
    first = items[0]
    if isinstance(first, ast.keyword):
        start = ctx.source.node_range(first)[0]
    else:
        start = Edits(ctx.source).argument_range(call, first)[0]
    line_start = ctx.source.text.rfind("\n", 0, start) + 1
    indent = ctx.source.text[line_start:start]
    if indent.strip() == "" and line_start > ctx.source.node_range(call.func)[1]:
        return Edit(start, start, f"{text},{ctx.source.newline}{indent}")
    return Edit(start, start, f"{text}, ")


def merged(edits: list[Edit]) -> tuple[Edit, ...]:
    """One edit per insertion point, contents in list order (the fixer orders equal offsets by chance)."""
    out: list[Edit] = []
    for edit in edits:
        previous = out[-1] if out else None
        if previous is not None and edit.start == edit.end == previous.start == previous.end:
            out[-1] = Edit(previous.start, previous.end, previous.content + edit.content)
        else:
            out.append(edit)
    return tuple(out)


class _Places:
    """Which expressions are decorators or base classes (looked up once a file has a reference)."""

    def __init__(self, ctx: Context) -> None:
        self.decorators: set[int] = set()
        self.bases: set[int] = set()
        for node in ctx.walk():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.decorators.update(id(d) for d in node.decorator_list)
            if isinstance(node, ast.ClassDef):
                self.bases.update(id(b) for b in node.bases)


class DeviceSpecificAmp(Rule):
    change = Change.WARNS
    code = "TU602"
    name = "device-specific-amp"
    summary = (
        "`torch.cuda.amp` / `torch.cpu.amp` autocast, GradScaler, custom_fwd and custom_bwd warn since torch 2.4; "
        "use `torch.amp` with the device."
    )
    since = "2.4"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SOMETIMES
    looks_for = LooksFor(names=tuple(sorted(NAMES | AMP_MODULES)))
    docs = RuleDocs(
        what="""
        Finds every reference to `torch.cuda.amp.autocast`, `torch.cuda.amp.GradScaler`,
        `torch.cuda.amp.custom_fwd`, `torch.cuda.amp.custom_bwd`, `torch.cpu.amp.autocast` and
        `torch.cpu.amp.GradScaler` (also through their modules `autocast_mode` and `grad_scaler`),
        through any import form (`from torch.cuda.amp import autocast`, `from torch.cuda import
        amp`, `import torch.cuda.amp as amp`): calls and `with` statements, decorators (bare
        `@custom_fwd` too), base classes, the `from` import itself, and the name passed on or
        used in `isinstance` checks and annotations. Not reported: `torch.amp.autocast`,
        `torch.autocast`, `torch.amp.GradScaler`, a project's own `autocast`, `apex.amp`.
        """,
        why=f"""
        torch 2.4 made the device-specific spellings wrappers of `torch.amp` that warn when
        called (autocast, from 2.10, also when subclassed):

            FutureWarning: {WARNINGS['autocast'].format(device='cuda')}
            FutureWarning: {WARNINGS['GradScaler'].format(device='cuda')}
            FutureWarning: {WARNINGS['custom_fwd'].format(device='cuda')}
            FutureWarning: {WARNINGS['custom_bwd'].format(device='cuda')}

        and the same for `torch.cpu.amp.autocast` and `torch.cpu.amp.GradScaler` with 'cpu'
        (2.14.1: torch/cuda/amp/autocast_mode.py:13, 85, 100, torch/cuda/amp/grad_scaler.py:18,
        torch/cpu/amp/autocast_mode.py:12, torch/cpu/amp/grad_scaler.py:15; 2.15.0 unchanged).
        """,
        fix="""
        Calls: `torch.cuda.amp.autocast(enabled=x, dtype=d)` -> `torch.amp.autocast("cuda",
        enabled=x, dtype=d)`; positional arguments become keywords (the old order was `enabled,
        dtype, cache_enabled`, the new one is `device_type, dtype, enabled, cache_enabled`); a
        call that gives no `dtype` gets the old default, `dtype=torch.float16` (cuda) or
        `dtype=torch.bfloat16` (cpu). `torch.cuda.amp.GradScaler(...)` ->
        `torch.amp.GradScaler("cuda", ...)` (the device goes first, the arguments stay).
        `torch.cuda.amp.custom_fwd(...)` -> `torch.amp.custom_fwd(..., device_type="cuda")`, the
        same for `custom_bwd`; a bare `@custom_fwd` / `@custom_bwd` decorator becomes
        `@torch.amp.custom_fwd(device_type="cuda")`. A name from `from torch.cuda.amp import
        autocast` becomes `torch.amp.autocast` (`import torch` added if missing), and the import
        is removed once no use is left. No fix: base classes (a subclass's `super().__init__`
        takes the old arguments), the name passed on or checked with `isinstance`, autocast
        calls with `*args`, or with `**kwargs` and no `dtype`.
        """,
        fix_safety="""
        Safe: in every release from 2.4.1 to 2.15.0 the old names only forward to `torch.amp`:
        `autocast.__init__(enabled=True, dtype=torch.float16, cache_enabled=True)` calls
        `super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)`
        (bfloat16 and "cpu" for torch.cpu.amp); `GradScaler.__init__` passes its five arguments,
        same names and defaults, to `torch.amp.GradScaler("cuda", ...)`; `custom_fwd(fwd=None, *,
        cast_inputs=None)` is `functools.partial(torch.amp.custom_fwd,
        device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)` and `custom_bwd(bwd)` likewise.
        The explicit dtype matters: `torch.amp.autocast("cpu")` without one takes the current
        autocast dtype, so inside `torch.autocast("cpu", dtype=torch.float16)` (or after
        `torch.set_autocast_dtype`) it computes in float16 where `torch.cpu.amp.autocast()`
        computed in bfloat16 (run on 2.13.0 and 2.14.1). `cache_enabled` is left as written: the
        new default follows `torch.is_autocast_cache_enabled()` where the old forced True, which
        changes only whether cast weights are cached inside code that turned the cache off
        (tracing, export), never a value. The objects are of the `torch.amp` classes now: an
        `isinstance(s, torch.cuda.amp.GradScaler)` check elsewhere turns false, so this rule
        reports those references too (fix them to `torch.amp.GradScaler`). TorchScript accepts
        the new spellings (`torch.jit.script` of both, 2.14.1).
        """,
        wheels_vs_notes="""
        The issue guesses 2.4: the wheels agree. torch 2.3.1 has the same wrappers without a
        warning (torch.cuda.amp.custom_fwd/custom_bwd were still their own implementations, and
        torch.amp had no custom_fwd); 2.4.1 decorates each `__init__` (and custom_fwd/custom_bwd)
        with `@deprecated(..., category=FutureWarning)`; from 2.10.0 the autocast classes
        themselves carry the decorator, so subclassing them warns too. The forwarding bodies are
        the same in every wheel from 2.4.1 to 2.15.0 (2.4.1, 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1,
        2.10.0, 2.11.0, 2.12.1, 2.13.0, 2.14.1, 2.15.0 read). The warning asks for
        `torch.amp.autocast('cuda', args...)`, which is not quite the same call: see the fix
        safety (the dtype default).
        """,
    )
    examples = (
        Example(
            "torch.cpu.amp.autocast: a bfloat16 matmul",
            """
            import torch
            x = torch.arange(12.0).reshape(3, 4) / 7
            with torch.cpu.amp.autocast():
                y = x @ x.T
            """,
            fixed="""
            import torch
            x = torch.arange(12.0).reshape(3, 4) / 7
            with torch.amp.autocast("cpu", dtype=torch.bfloat16):
                y = x @ x.T
            """,
        ),
        Example(
            "the old default dtype inside another autocast",
            """
            import torch
            x = torch.arange(12.0).reshape(3, 4) / 7
            with torch.autocast("cpu", dtype=torch.float16):
                with torch.cpu.amp.autocast(enabled=True):
                    y = x @ x.T
            """,
            fixed="""
            import torch
            x = torch.arange(12.0).reshape(3, 4) / 7
            with torch.autocast("cpu", dtype=torch.float16):
                with torch.amp.autocast("cpu", enabled=True, dtype=torch.bfloat16):
                    y = x @ x.T
            """,
        ),
        Example(
            "a from import, positional arguments",
            """
            import torch
            from torch.cuda.amp import autocast

            x = torch.arange(12.0).reshape(3, 4) / 7
            with autocast(True, torch.bfloat16):
                y = x @ x.T
            with autocast(enabled=False):
                z = x @ x.T
            """,
            fixed="""
            import torch

            x = torch.arange(12.0).reshape(3, 4) / 7
            with torch.amp.autocast("cuda", enabled=True, dtype=torch.bfloat16):
                y = x @ x.T
            with torch.amp.autocast("cuda", enabled=False, dtype=torch.float16):
                z = x @ x.T
            """,
            findings=3,
        ),
        Example(
            "GradScaler: a scaled CPU training step",
            """
            import torch
            w = torch.nn.Parameter(torch.arange(4.0))
            opt = torch.optim.SGD([w], lr=0.1)
            scaler = torch.cpu.amp.GradScaler(4.0, 2.0, growth_interval=1)
            for _ in range(3):
                opt.zero_grad()
                scaler.scale((w * w).sum()).backward()
                scaler.step(opt)
                scaler.update()
            scale = torch.tensor(scaler.get_scale())
            """,
            fixed="""
            import torch
            w = torch.nn.Parameter(torch.arange(4.0))
            opt = torch.optim.SGD([w], lr=0.1)
            scaler = torch.amp.GradScaler("cpu", 4.0, 2.0, growth_interval=1)
            for _ in range(3):
                opt.zero_grad()
                scaler.scale((w * w).sum()).backward()
                scaler.step(opt)
                scaler.update()
            scale = torch.tensor(scaler.get_scale())
            """,
        ),
        Example(
            "a disabled CUDA GradScaler (runs anywhere)",
            """
            import torch
            from torch.cuda import amp
            w = torch.nn.Parameter(torch.arange(4.0))
            opt = torch.optim.SGD([w], lr=0.1)
            scaler = amp.GradScaler(enabled=False)
            scaler.scale((w * w).sum()).backward()
            scaler.step(opt)
            scaler.update()
            scale = torch.tensor(scaler.get_scale())
            """,
            fixed="""
            import torch
            w = torch.nn.Parameter(torch.arange(4.0))
            opt = torch.optim.SGD([w], lr=0.1)
            scaler = torch.amp.GradScaler("cuda", enabled=False)
            scaler.scale((w * w).sum()).backward()
            scaler.step(opt)
            scaler.update()
            scale = torch.tensor(scaler.get_scale())
            """,
            findings=2,  # the module import and the use
        ),
        Example(
            "custom_fwd and custom_bwd decorators",
            """
            import torch
            from torch.cuda.amp import custom_bwd, custom_fwd

            class Square(torch.autograd.Function):
                @staticmethod
                @custom_fwd(cast_inputs=torch.float32)
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return x * x

                @staticmethod
                @custom_bwd
                def backward(ctx, grad):
                    (x,) = ctx.saved_tensors
                    return 2 * x * grad

            x = torch.arange(4.0, requires_grad=True)
            y = Square.apply(x)
            y.sum().backward()
            g = x.grad
            """,
            fixed="""
            import torch

            class Square(torch.autograd.Function):
                @staticmethod
                @torch.amp.custom_fwd(cast_inputs=torch.float32, device_type="cuda")
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return x * x

                @staticmethod
                @torch.amp.custom_bwd(device_type="cuda")
                def backward(ctx, grad):
                    (x,) = ctx.saved_tensors
                    return 2 * x * grad

            x = torch.arange(4.0, requires_grad=True)
            y = Square.apply(x)
            y.sum().backward()
            g = x.grad
            """,
            findings=4,
        ),
        Example(
            "CUDA autocast through a module alias (the plain import of it stays)",
            """
            import torch
            import torch.cuda.amp as amp

            def step(model, batch, optimizer, scaler):
                with amp.autocast(dtype=torch.bfloat16):
                    loss = model(batch)
                scaler.scale(loss).backward()
            """,
            fixed="""
            import torch
            import torch.cuda.amp as amp

            def step(model, batch, optimizer, scaler):
                with torch.amp.autocast("cuda", dtype=torch.bfloat16):
                    loss = model(batch)
                scaler.scale(loss).backward()
            """,
            findings=2,  # the module import (no fix) and the use
            executable=False,  # defines a function only
        ),
        Example(
            "reported without a fix: a subclass, a saved name, an isinstance check",
            """
            import torch

            class Scaler(torch.cuda.amp.GradScaler):
                pass

            make_context = torch.cuda.amp.autocast
            ok = isinstance(Scaler(), torch.cuda.amp.GradScaler)
            """,
            findings=3,
        ),
        Example(
            "not reported: torch.amp, torch.autocast, a project's own autocast, apex",
            """
            import torch
            from apex import amp
            from torch.amp import GradScaler

            def autocast():
                return torch.autocast("cpu")

            with torch.amp.autocast("cpu"), torch.autocast("cpu"), autocast():
                scaler = GradScaler("cpu", enabled=False)
            model, optimizer = amp.initialize(None, None, opt_level="O1")
            """,
            findings=0,
        ),
    )

    def _report_modules(self, ctx: Context) -> None:
        for node, module in _module_uses(ctx):
            device = module.split(".")[1]
            ctx.report(
                node,
                f"`{module}` is deprecated: its `autocast` and `GradScaler` warn (FutureWarning); "
                f"use `torch.amp` with device `\"{device}\"`",
                help="torchup fixes the uses of its names; this reference needs a hand edit",
            )

    def check(self, ctx: Context) -> None:
        self._report_modules(ctx)
        for alias, qualname in from_imports(ctx.resolver, NAMES):
            old = OLD[qualname]
            ctx.report(
                alias,
                f"`{public_name(old)}` is deprecated: each use warns (FutureWarning); "
                f"use `{new_form(old)}`",
                help="torchup fixes the uses; this import goes when none is left",
            )
        places: _Places | None = None  # (set below)
        for node, qualname, call in ctx.references_to(NAMES):
            old = OLD[qualname]
            places = places or _Places(ctx)
            if call is not None:
                self._report_call(ctx, node, call, old)
            elif id(node) in places.decorators and old.kind in ("custom_fwd", "custom_bwd"):
                fix = self._bare_decorator_fix(ctx, node, old)
                ctx.report(
                    node,
                    f"`@{public_name(old)}` warns (FutureWarning); use `@torch.amp.{old.kind}(device_type="
                    f"\"{old.device}\")`",
                    fix=fix,
                    help=None if fix else f"use `@torch.amp.{old.kind}(device_type=\"{old.device}\")`",
                )
            elif id(node) in places.bases:
                ctx.report(
                    node,
                    f"subclass of `{public_name(old)}`, which is deprecated (FutureWarning); "
                    f"subclass `torch.amp.{old.kind}` instead",
                    help=f"derive from `torch.amp.{old.kind}` and pass \"{old.device}\" to `super().__init__` "
                    "(its arguments come after the device)",
                )
            else:
                ctx.report(
                    node,
                    f"`{public_name(old)}` is deprecated (FutureWarning when called); objects made by "
                    f"`{new_form(old)}` are not instances of it",
                    help=f"use `torch.amp.{old.kind}` with the device (`{new_form(old)}`)",
                )

    def _report_call(self, ctx: Context, node: ast.expr, call: ast.Call, old: Old) -> None:
        q = ctx.quote(call)
        if old.kind == "autocast":
            fix = self._autocast_fix(ctx, node, call, old)
        elif old.kind == "GradScaler":
            fix = self._scaler_fix(ctx, node, call, old)
        else:
            fix = self._custom_fix(ctx, node, call, old)
        ctx.report(
            node,
            f"`{public_name(old)}(...)` warns (FutureWarning: deprecated); use `{new_form(old, q)}`",
            fix=fix,
            help=None if fix else f"use `{new_form(old, q)}`"
            + (", with `dtype=` as before (`torch." + DEFAULT_DTYPE[old.device] + "` when none was given)"
               if old.kind == "autocast" else ""),
        )

    def _autocast_fix(self, ctx: Context, node: ast.expr, call: ast.Call, old: Old) -> Fix | None:
        bound = bind_call(call, AUTOCAST_PARAMETERS)
        if bound is None or bound.has_star_args or (bound.get("dtype") is None and bound.has_star_kwargs):
            return None
        target = retarget(ctx, node, old.kind)
        q = ctx.quote(call)
        device = first_argument(ctx, call, f"{q}{old.device}{q}")
        if target is None or device is None:
            return None
        edit, text, imports, released = target
        edits = [edit, device]
        for argument in bound.arguments.values():
            if argument.positional:
                edits += Edits(ctx.source).positional_to_keyword(call, argument.value, argument.name)
        added = ""
        if bound.get("dtype") is None:
            torch = ctx.module_reference("torch", call)
            if torch is None:
                return None
            added = f"dtype={torch[0]}.{DEFAULT_DTYPE[old.device]}"
            imports += torch[1]
            append = append_argument(ctx.source, call, added) if call_items(call) else \
                Edit(device.start, device.end, f", {added}")
            if append is None:
                return None
            edits.append(append)
        return Fix(
            f"use `{text}({q}{old.device}{q}, ...)`" + (f" with the old default `{added}`" if added else ""),
            Applicability.SAFE, merged(edits), imports, released,
        )

    def _scaler_fix(self, ctx: Context, node: ast.expr, call: ast.Call, old: Old) -> Fix | None:
        # The old __init__ takes the new one's parameters after `device`, in the same order.
        target = retarget(ctx, node, old.kind)
        q = ctx.quote(call)
        device = first_argument(ctx, call, f"{q}{old.device}{q}")
        if target is None or device is None or any(k.arg == "device" for k in call.keywords):
            return None
        edit, text, imports, released = target
        return Fix(f"use `{text}({q}{old.device}{q}, ...)`", Applicability.SAFE, (edit, device), imports, released)

    def _custom_fix(self, ctx: Context, node: ast.expr, call: ast.Call, old: Old) -> Fix | None:
        if any(k.arg == "device_type" for k in call.keywords):
            return None
        target = retarget(ctx, node, old.kind)
        if target is None:
            return None
        edit, text, imports, released = target
        q = ctx.quote(call)
        device = f"device_type={q}{old.device}{q}"
        if call_items(call):
            added = append_argument(ctx.source, call, device)
        else:
            open_at = Edits(ctx.source).open_paren_after(call.func, ctx.source.node_range(call)[1])
            added = None if open_at is None else Edit(open_at, open_at, device)
        if added is None:
            return None
        return Fix(f"use `{text}(..., {device})`", Applicability.SAFE, (edit, added), imports, released)

    def _bare_decorator_fix(self, ctx: Context, node: ast.expr, old: Old) -> Fix | None:
        target = retarget(ctx, node, old.kind)
        if target is None:
            return None
        _, text, imports, released = target
        q = ctx.quote(node)
        content = f"{text}(device_type={q}{old.device}{q})"
        return Fix(f"use `@{content}`", Applicability.SAFE, (Edits(ctx.source).replace(node, content),),
                   imports, released)


def _module_uses(ctx: Context) -> list[tuple[ast.AST, str]]:
    """Imports that bind a deprecated amp module, and the module used as a value (not `amp.X`,
    which is reported as X)."""
    found: list[tuple[ast.AST, str]] = [
        (b.node, b.target) for b in ctx.resolver.import_bindings
        if b.target in AMP_MODULES and not b.typing_only and isinstance(b.node, ast.alias)
        and (b.node.asname or isinstance(b.statement, ast.ImportFrom))
    ]
    references = ctx.references_to(AMP_MODULES)
    if references:  # (most files name the modules only on the way to their classes)
        bases = {id(node.value) for node in ctx.walk() if isinstance(node, ast.Attribute)}
        found += [(node, name) for node, name, _ in references if id(node) not in bases]
    return sorted(found, key=lambda item: (item[0].lineno, item[0].col_offset))  # type: ignore[attr-defined]


RULE = DeviceSpecificAmp()
