"""A kernel matrix kept as a low-rank root plus a diagonal, materialised only when needed."""

import torch


class LazyMatrix:
    """root @ root.T + diag * I. Mirrors the tensor API it replaces (cholesky, qr, symeig), so that
    callers can use either a LazyMatrix or a dense tensor."""

    def __init__(self, root, diag=1e-3):
        self.root = root
        self.diag = diag
        self._dense = None

    @property
    def shape(self):
        n = self.root.shape[0]
        return torch.Size([n, n])

    def evaluate(self):
        if self._dense is None:
            eye = torch.eye(self.root.shape[0], dtype=self.root.dtype)
            self._dense = self.root @ self.root.t() + self.diag * eye
        return self._dense

    def matmul(self, rhs):
        return self.root @ (self.root.t() @ rhs) + self.diag * rhs

    def cholesky(self):
        return torch.cholesky(self.evaluate())

    def qr(self):
        return torch.qr(self.evaluate())

    def symeig(self, eigenvectors=False):
        # Same contract as the old Tensor.symeig: empty eigenvectors unless asked for.
        evals, evecs = torch.linalg.eigh(self.evaluate())
        if not eigenvectors:
            evecs = torch.empty(0, dtype=evals.dtype)
        return evals, evecs

    def logdet(self):
        return 2 * self.cholesky().diagonal().log().sum()  # LazyMatrix

    def inv_matmul(self, rhs):
        return torch.cholesky_solve(rhs, self.cholesky())  # LazyMatrix


def linear_kernel(x, noise=1e-2):
    """k(a, b) = <a, b>, plus observation noise on the diagonal."""
    return LazyMatrix(x, diag=noise)
