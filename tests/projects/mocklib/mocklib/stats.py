"""Covariance utilities on plain tensors."""

import torch


def random_spd(n, seed=0):
    """A random, well-conditioned symmetric positive-definite matrix and its Cholesky factor."""
    g = torch.Generator().manual_seed(seed)
    cov = torch.randn(n, n, generator=g, dtype=torch.float64)
    cov = cov @ cov.t() + n * torch.eye(n, dtype=torch.float64)
    return cov, cov.cholesky()


def whiten(X):
    """Whitened copy of the rows of X (zero mean, identity sample covariance)."""
    X = torch.as_tensor(X, dtype=torch.float64)
    Xc = X - X.mean(0)
    cov = Xc.t() @ Xc / (X.shape[0] - 1)
    L = cov.cholesky()
    return torch.triangular_solve(Xc.t(), L, upper=False).solution.t()


def orthogonalize(x: torch.Tensor) -> torch.Tensor:
    """Q of x's QR decomposition, with signs fixed so that diag(R) > 0."""
    q, r = x.qr()
    return q * r.diagonal().sign()


def complete_frame(x: torch.Tensor) -> torch.Tensor:
    """A square orthogonal matrix whose first columns span x's columns."""
    q, _ = x.qr(some=False)
    return q


def projected_spectrum(m: torch.Tensor, x: torch.Tensor):
    """Eigen-decomposition of x.T @ m @ x (m symmetric)."""
    m = m.matmul(x)
    m = x.t().matmul(m)
    return m.symeig(eigenvectors=True)
