"""TU703: a `DataLoader` without worker processes loads every batch on the training thread (TorchFix's TOR401)."""

from __future__ import annotations

import ast
import os

from torchup.analysis.context import Context
from torchup.analysis.rule import Change, Example, FixAvailability, LooksFor, Rule, RuleDocs
from torchup.core.diagnostics import Severity

LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
WORKERS_POSITION = 5  # DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...)


class DataLoaderWorkers(Rule):
    change = Change.ADOPT
    code = "TU703"
    name = "dataloader-without-workers"
    summary = "`DataLoader(...)` without `num_workers` (or with 0) loads batches on the training thread."
    since = None
    enabled_by_default = False  # (a hint, as TorchFix's TOR4 codes: `--select TU703` or `TOR401`)
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE
    looks_for = LooksFor(names=tuple(sorted(LOADERS)))
    docs = RuleDocs(
        what="""
        Finds `torch.utils.data.DataLoader(...)` (any import form) that passes no `num_workers`,
        or the literal `0`, outside test files (`test_*.py`, `*_test.py`, `tests/`, where small
        loaders are the rule). Off by default: `--select TU703` (or `TOR401`). TorchFix's TOR401.
        """,
        why="""
        With `num_workers=0` the main process reads and collates every batch between training
        steps, so the accelerator waits for data; worker processes prepare the next batches
        while the current one trains.
        """,
        fix="""
        None automatic: the right number depends on the machine and the dataset (start with the
        CPU cores per accelerator, and `persistent_workers=True`, `pin_memory=True` on CUDA).
        """,
        fix_safety="No fix is offered.",
    )
    examples = (
        Example(
            "no workers, and zero",
            """
            import torch
            from torch.utils.data import DataLoader, TensorDataset
            data = TensorDataset(torch.randn(64, 3))
            train = DataLoader(data, batch_size=8, shuffle=True)
            valid = DataLoader(data, 8, False, None, None, 0)
            """,
            findings=2,
        ),
        Example(
            "workers, or a number from elsewhere",
            """
            import torch
            from torch.utils.data import DataLoader
            def loaders(data, workers):
                return DataLoader(data, num_workers=4), DataLoader(data, num_workers=workers)
            """,
            findings=0,
        ),
    )

    def check(self, ctx: Context) -> None:
        if _is_test_file(ctx.source.path):
            return
        for call, _ in ctx.calls_to(LOADERS):
            if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
                continue  # (`**options` may hold num_workers)
            keyword = next((k.value for k in call.keywords if k.arg == "num_workers"), None)
            value = keyword if keyword is not None else (
                call.args[WORKERS_POSITION] if len(call.args) > WORKERS_POSITION else None)
            if value is not None and not (isinstance(value, ast.Constant) and value.value == 0):
                continue
            ctx.report(call.func, "this `DataLoader` has no worker processes: batches load on the training thread",
                       help="pass `num_workers=N` (and `persistent_workers=True`) where the data feeds training")


def _is_test_file(path: str) -> bool:
    name = os.path.basename(path)
    parts = path.replace(os.sep, "/").split("/")
    return name.startswith("test_") or name.endswith("_test.py") or "tests" in parts[:-1] or "test" in parts[:-1]


RULE = DataLoaderWorkers()
