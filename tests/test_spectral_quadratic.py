"""The shared-eigenbasis quadratic family (issue #21), imported directly (its entry point
spectral_quadratic is declared in pyproject.toml; this checkout is not pip-installed): every oracle
and closed form against the same instance with explicit Hessians H_i = Q diag(h_i) Q^T."""

import numpy as np
import pytest

from ratecheck.params import ParamError
from ratecheck.problems.spectral_quadratic import SpectralQuadratic, make


@pytest.mark.parametrize("rotate", [False, True])
def test_oracles_and_closed_forms_match_explicit_hessians(rotate):
    p = make(dim=7, clients=5, spread=0.7, zeta=1.3, sigma=0.5, rotate=rotate, seed=4)
    Q = np.eye(7) if p.basis is None else p.basis
    H = np.einsum("ij,nj,kj->nik", Q, p.spectra, Q)
    x_star = np.linalg.solve(H.mean(axis=0), np.einsum("nij,nj->ni", H, p.centers).mean(axis=0))
    np.testing.assert_allclose(p.x_star, x_star, rtol=1e-12, atol=1e-14)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4, 7))
    clients = rng.integers(0, 5, (3, 4))
    want = np.einsum("rmij,rmj->rmi", H[clients], w - p.centers[clients])
    np.testing.assert_allclose(p.local_grad(p.gather(clients), w), want, rtol=1e-12, atol=1e-13)
    x = rng.standard_normal((6, 7))
    diff = x - x_star
    Hbar = H.mean(axis=0)
    got = p.measures(x)
    np.testing.assert_allclose(got["dist_sq"], (diff * diff).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(got["grad_norm_sq"], ((diff @ Hbar) ** 2).sum(axis=1), rtol=1e-11)
    np.testing.assert_allclose(got["gap"], 0.5 * np.einsum("ri,ij,rj->r", diff, Hbar, diff), rtol=1e-11)
    f_star = np.mean([0.5 * (x_star - c) @ Hi @ (x_star - c) for Hi, c in zip(H, p.centers)])
    assert p.f_star == pytest.approx(f_star, rel=1e-12)
    c = p.constants()
    assert c["L"].value == pytest.approx(np.linalg.eigvalsh(H).max(), rel=1e-12)
    assert c["mu"].value == pytest.approx(np.linalg.eigvalsh(Hbar).min(), rel=1e-12)
    assert (p.spectra >= 0.1 - 1e-15).all() and (p.spectra <= 1.0 + 1e-15).all()


def test_spread_zero_is_the_shared_spectrum_and_bad_input_is_named():
    p = make(dim=5, clients=3, spread=0.0)
    np.testing.assert_allclose(p.spectra, np.broadcast_to(0.1 * 10.0 ** (np.arange(5) / 4), (3, 5)), rtol=1e-12)
    with pytest.raises(ValueError, match="mu must be <= L"):
        make(mu=2.0, L=1.0)
    with pytest.raises(ParamError, match="spread"):
        make(spread=1.5)
    with pytest.raises(ValueError, match="positive"):
        SpectralQuadratic(np.zeros((2, 3)), None, np.zeros((2, 3)), 1.0, np.zeros(3), {})
