"""Clamps that never touch their bounds, and clamps without gradients: nothing to report."""
import torch

x = torch.tensor([0.5, 0.25, 0.75], requires_grad=True)
y = torch.clamp(x, 0.0, 1.0)
z = torch.clamp(torch.tensor([0.0, 1.0]), 0.0, 1.0)
y.sum().backward()
print(x.grad.tolist())
