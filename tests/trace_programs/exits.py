import sys

import torch

t = torch.ones(2, requires_grad=True)
torch.clip(t, max=1.0).sum().backward()  # line 6
sys.exit(3)
