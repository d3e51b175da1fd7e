"""Multi-process training helpers, written against torch 2.13."""
import os

import torch
import torch.distributed as dist


def setup(rank: int, world_size: int) -> None:
    # Chosen by the launcher: "nccl" on GPU nodes, "gloo" elsewhere, or a custom plugin.
    backend = os.environ.get("TRAIN_BACKEND", "nccl" if torch.cuda.is_available() else "gloo")
    dist.init_process_group(backend=backend, rank=rank, world_size=world_size)


def mixed_group(ranks: list[int]):
    return dist.new_group(ranks, backend="cpu:gloo,cuda:nccl")


def clip_scores(scores: torch.Tensor, floor: torch.Tensor) -> torch.Tensor:
    # Ties between the two inputs are common once scores saturate.
    return torch.fmax(scores, floor)


def quantize(x: torch.Tensor) -> torch.Tensor:
    # Straight-through 8-bit quantization used by the activation cache.
    return torch.clamp(torch.round(x * 255), 0, 255) / 255
