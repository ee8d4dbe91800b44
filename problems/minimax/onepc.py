"""(e) Nonconvex-one-point-concave (not concave) on a box, spec fessgda §6.6 (Theorem 3.2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ratecheck.model.projections import project_box
from ratecheck.params import Param, declare
from ratecheck.problem import Constant

from .base import DIM, MOREAU, SHARED, MinimaxProblem, _min_1d, _shared_fields, _sin_sigma_g


@dataclass(frozen=True, eq=False)
class OnePointConcave(MinimaxProblem):
    """f_i = sum_k [lam/2 x_k^2 - alpha log(1+x_k^2) - q(y_k - tanh x_k)
    + zeta (sin(omega x_k + theta_i) + sin(omega y_k + theta_i))], q(u) = u^2 + a sin^2 u, Y = [-R, R]^d.

    q is nonconvex for a > 1 and star-convex around 0 (u q'(u) >= q(u)) for a <= 1.7048, so the global f
    is one-point-concave in y with y*(x) = tanh x (Assumption 3.4) but not concave; the y-sinusoid makes
    the individual clients NOT one-point-concave around a common y* (the paper's weaker assumption).
    Phi(x) = sum_k [lam/2 x^2 - alpha log(1+x^2)] is smooth: ||grad Phi|| and the Moreau measure both exist.
    """

    y_set: ClassVar[str] = "box"
    a_star: ClassVar[float] = 1.7048  # largest a with u q'(u) >= q(u) for all u (spec §6.6)

    lam: float
    alpha: float
    a: float
    R: float
    moreau: bool
    # derived in __post_init__ (not parameters)
    D_Y: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        d = self.x0.shape[0]
        self._init_common(self.spec_params["clients"], d, d)
        self._check_y0(self.y0)
        object.__setattr__(self, "D_Y", float(2 * self.R * np.sqrt(d)))
        object.__setattr__(self, "l", self._smoothness())

    def project_y(self, y):
        return project_box(y, -self.R, self.R)

    def q_grad(self, u: np.ndarray) -> np.ndarray:
        return 2 * u + self.a * np.sin(2 * u)

    def phi_grad(self, x: np.ndarray) -> np.ndarray:
        return self.lam * x - 2 * self.alpha * x / (1 + x * x)

    def phi(self, x: np.ndarray) -> np.ndarray:
        return np.sum(0.5 * self.lam * x * x - self.alpha * np.log1p(x * x), axis=-1)

    def grads(self, x, y):
        t = np.tanh(x)
        qg = self.q_grad(y - t)
        return self.phi_grad(x) + qg * (1 - t * t), -qg

    def local_grads(self, batch, x, y):
        gx, gy = self.grads(x, y)
        if self.zeta:
            gx = gx + self.sin_grad(x, batch.phase)
            gy = gy + self.sin_grad(y, batch.phase)
        return gx, gy

    def local_values(self, batch, x, y):
        u = y - np.tanh(x)
        per = 0.5 * self.lam * x * x - self.alpha * np.log1p(x * x) - (u * u + self.a * np.sin(u) ** 2)
        per = per + self.zeta * (np.sin(self.omega * x + batch.phase) + np.sin(self.omega * y + batch.phase))
        return per.sum(axis=-1)

    @property
    def phi_star(self) -> float:
        if 2 * self.alpha > self.lam:  # minima at x^2 = 2 alpha/lam - 1
            s2 = 2 * self.alpha / self.lam - 1
            return float(self.dim_x * (0.5 * self.lam * s2 - self.alpha * np.log1p(s2)))
        return 0.0

    def prox(self, x: np.ndarray, iterations: int = 8) -> np.ndarray:
        """argmin_u Phi(u) + l ||u - x||^2 (Def 2.4, lambda = 1/(2l)), separable. Phi'' lies in
        [lam - 2 alpha, lam + alpha/4], so g(u) = Phi'(u) + 2l(u - x) has g' in [2l + lam - 2 alpha,
        2l + lam + alpha/4] (a ratio close to 1 for l >> alpha): Newton from u = x contracts at every
        step and 8 steps reach machine precision (checked against a scalar minimizer in the tests)."""
        u = x.copy()
        for _ in range(iterations):
            u2 = u * u
            curv = self.lam - 2 * self.alpha * (1 - u2) / (1 + u2) ** 2 + 2 * self.l
            u = u - (self.phi_grad(u) + 2 * self.l * (u - x)) / curv
        return u

    def measures(self, point):
        x, y = point["x"], point["y"]
        out = self.stationarity(x, y)
        g = self.phi_grad(x)
        out["phi_grad_sq"] = np.einsum("ri,ri->r", g, g)
        out["phi_gap"] = self.phi(x) - self.phi_star
        if self.moreau:
            diff = x - self.prox(x)
            out["moreau_sq"] = 4 * self.l**2 * np.einsum("ri,ri->r", diff, diff)
        return out

    def _hessian_norms(self, s: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Spectral norms of the per-coordinate 2x2 Hessian of f at x = s, y = u + tanh s."""
        t = np.tanh(s)
        sech2 = 1 - t * t
        q1, q2 = self.q_grad(u), 2 + 2 * self.a * np.cos(2 * u)
        fxx = self.lam - 2 * self.alpha * (1 - s * s) / (1 + s * s) ** 2 - q2 * sech2**2 - 2 * q1 * sech2 * t
        fxy, fyy = q2 * sech2, -q2
        centre, radius = (fxx + fyy) / 2, np.sqrt(((fxx - fyy) / 2) ** 2 + fxy**2)
        return np.maximum(np.abs(centre + radius), np.abs(centre - radius))

    def _smoothness(self) -> float:
        """sup of the 2x2 Hessian norm over x in [-8, 8] (sech^2 < 5e-7 beyond) and y in [-R, R], on a
        801 x 801 grid, + zeta omega^2 for the client sinusoids (pitfall P7)."""
        s = np.linspace(-8, 8, 801)[:, None]
        y = np.linspace(-self.R, self.R, 801)[None, :]
        return float(self._hessian_norms(s, y - np.tanh(s)).max()) + self.zeta * self.omega**2

    def potential_gap(self) -> float:
        """Delta = V0 - Phi* with V = f_hat - 2 Psi + 2 P at z0 = x0, p = 2l (spec §1.5): separable
        1-D minimizations over x (strongly convex: f + l (x - z)^2 has x-curvature >= l)."""
        l = self.l

        def fk(s: float, yk: float) -> float:
            u = yk - np.tanh(s)
            return 0.5 * self.lam * s * s - self.alpha * np.log1p(s * s) - (u * u + self.a * np.sin(u) ** 2)

        f0 = sum(fk(s, yk) for s, yk in zip(self.x0, self.y0))
        psi = sum(_min_1d(lambda s, yk=yk, zk=zk: fk(s, yk) + l * (s - zk) ** 2) for yk, zk in zip(self.y0, self.x0))
        P = sum(_min_1d(lambda s, zk=zk: float(self.phi(np.array([s]))) + l * (s - zk) ** 2) for zk in self.x0)
        return float(f0 - 2 * psi + 2 * P - self.phi_star)

    def constants(self) -> dict[str, Constant]:
        u = np.linspace(-self.R - 1, self.R + 1, 20001)
        g_y = float(np.abs(self.q_grad(u)).max()) + self.zeta * self.omega
        return {
            "l": Constant(self.l, "sup of the 2x2 block Hessian norm on a grid of x in [-8, 8], y in [-R, R], + zeta omega^2"),
            "D_Y": Constant(self.D_Y, "2 R sqrt(d)"),
            "G_y": Constant(g_y * np.sqrt(self.dim_y), "sqrt(d) max_{|u| <= R+1} |q'(u)| (grid) + zeta omega: sup ||grad_y f_i||"),
            "sigma_G": _sin_sigma_g(self.zeta, self.omega, self.dim_x + self.dim_y),
            "Phi_star": Constant(self.phi_star, "d (lam s^2/2 - alpha log(1+s^2)) at s^2 = 2 alpha/lam - 1"),
            "Delta": Constant(self.potential_gap(), "V0 - Phi* (z0 = x0, p = 2l), 1-D minimizations"),
            **self.heterogeneity_constants(),
        }


@declare(dim=DIM, lam=Param.real("quadratic weight lam", positive=True), alpha=Param.real("weight alpha of -log(1+x^2)", low=0.0),
         a=Param.real("weight a of sin^2 in q (star-convex for a <= 1.7048)", low=0.0),
         R=Param.real("half-width R of the box Y (>= 1)", low=1.0), moreau=MOREAU, **SHARED)
def make_onepc(
    dim: int = 1,
    lam: float = 1.0,
    alpha: float = 1.0,
    a: float = 1.5,
    R: float = 2.0,
    moreau: bool = True,
    clients: int = 1,
    zeta: float = 0.0,
    omega: float = 1.0,
    noise: float = 0.0,
    x0: Any = 2.0,
    y0: Any = 0.0,
) -> OnePointConcave:
    """Spec §6.6 (e): l = 10.52 for (lam, alpha, a, R) = (1, 1, 1.5, 2)."""
    params = {"kind": "onepc", **locals()}
    # every value is checked by its declaration (@declare above); only cross-parameter rules remain here
    if a > OnePointConcave.a_star:
        raise ValueError(f"a must be <= {OnePointConcave.a_star} (q star-convex: Assumption 3.4), got a={a}")
    return OnePointConcave(lam=float(lam), alpha=float(alpha), a=float(a), R=float(R), moreau=bool(moreau),
                           **_shared_fields(params, dim, dim))
