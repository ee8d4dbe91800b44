"""Federated bilevel problems with a quadratic lower level: exact oracles, y*(x), v*(x), hypergradient.

Source: ../shared/seeds/000_66e1ccf0a50396e9.txt (SimFBO, arXiv 2023), eq. (1)-(3); test problems of
../shared/spec/simfbo.md §6.1-6.3 (its instances P1-P3: ratecheck.proofs.simfbo.presets). This is the
package's one federated bilevel family (FedBiO reuses it).

Client i (weights p_i, sum 1) holds

    g_i(x, y) = 1/2 y^T A_i y - y^T (B x + c_i)                        (mu_g-strongly convex in y)
    f_i(x, y) = U(y; e_i) + lam/2 ||x - s_i||^2 + h_i^T x

with the upper-level shape U chosen by ``upper``:

* ``quadratic`` (P1): U = 1/2 ||y - e_i||^2, everything in closed form;
* ``pseudo_huber`` (P2): U = sum_j phi_delta(y_j - e_ij), globally Lipschitz, so r = L_f/mu_g is a
  valid radius for v and the projection P_r matters;
* ``nonconvex`` (P3): U = sum_j psi(y_j) + e_i^T y with psi(z) = z^2/(1+z^2); the p-weighted c, e, h
  vanish, so the unique stationary point is x* = 0.

Heterogeneity is centred (sum_i p_i delta_i = 0, spec §6 conventions), so the p-weighted problem does
not change with n or zeta. Every closed form takes client weights omega: omega = p gives Phi and x*,
omega = w (SimFBO's reweighting, eq. (6)) gives Phi-tilde and x-tilde* (spec §1.5).

Noise: N1 additive Gaussian on grad f (E||.||^2 = sigma_f^2 over the (x, y) blocks) and grad_y g
(sigma_g^2); N2 Hessian noise A_i + sigma_h diag(Rademacher) in the Hessian-vector product, which keeps
the sampled Hessians >= (mu_g - sigma_h) I (spec §6.1); N3 finite sums (P1 only): client i holds K rows
whose c, e, s are the client's plus p-free centred row deviations, and each oracle call averages a
mini-batch of b rows drawn uniformly without replacement (its own batch for zeta, psi, xi), so the
variance is exactly (K-b)/(b(K-1)) (1/K) sum_k ||dev_ik||^2 (sigma_f, sigma_g report the max over i).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ratecheck.assumptions import (
    BILEVEL,
    DIST0,
    Assumption,
    bounded_domain,
    bounded_variance,
    heterogeneity,
    initial_distance,
    initial_gap,
    smooth,
    strongly_convex,
)
from ratecheck.params import Param, ParamError, declare
from ratecheck.problem import Constant, Problem, check_positive
from ratecheck.seeding import ReplicaStream

from .fedbio_bilevel import (
    FEDBIO_TESTS,  # noqa: F401  (re-exported)
    SETTINGS,  # noqa: F401  (re-exported)
    FedBilevel,  # noqa: F401  (re-exported)
    OracleSample,  # noqa: F401  (re-exported)
    _matvec,  # noqa: F401  (re-exported)
    _pseudo_huber_prime,  # noqa: F401  (re-exported)
    _pseudo_huber_second,  # noqa: F401  (re-exported)
    _rows,  # noqa: F401  (re-exported)
    _zero_sum,  # noqa: F401  (re-exported)
    joint_hessian_norm,  # noqa: F401  (re-exported)
    make_fedbio,  # noqa: F401  (re-exported)
)

UPPERS = ("quadratic", "pseudo_huber", "nonconvex")
PH_THIRD = 1.5 * 1.25**-2.5  # sup |phi_delta'''| * delta, at |u| = delta/2 (spec §6.2)
PSI_Z3 = np.sqrt(1 - 2 / np.sqrt(5))  # argmax |psi'''| (spec §6.3)
PSI_THIRD = abs(24 * PSI_Z3 * (PSI_Z3**2 - 1) / (1 + PSI_Z3**2) ** 4)
PSI_PRIME_MAX = 3 * np.sqrt(3) / 8  # sup |psi'|, at |z| = 1/sqrt(3)


@dataclass(frozen=True, eq=False)
class BilevelBatch:
    """The active clients' data, gathered once per round: arrays (R, m, .) or shared matrices."""

    A: np.ndarray  # (dy, dy) shared or (R, m, dy, dy)
    c: np.ndarray
    e: np.ndarray
    s: np.ndarray
    h: np.ndarray
    rows: np.ndarray | None = None  # N3: (R, m, K, dy + dy + dx) row deviations of (c, e, s)


@dataclass(frozen=True, eq=False)
class Solution:
    """Closed forms for one client weighting omega (spec §6.1 'for weights omega')."""

    omega: np.ndarray  # (n,)
    A_inv: np.ndarray  # (dy, dy)
    M: np.ndarray  # (dy, dx): y*(x) = M x + m
    m: np.ndarray
    e_bar: np.ndarray
    s_bar: np.ndarray
    h_bar: np.ndarray
    x_star: np.ndarray | None  # None where the stationary point is not unique (P3 with omega != p)


@dataclass(frozen=True, eq=False)
class QuadraticBilevel(Problem):
    family: ClassVar[str] = "quadratic_bilevel"
    assumptions: ClassVar[tuple[Assumption, ...]] = BILEVEL.assume(
        smooth("L_f", "L_1", "L_2", "L_3"), strongly_convex("mu_g", "r"),
        bounded_variance("sigma_f", "sigma_g", "sigma_gg"), heterogeneity("beta_gh", "sigma_gh"),
        initial_gap("Delta"), initial_distance("y0_err", "v0_err", DIST0), bounded_domain("R_x", "v_star_bound"))

    upper: str
    A: np.ndarray  # (dy, dy) shared, or (n, dy, dy)
    B: np.ndarray  # (dy, dx)
    c: np.ndarray  # (n, dy)
    e: np.ndarray  # (n, dy)
    s: np.ndarray  # (n, dx)
    h: np.ndarray  # (n, dx)
    lam: float
    delta: float
    p: np.ndarray  # (n,) client weights, sum 1
    sigma_f: float
    sigma_g: float
    sigma_h: float
    start: Any  # "zero", "solution" or a float x0 = start * 1 (y0 = v0 = 0)
    box_radius: float | None  # ||x|| <= R_x region for the P1 constants (A2 fails globally, spec C7)
    tilde_weights: tuple[float, ...] | None  # r_i: extra measures for w_i ∝ p_i r_i (SimFBO's Phi-tilde)
    spec_params: Mapping[str, Any]
    rows: np.ndarray | None = None  # N3: (n, K, dy + dy + dx) centred row deviations of (c, e, s)
    batch_size: int = 1  # N3: rows per oracle call, drawn without replacement
    # derived in __post_init__ (not parameters)
    dim_x: int = field(init=False, repr=False, compare=False)
    dim_y: int = field(init=False, repr=False, compare=False)
    mu_g: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n, dy = self.c.shape
        dx = self.B.shape[1]
        object.__setattr__(self, "num_clients", n)
        object.__setattr__(self, "dim_x", dx)
        object.__setattr__(self, "dim_y", dy)
        object.__setattr__(self, "dim", dx)
        weights = np.asarray(self.p, dtype=float)
        if weights.shape != (n,) or (weights < 0).any() or abs(weights.sum() - 1) > 1e-12:
            raise ValueError(f"weights (p_i) must be {n} non-negative numbers summing to 1, got {weights.tolist()}")
        hess = self.A if self.A.ndim == 3 else self.A[None]
        if not np.allclose(hess, np.swapaxes(hess, -1, -2)):
            raise ValueError("A_i must be symmetric")
        mu_g = float(np.linalg.eigvalsh(hess).min())
        if not mu_g > 0:
            raise ValueError(f"mu_g must be > 0 (each g_i(x, .) strongly convex, Assumption 1), got mu_g={mu_g:.4g}")
        check_positive("sigma_h", self.sigma_h, strict=False)
        if self.sigma_h >= mu_g:
            raise ValueError(f"sigma_h must be < mu_g = {mu_g:.4g} (N2 keeps strong convexity), got {self.sigma_h}")
        object.__setattr__(self, "mu_g", mu_g)

    # -- identity -------------------------------------------------------------------------
    @property
    def params(self) -> Mapping[str, Any]:
        return self.spec_params

    # -- closed forms for any weighting ---------------------------------------------------
    def weights_for(self, ratios: Any = None) -> np.ndarray:
        """omega_i ∝ p_i r_i (r = None: omega = p)."""
        if ratios is None:
            return self.p
        w = self.p * np.asarray(ratios, dtype=float)
        return w / w.sum()

    def solution(self, omega: np.ndarray | None = None) -> Solution:
        omega = self.p if omega is None else np.asarray(omega, dtype=float)
        A_w = self.A if self.A.ndim == 2 else np.einsum("n,nij->ij", omega, self.A)
        A_inv = np.linalg.inv(A_w)
        M = A_inv @ self.B
        m = A_inv @ (omega @ self.c)
        sol = Solution(omega, A_inv, M, m, omega @ self.e, omega @ self.s, omega @ self.h, None)
        return Solution(**{**sol.__dict__, "x_star": self._x_star(sol)})

    @cached_property
    def base(self) -> Solution:
        return self.solution()

    @cached_property
    def tilde(self) -> Solution | None:
        return None if self.tilde_weights is None else self.solution(self.weights_for(self.tilde_weights))

    def upper_grad_y(self, y: np.ndarray, e: np.ndarray) -> np.ndarray:
        """dU/dy at y (..., dy) for centres e (broadcasting)."""
        if self.upper == "quadratic":
            return y - e
        if self.upper == "pseudo_huber":
            u = y - e
            return u / np.sqrt(1 + (u / self.delta) ** 2)
        return 2 * y / (1 + y**2) ** 2 + e

    def _grad_y_F(self, y: np.ndarray, sol: Solution) -> np.ndarray:
        """sum_i omega_i grad_y f_i(x, y); for pseudo-Huber it does not collapse to the mean centre."""
        if self.upper == "pseudo_huber":
            return np.einsum("n,...nj->...j", sol.omega, self.upper_grad_y(y[..., None, :], self.e))
        return self.upper_grad_y(y, sol.e_bar)

    def y_star(self, x: np.ndarray, sol: Solution | None = None) -> np.ndarray:
        sol = sol or self.base
        return x @ sol.M.T + sol.m

    def v_star(self, x: np.ndarray, sol: Solution | None = None) -> np.ndarray:
        """v*(x) = [grad_yy G]^-1 grad_y F at y*(x) (spec §1.3)."""
        sol = sol or self.base
        return self._grad_y_F(self.y_star(x, sol), sol) @ sol.A_inv  # A_inv symmetric

    def hypergrad(self, x: np.ndarray, sol: Solution | None = None) -> np.ndarray:
        """grad Phi(x) = grad_x F - grad_xy G v* = lam (x - s) + h + B^T v* (grad_xy g_i = -B^T)."""
        sol = sol or self.base
        return self.lam * (x - sol.s_bar) + sol.h_bar + self.v_star(x, sol) @ self.B

    def value(self, x: np.ndarray, sol: Solution | None = None) -> np.ndarray:
        """Phi_omega(x) = sum_i omega_i f_i(x, y*_omega(x)) (exact)."""
        sol = sol or self.base
        y = self.y_star(x, sol)[..., None, :]
        if self.upper == "quadratic":
            u = 0.5 * ((y - self.e) ** 2).sum(-1)
        elif self.upper == "pseudo_huber":
            u = (self.delta**2 * (np.sqrt(1 + ((y - self.e) / self.delta) ** 2) - 1)).sum(-1)
        else:
            u = (y**2 / (1 + y**2)).sum(-1) + (y * self.e).sum(-1)
        xs = 0.5 * self.lam * ((x[..., None, :] - self.s) ** 2).sum(-1) + x @ self.h.T
        return (u + xs) @ sol.omega

    def _x_star(self, sol: Solution) -> np.ndarray | None:
        dx = self.dim_x
        if self.upper == "quadratic":  # (M^T M + lam I) x = M^T (e - m) + lam s - h
            lhs = sol.M.T @ sol.M + self.lam * np.eye(dx)
            return np.linalg.solve(lhs, sol.M.T @ (sol.e_bar - sol.m) + self.lam * sol.s_bar - sol.h_bar)
        if self.upper == "pseudo_huber":  # u* coordinate-wise: sum_i omega_i phi'(u - e_ij) = 0
            lo, hi = self.e.min(axis=0).copy(), self.e.max(axis=0).copy()
            for _ in range(200):  # bisection on a strictly increasing function, to machine precision
                mid = 0.5 * (lo + hi)
                pos = sol.omega @ self.upper_grad_y(mid[None, :], self.e) > 0
                hi, lo = np.where(pos, mid, hi), np.where(pos, lo, mid)
            return np.linalg.solve(sol.M, 0.5 * (lo + hi) - sol.m)
        if np.allclose(sol.omega, self.p):  # P3: centred data, Phi = sum_j psi(kappa_j x_j)
            return np.zeros(dx)
        return None  # several or no stationary points of Phi-tilde (spec §6.3): use P1 for SimFBO's bias

    # -- oracles (points (R, m, d), client ids (R, m)) ------------------------------------
    def gather(self, clients: np.ndarray) -> BilevelBatch:
        A = self.A if self.A.ndim == 2 else self.A[clients]
        rows = None if self.rows is None else self.rows[clients]
        return BilevelBatch(A, self.c[clients], self.e[clients], self.s[clients], self.h[clients], rows)

    def _row_noise(self, batch: BilevelBatch, part: slice, noise: ReplicaStream | None) -> np.ndarray | float:
        """N3: mean over a fresh mini-batch (without replacement) of the rows' deviations in ``part``."""
        if noise is None or batch.rows is None:
            return 0.0
        R, m, K, _ = batch.rows.shape
        pick = np.argsort(noise.uniform((m, K)), axis=-1)[..., : self.batch_size, None]  # (R, m, b, 1)
        return np.take_along_axis(batch.rows[..., part], pick, axis=2).mean(axis=2)

    @cached_property
    def _parts(self) -> tuple[slice, slice, slice]:
        dy = self.dim_y
        return slice(0, dy), slice(dy, 2 * dy), slice(2 * dy, 2 * dy + self.dim_x)

    @staticmethod
    def _hess_times(A: np.ndarray, u: np.ndarray) -> np.ndarray:
        if A.ndim == 2:  # A symmetric: one (R m, dy) x (dy, dy) product
            return u @ A
        return np.einsum("rmij,rmj->rmi", A, u)

    def lower_grad(self, batch: BilevelBatch, x: np.ndarray, y: np.ndarray, noise: ReplicaStream | None) -> np.ndarray:
        """grad_y g_i(x, y; zeta) = A_i y - B x - c_i (+ N1 noise sigma_g^2)."""
        g = self._hess_times(batch.A, y) - x @ self.B.T - batch.c - self._row_noise(batch, self._parts[0], noise)
        return self._add_noise(g, self.sigma_g / np.sqrt(self.dim_y), noise)

    def ls_grad(self, batch: BilevelBatch, x: np.ndarray, y: np.ndarray, v: np.ndarray,
                noise: ReplicaStream | None) -> np.ndarray:
        """grad_v R_i(x, y, v; psi) = grad_yy g_i(psi) v - grad_y f_i(x, y; psi) (eq. (3), one sample psi)."""
        hv = self._hess_times(batch.A, v)
        if noise is not None and self.sigma_h > 0:  # N2: A_i + sigma_h diag(Rademacher)
            signs = np.where(noise.uniform(v.shape[1:]) < 0.5, -1.0, 1.0)
            hv += self.sigma_h * signs * v
        gy = self._add_noise(self.upper_grad_y(y, batch.e), self._f_scale, noise)
        return hv - gy + self._row_noise(batch, self._parts[1], noise)  # rows' e_ik = e_i + dev: -dev in grad_y f

    def surrogate_grad(self, batch: BilevelBatch, x: np.ndarray, y: np.ndarray, v: np.ndarray,
                       noise: ReplicaStream | None) -> np.ndarray:
        """grad-bar f_i(x, y, v; xi) = grad_x f_i(xi) - grad_xy g_i v = lam (x - s_i) + h_i + B^T v."""
        gx = self._add_noise(self.lam * (x - batch.s) + batch.h, self._f_scale, noise)
        return gx + v @ self.B - self.lam * self._row_noise(batch, self._parts[2], noise)

    @property
    def _f_scale(self) -> float:
        # N1: noise on grad f in R^{dx+dy} with E||.||^2 = sigma_f^2; each update uses its own block
        return self.sigma_f / np.sqrt(self.dim_x + self.dim_y)

    @staticmethod
    def _add_noise(g: np.ndarray, scale: float, noise: ReplicaStream | None) -> np.ndarray:
        if noise is None or scale == 0.0:
            return g
        xi = noise.normal(g.shape[1:])
        xi *= scale
        return g + xi

    def client_hypergrads(self, x: np.ndarray) -> np.ndarray:
        """Each client's own hypergradient at its own y_i*, v_i* (R, n, dx): the 'naive' aggregate's
        summands (spec §7.2): grad_x f_i + B^T A_i^-1 grad_y f_i(y_i*), y_i* = A_i^-1 (B x + c_i)."""
        A_inv = np.linalg.inv(self.A if self.A.ndim == 3 else self.A[None])  # (n or 1, dy, dy)
        y_i = np.einsum("nij,rnj->rni", A_inv, (x @ self.B.T)[:, None, :] + self.c)
        v_i = np.einsum("nij,rnj->rni", A_inv, self.upper_grad_y(y_i, self.e))
        return self.lam * (x[:, None, :] - self.s) + self.h + v_i @ self.B

    # -- solution, start and measures -----------------------------------------------------
    def initial_state(self) -> dict[str, np.ndarray]:
        """(x0, y0, v0); the paper never gives v0 (spec §2.1): 0, or the exact v*(x0) at 'solution'."""
        if self.start == "solution":
            x0 = self.base.x_star
            assert x0 is not None, "start='solution' needs a unique stationary point"
            return {"x": x0, "y": self.y_star(x0), "v": self.v_star(x0)}
        x0 = np.zeros(self.dim_x) if self.start == "zero" else np.full(self.dim_x, float(self.start))
        return {"x": x0, "y": np.zeros(self.dim_y), "v": np.zeros(self.dim_y)}

    def initial_point(self) -> np.ndarray:
        return self.initial_state()["x"]

    def measures(self, point: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        x, y, v = point["x"], point["y"], point["v"]
        out = self._measures(x, y, v, self.base, "")
        if self.tilde is not None:
            out.update(self._measures(x, y, v, self.tilde, "_tilde"))
        return out

    def _measures(self, x, y, v, sol: Solution, tag: str) -> dict[str, np.ndarray]:
        ys = self.y_star(x, sol)
        vs = self._grad_y_F(ys, sol) @ sol.A_inv
        grad = self.lam * (x - sol.s_bar) + sol.h_bar + vs @ self.B
        out = {
            f"grad_norm_sq{tag}": np.einsum("ri,ri->r", grad, grad),
            f"y_err{tag}": ((y - ys) ** 2).sum(-1),
            f"v_err{tag}": ((v - vs) ** 2).sum(-1),
        }
        if sol.x_star is not None:
            out[f"dist_sq{tag}"] = ((x - sol.x_star) ** 2).sum(-1)
        return out

    # -- constants (spec §3, §4.1, §6.1-6.3) ----------------------------------------------
    def constants(self) -> dict[str, Constant]:
        hess = self.A if self.A.ndim == 3 else self.A[None]
        dx, dy = self.dim_x, self.dim_y
        joint = np.zeros((hess.shape[0], dx + dy, dx + dy))
        joint[:, dx:, :dx] = -self.B
        joint[:, :dx, dx:] = -self.B.T
        joint[:, dx:, dx:] = hess
        hess_g = float(np.abs(np.linalg.eigvalsh(joint)).max())
        f_curv = {"quadratic": max(1.0, self.lam), "pseudo_huber": max(1.0, self.lam), "nonconvex": 2.0}[self.upper]
        L_2 = {"quadratic": 0.0, "pseudo_huber": PH_THIRD / self.delta, "nonconvex": PSI_THIRD}[self.upper]
        sol = self.base
        R_x, R_y = self.box
        norm_e = np.linalg.norm(self.e, axis=1)
        norm_s = np.linalg.norm(self.s, axis=1)
        norm_h = np.linalg.norm(self.h, axis=1)
        if self.upper == "quadratic":
            L_f = float(np.sqrt((self.lam * (R_x + norm_s) + norm_h) ** 2 + (R_y + norm_e) ** 2).max())
            lf_how = f"max_i ||grad f_i|| on ||x|| <= R_x = {R_x:.4g}, ||y|| <= R_y = {R_y:.4g} (no global L_f, spec C7)"
        elif self.upper == "pseudo_huber":
            L_f = float(np.sqrt((self.lam * (R_x + norm_s) + norm_h) ** 2 + self.delta**2 * dy).max())
            lf_how = "delta sqrt(d_y) bounds ||grad_y f_i|| globally (|phi'| < delta); x-part on the box"
        else:
            L_f = float(np.sqrt(norm_h**2 + (PSI_PRIME_MAX * np.sqrt(dy) + norm_e) ** 2).max())
            lf_how = "max_i sqrt(||h_i||^2 + (0.6495 sqrt(d_y) + ||e_i||)^2), global (spec §6.3)"
        spread = np.linalg.norm(hess - self._A_p, ord=2, axis=(1, 2))
        dev_c = self.c - self.p @ self.c
        sigma_gh_sq = float(self.p @ (dev_c**2).sum(1))
        gh_how = "sum_i p_i ||c_i - c_bar||^2 exactly (shared A, B: beta_gh = 1)"
        if self.A.ndim == 3:
            sigma_gh_sq = 2 * sigma_gh_sq + 2 * float(self.p @ spread**2) * R_y**2
            gh_how = "2 sum p ||c_i - c_bar||^2 + 2 sum p ||A_i - A_p||^2 R_y^2 on the box (heterogeneous A_i)"
        x0 = self.initial_state()
        v_bound = self._v_star_bound()
        phi0 = float(self.value(x0["x"][None])[0])
        phi_star = float(self.value(sol.x_star[None])[0]) if sol.x_star is not None else np.nan
        return {
            "mu_g": Constant(self.mu_g, "min_i lambda_min(A_i) (eigvalsh)"),
            "L_1": Constant(max(hess_g, f_curv), "max(||joint Hessian of g_i||_2 (eigvalsh), sup curvature of f_i)"),
            "L_2": Constant(L_2, {"quadratic": "all Hessians constant", "pseudo_huber": "sup|phi'''| = 0.8587/delta",
                                  "nonconvex": "sup|psi'''| at z = sqrt(1 - 2/sqrt 5)"}[self.upper]),
            "L_3": Constant(0.0, "g_i quadratic: third derivatives vanish"),
            "L_f": Constant(L_f, lf_how),
            "r": Constant(L_f / self.mu_g, "L_f / mu_g (Lemma 1: ||v*|| <= r)"),
            "v_star_bound": Constant(v_bound, "sup ||v*(x)|| over the region (tighter than L_f/mu_g)"),
            "beta_gh": Constant(1.0, "Assumption 4: exact decomposition sum p||grad g_i||^2 = ||grad G||^2 + spread"),
            "sigma_gh": Constant(float(np.sqrt(sigma_gh_sq)), gh_how),
            **self._noise_constants(),
            "sigma_gg": Constant(self.sigma_h, "N2: ||sigma_h diag(Rademacher)||_2 = sigma_h (0 when exact)"),
            "Delta": Constant(phi0 - phi_star, "Phi(x0) - Phi(x*) in closed form"),
            "y0_err": Constant(float(((x0["y"] - self.y_star(x0["x"])) ** 2).sum()), "||y0 - y*(x0)||^2"),
            "v0_err": Constant(float(((x0["v"] - self.v_star(x0["x"])) ** 2).sum()), "||v0 - v*(x0)||^2"),
            "R_x": Constant(R_x, "radius of the x region used for L_f"),
            **({DIST0: Constant(float(((x0["x"] - sol.x_star) ** 2).sum()), "||x0 - x*||^2, x* in closed form")}
               if sol.x_star is not None else {}),  # no unique stationary point (P3 with omega != p): none
        }

    def _noise_constants(self) -> dict[str, Constant]:
        if self.rows is None:
            return {"sigma_f": Constant(self.sigma_f, "N1: E||noise on grad f||^2 = sigma_f^2 exactly"),
                    "sigma_g": Constant(self.sigma_g, "N1: E||noise on grad_y g||^2 = sigma_g^2 exactly")}
        K = self.rows.shape[1]
        fpc = (K - self.batch_size) / (self.batch_size * (K - 1)) if K > 1 else 0.0
        c, e, s = (fpc * (self.rows[..., part] ** 2).sum(-1).mean(1) for part in self._parts)  # (n,) each
        how = "N3: max_i (K-b)/(b(K-1)) (1/K) sum_k ||row deviation||^2, exact for a mini-batch without replacement"
        return {"sigma_f": Constant(float(np.sqrt((e + self.lam**2 * s).max())), how + " (e and lam s rows)"),
                "sigma_g": Constant(float(np.sqrt(c.max())), how + " (c rows)")}

    @cached_property
    def _A_p(self) -> np.ndarray:
        return self.A if self.A.ndim == 2 else np.einsum("n,nij->ij", self.p, self.A)

    @cached_property
    def box(self) -> tuple[float, float]:
        """(R_x, R_y): R_x = box_radius or 2 max(1, ||x0||, ||x*||); R_y bounds ||y*|| on it and ||y0||."""
        x0 = self.initial_state()
        norms = [1.0, float(np.linalg.norm(x0["x"]))]
        if self.base.x_star is not None:
            norms.append(float(np.linalg.norm(self.base.x_star)))
        R_x = float(self.box_radius) if self.box_radius is not None else 2 * max(norms)
        A_inv = np.linalg.inv(self.A if self.A.ndim == 3 else self.A[None])
        y_max = np.linalg.norm(A_inv, ord=2, axis=(1, 2)) * (np.linalg.norm(self.B, 2) * R_x + np.linalg.norm(self.c, axis=1))
        return R_x, float(max(y_max.max(), np.linalg.norm(x0["y"])))

    def _v_star_bound(self) -> float:
        sol = self.base
        if self.upper == "quadratic":
            R_x, _ = self.box
            return float(np.linalg.norm(sol.A_inv, 2) * (np.linalg.norm(sol.M, 2) * R_x + np.linalg.norm(sol.m - sol.e_bar)))
        scale = self.delta if self.upper == "pseudo_huber" else PSI_PRIME_MAX
        return float(scale * np.sqrt(self.dim_y) / self.mu_g)


def _number_list(value: Any) -> list[float]:
    """A list of finite real numbers (client weights or ratios)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"must be a list of numbers, got {value!r}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v):
            raise ValueError(f"must be a list of finite numbers, got {value!r}")
        out.append(float(v))
    return out


def _start(value: Any) -> Any:
    """'zero', 'solution' or a number x0 (x0 = start * 1)."""
    if value in ("zero", "solution"):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
        raise ValueError(f"start must be 'zero', 'solution' or a finite number, got {value!r}")
    return value


@declare(
    upper=Param.choice("upper-level shape U: quadratic (P1), pseudo_huber (P2), nonconvex (P3)", UPPERS),
    dim_x=Param.int("dimension of x", low=1, high=10**4),
    dim_y=Param.int("dimension of y", low=1, high=10**4),
    clients=Param.int("number of clients n", low=1, high=10**5),
    a_min=Param.real("smallest eigenvalue of A (mu_g)", positive=True),
    a_max=Param.real("largest eigenvalue of A", positive=True),
    b=Param.real("B = b I (needs dim_x == dim_y); null: Gaussian B", nullable=True),
    lam=Param.real("weight lam of the x-regularizer of f_i", low=0.0),
    delta=Param.real("pseudo-Huber scale delta", positive=True),
    zeta=Param.real("scale of the centred client deviations (heterogeneity)", low=0.0),
    hessian_spread=Param.real("spread of the client Hessians A_i (0: shared A)", low=0.0),
    sigma_f=Param.real("N1 noise on grad f: E||.||^2 = sigma_f^2", low=0.0),
    sigma_g=Param.real("N1 noise on grad_y g: E||.||^2 = sigma_g^2", low=0.0),
    sigma_h=Param.real("N2 Hessian noise sigma_h diag(Rademacher), < mu_g", low=0.0),
    weights=Param.option("client weights p_i (list, sums to 1); null: uniform", _number_list, nullable=True),
    start=Param.option("'zero', 'solution' or a number x0", _start),
    box_radius=Param.real("R_x of the region for the P1 constants; null: 2 max(1, ||x0||, ||x*||)",
                          positive=True, nullable=True),
    tilde_weights=Param.option("ratios r_i of SimFBO's Phi-tilde weights w_i ∝ p_i r_i; null: none",
                               _number_list, nullable=True),
    finite_sum=Param.int("N3: rows per client K (0: N1 noise)", low=0, high=10**6),
    batch_size=Param.int("N3: rows per oracle call, drawn without replacement", low=1, high=10**6),
    seed=Param.int("seed of the instance construction", low=0),
)
def make(
    upper: str = "quadratic",
    dim_x: int = 4,
    dim_y: int = 4,
    clients: int = 10,
    a_min: float = 1.0,
    a_max: float = 2.0,
    b: float | None = None,
    lam: float = 0.5,
    delta: float = 1.0,
    zeta: float = 1.0,
    hessian_spread: float = 0.0,
    sigma_f: float = 1.0,
    sigma_g: float = 1.0,
    sigma_h: float = 0.0,
    weights: list[float] | None = None,
    start: Any = "zero",
    box_radius: float | None = None,
    tilde_weights: list[float] | None = None,
    finite_sum: int = 0,
    batch_size: int = 1,
    seed: int = 0,
) -> QuadraticBilevel:
    """Build P1 / P2 / P3 (spec §6.1-6.3) from JSON-able parameters.

    A = diag(linspace(a_min, a_max, d_y)) (mu_g = a_min); B = b I (needs d_x = d_y) or, with b = None,
    i.i.d. N(0, 1/d_x) entries (the spec's P1 prototype). Base vectors and B are drawn before any
    n-dependent draw, so the p-weighted problem is the same for every n and zeta. Client deviations
    delta_i ~ N(0, I), p-centred, times zeta. hessian_spread > 0 gives A_i = A + spread diag(u_i), u_i
    p-centred uniform in [-1, 1] (heterogeneous Hessians: the naive average's bias, spec §7.2).
    P2 has lam = 0, f independent of x; P3 has lam = 0 and the c, e, h of all clients centred at 0.
    finite_sum = K > 0 gives N3 (P1 only, instead of N1): K rows per client with N(0, I) deviations of
    (c, e, s), centred over the rows, and mini-batches of batch_size rows.
    """
    params = dict(locals())
    # every value is checked by its declaration (@declare above); only cross-parameter rules remain here
    if a_max < a_min:
        raise ValueError(f"a_max must be >= a_min, got a_max={a_max} < a_min={a_min}")
    if upper != "quadratic" and (b is None or dim_x != dim_y):
        raise ValueError(f"upper {upper!r} needs B = b I: give b and dim_x == dim_y, got b={b}, dims {dim_x}, {dim_y}")
    if b is not None and (dim_x != dim_y or (b == 0 and upper != "quadratic")):
        # b = 0 (P1 only) decouples the levels: FedNova's single-level sanity check (spec §7.2)
        raise ValueError(f"b (B = b I) needs dim_x == dim_y and b != 0 unless upper is 'quadratic', got b={b}, "
                         f"dims {dim_x}, {dim_y}")
    if upper == "quadratic" and lam == 0 and (dim_x > dim_y or b == 0):
        # h(x) = f(x, y*(x)) is then flat along ker B: no unique x*, and constants() would not exist
        raise ParamError("quadratic_bilevel", "lam", lam, f"must be > 0 for P1 when dim_x > dim_y or b = 0 (the "
                         f"hypergradient's Hessian has rank <= dim_y = {dim_y} < dim_x = {dim_x}, or B = 0)")
    p = np.full(clients, 1.0 / clients) if weights is None else np.asarray(weights, dtype=float)
    if p.shape != (clients,) or (p < 0).any() or abs(p.sum() - 1) > 1e-12:
        raise ValueError(f"weights must be {clients} non-negative client weights summing to 1, got {weights!r}")
    if tilde_weights is not None and (len(tilde_weights) != clients or min(tilde_weights) <= 0):
        raise ValueError(f"tilde_weights must be {clients} positive numbers, got {tilde_weights!r}")
    if finite_sum:
        if upper != "quadratic" or sigma_f or sigma_g:
            raise ValueError(f"finite_sum (N3) needs upper 'quadratic' and sigma_f = sigma_g = 0 (it replaces N1), got "
                             f"upper={upper!r}, sigma_f={sigma_f}, sigma_g={sigma_g}")
        if batch_size > finite_sum:
            raise ValueError(f"batch_size must be in 1..finite_sum = {finite_sum}, got {batch_size}")
    rng = np.random.default_rng(seed)  # instance construction only; runs have their own streams
    B = b * np.eye(dim_y) if b is not None else rng.standard_normal((dim_y, dim_x)) / np.sqrt(dim_x)
    base_c, base_e, base_s = rng.standard_normal(dim_y), rng.standard_normal(dim_y), rng.standard_normal(dim_x)
    if upper != "quadratic":
        lam, base_s = 0.0, np.zeros(dim_x)
    if upper == "nonconvex":
        base_c, base_e = np.zeros(dim_y), np.zeros(dim_y)
    dev = np.random.default_rng([seed, clients])  # n-dependent draws on their own generator

    def centred(d: int) -> np.ndarray:
        u = dev.standard_normal((clients, d))
        return u - p @ u

    c = base_c + zeta * centred(dim_y)
    e = base_e + zeta * centred(dim_y)
    s = base_s + (zeta * centred(dim_x) if upper == "quadratic" else 0.0)
    h = zeta * centred(dim_x) if upper == "nonconvex" else np.zeros((clients, dim_x))
    A = np.diag(np.linspace(a_min, a_max, dim_y))
    if hessian_spread > 0:
        u = dev.uniform(-1, 1, (clients, dim_y))
        A = A + hessian_spread * np.einsum("ni,ij->nij", u - p @ u, np.eye(dim_y))
    rows = None
    if finite_sum:  # drawn last: the instance without N3 is unchanged
        rows = dev.standard_normal((clients, finite_sum, 2 * dim_y + dim_x))
        rows -= rows.mean(axis=1, keepdims=True)  # each client's rows average to its own c_i, e_i, s_i
    return QuadraticBilevel(
        upper=upper, A=A, B=B, c=c, e=e, s=np.broadcast_to(s, (clients, dim_x)).copy(), h=h, lam=float(lam),
        delta=float(delta), p=p, sigma_f=float(sigma_f), sigma_g=float(sigma_g), sigma_h=float(sigma_h),
        start=start, box_radius=box_radius, spec_params=params,
        tilde_weights=None if tilde_weights is None else tuple(float(t) for t in tilde_weights),
        rows=rows, batch_size=int(batch_size),
    )
