"""TU504: process groups on ``"nccl"`` can opt in to torch 2.14's ``nccl2`` backend."""

from __future__ import annotations

import ast

from torchup.analysis.context import Context
from torchup.analysis.patterns import bind_call
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity
from torchup.rules._modernise import feature, file_strings, string_value

NCCL2 = feature("nccl2")
MODULES = tuple(NCCL2["modules"])
PARAMETERS: dict[str, list[str]] = NCCL2["calls"]
CALLS = frozenset(f"{module}.{function}" for module in MODULES for function in PARAMETERS)
NEW_BACKENDS = frozenset(NCCL2["backends"])
ENV = NCCL2["env"]
WHAT = (
    "torch 2.14 adds the `nccl2` backend (NCCL on the torchcomms engine; per the release, non-blocking "
    f'communicators and eager splitting); opt in with `backend="nccl2"` or `{ENV}=1`'
)
TIMEOUT = "by that name it gets the 30-minute default timeout, not NCCL's 10 (pass `timeout=`), "
CAVEATS = "`get_backend()` then returns the new name; either way the backend object is not a `ProcessGroupNCCL`"


def _backend_name(ctx: Context, node: ast.expr) -> str | None:
    """The backend string a literal or a ``Backend.NCCL``-style constant spells."""
    text = string_value(node)
    if text is not None:
        return text
    qualname = ctx.qualified_name(node)
    for module in MODULES:
        prefix = f"{module}.Backend."
        if qualname and qualname.startswith(prefix) and qualname[len(prefix):].isupper():
            return qualname[len(prefix):].lower()
    return None


def _choices(node: ast.expr) -> list[ast.expr]:
    """The values a backend expression can take that the code spells: both sides of ``a if c else b``."""
    found, stack = [], [node]
    while stack:
        value = stack.pop()
        if isinstance(value, ast.IfExp):
            stack += [value.orelse, value.body]
        else:
            found.append(value)
    return found


def _with_nccl2(name: str) -> str | None:
    """``"nccl"`` -> ``"nccl2"``, ``"cpu:gloo,cuda:nccl"`` -> ``"cpu:gloo,cuda:nccl2"``; None: no plain nccl."""
    if ":" not in name and "," not in name:
        return "nccl2" if name.strip().lower() == "nccl" else None
    pairs = [pair.partition(":") for pair in name.split(",")]
    if any(not sep for _, sep, _ in pairs):
        return None  # malformed; torch reports it
    if not any(backend.strip().lower() == "nccl" for _, _, backend in pairs):
        return None
    return ",".join(
        f"{device}:{'nccl2' if backend.strip().lower() == 'nccl' else backend}" for device, _, backend in pairs
    )


class Nccl2Backend(Rule):
    change = Change.ADOPT
    code = "TU504"
    name = "nccl-to-nccl2"
    summary = 'Process groups on `"nccl"`: torch 2.14 adds the opt-in `nccl2` backend.'
    enabled_by_default = False
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(names=tuple(sorted(CALLS)))
    reads_unfocused_bodies = True  # every string in the file
    docs = RuleDocs(
        what=f"""
        Finds `torch.distributed.init_process_group` and `torch.distributed.new_group` (any
        import form, also through `torch.distributed.distributed_c10d`; backend positional or
        keyword) whose backend is `"nccl"` (any case), `Backend.NCCL`, or a per-device string
        that uses plain NCCL, such as `"cpu:gloo,cuda:nccl"`, also as either side of a
        conditional expression (`"gloo" if cpu else "nccl"`); the help spells the string to
        write (`"cpu:gloo,cuda:nccl2"`). Not reported: a process group without a backend (the
        default picks NCCL on CUDA machines, but nothing in the code names it), a backend
        computed at run time otherwise, one of `"nccl2"`, `"nccl-lazy"`, `"nccl-legacy"`, and files
        that already mention `{ENV}`. Per-device strings are also reported by TU401 (re-test
        custom backends); the two rules say different things. Off by default; informational.
        """,
        why=f"""
        torch 2.14 ships a second NCCL process group, `ProcessGroupNCCL2`, built on the
        torchcomms engine and registered under the names `"nccl2"` and (a variant whose
        point-to-point pairs get their own lazily created communicators) `"nccl-lazy"`;
        `"nccl-legacy"` names 2.13's implementation. `"nccl"` keeps the old implementation
        unless `{ENV}=1` is set when the first NCCL group is created, which routes `"nccl"` to
        `nccl2`. The release names non-blocking communicators and eager splitting as what
        `nccl2` offers, and asks users of custom process groups to test them on it.

        Differences to re-test for (2.14.1 wheel): `backend="nccl2"` is a custom backend
        type for CUDA only, takes the same `ProcessGroupNCCL.Options` as `pg_options`, and gets
        the generic 30-minute default timeout instead of NCCL's 10 minutes (pass `timeout=`;
        `{ENV}=1` keeps the name `"nccl"` and its timeout). `dist.get_backend()` then returns
        `"nccl2"`. Its backend object is not a `ProcessGroupNCCL` and lacks NCCL-specific
        methods such as `comm_split_count`, `_comm_ptr`, `_set_default_timeout` and
        `get_runtime_nccl_version`. In the torch 2.15.0 sources, the registrar for `"nccl"`
        picks `nccl2` unless `{ENV}=0` (and gives the NCCL variants NCCL's timeout); the 2.15
        entry-point table that selects that registrar was not available to check.
        """,
        fix=f"""
        No automatic fix: a different communication engine is only proven by a run. To try
        it, change the string (`backend="nccl2"`, or `"cpu:gloo,cuda:nccl2"` for a per-device
        string), or leave the code alone and launch with `{ENV}=1` (for example
        `{ENV}=1 torchrun ...`, or `os.environ["{ENV}"] = "1"` before the first process group).
        """,
        fix_safety="There is no fix: switching collectives' engine is a decision to test at scale.",
        wheels_vs_notes=f"""
        The release article names only `nccl2` (non-blocking communicators, eager splitting).
        The 2.14.1 wheel also has `nccl-lazy`, `nccl-legacy` and the `{ENV}=1` switch, which
        are not in the article; the different default timeout and the missing
        `ProcessGroupNCCL` methods are in the wheel only. The switch is read when the `"nccl"`
        backend is first registered (on first use, through the `torch.distributed.backends`
        entry points), so it must be set before the first process group is created.
        """,
    )
    examples = (
        Example(
            "plain NCCL, a constant, a per-device string",
            """
            import torch.distributed as dist
            from torch.distributed import Backend

            dist.init_process_group("nccl", rank=0, world_size=1)
            pair = dist.new_group([0, 1], backend=Backend.NCCL)
            mixed = dist.new_group([0, 1], None, "cpu:gloo,cuda:nccl")
            """,
            findings=3,
        ),
        Example(
            "not reported: already nccl2, gloo, computed, no backend",
            """
            import os
            from torch.distributed import init_process_group, new_group

            init_process_group(backend="nccl2")
            g1 = new_group([0, 1], backend="gloo")
            g2 = new_group([0, 1], backend=os.environ["BACKEND"])
            g3 = new_group([0, 1])
            g4 = new_group([0, 1], backend="cpu:gloo,cuda:nccl-lazy")
            """,
            findings=0,
        ),
        Example(
            "not reported: the switch is already set",
            """
            import os
            import torch.distributed as dist

            os.environ.setdefault("TORCH_DIST_USE_NCCL2", "1")
            dist.init_process_group("nccl")
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        calls = ctx.calls_to(CALLS)
        if not calls or ENV in file_strings(ctx):
            return
        for call, qualname in calls:
            short = qualname.rpartition(".")[2]
            bound = bind_call(call, PARAMETERS[short])
            backend = bound.get("backend") if bound is not None else None
            if backend is None:
                continue
            for value in _choices(backend.value):
                self._report(ctx, value, short)

    def _report(self, ctx: Context, value: ast.expr, short: str) -> None:
        name = _backend_name(ctx, value)
        replacement = _with_nccl2(name) if name is not None else None
        if replacement is not None and name is not None:
            ctx.report(
                value,
                f'`{short}` on "{name}": {WHAT}',
                help=f'to try it, write `backend="{replacement}"` (or launch with `{ENV}=1`); re-test before relying '
                f"on it: {TIMEOUT if replacement == 'nccl2' else ''}{CAVEATS}",
            )


RULE = Nccl2Backend()
