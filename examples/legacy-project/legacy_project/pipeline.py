"""Pipeline-parallel helpers, updated for torch 2.14 (what torch 2.15 renames or deprecates)."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed.config as dist_config
from torch.distributed.distributed_c10d import _set_pg_timeout
from torch.multiprocessing.reductions import reduce_event

# Separate send/recv communicators avoid the cross-batch deadlock on looped schedules.
os.environ.setdefault("TORCH_DISTRIBUTED_PIPELINE_PER_DIRECTION_P2P", "1")


def enable_split_p2p() -> None:
    dist_config.pipeline_per_direction_p2p = True


def relax_timeout(group=None) -> None:
    # Checkpointing on rank 0 can take a while.
    _set_pg_timeout(timedelta(minutes=30), group)


def gather_losses(loss: torch.Tensor, out: torch.Tensor | None) -> None:
    dist.gather_into_tensor(loss, out, dst=0)


def share_event(event: torch.cuda.Event):
    return reduce_event(event)
