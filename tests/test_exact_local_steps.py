"""K local steps composed by repeated squaring (issue #21 item 1) against the step-by-step maps.

The reference maps are written from FedAvg's definition (K local SGD steps x <- x - eta_l (H_i (x - c_i)
+ xi), xi ~ N(0, sigma^2/d I)) with a Python loop over the steps, and the directly probed K-step maps
(the algorithm run K steps per probe row); the composed maps must equal both to round-off.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from ratecheck import run
from ratecheck.algorithms.fedavg import FedAvg
from ratecheck.exact import local_steps
from ratecheck.exact.local_steps import client_maps, compose_power, composed_client_maps
from ratecheck.problems import make_problem
from ratecheck.registry import make_algorithm

ETA_L = 0.07


def _problem(d: int = 6, N: int = 5):
    return make_problem("quadratic", dict(dim=d, clients=N, curvature="per_client", zeta=1.0,
                                          heterogeneity="random", sigma=0.7, mu=0.2, L=1.0))


def _stepwise(problem, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Delta_i = A_i x + b_i + noise (Cov C_i) after K steps, one step at a time (the paper's loop)."""
    d = problem.dim
    A, b, C = [], [], []
    for H, c in zip(problem.hessians, problem.centers):
        step = np.eye(d) - ETA_L * H
        power, offset, cov = np.eye(d), np.zeros(d), np.zeros((d, d))
        for _ in range(K):
            power, offset = step @ power, step @ offset + ETA_L * H @ c
            cov = step @ cov @ step.T + ETA_L**2 * problem.sigma**2 / d * np.eye(d)
        A.append(np.eye(d) - power)
        b.append(-offset)
        C.append(cov)
    return np.array(A), np.array(b), np.array(C)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("K", [2, 7, 16, 37])
def test_composed_maps_equal_the_step_by_step_maps(K):
    """Per-client curvature, random minimizers, noise: the composed (A, b, Cov) equal the paper's
    K-step loop and the directly probed K-step maps to 1e-12 relative (round-off of K products)."""
    problem = _problem()
    algorithm = make_algorithm("fedavg", dict(local_steps=K, eta_local=ETA_L, participation="without_replacement:3"))
    composed = composed_client_maps(algorithm, problem, m=3)
    assert composed is not None, "FedAvg's K-step job is K repeats of one step: it must be composed"
    direct = client_maps(algorithm, problem, m=3, compose=False)
    A, b, C = _stepwise(problem, K)
    for mine, probed, loop in [(composed.A, direct.A, A), (composed.b, direct.b, b), (composed.cov, direct.cov, C)]:
        assert _rel(mine, loop) < 1e-12
        assert _rel(mine, probed) < 1e-12
    assert composed.draws == direct.draws == K * problem.dim


def test_compose_power_is_the_k_fold_composition():
    """compose_power on random affine-Gaussian maps, every K up to 40 and client chunks of 2: equal
    to K explicit compositions x -> T x + c + e (Cov S) to 1e-12."""
    rng = np.random.default_rng(3)
    N, d = 5, 4
    T = 0.5 * rng.standard_normal((N, d, d))
    c = rng.standard_normal((N, d))
    root = rng.standard_normal((N, d, d))
    S = root @ root.transpose(0, 2, 1)
    for K in range(1, 41):
        power, offset, cov = compose_power(T, c, S, K, chunk=2)
        P, o, V = np.broadcast_to(np.eye(d), (N, d, d)), np.zeros((N, d)), np.zeros((N, d, d))
        for _ in range(K):
            P, o = T @ P, (T @ o[..., None])[..., 0] + c
            V = T @ V @ T.transpose(0, 2, 1) + S
        assert _rel(power, P) < 1e-12 and _rel(offset, o) < 1e-12 and _rel(cov, V) < 1e-12, K


@dataclass(frozen=True)
class _DecayingLocalSteps(FedAvg):
    """A local step size eta_l / (k + 1) at step k: the steps differ, so no power of one step."""

    def client_update(self, problem, batch, start, streams):
        x = start.copy()
        for k in range(self.local_steps):
            x = x - self.eta_local / (k + 1) * problem.stochastic_grad(batch, x, streams["noise"])
        return start - x


def test_a_job_whose_steps_differ_is_not_composed():
    """A local step-size schedule: the composition's check against the K-step code fails, and
    client_maps reads the job directly (its maps equal the loop written with the schedule)."""
    problem = _problem()
    algorithm = _DecayingLocalSteps(local_steps=5, eta_local=ETA_L)
    assert composed_client_maps(algorithm, problem, m=5) is None
    maps = client_maps(algorithm, problem, m=5)
    d = problem.dim
    for H, A in zip(problem.hessians, maps.A):
        power = np.eye(d)
        for k in range(5):
            power = (np.eye(d) - ETA_L / (k + 1) * H) @ power
        assert _rel(A, np.eye(d) - power) < 1e-12


def test_exact_run_with_composition_equals_the_direct_run(monkeypatch):
    """A whole exact run (d = 20, n = 21 > DENSE_MAX, K = 9, sampling without replacement) with the
    composed maps equals the run with directly probed maps to 1e-10 at every checkpoint."""
    problem = make_problem("quadratic", dict(dim=20, clients=6, curvature="per_client", zeta=1.0,
                                             heterogeneity="random", sigma=0.5))
    algorithm = make_algorithm("fedavg", dict(local_steps=9, eta_local=0.05, participation="without_replacement:3"))
    monkeypatch.setattr(local_steps, "COMPOSE_WORK", 0)
    composed = run(algorithm, problem, 40, mode="exact")
    monkeypatch.setattr(local_steps, "COMPOSE_WORK", float("inf"))
    direct = run(algorithm, problem, 40, mode="exact")
    for name in ("dist_sq", "grad_norm_sq", "avg:grad_norm_sq"):
        np.testing.assert_allclose(composed.measures[name], direct.measures[name], rtol=1e-10)
