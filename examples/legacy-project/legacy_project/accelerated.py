"""Routing, compilation and device helpers, written against torch 2.13 (they still run on 2.14)."""
import torch
import torch._dynamo
import torch.distributed as dist

DEVICE = torch.device("mps" if torch.backends.mps.is_available() else "cpu")


def route(x: torch.Tensor) -> torch.Tensor:
    # Three ways, as two nested conds: 2.13 has nothing else.
    return torch.cond(
        x.sum() > 0,
        lambda t: t * 2,
        lambda t: torch.cond(t.sum() < -10, lambda u: u - 1, lambda u: u + 1, (t,)),
        (x,),
    )


def compile_encoder(encoder: torch.nn.Module, example: torch.Tensor):
    # Variable batch size without recompiling.
    torch._dynamo.mark_dynamic(example, 0)
    return torch.compile(encoder, mode="max-autotune")


def init_workers(rank: int, world_size: int) -> None:
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def orthogonalize(weight: torch.Tensor) -> torch.Tensor:
    # SVD has no MPS kernel in 2.13: round-trip through the CPU.
    U, _, Vh = torch.linalg.svd(weight.cpu(), full_matrices=False)
    return (U @ Vh).to(DEVICE)
