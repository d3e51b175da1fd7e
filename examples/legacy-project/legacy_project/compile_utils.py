"""torch.compile wrapper; torch is imported lazily so the CLI starts fast."""


def compile_model(model, dynamic_batch: bool = True):
    import torch

    if not dynamic_batch:
        return torch.compile(model)
    # Mark dim 0 of the input as dynamic so batch-size changes don't recompile.
    spec = {"x": {0: "batch"}}
    return torch.compile(model, shapes_spec=spec)
