"""TU152: ``torch.multiprocessing.reductions.reduce_event`` is private in torch 2.15."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.rule import Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.facts import FACTS
from torchup.rules._arguments import from_imports

REDUCE_EVENT = "torch.multiprocessing.reductions.reduce_event"
_FACTS = FACTS["renamed"][REDUCE_EVENT]
PRIVATE = _FACTS["new_name"]
ERROR = _FACTS["error"]
MESSAGE = f"`{REDUCE_EVENT}` is gone in torch 2.15 (now the private `{PRIVATE.rpartition('.')[2]}`)"
HELP = (
    "importing `torch.multiprocessing` already registers how CUDA (and, in 2.15, XPU) events are pickled: "
    "pass the event through a torch.multiprocessing queue, or use `event.ipc_handle()` and "
    "`torch.cuda.Event.from_ipc_handle(device, handle)`"
)


class ReduceEventPrivate(Rule):
    code = "TU152"
    name = "reduce-event-private"
    summary = "`torch.multiprocessing.reductions.reduce_event` is private (`_reduce_event`) in torch 2.15."
    since = "2.15"
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(names=(REDUCE_EVENT,))
    docs = RuleDocs(
        what="""
        Finds `from torch.multiprocessing.reductions import reduce_event` and references to
        `torch.multiprocessing.reductions.reduce_event` through any import of the module (a call,
        or the function passed on, as in `ForkingPickler.register(torch.cuda.Event, reduce_event)`).
        """,
        why=f"""
        torch 2.15 renames the function to `_reduce_event` (it now pickles any event class that
        has IPC handles: `torch.cuda.Event` and `torch.xpu.Event`, and its rebuild function takes
        the class as a third argument), so the public name is gone:

            {ERROR}

        (or `AttributeError` through the module). `rebuild_event` is still there, "kept for BC
        only".
        """,
        fix="""
        No automatic fix, and none is usually needed: `torch.multiprocessing` registers the
        reducer itself when it is imported (`init_reductions()`), so events already travel
        through its queues and `ForkingPickler`. Delete the manual registration. Where the
        reduction itself is needed, build it from public methods:
        `(torch.cuda.Event.from_ipc_handle, (event.device, event.ipc_handle()))`.
        Do not import the private `_reduce_event`.
        """,
        fix_safety="There is no fix: no public function replaces it one for one.",
        wheels_vs_notes="""
        The release notes say the function was made private. The 2.15.0 sources add that it was
        also generalised (CUDA and XPU events; `_rebuild_event(device, handle, event_cls)`), so
        the private function is not the same function under a new name.
        """,
    )
    examples = (
        Example(
            "a from import and a module reference",
            """
            import multiprocessing.reduction
            import torch
            import torch.multiprocessing.reductions as reductions
            from torch.multiprocessing.reductions import reduce_event

            multiprocessing.reduction.ForkingPickler.register(torch.cuda.Event, reductions.reduce_event)
            """,
            findings=2,
        ),
        Example(
            "not reported: rebuild_event, kept in 2.15",
            """
            from torch.multiprocessing.reductions import rebuild_event
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        targets = frozenset({REDUCE_EVENT})
        for alias, _ in from_imports(ctx.resolver, targets):
            ctx.report(alias, f"{MESSAGE}: this import fails", help=HELP)
        for node, _, _ in ctx.references_to(targets):
            # A name bound by a reported `from` import fails there already; a star import does not fail.
            if isinstance(node, ast.Name) and ctx.resolver.lookup_name(node).bindings:
                continue
            ctx.report(node, MESSAGE, help=HELP)


RULE = ReduceEventPrivate()
