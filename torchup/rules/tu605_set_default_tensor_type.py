"""TU605: ``torch.set_default_tensor_type`` warns since torch 2.1; set the dtype (and device) instead."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import has_comment
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Edit, Fix, Severity
from torchup.core.source import line_end_at, line_start_at

OLD = "torch.set_default_tensor_type"
SET_DEVICE = "torch.set_default_device"
# The tensor types set_default_tensor_type accepts (floating-point only) and the dtype each sets.
# BFloat16Tensor is left out: it fails in 2.13 and 2.14 alike ("invalid default scalar type for
# complex"), whichever function sets it.
DTYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16"}
CPU_TYPES = {f"torch.{name}": dtype for name, dtype in DTYPES.items()}
CUDA_TYPES = {f"torch.cuda.{name}": dtype for name, dtype in DTYPES.items()}
WARNING = (
    "UserWarning: torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
    "torch.set_default_dtype() and torch.set_default_device() as alternatives."
)


def tensor_type(ctx: Context, argument: ast.expr) -> str | None:
    """``torch.DoubleTensor`` (any import form) or the string ``"torch.DoubleTensor"``: its name."""
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        name = argument.value
    else:
        name = ctx.qualified_name(argument) or ""
    return name if name in CPU_TYPES or name in CUDA_TYPES else None


class SetDefaultTensorType(Rule):
    change = Change.WARNS
    code = "TU605"
    name = "set-default-tensor-type"
    summary = "`torch.set_default_tensor_type` warns since torch 2.1; use `torch.set_default_dtype` (and `_device`)."
    since = "2.1"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SOMETIMES
    # (`set_default_device` is read, never reported: a file that sets a device makes the CPU fixes unsafe.)
    looks_for = LooksFor(names=(OLD, SET_DEVICE))
    docs = RuleDocs(
        what="""
        Finds references to `torch.set_default_tensor_type` (any import form): calls and the
        function passed on. Not reported: `torch.set_default_dtype`, `torch.set_default_device`,
        and functions of the project's with that name.
        """,
        why=f"""
        torch 2.1 deprecated it; the first call in a process warns (TORCH_WARN_ONCE in
        torch/csrc/tensor/python_tensor.cpp, `py_set_default_tensor_type`; the text is in 2.1.2's
        libtorch_python.so, not in 2.0.1's):

            {WARNING}

        2.13.0, 2.14.1 and 2.15.0 still have it, with the same warning.
        """,
        fix="""
        For a literal argument: `torch.FloatTensor` / `"torch.FloatTensor"` ->
        `torch.set_default_dtype(torch.float32)`; `DoubleTensor` -> `torch.float64`;
        `HalfTensor` -> `torch.float16`. A CUDA type (`torch.cuda.FloatTensor`, ...) becomes two
        statements, `torch.set_default_dtype(torch.float32)` and
        `torch.set_default_device("cuda")`, only where the call is a statement on its own line.
        Any other argument (a variable, a conditional, `BFloat16Tensor`) is reported without a
        fix.
        """,
        fix_safety="""
        CPU types: safe. `set_default_tensor_type(torch.DoubleTensor)` sets the default dtype and
        the default tensor type (CPU, float64); `set_default_dtype(torch.float64)` sets the same
        dtype and keeps the tensor type's backend, which is the CPU unless a CUDA type was set.
        Checked under 2.13.0 and 2.14.1: `torch.get_default_dtype()`, `torch.zeros(2)`,
        `torch.tensor([1.0])`, `torch.tensor([1j])` (complex64 / complex128 follows),
        `torch.Tensor(2)` and its `.type()` agree for Float, Double and Half. When the same file
        also sets a CUDA type, a default device, or a type the rule cannot read, the CPU fixes
        are unsafe too: there, `set_default_tensor_type(torch.FloatTensor)` also moved the default
        back to the CPU, which `set_default_dtype` does not.
        CUDA types: unsafe. `set_default_device("cuda")` installs a TorchFunctionMode that passes
        `device=` to the factory functions it lists (torch/utils/_device.py); the legacy
        constructors (`torch.Tensor(3)`, `torch.FloatTensor(3)`) and functions outside that list
        (`torch.normal`) no longer create CUDA tensors, and every torch call pays the mode's
        overhead. Review such code, and prefer passing `device=` explicitly.
        """,
        wheels_vs_notes="""
        As the 2.1 notes say. The wheels add that the warning is issued once per process (a
        C++ TORCH_WARN_ONCE), so test suites that call it in each set-up show it once.
        """,
    )
    examples = (
        Example(
            "double precision, and back",
            """
            import torch
            torch.set_default_tensor_type(torch.DoubleTensor)
            z = torch.zeros(2)
            t = torch.tensor([1.0])
            c = torch.tensor([1j])
            torch.set_default_tensor_type("torch.FloatTensor")
            back = torch.zeros(2)
            """,
            fixed="""
            import torch
            torch.set_default_dtype(torch.float64)
            z = torch.zeros(2)
            t = torch.tensor([1.0])
            c = torch.tensor([1j])
            torch.set_default_dtype(torch.float32)
            back = torch.zeros(2)
            """,
            findings=2,
        ),
        Example(
            "a from-import and half precision",
            """
            import torch
            from torch import set_default_tensor_type, HalfTensor
            set_default_tensor_type(HalfTensor)
            h = torch.ones(3) / 3
            set_default_tensor_type(torch.FloatTensor)
            """,
            fixed="""
            import torch
            from torch import HalfTensor
            torch.set_default_dtype(torch.float16)
            h = torch.ones(3) / 3
            torch.set_default_dtype(torch.float32)
            """,
            findings=2,
        ),
        Example(
            "a CUDA type: dtype and device, unsafe",
            """
            import torch
            if torch.cuda.is_available():
                torch.set_default_tensor_type(torch.cuda.FloatTensor)  # train on the GPU
            """,
            fixed="""
            import torch
            if torch.cuda.is_available():
                torch.set_default_dtype(torch.float32)  # train on the GPU
                torch.set_default_device("cuda")
            """,
            unsafe=True,
            executable=False,  # needs a GPU
        ),
        Example(
            "a type chosen at run time: no fix",
            """
            import torch
            use_gpu = torch.cuda.is_available()
            torch.set_default_tensor_type(torch.cuda.FloatTensor if use_gpu else torch.FloatTensor)
            """,
        ),
        Example(
            "not reported: the new functions, and a function of the project's",
            """
            import torch

            def set_default_tensor_type(kind):
                return kind

            torch.set_default_dtype(torch.float64)
            torch.set_default_device("cpu")
            set_default_tensor_type("double")
            torch.set_default_dtype(torch.float32)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        references = ctx.references_to(frozenset({OLD}))
        calls = [call for _, _, call in references if call is not None]
        # Does the file move the default away from the CPU anywhere (then a CPU type moved it back)?
        elsewhere_cuda = any(_argument(call) is None or tensor_type(ctx, _argument(call)) not in CPU_TYPES
                             for call in calls) or bool(ctx.calls_to(frozenset({SET_DEVICE})))
        for node, _, call in references:
            argument = _argument(call) if call is not None else None
            kind = tensor_type(ctx, argument) if argument is not None else None
            fix = self._fix(ctx, call, kind, elsewhere_cuda) if call is not None and kind else None
            if kind in CUDA_TYPES:
                advice = (
                    f"use `torch.set_default_dtype(torch.{CUDA_TYPES[kind]})` and "
                    '`torch.set_default_device("cuda")`'
                )
            elif kind in CPU_TYPES:
                advice = f"use `torch.set_default_dtype(torch.{CPU_TYPES[kind]})`"
            else:
                advice = "use `torch.set_default_dtype(...)` (dtype) and `torch.set_default_device(...)` (device)"
            ctx.report(
                node,
                "`torch.set_default_tensor_type` is deprecated (UserWarning): set the default dtype, and a "
                "default device, with their own functions",
                help=None if fix else advice,
                fix=fix,
            )

    def _fix(self, ctx: Context, call: ast.Call, kind: str, elsewhere_cuda: bool) -> Fix | None:
        reference = ctx.module_reference("torch", call)
        start, end = ctx.source.node_range(call)
        if reference is None or has_comment(ctx.source, start, end):
            return None
        torch, imports = reference
        released = (id(call.func),) if isinstance(call.func, ast.Name) else ()
        if kind in CPU_TYPES:
            text = f"{torch}.set_default_dtype({torch}.{CPU_TYPES[kind]})"
            applicability = Applicability.UNSAFE if elsewhere_cuda else Applicability.SAFE
            return Fix(f"use `{text}`", applicability, (Edit(start, end, text),), imports, released)
        # Two statements: only for a call that is a statement alone on its line(s).
        if not _alone(ctx, call):
            return None
        text = ctx.source.text
        indent = text[line_start_at(text, start) : start]
        line_end, next_line = line_end_at(text, end)
        if next_line == line_end:
            return None  # the file's last line, without a line ending
        q = ctx.quote(call)
        dtype = f"{torch}.set_default_dtype({torch}.{CUDA_TYPES[kind]})"
        device = f"{torch}.set_default_device({q}cuda{q})"
        # The device goes on a line of its own after the statement (and after its comment, if any).
        edits = (Edit(start, end, dtype), Edit(next_line, next_line, f"{indent}{device}{text[line_end:next_line]}"))
        return Fix("set the dtype and the device", Applicability.UNSAFE, edits, imports, released)


def _argument(call: ast.Call) -> ast.expr | None:
    """The one argument (positional-only since torch 2.5; `t=` before)."""
    if len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred):
        return call.args[0]
    if not call.args and len(call.keywords) == 1 and call.keywords[0].arg == "t":
        return call.keywords[0].value
    return None


def _alone(ctx: Context, call: ast.Call) -> bool:
    """The call is an expression statement that begins its line and ends it (a comment may follow)."""
    text = ctx.source.text
    start, end = ctx.source.node_range(call)
    if text[line_start_at(text, start) : start].strip(" \t"):
        return False  # `if x: call(...)` or `a; call(...)`
    rest = text[end : line_end_at(text, end)[0]].strip(" \t")
    if rest and not rest.startswith("#"):
        return False  # `call(...); more` or an attribute of the result
    return any(isinstance(node, ast.Expr) and node.value is call for node in ctx.walk())


RULE = SetDefaultTensorType()
