"""torch.compile wrapper; torch is imported lazily so the CLI starts fast."""


def compile_model(model, dynamic_batch: bool = True):
    import torch

    if not dynamic_batch:
        return torch.compile(model)
    # Mark dim 0 of the input as dynamic so batch-size changes don't recompile.
    spec = {"x": {0: "batch"}}
    return torch.compile(model, shapes_spec=spec)


def to_channels_last(x):
    import torch

    # Kept from the torch 1.x days: the project's floor (torch>=2.0) has long passed it.
    if tuple(int(part) for part in torch.__version__.split(".")[:2]) < (1, 5):
        return x.contiguous()
    return x.contiguous(memory_format=torch.channels_last)
