"""The quadratic-bilevel constants Theorems 1-2's bindings read, against independent computations (issue #23 item 2).

Each constant is recomputed from its definition in the paper out of the problem's own oracles: Hess_yy g_i and
Hess_xy g_i assembled column by column from the lower-level gradient oracle ``lower_grad`` (exact to round-off: g_i
is quadratic), Hess f_i from ``upper_grad_y`` and ``surrogate_grad`` at v = 0 (grad_x f_i). Never the family's own
formulas (problems/quadratic_bilevel.py ``constants``).

L_f on P1 is a sup of ||grad f_i|| over a box (spec C7: no global constant), and sigma_gh (Assumption 4 with
heterogeneous Hessians) one over the same box: both are searched there (sup_over_balls); L_f is attained, sigma_gh
is a bound by design ((a + b)^2 <= 2a^2 + 2b^2), so only its direction is decided. The noise levels sigma_f, sigma_g
are sampled through the oracles, sigma_gg (the Hessian noise's spectral norm) read from them draw by draw. The
instances have heterogeneous Hessians A_i (mu_g = min_i lambda_min(A_i) != 1, so a power of mu_g shows), non-uniform
spectra, several clients and every noise non-zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.constants import (
    ConstantsClaim,
    Independent,
    NoiseSample,
    hessian_from_gradients,
    noise_sample,
    noise_stream,
    per_problem,
    sampled_tolerance,
    sup_over_balls,
    tiled_draws,
)
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig

from .presets import p1
from .theorems import KEY, src

INSTANCES = (
    p1(clients=6, a_min=0.5, a_max=3.0, hessian_spread=0.3, lam=0.5, sigma_f=0.7, sigma_g=1.4, sigma_h=0.15, seed=2),
    p1(clients=4, dim_x=3, dim_y=5, a_min=1.5, a_max=4.0, hessian_spread=0.5, lam=5.0, sigma_f=1.2, sigma_g=0.5,
       sigma_h=0.6, seed=5),
)
# sigma_f, sigma_g (N1): E||noise||^2 sampled from DRAWS draws per client (STREAMS generators of DRAWS / STREAMS copies
# of every client); the tolerance is SAMPLED_Z sd of the estimate with the fewest draws x coordinates (4 clients,
# sigma_g on d_y = 4): 5 sqrt(1 / (2 DRAWS 4 4)) = 7.2e-3, so a 1.5% error in a sigma, sigma^2 for sigma or a noise
# scaled by another dimension FAILs
DRAWS = 15000
# L_f on P1 (h_i = 0) is the sup of ||grad f_i|| over the box, attained at x = -R_x s_i/||s_i||, y = -R_y e_i/||e_i||:
# the ascent reaches it to round-off (3e-14 here), so the largest found must be within 1e-6 of it
ATTAINED = 1e-6
STREAMS = 30
SIGMA_TOLERANCE = sampled_tolerance(DRAWS * 4, 4)


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




def _copies(problem: Any, k: int = DRAWS // STREAMS) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    """k copies of every client in each of STREAMS rows, at (x, y, v) = (0.4, -0.3, 0)."""
    n = problem.num_clients
    batch = problem.gather(np.tile(np.arange(n), (STREAMS, k)))
    shape = (STREAMS, n * k)
    return (batch, np.full((*shape, problem.dim_x), 0.4), np.full((*shape, problem.dim_y), -0.3),
            np.zeros((*shape, problem.dim_y)))


@per_problem
def f_noise(problem: Any) -> NoiseSample:
    """Assumption 3 (N1): grad f_i(z; xi) - grad f_i(z) over (x, y), drawn: the x block from surrogate_grad, the y block
    from ls_grad at v = 0 (no Hessian term), each minus its noise-free value (sigma_f's and its mean's draws)."""
    batch, x, y, v = _copies(problem)
    stream = noise_stream("simfbo.sigma_f", STREAMS)
    gx = problem.surrogate_grad(batch, x, y, v, stream) - problem.surrogate_grad(batch, x, y, v, None)
    gy = problem.ls_grad(batch, x, y, v, stream) - problem.ls_grad(batch, x, y, v, None)
    xi = np.concatenate([gx, gy], axis=-1)
    return noise_sample(xi, tiled_draws(xi, problem.num_clients))


@per_problem
def g_noise(problem: Any) -> NoiseSample:
    """Assumption 3 (N1): grad_y g_i(z; zeta) - grad_y g_i(z), drawn through lower_grad."""
    batch, x, y, _ = _copies(problem)
    xi = problem.lower_grad(batch, x, y, noise_stream("simfbo.sigma_g", STREAMS)) - problem.lower_grad(batch, x, y, None)
    return noise_sample(xi, tiled_draws(xi, problem.num_clients))


def sigma_f(problem: Any) -> float:
    """Assumption 3 (N1): E||grad f_i(z; xi) - grad f_i(z)||^2 = sigma_f^2 over (x, y), sampled (f_noise)."""
    return f_noise(problem).level


def sigma_g(problem: Any) -> float:
    """Assumption 3 (N1): E||grad_y g_i(z; zeta) - grad_y g_i(z)||^2 = sigma_g^2, sampled through lower_grad."""
    return g_noise(problem).level


def _hvp_noise(problem: Any, batch: Any, x: np.ndarray, y: np.ndarray, v: np.ndarray, name: str) -> np.ndarray:
    """The sampled Hessian-vector product's noise (grad_yy g_i(psi) - grad_yy g_i) v through ls_grad: one draw psi
    at v minus its replay at v = 0 (its grad_y f noise and Hessian signs share the stream) minus the same without
    noise."""
    noisy = problem.ls_grad(batch, x, y, v, noise_stream(name, STREAMS))
    at_zero = problem.ls_grad(batch, x, y, np.zeros_like(v), noise_stream(name, STREAMS))
    return noisy - at_zero - problem.ls_grad(batch, x, y, v, None) + problem.ls_grad(batch, x, y, 0 * v, None)


def sigma_gg(problem: Any) -> float:
    """Assumption 3: ||grad_yy g_i(psi) - grad_yy g_i||_2 <= sigma_gg, the largest over 200 draws per client of the
    spectral norm of the Hessian noise, assembled column by column from _hvp_noise at v = e_j."""
    k, dy = 200 // STREAMS + 1, problem.dim_y
    batch, x, y, _ = _copies(problem, k)
    cols = [_hvp_noise(problem, batch, x, y, np.broadcast_to(e, (*x.shape[:-1], dy)).copy(), f"simfbo.sigma_gg.{j}")
            for j, e in enumerate(np.eye(dy))]
    noise = np.stack(cols, axis=-1)  # (R, m, dy, dy): column j is the noise operator at e_j
    return float(np.linalg.norm(noise.reshape(-1, dy, dy), 2, axis=(1, 2)).max())


# the direction the Hessian noise's mean is read along: every coordinate non-zero and distinct
HVP_DIRECTION = (0.5, 1.5)


@per_problem
def hvp_noise(problem: Any) -> NoiseSample:
    """Assumption 3 (N2): (grad_yy g_i(psi) - grad_yy g_i) v at v = linspace(HVP_DIRECTION), DRAWS draws per client
    through ls_grad (_hvp_noise): E = 0 when the sampled Hessian's mean is A_i."""
    batch, x, y, v = _copies(problem)
    v = v + np.linspace(*HVP_DIRECTION, problem.dim_y)
    xi = _hvp_noise(problem, batch, x, y, v, "simfbo.hvp")
    return noise_sample(xi, tiled_draws(xi, problem.num_clients))


def _region(problem: Any) -> tuple[list[np.ndarray], list[float]]:
    """The box the family declares L_f and sigma_gh on: ||x|| <= R_x, ||y|| <= R_y (its declared radii)."""
    R_x, R_y = problem.box
    return [np.zeros(problem.dim_x), np.zeros(problem.dim_y)], [R_x, R_y]


def _grads_at(problem: Any, z: np.ndarray, which: str) -> np.ndarray:
    """Every client's grad f_i (``which`` = 'f', from surrogate_grad at v = 0 and upper_grad_y) or grad_y g_i ('g')
    at points z = (x, y) (k, dx + dy): (k, n, .)."""
    n, dx = problem.num_clients, problem.dim_x
    batch = problem.gather(np.tile(np.arange(n), (z.shape[0], 1)))
    x = np.repeat(z[:, None, :dx], n, axis=1)
    y = np.repeat(z[:, None, dx:], n, axis=1)
    if which == "g":
        return np.asarray(problem.lower_grad(batch, x, y, None))
    gx = problem.surrogate_grad(batch, x, y, np.zeros_like(y), None)
    return np.concatenate([gx, problem.upper_grad_y(y, batch.e)], axis=-1)


def L_f(problem: Any) -> float:
    """Assumption 2 on the box (no global constant on P1, spec C7): sup max_i ||grad f_i(x, y)||, the largest found."""
    return sup_over_balls(lambda z: np.linalg.norm(_grads_at(problem, z, "f"), axis=-1).max(axis=1), *_region(problem))


def sigma_gh(problem: Any) -> float:
    """Assumption 4 with beta_gh = 1 on the box: sup (sum_i p_i ||grad_y g_i - sum_j p_j grad_y g_j||^2)^(1/2), the
    largest found (p the client weights)."""
    p = np.asarray(problem.p, float)

    def spread(z: np.ndarray) -> np.ndarray:
        g = _grads_at(problem, z, "g")
        dev = g - np.einsum("n,knd->kd", p, g)[:, None, :]
        return np.sqrt(np.einsum("n,knd,knd->k", p, dev, dev))
    return sup_over_balls(spread, *_region(problem))


def r(problem: Any) -> float:
    """Lemma 1: ||v*(x)|| <= r = L_f / mu_g, from the independent L_f (the largest found on the box; attained) and
    mu_g."""
    return L_f(problem) / mu_g(problem)


def computations() -> dict[str, Independent]:
    return {
        "mu_g": Independent(mu_g, "min_i lambda_min(Hess_yy g_i), Hess_yy g_i assembled from lower_grad (Assumption 1)"),
        "L_1": Independent(L_1, "max_i of ||joint Hessian of g_i||_2 and ||Hess f_i||_2, assembled from lower_grad, "
                                "surrogate_grad (v = 0) and upper_grad_y (Assumption 2)"),
        "r": Independent(r, "Lemma 1's radius L_f / mu_g from the independent L_f and mu_g", rel_tolerance=1e-6),
        "L_f": Independent(L_f, "sup over ||x|| <= R_x, ||y|| <= R_y of max_i ||grad f_i||: sampled, corners, boundary and "
                                "SLSQP ascent (Assumption 2 on the box; attained on P1, h_i = 0: within 1e-6)",
                           bound=True, tight=ATTAINED),
        "sigma_gh": Independent(sigma_gh, "sup over the box of (sum_i p_i ||grad_y g_i - grad_y G||^2)^(1/2): sampled, "
                                          "corners, boundary and SLSQP ascent (Assumption 4, heterogeneous A_i: "
                                          "(a + b)^2 <= 2a^2 + 2b^2 by design, ratio reported)", bound=True),
        "sigma_f": Independent(sigma_f, f"sqrt of the mean squared N1 noise of grad f over {DRAWS} draws per client "
                                        "through surrogate_grad and ls_grad (v = 0), seed 0 (Assumption 3); 5 sd",
                               rel_tolerance=SIGMA_TOLERANCE),
        "sigma_g": Independent(sigma_g, f"sqrt of the mean squared N1 noise of lower_grad over {DRAWS} draws per "
                                        "client, seed 0 (Assumption 3); 5 sd", rel_tolerance=SIGMA_TOLERANCE),
        "sigma_gg": Independent(sigma_gg, "largest spectral norm of the Hessian noise over 200+ draws per client, "
                                          "assembled from ls_grad at e_j (Assumption 3; sigma_h diag(+-1): every draw "
                                          "attains it)"),
    }


CLAIMS = (
    ConstantsClaim(
        id="simfbo.constants.quadratic_bilevel", paper=KEY,
        title="quadratic bilevel: the constants Theorems 1-2 read equal an independent computation",
        statement="mu_g (Assumption 1), L_1 (Assumption 2), Lemma 1's radius r = L_f/mu_g and sigma_gg (Assumption 3) "
                  "equal their definitions recomputed from the oracles (Hessians assembled from gradients) at two P1 "
                  "instances with heterogeneous Hessians, mu_g != 1 and several clients, relative tolerance 1e-7 "
                  "(round-off); sigma_f, sigma_g (Assumption 3) equal their sampled values within 5 sd (7.2e-3); L_f "
                  "and sigma_gh (Assumptions 2, 4 on the box) bound the largest values found there, L_f within 1e-6.",
        source=src("Assumptions 1-2, Lemma 1", "spec simfbo §1, §6.1"),
        grid={"quick": (0, 1), "full": (0, 1)}, configure=instance, computations=computations(),
        problem_of=problem_of),
)
