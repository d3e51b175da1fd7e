"""TU503: ``torch.compile(mode="max-autotune")`` can autotune GEMMs with NVGEMM in torch 2.14."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.rules._modernise import attribute_names, feature, file_strings, keyword, local_function, string_value

NVGEMM = feature("nvgemm")
COMPILE = frozenset({"torch.compile", "torch.compiler.compile"})
MODES = frozenset(NVGEMM["modes"])
OPTION_KEYS = frozenset(NVGEMM["options_keys"])
OPTION = NVGEMM["option"]
ENV = NVGEMM["env"]
DEFAULT = NVGEMM["default"]
WITH_NVGEMM = f"{DEFAULT},{NVGEMM['backend']}"
SHORT_OPTION = OPTION.rpartition(".")[2]
MODULES = " and ".join(f"`{m}`" for m in NVGEMM["needs_modules"])
WHAT = (
    f"torch 2.14's Inductor can also try NVGEMM (CUTLASS GEMM kernels generated with CuTeDSL) here, but only "
    f'when `NVGEMM` is in `{OPTION}` (default "{DEFAULT}")'
)
NEEDS = f"needs a CUDA GPU and {MODULES} importable"


def _configured(ctx: Context) -> bool:
    """Does the file already choose GEMM backends (any mention of NVGEMM, the option or its variable)?"""
    names = {SHORT_OPTION, ENV}
    if SHORT_OPTION in attribute_names(ctx):
        return True
    return any("NVGEMM" in text.upper() or text in names for text in file_strings(ctx))


def _autotune_options(node: ast.expr) -> ast.expr | None:
    """The ``"max_autotune": True`` key of a literal ``options`` dict, if it has one."""
    if not isinstance(node, ast.Dict):
        return None
    for key, value in zip(node.keys, node.values, strict=True):
        if string_value(key) in OPTION_KEYS and isinstance(value, ast.Constant) and value.value is True:
            return key
    return None


def _inductor(ctx: Context, call: ast.Call) -> bool:
    """Whether the call may compile with Inductor: no ``backend=``, ``"inductor"``, or a value this file
    cannot pin down. A named other backend (``"eager"``, ``"cudagraphs"``, a function defined here) gets
    ``mode``/``options`` for itself, and never reads Inductor's GEMM backends."""
    backend = keyword(call, "backend")
    if backend is None:
        return True
    name = string_value(backend.value)
    if name is not None:
        return name == "inductor"
    return local_function(ctx, backend.value) is None


class NvgemmBackend(Rule):
    change = Change.ADOPT
    code = "TU503"
    name = "max-autotune-nvgemm"
    summary = "`torch.compile(mode=\"max-autotune\")`: torch 2.14 can autotune GEMMs with NVGEMM (opt-in)."
    enabled_by_default = False
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE
    # `mode="max-autotune"`: the word inside a longer value
    looks_for = LooksFor(in_strings=("autotune", "max_autotune", "max_autotune_gemm"))
    reads_unfocused_bodies = True  # every string and attribute in the file, and local backend functions
    docs = RuleDocs(
        what=f"""
        Finds `torch.compile` / `torch.compiler.compile` calls and decorators with
        `mode="max-autotune"` or `mode="max-autotune-no-cudagraphs"` written as a literal, or
        with a literal `options={{"max_autotune": True}}` (or `"max_autotune_gemm": True`). Not
        reported: files that already choose GEMM backends (a string containing `NVGEMM`, the
        option `{SHORT_OPTION}` or the variable `{ENV}` anywhere in the file), a mode held in
        a variable, other modes, and calls with another backend (`backend="eager"`, a function
        defined in the file), which gets the mode for itself. Off by default; informational.
        """,
        why=f"""
        Max-autotune benchmarks GEMM implementations from the backends listed in
        `{OPTION}`; its default, read once from `{ENV}` when
        `torch._inductor.config` is imported, is `"{DEFAULT}"`. torch 2.14's release adds
        CUTLASS GEMM kernels generated with CuTeDSL under the `NVGEMM` backend (epilogue
        fusion, scaled and NVFP4 GEMMs), and it is used only when listed. Inductor then also
        requires: a CUDA device (not ROCm), {MODULES} importable, max-autotune on, no AOT
        Inductor, sizes that are not unbacked symbols (so not dims declared with
        `@dynamic_spec`), and 16-byte-aligned operands; otherwise it silently keeps the other
        backends. Whether it wins is model-specific: the release gives no speed-up figures.
        """,
        fix=f"""
        No automatic fix: it is an opt-in that needs extra packages and a benchmark. On NVIDIA
        GPUs with {MODULES} installed, either set, before the first compiled call,

            torch._inductor.config.{SHORT_OPTION} = "{WITH_NVGEMM}"

        (or wrap the first call in `torch._inductor.config.patch({SHORT_OPTION}="{WITH_NVGEMM}")`),
        or export `{ENV}={WITH_NVGEMM}` before Python imports torch. With `options=` instead of
        `mode=`, add `"{SHORT_OPTION}": "{WITH_NVGEMM}"` to the dict; `mode=` and `options=`
        together raise RuntimeError ("Either mode or options can be specified, but both can't
        be specified at the same time.").
        """,
        fix_safety="There is no fix: which GEMM backend is fastest is decided by measuring.",
        wheels_vs_notes=f"""
        The release article presents NVGEMM as new in 2.14. The wheels show the option
        already accepting `NVGEMM` in 2.13.0 (through a module named `cutlass_api`); 2.14.1
        switches it to `cutlass.operators` and adds the epilogue-fusion and scaled/NVFP4 paths.
        The article does not say how to turn it on: it is off by default (`{DEFAULT}`),
        and the environment variable is read only once, at import.
        """,
    )
    examples = (
        Example(
            "max-autotune as a call and as a decorator",
            """
            import torch

            fast = torch.compile(torch.nn.Linear(64, 64), mode="max-autotune")

            @torch.compile(mode="max-autotune-no-cudagraphs")
            def mlp(x, w):
                return torch.relu(x @ w)
            """,
            findings=2,
        ),
        Example(
            "options instead of a mode",
            """
            from torch import compile as tcompile

            fast = tcompile(torch_model, options={"max_autotune": True, "triton.cudagraphs": True})
            """,
        ),
        Example(
            "not reported: NVGEMM already chosen, another mode",
            """
            import torch
            import torch._inductor.config

            torch._inductor.config.max_autotune_gemm_backends = "ATEN,TRITON,CPP,NVGEMM"
            fast = torch.compile(torch.nn.Linear(64, 64), mode="max-autotune")
            slow = torch.compile(torch.nn.Linear(64, 64), mode="reduce-overhead")
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        calls = ctx.calls_to(COMPILE)
        if not calls or _configured(ctx):
            return
        for call, qualname in calls:
            if not _inductor(ctx, call):
                continue
            mode = keyword(call, "mode")
            if mode is not None and string_value(mode.value) in MODES:
                ctx.report(
                    mode.value,
                    f'`{qualname}(mode="{string_value(mode.value)}")`: {WHAT}',
                    help=f'{NEEDS}: set `torch._inductor.config.{SHORT_OPTION} = "{WITH_NVGEMM}"` before the first '
                    f"compiled call, or `{ENV}={WITH_NVGEMM}` in the environment before torch is imported",
                )
                continue
            options = keyword(call, "options")
            key = _autotune_options(options.value) if options is not None else None
            if key is not None:
                ctx.report(
                    key,
                    f"`{qualname}(options={{{ctx.segment(key)}: True}})`: {WHAT}",
                    help=f'{NEEDS}: add `"{SHORT_OPTION}": "{WITH_NVGEMM}"` to this `options` dict',
                )


RULE = NvgemmBackend()
