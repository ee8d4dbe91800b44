"""The quadratic family's constants Theorems 1-2's bindings read, against independent computations (issue #23 item 2).

Each constant is recomputed from its assumption's definition out of the problem's own oracles: the client
Hessians assembled column by column from ``local_grad`` (exact to round-off: F_i is quadratic), the
heterogeneity from gradient differences at a point, Delta and ||x0 - x*||^2 with x* solved from the gradient
oracle, sigma by sampling the stochastic-gradient oracle (a fixed-seed Monte-Carlo estimate with its tolerance stated
below), and the constants declared as a sup over the ball B(x*, R) (G; nu with heterogeneous Hessians) by searching
the ball (ratecheck.claims.constants.sup_over_balls). Never the family's own formulas (problems/quadratic.py
``constants``).

Instance 0 has heterogeneous client Hessians (L = max_i lambda_max(H_i) differs from lambda_max(H_bar)); instance 1
shares a rotated Hessian with a non-uniform spectrum and heterogeneous centres (there nu is exact: grad F_i -
grad F is constant in x; with heterogeneous Hessians the family declares a bound over a ball instead); instance 2 is
P3's nonconvex cosine-perturbed quadratic (L a sup of Hessians by central differences, attained; F* the least value
found from many starts; nu exact; its G, a bound on a ball no P3 claim reads, is not checked).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.constants import (
    ConstantsClaim,
    Independent,
    NoiseSample,
    client_gradient,
    client_hessians,
    noise_sample,
    per_problem,
    sup_over_balls,
    tiled_draws,
)
from ratecheck.inspection import problem_of
from ratecheck.seeding import ReplicaStream
from ratecheck.trace import RunConfig

from .theorems import KEY, src

INSTANCES = (
    {"dim": 5, "clients": 4, "mu": 0.2, "L": 3.0, "zeta": 0.7, "sigma": 0.8, "heterogeneity": "random",
     "curvature": "per_client", "seed": 3},
    {"dim": 6, "clients": 5, "mu": 0.1, "L": 2.0, "zeta": 1.5, "sigma": 1.3, "heterogeneity": "random",
     "curvature": "shared", "rotate": True, "seed": 8},
)
# instance 2: P3's nonconvex cosine-perturbed quadratic (cosine_quadratic, Theorem 2's P3 claims read L, sigma, Delta),
# heterogeneous centres, d = 4 and 4 clients so that sigma's estimate has the quadratic instances' sd (<= 1.25e-3)
COSINE = {"dim": 4, "clients": 4, "alpha": 2.5, "zeta": 0.6, "sigma": 1.7, "x0_offset": 0.4}
# its L = sup_w lambda_max(Hess F_i(w)) is attained (cos w_j = -1): the largest found on a period, with Hessians by
# central differences of local_grad (step 1e-4: error ~ alpha h^2 / 6 = 4e-9), within 1e-6 of it either side
ATTAINED = 1e-6
# sigma: E||xi||^2 estimated from SAMPLES draws per client of a d-vector: d ||xi||^2 / sigma^2 ~ chi^2_d, so the
# estimate of sigma has relative sd sqrt(1 / (2 SAMPLES N d)) <= 1e-3 here; SIGMA_TOLERANCE is over 4 sd and half a
# 1% error
SAMPLES = 20000
STREAMS = 50
SIGMA_TOLERANCE = 5e-3
# G and nu on the ball are declared by the triangle inequality (max_i L_i R + ||grad F_i(x*)||, max_i ||H_i - H_bar|| R
# + ||grad F_i(x*)||), tight only when grad F_i(x*) lines up with H_i's top eigenvector: not in general, but at these
# instances the largest value found on the ball is within 3% of it (1.2% and 2.9%), so a declaration 5% loose FAILs
BALL_TIGHT = 0.05
SIGMA_KEY = hashlib.sha256(b"defedavg.constants.sigma").hexdigest()  # a run key of its own (hex, as a run's)


def instance(value: float, profile: Profile) -> RunConfig:
    family, params = ("cosine_quadratic", COSINE) if int(value) == len(INSTANCES) else ("quadratic", INSTANCES[int(value)])
    return RunConfig("defedavg", {"eta": 0.01, "local_steps": 2, "participation": "full"}, family, dict(params),
                     rounds=1, replicas=1)


def L(problem: Any) -> float:
    """Assumption 1: every F_i is L-smooth: max_i lambda_max(Hess F_i)."""
    return float(max(np.linalg.eigvalsh(H).max() for H in client_hessians(problem)))


def mu(problem: Any) -> float:
    """F = (1/N) sum_i F_i is mu-strongly convex (Theorems 1-2's hypothesis): lambda_min(mean_i Hess F_i)."""
    return float(np.linalg.eigvalsh(client_hessians(problem).mean(axis=0)).min())


def kappa(problem: Any) -> float:
    return L(problem) / mu(problem)


def nu(problem: Any) -> float:
    """Assumption 5: ||grad F_i(x) - grad F(x)|| <= nu; for a shared Hessian the difference is constant in x, so
    nu = max_i of it at any point (here a fixed non-trivial point)."""
    x = np.linspace(-1.0, 1.0, problem.dim)[None, :]
    grads = np.stack([client_gradient(problem, i, x)[0] for i in range(problem.num_clients)])
    return float(np.linalg.norm(grads - grads.mean(axis=0), axis=1).max())


def noise_at(problem: Any, at: float) -> NoiseSample:
    """Assumption 3: grad f(w; xi) - grad F_i(w) at w = at 1, drawn from the stochastic oracle (fixed seed)."""
    N, d = problem.num_clients, problem.dim
    # SAMPLES draws per client as STREAMS streams of SAMPLES / STREAMS copies of every client (a stream per
    # replica is a generator each: few streams, many draws per stream)
    noise = ReplicaStream(0, SIGMA_KEY, range(STREAMS), "sigma")
    batch = problem.gather(np.tile(np.arange(N), (STREAMS, SAMPLES // STREAMS)))
    w = np.full((STREAMS, N * (SAMPLES // STREAMS), d), float(at))
    xi = np.asarray(problem.stochastic_grad(batch, w.copy(), noise)) - np.asarray(problem.local_grad(batch, w))
    return noise_sample(xi, tiled_draws(xi, N))


@per_problem
def gradient_noise(problem: Any) -> NoiseSample:
    """The stochastic gradient's noise at w = 0: sigma's and its mean's draws."""
    return noise_at(problem, 0.0)


def sigma(problem: Any) -> float:
    """Assumption 3: E||grad f(w; xi) - grad F_i(w)||^2 <= sigma^2, sampled from the stochastic oracle (gradient_noise)."""
    return gradient_noise(problem).level


def quadratic(problem: Any) -> bool:
    return problem.family == "quadratic"


def cosine(problem: Any) -> bool:
    return problem.family == "cosine_quadratic"


def shared_curvature(problem: Any) -> bool:
    """grad F_i - grad F constant in x: a shared Hessian, or the cosine problem's common cosine term."""
    return cosine(problem) or problem.hessians.ndim == 2


def per_client_curvature(problem: Any) -> bool:
    return not shared_curvature(problem)


def L_sup(problem: Any) -> float:
    """Assumption 1 for a non-quadratic F_i: sup_w max_i lambda_max(Hess F_i(w)), the largest found on the ball of
    radius pi sqrt(d) about 0 (it holds a period of the cosine term), Hess F_i(w) by central differences of local_grad."""
    d, h = problem.dim, 1e-4
    steps = np.vstack([np.eye(d), -np.eye(d)]) * h

    def curvature(w: np.ndarray) -> np.ndarray:
        points = (w[:, None, :] + steps[None, :, :]).reshape(-1, d)  # (k * 2d, d)
        g = _grads(problem, points).reshape(w.shape[0], 2 * d, problem.num_clients, d)
        H = np.transpose((g[:, :d] - g[:, d:]) / (2 * h), (0, 2, 1, 3))  # (k, N, d, d): row j is d grad / d w_j
        return np.linalg.eigvalsh((H + np.swapaxes(H, -1, -2)) / 2)[..., -1].max(axis=1)
    return sup_over_balls(curvature, [np.zeros(d)], [np.pi * np.sqrt(d)], samples=500)


def Delta_min(problem: Any) -> float:
    """F(x0) - F* for a nonconvex F: F* the least value found by gradient descent (gradient from local_grad, step
    1/4 <= 1/L) from 400 random starts in the box |w_j| <= 6 that holds every stationary point (|w - c_bar| <=
    alpha there), all at once, then L-BFGS from the best 4 to round-off; seed 0; F = value."""
    from scipy.optimize import minimize

    w = np.random.default_rng(0).uniform(-6.0, 6.0, size=(400, problem.dim))
    for _ in range(400):
        w = w - 0.25 * _grads(problem, w).mean(axis=1)
    def grad(x: np.ndarray) -> np.ndarray:
        return _grads(problem, x[None, :])[0].mean(axis=0)
    def value(x: np.ndarray) -> float:
        return float(problem.value(x[None, :])[0])
    starts = w[np.argsort(np.asarray(problem.value(w)))[:4]]
    best = min(minimize(value, w0, jac=grad, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15}).fun
               for w0 in starts)
    return value(np.asarray(problem.initial_point(), float)) - float(best)


def _grads(problem: Any, x: np.ndarray) -> np.ndarray:
    """grad F_i at points x (k, d) for every client: (k, N, d)."""
    return np.stack([client_gradient(problem, i, x) for i in range(problem.num_clients)], axis=1)


def minimizer(problem: Any) -> np.ndarray:
    """x* of F = (1/N) sum_i F_i from the gradient oracle: grad F(x) = H_bar x + grad F(0) = 0."""
    g0 = _grads(problem, np.zeros((1, problem.dim)))[0].mean(axis=0)
    return np.linalg.solve(client_hessians(problem).mean(axis=0), -g0)


def _sup_on_ball(problem: Any, value: Any) -> float:
    """The largest value found on the ball B(x*, R) the family declares G and nu on (R its declared radius, x*
    from the gradient oracle)."""
    return sup_over_balls(value, [minimizer(problem)], [float(problem.radius)])


def G(problem: Any) -> float:
    """Assumption 6 (local, on the ball): sup_{x in B(x*, R)} max_i ||grad F_i(x)||, the largest found."""
    return _sup_on_ball(problem, lambda x: np.linalg.norm(_grads(problem, x), axis=-1).max(axis=1))


def nu_ball(problem: Any) -> float:
    """Assumption 5 on the ball (heterogeneous Hessians): sup_x max_i ||grad F_i(x) - grad F(x)||, the largest found."""
    def spread(x: np.ndarray) -> np.ndarray:
        g = _grads(problem, x)
        return np.linalg.norm(g - g.mean(axis=1, keepdims=True), axis=-1).max(axis=1)
    return _sup_on_ball(problem, spread)


def Delta(problem: Any) -> float:
    """F(x0) - F* (Theorems 1-2): by the midpoint rule on the gradient oracle, exact for a quadratic:
    F(x0) - F(x*) = (x0 - x*) . grad F((x0 + x*)/2), x* from the gradient oracle."""
    x_star, x0 = minimizer(problem), np.asarray(problem.initial_point(), float)
    return float((x0 - x_star) @ _grads(problem, ((x0 + x_star) / 2)[None, :])[0].mean(axis=0))


def dist0_sq(problem: Any) -> float:
    x_star, x0 = minimizer(problem), np.asarray(problem.initial_point(), float)
    return float(np.sum((x0 - x_star) ** 2))


CLAIMS = (
    ConstantsClaim(
        id="defedavg.constants.quadratic", paper=KEY,
        title="quadratic: the constants Theorems 1-2 read equal an independent computation",
        statement="L (Assumption 1), mu and kappa = L/mu, nu = zeta (Assumption 5, on the shared-Hessian instance "
                  "where it is exact), Delta = F(x0) - F*, ||x0 - x*||^2 and sigma (Assumption 3, sampled) equal their "
                  "definitions recomputed from the oracles at two instances (heterogeneous Hessians; a rotated shared "
                  "Hessian), non-uniform spectra, several clients; relative tolerance 1e-7, sigma 5e-3 (over 4 sd of its "
                  "estimate). G (Assumption 6) and nu with heterogeneous Hessians, declared on the ball B(x*, R), bound "
                  "the largest values found there and are within 5% of them. On P3's cosine problem L (a sup, attained) is "
                  "reached within 1e-6, Delta = F(x0) - F* (F* the least value found) and nu agree to round-off and "
                  "sigma within 5e-3.",
        source=src("Assumptions 1, 3, 5; Theorems 1-2 (mu-strong convexity)", "spec defedavg §1 notation table"),
        grid={"quick": (0, 1, 2), "full": (0, 1, 2)}, configure=instance,
        problem_of=problem_of,
        computations={
            "L": Independent(L, "max_i lambda_max(Hess F_i), Hess F_i assembled from local_grad (Assumption 1)",
                             where=quadratic),
            "mu": Independent(mu, "lambda_min(mean_i Hess F_i), assembled from local_grad", where=quadratic),
            "kappa": Independent(kappa, "L / mu from the independent L and mu", where=quadratic),
            "nu": Independent(nu, "max_i ||grad F_i(x) - grad F(x)|| at a point, where it is constant in x (shared "
                                  "Hessian; the cosine problem) (Assumption 5)", where=shared_curvature),
            "zeta": Independent(nu, "alias of nu", where=shared_curvature),
            "nu (ball)": Independent(nu_ball, "sup over B(x*, R) of max_i ||grad F_i - grad F||: sampled, corners, boundary and "
                                              "SLSQP ascent (Assumption 5, heterogeneous Hessians)", bound=True,
                                     tight=BALL_TIGHT, where=per_client_curvature, constant="nu"),
            "G": Independent(G, "sup over B(x*, R) of max_i ||grad F_i||: sampled, corners, boundary and SLSQP ascent "
                                "(Assumption 6)", bound=True, tight=BALL_TIGHT, where=quadratic),
            "Delta": Independent(Delta, "F(x0) - F* by the midpoint rule on local_grad, x* from local_grad",
                                 where=quadratic),
            "dist0_sq": Independent(dist0_sq, "||x0 - x*||^2, x* from local_grad", where=quadratic),
            "L (sup)": Independent(L_sup, "sup over a period of max_i lambda_max(Hess F_i), central differences of "
                                          "local_grad: sampled, corners, boundary and SLSQP ascent (Assumption 1; "
                                          "attained: within 1e-6)", rel_tolerance=ATTAINED, bound=True,
                                   tight=ATTAINED, where=cosine, constant="L"),
            "Delta (min)": Independent(Delta_min, "F(x0) - the least F found by L-BFGS from 400 random starts (F* of "
                                                  "the nonconvex problem)", rel_tolerance=1e-9, where=cosine,
                                       constant="Delta"),
            "sigma": Independent(sigma, f"sqrt of the mean of ||stochastic_grad - local_grad||^2 over {SAMPLES} draws "
                                        "per client, seed 0 (Assumption 3)", rel_tolerance=SIGMA_TOLERANCE),
        }),
)
