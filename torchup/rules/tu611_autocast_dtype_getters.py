"""TU611: the per-device autocast getters and setters (``torch.get_autocast_gpu_dtype()``, ...) warn
since torch 2.4; the device-generic ones take the device as their first argument."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Edit, Fix, Severity
from torchup.rules._arguments import from_imports


@dataclass(frozen=True)
class Replacement:
    """``torch.<old>(args)`` -> ``torch.<new>("<device>", args)``; ``parameter`` names the one
    argument the old function takes (None: it takes none)."""

    old: str
    new: str
    device: str
    parameter: str | None

    @property
    def warning(self) -> str:
        """The DeprecationWarning torch gives (2.14.1: torch/csrc/autograd/init.cpp, in libtorch_python.so)."""
        args = self.parameter or ""
        new_args = f"'{self.device}', {self.parameter}" if self.parameter else f"'{self.device}'"
        return f"torch.{self.old}({args}) is deprecated. Please use torch.{self.new}({new_args}) instead."

    def new_call(self, quote: str = '"') -> str:
        device = f"{quote}{self.device}{quote}"
        return f"torch.{self.new}({device}, {self.parameter})" if self.parameter else f"torch.{self.new}({device})"


# (old name template, new name, the old function's one parameter, the device words it exists for);
# the word "gpu" means "cuda". The no-device `is_autocast_enabled()` / `set_autocast_enabled(b)`
# (CUDA) do not warn and are not here.
TEMPLATES = (
    ("get_autocast_{}_dtype", "get_autocast_dtype", None, ("gpu", "cpu", "ipu", "xla")),
    ("set_autocast_{}_dtype", "set_autocast_dtype", "dtype", ("gpu", "cpu", "ipu", "xla")),
    ("is_autocast_{}_enabled", "is_autocast_enabled", None, ("cpu", "ipu", "xla")),
    ("set_autocast_{}_enabled", "set_autocast_enabled", "enabled", ("cpu", "ipu", "xla")),
)
DEVICE = {"gpu": "cuda", "cpu": "cpu", "ipu": "ipu", "xla": "xla"}
TABLE: dict[str, Replacement] = {
    f"{module}.{template.format(word)}": Replacement(template.format(word), new, DEVICE[word], parameter)
    for template, new, parameter, words in TEMPLATES
    for word in words
    for module in ("torch", "torch._C")  # torch re-exports torch._C's functions: the same objects
}
NAMES = frozenset(TABLE)
ENTRIES = tuple(dict.fromkeys(TABLE.values()))  # one per function


class AutocastDtypeGetters(Rule):
    change = Change.WARNS
    code = "TU611"
    name = "autocast-dtype-getters"
    summary = (
        "`torch.get_autocast_gpu_dtype()`, `torch.is_autocast_cpu_enabled()` and the other per-device autocast "
        "getters and setters warn since torch 2.4; pass the device to `torch.get_autocast_dtype(...)` and co."
    )
    since = "2.4"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SOMETIMES
    looks_for = LooksFor(names=tuple(sorted(NAMES)))
    docs = RuleDocs(
        what="""
        Finds every reference (any import form, also through `torch._C`) to the per-device
        autocast state functions: `get_autocast_{gpu,cpu,ipu,xla}_dtype`,
        `set_autocast_{gpu,cpu,ipu,xla}_dtype`, `is_autocast_{cpu,ipu,xla}_enabled` and
        `set_autocast_{cpu,ipu,xla}_enabled`. Not reported: `torch.is_autocast_enabled()` and
        `torch.set_autocast_enabled(flag)` without a device (the CUDA state): they are an overload
        of the new functions, and do not warn (run on 2.13.0 and 2.14.1; no wheel from 2.4.1 to
        2.15.0 has a warning text for them).
        """,
        why="\n".join([
            "torch 2.4 added `torch.get_autocast_dtype(device_type)`, `set_autocast_dtype(device_type, dtype)`,",
            "`is_autocast_enabled(device_type)` and `set_autocast_enabled(device_type, enabled)`, and made the",
            "per-device functions warn on every call, with a DeprecationWarning (shown by default only in",
            "`__main__` and under pytest; 2.14.1: \"Triggered internally at torch/csrc/autograd/init.cpp:1028\"",
            "for the first below; the same 14 texts are in libtorch_python.so of every wheel from 2.4.1 to 2.15.0):",
            "",
            *(f"    DeprecationWarning: {entry.warning}" for entry in ENTRIES),
        ]),
        fix="""
        `torch.get_autocast_gpu_dtype()` -> `torch.get_autocast_dtype("cuda")`,
        `torch.set_autocast_cpu_dtype(d)` -> `torch.set_autocast_dtype("cpu", d)`,
        `torch.is_autocast_cpu_enabled()` -> `torch.is_autocast_enabled("cpu")`,
        `torch.set_autocast_xla_enabled(b)` -> `torch.set_autocast_enabled("xla", b)`, and so on
        for each device; "gpu" becomes "cuda". A name from `from torch import
        get_autocast_gpu_dtype` becomes `torch.get_autocast_dtype` (`import torch` added if
        missing; the import is removed once no use is left). No fix where the call does not have
        the old function's exact positional arguments (it takes no keywords), nor for the
        function passed on.
        """,
        fix_safety="""
        Safe: the old and new functions read and write the same per-device state. On 2.13.0 and
        2.14.1, for cuda, cpu, ipu and xla: a dtype set through either is read back by both, as
        is a flag, and invalid arguments raise TypeError in both. The old functions accept no
        keyword arguments and exactly one positional argument for the setters, so the fix is
        offered only for that form.
        """,
        wheels_vs_notes="""
        The issue asks whether `is_autocast_enabled()` without an argument is deprecated: it is
        not (no warning in 2.13.0 or 2.14.1; the stubs keep it as an overload). There is no
        `torch.cuda.is_autocast_enabled`, nor `is_autocast_gpu_enabled`; `get_autocast_xpu_dtype`
        and its siblings do not exist in 2.13/2.14. torch 2.3.1 had neither the device-generic
        functions nor the warnings; 2.4.1 has both.
        """,
    )
    examples = (
        Example(
            "the CPU autocast state, set and read back",
            """
            import torch
            torch.set_autocast_cpu_dtype(torch.float16)
            torch.set_autocast_cpu_enabled(True)
            x = torch.arange(12.0).reshape(3, 4) / 7
            y = x @ x.T
            on = torch.is_autocast_cpu_enabled()
            dtype = str(torch.get_autocast_cpu_dtype())
            torch.set_autocast_cpu_enabled(False)
            torch.set_autocast_cpu_dtype(torch.bfloat16)
            """,
            fixed="""
            import torch
            torch.set_autocast_dtype("cpu", torch.float16)
            torch.set_autocast_enabled("cpu", True)
            x = torch.arange(12.0).reshape(3, 4) / 7
            y = x @ x.T
            on = torch.is_autocast_enabled("cpu")
            dtype = str(torch.get_autocast_dtype("cpu"))
            torch.set_autocast_enabled("cpu", False)
            torch.set_autocast_dtype("cpu", torch.bfloat16)
            """,
            findings=6,
        ),
        Example(
            "the GPU dtype through a from import",
            """
            import torch
            from torch import get_autocast_gpu_dtype, set_autocast_gpu_dtype
            before = str(get_autocast_gpu_dtype())
            set_autocast_gpu_dtype(torch.bfloat16)
            after = str(get_autocast_gpu_dtype())
            set_autocast_gpu_dtype(torch.float16)
            """,
            fixed="""
            import torch
            before = str(torch.get_autocast_dtype("cuda"))
            torch.set_autocast_dtype("cuda", torch.bfloat16)
            after = str(torch.get_autocast_dtype("cuda"))
            torch.set_autocast_dtype("cuda", torch.float16)
            """,
            findings=6,
        ),
        Example(
            "reported without a fix: the function passed on",
            """
            import torch
            current_dtype = torch.get_autocast_gpu_dtype
            """,
        ),
        Example(
            "not reported: the device-generic functions and the CUDA overloads",
            """
            import torch
            a = torch.is_autocast_enabled()
            b = torch.is_autocast_enabled("cpu")
            c = torch.get_autocast_dtype("cuda")
            torch.set_autocast_enabled(False)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for alias, qualname in from_imports(ctx.resolver, NAMES):
            entry = TABLE[qualname]
            ctx.report(
                alias,
                f"`torch.{entry.old}` is deprecated: each call warns (DeprecationWarning); "
                f"use `{entry.new_call()}`",
                help="torchup fixes the calls; this import goes when no use is left",
            )
        for node, qualname, call in ctx.references_to(NAMES):
            entry = TABLE[qualname]
            fix = self._fix(ctx, node, call, entry) if call is not None else None
            q = ctx.quote(node)
            message = (
                f"`torch.{entry.old}({entry.parameter or ''})` warns (DeprecationWarning: deprecated); "
                f"use `{entry.new_call(q)}`"
                if call is not None
                else f"`torch.{entry.old}` is deprecated (DeprecationWarning when called); "
                f"use `{entry.new_call(q)}`"
            )
            ctx.report(node, message, fix=fix, help=None if fix else f"call `{entry.new_call(q)}`")

    def _fix(self, ctx: Context, node: ast.expr, call: ast.Call, entry: Replacement) -> Fix | None:
        if call.keywords or len(call.args) != (1 if entry.parameter else 0) or \
                any(isinstance(a, ast.Starred) for a in call.args):
            return None  # the old function takes exactly these (TypeError otherwise): keep what fails, failing
        reference = ctx.module_reference("torch", node)
        edits = Edits(ctx.source)
        open_at = edits.open_paren_after(call.func, ctx.source.node_range(call)[1])
        if reference is None or open_at is None:
            return None
        torch, imports = reference
        text = f"{torch}.{entry.new}"
        q = ctx.quote(call)
        device = Edit(open_at, open_at, f"{q}{entry.device}{q}" + (", " if call.args else ""))
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        released = (id(root),) if isinstance(root, ast.Name) and root.id != torch.partition(".")[0] else ()
        return Fix(f"use `{text}({q}{entry.device}{q}{', ...' if call.args else ''})`", Applicability.SAFE,
                   (edits.replace(node, text), device), imports, released)


RULE = AutocastDtypeGetters()
