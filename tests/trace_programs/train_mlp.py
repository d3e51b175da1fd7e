"""A small MLP trained on CPU; prints every loss as hex so runs compare bit for bit."""
import sys
import time

import torch

torch.manual_seed(0)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
data = torch.randn(256, 16)
target = torch.randint(0, 4, (256,))
start = time.perf_counter()
for _ in range(steps):
    optimizer.zero_grad()
    logits = model(data)
    logits = logits.clamp(-5.0, 5.0)  # touches bounds at times
    loss = torch.nn.functional.cross_entropy(logits, target)
    loss.backward()
    optimizer.step()
    print(float(loss).hex())
print(f"loop_seconds {time.perf_counter() - start:.6f}", file=sys.stderr)
