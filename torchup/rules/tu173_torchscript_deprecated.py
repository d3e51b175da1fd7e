"""TU173: TorchScript's entry points warn by default in torch 2.14 (FutureWarning, was DeprecationWarning)."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.core.facts import FACTS

ENTRY_POINTS = {name: facts for name, facts in FACTS["deprecated_functions"].items() if name.startswith("torch.jit.")}
# Each under torch.jit and under the private module that defines it (torch.jit._script.script).
QUALNAMES = {
    **{name: name for name in ENTRY_POINTS},
    **{f"{facts['module']}.{name.rpartition('.')[2]}": name for name, facts in ENTRY_POINTS.items()},
}
NAMES = frozenset(QUALNAMES)


# Decorators whose function (or class) body TorchScript compiles instead of Python running it.
COMPILING = frozenset({"torch.jit.script", "torch.jit.script_method", "torch.jit.interface"})


def _compiled_bodies(ctx: Context, decorators: set[int]) -> list[tuple[int, int]]:
    """The bodies (as offsets) of the functions and classes decorated with one of ``decorators``."""
    found: list[tuple[int, int]] = []
    if not decorators:
        return found
    for node in ctx.walk():  # (the decorators spell a trigger word)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
            id(decorator) in decorators for decorator in node.decorator_list
        ):
            found.append((ctx.source.node_range(node.body[0])[0], ctx.source.node_range(node.body[-1])[1]))
    return found


class TorchScriptDeprecated(Rule):
    change = Change.WARNS
    code = "TU173"
    name = "torchscript-deprecated"
    summary = "TorchScript's entry points (`torch.jit.script`, `trace`, `save`, `load`, ...) warn by default in 2.14."
    since = "2.14"
    enabled_by_default = True  # (a warning: on by default only for a from-version before 2.14)
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(names=tuple(sorted(NAMES)))
    docs = RuleDocs(
        what="""
        Finds calls, decorators and other references to `torch.jit.script`, `trace`,
        `trace_module`, `script_method`, `interface`, `save`, `load`, `freeze`,
        `optimize_for_inference`, `fork` and `wait` (any import form, also through
        `torch.jit._script` and the other private modules). Not reported: references inside the
        body of a function or class decorated with `@torch.jit.script` (or `script_method`,
        `interface`), which TorchScript compiles rather than Python runs: the decorator is
        the finding there. Informational: the code keeps working. On by default for code that
        runs on a release before 2.14 today (the from-version: `--from-version`, else the
        project's torch requirement), for which the warning is new; `--select TU173` reports it
        whatever the from-version, to plan the move away from TorchScript.
        """,
        why="\n".join(
            ["torch 2.13 already said these functions are deprecated, with a DeprecationWarning,",
             "which Python hides unless it is raised in `__main__` (torch raises it inside",
             "`torch/jit`). torch 2.14 raises a FutureWarning instead, which Python shows by",
             "default, so calls now print, e.g.:", ""]
            + [f"    {facts['warning']}" for name, facts in ENTRY_POINTS.items() if name in ("torch.jit.script",
                                                                                       "torch.jit.save")]
            + ["", "(`script`, `script_method`, `trace`, `trace_module`, `save` and `load` say \"... is not",
               "supported in Python 3.14+ and may break.\" on Python 3.14 and later.) A test suite",
               "run with `-W error`, or with pytest's `filterwarnings = error`, now fails on them.",
               "torch 2.15 warns the same way."]
        ),
        fix="""
        No automatic fix: the replacement depends on what TorchScript was used for. For speed,
        `torch.compile(model)`; for a graph to save, load and run without Python,
        `torch.export.export(model, args)` with `torch.export.save` / `torch.export.load` (or
        AOTInductor packaging); `torch.jit.fork`/`wait` have no direct successor (use
        `torch.compile`, or Python threads for I/O). Until then, filter the warning explicitly:
        `warnings.filterwarnings("ignore", message=".*torch.jit", category=FutureWarning)`.
        """,
        fix_safety="There is no fix: moving off TorchScript is a design change.",
        wheels_vs_notes="""
        The release notes name `trace_method`; torch.jit has no such function. The wheels warn
        from `torch.jit.trace_module`, whose message calls itself "`torch.jit.trace_method`". The
        wheels also show that `optimize_for_inference` warns twice (it calls `freeze`), that
        the texts differ on Python 3.14+, and that `torch.jit.unused`, `export`, `is_scripting`
        and `ScriptModule` do not warn (`torch.jit.ignore` only for its long-deprecated
        `ignore(True)` form).
        """,
    )
    examples = (
        Example(
            "scripting, tracing and saving",
            """
            import torch

            @torch.jit.script
            def gelu(x):
                return x * torch.sigmoid(1.702 * x)

            model = torch.jit.trace(torch.nn.Linear(4, 4), torch.ones(1, 4))
            torch.jit.save(model, "model.pt")
            """,
            findings=3,
        ),
        Example(
            "from imports and the private modules",
            """
            from torch.jit import fork, wait
            from torch.jit._serialization import load

            future = fork(lambda: 1)
            value = wait(future)
            model = load("model.pt")
            """,
            findings=3,
        ),
        Example(
            "not reported: helpers that do not warn",
            """
            import torch

            class Net(torch.nn.Module):
                @torch.jit.ignore
                def debug(self):
                    return torch.jit.is_scripting()
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        references = ctx.references_to(NAMES)
        compiled = _compiled_bodies(ctx, {id(node) for node, qualname, _ in references
                                          if QUALNAMES[qualname] in COMPILING})
        for node, qualname, _ in references:
            start, _end = ctx.source.node_range(node)
            if any(body_start <= start < body_end for body_start, body_end in compiled):
                continue  # TorchScript compiles this body: the call never runs in Python, so never warns
            public = QUALNAMES[qualname]
            replacement = ENTRY_POINTS[public]["replacement"]
            ctx.report(
                node,
                f"`{public}` warns by default from torch 2.14 (FutureWarning: TorchScript is deprecated)",
                help=f"move to {replacement} (`torchup rule TU173`)",
            )


RULE = TorchScriptDeprecated()
