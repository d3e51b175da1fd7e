"""A program that fails after hitting a bound: the report still comes, the exit code stays."""
import torch

t = torch.zeros(3, requires_grad=True)
u = t.clamp(0, 1)  # line 5
raise ValueError("boom")
