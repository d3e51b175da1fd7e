"""Old solver wrappers kept for the v0.1 checkpoint-conversion scripts.

Nothing new should use these; they predate torch.linalg.
"""
import torch as th


def eig_sym(A):
    evals, evecs = th.symeig(A, eigenvectors=True)
    return evals, evecs


def solve(A, B):
    # Note the argument order of the old API: solve(B, A) solves AX = B.
    X, _ = th.solve(B, A)
    return X


def rank(A):
    return int(th.matrix_rank(A))


def least_squares(A, B):
    sol, _ = th.lstsq(B, A)
    return sol[: A.shape[1]]
