"""Loss configuration for the classifier head."""
from dataclasses import dataclass

import torch


@dataclass
class LossConfig:
    label_smoothing: float = 0.0
    fused: bool = True


def build_loss(cfg: LossConfig) -> torch.nn.Module:
    if not cfg.fused:
        return torch.nn.CrossEntropyLoss(label_smoothing=cfg.label_smoothing)
    options = torch.nn.LinearCrossEntropyOptions(acc_policy="balanced")
    return torch.nn.LinearCrossEntropyLoss(options=options)


def fused_loss(hidden: torch.Tensor, weight: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Projection + cross-entropy without materialising the full logits."""
    return torch.nn.functional.linear_cross_entropy(
        hidden,
        weight,
        target,
        options=torch.nn.LinearCrossEntropyOptions(acc_policy="balanced"),
    )


def log_survival(hazard: torch.Tensor) -> torch.Tensor:
    """log(1 + h) and exp(h) - 1 of small hazards: TU711 and TU712 (hints, `--select TU711,TU712`)."""
    return torch.log(1 + hazard) - (torch.exp(hazard) - 1)


def log_partition(scores: torch.Tensor) -> torch.Tensor:
    """The log of a sum of exps, which overflows for large scores: TU713 (a hint, `--select TU713`)."""
    return torch.log(torch.sum(torch.exp(scores), dim=-1))
