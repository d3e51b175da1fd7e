import torch


def f(x):
    return x + 1


g = torch.compile(f, backend="eager")  # line 8
print(g(torch.ones(1)).tolist())
