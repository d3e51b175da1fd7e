"""LazyMatrix's own cholesky / qr / symeig: not torch's, whatever their names."""

from unittest import mock

import torch
from mocklib import LazyMatrix


def test_cholesky_reconstructs(lazy):
    L = lazy.cholesky()  # LazyMatrix
    assert torch.allclose(L @ L.t(), lazy.evaluate())


def test_cholesky_of_a_new_instance():
    root = torch.arange(6, dtype=torch.float64).reshape(3, 2)
    L = LazyMatrix(root, diag=1.0).cholesky()  # LazyMatrix
    assert L.shape == (3, 3)


def test_cholesky_delegates_to_torch(monkeypatch, lazy):
    real = torch.cholesky
    shapes = []

    def counting(A, upper=False):
        shapes.append(tuple(A.shape))
        return real(A, upper=upper)

    monkeypatch.setattr("torch.cholesky", counting)
    lazy.cholesky()  # LazyMatrix
    assert shapes == [(6, 6)]


def test_qr_reconstructs(lazy):
    Q, R = lazy.qr()  # LazyMatrix
    assert torch.allclose(Q @ R, lazy.evaluate())


def test_symeig_values_only(lazy):
    evals, evecs = lazy.symeig()  # LazyMatrix
    assert evecs.numel() == 0
    assert (evals > 0).all()


def test_symeig_with_vectors(lazy):
    evals, evecs = lazy.symeig(eigenvectors=True)  # LazyMatrix
    assert torch.allclose(evecs @ torch.diag(evals) @ evecs.t(), lazy.evaluate())


def test_logdet_matches_slogdet(lazy):
    assert torch.allclose(lazy.logdet(), torch.slogdet(lazy.evaluate())[1])


def test_logdet_goes_through_own_cholesky(lazy):
    with mock.patch.object(LazyMatrix, "cholesky", autospec=True, side_effect=LazyMatrix.cholesky) as spy:  # LazyMatrix
        lazy.logdet()
    spy.assert_called_once_with(lazy)


def test_qr_patched_by_name(lazy):
    with mock.patch("mocklib.lazy.LazyMatrix.qr", autospec=True, return_value=("Q", "R")):  # LazyMatrix
        assert lazy.qr() == ("Q", "R")  # LazyMatrix
