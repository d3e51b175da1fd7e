"""clamp(min=0) on a tensor holding exact zeros."""
import torch

h = torch.tensor([0.0, 1.0, -1.0, 0.0], requires_grad=True)
y = (h * 1.0).clamp(min=0)  # line 5: 2 of 4 elements on the bound
y.sum().backward()
with torch.no_grad():
    h.clamp(min=0)  # no gradient recorded: not a finding
print(h.grad.tolist())
