"""The least-squares constants Theorems 1-3's bindings read, against independent computations (issue #23 item 2).

Each constant is recomputed from its definition in the paper (Assumptions 1 and 3, the weak-sharpness paragraph
of the Notation) out of the problem's own oracles: the client Hessians of h_i and the Hessian of f assembled
column by column from their gradient oracles (exact to round-off: both are quadratics), and the weak-sharpness
ratio (h(x) - h*)/dist^2(x, X*_h) from the gradient oracle alone (h - h* by the midpoint rule, X*_h and its distance
from an SVD of the assembled Hessian), apart from the row-space basis V_1 and H_row that the family's alpha and its
value oracle share. Never the family's own formulas (problems/least_squares_problem.py ``constants``).

The reference instances have a non-uniform row spectrum (lambda_min^+ != lambda_max), several heterogeneous
clients and a strongly convex outer f, so that no constant coincides with another.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.constants import (
    ConstantsClaim,
    Independent,
    NoiseSample,
    client_hessians,
    hessian_from_gradients,
    noise_sample,
    noise_stream,
    per_problem,
    positive_eigenvalues,
    sampled_tolerance,
    tiled_draws,
)
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig

from .claims import KEY
from .theorems import src

INSTANCES = (
    {"outer": "tp1", "mu": 1e-3, "lam_min": 0.01, "lam_max": 1.0, "delta": 0.1, "rho": 0.5, "dim": 12, "rank": 8,
     "clients": 4, "rows": 3, "seed": 1, "sigma_h": 0.6, "sigma_f": 0.4},
    {"outer": "tp1", "mu": 0.2, "lam_min": 0.05, "lam_max": 2.0, "delta": 0.3, "rho": 1.0, "dim": 10, "rank": 6,
     "clients": 3, "rows": 2, "seed": 7, "sigma_h": 1.3, "sigma_f": 0.25},
)
# sigma_h, sigma_f: E||zeta||^2, E||xi||^2 sampled from DRAWS draws per client (STREAMS generators of DRAWS / STREAMS
# copies of every client) of an n-vector (n >= 10, 3 clients or more): the tolerance is SAMPLED_Z sd of the estimate,
# 5 sqrt(1 / (2 DRAWS 3 10)) = 5.1e-3, so a 1% error in a sigma, sigma^2 for sigma or a noise scaled by another
# dimension FAILs
DRAWS = 16000
STREAMS = 40
SIGMA_TOLERANCE = sampled_tolerance(DRAWS * 3, 10)


def instance(value: float, profile: Profile) -> RunConfig:
    return RunConfig("strfedavg", {"horizon": 1, "schedule": "strongly_convex", "a": 2 / 3, "b": 1 / 3, "p": 1.0,
                                   "local_steps": 2, "participation": "full", "gamma_g": 1.0},
                     "least_squares", dict(INSTANCES[int(value)]), rounds=1, replicas=1)


def h_hessian(problem: Any) -> np.ndarray:
    """Hess h = (1/N) sum_i Hess h_i (h = (1/N) sum_i h_i, problem (1)), each Hess h_i from local_grad."""
    return client_hessians(problem).mean(axis=0)


def L_h(problem: Any) -> float:
    """Assumption 1: each h_i is L_h-smooth; for a quadratic the best constant is max_i lambda_max(Hess h_i)."""
    return float(max(np.linalg.eigvalsh(H).max() for H in client_hessians(problem)))


def lambda_min_plus(problem: Any) -> float:
    return float(positive_eigenvalues(h_hessian(problem)).min())


def lambda_max(problem: Any) -> float:
    return float(np.linalg.eigvalsh(h_hessian(problem)).max())


def _minimizer(problem: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A minimizer x_m of h (grad h(x_m) = H x_m + grad h(0) = 0, from the gradient oracle) and the eigenpairs of
    H = Hess h."""
    H = h_hessian(problem)
    g0 = np.asarray(problem.h_grad(np.zeros((1, problem.dim))))[0]
    eig, vec = np.linalg.eigh(H)
    return -np.linalg.pinv(H) @ g0, eig, vec


def _h_grad(problem: Any, x: np.ndarray) -> np.ndarray:
    """grad h = (1/N) sum_i grad h_i at points x (k, n), from the clients' ``local_grad`` (not the problem's H)."""
    N = problem.num_clients
    batch = problem.gather(np.tile(np.arange(N), (x.shape[0], 1)))
    return np.asarray(problem.local_grad(batch, np.repeat(x[:, None, :], N, axis=1))).mean(axis=1)


ALPHA_DIRECTIONS = 256  # random directions besides the candidate ones (a seeded Generator)


def alpha(problem: Any) -> float:
    """Weak sharpness of order kappa = 2 (Notation): the largest alpha with h(x) - h* >= alpha dist^2(x, X*_h),
    i.e. inf (h(x) - h*)/dist^2, computed apart from the problem's row-space basis V_1 and H_row (which both its
    formula and its value oracle h read). From the clients' gradient oracle only: H = Hess h assembled column by
    column, X*_h = {x : grad h(x) = 0} = x_m + null(H) with x_m least-squares solution of H x = -grad h(0) (lstsq),
    the range of H from its SVD (scipy.linalg.orth), h(x) - h* = v . grad h(x_m + v/2) (the midpoint rule, exact
    for a quadratic: grad h(x_m) = 0) and dist(x, X*_h) = ||Q Q^T v|| for x = x_m + v. The infimum over the
    directions Q u, u an eigenvector of Q^T H Q, and ALPHA_DIRECTIONS random directions (seed 0)."""
    import scipy.linalg

    H = h_hessian(problem)
    g0 = _h_grad(problem, np.zeros((1, problem.dim)))[0]
    x_m = np.linalg.lstsq(H, -g0, rcond=None)[0]
    Q = scipy.linalg.orth(H, rcond=1e-9)  # (n, r) orthonormal basis of range(H) = the row space
    _, U = np.linalg.eigh(Q.T @ H @ Q)
    rng = np.random.default_rng(0)
    v = np.vstack([(Q @ U).T, rng.standard_normal((ALPHA_DIRECTIONS, problem.dim))])
    gap = np.einsum("kn,kn->k", v, _h_grad(problem, x_m[None, :] + v / 2))
    dist_sq = np.sum((v @ Q) ** 2, axis=1)
    return float((gap / dist_sq).min())


def kappa(problem: Any) -> float:
    """The order: the ratio (h(x) - h*)/dist^k is scale-free along a direction only for k = 2 (h(x_m + t v) -
    h* grows as t^kappa: kappa = log2 of the ratio of the gaps at t = 2 and t = 1)."""
    x_m, _, vec = _minimizer(problem)
    v = vec[:, -1]
    h = np.asarray(problem.h_value(np.vstack([x_m, x_m + v, x_m + 2 * v])), float)
    return float(np.log2((h[2] - h[0]) / (h[1] - h[0])))


def outer_hessian(problem: Any) -> np.ndarray:
    return hessian_from_gradients(lambda x: np.asarray(problem.outer.grad(x)), problem.dim)


def L_f(problem: Any) -> float:
    """Assumption 1: f is L_f-smooth; for a quadratic the best constant is ||Hess f||_2."""
    return float(np.abs(np.linalg.eigvalsh(outer_hessian(problem))).max())


def mu_f(problem: Any) -> float:
    """Assumption 1: f is mu_f-strongly convex: lambda_min(Hess f) (the reference instances' f is)."""
    return float(np.linalg.eigvalsh(outer_hessian(problem)).min())


def _copies(problem: Any) -> tuple[Any, np.ndarray]:
    """DRAWS copies of every client (STREAMS rows of DRAWS / STREAMS copies) at a point w = 0.3 1_n."""
    N = problem.num_clients
    batch = problem.gather(np.tile(np.arange(N), (STREAMS, DRAWS // STREAMS)))
    return batch, np.full((STREAMS, N * (DRAWS // STREAMS), problem.dim), 0.3)


@per_problem
def h_noise(problem: Any) -> NoiseSample:
    """Assumption 3: grad h_i(x, zeta) - grad h_i(x), drawn: stochastic_grad minus local_grad (sigma_h's draws)."""
    batch, w = _copies(problem)
    zeta = np.asarray(problem.stochastic_grad(batch, w.copy(), noise_stream("strfedavg.sigma_h", STREAMS)))
    xi = zeta - np.asarray(problem.local_grad(batch, w))
    return noise_sample(xi, tiled_draws(xi, problem.num_clients))


@per_problem
def f_noise(problem: Any) -> NoiseSample:
    """Assumption 3: grad f_i(x, xi) - grad f_i(x), drawn through composite_grad (eta = 1), which draws zeta then xi
    from its stream (its docstring): a second stream of the same key replays zeta through stochastic_grad, so
    composite - stochastic - grad f_i = xi exactly (sigma_f's draws)."""
    batch, w = _copies(problem)
    both = np.asarray(problem.composite_grad(batch, w.copy(), 1.0, noise_stream("strfedavg.sigma_f", STREAMS)))
    zeta = np.asarray(problem.stochastic_grad(batch, w.copy(), noise_stream("strfedavg.sigma_f", STREAMS)))
    outer = np.asarray(problem.outer.client_grad(None, w, batch.outer))
    xi = both - zeta - outer
    return noise_sample(xi, tiled_draws(xi, problem.num_clients))


def sigma_h(problem: Any) -> float:
    """Assumption 3: E||grad h_i(x, zeta) - grad h_i(x)||^2 <= sigma_h^2, sampled (h_noise)."""
    return h_noise(problem).level


def sigma_f(problem: Any) -> float:
    """Assumption 3: E||grad f_i(x, xi) - grad f_i(x)||^2 <= sigma_f^2, sampled (f_noise)."""
    return f_noise(problem).level


def additive_noise(problem: Any) -> bool:
    return problem.batch_rows is None


CLAIMS = (
    ConstantsClaim(
        id="strfedavg.constants.least_squares", paper=KEY,
        title="least squares: the constants Theorems 1-3 read equal an independent computation",
        statement="The constants the theorem bindings read (L_h, lambda_min^+, lambda_max, alpha, kappa, L_f, mu_f) "
                  "equal their definitions in Assumptions 1 and 3 and the weak-sharpness paragraph, recomputed "
                  "from the oracles (Hessians assembled from gradients, alpha by the midpoint rule on the gradients "
                  "apart from the family's row-space basis) at two instances with non-uniform spectra and several "
                  "clients, relative tolerance 1e-7 (round-off); sigma_h and sigma_f (Assumption 3) equal their "
                  "sampled values within 5 sd of the estimate (5.1e-3).",
        source=src("Assumptions 1 and 3; Notation (weak sharpness)", "spec strfedavg §3.1, §3.3, §3.4"),
        grid={"quick": (0, 1), "full": (0, 1)}, configure=instance,
        problem_of=problem_of,
        computations={
            "L_h": Independent(L_h, "max_i lambda_max(Hess h_i), Hess h_i assembled from local_grad (Assumption 1)"),
            "lambda_min_plus": Independent(lambda_min_plus, "smallest positive eigenvalue of Hess h = mean_i Hess h_i"),
            "lambda_max": Independent(lambda_max, "largest eigenvalue of Hess h = mean_i Hess h_i"),
            "alpha": Independent(alpha, "weak sharpness (kappa = 2): inf of (h - h*)/dist^2(., X*_h) over the eigen-"
                                        "directions of Hess h on range(Hess h) (scipy orth) and 256 random ones, h - h* by "
                                        "the midpoint rule on local_grad, apart from the row-space basis V_1 and H_row"),
            "kappa": Independent(kappa, "order of growth of h - h* along a direction: log2 of the gap ratio at t = 2, 1"),
            "L_f": Independent(L_f, "||Hess f||_2, Hess f assembled from the outer gradient oracle (Assumption 1)"),
            "mu_f": Independent(mu_f, "lambda_min(Hess f), assembled from the outer gradient oracle (Assumption 1)"),
            "sigma_h": Independent(sigma_h, f"sqrt of the mean ||stochastic_grad - local_grad||^2 over {DRAWS} draws per "
                                            "client, seed 0 (Assumption 3); tolerance 5 sd of the estimate",
                                   rel_tolerance=SIGMA_TOLERANCE, where=additive_noise),
            "sigma_f": Independent(sigma_f, f"sqrt of the mean ||xi||^2 over {DRAWS} draws per client through "
                                            "composite_grad (zeta replayed), seed 0 (Assumption 3); tolerance 5 sd",
                                   rel_tolerance=SIGMA_TOLERANCE, where=additive_noise),
        }),
)
