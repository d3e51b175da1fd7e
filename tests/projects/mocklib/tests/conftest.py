import pytest
import torch
from mocklib import LazyMatrix


@pytest.fixture
def spd():
    g = torch.Generator().manual_seed(1)
    a = torch.randn(4, 4, generator=g, dtype=torch.float64)
    return a @ a.t() + 4 * torch.eye(4, dtype=torch.float64)


@pytest.fixture
def tall():
    g = torch.Generator().manual_seed(2)
    return torch.randn(5, 3, generator=g, dtype=torch.float64)


@pytest.fixture
def lazy():
    g = torch.Generator().manual_seed(3)
    return LazyMatrix(torch.randn(6, 3, generator=g, dtype=torch.float64), diag=0.5)
