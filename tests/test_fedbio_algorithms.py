"""FedBiO, FedBiOAcc, FedBiO-Local, FedBiOAcc-Local against plain per-client recursions of Algorithms
1-4 (Python loops over clients, the same noise replayed), and bad input."""

import numpy as np
import pytest

from ratecheck.algorithms.periodic import storm_step_size
from ratecheck.params import ParamError
from ratecheck.problems.quadratic_bilevel import make_fedbio
from ratecheck.registry import make_algorithm
from ratecheck.seeding import Streams

KEY = "d" * 64


def _steps(alg, prob, T, replicas=2):
    streams = Streams(5, KEY, range(replicas))
    state = alg.init(prob, streams)
    for t in range(T):
        state, costs = alg.round(state, prob, t, streams)
    return state, costs


def _replay(prob, replicas=2):
    """The noise stream the algorithm used, replayed for the reference."""
    return Streams(5, KEY, range(replicas))["noise"]


def _oracles(prob, m, s, r):
    """Client m's exact-plus-sampled oracles for replica r of an OracleSample s (Python, one client)."""
    A, B, c, d, e = prob.A[m], prob.B[m], prob.c[m], prob.d_m[m], prob.e_m[m]
    def pick(z, *idx):
        return 0.0 if z is None else z[(r, m) + idx]
    return {
        "gy": lambda x, y: A @ y - B @ x - c + pick(s.gy),
        "fx": lambda x, y: prob.rho * (x - e) + pick(s.fx),
        "fy": lambda x, y: (y - d) + pick(s.fy),
        "jvp": lambda u: -B.T @ u + (0.0 if s.J is None else s.J[r, m] @ u),
        "hvp": lambda u, k=0: A @ u + (0.0 if s.H is None else s.H[r, m, k] @ u),
    }


def test_fedbio_matches_per_client_recursion_with_noise():
    prob = make_fedbio(test="B", clients=3, s_H=0.5, s_B=0.3, sigma_f=0.5, sigma_g=0.4, sigma_J=0.3, sigma_H=0.2)
    alg = make_algorithm("fedbio", {"I": 3, "eta": 0.05, "gamma": 0.1, "tau": 0.08, "bx": 2, "by": 3})
    T = 7
    state, costs = _steps(alg, prob, T)
    noise = _replay(prob)
    x0, y0, u0 = (prob.initial_state()[k] for k in ("x", "y", "v"))
    X, Y, U = (np.tile(z, (2, 3, 1)) for z in (x0, y0, u0))
    for t in range(1, T + 1):
        sy = prob.draw(noise, (3,), 3, oracles=("gy",))
        sx = prob.draw(noise, (3,), 2, oracles=("fx", "fy", "J", "H"))
        Xn, Yn, Un = X.copy(), Y.copy(), U.copy()
        for r in range(2):
            for m in range(3):
                oy, ox = _oracles(prob, m, sy, r), _oracles(prob, m, sx, r)
                x, y, u = X[r, m], Y[r, m], U[r, m]
                Yn[r, m] = y - 0.1 * oy["gy"](x, y)
                Xn[r, m] = x - 0.05 * (ox["fx"](x, y) - ox["jvp"](u))
                Un[r, m] = u + 0.08 * (ox["fy"](x, y) - ox["hvp"](u))
        if t % 3 == 0:
            for Z in (Xn, Yn, Un):
                Z[:] = Z.mean(1, keepdims=True)
        X, Y, U = Xn, Yn, Un
    np.testing.assert_allclose(state.x, X, atol=1e-13)
    np.testing.assert_allclose(state.y, Y, atol=1e-13)
    np.testing.assert_allclose(state.u, U, atol=1e-13)
    out = alg.output(state)
    np.testing.assert_allclose(out["x"], X.mean(1), atol=1e-13)  # the virtual average
    assert costs["samples_g_per_client"] == 3 and costs["jvp_per_client"] == 2


def test_fedbioacc_matches_per_client_recursion_with_storm_pairs():
    prob = make_fedbio(test="B", clients=2, s_H=0.5, s_B=0.3, sigma_f=0.5, sigma_g=0.4, sigma_J=0.3, sigma_H=0.2)
    params = {"I": 2, "eta": 0.1, "gamma": 0.2, "tau": 0.1, "b": 2, "b1": 5, "alpha_gain": 0.4, "u_bar": 1.0,
              "c_nu": 0.5, "c_om": 0.7, "c_u": 0.9}
    alg = make_algorithm("fedbioacc", params)
    T = 5
    state, _ = _steps(alg, prob, T)
    noise = _replay(prob)
    x0, y0, u0 = (prob.initial_state()[k] for k in ("x", "y", "v"))
    X, Y, U = (np.tile(z, (2, 2, 1)) for z in (x0, y0, u0))

    def targets(o, x, y, u):
        return {"om": o["gy"](x, y), "nu": o["fx"](x, y) - o["jvp"](u), "q": o["hvp"](u) - o["fy"](x, y)}

    s1 = prob.draw(noise, (2,), 5)
    mom = {k: np.zeros((2, 2, 2)) for k in ("om", "nu", "q")}
    for r in range(2):
        for m in range(2):
            for k, v in targets(_oracles(prob, m, s1, r), X[r, m], Y[r, m], U[r, m]).items():
                mom[k][r, m] = v
    for t in range(1, T + 1):
        a = storm_step_size(t, 4.0, 1.0, 0.4)
        Xn, Yn, Un = X - 0.1 * a * mom["nu"], Y - 0.2 * a * mom["om"], U - 0.1 * a * mom["q"]
        if t % 2 == 0:
            for Z in (Xn, Yn, Un):
                Z[:] = Z.mean(1, keepdims=True)
        s = prob.draw(noise, (2,), 2)
        new = {k: np.zeros((2, 2, 2)) for k in mom}
        for r in range(2):
            for m in range(2):
                o = _oracles(prob, m, s, r)  # ONE sample at both points
                tn, to = targets(o, Xn[r, m], Yn[r, m], Un[r, m]), targets(o, X[r, m], Y[r, m], U[r, m])
                for k, c in (("om", 0.7), ("nu", 0.5), ("q", 0.9)):
                    new[k][r, m] = tn[k] + (1 - c * a**2) * (mom[k][r, m] - to[k])
        if t % 2 == 0:
            new = {k: np.broadcast_to(v.mean(1, keepdims=True), v.shape).copy() for k, v in new.items()}
        X, Y, U, mom = Xn, Yn, Un, new
    np.testing.assert_allclose(state.x, X, atol=1e-13)
    np.testing.assert_allclose(state.u, U, atol=1e-13)
    np.testing.assert_allclose(state.momenta["q"], mom["q"], atol=1e-13)


def _neumann(o, x, y, Q, tau_N):
    v = o["fy"](x, y)
    total = v.copy()
    for k in range(1, Q + 1):
        v = v - tau_N * o["hvp"](v, Q - k)
        total = total + v
    return o["fx"](x, y) - tau_N * o["jvp"](total)


def test_neumann_estimator_with_exact_hessian_is_the_truncated_inverse():
    """tau_N sum_{k=0}^{Q} (I - tau_N A)^k = A^-1 (I - (I - tau_N A)^(Q+1)): Q+1 terms (spec §1.2)."""
    prob = make_fedbio(test="C1", clients=2)
    x, y = np.array([0.3, -0.2]), np.array([0.5, 0.1])
    o = _oracles(prob, 0, prob.draw(None, ()), 0)
    for Q in (0, 1, 5):
        N = prob.neumann_factor(Q, 0.2)[0]
        expected = prob.rho * (x - prob.e_m[0]) + prob.B[0].T @ N @ np.linalg.solve(prob.A[0], y - prob.d_m[0])
        np.testing.assert_allclose(_neumann(o, x, y, Q, 0.2), expected, atol=1e-14)


@pytest.mark.parametrize("neumann_batch", ["copies", "per_factor"])
def test_fedbio_local_matches_per_client_recursion_and_never_averages_y(neumann_batch):
    prob = make_fedbio(test="C2", clients=3, s_H=0.5, s_B=0.3, sigma_f=0.5, sigma_g=0.4, sigma_J=0.3, sigma_H=0.2)
    alg = make_algorithm("fedbio_local", {"I": 2, "eta": 0.1, "gamma": 0.2, "Q": 3, "tau_N": 0.15, "bx": 2,
                                          "neumann_batch": neumann_batch})
    T = 5
    state, costs = _steps(alg, prob, T)
    noise = _replay(prob)
    X, Y = (np.tile(prob.initial_state()[k], (2, 3, 1)) for k in ("x", "y"))
    for t in range(1, T + 1):
        sy = prob.draw(noise, (3,), 1, oracles=("gy",))
        if neumann_batch == "copies":  # b_x i.i.d. copies, each with its own Q + 2 samples
            sx = prob.draw(noise, (3, 2), 1, hessians=3, oracles=("fx", "fy", "J", "H"))
        else:  # one chain: grad f, the Jacobian and each of the Q Hessians a minibatch of b_x = 2
            sx = prob.draw(noise, (3,), 2, hessians=3, oracles=("fx", "fy", "J", "H"))
        Xn, Yn = X.copy(), Y.copy()
        for r in range(2):
            for m in range(3):
                if neumann_batch == "copies":
                    est = []
                    for j in range(2):
                        sub = type(sx)(*(None if z is None else z[:, :, j] for z in (sx.fx, sx.fy, sx.gy, sx.J, sx.H)))
                        est.append(_neumann(_oracles(prob, m, sub, r), X[r, m], Y[r, m], 3, 0.15))
                else:
                    est = [_neumann(_oracles(prob, m, sx, r), X[r, m], Y[r, m], 3, 0.15)]
                Xn[r, m] = X[r, m] - 0.1 * np.mean(est, axis=0)
                Yn[r, m] = Y[r, m] - 0.2 * _oracles(prob, m, sy, r)["gy"](X[r, m], Y[r, m])
        if t % 2 == 0:
            Xn[:] = Xn.mean(1, keepdims=True)
        X, Y = Xn, Yn
    np.testing.assert_allclose(state.x, X, atol=1e-13)
    np.testing.assert_allclose(state.y, Y, atol=1e-13)
    assert np.ptp(state.y[0], axis=0).max() > 1e-3  # y stays client-specific
    assert costs["hvp_per_client"] == 6 and costs["floats_up"] == 0.0  # t = 5 is not a sync


def test_fedbioacc_local_runs_and_averages_only_x_and_nu():
    prob = make_fedbio(test="C1", clients=3, sigma_f=0.5, sigma_g=0.5)
    alg = make_algorithm("fedbioacc_local", {"I": 2, "eta": 0.1, "gamma": 0.2, "Q": 3, "tau_N": 0.2, "b": 2,
                                             "b1": 4, "alpha_gain": 0.3, "u_bar": 1.0, "c_nu": 0.5, "c_om": 0.5})
    state, costs = _steps(alg, prob, 4)
    assert np.ptp(state.x[0], axis=0).max() < 1e-14 and np.ptp(state.momenta["nu"][0], axis=0).max() < 1e-14
    assert np.ptp(state.y[0], axis=0).max() > 1e-3 and np.ptp(state.momenta["om"][0], axis=0).max() > 1e-3
    assert costs["samples_g_per_client"] == 2 * 2 * 3  # b_y = b M, at two points (Theorem 8)


def test_bad_input():
    prob = make_fedbio(test="A", clients=2)
    L = prob.constants()["L"].value
    with pytest.raises(ParamError, match=r"tau .*1/L"):
        make_algorithm("fedbio", {"tau": 0.5}).validate(prob)
    make_algorithm("fedbio", {"tau": 0.5, "steps": "record"}).validate(prob)  # the engine records the divergence
    local = make_fedbio(test="C1", clients=2)
    with pytest.raises(ParamError, match="tau_N"):
        make_algorithm("fedbio_local", {"tau_N": 1.0 / L}).validate(local)
    with pytest.raises(ParamError, match="local lower-level"):
        make_algorithm("fedbio_local", {}).validate(prob)
    with pytest.raises(ParamError, match="I = 0"):
        make_algorithm("fedbio", {"I": 0})
    with pytest.raises(ParamError, match="bx = True"):
        make_algorithm("fedbio", {"bx": True})
    noisy = make_fedbio(test="A", clients=2, sigma_H=0.5)
    with pytest.warns(UserWarning, match="sigma_H"):
        make_algorithm("fedbio", {"tau": 0.22}).validate(noisy)  # 0.22 L < 1 <= 0.22 (L + sigma_H)


def test_simfbo_fednest_runs_on_the_fedbio_problems():
    """One FedNest implementation (ratecheck.algorithms.bilevel_baselines) for both papers: on Test B it
    reaches x* (global Hessian in its Neumann terms) and counts its sub-loop rounds as communication."""
    from ratecheck.simulate.engine import run

    prob = make_fedbio(test="B", clients=4, s_H=0.5, s_B=0.3)
    alg = make_algorithm("fednest", {"eta_y": 0.2, "eta_x": 0.3, "neumann_step": 0.2, "inner_rounds": 5,
                                     "neumann_terms": 40, "neumann": "series"})  # Algorithm 3's N' is random
    trace = run(alg, prob, 150, replicas=2)
    assert trace.at_end("dist_sq").max() < 1e-8
    assert trace.counters["communication_rounds"][-1] == 150 * (2 * 5 + 40 + 2)
    light = run(make_algorithm("lfednest", {"eta_y": 0.2, "eta_x": 0.3, "neumann_step": 0.2, "neumann_terms": 40,
                                            "neumann": "series"}),
                prob, 150, replicas=2)
    assert light.at_end("dist_sq").min() > 1e-6  # client-local Hessians: the naive bias again


def test_steps_record_lets_the_engine_record_the_divergence():
    """tau L >= 1 with steps='record': the u recursion blows up and the engine records its round (the claim
    layer turns that into an INCONCLUSIVE naming the round)."""
    from ratecheck.simulate.engine import run

    prob = make_fedbio(test="A", clients=2)
    trace = run(make_algorithm("fedbio", {"tau": 0.6, "steps": "record"}), prob, 3000, replicas=2)
    assert (trace.diverged_round > 0).all()


def test_stocbio_matches_a_hand_recursion_with_the_same_noise():
    """StocBiO (M = 1): D inner SGD steps on y (warm start, batch b_y each), then one x step along the Neumann
    hypergradient at (x_k, y_k^D) with Q independent Hessian batches; replayed draw by draw."""
    prob = make_fedbio(test="C1", clients=1, sigma_f=0.5, sigma_g=0.4, sigma_J=0.3, sigma_H=0.2)
    alg = make_algorithm("stocbio", {"eta": 0.1, "gamma": 0.2, "D": 3, "Q": 4, "tau_N": 0.2, "b": 2, "by": 3})
    T = 5
    state, costs = _steps(alg, prob, T)
    noise = _replay(prob)
    x0, y0 = (prob.initial_state()[k] for k in ("x", "y"))
    X, Y = np.tile(x0, (2, 1, 1)), np.tile(y0, (2, 1, 1))
    for _ in range(T):
        for _ in range(3):
            s = prob.draw(noise, (1,), 3, oracles=("gy",))
            Y = np.stack([[Y[r, 0] - 0.2 * _oracles(prob, 0, s, r)["gy"](X[r, 0], Y[r, 0])] for r in range(2)])
        s = prob.draw(noise, (1,), 2, hessians=4, oracles=("fx", "fy", "J", "H"))
        X = np.stack([[X[r, 0] - 0.1 * _neumann(_oracles(prob, 0, s, r), X[r, 0], Y[r, 0], 4, 0.2)] for r in range(2)])
    np.testing.assert_allclose(state.x, X, atol=1e-13)
    np.testing.assert_allclose(state.y, Y, atol=1e-13)
    assert costs["communication_rounds"] == 0 and costs["hvp_per_client"] == 8 and costs["samples_g_per_client"] == 9
    with pytest.raises(ParamError, match="clients"):
        alg.validate(make_fedbio(test="C1", clients=2))
    with pytest.raises(ParamError, match="tau_N"):
        make_algorithm("stocbio", {"tau_N": 0.5}).validate(prob)


def test_batches_larger_than_a_finite_sum_are_refused_before_running():
    """N2 without replacement: a minibatch cannot exceed the K rows of a client (with replacement it can)."""
    prob = make_fedbio(test="A", clients=2, sigma_f=1.0, sigma_g=1.0, finite_sum=4)
    make_algorithm("fedbio", {"bx": 4, "by": 4}).validate(prob)
    with pytest.raises(ParamError, match="by.*K = 4"):
        make_algorithm("fedbio", {"bx": 2, "by": 5}).validate(prob)
    with pytest.raises(ParamError, match="b1"):
        make_algorithm("fedbioacc", {"b": 2, "b1": 8}).validate(prob)
    local = make_fedbio(test="C1", clients=2, sigma_f=1.0, sigma_g=1.0, finite_sum=4)
    with pytest.raises(ParamError, match="by"):  # Theorem 8's b_y = b M = 6 > 4
        make_algorithm("fedbioacc_local", {"b": 3, "first_batch": "exact"}).validate(local)
    make_algorithm("fedbio", {"bx": 8, "by": 8}).validate(
        make_fedbio(test="A", clients=2, sigma_f=1.0, finite_sum=4, replacement=True))


# -- the minibatch of eq. (6): b_x copies (default) or one chain of b_x-minibatch factors (spec §2.6 item 5) --


def _flipped(sample, Q):
    """Every sign pattern of the blocks (grad_x f, grad_y f, Jacobian, Hessians 1..Q) of a one-replica sample, on
    the replica axis: 2^(Q+3) samples. Averaging a function that is multilinear in independent symmetric blocks
    over these patterns gives its expectation at zero noise EXACTLY (every term holding some block cancels)."""
    from itertools import product

    signs = np.array(list(product((1.0, -1.0), repeat=Q + 3)))
    def lead(z):
        return (-1,) + (1,) * (z.ndim - 1)
    blocks = {k: getattr(sample, k)[0][None] * signs[:, j].reshape(lead(getattr(sample, k)))
              for j, k in enumerate(("fx", "fy", "J"))}
    H = sample.H[0][None]
    blocks["H"] = H * signs[:, 3:].reshape((-1,) + (1,) * (H.ndim - 4) + (Q, 1, 1))
    return type(sample)(fx=blocks["fx"], fy=blocks["fy"], gy=None, J=blocks["J"], H=blocks["H"])


@pytest.mark.parametrize("neumann_batch", ["copies", "per_factor"])
def test_neumann_minibatch_is_unbiased_for_the_truncated_series_exactly(neumann_batch):
    """Both readings of the minibatch are multilinear in independent, symmetric noise blocks (each Hessian draw
    enters one factor once), so their mean is the truncated series B^T N_Q A^-1 (y - d) + grad_x f of the exact
    oracles: checked exactly by averaging over all sign flips of the blocks. Reading one Hessian draw in every
    factor (pitfall 11) breaks multilinearity and the same average misses the series."""
    Q, b = 3, 2
    prob = make_fedbio(test="C2", clients=2, s_H=0.5, s_B=0.3, sigma_f=0.8, sigma_J=0.5, sigma_H=0.3)
    alg = make_algorithm("fedbio_local", {"Q": Q, "tau_N": 0.2, "bx": b, "neumann_batch": neumann_batch})
    sample = _flipped(alg.draw_neumann(prob, _replay(prob, replicas=1), b), Q)
    n = sample.fx.shape[0]
    x = np.broadcast_to(np.array([0.3, -0.7]), (n, 2, 2))
    y = np.broadcast_to(np.array([[0.5, 0.1], [-0.2, 0.9]]), (n, 2, 2))
    exact = alg.hypergrad_estimate(prob, x[:1], y[:1], alg.draw_neumann(prob, None, b), b)
    np.testing.assert_allclose(alg.hypergrad_estimate(prob, x, y, sample, b).mean(0), exact[0], atol=1e-14)
    truncated = prob.rho * (x[0] - prob.e_m) + np.einsum("mji,mjk,mk->mi", prob.B, prob.neumann_factor(Q, 0.2),
                                                         np.linalg.solve(prob.A, (y[0] - prob.d_m)[..., None])[..., 0])
    np.testing.assert_allclose(exact[0], truncated, atol=1e-14)
    if neumann_batch == "per_factor":
        class OneHessianDraw:
            def __getattr__(self, name):
                return getattr(prob, name)

            def hvp(self, x, y, u, s, k=0):
                return prob.hvp(x, y, u, s, 0)

        broken = alg.hypergrad_estimate(OneHessianDraw(), x, y, sample, b).mean(0)
        assert np.abs(broken - exact[0]).max() > 1e-6  # a bias of order tau_N^2 sigma_H^2/b_x, far above 1e-14


class _Generator:
    """A noise stream for 200000 replicas at once (a ReplicaStream buffers draws per replica): an explicit
    Generator with a fixed seed, serving ``normal`` and ``uniform`` as the oracles ask."""

    def __init__(self, replicas: int, seed: int):
        self.count, self.rng = replicas, np.random.default_rng(seed)

    def normal(self, shape=()):
        return self.rng.standard_normal((self.count, *shape))

    def uniform(self, shape=()):
        return self.rng.random((self.count, *shape))


def _neumann_variance(b, tau, a, B, gy, s_fy2, s_fx2, s_J2, s_H2, Q):
    """Closed form of Var Phi-hat for p = d = 1 and ONE chain whose factors average b samples: Phi-hat = g_x + n_x
    + tau (B - n_J) v_0 P, v_0 = g_y + n_y, P = sum_{k=0}^{Q} prod_{j<=k} r_j, r_j = 1 - tau (a + h_j), all
    independent: Var = s_x^2/b + tau^2 (E X^2 E v_0^2 E P^2 - (B g_y E P)^2) with E r = rho = 1 - tau a,
    E r^2 = q = rho^2 + tau^2 s_H^2/b and E P^2 = sum_{k,l} q^min(k,l) rho^|k-l| (independent factors)."""
    rho = 1 - tau * a
    q = rho**2 + tau**2 * s_H2 / b
    EP = sum(rho**k for k in range(Q + 1))
    EP2 = sum(q ** min(k, l) * rho ** abs(k - l) for k in range(Q + 1) for l in range(Q + 1))
    return s_fx2 / b + tau**2 * ((B**2 + s_J2 / b) * (gy**2 + s_fy2 / b) * EP2 - (B * gy * EP) ** 2)


def test_neumann_minibatch_variances_follow_their_closed_forms():
    """p = d = 1, a = B = 1, tau_N = 0.5, Q = 4, b_x = 4, noise on grad f, the Jacobian and the Hessian: b_x copies
    have variance V_1/b_x; one chain of b_x-minibatch factors has V_b, which loses the products of noises' higher
    powers of 1/b_x (here 12% below). 200000 estimates per reading (fixed seed): the variance's relative standard
    error is 0.35%, so 2% is about 6 standard errors, while the two readings differ by about 35."""
    sf, sJ, sH, tau, Q, b = 1.0, 0.5, 0.6, 0.5, 4, 4
    prob = make_fedbio(test="C1", dim_x=1, dim_y=1, clients=1, a_min=1.0, a_max=1.0, b=1.0, sigma_f=sf,
                       sigma_J=sJ, sigma_H=sH)
    x0, y0 = np.array([0.3]), np.array([-0.4])
    gy = float(y0[0] - prob.d_m[0, 0])
    per = dict(tau=tau, a=1.0, B=1.0, gy=gy, s_fy2=sf**2 / 2, s_fx2=sf**2 / 2, s_J2=sJ**2, s_H2=sH**2, Q=Q)
    predicted = {"copies": _neumann_variance(1, **per) / b, "per_factor": _neumann_variance(b, **per)}
    assert predicted["per_factor"] < 0.9 * predicted["copies"]
    R = 200_000
    for reading, seed in (("copies", 11), ("per_factor", 12)):
        alg = make_algorithm("fedbio_local", {"Q": Q, "tau_N": tau, "bx": b, "neumann_batch": reading})
        est = alg.hypergrad_estimate(prob, np.broadcast_to(x0, (R, 1, 1)), np.broadcast_to(y0, (R, 1, 1)),
                                     alg.draw_neumann(prob, _Generator(R, seed), b), b)
        assert est.var() == pytest.approx(predicted[reading], rel=0.02), reading


def test_per_factor_storm_uses_the_same_chain_at_both_points():
    """fedbio.storm.same_batch_local's check with neumann_batch='per_factor': with additive noise (grad f, grad_y g)
    and c = 0, the same minibatch factors at the old and the new point leave the momentum exact, so every replica
    reaches x_Q to round-off; drawing the chain afresh at each point does not."""
    from ratecheck.proofs.fedbio.claims import STORM_LOCAL
    from ratecheck.simulate.engine import run

    prob = make_fedbio(test="C1", clients=4, sigma_f=1.0, sigma_g=1.0)
    params = {**STORM_LOCAL, "b": 3, "neumann_batch": "per_factor"}
    alg = make_algorithm("fedbioacc_local", params)
    target = prob.x_neumann(params["Q"], params["tau_N"])
    trace = run(alg, prob, 400, replicas=4)
    assert (((trace.final["x"] - target) ** 2).sum(-1) < 1e-10).all()

    from dataclasses import dataclass

    @dataclass(frozen=True)
    class TwoChains(type(alg)):
        def sample_pair(self, problem, noise, shape, batch, **kw):
            return problem.draw(noise, shape, batch, **kw), problem.draw(noise, shape, batch, **kw)

    broken = run(TwoChains(**alg.to_params()), prob, 400, replicas=4)
    assert (((broken.final["x"] - target) ** 2).sum(-1) > 1e-6).all()


def test_neumann_batch_in_exact_mode_and_its_costs():
    """Exact mode: with additive noise only, both readings are affine-Gaussian and, the estimator being linear in
    that noise, give the SAME expectations; with Hessian (or Jacobian) noise the estimator holds products of
    noises, which exact mode propagates factor by factor (tests/test_exact_neumann.py checks the values). Both
    readings cost b_x samples of grad f, b_x JVPs and b_x Q HVPs per client and iteration."""
    from ratecheck.simulate.engine import run

    additive = make_fedbio(test="C1", clients=2, sigma_f=1.0, sigma_g=1.0)
    traces = {}
    for reading in ("copies", "per_factor"):
        alg = make_algorithm("fedbio_local", {"Q": 3, "bx": 3, "neumann_batch": reading})
        traces[reading] = run(alg, additive, 30, mode="exact")
        _, costs = _steps(alg, additive, 1)
        assert (costs["samples_f_per_client"], costs["jvp_per_client"], costs["hvp_per_client"]) == (3, 3, 9)
        # issue #21: Hessian noise multiplies the state; the Neumann round runs exactly stage by stage
        assert run(alg, make_fedbio(test="C1", clients=2, sigma_H=0.2), 5, mode="exact").exact
    for name in ("grad_norm_sq", "dist_sq"):
        np.testing.assert_allclose(traces["per_factor"].at_end(name), traces["copies"].at_end(name), rtol=1e-10)


def test_neumann_batch_is_declared_and_refused_by_name():
    with pytest.raises(ParamError, match="neumann_batch"):
        make_algorithm("fedbio_local", {"neumann_batch": "per_sample"})
    with pytest.raises(ParamError, match="neumann_batch"):
        make_algorithm("fedbioacc_local", {"neumann_batch": True})
    # a per-factor minibatch of a finite sum's rows without replacement needs b_x <= K (copies draw single rows)
    local = make_fedbio(test="C1", clients=2, sigma_f=1.0, finite_sum=4)
    make_algorithm("fedbio_local", {"bx": 6}).validate(local)
    with pytest.raises(ParamError, match="bx"):
        make_algorithm("fedbio_local", {"bx": 6, "neumann_batch": "per_factor"}).validate(local)
    with pytest.raises(ParamError, match="b1"):
        make_algorithm("fedbioacc_local", {"b": 2, "b1": 8, "by": 1, "neumann_batch": "per_factor"}).validate(local)


def test_hessian_rows_that_can_expand_are_warned_about_by_name():
    """N2 with matrix rows: the sampled Hessians are known, so the warning reads their eigenvalues (a row with
    tau_N lambda_max(A_m,i) >= 1 makes I - tau_N A_m,i expand)."""
    import warnings

    rows = make_fedbio(test="C1", clients=2, sigma_H=0.8, finite_sum=6)
    low, high = rows.hessian_rows_range()
    assert high > 4.0
    with pytest.warns(UserWarning, match=r"tau_N .*A_m,i.*sigma_H"):
        make_algorithm("fedbio_local", {"tau_N": 0.99 / high + 0.01}).validate(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_algorithm("fedbio_local", {"tau_N": 0.9 / high}).validate(rows)


@pytest.mark.parametrize("algorithm, params, test", [
    ("fedbio", {"I": 3, "bx": 6, "by": 6, "tau": 0.1}, "B"),
    ("fedbioacc", {"I": 3, "b": 6, "b1": 6, "alpha_gain": 0.4, "u_bar": 1.0}, "B"),
    ("fedbio_local", {"I": 3, "bx": 6, "by": 6, "Q": 3, "neumann_batch": "per_factor"}, "C2"),
])
def test_full_batch_of_a_finite_sum_is_the_deterministic_run(algorithm, params, test):
    """N2 with matrix rows and every minibatch all K = 6 rows (without replacement): each oracle is the client's
    exact one, so the run is the noise-free run up to round-off (for FedBiO-Local this needs per-factor batches:
    b_x copies each read one row)."""
    from ratecheck.simulate.engine import run

    kw = {"test": test, "clients": 3, "s_H": 0.4, "s_B": 0.3}
    noisy = make_fedbio(**kw, sigma_f=1.0, sigma_g=0.5, sigma_J=0.4, sigma_H=0.2, finite_sum=6)
    alg = make_algorithm(algorithm, params)
    got = run(alg, noisy, 40, replicas=3).final["x"]
    exact = run(alg, make_fedbio(**kw), 40, replicas=1).final["x"]
    np.testing.assert_allclose(got, np.broadcast_to(exact, got.shape), atol=1e-12)
