"""TU401: process groups with a custom, computed or per-device backend: re-test them on 2.14's ``nccl2``."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import bind_call
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity

_C10D = ("torch.distributed", "torch.distributed.distributed_c10d")
INIT = frozenset(f"{module}.init_process_group" for module in _C10D)
NEW_GROUP = frozenset(f"{module}.new_group" for module in _C10D)
REGISTER = frozenset(f"{module}.Backend.register_backend" for module in _C10D)
INIT_PARAMETERS = ["backend", "init_method", "timeout", "world_size", "rank", "store", "group_name", "pg_options",
                   "device_id", "_ranks", "enable_reconfigure"]
NEW_GROUP_PARAMETERS = ["ranks", "timeout", "backend", "pg_options", "use_local_synchronization", "group_desc",
                        "device_id", "sort_ranks"]
REGISTER_PARAMETERS = ["name", "func", "extended_api", "devices"]
# Backend names torch 2.14 knows without a plugin (2.13's plus the NCCL variants 2.14 adds).
BUILTIN = frozenset({"undefined", "gloo", "nccl", "xccl", "ucc", "mpi", "fake"})
NEW_IN_2_14 = frozenset({"nccl2", "nccl-lazy", "nccl-legacy"})
NCCL2 = (
    'torch 2.14 adds the `nccl2` backend (torchcomms engine; also `nccl-lazy` and `nccl-legacy`), and '
    '`TORCH_DIST_USE_NCCL2=1` routes `"nccl"` to it'
)
HELP = 're-test this process group with backend="nccl2" (or TORCH_DIST_USE_NCCL2=1) before relying on it'


def _backend_string(ctx: Context, node: ast.expr) -> str | None:
    """The backend name a literal or a ``Backend.NCCL`` constant spells; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    qualname = ctx.qualified_name(node)
    for module in _C10D:
        prefix = f"{module}.Backend."
        if qualname and qualname.startswith(prefix) and qualname[len(prefix):].isupper():
            return qualname[len(prefix):].lower()
    return None


def describe_backend(ctx: Context, node: ast.expr) -> str | None:
    """Why this backend argument deserves a re-test on 2.14, or None when it is a plain built-in."""
    name = _backend_string(ctx, node)
    if name is None:
        return f"the backend `{ctx.segment(node)}` is chosen at run time"
    if ":" in name or "," in name:
        names = {part.rpartition(":")[2].strip().lower() for part in name.split(",")}
        if names & NEW_IN_2_14 or names <= BUILTIN - {"nccl"}:
            return None  # already on a 2.14 backend, or no NCCL and nothing custom
        return f'the per-device backend string "{name}"'
    if name.lower() in BUILTIN or name.lower() in NEW_IN_2_14:
        return None
    return f'the custom backend "{name}"'


class ProcessGroupBackend(Rule):
    change = Change.ADOPT
    code = "TU401"
    name = "process-group-backend"
    summary = "Process groups with a custom, computed or per-device backend: re-test them on 2.14's `nccl2`."
    enabled_by_default = False
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(names=tuple(sorted(INIT | NEW_GROUP | REGISTER)))
    docs = RuleDocs(
        what="""
        Finds `torch.distributed.init_process_group(backend=...)` and
        `torch.distributed.new_group(backend=...)` (positional or keyword; any import form, also
        through `torch.distributed.distributed_c10d`) whose backend is not a plain built-in name:
        a custom backend (`"my_backend"`), a value computed at run time (`backend=args.backend`),
        or a per-device string such as `"cpu:gloo,cuda:nccl"`; and every
        `torch.distributed.Backend.register_backend(...)`. Not reported: no backend, or a plain
        `"gloo"`, `"nccl"`, `"mpi"`, `"ucc"`, `"xccl"`, `"fake"` (or `Backend.NCCL` ...), or one of
        the new `"nccl2"`, `"nccl-lazy"`, `"nccl-legacy"`. Off by default and informational:
        nothing raises, the release asks for a re-test.
        """,
        why="""
        torch 2.14 adds an in-tree NCCL backend built on the torchcomms engine, `"nccl2"`, with the
        variants `"nccl-lazy"` (point-to-point pairs get their own lazily created communicator)
        and `"nccl-legacy"` (2.13's implementation under a new name). `"nccl"` keeps the old
        implementation unless the environment sets `TORCH_DIST_USE_NCCL2=1`, which routes it to
        `nccl2`. The built-in backends are now registered lazily through the
        `torch.distributed.backends` entry-point group. The release notes ask users of custom
        process groups with a `backend` parameter to test them on `nccl2` separately.

        `Backend.register_backend` without `devices=` also changed: 2.13 assumed `cpu` and `cuda`
        (plus `xpu` when available); 2.14 assumes `cpu` and the current accelerator only
        (`torch.accelerator.current_accelerator()`), so on a machine without one, just `cpu`:

            Device capability of {name} unspecified, assuming `cpu` and the current accelerator.
            Please specify it via the `devices` argument of `register_backend`.
        """,
        fix="""
        No automatic fix. Run the job once with `backend="nccl2"` (or `"cpu:gloo,cuda:nccl2"`, or
        `TORCH_DIST_USE_NCCL2=1`) and compare; pass `devices=` to `register_backend` explicitly.
        """,
        fix_safety="There is no fix: whether a backend suits the job is only known by running it.",
        wheels_vs_notes="""
        The release notes name only `nccl2`. The 2.14.1 wheel also has `nccl-lazy` and
        `nccl-legacy`, the `TORCH_DIST_USE_NCCL2=1` switch for `"nccl"`, the entry-point
        registration of the built-in backends, and the changed `devices=None` default of
        `register_backend` (new keyword-only `_backend_type`, private).
        """,
    )
    examples = (
        Example(
            "a computed backend, a per-device string and a custom one",
            """
            import os
            import torch.distributed as dist

            dist.init_process_group(backend=os.environ.get("BACKEND", "nccl"))
            pair = dist.new_group([0, 1], None, "cpu:gloo,cuda:nccl")
            custom = dist.new_group(ranks=[0, 1], backend="my_backend")
            """,
            findings=3,
        ),
        Example(
            "registering a backend",
            """
            import torch.distributed as dist

            def create(store, rank, size, timeout):
                ...

            dist.Backend.register_backend("my_backend", create)
            """,
        ),
        Example(
            "not reported: built-in names, constants and no backend",
            """
            import torch.distributed as dist
            from torch.distributed import Backend

            dist.init_process_group("nccl")
            g1 = dist.new_group([0, 1], backend=Backend.GLOO)
            g2 = dist.new_group([0, 1], backend="nccl2")
            g3 = dist.new_group([0, 1])
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        for call, qualname in ctx.calls_to(INIT | NEW_GROUP | REGISTER):
            short = qualname.rsplit(".", 1)[1]
            if qualname in REGISTER:
                bound = bind_call(call, REGISTER_PARAMETERS)
                no_devices = bound is not None and bound.get("devices") is None and not bound.has_star_kwargs
                extra = "; without `devices=` 2.14 assumes `cpu` and the current accelerator only" if no_devices \
                    else ""
                ctx.report(call.func, f"`{short}`: a custom process-group backend; {NCCL2}{extra}", help=HELP)
                continue
            parameters = INIT_PARAMETERS if qualname in INIT else NEW_GROUP_PARAMETERS
            bound = bind_call(call, parameters)
            backend = bound.get("backend") if bound is not None else None
            if backend is None:
                continue
            reason = describe_backend(ctx, backend.value)
            if reason is not None:
                ctx.report(backend.value, f"`{short}` with {reason}: {NCCL2}", help=HELP)


RULE = ProcessGroupBackend()
