"""TU613: ``DistributedDataParallel(broadcast_buffers=...)`` warns since torch 2.13: ``forward_sync_buffers``."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Edit, Fix, Severity
from torchup.rules.tu601_torch_load_weights_only import uses

DDP = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"})
OLD, NEW = "broadcast_buffers", "forward_sync_buffers"
POSITION = 4  # DistributedDataParallel(module, device_ids, output_device, dim, broadcast_buffers, ...), 2.0 to 2.15
WARNING = (
    "FutureWarning: `broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. IMPORTANT: unlike "
    "`broadcast_buffers=False`, `forward_sync_buffers=False` still syncs buffers at init."
)


class DdpBroadcastBuffers(Rule):
    change = Change.WARNS
    code = "TU613"
    name = "ddp-broadcast-buffers-deprecated"
    summary = "`DistributedDataParallel(broadcast_buffers=...)` warns since torch 2.13: use `forward_sync_buffers=`."
    since = "2.13"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SOMETIMES
    looks_for = LooksFor(names=tuple(sorted(DDP)))
    docs = RuleDocs(
        what=f"""
        Finds `torch.nn.parallel.DistributedDataParallel(...)` (any import form: `DDP`, a saved
        name, `functools.partial`) given `{OLD}`, by keyword or as its fifth positional argument.
        Not reported: a call without it, and reading the attribute (`model.{OLD}`, a property of
        `{NEW}` now, which does not warn).
        """,
        why=f"""
        torch 2.13 added `{NEW}` and deprecated `{OLD}`; a constructor given it warns:

            {WARNING} ...

        `{OLD}=True` meant: sync the buffers at construction and before each forward, which
        `{NEW}=True` does. `{OLD}=False` also skipped the sync at construction, which no new
        argument does yet: torch's warning says to keep `{OLD}=False` until an
        `init_sync_buffers` argument exists. Given both, `{OLD}` is ignored (another FutureWarning).
        """,
        fix=f"""
        `{OLD}=True` (a keyword) -> `{NEW}=True`. No fix for `False` (keep it while it still works,
        or use `{NEW}=False` where syncing the buffers once at construction is fine), for an
        expression, or for a positional argument.
        """,
        fix_safety=f"""
        Safe: in 2.13.0 and 2.14.1, `{NEW}=True` sets the same forward sync and the same sync at
        construction as `{OLD}=True` (torch/nn/parallel/distributed.py: 2.14.1 lines 961-990), with
        no warning; checked by constructing both in a one-process gloo group under both releases.
        `{NEW}` does not exist before 2.13: the fixed code needs torch 2.13 or later.
        """,
    )
    examples = (
        Example(
            "buffers synced before every forward",
            """
            from torch.nn.parallel import DistributedDataParallel as DDP

            def wrap(model, rank):
                return DDP(model, device_ids=[rank], broadcast_buffers=True)
            """,
            fixed="""
            from torch.nn.parallel import DistributedDataParallel as DDP

            def wrap(model, rank):
                return DDP(model, device_ids=[rank], forward_sync_buffers=True)
            """,
            executable=False,  # (a process group: tests/test_rules_upgrade_misc.py runs it in a gloo group)
        ),
        Example(
            "rank-local buffers, and a flag: reported, no fix",
            """
            import torch

            def wrap(model, rank, args):
                local = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)
                return local, torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=not args.no_bb)
            """,
            findings=2,
        ),
        Example(
            "not reported: the new argument, the attribute",
            """
            import torch

            def wrap(model):
                ddp = torch.nn.parallel.DistributedDataParallel(model, forward_sync_buffers=True)
                return ddp.broadcast_buffers
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for use in uses(ctx, DDP):
            call = use.call
            if call is None:
                continue
            keyword = next((k for k in call.keywords if k.arg == OLD), None)
            position = use.skip + POSITION
            value = keyword.value if keyword is not None else call.args[position] if len(call.args) > position else None
            if value is None or any(isinstance(arg, ast.Starred) for arg in call.args[:position]):
                continue
            fix = None
            if keyword is not None and isinstance(value, ast.Constant) and value.value is True \
                    and not any(k.arg == NEW for k in call.keywords):
                start, _ = ctx.source.node_range(keyword)
                fix = Fix(f"use `{NEW}=True`", Applicability.SAFE, (Edit(start, start + len(OLD), NEW),))
            advice = "" if fix is not None else (
                f"; `{OLD}=False` has no replacement yet (`{NEW}=False` still syncs buffers at construction)"
                if isinstance(value, ast.Constant) and value.value is False else f"; `{NEW}=` takes the same flag"
            )
            ctx.report(keyword or value, f"`DistributedDataParallel({OLD}=...)` is deprecated since torch 2.13 "
                       f"(FutureWarning): use `{NEW}=`{advice}", fix=fix)


RULE = DdpBroadcastBuffers()
