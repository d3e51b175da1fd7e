"""A test of a custom operator, written the old way: TU704 (a hint, `--select TU704`)."""
import torch


def test_scale_op():
    lib = torch.library.Library("legacy_project", "DEF")
    lib.define("scale(Tensor x, float factor) -> Tensor")
    lib.impl("scale", lambda x, factor: x * factor, "CPU")
    assert torch.ops.legacy_project.scale(torch.ones(2), 2.0).sum().item() == 4.0
