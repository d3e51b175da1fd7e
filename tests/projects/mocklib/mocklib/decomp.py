"""Factorisations shared by the package."""

import torch


def cholesky_factor(A, upper=False):
    """Cholesky factor of a (batch of) symmetric positive-definite matrices."""
    return torch.cholesky(A, upper=upper)


def upper_factor(A):
    return torch.cholesky(A, upper=True)


def jittered_cholesky(A, jitter=1e-6, max_tries=3):
    """Lower factor of A, retrying with a growing diagonal jitter when A is not numerically
    positive definite (as kernel matrices often are)."""
    eye = torch.eye(A.shape[-1], dtype=A.dtype)
    for attempt in range(max_tries + 1):
        shift = jitter * 10**attempt if attempt else 0.0
        try:
            return torch.cholesky(A + shift * eye)
        except RuntimeError:
            if attempt == max_tries:
                raise


def orthonormal_basis(A):
    """An orthonormal basis of the column space of a tall matrix."""
    Q, _ = torch.qr(A)
    return Q


def complete_basis(A):
    return torch.qr(A, some=False)
