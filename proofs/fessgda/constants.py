"""The quadratic minimax family's constants the PL-PL and NC-PL theorems' bindings read, against independent
computations (issue #23 item 2).

Each constant is recomputed from its assumption's definition out of the problem's own oracles: every client's
Hessian of f_i in (x, y) assembled column by column from ``local_grads`` (exact to round-off: f_i is quadratic),
the PL constants of f = mean_i f_i as the smallest non-zero curvature of f in x and of -f in y (a quadratic's PL
constant), and sigma_G from gradient differences at a point. Never the family's own formulas
(problems/minimax/quadratic.py ``constants``).

Instance 0 has client Hessian spread (A_i = A +- spread I: l is a client's, not the mean's); instance 1 has none, so
grad f_i - grad f is constant and sigma_G is exact there (with spread the family declares a bound over a ball).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.constants import ConstantsClaim, Independent, hessian_from_gradients, positive_eigenvalues
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig

from .theorems import KEY, src

INSTANCES = (
    {"kind": "quadratic", "a": [1.2, 0.8, 0.3], "c": [2.0, 0.7, 0.4], "coupling": 0.6, "clients": 4, "zeta": 0.5,
     "spread": 0.25, "seed": 1},
    {"kind": "quadratic", "a": [0.9, 0.5, 0.35, 0.2], "c": [1.5, 1.1, 0.6, 0.45], "coupling": 0.3, "clients": 5,
     "zeta": 0.8, "seed": 6},
)


def instance(value: float, profile: Profile) -> RunConfig:
    return RunConfig("fess_gda", {}, "minimax", dict(INSTANCES[int(value)]), rounds=1, replicas=1)


def _grads(problem: Any, i: int, z: np.ndarray) -> np.ndarray:
    """(grad_x f_i, grad_y f_i) at points z = (x, y), (k, d1 + d2)."""
    dx = problem.dim_x
    batch = problem.gather(np.full((z.shape[0], 1), i))
    gx, gy = problem.local_grads(batch, z[:, None, :dx], z[:, None, dx:])
    return np.concatenate([np.asarray(gx)[:, 0, :], np.asarray(gy)[:, 0, :]], axis=-1)


def client_hessians(problem: Any) -> np.ndarray:
    n = problem.dim_x + problem.dim_y
    return np.stack([hessian_from_gradients(functools.partial(_grads, problem, i), n) for i in range(problem.num_clients)])


def l(problem: Any) -> float:  # noqa: E743  (the paper's name)
    """Assumption 2.1: every f_i is l-smooth in (x, y): max_i ||Hess f_i||_2."""
    return float(max(np.abs(np.linalg.eigvalsh(H)).max() for H in client_hessians(problem)))


def mu1(problem: Any) -> float:
    """Assumption 3.7: f(., y) is mu1-PL; for a convex quadratic in x, its smallest non-zero curvature."""
    dx = problem.dim_x
    return float(positive_eigenvalues(client_hessians(problem).mean(axis=0)[:dx, :dx]).min())


def mu2(problem: Any) -> float:
    """Assumption 3.7: -f(x, .) is mu2-PL: the smallest curvature of -f in y."""
    dx = problem.dim_x
    return float(np.linalg.eigvalsh(-client_hessians(problem).mean(axis=0)[dx:, dx:]).min())


def sigma_G(problem: Any) -> float:
    """Heterogeneity (Assumption 2.2): max_i ||grad f_i - grad f||, constant in (x, y) without Hessian spread."""
    z = np.linspace(-1.0, 1.0, problem.dim_x + problem.dim_y)[None, :]
    grads = np.stack([_grads(problem, i, z)[0] for i in range(problem.num_clients)])
    return float(np.linalg.norm(grads - grads.mean(axis=0), axis=1).max())


def no_spread(problem: Any) -> bool:
    return not np.any(problem.spread)


CLAIMS = (
    ConstantsClaim(
        id="fessgda.constants.minimax_quadratic", paper=KEY,
        title="quadratic minimax: the constants the PL-PL and NC-PL theorems read equal an independent computation",
        statement="l (Assumption 2.1), mu1, mu2 (Assumption 3.7), kappa1 = l/mu1, kappa2 = l/mu2 and sigma_G "
                  "(Assumption 2.2, where exact) equal their definitions recomputed from the oracles (client Hessians "
                  "assembled from local_grads) at two instances with non-uniform spectra and several clients, one "
                  "with client Hessian spread; relative tolerance 1e-7 (round-off).",
        source=src("Assumptions 2.1, 2.2, 3.7", "spec fessgda notation table, §6.1"),
        grid={"quick": (0, 1), "full": (0, 1)}, configure=instance,
        problem_of=problem_of,
        computations={
            "l": Independent(l, "max_i ||Hess f_i||_2 in (x, y), assembled from local_grads (Assumption 2.1)"),
            "mu1": Independent(mu1, "smallest non-zero eigenvalue of Hess_xx f, f = mean_i f_i (Assumption 3.7)"),
            "mu2": Independent(mu2, "smallest eigenvalue of -Hess_yy f (Assumption 3.7)"),
            "kappa1": Independent(lambda p: l(p) / mu1(p), "l / mu1 from the independent l, mu1"),
            "kappa2": Independent(lambda p: l(p) / mu2(p), "l / mu2 from the independent l, mu2"),
            "sigma_G": Independent(sigma_G, "max_i ||grad f_i - grad f|| at a point, no Hessian spread (Assumption 2.2)",
                                   where=no_spread),
        }),
)
