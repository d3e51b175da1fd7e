"""Linear-algebra helpers used for input whitening and orthogonal init.

Note: these were written before torch.linalg existed in its current form, so
they still call torch.cholesky / torch.qr directly in several places.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
import torch
from torch import cholesky, qr

# Kept for the docs build; mentions the old spelling on purpose.
MIGRATION_HINT = "torch.cholesky(A) is the old spelling of torch.linalg.cholesky(A)"


def make_spd(n: int, jitter: float = 1e-3) -> torch.Tensor:
    """Random symmetric positive-definite matrix, handy for tests and demos."""
    a = torch.randn(n, n)
    return a @ a.T + jitter * torch.eye(n)


def lower_factor(A: torch.Tensor) -> torch.Tensor:
    # Lower-triangular factor; torch.cholesky defaults to lower.
    return torch.cholesky(A)


def upper_factor(A: torch.Tensor) -> torch.Tensor:
    return torch.cholesky(A, upper=True)


def upper_factor_legacy(A: torch.Tensor) -> torch.Tensor:
    # Old call sites passed `upper` positionally.
    return torch.cholesky(A, True)


def factor(A: torch.Tensor) -> torch.Tensor:
    return cholesky(A)


def random_factor(n: int) -> torch.Tensor:
    m = torch.randn(n, n)
    spd = m @ m.T + torch.eye(n)
    return spd.cholesky()


def whiten(x: torch.Tensor, cov) -> torch.Tensor:
    """Decorrelate the columns of `x` given their covariance `cov`."""
    L = cov.cholesky()
    return torch.linalg.solve_triangular(L, x.T, upper=False).T


def orthonormal_basis(A: torch.Tensor) -> torch.Tensor:
    q, _ = torch.qr(A)
    return q


def full_qr(A: torch.Tensor):
    return torch.qr(A, some=False)


def qr_decompose(A: torch.Tensor, reduced: bool = True):
    return torch.qr(A, some=reduced)


def qr_short(A: torch.Tensor):
    return qr(A)


def orthogonal_init_(weight: torch.Tensor) -> torch.Tensor:
    rows, cols = weight.shape
    q, r = torch.randn(max(rows, cols), min(rows, cols)).qr()
    q = q * torch.sign(torch.diagonal(r))
    with torch.no_grad():
        weight.copy_(q if rows >= cols else q.T)
    return weight


def modern_basis(A: torch.Tensor) -> torch.Tensor:
    return torch.linalg.qr(A).Q


def reference_qr(a: np.ndarray) -> np.ndarray:
    """NumPy reference used when comparing against torch.qr results."""
    q, _ = np.linalg.qr(a)
    return q


def reference_cholesky(a: np.ndarray) -> np.ndarray:
    return scipy.linalg.cholesky(a, lower=True)


class BlockPreconditioner:
    """Block-diagonal preconditioner; factors each block independently."""

    def __init__(self, blocks: list[torch.Tensor]):
        self.blocks = blocks
        self.factors: list[torch.Tensor] = []

    def cholesky(self, block: torch.Tensor) -> torch.Tensor:
        return torch.linalg.cholesky(block)

    def factor_all(self) -> None:
        self.factors = [self.cholesky(b) for b in self.blocks]
