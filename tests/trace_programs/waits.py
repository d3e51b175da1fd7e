"""Hits a bound, says so, then waits for Ctrl-C."""
import time

import torch

t = torch.zeros(2, requires_grad=True)
t.clamp(0, 1).sum().backward()  # line 7
print("ready", flush=True)
time.sleep(120)
