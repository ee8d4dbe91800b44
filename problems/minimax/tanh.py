"""(d) Nonconvex-concave tanh coupling on a box, spec fessgda §6.5 (Theorems 3.2 and 3.3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ratecheck.assumptions import DIST0
from ratecheck.model.projections import project_box
from ratecheck.params import Param, declare
from ratecheck.problem import Constant

from .base import DIM, MOREAU, SHARED, MinimaxProblem, _shared_fields, _sin_sigma_g


@dataclass(frozen=True, eq=False)
class TanhBox(MinimaxProblem):
    """f_i = sum_k [lam/2 x_k^2 - alpha log(1+x_k^2) + y_k tanh(b x_k) + zeta sin(omega x_k + theta_i)]
    on Y = [-R, R]^d: linear (concave, not strongly) in y, nonconvex in x, Phi nonsmooth at 0.

    ``reg_eps`` > 0 gives the regularized clients of Theorem 3.3 (spec §2.4(A), pitfall P18):
    f~_i = f_i - reg_eps/(4 D(Y)) ||y - y0||^2 for every client; measures stay those of the ORIGINAL f.
    """

    y_set: ClassVar[str] = "box"

    lam: float
    alpha: float
    b: float
    R: float
    reg_eps: float
    moreau: bool  # compute the Moreau measure every round (a 40-step bisection: the costly measure)
    # derived in __post_init__ (not parameters)
    D_Y: float = field(init=False, repr=False, compare=False)
    reg: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        d = self.x0.shape[0]
        self._init_common(self.spec_params["clients"], d, d)
        self._check_y0(self.y0)
        object.__setattr__(self, "D_Y", float(2 * self.R * np.sqrt(d)))
        if self.reg_eps and self.reg_eps > 2 * self._smoothness() * self.D_Y:
            raise ValueError(f"reg_eps must satisfy eps <= 2 l D(Y) (Theorem 3.3), got {self.reg_eps}")
        reg = self.reg_eps / (2 * self.D_Y)  # strong concavity of the regularized f~ (mu~ = eps/(2 D(Y)))
        object.__setattr__(self, "reg", float(reg))
        object.__setattr__(self, "l", self._smoothness() + reg)

    def project_y(self, y):
        return project_box(y, -self.R, self.R)

    def _phi_parts(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        smooth_grad = self.lam * x - 2 * self.alpha * x / (1 + x * x)
        sech2 = 1.0 / np.cosh(self.b * x) ** 2
        return smooth_grad, sech2

    def local_grads(self, batch, x, y):
        smooth_grad, sech2 = self._phi_parts(x)
        gx = smooth_grad + self.b * y * sech2
        if self.zeta:
            gx = gx + self.sin_grad(x, batch.phase)
        gy = np.tanh(self.b * x)
        if self.reg:
            gy = gy - self.reg * (y - self.y0)
        return gx, gy

    def grads(self, x, y):
        smooth_grad, sech2 = self._phi_parts(x)
        return smooth_grad + self.b * y * sech2, np.tanh(self.b * x)

    def local_values(self, batch, x, y):
        per = 0.5 * self.lam * x * x - self.alpha * np.log1p(x * x) + y * np.tanh(self.b * x)
        per = per + self.zeta * np.sin(self.omega * x + batch.phase)
        return per.sum(axis=-1) - 0.5 * self.reg * np.sum((y - self.y0) ** 2, axis=-1)

    def phi(self, x: np.ndarray) -> np.ndarray:
        """Phi(x) = sum_k [lam/2 x^2 - alpha log(1+x^2) + R |tanh(b x)|], Phi* = 0 at x = 0."""
        return np.sum(0.5 * self.lam * x * x - self.alpha * np.log1p(x * x) + self.R * np.abs(np.tanh(self.b * x)), axis=-1)

    def prox(self, x: np.ndarray, iterations: int = 40) -> np.ndarray:
        """argmin_u Phi(u) + l ||u - x||^2 (Def 2.4 with lambda = 1/(2l), pitfall P13), separable.

        Each 1-D problem is strongly convex (Phi is l-weakly convex); its subgradient is monotone with a
        jump [-R b, R b] at 0, so u = 0 when |2 l x| <= R b, else bisection on the side of x.
        """
        l = self.l

        def sub(u: np.ndarray, side: np.ndarray) -> np.ndarray:
            smooth, sech2 = self._phi_parts(u)
            return smooth + side * self.R * self.b * sech2 + 2 * l * (u - x)

        side = np.sign(x)
        lo, hi = np.zeros_like(x), x.copy()  # the root lies between 0 and x (subgradient at x has x's sign)
        for _ in range(iterations):  # 40 halvings: |u - u*| <= 2^-40 |x|
            mid = 0.5 * (lo + hi)
            pos = sub(mid, side) * side > 0
            hi = np.where(pos, mid, hi)
            lo = np.where(pos, lo, mid)
        u = 0.5 * (lo + hi)
        return np.where(np.abs(2 * l * x) <= self.R * self.b, 0.0, u)

    def measures(self, point):
        x, y = point["x"], point["y"]
        out = self.stationarity(x, y)
        if self.moreau:
            diff = x - self.prox(x)
            out["moreau_sq"] = 4 * self.l**2 * np.einsum("ri,ri->r", diff, diff)
        out["phi_gap"] = self.phi(x)
        return out

    def _smoothness(self) -> float:
        """sup over s and |y| <= R of ||[[phi''(s) + y tanh''(b s) b^2, b sech^2(b s)], [b sech^2(b s), 0]]||_2
        on a fine grid of s (the norm is convex in y, so y = +-R suffice), + zeta omega^2."""
        s = np.linspace(-8, 8, 16001) / max(self.b, 1e-12)
        sech2 = 1.0 / np.cosh(self.b * s) ** 2
        d2 = self.lam - 2 * self.alpha * (1 - s * s) / (1 + s * s) ** 2
        t2 = -2 * self.b**2 * sech2 * np.tanh(self.b * s)
        best = 0.0
        for yv in (-self.R, self.R):
            a, c = d2 + yv * t2, self.b * sech2
            norm = np.abs(a) / 2 + np.sqrt((a / 2) ** 2 + c * c)  # max |eig| of [[a, c], [c, 0]]
            best = max(best, float(norm.max()))
        return best + self.zeta * self.omega**2

    def constants(self) -> dict[str, Constant]:
        return {
            DIST0: Constant(float(np.sum(self.x0**2)), "||x0 - x*||^2, x* = 0 the unique stationary point of Phi"),
            "l": Constant(self.l, "sup of the 2x2 block Hessian norm on a grid of s, y = +-R, + zeta omega^2 (+ eps/(2D) if regularized)"),
            "D_Y": Constant(self.D_Y, "2 R sqrt(d)"),
            "G_y": Constant(float(np.sqrt(self.dim_x)), "sup ||tanh(b x)|| = sqrt(d) (Assumption 3.3 on all of X)"),
            "sigma_G": _sin_sigma_g(self.zeta, self.omega, self.dim_x),
            "Phi_star": Constant(0.0, "Phi(0) = 0, unique stationary point of Phi (spec §6.5)"),
            "Delta": Constant(float(self.phi(self.x0)), "Phi(x0) - Phi* (upper bound of V0 - Phi* up to the y-gap; see spec §1.5)"),
            **self.heterogeneity_constants(),
        }


@declare(dim=DIM, lam=Param.real("quadratic weight lam", low=0.0), alpha=Param.real("weight alpha of -log(1+x^2)", low=0.0),
         b=Param.real("slope b inside tanh(b x)", positive=True), R=Param.real("half-width R of the box Y", positive=True),
         reg_eps=Param.real("Theorem 3.3's regularization eps (0: none)", low=0.0), moreau=MOREAU, **SHARED)
def make_tanh(
    dim: int = 1,
    lam: float = 1.0,
    alpha: float = 1.0,
    b: float = 1.0,
    R: float = 1.0,
    reg_eps: float = 0.0,
    moreau: bool = True,
    clients: int = 1,
    zeta: float = 0.0,
    omega: float = 1.0,
    noise: float = 0.0,
    x0: Any = 2.0,
    y0: Any = 0.0,
) -> TanhBox:
    """Spec §6.5 (d): l = 1.742 for (lam, alpha, b, R) = (1, 1, 1, 1)."""
    params = {"kind": "tanh", **locals()}
    # every value is checked by its declaration (@declare above); only cross-parameter rules remain here
    return TanhBox(lam=float(lam), alpha=float(alpha), b=float(b), R=float(R), reg_eps=float(reg_eps), moreau=bool(moreau),
                   **_shared_fields(params, dim, dim))
