"""TU161: the nvprof helpers of ``torch.autograd.profiler`` warn in torch 2.15 (removal in 2.17)."""

from __future__ import annotations

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.core.facts import FACTS

NVPROF = {
    name: facts
    for name, facts in FACTS["deprecated_functions"].items()
    if name.rpartition(".")[2] in ("load_nvprof", "EnforceUnique", "parse_nvprof_trace")
}
NAMES = frozenset(NVPROF)
REMOVED_IN = sorted({facts["removed_in"] for facts in NVPROF.values()})[0]
HELP = (
    "record with `torch.profiler.profile` (export_chrome_trace) or with Nsight Systems (`nsys profile` around "
    "`torch.autograd.profiler.emit_nvtx()`) and read the results there"
)


class NvprofDeprecated(Rule):
    change = Change.WARNS
    code = "TU161"
    name = "nvprof-helpers-deprecated"
    summary = f"`load_nvprof`, `parse_nvprof_trace` and `EnforceUnique` warn in torch 2.15 (removed in {REMOVED_IN})."
    since = "2.15"
    severity = Severity.WARNING
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(names=tuple(sorted(NAMES)))
    docs = RuleDocs(
        what="""
        Finds every reference to `torch.autograd.profiler.load_nvprof`,
        `torch.autograd.profiler.parse_nvprof_trace` and `torch.autograd.profiler.EnforceUnique`
        (the only module that defines or re-exports them; any import form): calls, subclasses
        and names passed on. Not reported: the private `_parse_nvprof_trace` and
        `_EnforceUnique` torch 2.15 keeps for itself.
        """,
        why="\n".join(
            ["torch 2.15 marks the three with `@deprecated`, so calling them (or instantiating or",
             "subclassing `EnforceUnique`) warns:", ""]
            + [f"    {facts['warning']}" for facts in NVPROF.values()]
        ),
        fix=f"""
        No automatic fix: there is no successor that reads nvprof files. Move the profiling to
        `torch.profiler.profile` (with `export_chrome_trace` or `key_averages()`), or record with
        Nsight Systems around `torch.autograd.profiler.emit_nvtx()` and analyse the report
        there. `EnforceUnique` is a four-line helper (raise on a key seen twice): copy it if you
        use it. Plan to have done so before torch {REMOVED_IN}.
        """,
        fix_safety="There is no fix: the replacement is another profiling workflow.",
        wheels_vs_notes="""
        The release notes and the 2.15.0 sources agree (FutureWarning, removal in 2.17). The
        sources add private copies (`_parse_nvprof_trace`, `_EnforceUnique`) that the deprecated
        names now delegate to; they are not a public replacement. torch 2.13.0 and 2.14.1 have the
        three without any warning.
        """,
    )
    examples = (
        Example(
            "loading an nvprof trace",
            """
            import torch.autograd.profiler as profiler
            from torch.autograd.profiler import EnforceUnique, parse_nvprof_trace

            events = profiler.load_nvprof("trace.prof")
            raw = parse_nvprof_trace("trace.prof")
            seen = EnforceUnique()
            """,
            findings=3,
        ),
        Example(
            "not reported: emit_nvtx, which stays",
            """
            import torch

            with torch.autograd.profiler.emit_nvtx():
                y = A @ A
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for node, qualname, _ in ctx.references_to(NAMES):
            facts = NVPROF[qualname]
            ctx.report(
                node,
                f"`{qualname}` is deprecated in torch 2.15 and will be removed in torch {facts['removed_in']} "
                "(FutureWarning)",
                help=HELP,
            )


RULE = NvprofDeprecated()
