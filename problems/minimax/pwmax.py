"""(c) Point-wise maximum over the simplex, spec fessgda §6.4."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ratecheck.model.projections import project_simplex
from ratecheck.params import Param, declare
from ratecheck.problem import Constant

from .base import SHARED, MinimaxProblem, _shared_fields


@dataclass(frozen=True, eq=False)
class PointwiseMax(MinimaxProblem):
    """f_i(x, y) = sum_j y_j h_j^(i)(x), y in the simplex, h_j = -cos x1 - cos x2 + r <u_j, x> (j <= 3),
    h_4 = -cos x1 - cos x2 - c0 (or h_4 = h_1 with ``duplicate``), client terms
    zeta sum_c sin(omega x_c + 2 pi i/M + j) (spec §6.4, eq. (2) federated as in P17)."""

    family: ClassVar[str] = "minimax"
    y_set: ClassVar[str] = "simplex"

    r: float
    c0: float
    duplicate: bool
    # derived in __post_init__ (not parameters)
    slopes: np.ndarray = field(init=False, repr=False, compare=False)
    shifts: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._init_common(self.spec_params["clients"], 2, 4)
        angles = 2 * np.pi * np.arange(1, 4) / 3
        u = np.stack([np.cos(angles), np.sin(angles)], axis=1)  # (3, 2)
        slopes = np.vstack([self.r * u, self.r * u[:1] if self.duplicate else np.zeros((1, 2))])  # (4, 2)
        shifts = np.array([0.0, 0.0, 0.0, 0.0 if self.duplicate else -self.c0])
        object.__setattr__(self, "slopes", slopes)
        object.__setattr__(self, "shifts", shifts)
        object.__setattr__(self, "l", self._smoothness())
        self._check_y0(self.y0)

    def project_y(self, y):
        return project_simplex(y)

    def components(self, x: np.ndarray) -> np.ndarray:
        """(h_1..h_4)(x) of the global f, shape (..., 4)."""
        common = -np.cos(x).sum(axis=-1, keepdims=True)
        return common + x @ self.slopes.T + self.shifts

    def _het(self, x: np.ndarray, phase: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Client terms: values (..., 4) and the x-gradient weights cos(.) (..., 4, 2)."""
        arg = self.omega * x[..., None, :] + phase[..., None] + np.arange(1, 5)[:, None]  # (..., 4, 2)
        return self.zeta * np.sin(arg).sum(axis=-1), (self.zeta * self.omega) * np.cos(arg)

    def local_grads(self, batch, x, y):
        gy = self.components(x)
        gx = np.sin(x) + y @ self.slopes  # sum_j y_j grad h_j, sum_j y_j = 1
        if self.zeta:
            values, weights = self._het(x, batch.phase)
            gy = gy + values
            gx = gx + np.einsum("...j,...jc->...c", y, weights)
        return gx, gy

    def grads(self, x, y):
        return np.sin(x) * y.sum(axis=-1, keepdims=True) + y @ self.slopes, self.components(x)

    def local_values(self, batch, x, y):
        values = self.components(x) + (self._het(x, batch.phase)[0] if self.zeta else 0.0)
        return np.einsum("...j,...j->...", y, values)

    def measures(self, point):
        x, y = point["x"], point["y"]
        out = self.stationarity(x, y)
        out["phi_gap"] = self.components(x).max(axis=-1) + 2.0  # Phi* = -2 at x* = 0
        out["dist_x_sq"] = np.einsum("ri,ri->r", x, x)
        return out

    def _smoothness(self) -> float:
        """sup_x ||Hessian of f_i||_2 over a grid of one period of (cos, sin), plus the client terms.

        Global Hessian [[diag(cos x), J'], [J, 0]] with rows of J = grad h_j = sin x + slope_j.
        For the linear part the sup over the period is reached on a 64 x 64 grid up to ~0.1%;
        x beyond one period only adds through r <u_j, x>, which has a constant gradient.
        """
        g = np.linspace(0, 2 * np.pi, 65)[:-1]
        X = np.stack(np.meshgrid(g, g, indexing="ij"), axis=-1).reshape(-1, 2)
        H = np.zeros((X.shape[0], 6, 6))
        H[:, 0, 0], H[:, 1, 1] = np.cos(X[:, 0]), np.cos(X[:, 1])
        J = np.sin(X)[:, None, :] + self.slopes[None]  # (G, 4, 2)
        H[:, 2:, :2] = J
        H[:, :2, 2:] = np.swapaxes(J, 1, 2)
        base = float(np.linalg.norm(H, ord=2, axis=(1, 2)).max())
        # client sinusoid: xx block zeta omega^2, cross block zeta omega sqrt(d n) (spec §6.4)
        return base + self.zeta * self.omega**2 + self.zeta * self.omega * np.sqrt(2 * 4)

    def constants(self) -> dict[str, Constant]:
        het = self.zeta**2 * (self.omega**2 * 2 + 2**2 * 4)
        return {
            "l": Constant(self.l, "sup of the Hessian norm on a 64x64 grid of one period, + zeta (omega^2 + omega sqrt(d n))"),
            "D_Y": Constant(float(np.sqrt(2.0)), "diameter of the simplex"),
            "c0": Constant(0.0 if self.duplicate else self.c0, "strict-complementarity margin nu_4 at x* = 0"),
            "sigma_G": Constant(float(np.sqrt(het)), "bound zeta sqrt(omega^2 d + d^2 n) (spec §6.4)"),
            "Phi_star": Constant(-2.0, "Phi(0) = -2, x* = 0 unique for r = 1.5 (spec §6.4)"),
            **self.heterogeneity_constants(),
        }


@declare(r=Param.real("slope r of the linear parts", positive=True),
         c0=Param.real("strict-complementarity margin c0 (0: negative control)", low=0.0),
         duplicate=Param.bool("duplicate component h_4 = h_1 (negative control)"), **SHARED)
def make_pwmax(
    r: float = 1.5,
    c0: float = 0.5,
    duplicate: bool = False,
    clients: int = 1,
    zeta: float = 0.0,
    omega: float = 1.0,
    noise: float = 0.0,
    x0: Any = (1.0, -0.7),
    y0: Any = (0.25, 0.25, 0.25, 0.25),
) -> PointwiseMax:
    """Spec §6.4 (c): c0 > 0 is the strict-complementarity margin; c0 = 0 or duplicate=True are the
    negative controls that violate Assumption 3.6."""
    params = {"kind": "pwmax", **locals()}  # every value is checked by its declaration (@declare above)
    return PointwiseMax(r=float(r), c0=float(c0), duplicate=bool(duplicate), **_shared_fields(params, 2, 4))
