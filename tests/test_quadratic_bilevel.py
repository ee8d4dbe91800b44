"""Bilevel problems P1-P3: oracles against finite differences, closed forms against their defining
equations, constants against numerical suprema, noise variances, bad input (spec simfbo §6.1-6.4)."""

import itertools

import numpy as np
import pytest

from ratecheck.problems import make_problem
from ratecheck.problems.quadratic_bilevel import PH_THIRD, PSI_THIRD, make
from ratecheck.proofs.simfbo.presets import p1, p2, p3
from ratecheck.seeding import ReplicaStream

INSTANCES = {
    "P1": p1(clients=6),
    "P1_hetA": p1(clients=6, hessian_spread=0.3, b=None),
    "P2": p2(clients=6),
    "P3": p3(clients=6, zeta=1.0),
}


def _all(prob, R=2):
    return np.broadcast_to(np.arange(prob.num_clients), (R, prob.num_clients))


def _f(prob, i, x, y):
    e = prob.e[i]
    if prob.upper == "quadratic":
        u = 0.5 * np.sum((y - e) ** 2)
    elif prob.upper == "pseudo_huber":
        u = np.sum(prob.delta**2 * (np.sqrt(1 + ((y - e) / prob.delta) ** 2) - 1))
    else:
        u = np.sum(y**2 / (1 + y**2)) + e @ y
    return u + 0.5 * prob.lam * np.sum((x - prob.s[i]) ** 2) + prob.h[i] @ x


def _g(prob, i, x, y):
    A = prob.A if prob.A.ndim == 2 else prob.A[i]
    return 0.5 * y @ A @ y - y @ (prob.B @ x + prob.c[i])


def _fd(fun, z, step=1e-6):
    eye = np.eye(z.size) * step
    return np.array([(fun(z + eye[j]) - fun(z - eye[j])) / (2 * step) for j in range(z.size)])


@pytest.mark.parametrize("name", INSTANCES)
def test_oracles_match_finite_differences(name):
    prob = make_problem("quadratic_bilevel", INSTANCES[name])
    rng = np.random.default_rng(1)
    n, dx, dy = prob.num_clients, prob.dim_x, prob.dim_y
    x, y, v = rng.standard_normal((2, n, dx)), rng.standard_normal((2, n, dy)), rng.standard_normal((2, n, dy))
    batch = prob.gather(_all(prob))
    gy = prob.lower_grad(batch, x, y, None)
    gv = prob.ls_grad(batch, x, y, v, None)
    gx = prob.surrogate_grad(batch, x, y, v, None)
    for r, i in itertools.product(range(2), range(n)):
        fd_gy = _fd(lambda z: _g(prob, i, x[r, i], z), y[r, i])
        fd_fy = _fd(lambda z: _f(prob, i, x[r, i], z), y[r, i])
        fd_fx = _fd(lambda z: _f(prob, i, z, y[r, i]), x[r, i])
        # grad_xy g_i v = d/dx (grad_y g_i . v)
        fd_jv = _fd(lambda z: _fd(lambda w: _g(prob, i, z, w), y[r, i], 1e-4) @ v[r, i], x[r, i], 1e-4)
        A = prob.A if prob.A.ndim == 2 else prob.A[i]
        np.testing.assert_allclose(gy[r, i], fd_gy, atol=1e-6)
        np.testing.assert_allclose(gv[r, i], A @ v[r, i] - fd_fy, atol=1e-6)
        np.testing.assert_allclose(gx[r, i], fd_fx - fd_jv, atol=1e-5)


@pytest.mark.parametrize("name", INSTANCES)
@pytest.mark.parametrize("reweighted", [False, True])
def test_closed_forms_solve_their_defining_equations(name, reweighted):
    """T0(a): the surrogate at (y*(x), v*(x)) equals grad Phi(x) (1e-12), for omega = p and omega = w."""
    prob = make_problem("quadratic_bilevel", INSTANCES[name])
    omega = prob.weights_for(np.arange(1, prob.num_clients + 1)) if reweighted else prob.p
    sol = prob.solution(omega)
    x = np.random.default_rng(2).standard_normal((3, prob.dim_x))
    ys, vs = prob.y_star(x, sol), prob.v_star(x, sol)
    n = prob.num_clients
    batch = prob.gather(_all(prob, 3))
    rep = lambda z: np.repeat(z[:, None, :], n, axis=1)  # noqa: E731
    avg = lambda g: np.einsum("n,rnd->rd", omega, g)  # noqa: E731
    np.testing.assert_allclose(avg(prob.lower_grad(batch, rep(x), rep(ys), None)), 0, atol=1e-12)
    np.testing.assert_allclose(avg(prob.ls_grad(batch, rep(x), rep(ys), rep(vs), None)), 0, atol=1e-12)
    hyper = prob.hypergrad(x, sol)
    np.testing.assert_allclose(avg(prob.surrogate_grad(batch, rep(x), rep(ys), rep(vs), None)), hyper, atol=1e-12)
    # grad Phi is the derivative of Phi(x) = F(x, y*(x)) (finite differences of the exact value)
    fd = _fd(lambda z: prob.value(z[None], sol)[0], x[0])
    np.testing.assert_allclose(hyper[0], fd, atol=1e-6)
    if sol.x_star is not None:
        np.testing.assert_allclose(prob.hypergrad(sol.x_star[None], sol), 0, atol=1e-11)
    else:
        assert prob.upper == "nonconvex" and reweighted  # only P3's Phi-tilde lacks a unique x*


def test_p3_stationary_point_is_zero_and_nonconvex_region_exists():
    prob = make_problem("quadratic_bilevel", p3(zeta=1.0))
    np.testing.assert_array_equal(prob.base.x_star, 0.0)
    # Phi = sum psi(kappa x): negative curvature beyond |kappa x| > 1/sqrt 3
    x = np.full((1, prob.dim_x), 1.5)
    d2 = (prob.value(x * 1.01) - 2 * prob.value(x) + prob.value(x * 0.99))[0]
    assert d2 < 0


def test_weighted_problem_does_not_depend_on_n_or_zeta():
    """Centred heterogeneity (spec pitfall 21): x* is the same for every n and zeta."""
    ref = make(**p1(clients=4, zeta=0.0)).base.x_star
    for clients, zeta in ((4, 1.0), (16, 2.0), (32, 1.0)):
        np.testing.assert_allclose(make(**p1(clients=clients, zeta=zeta)).base.x_star, ref, atol=1e-12)


def test_reweighted_point_differs_and_measures_are_exact():
    prob = make(**p1(clients=10, tilde_weights=[1] * 5 + [10] * 5))
    assert np.linalg.norm(prob.base.x_star - prob.tilde.x_star) > 0.1
    x = prob.tilde.x_star[None]
    state = {"x": x, "y": prob.y_star(x, prob.tilde), "v": prob.v_star(x, prob.tilde)}
    m = prob.measures(state)
    assert m["grad_norm_sq_tilde"][0] < 1e-24 and m["dist_sq_tilde"][0] < 1e-24 and m["v_err_tilde"][0] < 1e-24
    np.testing.assert_allclose(m["grad_norm_sq"], (prob.hypergrad(x) ** 2).sum(-1))
    assert m["grad_norm_sq"][0] > 1e-3  # SimFBO's plateau ||grad Phi(x-tilde*)||^2 > 0


def test_constants_against_numerical_suprema():
    p1_ = make(**p1())
    c = p1_.constants()
    assert c["mu_g"].value == pytest.approx(1.0) and c["L_2"].value == 0 and c["L_3"].value == 0
    H = np.block([[np.zeros((4, 4)), -p1_.B.T], [-p1_.B, p1_.A]])
    assert c["L_1"].value == pytest.approx(max(np.abs(np.linalg.eigvalsh(H)).max(), 1.0))
    # Assumption 4 is an identity with beta_gh = 1 for shared A, B (spec §6.1)
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((1, 4)), rng.standard_normal((1, 4))
    n = p1_.num_clients
    g = p1_.lower_grad(p1_.gather(_all(p1_, 1)), np.repeat(x[:, None], n, 1), np.repeat(y[:, None], n, 1), None)[0]
    lhs = p1_.p @ (g**2).sum(1)
    rhs = np.sum((p1_.p @ g) ** 2) + c["sigma_gh"].value ** 2
    assert lhs == pytest.approx(rhs, rel=1e-12)
    # ||v*(x)|| <= r = L_f/mu_g on the box, and the tighter v_star_bound too
    xs = rng.uniform(-1, 1, (2000, 4))
    xs *= c["R_x"].value / np.linalg.norm(xs, axis=1, keepdims=True) * rng.uniform(0, 1, (2000, 1))
    vmax = np.linalg.norm(p1_.v_star(xs), axis=1).max()
    assert vmax <= c["v_star_bound"].value <= c["r"].value
    u = np.linspace(-5, 5, 200001)
    ph3 = np.abs(3 * u / 1.0**2 * (1 + u**2) ** -2.5 * -1).max()  # |phi'''| at delta = 1
    assert PH_THIRD == pytest.approx(ph3, rel=1e-6)
    z = np.linspace(-3, 3, 600001)
    assert PSI_THIRD == pytest.approx(np.abs(24 * z * (z**2 - 1) / (1 + z**2) ** 4).max(), rel=1e-8)
    c3 = make(**p3(zeta=1.0)).constants()
    assert c3["L_1"].value == pytest.approx(max(2.0, (2 + np.sqrt(8)) / 2))


def test_noise_variances_are_exact():
    """N1: E||noise||^2 = sigma_g^2 on grad_y g and sigma_f^2 over grad f's two blocks; N2 keeps
    the sampled Hessian spectrum in [mu_g - sigma_h, L + sigma_h]. 20000 draws: relative SE ~ 1%
    (chi-square with 4*20000 degrees of freedom), so a 4% tolerance is > 4 standard errors."""
    prob = make(**p1(sigma_f=2.0, sigma_g=3.0, sigma_h=0.5))
    R, m = 4, 5000  # draws along the client axis: 4 generators, not 20000
    stream = ReplicaStream(0, "a" * 64, range(R), "noise")
    cl = np.zeros((R, m), dtype=int)
    batch = prob.gather(cl)
    z4, z = np.zeros((R, m, 4)), np.zeros((R, m, 4))
    gy = prob.lower_grad(batch, z4, z, stream) - prob.lower_grad(batch, z4, z, None)
    assert np.mean((gy**2).sum(-1)) == pytest.approx(9.0, rel=0.04)
    v = np.ones((R, m, 4))
    gv = prob.ls_grad(batch, z4, z, v, stream) - prob.ls_grad(batch, z4, z, v, None)
    gx = prob.surrogate_grad(batch, z4, z, v, stream) - prob.surrogate_grad(batch, z4, z, v, None)
    total = np.mean((gx**2).sum(-1))
    assert total == pytest.approx(4.0 * 4 / 8, rel=0.04)  # x-block: sigma_f^2 d_x/(d_x+d_y)
    # v-update noise: Hessian part +-0.5 per coordinate (v = 1) plus the y-block of grad f
    assert np.mean((gv**2).sum(-1)) == pytest.approx(4 * 0.25 + 4.0 * 4 / 8, rel=0.04)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="a_min = 0.0 is invalid"):  # the declaration (ratecheck.params)
        make(**p1(a_min=0.0))
    with pytest.raises(ValueError, match="clients = True"):  # a bool is never a number
        make(**p1(clients=True))
    with pytest.raises(ValueError, match="unknown parameter"):
        make(**p1(sigma=1.0))
    with pytest.raises(ValueError, match="mu_g"):
        make(**p1(a_min=0.1, a_max=0.2, hessian_spread=0.5))
    with pytest.raises(ValueError, match="weights"):
        make(**p1(clients=3, weights=[0.5, 0.3, 0.3]))
    with pytest.raises(ValueError, match="sigma_h"):
        make(**p1(sigma_h=1.0))
    with pytest.raises(ValueError, match="upper"):
        make(upper="cubic")
    with pytest.raises(ValueError, match="b"):
        make(**p2(b=None))


def test_n3_finite_sum_minibatch_variance_is_exact():
    """N3: each oracle averages b of K rows without replacement. Unbiased, with variance exactly
    (K-b)/(b(K-1)) (1/K) sum_k ||dev_ik||^2 per client: checked by Monte Carlo with 20000 replicas
    (relative SE of a variance estimate ~ sqrt(2/20000) ~ 1% per client; tolerance 4%); b = K is exact."""
    K, b = 5, 2
    prob = make(**p1(clients=3, sigma_f=0.0, sigma_g=0.0, finite_sum=K, batch_size=b))
    R = 20000
    ids = np.broadcast_to(np.arange(3), (R, 3))
    batch = prob.gather(ids)
    rng = np.random.default_rng(2)
    x, y, v = (np.broadcast_to(rng.standard_normal(d), (R, 3, d)) for d in (prob.dim_x, prob.dim_y, prob.dim_y))
    stream = ReplicaStream(0, "f" * 64, range(R), "noise")
    fpc = (K - b) / (b * (K - 1))
    dy = prob.dim_y
    for oracle, args, part, scale in ((prob.lower_grad, (x, y), slice(0, dy), 1.0),
                                      (prob.ls_grad, (x, y, v), slice(dy, 2 * dy), 1.0),
                                      (prob.surrogate_grad, (x, y, v), slice(2 * dy, None), prob.lam)):
        exact = oracle(batch, *args, None)
        noisy = oracle(batch, *args, stream)
        err = noisy - exact
        np.testing.assert_allclose(err.mean(0), 0.0, atol=0.03)
        want = fpc * scale**2 * (prob.rows[..., part] ** 2).sum(-1).mean(1)
        np.testing.assert_allclose((err**2).sum(-1).mean(0), want, rtol=0.04)
    c = prob.constants()
    assert c["sigma_g"].value == pytest.approx(np.sqrt(fpc * (prob.rows[..., :dy] ** 2).sum(-1).mean(1).max()))
    full = make(**p1(clients=3, sigma_f=0.0, sigma_g=0.0, finite_sum=K, batch_size=K))
    small = np.broadcast_to(np.arange(3), (4, 3))
    b_full = full.gather(small)
    np.testing.assert_allclose(full.lower_grad(b_full, x[:4], y[:4], ReplicaStream(0, "f" * 64, range(4), "noise")),
                               full.lower_grad(b_full, x[:4], y[:4], None), atol=1e-13)  # b = K: no noise
    assert full.constants()["sigma_g"].value == 0.0
    for bad in ({"finite_sum": 4, "batch_size": 5}, {"finite_sum": 4, "sigma_f": 1.0}, {"finite_sum": 0.5}):
        with pytest.raises(ValueError, match="finite_sum|batch_size"):
            make(**p1(clients=3, **{"sigma_f": 0.0, "sigma_g": 0.0, **bad}))


@pytest.mark.parametrize("params", [dict(lam=0.0, dim_x=3, dim_y=2), dict(lam=0.0, dim_x=2, dim_y=2, b=0.0)])
def test_p1_without_a_unique_minimizer_is_refused(params):
    """lam = 0 with dim_x > dim_y (or B = 0) leaves h flat along ker B: refused naming lam, not a LinAlgError."""
    from ratecheck.params import ParamError

    with pytest.raises(ParamError, match="lam"):
        make_problem("quadratic_bilevel", {"upper": "quadratic", **params})
