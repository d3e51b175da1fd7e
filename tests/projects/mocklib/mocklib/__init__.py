"""mocklib: small linear-algebra helpers for Gaussian-process experiments."""

from mocklib.decomp import cholesky_factor, complete_basis, jittered_cholesky, orthonormal_basis, upper_factor
from mocklib.gp import ExactGP
from mocklib.lazy import LazyMatrix, linear_kernel

__all__ = [
    "ExactGP",
    "LazyMatrix",
    "cholesky_factor",
    "complete_basis",
    "jittered_cholesky",
    "linear_kernel",
    "orthonormal_basis",
    "upper_factor",
]
