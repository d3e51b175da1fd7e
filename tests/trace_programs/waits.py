"""Hits a bound, says so, then waits for Ctrl-C."""
import time

import torch

t = torch.zeros(2, requires_grad=True)
t.clamp(0, 1).sum().backward()  # line 7
print("ready", flush=True)
# Short sleeps, as a program at work would: a signal that lands on one of torch's own threads only
# marks itself pending, and one long sleep in the main thread would not end until it is over.
for _ in range(1200):
    time.sleep(0.1)
