"""Whole rounds bilinear in (state, noise) in exact mode (issue #21 item 4, ratecheck.exact.bilinear_round): FedBiO
(Algorithm 1) with stochastic Jacobians and Hessians against a dense Kronecker recursion written from the algorithm
box and the problem's noise model at 1e-10, FedBiO and FedBiOAcc against Monte Carlo within 4 standard errors, and
what stays refused."""

from __future__ import annotations

import numpy as np
import pytest

from ratecheck.exact import NotExact, RoundModel, model_for
from ratecheck.exact.bilinear_round import BilinearRoundModel
from ratecheck.problems.fedbio_bilevel import make_fedbio
from ratecheck.registry import make_algorithm
from ratecheck.simulate.engine import run_config
from ratecheck.trace import RunConfig

PROBLEM = {"test": "B", "clients": 3, "s": 0.7, "s_H": 0.4, "s_B": 0.5, "sigma_f": 0.8, "sigma_g": 0.6,
           "sigma_J": 0.5, "sigma_H": 0.4}
STEPS = {"I": 3, "eta": 0.05, "gamma": 0.08, "tau": 0.07, "bx": 2, "by": 3}


def _dense_moments(prob, alg, rounds: int) -> list[np.ndarray]:
    """E[v v^T] of v = (x_1, y_1, u_1, ..., x_M, y_M, u_M, 1) after each round, from Algorithm 1 (spec fedbio §2.1):
    x -= eta (grad_x f - grad_xy g u), y -= gamma grad_y g, u += tau (grad_y f - grad_yy g u) from the same state,
    all three averaged every I-th iteration; the oracles' noise as problems/fedbio_problem.py draws it (isotropic
    blocks of grad f and grad_y g, J with i.i.d. entries, H = (N + N^T)/2), in Kronecker form per client."""
    M, p, d = prob.num_clients, prob.dim_x, prob.dim_y
    eta, gamma, tau = alg.eta, alg.gamma, alg.tau
    var_f = prob.sigma_f**2 / (p + d) / alg.bx
    var_g, var_J = prob.sigma_g**2 / d / alg.by, prob.sigma_J**2 / (p * d) / alg.bx
    var_H = prob.sigma_H**2 * 2.0 / (d * (d + 1)) / alg.bx  # N's entries: E H_ab H_cd = var_H/2 (d_ac d_bd + d_ad d_bc)
    b = p + 2 * d + 1
    X, Y, U = np.arange(p), p + np.arange(d), p + d + np.arange(d)
    last = np.eye(b * b)[-1]
    means, seconds = [], []
    for i in range(M):
        A, B, c, dm, e = prob.A[i], prob.B[i], prob.c[i], prob.d_m[i], prob.e_m[i]
        K = np.eye(b)
        K[np.ix_(X, X)] = (1 - eta * prob.rho) * np.eye(p)
        K[X, -1] = eta * prob.rho * e
        K[np.ix_(X, U)] = -eta * B.T
        K[np.ix_(Y, Y)] = np.eye(d) - gamma * A
        K[np.ix_(Y, X)] = gamma * B
        K[Y, -1] = gamma * c
        K[np.ix_(U, U)] = np.eye(d) - tau * A
        K[np.ix_(U, Y)] = tau * np.eye(d)
        K[U, -1] = -tau * dm
        second = np.kron(K, K)
        for a in range(p):  # x' gains + eta J u
            for bb in range(d):
                G = np.zeros((b, b))
                G[X[a], U[bb]] = eta
                second += var_J * np.kron(G, G)
        for a in range(d):  # u' gains - tau H u
            for bb in range(d):
                for cc in range(d):
                    for dd in range(d):
                        cov = var_H / 2 * ((a == cc) * (bb == dd) + (a == dd) * (bb == cc))
                        if cov:
                            Gab, Gcd = np.zeros((b, b)), np.zeros((b, b))
                            Gab[U[a], U[bb]] = -tau
                            Gcd[U[cc], U[dd]] = -tau
                            second += cov * np.kron(Gab, Gcd)
        add = np.zeros((b, b))
        add[np.ix_(X, X)] = eta**2 * var_f * np.eye(p)
        add[np.ix_(Y, Y)] = gamma**2 * var_g * np.eye(d)
        add[np.ix_(U, U)] = tau**2 * var_f * np.eye(d)
        means.append(K)
        seconds.append(second + np.outer(add.reshape(-1), last))
    n = M * (b - 1) + 1
    index = [np.r_[i * (b - 1) + np.arange(b - 1), n - 1] for i in range(M)]
    start = prob.initial_state()
    v = np.r_[np.tile(np.r_[np.asarray(start["x"], float), np.asarray(start["y"], float),
                            np.asarray(start["v"], float)], M), 1.0]
    S, out = np.outer(v, v), []
    for t in range(rounds):
        new = np.zeros_like(S)
        for i in range(M):
            for k in range(M):
                block = S[np.ix_(index[i], index[k])]
                new[np.ix_(index[i], index[k])] = (seconds[i] @ block.reshape(-1)).reshape(b, b) if i == k \
                    else means[i] @ block @ means[k].T
        if (t + 1) % alg.I == 0:
            P = np.eye(n)
            P[:-1, :-1] = np.kron(np.ones((M, M)) / M, np.eye(b - 1))
            new = P @ new @ P.T
        S = new
        out.append(S)
    return out


def test_fedbio_moments_match_a_dense_recursion_from_algorithm_1():
    prob, alg = make_fedbio(**PROBLEM), make_algorithm("fedbio", STEPS)
    rounds = 7
    model = model_for(alg, prob, rounds)
    assert isinstance(model, BilinearRoundModel)
    M, p, d = prob.num_clients, prob.dim_x, prob.dim_y
    order = np.r_[np.concatenate([np.r_[i * p + np.arange(p), M * p + i * d + np.arange(d),
                                        M * (p + d) + i * d + np.arange(d)] for i in range(M)]), model.n - 1]
    flat = model.initial().reshape(-1)
    for t, want in enumerate(_dense_moments(prob, alg, rounds)):
        flat = model.step(t, flat)
        got = flat.reshape(model.n, model.n)[np.ix_(order, order)]
        assert np.max(np.abs(got - want)) <= 1e-10 * np.max(np.abs(want)), t


@pytest.mark.claims  # 4000 replicas of two algorithms: about 10 s
@pytest.mark.parametrize("algorithm, params", [
    ("fedbio", STEPS),
    ("fedbioacc", {"I": 3, "eta": 0.12, "gamma": 0.12, "tau": 0.12, "b": 2, "alpha_gain": 0.2, "u_bar": 0.0005,
                   "c_nu": 1.6, "c_om": 2.5, "c_u": 0.8, "b1": 4}),  # a step size alpha_t: re-read every round
])
def test_bilinear_rounds_match_monte_carlo(algorithm, params):
    """Every measure at every checkpoint after the start within 4 standard errors of 4000 replicas (seed 0)."""
    config = RunConfig(algorithm, params, "fedbio_bilevel", PROBLEM, 10, replicas=1, checkpoints=10, mode="exact")
    exact, drawn = run_config(config), run_config(config.with_(mode="monte_carlo", replicas=4000))
    compared = 0
    for name, values in exact.measures.items():
        if name.startswith("avg:") or not np.all(np.isfinite(values[1:])):
            continue
        samples = drawn.measures[name][1:]
        se = samples.std(axis=1, ddof=1) / np.sqrt(samples.shape[1])
        assert np.all(np.abs(values[1:, 0] - samples.mean(axis=1)) <= 4 * se + 1e-12), name
        compared += 1
    assert compared >= 3


def test_affine_rounds_stay_with_round_model():
    """Without Jacobian or Hessian noise FedBiO's round is affine: RoundModel reads it as before."""
    prob = make_fedbio(**{**PROBLEM, "sigma_J": 0.0, "sigma_H": 0.0})
    assert type(model_for(make_algorithm("fedbio", STEPS), prob, 5)) is RoundModel


def test_rounds_of_higher_degree_in_the_noise_are_refused():
    """StocBiO's Neumann chain multiplies Q sampled Hessians: neither affine nor bilinear, refused with both reasons."""
    prob = make_fedbio(**{**PROBLEM, "test": "C2", "clients": 1})
    alg = make_algorithm("stocbio", {"eta": 0.3, "gamma": 0.2, "D": 2, "Q": 2, "tau_N": 0.2})
    with pytest.raises(NotExact, match="read as a bilinear round: .*not bilinear"):
        model_for(alg, prob, 5)
