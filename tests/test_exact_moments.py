"""Exact mode's second moments at scale (issue #21) against independent closed forms.

The recursions here are written from the algorithm's definition (FedAvg, eqs. (2)-(3) of the DeFedAvg
paper with the sign fixed: K local SGD steps x <- x - eta_l (H_i (x - c_i) + xi), xi ~ N(0, sigma^2/d I),
then w' = w - eta_g (1/m) sum over slots of (start - end)), by enumerating every sampling outcome
and every delay draw: no code of ratecheck.exact is used. States are large enough (n > DENSE_MAX)
that exact mode takes its factored O(N d n^2) path, never an (n^2 x n^2) operator.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ratecheck import run
from ratecheck.problems import make_problem
from ratecheck.registry import make_algorithm

ETA_L, ETA_G, K = 0.3, 0.8, 3


def _client_maps(problem):
    """x_K = A_i x + b_i + noise with Cov C_i after K local steps on client i (closed form)."""
    d = problem.dim
    hess = problem.hessians if problem.hessians.ndim == 3 else np.repeat(problem.hessians[None], problem.num_clients, 0)
    maps = []
    for H, c in zip(hess, problem.centers):
        step = np.eye(d) - ETA_L * H
        powers = [np.linalg.matrix_power(step, k) for k in range(K)]
        A = np.linalg.matrix_power(step, K)
        b = sum(P @ (ETA_L * H @ c) for P in powers)
        C = ETA_L**2 * problem.sigma**2 / d * sum(P @ P.T for P in powers)
        maps.append((A, b, C))
    return maps


def _dist_sq(second: np.ndarray, x_star: np.ndarray) -> float:
    d = x_star.size
    return float(np.trace(second[:d, :d]) - 2 * x_star @ second[:d, -1] + x_star @ x_star)


def _propagate(ops, v0: np.ndarray, rounds: int, x_star: np.ndarray) -> tuple[dict[int, float], np.ndarray]:
    """E||x_t - x*||^2 for t = 0..rounds of S' = mean over outcomes of F S F^T + noise, and S_T."""
    second = np.outer(v0, v0)
    expected = {}
    for t in range(rounds + 1):
        expected[t] = _dist_sq(second, x_star)
        if t == rounds:
            break
        second = sum(F @ second @ F.T + noise for F, noise in ops) / len(ops)
    return expected, second


def test_without_replacement_matches_subset_enumeration():
    """m = 2 of N = 5 without replacement, per-client curvature, d = 17 (n = 18): E||x_t - x*||^2 at
    every checkpoint equals the average over all 10 subsets of the affine round, to 1e-11."""
    problem = make_problem("quadratic", dict(dim=17, clients=5, curvature="per_client", zeta=1.0,
                                             heterogeneity="random", sigma=0.7, mu=0.2, L=1.0))
    algorithm = make_algorithm("fedavg", dict(eta_local=ETA_L, eta_global=ETA_G, local_steps=K,
                                              participation="without_replacement:2"))
    rounds = 60
    trace = run(algorithm, problem, rounds, mode="exact", checkpoints=12)
    maps, d, m = _client_maps(problem), problem.dim, 2
    ops = []
    for subset in itertools.combinations(range(problem.num_clients), m):
        F = np.eye(d + 1)
        F[:d, :d] -= ETA_G / m * sum(np.eye(d) - maps[i][0] for i in subset)
        F[:d, -1] = ETA_G / m * sum(maps[i][1] for i in subset)
        noise = np.zeros((d + 1, d + 1))
        noise[:d, :d] = (ETA_G / m) ** 2 * sum(maps[i][2] for i in subset)
        ops.append((F, noise))
    expected, _ = _propagate(ops, np.append(problem.initial_point(), 1.0), rounds, problem.x_star)
    got = trace.measures["dist_sq"][:, 0]
    want = np.array([expected[int(t)] for t in trace.checkpoints])
    np.testing.assert_allclose(got, want, rtol=1e-11)
    assert want[-1] < 0.5 * want[0]  # the run moved: the check is not of a constant


def test_uniform_delays_with_replacement_match_enumeration():
    """N = 3, two draws with replacement (a client drawn twice: one job, counted twice), delays
    i.i.d. uniform on {0, 1, 2} per client: the state (w^t, w^{t-1}, w^{t-2}, 1) has n = 25 > 16.
    Averaged over the 9 ordered draws and 27 delay draws, to 1e-11."""
    problem = make_problem("quadratic", dict(dim=8, clients=3, curvature="per_client", zeta=1.0,
                                             heterogeneity="random", sigma=1.0, mu=0.2, L=1.0))
    algorithm = make_algorithm("defedavg_niid", dict(eta_local=ETA_L, eta_global=ETA_G, local_steps=K,
                                                     participation="with_replacement:2", delay="uniform:2"))
    rounds = 40
    trace = run(algorithm, problem, rounds, mode="exact", checkpoints=10)
    maps, d, m, lam = _client_maps(problem), problem.dim, 2, 2
    n = (lam + 1) * d + 1
    ops = []
    for draws in itertools.product(range(3), repeat=m):
        counts = np.bincount(draws, minlength=3)
        for delays in itertools.product(range(lam + 1), repeat=3):
            F = np.zeros((n, n))
            F[:d, :d] = np.eye(d)
            noise = np.zeros((n, n))
            for i in np.flatnonzero(counts):
                A, b, C = maps[i]
                k = delays[i]
                F[:d, k * d:(k + 1) * d] -= ETA_G / m * counts[i] * (np.eye(d) - A)
                F[:d, -1] += ETA_G / m * counts[i] * b
                noise[:d, :d] += (ETA_G / m * counts[i]) ** 2 * C
            for k in range(1, lam + 1):
                F[k * d:(k + 1) * d, (k - 1) * d:k * d] = np.eye(d)
            F[-1, -1] = 1.0
            ops.append((F, noise))
    expected, _ = _propagate(ops, np.append(np.tile(problem.initial_point(), lam + 1), 1.0), rounds, problem.x_star)
    got = trace.measures["dist_sq"][:, 0]
    want = np.array([expected[int(t)] for t in trace.checkpoints])
    np.testing.assert_allclose(got, want, rtol=1e-11)
    assert want[-1] < 0.5 * want[0]


def test_probe_chunks_do_not_change_the_maps(monkeypatch):
    """client_update probed one row per call (a problem gathering a d x d matrix per slot and row
    never holds more than one row's) gives the maps of one call, to round-off."""
    import ratecheck.exact.seams as seams

    problem = make_problem("quadratic", dict(dim=6, clients=4, curvature="per_client", zeta=1.0,
                                             heterogeneity="random"))
    algorithm = make_algorithm("fedavg", dict(local_steps=2, participation="without_replacement:2"))
    whole = seams.probe_client_update(algorithm, problem, m=2)
    monkeypatch.setattr(seams, "PROBE_ELEMENTS", 1)
    rows = seams.probe_client_update(algorithm, problem, m=2)
    for field in ("A", "b", "cov"):
        np.testing.assert_allclose(getattr(rows, field), getattr(whole, field), rtol=0, atol=1e-14)
    assert rows.draws == whole.draws == 2 * problem.dim


@pytest.mark.parametrize("participation", ["full", "without_replacement:6", "with_replacement:6"])
def test_shared_curvature_collapses_to_one_job(participation):
    """Every client with the same Hessian: the jobs' span is one matrix (the O(d^3)-a-round path) and
    the moments equal those of the unreduced sum over clients to round-off."""
    from ratecheck.exact import model_for
    from ratecheck.exact.operators import JobsOperator

    problem = make_problem("quadratic", dict(dim=20, clients=12, zeta=1.0, heterogeneity="random", sigma=1.0))
    algorithm = make_algorithm("fedavg", dict(local_steps=3, participation=participation))
    model = model_for(algorithm, problem, 5)
    op = model.operator(0)
    assert isinstance(op, JobsOperator) and op.basis_weights.size <= 1  # none at full participation
    spread = JobsOperator(F=op.F, E=op.E, Jsum=op.Jsum, pair=op.pair, jobs=op.jobs, weights=op.weights,
                          noise=op.noise)
    object.__setattr__(spread, "basis_flat", op.Jx_flat)
    object.__setattr__(spread, "basis_T", op.jobs[:, :, :-1].transpose(0, 2, 1).reshape(-1, op.jobs.shape[1]).copy())
    object.__setattr__(spread, "basis_weights", op.weights)
    flat = model.initial().reshape(-1)
    for _ in range(5):
        a, b = op.apply(flat), spread.apply(flat)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14 * np.abs(b).max())
        flat = a


@pytest.mark.parametrize("participation", ["full", "without_replacement:2", "with_replacement:3"])
def test_diagonal_model_matches_enumeration(participation):
    """The shared-eigenbasis family (rotated basis, heterogeneous spectra and minimizers): exact mode
    runs diagonally (O(d) a round) and its E||x_t - x*||^2 equals the dense enumeration over every
    ordered draw of the clients (with replacement: one job per distinct client, counted n_i times)
    with H_i = Q diag(h_i) Q^T, to 1e-11."""
    from ratecheck.exact import DiagonalFedAvgModel, model_for
    from ratecheck.problems.spectral_quadratic import make as make_spectral

    problem = make_spectral(dim=6, clients=4, spread=0.8, zeta=1.0, sigma=0.9, rotate=True, seed=3)
    algorithm = make_algorithm("fedavg", dict(eta_local=ETA_L, eta_global=ETA_G, local_steps=K,
                                              participation=participation))
    assert isinstance(model_for(algorithm, problem, 10), DiagonalFedAvgModel)
    rounds = 50
    trace = run(algorithm, problem, rounds, mode="exact", checkpoints=10)

    class Dense:  # the same instance with explicit Hessians, for the closed-form maps
        hessians = np.einsum("ij,nj,kj->nik", problem.basis, problem.spectra, problem.basis)
        centers, sigma, dim, num_clients = problem.centers, problem.sigma, problem.dim, problem.num_clients

    maps, d, N = _client_maps(Dense), problem.dim, problem.num_clients
    mode, _, size = participation.partition(":")
    m = N if mode == "full" else int(size)
    if mode == "full":
        outcomes = [tuple(range(N))]
    elif mode == "without_replacement":
        outcomes = list(itertools.combinations(range(N), m))
    else:
        outcomes = list(itertools.product(range(N), repeat=m))
    ops = []
    for drawn in outcomes:
        counts = np.bincount(drawn, minlength=N)
        F = np.eye(d + 1)
        noise = np.zeros((d + 1, d + 1))
        for i in np.flatnonzero(counts):
            A, b, C = maps[i]
            F[:d, :d] -= ETA_G / m * counts[i] * (np.eye(d) - A)
            F[:d, -1] += ETA_G / m * counts[i] * b
            noise[:d, :d] += (ETA_G / m * counts[i]) ** 2 * C
        ops.append((F, noise))
    expected, second = _propagate(ops, np.append(problem.initial_point(), 1.0), rounds, problem.x_star)
    want = np.array([expected[int(t)] for t in trace.checkpoints])
    np.testing.assert_allclose(trace.measures["dist_sq"][:, 0], want, rtol=1e-11)
    np.testing.assert_allclose(trace.final["x"][0], second[:d, -1], rtol=1e-10, atol=1e-13)


def test_diagonal_model_refuses_a_map_that_is_not_diagonal():
    """A client_update coupling eigen-coordinates (a broken algorithm) is caught by the random check:
    the run takes the dense model, which reads the coupled map exactly."""
    from dataclasses import dataclass

    from ratecheck.algorithms.fedavg import FedAvg
    from ratecheck.exact import FedAvgModel, model_for
    from ratecheck.problems.spectral_quadratic import make as make_spectral

    @dataclass(frozen=True)
    class Coupled(FedAvg):
        def client_update(self, problem, batch, start, streams):
            out = super().client_update(problem, batch, start, streams)
            return out + 0.01 * start[..., ::-1]

    problem = make_spectral(dim=5, clients=4, rotate=False)
    participation = make_algorithm("fedavg", {"participation": "without_replacement:2"}).participation
    model = model_for(Coupled(local_steps=2, participation=participation), problem, 5)
    assert isinstance(model, FedAvgModel)


def test_exact_rates_are_the_spectral_radii_of_the_enumerated_moment_map():
    """FedAvg without replacement with noise (d = 17): the Arnoldi radii on the model's own operator
    equal the dense eigenvalues of the moment map written from the math (test-only Kronecker
    matrices, small d): sum over subsets of F_S (x) F_S / |S| on the centred block, and the mean map."""
    from ratecheck.exact import model_for
    from ratecheck.exact.rates import exact_rates

    problem = make_problem("quadratic", dict(dim=17, clients=5, curvature="per_client", zeta=1.0,
                                             heterogeneity="random", sigma=0.7, mu=0.2, L=1.0))
    algorithm = make_algorithm("fedavg", dict(eta_local=ETA_L, eta_global=ETA_G, local_steps=K,
                                              participation="without_replacement:2"))
    maps, d, m = _client_maps(problem), problem.dim, 2
    Ms = [np.eye(d) - ETA_G / m * sum(np.eye(d) - maps[i][0] for i in s)
          for s in itertools.combinations(range(problem.num_clients), m)]
    kron = sum(np.kron(M, M) for M in Ms) / len(Ms)
    want_second = np.abs(np.linalg.eigvals(kron)).max()
    want_mean = np.abs(np.linalg.eigvals(sum(Ms) / len(Ms))).max()
    rates = exact_rates(model_for(algorithm, problem, 10))
    assert rates.second == pytest.approx(want_second, rel=1e-10)
    assert rates.mean == pytest.approx(want_mean, rel=1e-10)
    assert rates.second > rates.mean ** 2 * (1 + 1e-6)  # the sampling noise slows the second moment


def test_exact_rates_deterministic_and_diagonal():
    """Full participation, no noise: second = rho(F)^2 with F from the math; the diagonal family's
    closed-form radii equal those of the same instance run through the dense model."""
    from ratecheck.exact import DiagonalFedAvgModel, FedAvgModel, model_for
    from ratecheck.exact.rates import exact_rates
    from ratecheck.problems.spectral_quadratic import make as make_spectral

    problem = make_problem("quadratic", dict(dim=17, clients=4, curvature="per_client", zeta=1.0,
                                             heterogeneity="random", sigma=0.0, mu=0.2, L=1.0))
    algorithm = make_algorithm("fedavg", dict(eta_local=ETA_L, eta_global=ETA_G, local_steps=K))
    maps, d = _client_maps(problem), problem.dim
    F = np.eye(d) - ETA_G / 4 * sum(np.eye(d) - A for A, _, _ in maps)
    rho = np.abs(np.linalg.eigvals(F)).max()
    rates = exact_rates(model_for(algorithm, problem, 10))
    assert rates.second == pytest.approx(rho**2, rel=1e-10) and rates.mean == pytest.approx(rho, rel=1e-10)

    spectral = make_spectral(dim=6, clients=4, spread=0.8, rotate=True, seed=2)
    sampled = make_algorithm("fedavg", dict(eta_local=ETA_L, eta_global=ETA_G, local_steps=K,
                                            participation="without_replacement:2"))
    diagonal = model_for(sampled, spectral, 10)
    assert isinstance(diagonal, DiagonalFedAvgModel)
    dense_model = FedAvgModel(sampled, spectral, 10)
    closed = exact_rates(diagonal)
    assert closed.mean == pytest.approx(exact_rates(dense_model).mean, rel=1e-10)
    # the dense model's operator on the diagonal (in the eigenbasis) matrices, the subspace the measures see
    Q, d, op = spectral.basis, spectral.dim, dense_model.operator(0)
    columns = []
    for j in range(d):
        S = np.zeros((d + 1, d + 1))
        S[:d, :d] = np.outer(Q[:, j], Q[:, j])
        out = op.apply(S.reshape(-1)).reshape(d + 1, d + 1)[:d, :d]
        columns.append(np.diag(Q.T @ out @ Q))
    assert closed.second == pytest.approx(np.abs(np.linalg.eigvals(np.array(columns).T)).max(), rel=1e-10)
