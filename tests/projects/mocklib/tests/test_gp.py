import math
from unittest import mock

import torch
from mocklib import ExactGP, LazyMatrix


def data():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(8, 2, generator=g, dtype=torch.float64)
    y = x @ torch.tensor([1.5, -0.5], dtype=torch.float64)
    return x, y


def test_predicts_training_targets():
    x, y = data()
    gp = ExactGP(x, y, noise=1e-6).fit()
    assert torch.allclose(gp.predict(x), y, atol=1e-4)


def test_fit_factors_the_kernel_once():
    x, y = data()
    with mock.patch.object(LazyMatrix, "cholesky", autospec=True, side_effect=LazyMatrix.cholesky) as spy:  # LazyMatrix
        gp = ExactGP(x, y).fit()
    assert spy.call_count == 1
    assert gp.chol.shape == (8, 8)


def test_log_marginal_likelihood_matches_dense():
    x, y = data()
    gp = ExactGP(x, y, noise=0.1)
    dense = x @ x.t() + 0.1 * torch.eye(8, dtype=torch.float64)
    expected = torch.distributions.MultivariateNormal(torch.zeros(8, dtype=torch.float64), dense).log_prob(y)
    assert math.isclose(gp.log_marginal_likelihood().item(), expected.item(), rel_tol=1e-9)


def test_spectrum_is_rank_two_plus_noise():
    x, y = data()
    evals = ExactGP(x, y, noise=0.1).spectrum()
    assert torch.allclose(evals[:6], torch.full((6,), 0.1, dtype=torch.float64))
    assert (evals[6:] > 0.1).all()
