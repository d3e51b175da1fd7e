"""TU618: ``torch.utils.cpp_extension.include_paths(cuda=True)`` (and ``library_paths``): the flag is
``device_type`` since torch 2.6, a string; the old keyword raises TypeError, a bool in its place
silently means the CPU."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix
from torchup.prefilter.requirements import TextPattern
from torchup.rules.tu601_torch_load_weights_only import uses

if TYPE_CHECKING:
    from torchup.core.lexing import Spans

FUNCTIONS = frozenset({"torch.utils.cpp_extension.include_paths", "torch.utils.cpp_extension.library_paths"})
# Expressions that need parentheses as the condition of `"cuda" if ... else "cpu"`.
_LOOSE = (ast.IfExp, ast.Lambda, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Starred)
# What a finding needs besides the names: the keyword, or a literal bool first (also after a partial's
# function). torch's own sources name both functions in files that pass neither (cpp_extension.py).
_OLD_FLAG = TextPattern(r"\bcuda\s*=(?!=)|_paths\s*[(,]\s*(?:True|False)\b")


def device_type(ctx: Context, flag: ast.expr) -> str:
    """The `device_type` string that means what ``flag`` meant as `cuda=`: its truth picks CUDA."""
    if isinstance(flag, ast.Constant) and isinstance(flag.value, bool):
        return '"cuda"' if flag.value else '"cpu"'
    condition = ctx.segment(flag)
    if isinstance(flag, _LOOSE) or "\n" in condition:
        condition = f"({condition})"
    return f'"cuda" if {condition} else "cpu"'


class CppExtensionDeviceType(Rule):
    code = "TU618"
    name = "cpp-extension-cuda-flag"
    summary = "`include_paths(cuda=True)` / `library_paths(cuda=True)`: `device_type=\"cuda\"` since torch 2.6."
    since = "2.6"
    change = Change.RAISES
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(names=tuple(sorted(FUNCTIONS)))
    docs = RuleDocs(
        what="""
        Finds calls of `torch.utils.cpp_extension.include_paths` and `library_paths` (any import
        form, and a `functools.partial` of them) that pass the flag of torch 2.5 and older: the
        keyword `cuda=`, or `True`/`False` as the first argument. A first argument that is not a
        literal bool (a variable, a string) is not reported: it may be a device type already.
        """,
        why="""
        Up to torch 2.5 both functions took `cuda: bool = False`. torch 2.6 replaced it with
        `device_type: str = "cpu"` (for XPU and SYCL builds), with no shim for the old keyword, so
        the `setup.py` of a CUDA extension written the old way stops at

            TypeError: include_paths() got an unexpected keyword argument 'cuda'

        (torch 2.13.0 and 2.14.1 here). Passed by position, `include_paths(True)` raises nothing:
        `True` becomes the device type, which is neither `"cuda"` nor `"xpu"`, so the CUDA include
        and library directories are silently left out and the build fails later, at `#include
        <cuda_runtime.h>` or at link time.
        """,
        fix="""
        `cuda=True` -> `device_type="cuda"`, `cuda=False` -> `device_type="cpu"`, `cuda=flag` ->
        `device_type="cuda" if flag else "cpu"`; a positional `True`/`False` -> `"cuda"`/`"cpu"`.
        `device_type` does not exist before torch 2.6: a build that must still run against older
        releases has to choose at run time (`try: include_paths(device_type="cuda")` `except
        TypeError: include_paths(cuda=True)`).
        """,
        fix_safety="""
        Safe: the old functions tested the flag's truth (`if cuda:`), and the new ones compare the
        string with `"cuda"`; each rewrite gives the same paths on torch 2.6 and later as the
        original gave up to 2.5 (proven under torch 2.5.1 and 2.14.1: docs/proofs.md).
        """,
        wheels_vs_notes="""
        The release notes of 2.6 do not list the change; the wheels show it
        (torch-2.6.0 torch/utils/cpp_extension.py, `def include_paths(device_type: str = "cpu")`),
        and real `setup.py` files still pass `cuda=True` (mmcv, torchani, xLSTM).
        """,
    )
    examples = (
        Example(
            "the CUDA include directory of an extension's build",
            """
            import torch.utils.cpp_extension as cpp_ext

            cuda_include = cpp_ext.include_paths(cuda=True)[-1]
            """,
            fixed="""
            import torch.utils.cpp_extension as cpp_ext

            cuda_include = cpp_ext.include_paths(device_type="cuda")[-1]
            """,
            versions=("2.5", "2.14"),
        ),
        Example(
            "a flag, by position, and the library paths",
            """
            from torch.utils.cpp_extension import include_paths, library_paths

            with_cuda = True
            library_count = len(library_paths(cuda=with_cuda))
            cpu_only = include_paths(False) == include_paths()
            cuda_include = include_paths(True)[-1]
            """,
            fixed="""
            from torch.utils.cpp_extension import include_paths, library_paths

            with_cuda = True
            library_count = len(library_paths(device_type="cuda" if with_cuda else "cpu"))
            cpu_only = include_paths("cpu") == include_paths()
            cuda_include = include_paths("cuda")[-1]
            """,
            findings=3,
            versions=("2.5", "2.14"),
        ),
        Example(
            "not reported: the 2.6 spelling, a device type in a variable, another function",
            """
            import torch.utils.cpp_extension as cpp_ext

            device = "cuda"
            paths = cpp_ext.include_paths(device_type="cuda") + cpp_ext.include_paths(device)
            names = cpp_ext.library_paths()
            """,
            findings=0,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        return _OLD_FLAG.found_in(spans.text) and super().may_report(spans)

    def check(self, ctx: Context) -> None:
        for use in uses(ctx, FUNCTIONS):
            call = use.call
            if call is None:
                continue
            function = use.qualname.rpartition(".")[2]
            flag = next((keyword for keyword in call.keywords if keyword.arg == "cuda"), None)
            first = call.args[use.skip] if len(call.args) > use.skip else None
            if flag is not None:
                edit = Edits(ctx.source).replace(flag, f"device_type={device_type(ctx, flag.value)}")
                ctx.report(
                    flag,
                    f"`{function}(cuda=...)` raises TypeError since torch 2.6: the parameter is "
                    "`device_type`, a string (`\"cuda\"`)",
                    fix=Fix("pass `device_type=` instead", Applicability.SAFE, (edit,),
                            requires=(f"{use.qualname}(device_type=)",)),
                )
            elif isinstance(first, ast.Constant) and isinstance(first.value, bool):
                edit = Edits(ctx.source).replace(first, device_type(ctx, first))
                ctx.report(
                    first,
                    f"`{function}({first.value})`: since torch 2.6 the first parameter is `device_type`, a "
                    f"string; a bool there matches no device, so `{function}` silently leaves out the CUDA "
                    "directories",
                    # (a string in the first place means `device_type` only from 2.6 on: before,
                    # `cuda="cpu"` is true, which the edits alone do not show torchup.analysis.fix_window)
                    fix=Fix("pass the device type", Applicability.SAFE, (edit,),
                            requires=(f"{use.qualname}(device_type=)",)),
                )


RULE = CppExtensionDeviceType()
