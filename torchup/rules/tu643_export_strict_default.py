"""TU643: ``torch.export.export`` without ``strict=`` traces in non-strict mode since torch 2.8."""

from __future__ import annotations

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Severity
from torchup.core.lexing import Spans
from torchup.prefilter.calls import every_call_passes
from torchup.rules.tu601_torch_load_weights_only import Given, given, keyword_fix, uses

# `export_for_training` (2.5-2.10) changed its default with `export`; TU638 renames it to `export`.
EXPORTS = frozenset({"torch.export.export", "torch.export.export_for_training"})
PARAMETERS = {"strict": None}  # keyword-only in every release that has it
MESSAGE = (
    "without `strict=` traces in non-strict mode since torch 2.8 (it was strict, through TorchDynamo): the "
    "module's Python runs as is while it is traced, with its side effects, and fewer of the graph's "
    "assumptions are checked"
)
HELP = (
    "check that the program exports as you expect in non-strict mode and say so with `strict=False`; "
    "`strict=True` traces through TorchDynamo again"
)


class ExportStrictDefault(Rule):
    change = Change.BEHAVES
    code = "TU643"
    name = "export-strict-default"
    summary = "`torch.export.export` without `strict=` traces in non-strict mode since torch 2.8."
    since = "2.8"
    severity = Severity.WARNING
    fix_availability = FixAvailability.UNSAFE
    looks_for = LooksFor(names=tuple(sorted(EXPORTS)))
    api_change_kinds = ("default-changed",)  # (export_for_training's deprecation and removal: TU638)
    docs = RuleDocs(
        what="""
        Finds calls of `torch.export.export` and `torch.export.export_for_training` (any import
        form, also through `functools.partial`) that do not pass `strict=` (by keyword or as a
        key of a visible `**{...}` dict). Runs by default for code on torch 2.7 or older (the
        from-version).

        Not reported: a call with `**options` of unknown content, `torch.onnx.export` (TU606),
        `torch.jit.trace`, and other libraries' `export` (`model.export(format="onnx")`).
        """,
        why="""
        torch 2.8 changed `strict: bool = True` to `strict: bool = False` in `torch.export.export`
        and `export_for_training` (torch/export/__init__.py: 2.7.1 and 2.8.0). Strict mode traced
        the module with TorchDynamo, which checks that the graph is sound and refuses Python it
        cannot follow; non-strict mode runs the module's Python with fake tensors: side effects
        in `forward` (a print, a list append, a counter) happen during export, some implicit
        assumptions are no longer checked, and code that failed to export in strict mode may now
        export, or the reverse. Nothing warns: the same call silently traces another way. The
        exported program's operators are the same IR either way, and for code both modes accept
        it computes the same results.
        """,
        fix="""
        Pass `strict=True`, TorchDynamo's tracing as in torch 2.7 and older; or, better, try the
        new default and say so with `strict=False` once what it exports is checked.
        """,
        fix_safety="""
        Unsafe: `strict=True` brings back the tracer of 2.7, not all it did. The exported program
        computes the same (proven by running an export under torch 2.7.1 and the fixed call under
        2.14.1: docs/proofs.md), but side effects in `forward` differ across releases whatever
        the fix: a `forward` that appends to a list appended a real tensor under 2.7.1's default
        (strict), appends a `FakeTensor` under 2.14.1's default (non-strict), and nothing at all
        under 2.14.1 with `strict=True` (measured with both wheels). And strict tracing may
        refuse code that non-strict tracing takes.
        """,
        wheels_vs_notes="""
        The 2.8 release notes announce the new default; the wheels show it in both functions
        (`export_for_training` was removed in 2.11: TU638).
        """,
    )
    examples = (
        Example(
            "an export of a small module",
            """
            import torch

            class Scale(torch.nn.Module):
                def forward(self, x):
                    return torch.relu(x) * 2

            x = torch.arange(-2.0, 2.0, 0.5)
            program = torch.export.export(Scale(), (x,))
            y = program.module()(x)
            """,
            fixed="""
            import torch

            class Scale(torch.nn.Module):
                def forward(self, x):
                    return torch.relu(x) * 2

            x = torch.arange(-2.0, 2.0, 0.5)
            program = torch.export.export(Scale(), (x,), strict=True)
            y = program.module()(x)
            """,
            unsafe=True,
            versions=("2.7", "2.14"),
        ),
        Example(
            "not reported: strict given, options of unknown content, the ONNX exporter",
            """
            import torch
            from torch.export import export

            def exported(model, inputs, **options):
                return export(model, inputs, strict=False), export(model, inputs, **options)

            def to_onnx(model, inputs):
                torch.onnx.export(model, inputs, "model.onnx", dynamo=True)
            """,
            findings=0,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        # (torch's own sources call `export(..., strict=...)` in files where nothing else is found)
        return super().may_report(spans) and not every_call_passes(
            spans, self.triggers, frozenset(PARAMETERS), self.name_requirements
        )

    def check(self, ctx: Context) -> None:
        for use in uses(ctx, EXPORTS):
            if use.call is None or given(use.call, PARAMETERS, use.skip) is not Given.NO:
                continue
            function = use.qualname.rpartition(".")[2]
            fix = keyword_fix(ctx, use.call, "strict", "True",
                              "pass `strict=True` (TorchDynamo's tracing, the default before 2.8)",
                              Applicability.UNSAFE)
            through = " through `functools.partial`" if use.skip else ""
            ctx.report(use.node, f"`torch.export.{function}`{through} {MESSAGE}", help=HELP, fix=fix)


RULE = ExportStrictDefault()
