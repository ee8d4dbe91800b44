"""FedBiO test problems (spec fedbio §6): worked rational instances, closed forms against finite
differences and numerical solves, oracle noise levels, bad input."""

import numpy as np
import pytest

from problems import make_problem
from problems.quadratic_bilevel import make_fedbio
from ratecheck.params import ParamError
from ratecheck.seeding import ReplicaStream


def test_worked_instance_test_a():
    """Spec §6.1: p = d = 2, A = diag(1, 4), B = I, rho = 1, c_bar = (1, 0), d_bar = (0, 1), e_bar = 0."""
    p = make_fedbio(test="A", clients=2)
    np.testing.assert_allclose(p.x_star, [-0.5, 4 / 17], atol=1e-14)
    np.testing.assert_allclose(p.y_star(p.x_star), [0.5, 1 / 17], atol=1e-14)
    np.testing.assert_allclose(p.u_star(p.x_star), [0.5, -4 / 17], atol=1e-14)
    np.testing.assert_allclose(p.hessian(p.x_star), np.diag([2, 17 / 16]), atol=1e-14)
    c = p.constants()
    assert c["L"].value == pytest.approx(2 + np.sqrt(5))
    assert c["mu"].value == 1.0
    assert c["Delta"].value == pytest.approx(19 / 68)
    assert c["Delta_y"].value == pytest.approx(1.0)
    assert c["Delta_u"].value == pytest.approx(17 / 16)
    assert c["Lbar_exact"].value == pytest.approx(2.0)
    assert c["zeta_gyy"].value == 0.0 and c["zeta_gxy"].value == 0.0


def test_worked_instance_neumann_fixed_point():
    """Spec §6.3 (C1): x_Q = (-n1/(1+n1), 4 n2/(16+n2)), n_i = 1 - (1 - tau_N a_i)^(Q+1), tau_N = 0.2."""
    p = make_fedbio(test="C1", clients=2)
    for Q in (0, 4, 20):
        n1, n2 = 1 - 0.8 ** (Q + 1), 1 - 0.2 ** (Q + 1)
        np.testing.assert_allclose(p.x_neumann(Q, 0.2), [-n1 / (1 + n1), 4 * n2 / (16 + n2)], atol=1e-14)
    np.testing.assert_allclose(p.x_neumann(0, 0.2), [-0.16667, 0.19048], atol=1e-5)
    np.testing.assert_allclose(p.x_neumann(200, 0.2), p.x_star, atol=1e-14)


@pytest.mark.parametrize("test, setting", [("A", None), ("B", None), ("C1", None), ("C2", None), ("D", None),
                                           ("D", "local"), ("Dp", None), ("Dp", "local")])
def test_hypergradient_matches_finite_differences_and_x_star_is_stationary(test, setting):
    kw = {"s_H": 0.4, "s_B": 0.3} if test in ("B", "C2") else {}
    p = make_fedbio(test=test, setting=setting, clients=6, **kw)
    x = np.array([0.3, -0.7])
    h = 1e-6
    fd = np.array([(p.value(x + h * e) - p.value(x - h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(p.hypergrad(x), fd, atol=1e-7)
    hess_fd = np.array([(p.hypergrad(x + h * e) - p.hypergrad(x - h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(p.hessian(x), hess_fd, atol=1e-6)
    assert np.linalg.norm(p.hypergrad(p.x_star)) < 1e-12


def test_heterogeneity_does_not_move_x_star_in_the_global_setting():
    """Zero-sum offsets, average A_m = A_bar, B_m = B_bar: x* is the same for every s, s_H, s_B and M."""
    ref = make_fedbio(test="A", clients=2, s=0.0).x_star
    for kw in ({"test": "A", "clients": 7, "s": 2.0}, {"test": "B", "clients": 8, "s_H": 0.5, "s_B": 0.3}):
        np.testing.assert_allclose(make_fedbio(**kw).x_star, ref, atol=1e-12)


def test_test_d_antisymmetric_pairs_have_the_constructed_minimizer():
    p = make_fedbio(test="D", clients=6)
    assert np.linalg.norm(p.hypergrad(p.x_star)) < 1e-14
    np.testing.assert_allclose(p.u_star(p.x_star), 0.0, atol=1e-14)  # u_x* = 0 by oddness (spec §6.4)
    assert p.constants()["C_f"].value == pytest.approx(np.sqrt(2 + 2))  # delta sqrt(d + rho^2 p)


def test_naive_fixed_point_closed_form_solves_the_averaged_local_hypergradients():
    p = make_fedbio(test="B", clients=8, s_H=0.5, s_B=0.3)
    xn = p.x_naive
    assert np.linalg.norm(p.client_hypergrads(xn[None]).mean(1)) < 1e-12
    assert np.linalg.norm(xn - p.x_star) > 0.02


def test_oracle_noise_levels_are_exact():
    """N1: E||noise||^2 = sigma^2 per oracle (Jacobian and Hessian in Frobenius norm), / b for a minibatch;
    the same sample at two points has a noise-free difference (additive oracles)."""
    p = make_fedbio(test="A", clients=3, sigma_f=2.0, sigma_g=1.5, sigma_J=0.7, sigma_H=0.4)
    R, m = 40, 1000  # 40000 samples; the client axis is just a shape to the sampler
    stream = ReplicaStream(0, "c" * 64, range(R), "noise")
    s = p.draw(stream, (m,), batch=4)
    assert np.mean((s.fx**2).sum(-1) + (s.fy**2).sum(-1)) == pytest.approx(4.0 / 4, rel=0.03)
    assert np.mean((s.gy**2).sum(-1)) == pytest.approx(2.25 / 4, rel=0.03)
    assert np.mean((s.J**2).sum((-1, -2))) == pytest.approx(0.49 / 4, rel=0.03)
    assert np.mean((s.H**2).sum((-1, -2))) == pytest.approx(0.16 / 4, rel=0.03)
    np.testing.assert_array_equal(s.H, np.swapaxes(s.H, -1, -2))
    s = p.draw(stream, (3,), batch=4)
    x1, x2 = np.zeros((R, 3, 2)), np.ones((R, 3, 2))
    diff = p.grad_y_g(x2, x2, s) - p.grad_y_g(x1, x1, s)
    exact = p.grad_y_g(x2, x2, p.draw(None, ())) - p.grad_y_g(x1, x1, p.draw(None, ()))
    np.testing.assert_allclose(diff, exact, atol=1e-12)


def test_bad_input_names_the_parameter():
    with pytest.raises(ParamError, match="s_H"):
        make_fedbio(test="A", s_H=0.5)
    with pytest.raises(ParamError, match="s_H = 1.5"):
        make_fedbio(test="B", s_H=1.5)
    with pytest.raises(ParamError, match="clients = True"):
        make_problem("fedbio_bilevel", {"clients": True})
    with pytest.raises(ParamError, match="test"):
        make_problem("fedbio_bilevel", {"test": "E"})


@pytest.mark.parametrize("replacement", [False, True])
def test_finite_sum_minibatch_variance_matches_its_closed_form(replacement):
    """N2: the mean of b of K rows has E||.||^2 = s^2/b (K - b)/(K - 1) without replacement (s^2/b with),
    s^2 = sigma^2 exactly; at b = K without replacement it is exactly zero (the full sum). 40000 draws per
    block: the relative standard error of the mean square is ~1%, so 5% is a 5-sigma tolerance."""
    K = 8
    p = make_fedbio(test="A", clients=3, sigma_f=2.0, sigma_g=1.5, finite_sum=K, replacement=replacement)
    assert p.row_variance("fx", 1) + p.row_variance("fy", 1) == pytest.approx(4.0)
    assert p.row_variance("gy", 1) == pytest.approx(2.25)
    np.testing.assert_allclose(p.rows_f.mean(1), 0.0, atol=1e-12)  # the client's mean is its own gradient
    R, m = 40, 1000
    stream = ReplicaStream(0, "d" * 64, range(R), "noise")
    for b in (1, 3, 6):
        s = p.draw(stream, (3, m // 3), batch=b)
        for block in ("fx", "fy", "gy"):
            got = np.mean((getattr(s, block) ** 2).sum(-1))
            assert got == pytest.approx(p.row_variance(block, b), rel=0.05), (block, b)
    if not replacement:
        s = p.draw(stream, (3,), batch=K)
        np.testing.assert_allclose(s.fx, 0.0, atol=1e-12)
        with pytest.raises(ParamError, match="batch"):
            p.draw(stream, (3,), batch=K + 1)
    else:
        assert p.row_variance("gy", K) == pytest.approx(2.25 / K)
