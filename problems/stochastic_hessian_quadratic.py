"""Federated quadratics with a stochastic Hessian (issue #21): local steps matter even with identical data.

F_i(x) = 1/2 (x - c_i)^T H (x - c_i) as ``quadratic`` with shared curvature, and the stochastic gradient

    g_i(x; xi, z) = H_xi (x - c_i) + (sigma / sqrt(d)) z,   H_xi = H + sum_{k=1}^p xi_k B_k,

xi ~ N(0, I_p), z ~ N(0, I_d) independent, B_k fixed symmetric matrices. It is unbiased and its
variance grows with the distance to the client's centre:

    E||g_i - grad F_i||^2 = sigma^2 + (x - c_i)^T Sigma_B (x - c_i),   Sigma_B = sum_k B_k^2,

with rho^2 = lambda_max(Sigma_B) set exactly by construction. With additive noise only (rho = 0) and
identical data, the average of M local-SGD runs of K steps is minibatch SGD: every local step's noise
enters the average linearly, so client drift never matters. Here a client's noise is multiplied by its
own iterate, so the drift between clients raises the noise the average sees: local SGD's floor depends
on K beyond the minibatch recursion. The step is bilinear in state and Gaussian draws, so exact mode
propagates it (ratecheck.exact.gaussian_steps).

The bounded-variance assumption does not hold globally (the variance grows like rho^2 ||x - c_i||^2),
so the family does not certify it; ``sigma_ball`` bounds it on the ball B(x*, R).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ratecheck.assumptions import (
    DIST0,
    FEDERATED,
    Assumption,
    bounded_gradient,
    heterogeneity,
    initial_distance,
    initial_gap,
    other,
    smooth,
    strongly_convex,
)
from ratecheck.params import Param, declare
from ratecheck.problem import Constant

from . import quadratic
from .quadratic import Quadratic, QuadraticBatch


@dataclass(frozen=True, eq=False)
class StochasticHessianQuadratic(Quadratic):
    family: ClassVar[str] = "stochastic_hessian_quadratic"
    assumptions: ClassVar[tuple[Assumption, ...]] = FEDERATED.assume(
        smooth("L"), strongly_convex("mu", "kappa"), heterogeneity("nu", "zeta"), bounded_gradient("G"),
        initial_gap("Delta", "F_star"), initial_distance(DIST0),
        other("sigma", "rho", "sigma_ball", text="stochastic Hessian: E||g_i - grad F_i||^2 = sigma^2 + "
              "(x - c_i)^T Sigma_B (x - c_i) <= sigma^2 + rho^2 ||x - c_i||^2 (sigma, rho, sigma_ball)"))

    hessian_noise: np.ndarray = field(default_factory=lambda: np.zeros((0, 1, 1)))  # (p, d, d) the B_k
    # derived in __post_init__
    noise_rows: np.ndarray = field(init=False, repr=False, compare=False)  # (p d, d): B_k stacked by rows

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.hessians.ndim != 2:
            raise ValueError("hessians must be one shared (d, d) matrix: the stochastic Hessian is H + sum xi_k B_k")
        B = np.asarray(self.hessian_noise, dtype=float)
        d = self.dim
        if B.ndim != 3 or B.shape[1:] != (d, d):
            raise ValueError(f"hessian_noise must have shape (p, d, d) with d = {d}, got {B.shape}")
        if not np.allclose(B, np.swapaxes(B, -1, -2)):
            raise ValueError("hessian_noise matrices B_k must be symmetric")
        object.__setattr__(self, "hessian_noise", B)
        object.__setattr__(self, "noise_rows", B.reshape(-1, d))

    @property
    def rho(self) -> float:
        """sqrt(lambda_max(sum_k B_k^2)): E||(H_xi - H) u||^2 = u^T Sigma_B u <= rho^2 ||u||^2."""
        if not self.hessian_noise.shape[0]:
            return 0.0
        return float(np.sqrt(max(np.linalg.eigvalsh(self.sigma_B)[-1], 0.0)))

    @property
    def sigma_B(self) -> np.ndarray:
        return np.einsum("kij,kjl->il", self.hessian_noise, self.hessian_noise)

    def stochastic_grad(self, batch: QuadraticBatch, w: np.ndarray, noise) -> np.ndarray:
        """H_xi (w - c_i) + (sigma / sqrt(d)) z: xi (R, m, p) drawn first, then z (R, m, d)."""
        grad = self.local_grad(batch, w)
        p, d = self.hessian_noise.shape[0], self.dim
        if p:
            xi = noise.normal((*w.shape[1:-1], p))
            diff = w - batch.centers
            Bdiff = (diff.reshape(-1, d) @ self.noise_rows.T).reshape(*w.shape[:-1], p, d)  # B_k (w - c_i)
            grad += np.einsum("...k,...ki->...i", xi, Bdiff)
        if self.sigma != 0.0:
            z = noise.normal(w.shape[1:])
            z *= self.sigma / np.sqrt(d)
            grad += z
        return grad

    def constants(self) -> dict[str, Constant]:
        out = super().constants()
        rho, R = self.rho, self.radius
        far = float(np.linalg.norm(self.centers - self.x_star, axis=1).max())
        out["sigma"] = Constant(float(self.sigma), "additive noise z: E||(sigma/sqrt d) z||^2 = sigma^2 exactly "
                                "(the variance at x adds (x - c_i)^T Sigma_B (x - c_i))")
        out["rho"] = Constant(rho, "sqrt(lambda_max(sum_k B_k^2)): the stochastic Hessian's spread, set exactly")
        out["sigma_ball"] = Constant(float(np.sqrt(self.sigma ** 2 + rho ** 2 * (R + far) ** 2)),
                                     f"sqrt(sigma^2 + rho^2 (R + max_i ||x* - c_i||)^2): the variance bound on "
                                     f"B(x*, R = {R:.4g})")
        return out


@declare(
    dim=Param.int("dimension d", low=1, high=2_000),
    clients=Param.int("number of clients N", low=1, high=100_000),
    mu=Param.real("smallest eigenvalue of H (strong convexity)", positive=True),
    L=Param.real("largest eigenvalue of H (smoothness)", positive=True),
    zeta=Param.real("heterogeneity: client centres c_i = c_bar + zeta u_i (0: identical data)", low=0.0),
    sigma=Param.real("additive gradient noise: E||z-part||^2 = sigma^2", low=0.0),
    rho=Param.real("stochastic-Hessian spread: lambda_max(sum_k B_k^2) = rho^2", low=0.0),
    hessian_draws=Param.int("p, the standard-normal draws xi_k of one stochastic Hessian", low=1, high=1_000),
    heterogeneity=Param.choice("directions u_i: none, alternating (+-e_d), random", quadratic.HETEROGENEITY),
    rotate=Param.bool("rotate H by a random orthogonal matrix"),
    x0_offset=Param.real("x0 = x* + x0_offset 1_d"),
    seed=Param.int("seed of the instance construction (not of the runs)", low=0),
)
def make(
    dim: int = 3,
    clients: int = 4,
    mu: float = 0.5,
    L: float = 1.0,
    zeta: float = 0.0,
    sigma: float = 0.5,
    rho: float = 0.5,
    hessian_draws: int = 2,
    heterogeneity: str = "random",
    rotate: bool = True,
    x0_offset: float = 1.0,
    seed: int = 0,
) -> StochasticHessianQuadratic:
    """Build an instance: H, centres and x0 as ``quadratic`` (shared curvature, same seed); B_k the
    symmetric parts of Gaussian matrices (a second seeded stream), scaled so lambda_max(sum B_k^2) = rho^2."""
    params = dict(locals())  # every value already checked by its declaration above (@declare)
    base = quadratic.make(dim=dim, clients=clients, mu=mu, L=L, zeta=zeta, sigma=sigma, heterogeneity=heterogeneity,
                          curvature="shared", rotate=rotate, x0_offset=x0_offset, seed=seed)
    raw = np.random.default_rng([seed, 1]).standard_normal((hessian_draws, dim, dim))
    B = (raw + np.swapaxes(raw, 1, 2)) / 2
    top = float(np.linalg.eigvalsh(np.einsum("kij,kjl->il", B, B))[-1])
    B = B * (rho / np.sqrt(top)) if rho > 0 else np.zeros((0, dim, dim))
    return StochasticHessianQuadratic(hessians=base.hessians, centers=base.centers, sigma=base.sigma, x0=base.x0,
                                      radius=0.0, spec_params=params, hessian_noise=B)

