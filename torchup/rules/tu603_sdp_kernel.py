"""TU603: ``torch.backends.cuda.sdp_kernel`` warns since torch 2.3; ``torch.nn.attention.sdpa_kernel``
takes the list of backends to enable."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import Edits, bind_call, has_comment
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix, Severity
from torchup.rules._arguments import from_imports

OLD = "torch.backends.cuda.sdp_kernel"
NAMES = frozenset({OLD})
NEW = "torch.nn.attention.sdpa_kernel"
BACKEND = "torch.nn.attention.SDPBackend"
# sdp_kernel's parameters, in order; each defaults to True.
PARAMETERS = ["enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn"]
# The list sdp_kernel builds and hands to sdpa_kernel, in its order (2.14.1: torch/backends/cuda/__init__.py:697-705).
BACKENDS = (
    ("enable_flash", "FLASH_ATTENTION"),
    ("enable_mem_efficient", "EFFICIENT_ATTENTION"),
    ("enable_math", "MATH"),
    ("enable_cudnn", "CUDNN_ATTENTION"),
)
WARNING = (
    "FutureWarning: `torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
    "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with "
    "updated signature."
)
HELP = (
    "use `torch.nn.attention.sdpa_kernel([...])` with the backends left enabled, in this order: "
    "SDPBackend.FLASH_ATTENTION (enable_flash), EFFICIENT_ATTENTION (enable_mem_efficient), MATH "
    "(enable_math), CUDNN_ATTENTION (enable_cudnn); an argument not given counts as True"
)


class SdpKernelDeprecated(Rule):
    change = Change.WARNS
    code = "TU603"
    name = "sdp-kernel-deprecated"
    summary = (
        "`torch.backends.cuda.sdp_kernel(enable_...=)` warns since torch 2.3; use "
        "`torch.nn.attention.sdpa_kernel([SDPBackend...])`."
    )
    since = "2.3"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SOMETIMES
    looks_for = LooksFor(names=(OLD,))
    docs = RuleDocs(
        what="""
        Finds every reference to `torch.backends.cuda.sdp_kernel` (any import form): calls, in a
        `with` statement or as a decorator, the name passed on, and `from torch.backends.cuda
        import sdp_kernel` itself. Not reported: `torch.nn.attention.sdpa_kernel` and the flag
        functions `torch.backends.cuda.enable_flash_sdp` and the like, which do not warn.
        """,
        why=f"""
        torch 2.3 made `sdp_kernel` a wrapper of the new `torch.nn.attention.sdpa_kernel` that
        warns (2.3.1: `warnings.warn` when the context is entered, torch/backends/cuda/__init__.py:342;
        from 2.4.1 `@deprecated`, when it is called: :381 there, :674 in 2.14.1):

            {WARNING}
        """,
        fix="""
        Where every argument is a literal: `sdp_kernel(enable_flash=False, enable_mem_efficient=
        False)` -> `sdpa_kernel([SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION])`, the backends whose
        flag is true (an omitted flag is True), in the order sdp_kernel lists them: flash,
        efficient, math, cudnn. `sdpa_kernel` and `SDPBackend` are imported from
        `torch.nn.attention` when the file has no name for them; a `from torch.backends.cuda
        import sdp_kernel` left unused is removed. No fix for flags that are expressions, `*args`
        / `**kwargs`, or a call with a comment inside.
        """,
        fix_safety="""
        Safe: in every wheel from 2.3.1 to 2.15.0 the body of `sdp_kernel` is that list, built with `if
        enable_flash:` ... `if enable_cudnn:`, then `with sdpa_kernel(backend_list) as context:
        yield context` (2.14.1: torch/backends/cuda/__init__.py:697-710): the fix makes the same
        call. Both yield `{}`, and both are context managers that also decorate. The positional
        order of the old parameters (`enable_flash, enable_math, enable_mem_efficient,
        enable_cudnn`) is read as such, not as the list's order.
        """,
        wheels_vs_notes="""
        torch 2.1 and 2.2 had `sdp_kernel` without a warning and without `enable_cudnn` (it set the
        three flags itself); 2.3.1 added `enable_cudnn=True`, `torch.nn.attention.sdpa_kernel`
        and the warning (FutureWarning on entering the context), 2.4.1 the `@deprecated`
        decorator (the warning moved to the call). 2.15.0 still has it, unchanged. So code written
        for 2.2 that passes no `enable_cudnn` enables cuDNN attention from 2.3 on; the fix keeps
        that (it reproduces 2.3+, the releases that warn).
        """,
    )
    examples = (
        Example(
            "the math backend on the CPU",
            """
            import torch
            import torch.nn.functional as F
            g = torch.Generator().manual_seed(0)
            q, k, v = (torch.randn(2, 3, 16, 8, generator=g) for _ in range(3))
            with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            """,
            fixed="""
            import torch
            import torch.nn.functional as F
            from torch.nn.attention import SDPBackend, sdpa_kernel
            g = torch.Generator().manual_seed(0)
            q, k, v = (torch.randn(2, 3, 16, 8, generator=g) for _ in range(3))
            with sdpa_kernel([SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION]):
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            """,
        ),
        Example(
            "a from import, positional flags (flash, math, mem_efficient)",
            """
            import torch
            from torch.backends.cuda import sdp_kernel
            g = torch.Generator().manual_seed(0)
            q, k, v = (torch.randn(1, 2, 8, 4, generator=g) for _ in range(3))
            with sdp_kernel(True, True, False, False):
                out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            """,
            fixed="""
            import torch
            from torch.nn.attention import SDPBackend, sdpa_kernel
            g = torch.Generator().manual_seed(0)
            q, k, v = (torch.randn(1, 2, 8, 4, generator=g) for _ in range(3))
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
                out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            """,
            findings=2,
        ),
        Example(
            "flags that are expressions: reported without a fix",
            """
            import torch

            def attend(q, k, v, flash):
                with torch.backends.cuda.sdp_kernel(enable_flash=flash, enable_math=not flash):
                    return torch.nn.functional.scaled_dot_product_attention(q, k, v)
            """,
        ),
        Example(
            "not reported: sdpa_kernel and the flag functions",
            """
            import torch
            from torch.nn.attention import SDPBackend, sdpa_kernel

            torch.backends.cuda.enable_flash_sdp(False)
            with sdpa_kernel(SDPBackend.MATH):
                pass
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for alias, _ in from_imports(ctx.resolver, NAMES):
            ctx.report(
                alias,
                f"`{OLD}` is deprecated: each call warns (FutureWarning); use `{NEW}`",
                help="torchup fixes the calls; this import goes when no use is left",
            )
        for node, _, call in ctx.references_to(NAMES):
            fix = self._fix(ctx, node, call) if call is not None else None
            ctx.report(
                node,
                f"`{OLD}()` warns (FutureWarning: deprecated); use `{NEW}()` with the list of backends to enable"
                if call is not None else f"`{OLD}` is deprecated (FutureWarning when called); use `{NEW}`",
                fix=fix,
                help=None if fix else HELP,
            )

    def _fix(self, ctx: Context, node: ast.expr, call: ast.Call) -> Fix | None:
        bound = bind_call(call, PARAMETERS)
        if bound is None or bound.has_star_args or bound.has_star_kwargs:
            return None
        flags = {}
        for name in PARAMETERS:
            argument = bound.get(name)
            if argument is not None and not isinstance(argument.value, ast.Constant):
                return None
            flags[name] = True if argument is None else bool(argument.value.value)  # type: ignore[union-attr]
        start, end = ctx.source.node_range(call)
        kernel = ctx.symbol_reference(NEW, call)
        backend = ctx.symbol_reference(BACKEND, call)
        if kernel is None or backend is None or has_comment(ctx.source, start, end):
            return None
        enabled = ", ".join(f"{backend[0]}.{member}" for flag, member in BACKENDS if flags[flag])
        text = f"{kernel[0]}([{enabled}])"
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        roots = {kernel[0].partition(".")[0], backend[0].partition(".")[0]}
        released = (id(root),) if isinstance(root, ast.Name) and root.id not in roots else ()
        imports = kernel[1] + (backend[1] if enabled else ())
        return Fix(f"use `{text}`", Applicability.SAFE, (Edits(ctx.source).replace(call, text),), imports, released)


RULE = SdpKernelDeprecated()
