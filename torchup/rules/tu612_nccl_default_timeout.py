"""TU612: an NCCL process group without ``timeout=`` aborts a stuck collective after 10 minutes since
torch 2.2 (30 before)."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Applicability, Fix, Severity
from torchup.rules.tu601_torch_load_weights_only import Given, given, keyword_fix, uses

INIT = frozenset({"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"})
# init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None, ...)
BACKEND, TIMEOUT = 0, {"timeout": 2}
OLD_TIMEOUT = "timedelta(minutes=30)"


class NcclDefaultTimeout(Rule):
    change = Change.BEHAVES
    code = "TU612"
    name = "nccl-default-timeout"
    summary = "`init_process_group(\"nccl\")` without `timeout=`: 10 minutes since torch 2.2, 30 before."
    since = "2.2"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SAFE
    looks_for = LooksFor(names=tuple(sorted(INIT)))
    docs = RuleDocs(
        what="""
        Finds calls of `torch.distributed.init_process_group` (any import form, also through a
        name it is saved in or `functools.partial`) whose backend is written `"nccl"` (the first
        argument or `backend=`, also as a branch of a conditional: `"nccl" if
        dist.is_nccl_available() else "gloo"`) and that pass no `timeout=` (or `None`, the default).

        Not reported: another backend, or one chosen at run time (`backend=args.backend`, or none:
        then the device decides), a combined string (`"cpu:gloo,cuda:nccl"`, whose default stays
        30 minutes), a call with `**options` or `*args` of unknown content, and a call that passes
        `timeout=`.
        """,
        why="""
        Up to torch 2.1, `init_process_group(..., timeout=default_pg_timeout)` gave every backend
        the same 30-minute default. torch 2.2 made the default `None`, resolved per backend by
        `_get_default_timeout`: 30 minutes for gloo and the others, and for NCCL the C++ layer's
        own default, 10 minutes. Since NCCL's asynchronous error handling is on by default, its
        watchdog then aborts a collective that waits longer (a slow checkpoint load on one rank, an
        uneven data split, a long first compilation) and tears the process down, where the same
        code on 2.1 waited up to 30 minutes.
        """,
        fix="""
        Adds `timeout=timedelta(minutes=30)` (and `from datetime import timedelta`, unless the
        module already names it): the default the code had before 2.2. Prefer a value chosen for
        the job; a shorter timeout finds a hung rank sooner.
        """,
        fix_safety="""
        Safe: the process group gets the timeout it had on torch 2.0 and 2.1, and `timeout=` is
        accepted by every release. Running it needs NCCL (a CUDA build and GPUs): not run by the
        differential tests; on the CPU, torch 2.14.1's `_get_default_timeout("nccl")` returns
        0:10:00 and `_get_default_timeout("gloo")` 0:30:00 (the CUDA build; 2.13.0's CPU build
        falls back to 30 minutes with a warning, having no NCCL).
        """,
        wheels_vs_notes="""
        Evidence: torch-2.2.2 torch/distributed/distributed_c10d.py:1050 (`timeout: Optional[timedelta]
        = None`, where 2.1.2 had `timeout: timedelta = default_pg_timeout`); torch-2.14.1
        torch/distributed/constants.py (`default_pg_nccl_timeout` from the C++ layer, "until
        recently there was one default that applied across all backends in the python layer")
        and distributed_c10d.py:1387 (`_get_default_timeout`).
        """,
    )
    examples = (
        Example(
            "a job on GPU nodes",
            """
            import torch.distributed as dist

            def setup(rank, world_size):
                dist.init_process_group("nccl", rank=rank, world_size=world_size)
            """,
            fixed="""
            import torch.distributed as dist
            from datetime import timedelta

            def setup(rank, world_size):
                dist.init_process_group("nccl", rank=rank, world_size=world_size, timeout=timedelta(minutes=30))
            """,
            executable=False,  # (needs NCCL: see fix safety)
        ),
        Example(
            "not reported: a timeout, another backend, one chosen at run time",
            """
            import datetime
            import torch.distributed as dist

            def setup(args, options):
                dist.init_process_group("gloo" if args.cpu else "gloo")
                dist.init_process_group(backend="nccl", timeout=datetime.timedelta(hours=1))
                dist.init_process_group("gloo")
                dist.init_process_group(backend=args.backend)
                dist.init_process_group("cpu:gloo,cuda:nccl")
                dist.init_process_group("nccl", **options)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for use in uses(ctx, INIT):
            call = use.call
            if call is None or not _nccl(call, use.skip) or given(call, TIMEOUT, use.skip, none_is_default=True) \
                    is not Given.NO:
                continue
            fix = _timeout_fix(ctx, call)
            through = " through `functools.partial`" if use.skip else ""
            ctx.report(
                use.node,
                f"`init_process_group(\"nccl\")`{through} without `timeout=`: since torch 2.2 a collective that "
                "waits longer than 10 minutes aborts the job (30 minutes before)",
                help="pass `timeout=` (30 minutes was the default before 2.2)",
                fix=fix,
            )


def _nccl(call: ast.Call, skip: int) -> bool:
    """Is the backend written `"nccl"` (first argument after ``skip``, or `backend=`)?"""
    backend = next((k.value for k in call.keywords if k.arg == "backend"), None)
    if backend is None and len(call.args) > skip + BACKEND:
        backend = call.args[skip + BACKEND]
    if isinstance(backend, ast.IfExp):  # (`"nccl" if dist.is_nccl_available() else "gloo"`: nccl where it runs)
        return _is_nccl(backend.body) or _is_nccl(backend.orelse)
    return _is_nccl(backend)


def _is_nccl(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() == "nccl"


def _timeout_fix(ctx: Context, call: ast.Call) -> Fix | None:
    reference = ctx.symbol_reference("datetime.timedelta", call)
    if reference is None:
        return None
    name, imports = reference
    fix = keyword_fix(ctx, call, "timeout", f"{name}(minutes=30)",
                      "pass `timeout=timedelta(minutes=30)` (the default before torch 2.2)", Applicability.SAFE,
                      TIMEOUT["timeout"])
    return None if fix is None else Fix(fix.message, fix.applicability, fix.edits, imports)


RULE = NcclDefaultTimeout()
