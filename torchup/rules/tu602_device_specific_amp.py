"""TU602: ``torch.cuda.amp`` and ``torch.cpu.amp`` (autocast, GradScaler, custom_fwd/bwd) warn since
torch 2.4; ``torch.amp`` takes the device as an argument."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import ClassVar

from torchup.analysis.context import Context
from torchup.analysis.importer import probing_imports
from torchup.analysis.patch_targets import report_patch_targets
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
# What each old name becomes: the mocks and patches of the old names move with the calls (their fixes
# unsafe: the new names take the device first, which a mock records and a fake receives).
RENAMES = {name: f"torch.amp.{old.kind}" for name, old in sorted(OLD.items())}
OTHER_ARGUMENTS = "the new one is called with the device as well, which a mock records and a stand-in receives"
# The old classes derive from these in every release from 2.4 on (2.13.0, 2.14.1:
# torch/cuda/amp/grad_scaler.py:12 `class GradScaler(torch.amp.GradScaler)`, autocast_mode.py:18
# `class autocast(torch.amp.autocast_mode.autocast)`, the same in torch/cpu/amp): a check of the new
# class holds for objects of the old, so it can move before, with or without the calls.
CLASSES = frozenset({"autocast", "GradScaler"})
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
    """Which expressions are decorators, base classes, the classes of an `isinstance` / `issubclass`
    check or parts of an annotation (looked up once a file has a reference)."""

    def __init__(self, ctx: Context) -> None:
        self.decorators: set[int] = set()
        self.bases: set[int] = set()
        self.checks: set[int] = set()
        self.annotations: set[int] = set()
        for node in ctx.walk():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.decorators.update(id(d) for d in node.decorator_list)
            if isinstance(node, ast.ClassDef):
                self.bases.update(id(b) for b in node.bases)
            elif isinstance(node, ast.Call) and _is_check(node):
                classes = node.args[1]
                self.checks.update(id(c) for c in (classes.elts if isinstance(classes, ast.Tuple) else [classes]))
            for annotation in _annotations(node):
                self.annotations.update(id(part) for part in ast.walk(annotation))


def _is_check(call: ast.Call) -> bool:
    """`isinstance(x, C)` / `issubclass(T, C)` (the builtins by name: shadowing them is rare)."""
    return isinstance(call.func, ast.Name) and call.func.id in ("isinstance", "issubclass") and len(call.args) == 2


def _annotations(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    arguments = node.args
    parameters = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    found = [p.annotation for p in parameters if p is not None and p.annotation is not None]
    return found + ([node.returns] if node.returns is not None else [])


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
    renames: ClassVar[dict[str, str]] = RENAMES
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
        is removed once no use is left, unless it stands in the body of a `try` whose `except`
        handles its failure (`try: from torch.cuda.amp import autocast / except ImportError:
        ...`): that import is the point of the block and stays. `isinstance(s,
        torch.cuda.amp.GradScaler)`, `issubclass` and annotations -> `torch.amp.GradScaler` (the
        same for autocast), so that a check of what the fixed calls make still holds. Mocks and
        patches of the old names (`mock.patch("torch.cuda.amp.autocast")`, `patch.object(amp,
        "GradScaler")`, `wraps=torch.cuda.amp.autocast`) are reported too, with an unsafe fix that
        names the new one. No fix: base classes (a subclass's `super().__init__` takes the old
        arguments), the name passed on or read by name (`getattr(torch.cuda.amp, "autocast")`),
        autocast calls with `*args`, or with `**kwargs` and no `dtype`.
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
        (tracing, export), never a value. TorchScript accepts the new spellings
        (`torch.jit.script` of both, 2.14.1).

        The fixed calls make objects of the `torch.amp` classes, so every reference that observes
        the old name moves with them, across the project, or the calls do not move:
        - `isinstance(s, torch.cuda.amp.GradScaler)` would turn false: it becomes
          `isinstance(s, torch.amp.GradScaler)`, safe with or without the calls, since each old
          class derives from the new one (2.13.0 and 2.14.1: torch/cuda/amp/grad_scaler.py:12
          `class GradScaler(torch.amp.GradScaler)`, torch/cuda/amp/autocast_mode.py:18 `class
          autocast(torch.amp.autocast_mode.autocast)`, torch/cpu/amp the same; 2.4.1 on): old
          and new objects pass it. It also passes the other device's objects: where a file checks
          both `torch.cuda.amp.GradScaler` and `torch.cpu.amp.GradScaler`, which become one class,
          the fix is unsafe. A check torchup cannot rewrite (`torch` shadowed there) makes the
          calls' fixes unsafe, naming it.
        - A mock of the old name (`mock.patch("torch.cuda.amp.autocast")`) would no longer see
          the calls. Moved with them it would record `("cuda", ..., dtype=torch.float16)` where
          the test expects the old arguments, and a fake would receive arguments it was not
          written for: its fix is unsafe, and so all the fixes of that name and its mocks apply
          together under `--unsafe-fixes`, none otherwise (the note on each names the mocks).
          `getattr(torch.cuda.amp, "autocast")` gets no fix (its caller passes the old
          arguments) and makes them unsafe in the same way.
        - An import probed by `try` / `except ImportError` stays (see the fix): its fallback is
          what the code (and its tests, which hide the module) rely on.
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
            "reported without a fix: a subclass, a saved name",
            """
            import torch

            class Scaler(torch.cuda.amp.GradScaler):
                pass

            make_context = torch.cuda.amp.autocast
            """,
            findings=2,
        ),
        Example(
            "an isinstance check moves with the scaler it checks",
            """
            import torch
            scaler = torch.cpu.amp.GradScaler(enabled=False)
            ok = isinstance(scaler, torch.cpu.amp.GradScaler)
            scale = torch.tensor(scaler.get_scale())
            """,
            fixed="""
            import torch
            scaler = torch.amp.GradScaler("cpu", enabled=False)
            ok = isinstance(scaler, torch.amp.GradScaler)
            scale = torch.tensor(scaler.get_scale())
            """,
            findings=2,
        ),
        Example(
            "an import whose failure the code handles stays",
            """
            import torch
            try:
                from torch.cpu.amp import autocast
            except ImportError:
                raise RuntimeError("mixed precision needs torch.cpu.amp") from None
            x = torch.arange(12.0).reshape(3, 4) / 7
            with autocast(enabled=True):
                y = x @ x.T
            """,
            fixed="""
            import torch
            try:
                from torch.cpu.amp import autocast
            except ImportError:
                raise RuntimeError("mixed precision needs torch.cpu.amp") from None
            x = torch.arange(12.0).reshape(3, 4) / 7
            with torch.amp.autocast("cpu", enabled=True, dtype=torch.bfloat16):
                y = x @ x.T
            """,
            findings=2,
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

    def _report_imports(self, ctx: Context) -> None:
        imports = from_imports(ctx.resolver, NAMES)
        probes = _probing_aliases(ctx) if imports else frozenset()
        for alias, qualname in imports:
            old = OLD[qualname]
            ctx.report(
                alias,
                f"`{public_name(old)}` is deprecated: each use warns (FutureWarning); "
                f"use `{new_form(old)}`",
                help="torchup fixes the uses; this import goes when none is left" if id(alias) not in probes else
                "torchup fixes the uses but keeps this import: the `except` of its `try` handles its failure, "
                "which is the point of the block (test for `torch.amp` there by hand)",
            )

    def check(self, ctx: Context) -> None:
        self._report_modules(ctx)
        self._report_imports(ctx)
        references = ctx.references_to(NAMES)
        places = _Places(ctx) if references else None
        checked = {(OLD[q].kind, OLD[q].device) for node, q, _ in references if places and id(node) in places.checks}
        for node, qualname, call in references:
            assert places is not None
            old = OLD[qualname]
            if call is not None:
                self._report_call(ctx, node, call, old, qualname)
            elif id(node) in places.decorators and old.kind in ("custom_fwd", "custom_bwd"):
                fix = self._bare_decorator_fix(ctx, node, old, qualname)
                ctx.report(
                    node,
                    f"`@{public_name(old)}` warns (FutureWarning); use `@torch.amp.{old.kind}(device_type="
                    f"\"{old.device}\")`",
                    fix=fix,
                    help=None if fix else f"use `@torch.amp.{old.kind}(device_type=\"{old.device}\")`",
                    subject=qualname,
                )
            elif id(node) in places.bases:
                ctx.report(
                    node,
                    f"subclass of `{public_name(old)}`, which is deprecated (FutureWarning); "
                    f"subclass `torch.amp.{old.kind}` instead",
                    help=f"derive from `torch.amp.{old.kind}` and pass \"{old.device}\" to `super().__init__` "
                    "(its arguments come after the device)",
                )
            elif old.kind in CLASSES and (id(node) in places.checks or id(node) in places.annotations):
                other = (old.kind, "cpu" if old.device == "cuda" else "cuda")
                self._report_check(ctx, node, old, qualname, id(node) in places.checks, other in checked)
            else:
                ctx.report(
                    node,
                    f"`{public_name(old)}` is deprecated (FutureWarning when called); objects made by "
                    f"`{new_form(old)}` are not instances of it",
                    help=f"use `torch.amp.{old.kind}` with the device (`{new_form(old)}`)",
                    subject=qualname,
                )
        # (after the rule's own findings: a saved name, `real = torch.cuda.amp.autocast`, takes the
        # patch's fix; the engine's own pass then finds each target reported)
        report_patch_targets(ctx, RENAMES, OTHER_ARGUMENTS)

    def _report_check(
        self, ctx: Context, node: ast.expr, old: Old, qualname: str, is_check: bool, both_devices: bool
    ) -> None:
        """`isinstance(s, torch.cuda.amp.GradScaler)`, or an annotation: the fixed code makes objects
        of `torch.amp.GradScaler`, which such a check must name, and the old objects pass it too."""
        target = retarget(ctx, node, old.kind)
        fix = None
        if target is not None:
            edit, text, imports, released = target
            applicability, reason = Applicability.SAFE, f"`{public_name(old)}` derives from it"
            if both_devices and is_check:
                applicability = Applicability.UNSAFE
                reason = "unsafe: this file also checks the other device's class, which becomes the same one"
            fix = Fix(f"name `{text}` ({reason})", applicability, (edit,), imports, released)
        where = "checks for" if is_check else "annotates with"
        ctx.report(
            node,
            f"{where} `{public_name(old)}`, which is deprecated: objects made by `{new_form(old)}`, as the fixed "
            "calls make them, are not instances of it",
            fix=fix,
            help=None if fix else f"name `torch.amp.{old.kind}`, which the old class derives from",
            # (a check left as it is turns false once the calls change: it holds them back)
            patches=qualname if fix is None and is_check else None,
            subject=qualname,
        )

    def _report_call(self, ctx: Context, node: ast.expr, call: ast.Call, old: Old, qualname: str) -> None:
        q = ctx.quote(call)
        if old.kind == "autocast":
            fix = self._autocast_fix(ctx, node, call, old)
        elif old.kind == "GradScaler":
            fix = self._scaler_fix(ctx, node, call, old)
        else:
            fix = self._custom_fix(ctx, node, call, old)
        if fix is not None:
            fix.replaces = qualname  # (its mocks move with it: torchup.analysis.project)
        ctx.report(
            node,
            f"`{public_name(old)}(...)` warns (FutureWarning: deprecated); use `{new_form(old, q)}`",
            fix=fix,
            help=None if fix else f"use `{new_form(old, q)}`"
            + (", with `dtype=` as before (`torch." + DEFAULT_DTYPE[old.device] + "` when none was given)"
               if old.kind == "autocast" else ""),
            subject=qualname,
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
        fix = Fix(
            f"use `{text}({q}{old.device}{q}, ...)`" + (f" with the old default `{added}`" if added else ""),
            Applicability.SAFE, merged(edits), imports, released,
        )
        # For a project whose floor predates `torch.amp.autocast` (1.12): `torch.autocast`, the same
        # class under its first public name (torchup.analysis.fix_window picks it where it fits).
        torch = ctx.module_reference("torch", node)
        if torch is not None:
            alias = Edits(ctx.source).replace(node, f"{torch[0]}.autocast")
            fix.alternatives = (Fix(
                fix.message.replace(f"`{text}(", f"`{torch[0]}.autocast(", 1), Applicability.SAFE,
                merged([alias, *edits[1:]]), (*torch[1], *(r for r in imports if r.module != "torch.amp")), released,
            ),)
        return fix

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

    def _bare_decorator_fix(self, ctx: Context, node: ast.expr, old: Old, qualname: str) -> Fix | None:
        target = retarget(ctx, node, old.kind)
        if target is None:
            return None
        _, text, imports, released = target
        q = ctx.quote(node)
        content = f"{text}(device_type={q}{old.device}{q})"
        return Fix(f"use `@{content}`", Applicability.SAFE, (Edits(ctx.source).replace(node, content),),
                   imports, released, replaces=qualname)


def _module_uses(ctx: Context) -> list[tuple[ast.AST, str]]:
    """Imports that bind a deprecated amp module, and the module used as a value (not `amp.X`,
    which is reported as X, nor the owner in `getattr(torch.cuda.amp, "autocast")` or
    `patch.object(...)`, which is reported as a patch target of X)."""
    found: list[tuple[ast.AST, str]] = [
        (b.node, b.target) for b in ctx.resolver.import_bindings
        if b.target in AMP_MODULES and not b.typing_only and isinstance(b.node, ast.alias)
        and (b.node.asname or isinstance(b.statement, ast.ImportFrom))
    ]
    references = ctx.references_to(AMP_MODULES)
    if references:  # (most files name the modules only on the way to their classes)
        bases = {id(node.value) for node in ctx.walk() if isinstance(node, ast.Attribute)}
        bases |= _owners_by_name(ctx)
        found += [(node, name) for node, name, _ in references if id(node) not in bases]
    return sorted(found, key=lambda item: (item[0].lineno, item[0].col_offset))  # type: ignore[attr-defined]


def _owners_by_name(ctx: Context) -> set[int]:
    """The module arguments of `getattr(torch.cuda.amp, "autocast")`, `patch.object(amp, "GradScaler")`
    and the like, where the string names one of the old names."""
    owners = set()
    for call in ctx.resolver.calls:
        func = call.func
        callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if callee not in ("getattr", "setattr", "delattr", "object") or len(call.args) < 2:
            continue
        owner, name = call.args[0], call.args[1]
        module = ctx.qualified_name(owner)
        if module in AMP_MODULES and isinstance(name, ast.Constant) and f"{module}.{name.value}" in NAMES:
            owners.add(id(owner))
    return owners


def _probing_aliases(ctx: Context) -> frozenset[int]:
    """The names imported in the body of a `try` whose `except` handles their failure (kept by the fix)."""
    probes = probing_imports(ctx.tree)
    return frozenset(id(b.node) for b in ctx.resolver.import_bindings if id(b.statement) in probes)


RULE = DeviceSpecificAmp()
