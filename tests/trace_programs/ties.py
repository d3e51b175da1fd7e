"""fmax with ties between its operands."""
import torch

a = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
b = torch.tensor([1.0, 0.0, 3.0, 5.0])
torch.fmax(a, b).sum().backward()  # line 6: 2 ties of 4
print(a.grad.tolist())
