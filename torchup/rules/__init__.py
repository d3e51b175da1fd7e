"""The rule registry: one line per rule module. Each module defines ``RULE``."""

from __future__ import annotations

import importlib
from functools import cache

from torchup.rule import Rule

RULE_MODULES = (
    "tu000_io_error",
    "tu001_syntax_error",
    "tu002_unused_noqa",
    "tu101_torch_cholesky",
    "tu102_tensor_cholesky",
    "tu103_torch_qr",
    "tu104_tensor_qr",
    "tu105_removed_linalg",
    "tu110_profiler_use_cuda",
    "tu120_acc_policy_balanced",
    "tu130_compile_shapes_spec",
    "tu140_key_averages_python_rows",
    "tu201_clamp_boundary_gradient",
    "tu202_fmax_fmin_tie_gradient",
    "tu301_compile_python_315",
    "tu401_process_group_backend",
)


@cache
def all_rules() -> tuple[Rule, ...]:
    rules = tuple(importlib.import_module(f"{__name__}.{module}").RULE for module in RULE_MODULES)
    return tuple(sorted(rules, key=lambda rule: rule.code))


def rule_by_code(code: str) -> Rule | None:
    return next((rule for rule in all_rules() if rule.code == code.upper()), None)
