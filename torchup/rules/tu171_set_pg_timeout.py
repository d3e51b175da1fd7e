"""TU171: ``distributed_c10d._set_pg_timeout`` warns in torch 2.14; it is ``torch.distributed.set_timeout``."""

from __future__ import annotations

from typing import ClassVar

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.core.facts import FACTS
from torchup.rules._arguments import rename_reference

OLD = "torch.distributed.distributed_c10d._set_pg_timeout"
_FACTS = FACTS["deprecated_functions"][OLD]
REPLACEMENT = _FACTS["replacement"]
NEW_NAME = REPLACEMENT.rpartition(".")[2]
WARNING = _FACTS["warning"]


class SetPgTimeout(Rule):
    change = Change.WARNS
    code = "TU171"
    name = "set-pg-timeout-deprecated"
    summary = "`distributed_c10d._set_pg_timeout` warns in torch 2.14; call `torch.distributed.set_timeout`."
    since = "2.14"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(names=(OLD,))
    renames: ClassVar[dict[str, str]] = {OLD: f"{OLD.rpartition('.')[0]}.{NEW_NAME}"}
    docs = RuleDocs(
        what="""
        Finds references to the private `torch.distributed.distributed_c10d._set_pg_timeout`
        (any import form; `torch.distributed` itself never exported it). Not reported: the bare
        name after `from torch.distributed.distributed_c10d import *`, which does not bind
        names that start with `_`.
        """,
        why=f"""
        torch 2.14 makes the function public as `torch.distributed.set_timeout` and turns the
        private one into a deprecated wrapper; every call warns (2.15 too):

            {WARNING}
        """,
        fix=f"""
        `c10d._set_pg_timeout(timeout, group)` -> `c10d.{NEW_NAME}(timeout, group)` (the same
        module exports it, as does `torch.distributed`); a name imported with
        `from torch.distributed.distributed_c10d import _set_pg_timeout` becomes `{NEW_NAME}`,
        imported from the same module. The arguments stay as they are.
        """,
        fix_safety=f"""
        Safe: in torch 2.14.1 and 2.15.0 `_set_pg_timeout(timeout, group=None)` is exactly
        `{NEW_NAME}(timeout, group)`, with the same parameter names and defaults. The fixed code
        needs torch 2.14 or later (2.13.0 has no `{NEW_NAME}`).
        """,
        wheels_vs_notes=f"""
        The release notes say "`_set_pg_timeout` (use `torch.distributed.set_timeout`)". The
        wheels add that its implementation also changed between 2.13.0 and 2.14.1: 2.13 set the
        timeout on the group's Gloo and NCCL backends it found (warning "Set timeout is now only
        supported for either nccl or gloo." when there were none), while `{NEW_NAME}` calls
        `group.set_timeout(timeout)`, which reaches every backend of the group; backends that
        cannot change their timeout (MPI, UCC) warn and keep it. That change comes with 2.14
        whichever name is called.
        """,
    )
    examples = (
        Example(
            "the module and a from import",
            """
            from datetime import timedelta

            import torch.distributed.distributed_c10d as c10d
            from torch.distributed.distributed_c10d import _set_pg_timeout

            def relax(group):
                c10d._set_pg_timeout(timedelta(minutes=30), group)
                _set_pg_timeout(timeout=timedelta(minutes=30))
            """,
            fixed="""
            from datetime import timedelta

            import torch.distributed.distributed_c10d as c10d
            from torch.distributed.distributed_c10d import set_timeout

            def relax(group):
                c10d.set_timeout(timedelta(minutes=30), group)
                set_timeout(timeout=timedelta(minutes=30))
            """,
            findings=2,
            executable=False,
        ),
        Example(
            "not reported: the public function",
            """
            from datetime import timedelta
            import torch.distributed as dist

            dist.set_timeout(timedelta(minutes=30))
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        # (`from ... import *` binds no `_` name: the resolver leaves such a bare name unresolved.)
        for node, qualname, _ in ctx.references_to(frozenset({OLD})):
            ctx.report(
                node,
                f"`{qualname}` warns in torch 2.14 (FutureWarning: deprecated); `{REPLACEMENT}` does the same",
                fix=rename_reference(ctx, node, qualname, NEW_NAME),
                help=f"use `{REPLACEMENT}`",
            )


RULE = SetPgTimeout()
