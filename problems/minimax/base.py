"""Shared machinery of the minimax kinds: the base problem, the batch, the declarations every kind
shares (ratecheck.params) and the size rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ratecheck.assumptions import (
    DIST0,
    MINIMAX,
    Assumption,
    bounded_domain,
    bounded_gradient,
    bounded_variance,
    heterogeneity,
    initial_distance,
    initial_gap,
    other,
    pl,
    smooth,
    structure,
    two_sided_pl,
)
from ratecheck.params import Param, ParamError
from ratecheck.problem import Constant, Problem
from ratecheck.seeding import ReplicaStream

Y_SETS = ("free", "box", "simplex")

# -- parameter declarations shared by the kinds (ratecheck.params) -----------------------------------
MAX_CLIENTS = 10**6
MAX_DIM = 10**5
MAX_ENTRIES = 10**8  # clients x dim of the per-client arrays an instance builds (800 MB of float64)
CLIENTS = Param.int("number of clients M", low=1, high=MAX_CLIENTS)
DIM = Param.int("dimension d of x and of y", low=1, high=MAX_DIM)
ZETA = Param.real("heterogeneity amplitude zeta (0: identical clients)", low=0.0)
OMEGA = Param.real("frequency omega of the sinusoidal heterogeneity", positive=True)
NOISE = Param.real("per-coordinate standard deviation s of the gradient noise (0: exact gradients)", low=0.0)
X0 = Param.vector("start x0: one number for every coordinate, or a list of length d1", max_length=MAX_DIM)
Y0 = Param.vector("start y0 (must lie in Y): one number for every coordinate, or a list of length d2",
                  max_length=MAX_DIM)
SEED = Param.int("seed of the instance construction (not of the runs)", low=0, high=2**63 - 1)
MOREAU = Param.bool("measure Moreau-envelope stationarity of Phi (else the Def 2.1 measure)")
SHARED = {"clients": CLIENTS, "zeta": ZETA, "omega": OMEGA, "noise": NOISE, "x0": X0, "y0": Y0}


MAX_QUADRATIC_DIM = 1000  # dense (2d x 2d) matrices and a Lyapunov solve per instance


def _check_quadratic_size(kind: str, clients: int, d: int) -> None:
    """The quadratic kinds build dense (2d x 2d) matrices per client (rule: d <= 1000, M (2d)^2 <= 1e8)."""
    if d > MAX_QUADRATIC_DIM:
        raise ParamError(kind, "dim", d, f"the quadratic kinds solve dense (2d x 2d) systems: d must be <= {MAX_QUADRATIC_DIM}")
    _check_entries(kind, clients, (2 * d) ** 2)


def _check_entries(kind: str, clients: int, width: int) -> None:
    """Refuse instances whose per-client arrays cannot be built (rule: clients x width <= MAX_ENTRIES)."""
    if clients * width > MAX_ENTRIES:
        raise ParamError(kind, "clients x dim", f"{clients} x {width}",
                         f"the instance stores {clients * width:.3g} numbers per client array; the limit is "
                         f"{MAX_ENTRIES:.0e} (rule: clients x dim <= {MAX_ENTRIES:.0e})")


@dataclass(frozen=True, eq=False)
class MinimaxBatch:
    """The active clients' data, gathered once per round."""

    clients: np.ndarray  # (R, m)
    phase: np.ndarray  # (R, m, 1): theta_i = 2 pi i / M of the sinusoidal heterogeneity
    offsets: np.ndarray | None = None  # (R, m, d1 + d2) linear heterogeneity (b_i, c_i)
    curvature: np.ndarray | None = None  # (R, m, d1) client deviations of diag(A_i) from diag(A)


@dataclass(frozen=True, eq=False)
class MinimaxProblem(Problem):
    """Base of the minimax families: noise model, projection onto Y, Def 2.1 stationarity."""

    family: ClassVar[str] = "minimax"
    assumptions: ClassVar[tuple[Assumption, ...]] = MINIMAX.assume(
        smooth("l"), bounded_variance("sigma"), heterogeneity("sigma_G"), structure("M"),
        pl("mu", "kappa"), two_sided_pl("mu1", "mu2", "kappa1", "kappa2"),
        initial_gap("Delta", "Phi_star", "W0", "W0_swap"), bounded_domain("D_Y"), bounded_gradient("G_y"),
        other("c0", text="strict complementarity margin c0 (spec fessgda §6)"), initial_distance(DIST0))
    y_set: ClassVar[str] = "free"

    x0: np.ndarray
    y0: np.ndarray
    noise: float  # s: per-coordinate standard deviation of the additive gradient noise
    zeta: float  # sinusoidal heterogeneity amplitude
    omega: float
    spec_params: Mapping[str, Any]

    # -- shared machinery --------------------------------------------------------------------
    # derived in __post_init__ (not parameters)
    dim_x: int = field(init=False, repr=False, compare=False)
    dim_y: int = field(init=False, repr=False, compare=False)
    l: float = field(init=False, repr=False, compare=False)
    def _init_common(self, clients: int, dim_x: int, dim_y: int) -> None:
        # a direct construction is checked by the same declarations the factories use
        for name, param, value in (("clients", CLIENTS, clients), ("noise", NOISE, self.noise),
                                   ("zeta", ZETA, self.zeta), ("omega", OMEGA, self.omega)):
            param.check(name, value, self.family)
        if self.zeta > 0 and clients < 2:
            raise ValueError(
                f"zeta={self.zeta} > 0 needs clients >= 2: sum_i sin(u + 2 pi i/M) = 0 only for M >= 2"
            )
        object.__setattr__(self, "num_clients", int(clients))
        object.__setattr__(self, "dim_x", int(dim_x))
        object.__setattr__(self, "dim_y", int(dim_y))
        object.__setattr__(self, "dim", int(dim_x + dim_y))

    def _check_y0(self, y0: np.ndarray) -> None:
        """Refuse y0 outside Y (documented choice: projecting silently would change the run)."""
        dist = float(np.linalg.norm(self.project_y(y0) - y0))
        if dist > 1e-12:
            raise ValueError(f"y0 must lie in Y ({self.y_set}); got y0={y0.tolist()} at distance {dist:.3g} from Y")

    @property
    def params(self) -> Mapping[str, Any]:
        return self.spec_params

    def project_y(self, y: np.ndarray) -> np.ndarray:
        return y

    def phases(self, clients: np.ndarray) -> np.ndarray:
        return (2.0 * np.pi / self.num_clients) * clients[..., None]

    def gather(self, clients: np.ndarray) -> MinimaxBatch:
        return MinimaxBatch(np.asarray(clients), self.phases(np.asarray(clients)))

    def sin_grad(self, x: np.ndarray, phase: np.ndarray) -> np.ndarray:
        """Gradient of zeta sum_k sin(omega x_k + theta_i): zero mean over clients."""
        return (self.zeta * self.omega) * np.cos(self.omega * x + phase)

    def local_grads(self, batch: MinimaxBatch, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact (grad_x f_i, grad_y f_i) of the active clients at (R, m, d) points."""
        raise NotImplementedError  # pragma: no cover - abstract

    def local_values(self, batch: MinimaxBatch, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """f_i(x, y) of the active clients, (R, m) (for tests against finite differences)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def stochastic_grads(
        self, batch: MinimaxBatch, x: np.ndarray, y: np.ndarray, noise: ReplicaStream
    ) -> tuple[np.ndarray, np.ndarray]:
        """Unbiased (grad_x, grad_y) from ONE sample xi ~ N(0, s^2 I_{d1+d2}) (Algorithm 1 line 6)."""
        gx, gy = self.local_grads(batch, x, y)
        if self.noise != 0.0:
            xi = noise.normal((*x.shape[1:-1], self.dim))
            xi *= self.noise
            gx = gx + xi[..., : self.dim_x]
            gy = gy + xi[..., self.dim_x :]
        return gx, gy

    def grads(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact gradients of the global f at (x, y) of shape (..., d): heterogeneity sums to zero."""
        raise NotImplementedError  # pragma: no cover - abstract

    def y_measure_sq(self, y: np.ndarray, gy: np.ndarray) -> np.ndarray:
        """Def 2.1: l^2 ||P_Y(y + grad_y f / l) - y||^2, projection step exactly 1/l (pitfall P13)."""
        step = self.project_y(y + gy / self.l) - y
        return self.l**2 * np.einsum("...i,...i->...", step, step)

    def stationarity(self, x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
        gx, gy = self.grads(x, y)
        gx_sq = np.einsum("...i,...i->...", gx, gx)
        gy_sq = self.y_measure_sq(y, gy)
        return {"grad_x_sq": gx_sq, "grad_y_sq": gy_sq, "stat_sq": gx_sq + gy_sq}

    def initial_point(self) -> dict[str, np.ndarray]:
        return {"x": self.x0, "y": self.y0}

    def heterogeneity_constants(self) -> dict[str, Constant]:
        s2 = self.noise**2 * self.dim
        return {
            "sigma": Constant(float(np.sqrt(s2)), f"xi ~ N(0, s^2 I_(d1+d2)), s = {self.noise:g}: sigma^2 = s^2 (d1+d2) exactly"),
            "M": Constant(float(self.num_clients), "number of clients"),
        }


def _sin_sigma_g(zeta: float, omega: float, dim: int) -> Constant:
    return Constant(zeta * omega * np.sqrt(dim), "sup_x ||zeta omega cos(omega x + theta_i)|| = zeta omega sqrt(d1) (attained)")


def _min_1d(fun: Any) -> float:
    """min of a strongly convex scalar function on [-50, 50] (the inner problems of V0, spec §1.5)."""
    from scipy.optimize import minimize_scalar  # here, not at import: scipy.optimize slows `ratecheck list` (split-proofs)

    return float(minimize_scalar(fun, bounds=(-50, 50), method="bounded", options={"xatol": 1e-12}).fun)


def _vector(name: str, value: Any, dim: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    arr = np.full(dim, float(arr)) if arr.ndim == 0 else arr
    if arr.shape != (dim,) or not np.isfinite(arr).all():
        raise ValueError(f"{name} must be a finite scalar or a vector of length {dim}, got {value!r}")
    return arr


def _shared_fields(params: dict, dim_x: int, dim_y: int) -> dict[str, Any]:
    """The fields every client-heterogeneous kind shares (start points, noise, sinusoidal drift),
    validated once; also normalizes params["clients"] (M) for the problem's identity."""
    params["clients"] = int(params["clients"])  # validated by the kind's @declare (CLIENTS)
    _check_entries(params["kind"], params["clients"], dim_x + dim_y)
    return {"x0": _vector("x0", params["x0"], dim_x), "y0": _vector("y0", params["y0"], dim_y),
            "noise": float(params["noise"]), "zeta": float(params["zeta"]), "omega": float(params["omega"]),
            "spec_params": params}
