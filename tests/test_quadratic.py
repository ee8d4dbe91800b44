"""Quadratic problems: oracles against finite differences, constants against numerical linear algebra."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ratecheck.problems import make_problem
from ratecheck.problems.quadratic import Quadratic, make, spectrum
from ratecheck.proofs.defedavg.presets import p1, p2

instances = st.fixed_dictionaries(
    {
        "dim": st.integers(1, 6),
        "clients": st.sampled_from([2, 4, 6]),
        "mu": st.floats(0.05, 1.0),
        "zeta": st.floats(0.0, 3.0),
        "sigma": st.floats(0.0, 2.0),
        "heterogeneity": st.sampled_from(["none", "alternating", "random"]),
        "curvature": st.sampled_from(["shared", "per_client"]),
        "rotate": st.booleans(),
        "seed": st.integers(0, 1000),
    }
)


def _fit_dim(params, L):
    """In one dimension mu and L are the same eigenvalue."""
    return {**params, "mu": L} if params["dim"] == 1 else params


@settings(max_examples=40, deadline=None)
@given(instances, st.integers(0, 10_000))
def test_local_gradients_match_finite_differences(params, point_seed):
    prob = make(L=2.0, **_fit_dim(params, 2.0))
    rng = np.random.default_rng(point_seed)
    w = rng.standard_normal((2, prob.num_clients, prob.dim))
    clients = np.broadcast_to(np.arange(prob.num_clients), (2, prob.num_clients))
    grad = prob.local_grad(prob.gather(clients), w)

    def f_client(i, x):
        h = prob.hessians if prob.hessians.ndim == 2 else prob.hessians[i]
        diff = x - prob.centers[i]
        return 0.5 * diff @ h @ diff

    step = 1e-6  # central differences of a quadratic are exact up to rounding (~1e-10 here)
    for r in range(2):
        for i in range(prob.num_clients):
            e = np.eye(prob.dim) * step
            fd = [(f_client(i, w[r, i] + e[j]) - f_client(i, w[r, i] - e[j])) / (2 * step) for j in range(prob.dim)]
            np.testing.assert_allclose(grad[r, i], fd, rtol=1e-6, atol=1e-6)
    # the global gradient is the client mean and vanishes at x*
    x = w[:, 0]
    np.testing.assert_allclose(prob.grad(x), prob.client_grads(x).mean(axis=1), atol=1e-10)
    np.testing.assert_allclose(prob.grad(prob.x_star[None]), 0.0, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(instances, st.floats(1.0, 10.0))
def test_constants_against_numerical_eigenvalues(params, L):
    params = _fit_dim({**params, "mu": min(params["mu"], L)}, L)
    prob = make(L=L, **params)
    const = prob.constants()
    hess = prob.hessians if prob.hessians.ndim == 3 else prob.hessians[None]
    # analytic: the construction's spectrum runs from mu to L for every client
    assert const["L"].value == pytest.approx(L, rel=1e-10)
    assert const["L"].value == pytest.approx(np.linalg.eigvals(hess).real.max(), rel=1e-10)
    h_bar = hess.mean(axis=0)
    assert const["mu"].value == pytest.approx(np.linalg.eigvals(h_bar).real.min(), rel=1e-10)
    if params["curvature"] == "shared":
        assert const["mu"].value == pytest.approx(params["mu"], rel=1e-10)
    # F* and Delta from the closed form agree with direct evaluation
    hessians = np.broadcast_to(hess, (prob.num_clients, prob.dim, prob.dim))
    f = lambda x: np.mean([0.5 * (x - c) @ h @ (x - c) for h, c in zip(hessians, prob.centers)])  # noqa: E731
    assert const["F_star"].value == pytest.approx(f(prob.x_star), abs=1e-10)
    assert const["Delta"].value == pytest.approx(f(prob.x0) - f(prob.x_star), rel=1e-9, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(instances, st.integers(0, 10_000))
def test_G_and_nu_bound_gradients_on_the_ball(params, point_seed):
    prob = make(**_fit_dim(params, 1.0))
    const = prob.constants()
    rng = np.random.default_rng(point_seed)
    u = rng.standard_normal((200, prob.dim))
    u *= (prob.radius * rng.uniform(0, 1, (200, 1)) ** (1 / prob.dim)) / np.linalg.norm(u, axis=1, keepdims=True)
    x = prob.x_star + u
    grads = prob.client_grads(x)
    assert np.linalg.norm(grads, axis=2).max() <= const["G"].value * (1 + 1e-9)
    spread = np.linalg.norm(grads - prob.grad(x)[:, None, :], axis=2)
    assert spread.max() <= const["nu"].value * (1 + 1e-9) + 1e-12


def test_spec_p1_numbers():
    """Spec defedavg §6 P1: h_j log-spaced in [0.1, 1], Delta = 1/2 sum h_j ~ 2.0435 with x0 = x* + 1."""
    prob = make_problem("quadratic", p1())
    h = 0.1 * 10 ** (np.arange(10) / 9)
    np.testing.assert_allclose(spectrum(10, 0.1, 1.0), h)
    assert prob.constants()["Delta"].value == pytest.approx(0.5 * h.sum(), rel=1e-12)
    assert prob.constants()["Delta"].value == pytest.approx(2.0435, abs=1e-4)
    assert prob.constants()["nu"].value == 0.0


def test_spec_p2_numbers():
    """Spec P2: F* = zeta^2 h_d / 2, nu^2 = zeta^2 h_d^2, x* = c_bar."""
    zeta = 1.5
    prob = make_problem("quadratic", p2(zeta=zeta, clients=8))
    assert prob.constants()["F_star"].value == pytest.approx(0.5 * zeta**2 * 1.0)
    assert prob.constants()["nu"].value == pytest.approx(zeta * 1.0)
    np.testing.assert_allclose(prob.x_star, prob.centers.mean(axis=0), atol=1e-12)


def test_noise_has_the_stated_variance():
    prob = make(dim=8, clients=2, sigma=1.7)
    from ratecheck.seeding import ReplicaStream

    stream = ReplicaStream(0, "0" * 64, range(64), "noise")
    clients = np.zeros((64, 2), dtype=int)
    w = np.zeros((64, 2, 8))
    batch = prob.gather(clients)
    xi = np.stack([prob.stochastic_grad(batch, w, stream) - prob.local_grad(batch, w) for _ in range(50)])
    sq = (xi**2).sum(axis=-1).ravel()  # 6400 draws of ||xi||^2, each sigma^2 chi^2_8 / 8
    # standard error of the mean: sigma^2 sqrt(2/8) / sqrt(6400) = 0.0090; allow 5 standard errors
    assert sq.mean() == pytest.approx(1.7**2, abs=5 * 1.7**2 * np.sqrt(2 / 8) / np.sqrt(sq.size))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"mu": -1.0}, "parameter mu = -1.0 is invalid"),
        ({"mu": 2.0, "L": 1.0}, "mu must be <= L"),
        ({"clients": 3, "zeta": 1.0}, "even number of clients"),
        ({"dim": 0}, "parameter dim = 0 is invalid"),
        ({"dim": 1, "mu": 0.5, "L": 1.0}, "single eigenvalue"),
        ({"sigma": -1.0}, "parameter sigma = -1.0 is invalid"),
        ({"heterogeneity": "weird"}, "parameter heterogeneity = 'weird' is invalid"),
    ],
)
def test_bad_parameters_name_the_rule(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make(**kwargs)


def test_non_spd_and_mismatched_arrays_are_refused():
    good = dict(centers=np.zeros((2, 3)), sigma=1.0, x0=np.ones(3), radius=None, spec_params={})
    with pytest.raises(ValueError, match="positive definite.*strong convexity"):
        Quadratic(hessians=np.diag([1.0, -0.5, 1.0]), **good)
    with pytest.raises(ValueError, match=r"client 1"):
        Quadratic(hessians=np.stack([np.eye(3), -np.eye(3)]), **good)
    with pytest.raises(ValueError, match="hessians must have shape"):
        Quadratic(hessians=np.eye(4), **good)
    with pytest.raises(ValueError, match="x0 must have shape"):
        Quadratic(hessians=np.eye(3), **{**good, "x0": np.ones(2)})
    with pytest.raises(ValueError, match="symmetric"):
        Quadratic(hessians=np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]]), **good)


def test_unknown_problem_parameter_lists_the_accepted_ones():
    with pytest.raises(ValueError, match="unknown parameter; accepted"):
        make_problem("quadratic", {"kappa": 3})
    with pytest.raises(ValueError, match="unknown problem family"):
        make_problem("nope", {})


def test_cosine_problem_p3_gradients_minimum_and_constants():
    """Spec P3: grad F_i by finite differences, F* = 0.645509 d (roots +-2.278863), nu exact."""
    from ratecheck.proofs.defedavg.presets import p3

    prob = make_problem("cosine_quadratic", p3(clients=4, zeta=1.0, dim=3))
    rng = np.random.default_rng(0)
    w = rng.normal(size=(1, 4, 3))
    batch = prob.gather(np.arange(4)[None, :])
    grad = prob.local_grad(batch, w)
    eps = 1e-6
    for i in range(4):
        f = lambda x: 0.5 * np.sum((x - prob.centers[i]) ** 2) + 3.0 * np.sum(np.cos(x))  # noqa: E731
        fd = [(f(w[0, i] + eps * e) - f(w[0, i] - eps * e)) / (2 * eps) for e in np.eye(3)]
        np.testing.assert_allclose(grad[0, i], fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.abs(prob.minimizer), 2.278863, atol=1e-6)
    assert prob.f_star == pytest.approx(0.645509 * 3 + 0.5, abs=1e-5)
    assert prob.constants()["L"].value == 4.0 and prob.constants()["nu"].value == pytest.approx(1.0)
    np.testing.assert_allclose(prob.grad(prob.minimizer[None])[0], 0.0, atol=1e-9)
    with pytest.raises(ValueError, match="alpha"):
        make_problem("cosine_quadratic", {"alpha": -1.0})
