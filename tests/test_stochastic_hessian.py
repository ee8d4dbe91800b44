"""The stochastic-Hessian quadratic family and Gaussian multiplicative noise in exact mode (issue #21).

The family's declared constants are checked against finite differences and sampling; exact mode's
probed bilinear steps against the oracle's definition; exact runs against the dense Kronecker
recursion written from Algorithm 2 (proofs/defedavg/local_steps_exact.py, round-off), against Monte
Carlo (fixed seeds, 4 standard errors), with delays and a server state; and the symmetry that makes
the family necessary: with rho = 0 local SGD on identical data is minibatch SGD to the last bit.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from ratecheck import run
from ratecheck.algorithms.fedavg import DelaySchedule, FedAvg
from ratecheck.claims import PROFILES, Verdict
from ratecheck.exact import multiplicative
from ratecheck.exact.gaussian_steps import gaussian_steps
from ratecheck.exact.probing import NotExact
from ratecheck.inspection import algorithm_of, problem_of
from ratecheck.model.participation import Participation
from ratecheck.problems import make_problem
from ratecheck.proofs.defedavg.local_steps_exact import (
    LOCAL_STEPS_EXACT,
    LOCAL_STEPS_MATTER,
    identical_config,
    local_sgd_dist,
    minibatch_dist,
)
from ratecheck.registry import make_algorithm
from ratecheck.runner.sweep import check_claims
from ratecheck.seeding import Streams
from tests.test_exact import ServerMomentum  # heavy-ball momentum on the server: a server state

SE_BAND = 4.0  # Monte Carlo: a few dozen comparisons at 4 SE, a false alarm well under 1% for a fixed seed


def _problem(**overrides):
    return make_problem("stochastic_hessian_quadratic", {"rho": 0.8, **overrides})


def _z(exact, mc, name: str) -> np.ndarray:
    values = mc.measures[name][1:]  # checkpoint 0 is the deterministic start
    mean, se = values.mean(axis=1), values.std(axis=1, ddof=1) / np.sqrt(values.shape[1])
    return (mean - exact.measures[name][1:, 0]) / se


def test_constants_against_finite_differences():
    problem = _problem(zeta=0.5, dim=4, hessian_draws=3)
    constants = {k: c.value for k, c in problem.constants().items()}
    # the Hessian of F by central differences of its gradient: L and mu are its extreme eigenvalues
    h = 1e-5
    fd = np.stack([(problem.grad(problem.x_star + h * e) - problem.grad(problem.x_star - h * e)) / (2 * h)
                   for e in np.eye(problem.dim)], axis=1)
    eig = np.linalg.eigvalsh((fd + fd.T) / 2)
    assert constants["L"] == pytest.approx(eig[-1], rel=1e-8) and constants["mu"] == pytest.approx(eig[0], rel=1e-8)
    # rho^2 = lambda_max(sum B_k^2), from the matrices themselves
    top = np.linalg.eigvalsh(np.einsum("kij,kjl->il", problem.hessian_noise, problem.hessian_noise))[-1]
    assert constants["rho"] == pytest.approx(0.8, rel=1e-12) and constants["rho"] ** 2 == pytest.approx(top, rel=1e-12)
    # sigma_ball bounds that variance on B(x*, R) (random points of the ball); at x* +- R v_top (Sigma_B's
    # top eigenvector) one side reaches sigma^2 + rho^2 R^2, since q(a + b) + q(a - b) >= 2 q(b)
    radius, top_vec = problem.radius, np.linalg.eigh(problem.sigma_B)[1][:, -1]
    rng = np.random.default_rng(0)
    points = problem.x_star + radius * rng.uniform(0, 1, (500, 1)) ** (1 / problem.dim) * \
        (lambda u: u / np.linalg.norm(u, axis=1, keepdims=True))(rng.standard_normal((500, problem.dim)))
    points = np.vstack([points, problem.x_star + radius * top_vec, problem.x_star - radius * top_vec])
    diffs = points[:, None, :] - problem.centers[None]
    variance = problem.sigma ** 2 + np.einsum("pni,ij,pnj->pn", diffs, problem.sigma_B, diffs)
    assert variance.max() <= constants["sigma_ball"] ** 2 * (1 + 1e-12)
    assert variance.max() >= problem.sigma ** 2 + constants["rho"] ** 2 * radius ** 2


def test_sampling_moments_inside_monte_carlo_ci():
    """The declared noise against 100,000 draws a slot (a Monte-Carlo sweep: the claims layer)."""
    problem = _problem(zeta=0.5, dim=4, hessian_draws=3)
    # sampling: unbiased, and E||g - grad F_i||^2 = sigma^2 + (x - c_i)^T Sigma_B (x - c_i)
    R, calls, clients = 4000, 25, np.array([[0, 2]])  # 100,000 draws a slot, buffered per replica
    x = np.broadcast_to(problem.x0 + np.arange(problem.dim) * 0.3, (R, 2, problem.dim)).copy()
    batch = problem.gather(np.broadcast_to(clients, (R, 2)))
    noise = Streams(0, "ab" * 32, range(R))["noise"]
    exact = problem.local_grad(batch, x)
    err = np.concatenate([problem.stochastic_grad(batch, x, noise) - exact for _ in range(calls)])
    R = err.shape[0]
    se = err.std(axis=0) / np.sqrt(R)
    assert np.all(np.abs(err.mean(axis=0)) <= SE_BAND * se)
    sq = np.einsum("rmi,rmi->rm", err, err)
    diff = x[0] - problem.centers[clients[0]]
    expected = problem.sigma ** 2 + np.einsum("mi,ij,mj->m", diff, problem.sigma_B, diff)
    assert np.all(np.abs(sq.mean(axis=0) - expected) <= SE_BAND * sq.std(axis=0) / np.sqrt(R))


def test_probed_steps_are_the_oracle_written_from_its_definition():
    problem = _problem(zeta=0.5)
    algorithm = make_algorithm("fedavg", {"local_steps": 3, "eta_local": 0.3})
    steps = gaussian_steps(algorithm, problem)
    d, eta = problem.dim, 0.3
    np.testing.assert_allclose(steps.T, np.broadcast_to(np.eye(d) - eta * problem.hessians, steps.T.shape), atol=1e-14)
    np.testing.assert_allclose(steps.c, eta * problem.centers @ problem.hessians, atol=1e-14)
    # the xi draws multiply the state: [F_k, g_k] = -eta [B_k, -B_k c_i]; the z draws are additive
    expected = np.stack([np.concatenate([np.broadcast_to(-eta * B, (problem.num_clients, d, d)),
                                         (eta * problem.centers @ B)[..., None]], axis=-1)
                         for B in problem.hessian_noise])
    np.testing.assert_allclose(steps.F, expected, atol=1e-14)
    np.testing.assert_allclose(steps.additive, np.broadcast_to((eta * problem.sigma) ** 2 / d * np.eye(d),
                                                               steps.additive.shape), atol=1e-14)


@pytest.mark.parametrize("K", [1, 3, 8])
def test_exact_run_equals_the_dense_kronecker_recursion(K):
    config = identical_config(K, PROFILES["quick"])
    trace = run(algorithm_of(config), problem_of(config), config.rounds, mode="exact")
    assert trace.measures["dist_sq"][-1, 0] == pytest.approx(local_sgd_dist(config), rel=1e-12)


def test_without_hessian_noise_local_sgd_is_minibatch_sgd():
    """Why the family exists: with additive noise only the two recursions agree at every K."""
    for K in (2, 8):
        config = identical_config(K, PROFILES["quick"])
        additive = dataclasses.replace(config, problem_params={**config.problem_params, "rho": 0.0})
        assert local_sgd_dist(additive) == pytest.approx(minibatch_dist(additive), rel=1e-13)
        assert abs(local_sgd_dist(config) / minibatch_dist(config) - 1) > 0.01


def _drop_multiplicative(monkeypatch) -> None:
    monkeypatch.setattr(multiplicative.RandomJobs, "covariance", lambda self, S, table=None: np.zeros((self.d, self.d)))


def test_exact_agrees_with_monte_carlo_and_the_dropped_term_does_not(monkeypatch):
    problem = _problem(zeta=0.5)
    algorithm = make_algorithm("fedavg", {"local_steps": 4, "eta_local": 0.4, "participation": "without_replacement:2"})
    exact = run(algorithm, problem, 12, mode="exact")
    mc = run(algorithm, problem, 12, mode="monte_carlo", replicas=2000, seed=3)
    _drop_multiplicative(monkeypatch)
    dropped = run(algorithm, problem, 12, mode="exact")
    for name in ("dist_sq", "gap"):
        assert np.all(np.abs(_z(exact, mc, name)) <= SE_BAND), name
        assert np.max(np.abs(_z(dropped, mc, name))) > 3 * SE_BAND, name


def test_random_delays_and_server_state_agree_with_monte_carlo():
    problem = _problem(zeta=0.5)
    algorithm = ServerMomentum(eta_global=0.6, eta_local=0.4, local_steps=4,
                               participation=Participation.parse("with_replacement:3"),
                               delay=DelaySchedule.parse("uniform:2"), duplicates="shared")
    exact = run(algorithm, problem, 12, mode="exact")
    mc = run(algorithm, problem, 12, mode="monte_carlo", replicas=3000, seed=4)
    for name in ("dist_sq", "gap"):
        assert np.all(np.abs(_z(exact, mc, name)) <= SE_BAND), name


def _momentum_delay_one_dist(problem, K: int, eta_local: float, eta: float, rounds: int) -> float:
    """E||w_T - x*||^2 of ServerMomentum with every client each round, each job started from w^{t-1},
    as a dense Kronecker recursion on v = (w^t, w^{t-1}, u, 1), written from the oracle's definition."""
    d, N = problem.dim, problem.num_clients
    q, n = d + 1, 3 * d + 1
    select = np.zeros((q, n))  # v -> (w^{t-1}, 1)
    select[:d, d:2 * d], select[d, -1] = np.eye(d), 1.0
    base = np.zeros((n, n))  # the deterministic part: D's "start" term and the bookkeeping
    direction = np.zeros((n, d))  # where D enters: u' = 0.5 u + D, w' = w - eta u'
    base[:d, :d], base[:d, 2 * d:3 * d] = np.eye(d), -0.5 * eta * np.eye(d)
    base[d:2 * d, :d] = np.eye(d)
    base[2 * d:3 * d, 2 * d:3 * d] = 0.5 * np.eye(d)
    base[-1, -1] = 1.0
    direction[:d], direction[2 * d:3 * d] = -eta * np.eye(d), np.eye(d)
    B0 = base + direction @ select[:d]  # + E start (D = mean_i (start - end_i))
    C = -direction @ np.eye(d, q) / N  # - E x-part(Phi_i (start, 1)) / N
    op = np.kron(B0, B0)
    mean_maps = []
    for i in range(N):
        c = problem.centers[i]
        Ta = np.eye(q)
        Ta[:d, :d] -= eta_local * problem.hessians
        Ta[:d, d] = eta_local * problem.hessians @ c
        step = np.kron(Ta, Ta)
        for B in problem.hessian_noise:
            Fa = np.zeros((q, q))
            Fa[:d, :d], Fa[:d, d] = -eta_local * B, eta_local * B @ c
            step += np.kron(Fa, Fa)
        for j in range(d):
            Ga = np.zeros((q, q))
            Ga[j, d] = -eta_local * problem.sigma / np.sqrt(d)
            step += np.kron(Ga, Ga)
        left = C @ np.linalg.matrix_power(Ta, K) @ select
        mean_maps.append(left)
        op += np.kron(B0, left) + np.kron(left, B0)
        op += np.kron(C, C) @ np.linalg.matrix_power(step, K) @ np.kron(select, select)
    for i in range(N):
        for j in range(N):
            if i != j:
                op += np.kron(mean_maps[i], mean_maps[j])
    x0 = problem.initial_point()
    v0 = np.r_[x0, x0, np.zeros(d), 1.0]
    moment = (np.linalg.matrix_power(op, rounds) @ np.outer(v0, v0).reshape(-1)).reshape(n, n)
    u = np.r_[np.eye(d), np.zeros((2 * d, d)), -problem.x_star[None]]
    return float(np.sum((u @ u.T) * moment))


def test_delay_and_server_state_equal_a_dense_recursion_and_a_current_start_does_not(monkeypatch):
    problem = _problem(zeta=0.5)
    algorithm = ServerMomentum(eta_global=0.6, eta_local=0.4, local_steps=4,
                               participation=Participation.parse("full"), delay=DelaySchedule.parse("constant:1"))
    expected = _momentum_delay_one_dist(problem, 4, 0.4, 0.6, 15)
    exact = run(algorithm, problem, 15, mode="exact").measures["dist_sq"][-1, 0]
    assert exact == pytest.approx(expected, rel=1e-11)
    # the plausible bug: every job's random part taken at the current model, not its delayed start
    covariance = multiplicative.RandomJobs.covariance
    monkeypatch.setattr(multiplicative.RandomJobs, "covariance", lambda self, S, table=None: covariance(self, S))
    current = run(algorithm, problem, 15, mode="exact").measures["dist_sq"][-1, 0]
    assert abs(current / expected - 1) > 1e-6


def test_a_quadratic_draw_term_is_refused():
    """A step whose noise enters squared is not bilinear: the random check names it."""

    @dataclass(frozen=True)
    class Squared(FedAvg):
        name: ClassVar[str] = "fedavg_squared_noise"

        def client_update(self, problem, batch, start, streams):
            z = streams["noise"].normal(start.shape[1:])
            return 0.1 * start + 0.01 * z * start + 0.01 * z * z

    with pytest.raises(NotExact, match="not bilinear"):
        gaussian_steps(Squared(local_steps=1), _problem())


@pytest.mark.claims  # decides the registered claim with check_claims, on the code and on a broken variant
def test_the_claim_passes_its_control_fails_and_dropping_the_term_fails_it(monkeypatch):
    good, control = check_claims([LOCAL_STEPS_EXACT, LOCAL_STEPS_MATTER], PROFILES["quick"], progress=False)
    assert good.verdict == Verdict.PASS, good.reason
    assert control.verdict == Verdict.FAIL, control.reason
    _drop_multiplicative(monkeypatch)
    broken = check_claims([LOCAL_STEPS_EXACT], PROFILES["quick"], progress=False)[0]
    assert broken.verdict == Verdict.FAIL, broken.reason


def test_the_factored_round_equals_the_dense_one(monkeypatch):
    """States above DENSE_MAX propagate through JobsOperator: the same numbers as the dense operator."""
    from ratecheck.exact import fedavg, operators

    problem = _problem(zeta=0.5)
    algorithm = ServerMomentum(eta_global=0.6, eta_local=0.4, local_steps=3,
                               participation=Participation.parse("with_replacement:3"),
                               delay=DelaySchedule.parse("uniform:1"), duplicates="shared")
    dense = run(algorithm, problem, 10, mode="exact").measures["dist_sq"][:, 0]
    monkeypatch.setattr(fedavg, "DENSE_MAX", 0)
    monkeypatch.setattr(operators, "DENSE_MAX", 0)
    factored = run(algorithm, problem, 10, mode="exact").measures["dist_sq"][:, 0]
    np.testing.assert_allclose(factored, dense, rtol=1e-12)
