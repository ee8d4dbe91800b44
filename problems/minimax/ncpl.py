"""(b) NC-PL log problem, spec fessgda §6.2."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ratecheck.params import Param, declare
from ratecheck.problem import Constant

from .base import DIM, SHARED, MinimaxProblem, _min_1d, _shared_fields, _sin_sigma_g


@dataclass(frozen=True, eq=False)
class NCPLLog(MinimaxProblem):
    """f_i = sum_k [-alpha log(1+x_k^2) + b x_k y_k - mu/2 y_k^2 + zeta sin(omega x_k + theta_i)]."""

    family: ClassVar[str] = "minimax"

    alpha: float
    c: float
    mu: float
    # derived in __post_init__ (not parameters)
    b: float = field(init=False, repr=False, compare=False)
    l_global: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        d = self.x0.shape[0]
        self._init_common(self.spec_params["clients"], d, d)
        b = float(np.sqrt(self.c * self.mu))
        # per-coordinate Hessian [[d_xx, b], [b, -mu]], d_xx in [-2 alpha, alpha/4]; the spectral
        # norm is convex in d_xx, so its sup is at an endpoint (exact)
        ends = np.array([-2 * self.alpha, self.alpha / 4])
        centre, radius = (ends - self.mu) / 2, np.sqrt(((ends + self.mu) / 2) ** 2 + b**2)
        l_global = float(np.max(np.maximum(np.abs(centre + radius), np.abs(centre - radius))))
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "l_global", l_global)
        # Assumption 2.1 is for every client: add the heterogeneity curvature (pitfall P7)
        object.__setattr__(self, "l", l_global + self.zeta * self.omega**2)

    def local_grads(self, batch, x, y):
        gx = -2 * self.alpha * x / (1 + x * x) + self.b * y
        if self.zeta:
            gx = gx + self.sin_grad(x, batch.phase)
        return gx, self.b * x - self.mu * y

    def grads(self, x, y):
        return -2 * self.alpha * x / (1 + x * x) + self.b * y, self.b * x - self.mu * y

    def local_values(self, batch, x, y):
        per = -self.alpha * np.log1p(x * x) + self.b * x * y - 0.5 * self.mu * y * y
        return np.sum(per + self.zeta * np.sin(self.omega * x + batch.phase), axis=-1)

    def phi(self, x: np.ndarray) -> np.ndarray:
        """Phi(x) = max_y f = sum_k [-alpha log(1+x_k^2) + c/2 x_k^2] (b^2/mu = c: no mu)."""
        return np.sum(-self.alpha * np.log1p(x * x) + 0.5 * self.c * x * x, axis=-1)

    def phi_grad(self, x: np.ndarray) -> np.ndarray:
        return -2 * self.alpha * x / (1 + x * x) + self.c * x

    @property
    def phi_star(self) -> float:
        if 2 * self.alpha > self.c:
            per = -self.alpha * np.log(2 * self.alpha / self.c) + self.alpha - self.c / 2
        else:
            per = 0.0
        return float(self.dim_x * per)

    def measures(self, point):
        x, y = point["x"], point["y"]
        out = self.stationarity(x, y)
        kappa = self.l / self.mu
        # Theorem 3.1's S: ||grad_x f||^2 + kappa ||grad_y f||^2
        out["stat_kappa"] = out["grad_x_sq"] + kappa * out["grad_y_sq"]
        g = self.phi_grad(x)
        out["phi_grad_sq"] = np.einsum("ri,ri->r", g, g)
        out["phi_gap"] = self.phi(x) - self.phi_star
        return out

    def potential_gap(self) -> float:
        """Delta = V0 - Phi* with V = f_hat - 2 Psi + 2 P at z0 = x0, p = 2l (spec §1.5, §6.2).

        Separable strongly convex 1-D inner minimizations (p - l_global > 0), solved to 1e-12.
        """
        x0, y0, l = self.x0, self.y0, self.l  # p/2 ||x - z||^2 = l ||x - z||^2 with p = 2l

        f0 = float(self.value_f(x0, y0))
        psi = sum(
            _min_1d(lambda s, yk=yk, zk=zk: -self.alpha * np.log1p(s * s) + self.b * s * yk + l * (s - zk) ** 2)
            for yk, zk in zip(y0, x0)
        ) - 0.5 * self.mu * float(y0 @ y0)
        P = sum(
            _min_1d(lambda s, zk=zk: -self.alpha * np.log1p(s * s) + 0.5 * self.c * s * s + l * (s - zk) ** 2)
            for zk in x0
        )
        return f0 - 2 * psi + 2 * P - self.phi_star

    def value_f(self, x: np.ndarray, y: np.ndarray) -> float:
        """The global f(x, y) (heterogeneity sums to zero)."""
        return float(np.sum(-self.alpha * np.log1p(x * x) + self.b * x * y - 0.5 * self.mu * y * y))

    def constants(self) -> dict[str, Constant]:
        return {
            "l": Constant(self.l, "max over d_xx in {-2 alpha, alpha/4} of ||[[d_xx, b], [b, -mu]]||_2 (convex in d_xx) + zeta omega^2"),
            "mu": Constant(self.mu, "f(x, .) is mu-strongly concave, hence mu-PL"),
            "kappa": Constant(self.l / self.mu, "l / mu"),
            "sigma_G": _sin_sigma_g(self.zeta, self.omega, self.dim_x),
            "Delta": Constant(self.potential_gap(), "V0 - Phi* (z0 = x0, p = 2l), 1-D minimizations"),
            "Phi_star": Constant(self.phi_star, "d (alpha - c/2 - alpha log(2 alpha/c)) at x_k^2 = 2 alpha/c - 1"),
            **self.heterogeneity_constants(),
        }


@declare(dim=DIM, mu=Param.real("strong concavity mu in y", positive=True),
         alpha=Param.real("weight alpha of -log(1+x^2)", positive=True),
         c=Param.real("coupling constant c (b = sqrt(c mu))", positive=True), **SHARED)
def make_ncpl(
    dim: int = 1,
    mu: float = 1.0,
    alpha: float = 1.0,
    c: float = 1.0,
    clients: int = 1,
    zeta: float = 0.0,
    omega: float = 1.0,
    noise: float = 0.0,
    x0: Any = 0.3,
    y0: Any = 0.0,
) -> NCPLLog:
    """Spec §6.2 (b). With alpha = c = 1, Phi = sum [-log(1+x^2) + x^2/2] for every mu; l(mu=1) = 2.618."""
    params = {"kind": "ncpl", **locals()}
    # every value is checked by its declaration (@declare above); only cross-parameter rules remain here
    shared = _shared_fields(params, dim, dim)
    if np.any(shared["x0"] == 0):
        # x = 0 is an exact stationary point (a local max of Phi): the run would never move
        raise ValueError(f"x0 must have no zero coordinate (x_k = 0 is a stationary saddle), got {x0!r}")
    return NCPLLog(alpha=float(alpha), c=float(c), mu=float(mu), **shared)
