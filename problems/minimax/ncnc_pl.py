"""(a3) Nonconvex-nonconcave two-sided PL (Yang et al. 2020 example), spec fessgda §6.1 (a3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ratecheck.assumptions import DIST0
from ratecheck.params import declare
from ratecheck.problem import Constant

from .base import DIM, SHARED, MinimaxProblem, _shared_fields


@dataclass(frozen=True, eq=False)
class TwoSidedPLSine(MinimaxProblem):
    """f_i = sum_k [x^2 + 3 sin^2 x sin^2 y - 4 y^2 - 10 sin^2 y + zeta (sin(omega x + theta_i) + sin(omega y + theta_i + pi/3))]
    (separable over d coordinates; d = 1 is the spec's example). Nonconvex in x, nonconcave in y, two-sided PL.

    Closed forms (per coordinate): x^2 + 3 s sin^2 x >= 0 = value at x = 0 (s = sin^2 y), so
    min_x f = Psi0(y) = -4 y^2 - 10 sin^2 y; and -4 y^2 - (10 - 3 sin^2 x) sin^2 y <= 0 = value at y = 0, so
    Phi(x) = x^2, y*(x) = 0, Phi* = 0, unique saddle (0, 0). PL constants are grid infima of the PL ratios
    (exact formulas for f - min_x f and max_y f - f), the smoothness is the grid sup of the Hessian norm
    over one period of the sines (the quadratic parts have constant Hessian).
    """

    PL_GRID: ClassVar[tuple[float, int]] = (6.0, 1200)  # [-6, 6]^2 with 1200^2 points (no point on the axes)
    # derived in __post_init__ (not parameters)
    mu1: float = field(init=False, repr=False, compare=False)
    mu2: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        d = self.x0.shape[0]
        self._init_common(self.spec_params["clients"], d, d)
        half, n = self.PL_GRID
        g = np.linspace(-half, half, n)
        mu1, mu2 = self.pl_ratios(*np.meshgrid(g, g, indexing="ij"))
        object.__setattr__(self, "mu1", float(mu1.min()))
        object.__setattr__(self, "mu2", float(mu2.min()))
        h = np.linspace(0, np.pi, 1001)
        object.__setattr__(self, "l", float(self.hessian_norms(*np.meshgrid(h, h, indexing="ij")).max())
                           + self.zeta * self.omega**2)

    @staticmethod
    def pl_ratios(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """||grad_x f||^2 / (2 (f - min_x f)) and ||grad_y f||^2 / (2 (max_y f - f)), one coordinate."""
        sx, sy = np.sin(x) ** 2, np.sin(y) ** 2
        gx = 2 * x + 3 * np.sin(2 * x) * sy
        gy = 3 * sx * np.sin(2 * y) - 8 * y - 10 * np.sin(2 * y)
        return gx**2 / (2 * (x * x + 3 * sx * sy)), gy**2 / (2 * (4 * y * y + (10 - 3 * sx) * sy))

    @staticmethod
    def hessian_norms(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        fxx = 2 + 6 * np.cos(2 * x) * np.sin(y) ** 2
        fyy = 6 * np.sin(x) ** 2 * np.cos(2 * y) - 8 - 20 * np.cos(2 * y)
        fxy = 3 * np.sin(2 * x) * np.sin(2 * y)
        centre, radius = (fxx + fyy) / 2, np.sqrt(((fxx - fyy) / 2) ** 2 + fxy**2)
        return np.maximum(np.abs(centre + radius), np.abs(centre - radius))

    def grads(self, x, y):
        sx, sy = np.sin(x) ** 2, np.sin(y) ** 2
        return 2 * x + 3 * np.sin(2 * x) * sy, 3 * sx * np.sin(2 * y) - 8 * y - 10 * np.sin(2 * y)

    def local_grads(self, batch, x, y):
        gx, gy = self.grads(x, y)
        if self.zeta:
            gx = gx + self.sin_grad(x, batch.phase)
            gy = gy + self.sin_grad(y, batch.phase + np.pi / 3)
        return gx, gy

    def value(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The global f at (..., d) points."""
        return np.sum(x * x + 3 * np.sin(x) ** 2 * np.sin(y) ** 2 - 4 * y * y - 10 * np.sin(y) ** 2, axis=-1)

    def local_values(self, batch, x, y):
        het = np.sin(self.omega * x + batch.phase) + np.sin(self.omega * y + batch.phase + np.pi / 3)
        return self.value(x, y) + self.zeta * het.sum(axis=-1)

    def potential(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """W = 2 Phi(x) - f - Phi* with Phi = ||x||^2 (Appendix I)."""
        return 2 * np.sum(x * x, axis=-1) - self.value(x, y)

    def potential_swapped(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """W' = (Phi* - Psi0(y)) + (f - Psi0(y)), Psi0(y) = min_x f = sum -4 y^2 - 10 sin^2 y (spec §2.4(C))."""
        psi0 = np.sum(-4 * y * y - 10 * np.sin(y) ** 2, axis=-1)
        return self.value(x, y) - 2 * psi0

    def measures(self, point):
        x, y = point["x"], point["y"]
        out = self.stationarity(x, y)
        out["W"] = self.potential(x, y)
        out["W_swap"] = self.potential_swapped(x, y)
        out["dist_sq"] = np.einsum("ri,ri->r", x, x) + np.einsum("ri,ri->r", y, y)
        return out

    def constants(self) -> dict[str, Constant]:
        half, n = self.PL_GRID
        grid = f"grid inf over [-{half:g}, {half:g}]^2 ({n}^2 points; ratio -> 2 as |x| -> oo, resp. 8 as |y| -> oo)"
        return {
            DIST0: Constant(float(np.sum(self.x0**2)), "||x0 - x*||^2, x* = 0 (the unique saddle (0, 0))"),
            "l": Constant(self.l, "sup of the 2x2 Hessian norm on a 1001^2 grid of one period [0, pi]^2 (+ zeta omega^2)"),
            "mu1": Constant(self.mu1, f"PL in x: ||grad_x f||^2 / (2 (f - min_x f)), {grid}"),
            "mu2": Constant(self.mu2, f"PL in y: ||grad_y f||^2 / (2 (max_y f - f)), {grid}"),
            "kappa1": Constant(self.l / self.mu1, "l / mu1"),
            "kappa2": Constant(self.l / self.mu2, "l / mu2"),
            "sigma_G": Constant(self.zeta * self.omega * np.sqrt(2 * self.dim_x),
                                "sup ||zeta omega (cos(omega x + theta_i), cos(omega y + theta_i + pi/3))|| (attained)"),
            "W0": Constant(float(self.potential(self.x0, self.y0)), "W(x0, y0) = 2 ||x0||^2 - f(x0, y0)"),
            "W0_swap": Constant(float(self.potential_swapped(self.x0, self.y0)), "W'(x0, y0) of the swapped roles"),
            **self.heterogeneity_constants(),
        }


@declare(dim=DIM, **SHARED)
def make_ncnc_pl(
    dim: int = 1,
    clients: int = 1,
    zeta: float = 0.0,
    omega: float = 1.0,
    noise: float = 0.0,
    x0: Any = 1.0,
    y0: Any = 1.0,
) -> TwoSidedPLSine:
    """Spec §6.1 (a3): l = 28, mu1 = 0.176, mu2 = 1.26 (mu1 < mu2: Theorem 3.5 needs the role swap)."""
    params = {"kind": "ncnc_pl", **locals()}  # every value is checked by its declaration (@declare above)
    return TwoSidedPLSine(**_shared_fields(params, dim, dim))
