"""The quadratic-bilevel constants Theorems 1-2's bindings read, against independent computations (issue #23 item 2).

Each constant is recomputed from its definition in the paper out of the problem's own oracles: Hess_yy g_i and
Hess_xy g_i assembled column by column from the lower-level gradient oracle ``lower_grad`` (exact to round-off: g_i
is quadratic), Hess f_i from ``upper_grad_y`` and ``surrogate_grad`` at v = 0 (grad_x f_i). Never the family's own
formulas (problems/quadratic_bilevel.py ``constants``).

L_f is read as declared: on P1 it is a bound of ||grad f_i|| over a box (spec C7: no global constant), not a
supremum an oracle attains, so only the quantities defined from it (Lemma 1's radius r = L_f / mu_g) are checked
here. The instances have heterogeneous Hessians A_i (mu_g = min_i lambda_min(A_i) != 1, so a power of mu_g shows),
non-uniform spectra and several clients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.constants import ConstantsClaim, Independent, hessian_from_gradients
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig

from .presets import p1
from .theorems import KEY, src

INSTANCES = (
    p1(clients=6, a_min=0.5, a_max=3.0, hessian_spread=0.3, lam=0.5, sigma_f=0.0, sigma_g=0.0, seed=2),
    p1(clients=4, dim_x=3, dim_y=5, a_min=1.5, a_max=4.0, hessian_spread=0.5, lam=5.0, sigma_f=0.0, sigma_g=0.0,
       seed=5),
)


def instance(value: float, profile: Profile) -> RunConfig:
    return RunConfig("simfbo", {"gamma_x": 0.1, "gamma_y": 0.4, "gamma_v": 0.4, "participation": "full", "radius": "off"},
                     "quadratic_bilevel", dict(INSTANCES[int(value)]), rounds=1, replicas=1)


def _client(problem: Any, i: int, k: int) -> Any:
    return problem.gather(np.full((k, 1), i))


def g_hessians(problem: Any) -> np.ndarray:
    """The joint Hessian of g_i in (x, y), per client: the y-y and y-x blocks from ``lower_grad`` (grad_y g_i)
    column by column; the x-x block is 0 (g_i is linear in x, SimFBO eq. (1) test problem, spec §6.1)."""
    dx, dy = problem.dim_x, problem.dim_y
    out = []
    for i in range(problem.num_clients):
        def grad_y(z: np.ndarray, i: int = i) -> np.ndarray:  # z = (x, y) stacked
            x, y = z[:, None, :dx], z[:, None, dx:]
            return np.asarray(problem.lower_grad(_client(problem, i, z.shape[0]), x, y, None))[:, 0, :]
        points = np.vstack([np.zeros((1, dx + dy)), np.eye(dx + dy)])
        g = grad_y(points)
        rows = (g[1:] - g[0]).T  # (dy, dx + dy): d grad_y g / d (x, y)
        joint = np.zeros((dx + dy, dx + dy))
        joint[dx:, :] = rows
        joint[:dx, dx:] = rows[:, :dx].T
        out.append(joint)
    return np.stack(out)


def mu_g(problem: Any) -> float:
    """Assumption 1: each g_i(x, .) is mu_g-strongly convex: min_i lambda_min(Hess_yy g_i)."""
    dx = problem.dim_x
    return float(min(np.linalg.eigvalsh(H[dx:, dx:]).min() for H in g_hessians(problem)))


def f_hessians(problem: Any) -> np.ndarray:
    """Hess f_i in (x, y): grad_x f_i from ``surrogate_grad`` at v = 0, grad_y f_i from ``upper_grad_y``."""
    dx, dy = problem.dim_x, problem.dim_y
    out = []
    for i in range(problem.num_clients):
        def grad(z: np.ndarray, i: int = i) -> np.ndarray:
            k = z.shape[0]
            batch = _client(problem, i, k)
            x, y = z[:, None, :dx], z[:, None, dx:]
            gx = np.asarray(problem.surrogate_grad(batch, x, y, np.zeros((k, 1, dy)), None))[:, 0, :]
            gy = np.asarray(problem.upper_grad_y(y, batch.e))[:, 0, :]
            return np.hstack([gx, gy])
        out.append(hessian_from_gradients(grad, dx + dy))
    return np.stack(out)


def L_1(problem: Any) -> float:
    """Assumption 2: grad f_i and grad g_i are L_1-Lipschitz in (x, y): for quadratics the largest spectral norm
    of the joint Hessians of g_i and f_i over the clients."""
    norms = [np.abs(np.linalg.eigvalsh(H)).max() for H in (*g_hessians(problem), *f_hessians(problem))]
    return float(max(norms))


def r(problem: Any) -> float:
    """Lemma 1: ||v*(x)|| <= r = L_f / mu_g, with L_f as declared (a bound, module doc) and mu_g independent."""
    return float(problem.constants()["L_f"].value) / mu_g(problem)


def computations() -> dict[str, Independent]:
    return {
        "mu_g": Independent(mu_g, "min_i lambda_min(Hess_yy g_i), Hess_yy g_i assembled from lower_grad (Assumption 1)"),
        "L_1": Independent(L_1, "max_i of ||joint Hessian of g_i||_2 and ||Hess f_i||_2, assembled from lower_grad, "
                                "surrogate_grad (v = 0) and upper_grad_y (Assumption 2)"),
        "r": Independent(r, "Lemma 1's radius L_f / mu_g: declared L_f over the independent mu_g"),
    }


CLAIMS = (
    ConstantsClaim(
        id="simfbo.constants.quadratic_bilevel", paper=KEY,
        title="quadratic bilevel: the constants Theorems 1-2 read equal an independent computation",
        statement="mu_g (Assumption 1), L_1 (Assumption 2) and Lemma 1's radius r = L_f/mu_g equal their definitions "
                  "recomputed from the oracles (Hessians assembled from gradients) at two P1 instances with "
                  "heterogeneous Hessians, mu_g != 1 and several clients; relative tolerance 1e-7 (round-off).",
        source=src("Assumptions 1-2, Lemma 1", "spec simfbo §1, §6.1"),
        grid={"quick": (0, 1), "full": (0, 1)}, configure=instance, computations=computations(),
        problem_of=problem_of),
)
