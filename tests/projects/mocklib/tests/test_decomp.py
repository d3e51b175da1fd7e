"""The factorisations, and that they go through torch's own routines (mocked by name)."""

from unittest import mock
from unittest.mock import MagicMock, patch

import pytest
import torch
from mocklib import decomp


def test_cholesky_factor_reconstructs(spd):
    L = decomp.cholesky_factor(spd)
    assert torch.allclose(L @ L.t(), spd)
    assert torch.equal(L, L.tril())


def test_cholesky_factor_calls_torch_once(spd):
    with mock.patch("torch.cholesky", wraps=torch.cholesky) as spy:
        decomp.cholesky_factor(spd)
    assert spy.call_count == 1


@mock.patch("torch.cholesky", wraps=torch.cholesky)
def test_upper_factor_decorated_patch(spy, spd):
    U = decomp.upper_factor(spd)
    assert spy.call_count == 1
    assert torch.allclose(U.t() @ U, spd)


def test_orthonormal_basis_uses_qr(tall):
    spy = MagicMock(wraps=torch.qr)
    with patch.object(torch, "qr", spy):
        Q = decomp.orthonormal_basis(tall)
    assert spy.call_count == 1
    assert spy.call_args[0][0] is tall
    assert torch.allclose(Q.t() @ Q, torch.eye(3, dtype=torch.float64))


def test_complete_basis_is_square(tall):
    spy = MagicMock(wraps=torch.qr)
    with patch.object(torch, "qr", spy):
        Q, R = decomp.complete_basis(tall)
    spy.assert_called_once()
    assert Q.shape == (5, 5) and R.shape == (5, 3)
    assert torch.allclose(Q @ R, tall)


def test_jittered_cholesky_retries_with_jitter(monkeypatch, spd):
    real = torch.cholesky
    seen = []

    def flaky(A, upper=False):
        seen.append(A)
        if len(seen) == 1:
            raise RuntimeError("cholesky: the leading minor of order 2 is not positive-definite")
        return real(A, upper=upper)

    monkeypatch.setattr(torch, "cholesky", flaky)
    L = decomp.jittered_cholesky(spd)
    assert len(seen) == 2 and not torch.equal(seen[0], seen[1])
    assert torch.allclose(L @ L.t(), seen[1])


def test_jittered_cholesky_gives_up(monkeypatch, spd):
    def never(A, upper=False):
        raise RuntimeError("not positive-definite")

    monkeypatch.setattr("torch.cholesky", never)
    with pytest.raises(RuntimeError, match="not positive-definite"):
        decomp.jittered_cholesky(spd, max_tries=2)


def test_jittered_cholesky_on_singular_matrix():
    v = torch.ones(3, 1, dtype=torch.float64)
    L = decomp.jittered_cholesky(v @ v.t(), jitter=1e-3)
    assert torch.isfinite(L).all()
