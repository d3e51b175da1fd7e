"""The rule registry: one line per rule module. Each module defines ``RULE``, or ``RULES`` when one
module makes a family of rules from a catalogue (one entry each)."""

from __future__ import annotations

import importlib
from functools import cache

from torchup.analysis.rule import Rule

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
    "tu150_pipeline_p2p_flag_renamed",
    "tu151_function_event_metadata_json",
    "tu152_reduce_event_private",
    "tu160_optimizer_set_params",
    "tu161_nvprof_deprecated",
    "tu170_gather_into_tensor",
    "tu171_set_pg_timeout",
    "tu172_profiler_with_modules",
    "tu173_torchscript_deprecated",
    "tu201_clamp_boundary_gradient",
    "tu202_fmax_fmin_tie_gradient",
    "tu301_compile_python_315",
    "tu401_process_group_backend",
    "tu501_nested_cond_switch",
    "tu502_dynamic_spec",
    "tu503_nvgemm_backend",
    "tu504_nccl2_backend",
    "tu505_mps_linalg_round_trip",
    "tu601_torch_load_weights_only",
    "tu602_device_specific_amp",
    "tu603_sdp_kernel",
    "tu604_checkpoint_use_reentrant",
    "tu605_set_default_tensor_type",
    "tu606_onnx_export_dynamo",
    "tu607_weight_norm",
    "tu608_assert_allclose",
    "tu609_lr_scheduler_verbose",
    "tu610_upsample",
    "tu611_autocast_dtype_getters",
    "tu612_nccl_default_timeout",
    "tu613_ddp_broadcast_buffers",
    "tu614_argument_kinds",
    "tu615_sampler_init_arguments",
    "tu616_hub_trust_repo",
    "tu617_elastic_logs_specs",
    "tu618_cpp_extension_device_type",
    "tu619_sdpa_params_enable_gqa",
    "tu620_catalogue",
    "tu643_export_strict_default",
    "tu625_torch_range",
    "tu701_require_grad_typo",
    "tu702_zero_grad_set_to_none",
    "tu703_dataloader_workers",
    "tu704_scoped_library",
    "tu705_private_alias",
    "tu706_torchvision_pretrained",
    "tu707_torchvision_to_tensor",
    "tu708_torchvision_singleton_import",
    "tu711_log1p",
    "tu712_expm1",
    "tu713_logsumexp",
    "tu801_outdated_version_gate",
)


@cache
def all_rules() -> tuple[Rule, ...]:
    rules: list[Rule] = []
    for name in RULE_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        rules += getattr(module, "RULES", None) or (module.RULE,)
    return tuple(sorted(rules, key=lambda rule: rule.code))


def rule_by_code(code: str) -> Rule | None:
    return next((rule for rule in all_rules() if rule.code == code.upper()), None)
