"""The least-squares family: TP0 by hand, closed forms against numerical solves, P4, bad input."""

import numpy as np
import pytest

from ratecheck.params import ParamError
from ratecheck.problems import least_squares as ls
from ratecheck.problems import make_problem
from ratecheck.proofs.strfedavg.lemmas import bgd_constants, fixed_point
from ratecheck.seeding import Streams


def test_tp0_every_constant_by_hand():
    eta = 0.3
    p = ls.tp0(eta_ref=eta)
    c = {k: v.value for k, v in p.constants().items()}
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(p.H))[-2:], [1 / 3, 2 / 3], atol=1e-14)
    np.testing.assert_allclose(p.project(np.array([3.0, -1, 5, 6])), [0.5, 0.5, 5, 6], atol=1e-14)
    assert c["h_star"] == pytest.approx(1 / 6)
    assert c["L_h"] == pytest.approx(1.0)
    assert c["alpha"] == pytest.approx(1 / 6) and c["kappa"] == 2
    np.testing.assert_allclose(p.x_star, [0.5, 0.5, 1, 2], atol=1e-14)
    assert c["f_star"] == pytest.approx(1 / 4)
    assert c["inf_f"] == pytest.approx(0.0, abs=1e-14)
    assert c["M"] == pytest.approx(1 / 4)
    np.testing.assert_allclose(p.outer.grad(p.x_star), [0.5, 0.5, 0, 0], atol=1e-14)
    assert c["gradf_star"] == pytest.approx(1 / np.sqrt(2))
    assert c["mu_f"] == pytest.approx(1.0) and c["L_f"] == pytest.approx(1.0)
    assert c["G_f2"] == pytest.approx(0.0, abs=1e-14)
    assert c["G_h2"] == pytest.approx(1 / 3)
    bgd = bgd_constants(p, eta)
    assert bgd["G2"] == pytest.approx(5 / 3)  # 2*0 + 4*1*1/4 + 2*1/3 (eta <= 1)
    assert bgd["B2"] == pytest.approx(4.0)  # max(4 eta, 4 L_h)
    z = 1 / (2 + 3 * eta)
    np.testing.assert_allclose(p.x_eta, [z, z, 1, 2], atol=1e-14)
    assert p.outer.value(p.x_eta) - p.f_star == pytest.approx(-(12 * eta + 9 * eta**2) / (4 * (2 + 3 * eta) ** 2))
    assert p.h_gap(p.x_eta) == pytest.approx(3 * eta**2 / (2 * (2 + 3 * eta) ** 2))
    f_eta_star = 1 / 6 + (2 / 3) * (z - 0.5) ** 2 + eta * z**2
    assert bgd["f_eta_star"] == pytest.approx(f_eta_star)
    assert bgd["G2_rig"] == pytest.approx(2 * (1 + eta) * (f_eta_star - eta / (3 * (1 + eta))))
    assert bgd["B2_rig"] == pytest.approx(2 * (1 + eta))


@pytest.mark.parametrize("eta", [1.0, 0.3, 0.05])
def test_tp0_bgd_inequalities_hold_on_samples(eta):
    p = ls.tp0()
    bgd = bgd_constants(p, eta)
    x_eta = p.regularized_solution(eta)
    f_eta_star = p.h_value(x_eta) + eta * p.outer.value(x_eta)
    rng = np.random.default_rng(1)
    for _ in range(200):
        x = rng.normal(scale=3, size=4)
        grads = [p.A[i].T @ (p.A[i] @ x - p.b[i]) + eta * (x - p.outer.q[i]) for i in range(3)]
        lhs = np.mean([g @ g for g in grads])
        gap = p.h_value(x) + eta * p.outer.value(x) - f_eta_star
        assert lhs <= bgd["G2"] + bgd["B2"] * gap + 1e-12
        assert lhs <= bgd["G2_rig"] + bgd["B2_rig"] * gap + 1e-12


@pytest.mark.parametrize("outer", ["tp1", "tp2a", "tp2b", "tp3a", "tp3b"])
def test_selected_solution_is_the_constrained_minimizer(outer):
    params = {"outer": outer, "dim": 8, "rank": 4, "clients": 2, "rows": 2, "mu": 1.0, "lam_min": 1.0, "lam_max": 2.0}
    if outer in ("tp3a", "tp3b"):
        params["lam"] = 0.25
    p = make_problem("least_squares", params)
    # feasible, and no feasible direction (the null space of A) decreases f to first order
    assert p.dist_sq(p.x_star) == pytest.approx(0.0, abs=1e-20)
    np.testing.assert_allclose(p.V2.T @ p.outer.grad(p.x_star), 0.0, atol=1e-10)
    if outer != "tp3b":  # global on X*_h: f is convex there, or phi >= 0 on the free coordinates
        rng = np.random.default_rng(0)
        for _ in range(50):
            y = p.x_star + p.V2 @ rng.normal(size=p.V2.shape[1])
            assert p.outer.value(y) >= p.f_star - 1e-12
    if "lam" in params:
        np.testing.assert_allclose(p.smoothed_grad(p.y_stat), 0.0, atol=1e-10)


def test_gradients_match_finite_differences():
    p = make_problem("least_squares", {"outer": "tp3a", "dim": 6, "rank": 3, "clients": 3, "rows": 1, "lam": 0.2,
                                       "mu": 1.0})
    x = np.random.default_rng(2).normal(size=6)
    eps = 1e-6
    for fn, grad in ((p.h_value, p.h_grad), (p.outer.value, p.outer.grad), (p.smoothed_value, p.smoothed_grad)):
        fd = np.array([(fn(x + eps * e) - fn(x - eps * e)) / (2 * eps) for e in np.eye(6)])
        np.testing.assert_allclose(grad(x), fd, atol=1e-6)
    # h - h* = 1/2 r^T H r agrees with the direct residual formula
    direct = np.mean([0.5 * np.sum((p.A[i] @ x - p.b[i]) ** 2) for i in range(3)]) - p.h_star
    assert p.h_gap(x) == pytest.approx(direct, rel=1e-10)


def test_weak_sharpness_constant_is_tight():
    p = make_problem("least_squares", {"dim": 10, "rank": 5, "clients": 5, "rows": 1, "lam_min": 0.5, "lam_max": 2.0})
    alpha = p.constants()["alpha"].value
    rng = np.random.default_rng(3)
    ratios = [p.h_gap(x) / p.dist_sq(x) for x in rng.normal(size=(200, 10))]
    assert min(ratios) >= alpha - 1e-12
    v = p.V1 @ np.linalg.eigh(p.H_row)[1][:, 0]  # the softest row-space direction attains alpha
    assert p.h_gap(p.x_star + v) / p.dist_sq(p.x_star + v) == pytest.approx(alpha)


def test_regularized_solution_and_fixed_point():
    p = make_problem("least_squares", {"mu": 1.0, "lam_min": 0.5, "lam_max": 1.0, "eta_ref": 0.5})
    x = p.x_eta
    np.testing.assert_allclose(p.h_grad(x) + 0.5 * p.outer.grad(x), 0.0, atol=1e-12)
    np.testing.assert_allclose(fixed_point(p, 0.5, 0.1, 1), x, atol=1e-12)  # K = 1: no drift (TP0 test 2)
    assert np.linalg.norm(fixed_point(p, 0.5, 0.02, 5) - x) > 1e-6


def test_additive_noise_has_the_declared_variance():
    p = make_problem("least_squares", {"sigma_h": 2.0, "sigma_f": 3.0, "dim": 8, "rank": 4, "clients": 2, "rows": 2})
    streams = Streams(0, "ab" * 32, range(4))  # 4 replicas x 1000 slots of client 0
    clients = np.zeros((4, 1000), dtype=int)
    batch = p.gather(clients)
    w = np.zeros((4, 1000, 8))
    exact_h = p.local_grad(batch, w)
    g = p.composite_grad(batch, w, 0.5, streams["noise"])
    exact = exact_h + 0.5 * p.outer.client_grad(None, w, batch.outer)
    err = np.sum((g - exact) ** 2, axis=-1)
    assert err.mean() == pytest.approx(4.0 + 0.25 * 9.0, rel=0.05)  # sigma_h^2 + eta^2 sigma_f^2


def test_interpolation_instance_p4():
    p = ls.interpolation(dim=200, clients=4, rows=10, batch=3)
    c = {k: v.value for k, v in p.constants().items()}
    assert c["h_star"] == pytest.approx(0.0, abs=1e-20)
    np.testing.assert_allclose(p.x_star, np.linalg.pinv(p.A.reshape(-1, 200)) @ p.b.reshape(-1), atol=1e-10)
    assert c["L"] == pytest.approx(max(np.linalg.eigvalsh(p.A[i].T @ p.A[i] / 10).max() for i in range(4)))
    m = p.measures(np.zeros((2, 200)))
    assert set(m) >= {"gap", "grad_norm_sq", "dist_sq"}
    # the multiplicative noise is exactly zero on the solution set (on 3,000 draws in the test below)
    batch, streams = p.gather(np.ones((2, 50), dtype=int)), Streams(0, "cd" * 32, range(2))
    assert np.abs(p.stochastic_grad(batch, np.broadcast_to(p.x_star, (2, 50, 200)).copy(), streams["noise"])).max() < 1e-12


def test_interpolation_minibatch_noise_inside_monte_carlo_ci():
    """P4's mini-batch rows over 3,000 draws (a Monte-Carlo sweep: the claims layer): unbiased, and exactly
    zero noise on the solution set (multiplicative noise)."""
    p = ls.interpolation(dim=200, clients=4, rows=10, batch=3)
    streams = Streams(0, "cd" * 32, range(2))
    clients = np.ones((2, 1500), dtype=int)
    batch = p.gather(clients)
    w = np.broadcast_to(p.x0, (2, 1500, 200)).copy()
    g = p.stochastic_grad(batch, w, streams["noise"]).reshape(3000, 200)
    exact = p.local_grad(batch, w)[0, 0]
    np.testing.assert_allclose(g.mean(axis=0), exact, atol=5 * g.std(axis=0).max() / np.sqrt(3000))
    at_sol = np.broadcast_to(p.x_star, (2, 1500, 200)).copy()
    assert np.abs(p.stochastic_grad(batch, at_sol, streams["noise"])).max() < 1e-12


@pytest.mark.parametrize("params, name", [
    ({"rank": 40}, "rank"),
    ({"rows": 25}, "rows"),
    ({"lam_min": 2.0, "lam_max": 1.0}, "lam_min"),
    ({"outer": "tp3b"}, "lam"),
    ({"lam": 0.0, "outer": "tp3b"}, "lam"),
    ({"x0": "x_eta"}, "x0"),
    ({"clients": True}, "clients"),
])
def test_bad_input_is_refused_with_the_parameter_named(params, name):
    with pytest.raises(ParamError, match=name):
        ls.make(**params)


def test_inconsistent_or_rank_deficient_clients_are_refused():
    A = np.array([[[1.0, 0, 0], [2.0, 0, 0]]])  # rank 1 < 2 rows
    with pytest.raises(ParamError, match="linearly independent"):
        ls.from_data(A, np.array([[1.0, 0.0]]))
    with pytest.raises(ParamError, match="over-parameterized"):
        ls.from_data(np.eye(3)[None], np.ones((1, 3)))


def test_strategy_draws_valid_small_instances():
    from hypothesis import given, settings

    @settings(max_examples=40, deadline=None, database=None)
    @given(ls.strategy())
    def build(params):
        p = make_problem("least_squares", params)
        assert p.dim <= 6 and p.V1.shape[1] < p.dim
        assert params["lam_min"] <= params["lam_max"]

    build()
    fixed = ls.strategy(mu=0.2, outer="tp1")
    from hypothesis import find

    assert find(fixed, lambda params: True)["mu"] == 0.2


def test_y_feas_sq_is_the_squared_distance_to_the_solution_set():
    p = make_problem("least_squares", {"dim": 6, "rank": 3, "clients": 3, "rows": 1, "outer": "tp3b", "lam": 0.25,
                                       "mu": 1.0, "lam_min": 1.0, "lam_max": 2.0})
    y = np.random.default_rng(0).standard_normal((4, 6))
    m = p.measures({"y": y, "x": y, "anchor": y})
    np.testing.assert_allclose(m["y_feas_sq"], np.sum((y - p.project(y)) ** 2, axis=1), atol=1e-12)
    np.testing.assert_allclose(m["y_feas"] ** 2, m["y_feas_sq"], atol=1e-12)
