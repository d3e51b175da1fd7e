"""Small profiling helpers used by the training loop."""
import contextlib

import torch
import torch.autograd.profiler as profiler
from torch.profiler import profile

use_cuda = torch.cuda.is_available()


@contextlib.contextmanager
def autograd_trace(enabled: bool = True):
    with torch.autograd.profiler.profile(enabled=enabled, use_cuda=torch.cuda.is_available()) as prof:
        yield prof


@contextlib.contextmanager
def region(name: str):
    with profiler.record_function(name):
        yield


def profile_steps(step_fn, n_steps: int = 5):
    with profile(use_cuda=use_cuda, record_shapes=True) as prof:
        for _ in range(n_steps):
            step_fn()
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)


def cpu_only_profile(step_fn):
    with torch.profiler.profile(use_cuda=False) as prof:
        step_fn()
    return prof


def export_trace(step_fn, path: str) -> None:
    with profiler.profile(use_cuda=use_cuda) as prof:
        step_fn()
    prof.export_chrome_trace(path)


def hottest_python_frames(model, batch):
    with torch.profiler.profile(with_stack=True) as prof:
        model(batch)
    # Python-function rows included (torch 2.13 showed them by default).
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20)
