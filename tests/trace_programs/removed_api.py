"""Reaches a removed API through a dynamic path no static tool can see."""
import torch

name = "chol" + "esky"
A = torch.eye(3) * 2
factor = getattr(torch, name)(A)  # line 6
print(float(factor[0, 0]))
