"""TU606: ``torch.onnx.export`` without ``dynamo=`` uses the torch.export-based exporter since torch 2.9."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Severity
from torchup.core.lexing import Spans
from torchup.prefilter.calls import every_call_passes
from torchup.prefilter.requirements import NameRequirements
from torchup.rules.tu601_torch_load_weights_only import Given, given, keyword_fix, uses

EXPORT = "torch.onnx.export"
PARAMETERS = {"dynamo": None}  # keyword-only since 2.5: export(model, args=(), f=None, *, ...)
EXPORTED_PROGRAM = "torch.export.export"  # its result goes to the new exporter whatever `dynamo` says
LEGACY_WARNING = (
    "DeprecationWarning: You are using the legacy TorchScript-based ONNX export. Starting in PyTorch 2.9, "
    "the new torch.export-based ONNX exporter has become the default."
)
MESSAGE = (
    "without `dynamo=` uses the torch.export-based ONNX exporter since torch 2.9 (it was the TorchScript-based "
    "one): it needs `onnxscript`, traces with torch.export, returns an `ONNXProgram`, ignores "
    "`operator_export_type`/`custom_opsets`/`training`, and the graph it writes differs"
)
HELP = (
    "try the new exporter (`dynamo=True`, with `dynamic_shapes=` instead of `dynamic_axes=`) and check the model "
    "it writes; `dynamo=False` keeps the TorchScript-based exporter, which is deprecated"
)


class OnnxExportDynamoDefault(Rule):
    change = Change.BEHAVES
    code = "TU606"
    name = "onnx-export-dynamo-default"
    summary = "`torch.onnx.export` without `dynamo=` uses the torch.export-based exporter since torch 2.9."
    since = "2.9"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SAFE
    # (`torch.export.export` is resolved to leave its ExportedPrograms out; naming it makes `export` a
    # path word: `from torch.export import export as ep` cannot hide it)
    looks_for = LooksFor(names=(EXPORT, EXPORTED_PROGRAM))
    docs = RuleDocs(
        what="""
        Finds calls of `torch.onnx.export` (any import form) that do not pass `dynamo=` (by
        keyword or as a key of a visible `**{...}` dict), also through
        `functools.partial(torch.onnx.export, ...)`; `torch.onnx.export` passed to another call is
        reported without a fix.

        Not reported: a call with `**options` of unknown content; a call whose model is written
        as `torch.export.export(...)` (an `ExportedProgram` goes to the new exporter in every
        release, whatever `dynamo` says); `torch.onnx.dynamo_export`, `torch.onnx.utils.export`
        (the TorchScript-based exporter itself), `torch.export.export`, `torch.jit.save`, and
        other libraries' `export` (`model.export(format="onnx")`).
        """,
        why="""
        torch 2.9 changed `dynamo: bool = False` to `dynamo: bool = True` in `torch.onnx.export`
        (torch/onnx/__init__.py: 2.8.0 line 133, 2.9.0 line 72; the docstring: "..
        versionchanged:: 2.9 *dynamo* is now True by default"). The call then goes to
        `torch.onnx._internal.exporter._compat.export_compat`, which traces the model with
        `torch.export` instead of TorchScript: it needs the `onnxscript` package (without it:
        `ModuleNotFoundError: No module named 'onnxscript'`, 2.13.0 and 2.14.1), fails on
        models torch.export cannot trace, converts `dynamic_axes` to dynamic shapes (with a
        warning, or a RuntimeError when it cannot), raises an `opset_version` below 18 to 18
        and converts down, ignores the deprecated options (`training`, `operator_export_type`,
        `do_constant_folding`, `custom_opsets`, `export_modules_as_functions`,
        `autograd_inlining`), returns an `ONNXProgram` instead of None, and writes another graph
        (onnxscript's functions, optimized by default). The `dynamo` keyword itself came in 2.4,
        with default False (torch/onnx/utils.py of 2.4.1; 2.3.1's `export` has no such
        parameter).
        """,
        fix="""
        Adds `dynamo=False` as the call's (or the partial's) last argument, which keeps the
        TorchScript-based exporter the call used before 2.9. The better fix is to move to the new
        exporter (`dynamo=True`, with `dynamic_shapes=`) and check what it writes; torchup
        cannot tell whether the model traces with torch.export.
        """,
        fix_safety=f"""
        Safe: in each wheel from 2.9.0 to 2.15.0, `dynamo=False` takes the `else` branch that
        2.5 to 2.8 took by default (2.4: the same exporter, in torch/onnx/utils.py), calling the
        TorchScript-based `export` with the same arguments (moved from `torch.onnx.utils` to
        `torch.onnx._internal.torchscript_exporter.utils` in 2.9). That branch warns, in 2.13.0
        to 2.15.0,

            {LEGACY_WARNING} ...

        as it did in 2.8.0 and 2.9.0 with "will be the default"; Python shows a
        DeprecationWarning by default only for code in `__main__`. In 2.13.0 and 2.14.1 that
        exporter needs the `onnx` package (`OnnxExporterError: Module onnx is not installed!`).
        torch 2.0 to 2.3 do not know the keyword (TypeError): the fixed code needs torch 2.4 or
        later. What the fix does not keep: the default `opset_version` of both exporters
        (torch/onnx/_constants.py `ONNX_DEFAULT_OPSET`: 17 up to 2.7.1, 18 in 2.8.0, 20 from
        2.9.0), a change of its own; pass `opset_version=` to pin it. Not run by the
        differential tests: the venvs have neither `onnx` nor `onnxscript`, which the exporters
        need. Run by hand with `onnx` (and no `onnxscript`) on the first example: the original
        writes a `Gemm` graph with a dynamic `batch` input under 2.5.1 and 2.6.0 (opset 17) and
        fails under 2.13.0 and 2.14.1 (`No module named 'onnxscript'`); the fix writes the same
        graph under 2.13.0 and 2.14.1 (opset 20).
        """,
        wheels_vs_notes="""
        The wheels show `dynamo: bool = False` from 2.4.1 to 2.8.0 and `True` from 2.9.0 on;
        the 2.8.0 legacy-path warning announced it ("Starting in PyTorch 2.9, the new
        torch.export-based ONNX exporter will be the default"). The TorchScript-based exporter is
        deprecated but still present in 2.15.0 (same branch, same warning).
        """,
    )
    examples = (
        Example(
            "an export with dynamic axes",
            """
            import torch

            model = torch.nn.Linear(3, 2)
            torch.onnx.export(
                model,
                (torch.randn(1, 3),),
                "linear.onnx",
                input_names=["x"],
                dynamic_axes={"x": {0: "batch"}},
            )
            """,
            fixed="""
            import torch

            model = torch.nn.Linear(3, 2)
            torch.onnx.export(
                model,
                (torch.randn(1, 3),),
                "linear.onnx",
                input_names=["x"],
                dynamic_axes={"x": {0: "batch"}}, dynamo=False,
            )
            """,
            executable=False,  # needs the onnx package, which the venvs do not have
        ),
        Example(
            "a from-import and a partial",
            """
            import functools
            from torch.onnx import export

            def save(model, x, path):
                export(model, (x,), path, opset_version=17)

            to_onnx = functools.partial(export, opset_version=17)
            """,
            fixed="""
            import functools
            from torch.onnx import export

            def save(model, x, path):
                export(model, (x,), path, opset_version=17, dynamo=False)

            to_onnx = functools.partial(export, opset_version=17, dynamo=False)
            """,
            findings=2,
            executable=False,
        ),
        Example(
            "not reported: explicit, an ExportedProgram, other exporters",
            """
            import torch

            def save(model, x, options):
                torch.onnx.export(model, (x,), "a.onnx", dynamo=True)
                torch.onnx.export(model, (x,), "b.onnx", **options)
                torch.onnx.export(torch.export.export(model, (x,)), (x,), "c.onnx")
                torch.onnx.dynamo_export(model, x)
                torch.onnx.utils.export(model, (x,), "d.onnx")
                torch.jit.save(torch.jit.script(model), "e.pt")
                model.export(format="onnx")
            """,
            findings=0,
        ),
    )

    def may_report(self, spans: Spans[str] | Spans[bytes]) -> bool:
        # A finding is a use of `torch.onnx.export` (the other name only rules one out): `onnx`
        # must be spelled, not merely `export` (torchup/prefilter/requirements.py).
        if not _ONNX_EXPORT.could_refer(spans.text, spans):
            return False
        return not every_call_passes(spans, self.triggers, frozenset(PARAMETERS), self.name_requirements)

    def check(self, ctx: Context) -> None:
        for use in uses(ctx, frozenset({EXPORT})):
            if use.call is None:
                ctx.report(
                    use.node,
                    f"`{EXPORT}` passed on: a call made through it {MESSAGE}",
                    help=f"wrap it as `functools.partial({EXPORT}, dynamo=False)` to keep the old exporter; {HELP}",
                )
                continue
            if given(use.call, PARAMETERS, use.skip) is not Given.NO or self._exported_program(ctx, use.call, use.skip):
                continue
            fix = keyword_fix(ctx, use.call, "dynamo", "False",
                              "pass `dynamo=False` (the TorchScript-based exporter, the default before 2.9)",
                              Applicability.SAFE)
            through = " through `functools.partial`" if use.skip else ""
            ctx.report(use.node, f"`{EXPORT}`{through} {MESSAGE}", help=HELP, fix=fix)

    @staticmethod
    def _exported_program(ctx: Context, call: ast.Call, skip: int) -> bool:
        """The model, written in the call, is ``torch.export.export(...)``."""
        model = call.args[skip] if len(call.args) > skip else \
            next((k.value for k in call.keywords if k.arg == "model"), None)
        return isinstance(model, ast.Call) and ctx.qualified_name(model.func) == EXPORTED_PROGRAM


_ONNX_EXPORT = NameRequirements((EXPORT,))

RULE = OnnxExportDynamoDefault()
