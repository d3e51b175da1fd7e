"""TU170: ``torch.distributed.gather_into_tensor`` warns in torch 2.14; it is ``gather_single``."""

from __future__ import annotations

from typing import ClassVar

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.core.facts import FACTS
from torchup.rules._arguments import rename_reference

OLD = "torch.distributed.gather_into_tensor"
_FACTS = FACTS["deprecated_functions"][OLD]
NEW_NAME = _FACTS["replacement"].rpartition(".")[2]
OLD_NAME = OLD.rpartition(".")[2]
MODULES = ("torch.distributed", "torch.distributed.distributed_c10d")  # both export both names
NAMES = frozenset(f"{module}.{OLD_NAME}" for module in MODULES)
WARNING = _FACTS["warning"]


class GatherIntoTensor(Rule):
    change = Change.WARNS
    code = "TU170"
    name = "gather-into-tensor-deprecated"
    summary = "`torch.distributed.gather_into_tensor` warns in torch 2.14; call `gather_single` (same arguments)."
    since = "2.14"
    until = _FACTS["until"]
    severity = Severity.WARNING
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(names=tuple(sorted(NAMES)))
    renames: ClassVar[dict[str, str]] = {name: f"{name.rpartition('.')[0]}.{NEW_NAME}" for name in sorted(NAMES)}
    docs = RuleDocs(
        what="""
        Finds references to `torch.distributed.gather_into_tensor` (also through
        `torch.distributed.distributed_c10d`; any import form): calls and the function passed on.
        Only when migrating to torch 2.14: 2.15 no longer warns.
        """,
        why=f"""
        torch 2.14 added both `gather_single` and `gather_into_tensor`, and marked the second
        deprecated from the start; every call warns:

            {WARNING}
        """,
        fix="""
        Refer to `gather_single` instead: `dist.gather_into_tensor(...)` ->
        `dist.gather_single(...)`; a name from `from torch.distributed import gather_into_tensor`
        becomes `gather_single`, imported from the same module (the old import is removed when
        nothing else uses it). The arguments stay as they are.
        """,
        fix_safety="""
        Safe: in torch 2.14.1 `gather_into_tensor` is a wrapper with the same signature
        (`tensor, gather_tensor=None, dst=None, group=None, async_op=False, group_dst=None`)
        whose body is `return gather_single(tensor, gather_tensor, dst, group, async_op,
        group_dst)`, and 2.15.0 keeps both names with that same body.
        """,
        wheels_vs_notes="""
        The release notes list `gather_into_tensor` among 2.14's new FutureWarnings and say 2.15
        no longer warns. The wheels agree, and add that torch 2.13.0 had neither function, and that
        2.15.0 keeps `gather_into_tensor` as a documented alias ("kept for backward
        compatibility"). So this rule applies to a 2.14 target only (`--target-version 2.14`); the
        fix is still right for 2.15.
        """,
    )
    examples = (
        Example(
            "a module alias and a from import",
            """
            import torch.distributed as dist
            from torch.distributed import gather_into_tensor

            def collect(t, out):
                dist.gather_into_tensor(t, out, dst=0)
                gather_into_tensor(t, out, 0)
            """,
            fixed="""
            import torch.distributed as dist
            from torch.distributed import gather_single

            def collect(t, out):
                dist.gather_single(t, out, dst=0)
                gather_single(t, out, 0)
            """,
            findings=2,
            executable=False,
        ),
        Example(
            "not reported: all_gather_into_tensor, another function",
            """
            import torch.distributed as dist

            def collect(t, out):
                dist.all_gather_into_tensor(out, t)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for node, qualname, _ in ctx.references_to(NAMES):
            ctx.report(
                node,
                f"`{qualname}` warns in torch 2.14 (FutureWarning: deprecated); `{NEW_NAME}` takes the same arguments",
                fix=rename_reference(ctx, node, qualname, NEW_NAME),
                help=f"use `{qualname.rpartition('.')[0]}.{NEW_NAME}`",
            )


RULE = GatherIntoTensor()
