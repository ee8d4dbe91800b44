"""SimFBO / ShroFBO against a plain per-client recursion of Algorithm 1, the sampling identities of
Lemma 9, Prop. 1, and bad input (spec simfbo §2, §6.4 T0)."""

import itertools

import numpy as np
import pytest

from ratecheck.algorithms.bilevel import LocalSteps
from ratecheck.model.participation import Participation
from ratecheck.problems.quadratic_bilevel import make
from ratecheck.proofs.simfbo.presets import p1, p2
from ratecheck.registry import make_algorithm
from ratecheck.seeding import Streams
from ratecheck.simulate.engine import run

TAUS = [1, 3, 2, 1, 4, 2]


def _hand(prob, alg, rounds, clients_per_round):
    """Algorithm 1 written out per client with Python loops (sigma = 0, a = 1): the reference."""
    x, y, v = (prob.initial_state()[k].copy() for k in ("x", "y", "v"))
    n, tau = prob.num_clients, np.asarray(TAUS)
    p = prob.p
    rho = p @ tau
    for t in range(rounds):
        C = clients_per_round[t]
        U = {"y": 0.0, "v": 0.0, "x": 0.0}
        for i in C:
            xi, yi, vi = x.copy(), y.copy(), v.copy()
            q = {"y": 0.0, "v": 0.0, "x": 0.0}
            for _ in range(tau[i]):
                gy = prob.A @ yi - prob.B @ xi - prob.c[i]
                gv = prob.A @ vi - (yi - prob.e[i])
                gx = prob.lam * (xi - prob.s[i]) + prob.B.T @ vi
                yi, vi, xi = yi - alg.eta_y * gy, vi - alg.eta_v * gv, xi - alg.eta_x * gx
                q = {"y": q["y"] + gy, "v": q["v"] + gv, "x": q["x"] + gx}
            scale = rho / tau[i] if alg.name == "shrofbo" else 1.0
            for k in U:
                U[k] = U[k] + (n / len(C)) * p[i] * scale * q[k]
        y, x = y - alg.gamma_y * U["y"], x - alg.gamma_x * U["x"]
        v = v - alg.gamma_v * U["v"]
        v = v * min(1.0, alg.radius / np.linalg.norm(v)) if np.linalg.norm(v) > 0 else v
    return x, y, v


@pytest.mark.parametrize("name", ["simfbo", "shrofbo"])
def test_matches_hand_recursion_with_uneven_tau_and_sampling(name):
    prob = make(**p1(clients=6, sigma_f=0.0, sigma_g=0.0, weights=[0.1, 0.2, 0.1, 0.3, 0.2, 0.1]))
    alg = make_algorithm(name, {"local_steps": TAUS, "participation": "without_replacement:3", "radius": 0.5,
                                "eta_x": 0.05, "eta_y": 0.1, "eta_v": 0.07, "gamma_x": 0.1, "gamma_y": 0.3,
                                "gamma_v": 0.2})
    alg.validate(prob)
    streams = Streams(3, "b" * 64, range(2))
    state = alg.init(prob, streams)
    replay = Streams(3, "b" * 64, range(2))  # the same sampling stream, replayed for the reference
    draws = [alg.participation.sample(6, replay["sampling"]) for _ in range(15)]
    for t in range(15):
        state, costs = alg.round(state, prob, t, streams)
    assert np.linalg.norm(state.v, axis=1).max() <= 0.5 + 1e-12  # the projection was active
    for r in range(2):
        ref = _hand(prob, alg, 15, [d[r] for d in draws])
        for got, want in zip((state.x[r], state.y[r], state.v[r]), ref):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_equal_tau_gives_bit_identical_iterates():
    """T0(e): with equal ||a_i||_1, SimFBO and ShroFBO are the same algorithm, bit for bit (noise on)."""
    prob = make(**p1(clients=10, weights=list(np.arange(1, 11) / 55)))
    out = []
    for name in ("simfbo", "shrofbo"):
        alg = make_algorithm(name, {"local_steps": 3, "participation": "without_replacement:4",
                                    "coefficients": "harmonic"})
        streams = Streams(0, "c" * 64, range(4))
        state = alg.init(prob, streams)
        for t in range(50):
            state, _ = alg.round(state, prob, t, streams)
        out.append(state)
    for k in ("x", "y", "v"):
        assert np.array_equal(getattr(out[0], k), getattr(out[1], k))
    # and with uneven tau they differ
    alg = {n: make_algorithm(n, {"local_steps": [1, 5] * 5}) for n in ("simfbo", "shrofbo")}
    ends = [run(a, prob, 20, replicas=2, seed=0).final["x"] for a in alg.values()]
    assert not np.allclose(ends[0], ends[1])


def test_lemma9_sampling_identity_by_enumeration_and_sampler():
    """T0(b, c): E||sum_C pt_i h_i||^2 = n(P-1)/(P(n-1)) ||sum w h||^2 + n(n-P)/(P(n-1)) sum w^2||h||^2
    exactly (all subsets), and E sum_C pt_i h_i = sum p_i h_i. The package's sampler reproduces both
    within Monte Carlo error: 200000 draws, relative SE of the second moment < 0.5%, tolerance 2%."""
    n, P = 6, 3
    rng = np.random.default_rng(0)
    h, w = rng.standard_normal((n, 3)), rng.dirichlet(np.ones(n))
    subsets = list(itertools.combinations(range(n), P))
    aggs = np.array([(n / P) * (w[list(C)] @ h[list(C)]) for C in subsets])
    second = np.mean((aggs**2).sum(1))
    rhs = n * (P - 1) / (P * (n - 1)) * np.sum((w @ h) ** 2) + n * (n - P) / (P * (n - 1)) * np.sum(w**2 * (h**2).sum(1))
    assert second == pytest.approx(rhs, rel=1e-13)
    np.testing.assert_allclose(aggs.mean(0), w @ h, atol=1e-14)
    streams = Streams(0, "d" * 64, range(4))
    C = np.concatenate([Participation("without_replacement", P).sample(n, streams["sampling"]) for _ in range(50000)])
    assert all(len(set(row)) == P for row in C[:1000])
    mc = (n / P) * np.einsum("rm,rmd->rd", w[C], h[C])
    assert np.mean((mc**2).sum(1)) == pytest.approx(rhs, rel=0.02)
    np.testing.assert_allclose(mc.mean(0), w @ h, atol=0.02)
    # at P = n the aggregate is deterministic: the finite-population factor (n-P)/(n-1) is 0
    full = Participation("without_replacement", n).sample(n, streams["sampling"])
    np.testing.assert_allclose(np.einsum("rm,rmd->rd", w[full], h[full]), np.broadcast_to(w @ h, (4, 3)), atol=1e-15)


def test_prop1_local_v_stays_in_r_max():
    """T0(d): with ||v^(t)|| <= r, N2 Hessian noise and eta_v alpha_max L_1 <= 1, every local v_i
    stays within (1 + alpha_max/alpha_min) r (Prop. 1). P2: r = L_f/mu_g is a global bound."""
    prob = make(**p2(clients=8, sigma_f=0.0, sigma_g=1.0, sigma_h=0.5, zeta=2.0))
    c = prob.constants()
    eta_v = 1.0 / c["L_1"].value
    alg = make_algorithm("simfbo", {"local_steps": 10, "eta_v": eta_v, "gamma_v": 1.0, "coefficients": "constant"})
    trace = run(alg, prob, 200, replicas=8)
    assert trace.info["radius"] == pytest.approx(c["r"].value)
    assert 0 < trace.info["local_v_max"] <= 2 * c["r"].value


def test_bad_input_names_the_parameter():
    prob = make(**p1(clients=4))
    cases = {
        "tau": {"local_steps": 0},
        "local_steps": {"local_steps": [1, 2, 0, 1]},
        "P must be <= n": {"participation": "without_replacement:5"},
        "radius": {"radius": -1.0},
        "gamma_x": {"gamma_x": 0.0},
        "coefficients": {"coefficients": "momentum"},
        "rho": {"rho": "guess"},
    }
    for message, params in cases.items():
        with pytest.raises(ValueError, match=message):
            make_algorithm("simfbo", params).validate(prob)
    with pytest.raises(ValueError, match="per_client needs 4"):
        make_algorithm("shrofbo", {"local_steps": [1, 2]}).validate(prob)
    with pytest.raises(ValueError, match="n = 1"):
        make_algorithm("soba", {}).validate(prob)


def test_divergence_is_recorded_with_its_round():
    prob = make(**p1(clients=4))
    trace = run(make_algorithm("simfbo", {"gamma_x": 50.0, "gamma_y": 50.0, "gamma_v": 50.0}), prob, 300, replicas=4)
    assert (trace.diverged_round > 0).all() and (trace.diverged_round < 300).all()


def test_redrawn_tau_and_rho():
    prob = make(**p1(clients=6))
    steps = LocalSteps.parse("uniform:1:10")
    assert str(steps) == "uniform:1:10" and steps.mean(6) == 5.5
    trace = run(make_algorithm("shrofbo", {"local_steps": "uniform:1:10"}), prob, 200, replicas=4)
    assert 1 <= trace.info["rho_min"] < trace.info["rho_bar"] < trace.info["rho_max"] <= 10
    assert trace.counters["oracle_calls_per_client"][-1] == pytest.approx(5.5 * 200, rel=0.1)
    soba = run(make_algorithm("soba", {}), make(**p1(clients=1, zeta=0.0)), 2000, replicas=4)
    assert soba.measures["grad_norm_sq"][-1].mean() < soba.measures["grad_norm_sq"][0].mean()
