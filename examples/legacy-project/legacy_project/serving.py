"""Export, fine-tuning and profiling helpers for serving, updated for torch 2.14."""
import torch
from torch import nn
from torch.autograd.profiler import load_nvprof


def export(model: nn.Module, example: torch.Tensor, path: str) -> None:
    scripted = torch.jit.trace(model, example)
    torch.jit.save(scripted, path)


def finetune_head(model: nn.Module, head: nn.Module, lr: float = 1e-4) -> torch.optim.Optimizer:
    # Shared embeddings appear in both modules: the set removes the duplicates.
    return torch.optim.AdamW(set(model.parameters()) | set(head.parameters()), lr=lr)


def module_breakdown(model: nn.Module, batch: torch.Tensor):
    with torch.profiler.profile(with_modules=True) as prof:
        model(batch)
    return [(event.name, event.metadata_json) for event in prof.events()]


def read_nvprof(path: str):
    return load_nvprof(path).table(sort_by="self_cpu_time_total")
