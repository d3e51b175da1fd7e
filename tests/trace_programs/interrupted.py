"""A run stopped with Ctrl-C after hitting a bound."""
import torch

t = torch.zeros(2, requires_grad=True)
t.clip(0, 1).sum().backward()  # line 5
raise KeyboardInterrupt
