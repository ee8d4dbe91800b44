"""Federated bilevel problems with a quadratic lower level: exact oracles, y*(x), v*(x), hypergradient.

Source: ../shared/seeds/000_66e1ccf0a50396e9.txt (SimFBO, arXiv 2023), eq. (1)-(3); test problems of
../shared/spec/simfbo.md §6.1-6.3. This is the package's one federated bilevel family (FedBiO reuses it).

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
    DIST0,
    Assumption,
    bounded_domain,
    bounded_gradient,
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
    assumptions: ClassVar[tuple[Assumption, ...]] = (
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


def p1(**overrides: Any) -> dict[str, Any]:
    """Spec §6.6 P1 instance: d = 4, A = diag(1, 4/3, 5/3, 2), Gaussian B, lam = 0.5, zeta = 1, sigma = 1."""
    return {"upper": "quadratic", "dim_x": 4, "dim_y": 4, "a_min": 1.0, "a_max": 2.0, "lam": 0.5, "zeta": 1.0,
            "sigma_f": 1.0, "sigma_g": 1.0, **overrides}


def p2(**overrides: Any) -> dict[str, Any]:
    """Spec §6.2: pseudo-Huber upper level, B = I, delta = 1, zeta = 1."""
    return {"upper": "pseudo_huber", "dim_x": 4, "dim_y": 4, "b": 1.0, "delta": 1.0, "zeta": 1.0, **overrides}


def p3(**overrides: Any) -> dict[str, Any]:
    """Spec §6.6 P3: d = 4, a = linspace(1, 2, 4), b = 1, zeta = 0."""
    return {"upper": "nonconvex", "dim_x": 4, "dim_y": 4, "b": 1.0, "zeta": 0.0, **overrides}


# =============================================================================================
# FedBiO families (issue #10): per-client lower AND upper levels, global or local lower problems.
#
# Source: ../shared/seeds/002_25acef2c58d2293a.txt (FedBiO / FedBiOAcc), eqs. (1)-(6); test problems
# of ../shared/spec/fedbio.md §6.1-6.4. Client m holds
#
#     g_m(x, y) = 1/2 y^T A_m y - y^T B_m x - c_m^T y                 (mu-strongly convex in y)
#     f_m(x, y) = sum_i psi(y_i - d_mi) + rho sum_j psi(x_j - e_mj)
#
# with psi(r) = r^2/2 (quadratic, Tests A, B, C) or the pseudo-Huber psi_delta (Tests D, D'). In the
# 'global' setting (eq. (1)) the lower problem is min_y (1/M) sum_m g_m; in the 'local' one (eq. (5))
# each client has its own y_m*(x). The SimFBO family above is the special case A_m = A, B_m = B of the
# global setting; this class adds per-client B_m, both settings, the paper's four stochastic oracles
# (grad f, grad_y g, Jacobian grad_xy g, Hessian grad_yy g) drawn as one minibatch sample that can be
# evaluated at two points (STORM), and the closed forms the FedBiO claims need.

FEDBIO_TESTS = ("A", "B", "C1", "C2", "D", "Dp")
SETTINGS = ("global", "local")


@dataclass(frozen=True, eq=False)
class OracleSample:
    """One minibatch per client of every oracle (spec §1.3): noise arrays with a leading replica axis,
    None where the oracle is exact. The same sample evaluated at two points gives STORM's difference
    (spec §2.2 line 8). ``H`` has a draw axis of length Q for the Neumann series. Under N2 with matrix
    rows the B_y minibatch also carries its rows' deviations of A_m and B_m (``gA``, ``gB``): grad_y g's
    noise then depends on the point it is evaluated at (spec §6.0 N2)."""

    fx: np.ndarray | None  # (R, m, p)    x-block of grad f (batch B_f,1)
    fy: np.ndarray | None  # (R, m, d)    y-block of grad f (batch B_f,2)
    gy: np.ndarray | None  # (R, m, d)    grad_y g, its additive part (batch B_y)
    J: np.ndarray | None  # (R, m, p, d) grad_xy g (batch B_g,1)
    H: np.ndarray | None  # (R, m, k, d, d) grad_yy g, k independent draws (batch B_g,2 / xi_1..xi_Q)
    gA: np.ndarray | None = None  # (R, m, d, d) N2: the B_y rows' mean deviation of A_m (grad_y g's y-part)
    gB: np.ndarray | None = None  # (R, m, d, p) N2: the B_y rows' mean deviation of B_m (grad_y g's x-part)


def _pseudo_huber_prime(r: np.ndarray, delta: float) -> np.ndarray:
    return r / np.sqrt(1 + (r / delta) ** 2)


def _pseudo_huber_second(r: np.ndarray, delta: float) -> np.ndarray:
    return (1 + (r / delta) ** 2) ** -1.5


def _matvec(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A (..., i, j) times v (..., j), broadcasting client-only matrices (m, i, j) over replicas;
    one shared matrix (i, j) is a single product."""
    if A.ndim == 2:
        return v @ A.T
    return (A @ v[..., None])[..., 0]


def joint_hessian_norm(A: np.ndarray, B: np.ndarray) -> float:
    """max_m ||[[0, -B_m^T], [-B_m, A_m]]||_2: the joint smoothness of g_m in z = (x, y) (spec §6.1)."""
    M, d, p = B.shape
    joint = np.zeros((M, p + d, p + d))
    joint[:, p:, :p] = -B
    joint[:, :p, p:] = -np.swapaxes(B, 1, 2)
    joint[:, p:, p:] = A
    return float(np.abs(np.linalg.eigvalsh(joint)).max())


@dataclass(frozen=True, eq=False)
class FedBilevel(Problem):
    """A FedBiO test problem (spec §6): exact y*(x), u*(x), hypergradient, x*, constants and oracles."""

    family: ClassVar[str] = "fedbio_bilevel"
    assumptions: ClassVar[tuple[Assumption, ...]] = (
        smooth("L", "L_xy", "L_y2", "L_tilde", "Lbar", "Lbar_exact", "Lhat", "Lhat_exact"),
        strongly_convex("mu", "kappa"), bounded_gradient("C_f"),
        bounded_variance("sigma", "sigma_f", "sigma_g", "sigma_J", "sigma_H"),
        heterogeneity("zeta_f", "zeta_g", "zeta_gstar", "zeta_gxy", "zeta_gyy"), initial_gap("Delta"),
        initial_distance("Delta_y", "Delta_u", DIST0), bounded_domain("R_x"))

    test: str
    setting: str
    upper: str  # 'quadratic' or 'pseudo_huber'
    A: np.ndarray  # (M, d, d)
    B: np.ndarray  # (M, d, p)
    c: np.ndarray  # (M, d)
    d_m: np.ndarray  # (M, d)  centres of f in y
    e_m: np.ndarray  # (M, p)  centres of f in x
    rho: float
    delta: float
    sigma_f: float
    sigma_g: float
    sigma_J: float
    sigma_H: float
    start: str
    spec_params: Mapping[str, Any]
    # N2 (spec §6.0): client m holds K samples i; a minibatch averages b of them drawn without (or, as an
    # option, with) replacement. Stored as deviations from the client's own data, zero mean per client:
    # grad f's (the rows of d_m, e_m; (K, p+d)), grad_y g's additive part (the rows of c_m; (K, d)) and, with
    # matrix rows, A_m,i - A_m (symmetric) and B_m,i - B_m, so the Jacobian, the Hessian and grad_y g are
    # row draws whose noise depends on the point (grad_y g(z; i) = A_m,i y - B_m,i x - c_m,i)
    rows_f: np.ndarray | None = None  # (M, K, p + d)
    rows_g: np.ndarray | None = None  # (M, K, d)
    replacement: bool = False
    rows_A: np.ndarray | None = None  # (M, K, d, d)
    rows_B: np.ndarray | None = None  # (M, K, d, p)
    # derived in __post_init__ (not parameters)
    dim_x: int = field(init=False, repr=False, compare=False)
    dim_y: int = field(init=False, repr=False, compare=False)
    p: np.ndarray = field(init=False, repr=False, compare=False)
    mu: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        M, d, p = self.B.shape
        object.__setattr__(self, "num_clients", M)
        object.__setattr__(self, "dim_x", p)
        object.__setattr__(self, "dim_y", d)
        object.__setattr__(self, "dim", p)
        object.__setattr__(self, "p", np.full(M, 1.0 / M))  # equal weights (the paper's 1/M)
        mu = float(np.linalg.eigvalsh(self.A).min())
        if not mu > 0:
            raise ValueError(f"mu must be > 0 (every g_m strongly convex in y, Assumption 1), got {mu:.4g}")
        object.__setattr__(self, "mu", mu)

    @property
    def params(self) -> Mapping[str, Any]:
        return self.spec_params

    # -- shapes of f -------------------------------------------------------------------------
    def psi1(self, r: np.ndarray) -> np.ndarray:
        return r if self.upper == "quadratic" else _pseudo_huber_prime(r, self.delta)

    def psi2(self, r: np.ndarray) -> np.ndarray:
        return np.ones_like(r) if self.upper == "quadratic" else _pseudo_huber_second(r, self.delta)

    # -- closed forms --------------------------------------------------------------------------
    @cached_property
    def A_bar(self) -> np.ndarray:
        return self.A.mean(0)

    @cached_property
    def B_bar(self) -> np.ndarray:
        return self.B.mean(0)

    @cached_property
    def A_inv(self) -> np.ndarray:  # (M, d, d)
        return np.linalg.inv(self.A)

    def y_star(self, x: np.ndarray) -> np.ndarray:
        """Global setting: y_x = A_bar^-1 (B_bar x + c_bar), x (..., p) -> (..., d)."""
        return np.linalg.solve(self.A_bar, (x @ self.B_bar.T + self.c.mean(0))[..., None])[..., 0]

    def y_star_clients(self, x: np.ndarray) -> np.ndarray:
        """Local setting: y_m*(x) = A_m^-1 (B_m x + c_m) of every client at one x (..., p) -> (..., M, d)."""
        return _matvec(self.A_inv, _matvec(self.B, x[..., None, :]) + self.c)

    def u_star(self, x: np.ndarray) -> np.ndarray:
        """Global setting: u_x = A_bar^-1 (1/M) sum_m grad_y f_m(x, y_x) (the minimizer of eq. (4))."""
        gy = self.psi1(self.y_star(x)[..., None, :] - self.d_m).mean(-2)
        return np.linalg.solve(self.A_bar, gy[..., None])[..., 0]

    v_star = u_star  # SimFBO's name for the same quantity: baselines read it

    def hypergrad(self, x: np.ndarray) -> np.ndarray:
        """Exact grad h(x) (eq. (2) for 'global', (1/M) sum_m grad h_m for 'local'), x (..., p)."""
        gx = self.rho * self.psi1(x[..., None, :] - self.e_m).mean(-2)
        if self.setting == "global":
            return gx + self.u_star(x) @ self.B_bar
        ym = self.y_star_clients(x)
        um = _matvec(self.A_inv, self.psi1(ym - self.d_m))
        return gx + _matvec(np.swapaxes(self.B, 1, 2), um).mean(-2)

    def hessian(self, x: np.ndarray) -> np.ndarray:
        """Exact Hessian of h at one point x (p,) (spec §6.4 formulas), for Newton's method."""
        hx = self.rho * np.diag(self.psi2(x - self.e_m).mean(0))
        if self.setting == "global":
            K = np.linalg.solve(self.A_bar, self.B_bar)  # A^-1 B
            D = np.diag(self.psi2(self.y_star(x) - self.d_m).mean(0))
            return hx + K.T @ D @ K
        K = self.A_inv @ self.B  # (M, d, p)
        D = self.psi2(self.y_star_clients(x) - self.d_m)  # (M, d)
        return hx + np.einsum("mip,mi,miq->pq", K, D, K) / self.num_clients

    @cached_property
    def x_star(self) -> np.ndarray:
        """The unique minimizer: Newton on the strictly convex h (one step if quadratic), damped by
        backtracking until h or ||grad h|| decreases enough. Far from x* the pseudo-Huber curvature is tiny
        and the full Newton step huge, and only h is sure to decrease along it (a descent direction: h
        strictly convex; a search on ||grad h|| alone overflowed on a D instance with b = 2, delta = 0.5);
        near x* h's decrease (~||grad h||^2) is below its round-off and ||grad h|| falls quadratically."""
        x = np.zeros(self.dim_x)
        for _ in range(200):
            g = self.hypergrad(x)
            g_norm = float(np.linalg.norm(g))
            if g_norm < 1e-15:
                break
            step = np.linalg.solve(self.hessian(x), g)
            h0, slope, t = float(self.value(x)), float(g @ step), 1.0

            def enough(t: float) -> bool:
                x_t = x - t * step
                return (float(self.value(x_t)) <= h0 - 1e-4 * t * slope
                        or float(np.linalg.norm(self.hypergrad(x_t))) <= (1 - 1e-4 * t) * g_norm)

            while t > 1e-30 and not enough(t):
                t /= 2
            if t <= 1e-30:  # no decrease representable in float64: x is the minimizer to round-off
                break
            x = x - t * step
        return x

    @cached_property
    def x_naive(self) -> np.ndarray | None:
        """Fixed point of averaging local hypergradients with exact local inverses and the global y
        (spec §6.2, [DERIVED]): x = (rho I + K A_bar^-1 B_bar)^-1 (rho e_bar - K A_bar^-1 c_bar + r),
        K = (1/M) sum B_m^T A_m^-1, r = (1/M) sum B_m^T A_m^-1 d_m. Quadratic global setting only."""
        if self.upper != "quadratic" or self.setting != "global":
            return None
        BtAi = np.swapaxes(self.B, 1, 2) @ self.A_inv  # (M, p, d)
        K = BtAi.mean(0)
        r = _matvec(BtAi, self.d_m).mean(0)
        lhs = self.rho * np.eye(self.dim_x) + K @ np.linalg.solve(self.A_bar, self.B_bar)
        rhs = self.rho * self.e_m.mean(0) - K @ np.linalg.solve(self.A_bar, self.c.mean(0)) + r
        return np.linalg.solve(lhs, rhs)

    def neumann_factor(self, Q: int, tau_N: float) -> np.ndarray:
        """N_Q,m = I - (I - tau_N A_m)^(Q+1) (M, d, d): the exact-Hessian Neumann series is N_Q A_m^-1."""
        eye = np.eye(self.dim_y)
        return eye - np.linalg.matrix_power(eye - tau_N * self.A, Q + 1)

    def x_neumann(self, Q: int, tau_N: float) -> np.ndarray:
        """x_Q: the fixed point of FedBiO-Local with exact oracles and Q+1 Neumann terms (spec §6.3),
        for the quadratic local setting: (rho I + avg B^T N A^-2 B)^-1 avg(rho e - B^T N A^-2 c + B^T N A^-1 d)."""
        N = self.neumann_factor(Q, tau_N)
        Bt = np.swapaxes(self.B, 1, 2)
        NA1 = N @ self.A_inv
        NA2 = NA1 @ self.A_inv
        lhs = self.rho * np.eye(self.dim_x) + (Bt @ NA2 @ self.B).mean(0)
        rhs = (self.rho * self.e_m - _matvec(Bt @ NA2, self.c) + _matvec(Bt @ NA1, self.d_m)).mean(0)
        return np.linalg.solve(lhs, rhs)

    def value(self, x: np.ndarray) -> np.ndarray:
        """h(x) (exact), x (..., p)."""
        def psi(r):
            if self.upper == "quadratic":
                return 0.5 * r**2
            return self.delta**2 * (np.sqrt(1 + (r / self.delta) ** 2) - 1)

        y = self.y_star(x)[..., None, :] if self.setting == "global" else self.y_star_clients(x)
        return (psi(y - self.d_m).sum(-1) + self.rho * psi(x[..., None, :] - self.e_m).sum(-1)).mean(-1)

    # -- SimFBO-protocol closed forms, so the shared baselines (naive average) run on it -------
    def client_hypergrads(self, x: np.ndarray) -> np.ndarray:
        """Each client's Phi_m(x, y_x) with its own inverse Hessian and the global y_x (spec §6.2):
        the naive average's summands, (R, M, p)."""
        ys = self.y_star(x)[:, None, :]
        um = _matvec(self.A_inv, self.psi1(ys - self.d_m))
        return self.rho * self.psi1(x[:, None, :] - self.e_m) + _matvec(np.swapaxes(self.B, 1, 2), um)

    # -- oracles: one sample, evaluated at any point (spec §1.3, §6.0 N1, N2) -----------------
    def draw(self, noise: ReplicaStream | None, shape: tuple[int, ...], batch: int = 1, hessians: int = 1,
             oracles: tuple[str, ...] = ("fx", "fy", "gy", "J", "H"), share_f: bool = False) -> OracleSample:
        """A minibatch of size ``batch`` per client for each named oracle, the batches independent of each
        other (B_f,1, B_f,2, B_y, B_g,1, B_g,2 of Alg. 1 line 4; the Q Hessian draws xi_1..xi_Q of eq. (6)).
        ``share_f``: one batch xi_f for both blocks of grad f (eq. (6), the Neumann estimator); under N1 the
        blocks of one isotropic draw are independent anyway, so only N2's rows see it. The mean of b i.i.d.
        N1 samples is exactly Gaussian with variance sigma^2/b, so one draw scaled by 1/sqrt(b) is the
        minibatch in distribution. ``shape`` is the per-replica client shape, e.g. (M,) or (M, copies)."""
        p, d = self.dim_x, self.dim_y
        scale = 1.0 / np.sqrt(batch)

        def normal(sigma: float, tail: tuple[int, ...], per: float) -> np.ndarray | None:
            if noise is None or sigma == 0.0:
                return None
            xi = noise.normal(shape + tail)
            xi *= sigma * scale / np.sqrt(per)
            return xi

        f_per = p + d  # grad f in R^{p+d} has E||.||^2 = sigma_f^2; each block is used from its own batch
        out: dict[str, np.ndarray | None] = dict(fx=None, fy=None, gy=None, J=None, H=None)
        if self.rows_f is not None:  # N2: each oracle its own minibatch of rows
            if noise is not None:
                out.update(self._draw_rows(noise, shape, batch, hessians, oracles, share_f))
        else:
            if "fx" in oracles:
                out["fx"] = normal(self.sigma_f, (p,), f_per)
            if "fy" in oracles:
                out["fy"] = normal(self.sigma_f, (d,), f_per)
            if "gy" in oracles:
                out["gy"] = normal(self.sigma_g, (d,), d)
        if "J" in oracles and self.rows_B is None:
            out["J"] = normal(self.sigma_J, (p, d), p * d)
        if "H" in oracles and noise is not None and self.sigma_H > 0.0 and self.rows_A is None:
            # S = (N + N^T)/2 with N_ij ~ N(0, s^2), s^2 = 2 sigma_H^2/(d(d+1)): E||S||_F^2 = sigma_H^2
            N = noise.normal(shape + (hessians, d, d))
            N *= self.sigma_H * scale * np.sqrt(2.0 / (d * (d + 1)))
            out["H"] = 0.5 * (N + np.swapaxes(N, -1, -2))
        return OracleSample(**out)

    def _draw_rows(self, noise: ReplicaStream, shape: tuple[int, ...], batch: int, hessians: int,
                   oracles: tuple[str, ...], share_f: bool) -> dict[str, np.ndarray]:
        """N2: every named oracle's minibatch mean of row deviations, one independent row draw per batch.
        Within one batch the oracles that read the same sample i share its index: grad_y g's c-, A- and
        B-parts (one row (A_m,i, B_m,i, c_m,i)), and with ``share_f`` the two blocks of grad f."""
        p, d = self.dim_x, self.dim_y
        assert self.rows_f is not None  # N2 only
        out: dict[str, np.ndarray] = {}
        if share_f and "fx" in oracles and "fy" in oracles:
            f = self._row_mean(self.rows_f, noise, shape, batch)
            out["fx"], out["fy"] = f[..., :p], f[..., p:]
        else:
            for name, rows in (("fx", self.rows_f[..., :p]), ("fy", self.rows_f[..., p:])):
                if name in oracles:
                    out[name] = self._row_mean(rows, noise, shape, batch)
        if "gy" in oracles:
            g = self._row_mean(self._rows_gy, noise, shape, batch)
            out["gy"] = g[..., :d]
            at = d
            if self.rows_A is not None:
                out["gA"] = g[..., at:at + d * d].reshape(g.shape[:-1] + (d, d))
                at += d * d
            if self.rows_B is not None:
                out["gB"] = g[..., at:].reshape(g.shape[:-1] + (d, p))
        if "J" in oracles and self.rows_B is not None:  # grad_xy g(i) = -B_m,i^T
            B = self._row_mean(self._rows_J, noise, shape, batch)
            out["J"] = -np.swapaxes(B.reshape(B.shape[:-1] + (d, p)), -1, -2)
        if "H" in oracles and self.rows_A is not None:  # Q independent Hessian batches
            A = self._row_mean(self._rows_H, noise, shape + (hessians,), batch)
            out["H"] = A.reshape(A.shape[:-1] + (d, d))
        return out

    @cached_property
    def _rows_J(self) -> np.ndarray:
        """The Jacobian oracle's rows B_m,i - B_m, flattened (M, K, d p)."""
        assert self.rows_B is not None
        return self.rows_B.reshape(self.rows_B.shape[:2] + (-1,))

    @cached_property
    def _rows_H(self) -> np.ndarray:
        """The Hessian oracle's rows A_m,i - A_m, flattened (M, K, d d)."""
        assert self.rows_A is not None
        return self.rows_A.reshape(self.rows_A.shape[:2] + (-1,))

    @cached_property
    def _rows_gy(self) -> np.ndarray:
        """grad_y g's rows (M, K, d [+ d d] [+ d p]): the additive part, then A_m,i - A_m and B_m,i - B_m
        flattened, so one row draw gives all three parts of the same sample i."""
        assert self.rows_g is not None
        parts = [self.rows_g]
        if self.rows_A is not None:
            parts.append(self._rows_H)
        if self.rows_B is not None:
            parts.append(self._rows_J)
        return np.concatenate(parts, axis=-1)

    def _row_mean(self, rows: np.ndarray, noise: ReplicaStream, shape: tuple[int, ...], batch: int) -> np.ndarray:
        """The mean of ``batch`` of a client's K rows (M, K, k), drawn uniformly without replacement (the
        first ``batch`` of a random permutation) or with replacement: (R, *shape, k); shape[0] is the client axis."""
        K = rows.shape[1]
        if batch > K and not self.replacement:
            raise ParamError("fedbio_bilevel", "batch", batch, f"a minibatch without replacement needs b <= K = {K}")
        u = noise.uniform(shape + (K if not self.replacement else batch,))
        pick = np.argsort(u, axis=-1)[..., :batch] if not self.replacement else np.minimum((u * K).astype(int), K - 1)
        client = np.arange(shape[0]).reshape((1, shape[0]) + (1,) * (len(shape) - 1) + (1,))
        return rows[client, pick].mean(axis=-2)

    def row_second_moments(self, block: str, x: np.ndarray | None = None, y: np.ndarray | None = None) -> np.ndarray:
        """s_m^2 = (1/K) sum_i ||row deviation i||^2 of one oracle per client (M,): Frobenius for the Jacobian
        ('J') and the Hessian ('H'); for grad_y g ('gy') at the point (x, y) when the rows carry A_m,i, B_m,i
        (its noise (A_m,i - A_m) y - (B_m,i - B_m) x + row_i depends on the state)."""
        p = self.dim_x
        assert self.rows_f is not None and self.rows_g is not None  # N2 only
        if block == "gy":
            dev = self.rows_g
            if self.rows_A is not None and y is not None:
                dev = dev + _matvec(self.rows_A, np.asarray(y, float))
            if self.rows_B is not None and x is not None:
                dev = dev - _matvec(self.rows_B, np.asarray(x, float))
            return (dev**2).sum(-1).mean(1)
        rows = {"fx": self.rows_f[..., :p], "fy": self.rows_f[..., p:], "J": self.rows_B, "H": self.rows_A}[block]
        assert rows is not None, f"no N2 rows for oracle {block!r}"
        return (rows**2).sum(tuple(range(2, rows.ndim))).mean(1)

    def row_variance(self, block: str, batch: int, x: np.ndarray | None = None, y: np.ndarray | None = None) -> float:
        """Closed form of E||minibatch mean||^2 under N2 (Frobenius for 'J', 'H'), averaged over the clients:
        s^2/b, times (K - b)/(K - 1) without replacement (the finite-population correction), s^2 the rows'
        mean square (row_second_moments; for 'gy' with matrix rows at the point (x, y))."""
        assert self.rows_f is not None  # N2 only
        K = self.rows_f.shape[1]
        s2 = float(self.row_second_moments(block, x, y).mean())
        return s2 / batch if self.replacement else s2 / batch * (K - batch) / (K - 1)

    def hessian_rows_range(self) -> tuple[float, float] | None:
        """(min, max) eigenvalue over the N2 Hessian rows A_m,i (every minibatch mean lies in it), None without
        matrix rows: what the contraction of I - tau grad_yy g(xi) needs (spec §6.0, §6.6)."""
        if self.rows_A is None:
            return None
        eig = np.linalg.eigvalsh(self.A[:, None] + self.rows_A)
        return float(eig.min()), float(eig.max())

    @cached_property
    def _shared(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(A, B) when every client has the same matrices (Tests A, C1, D, Dp): one product per oracle."""
        if np.all(self.A == self.A[0]) and np.all(self.B == self.B[0]):
            return self.A[0], self.B[0]
        return None

    def _clients(self, x: np.ndarray) -> tuple[np.ndarray, ...]:
        """Client data aligned with points (R, M, ...) or (R, M, copies, ...)."""
        extra = x.ndim - 3  # copy axes after the client axis
        expand = (slice(None),) + (None,) * extra
        A, B = self._shared or (self.A[expand], self.B[expand])
        return (A, B) + tuple(a[expand] for a in (self.c, self.d_m, self.e_m))

    def grad_x_f(self, x: np.ndarray, y: np.ndarray, s: OracleSample) -> np.ndarray:
        A, B, c, d, e = self._clients(x)
        g = self.rho * self.psi1(x - e)
        return g if s.fx is None else g + s.fx

    def grad_y_f(self, x: np.ndarray, y: np.ndarray, s: OracleSample) -> np.ndarray:
        A, B, c, d, e = self._clients(x)
        g = self.psi1(y - d)
        return g if s.fy is None else g + s.fy

    def grad_y_g(self, x: np.ndarray, y: np.ndarray, s: OracleSample) -> np.ndarray:
        """A_m(xi) y - B_m(xi) x - c_m(xi): under N2 with matrix rows the noise depends on (x, y)."""
        A, B, c, d, e = self._clients(x)
        g = _matvec(A, y) - _matvec(B, x) - c
        if s.gA is not None:
            g = g + _matvec(s.gA, y)
        if s.gB is not None:
            g = g - _matvec(s.gB, x)
        return g if s.gy is None else g + s.gy

    def jvp(self, x: np.ndarray, y: np.ndarray, u: np.ndarray, s: OracleSample) -> np.ndarray:
        """grad_xy g_m(xi) u in R^p: grad_xy g_m = -B_m^T (p x d), plus the Jacobian noise."""
        A, B, c, d, e = self._clients(x)
        g = -(u @ B) if B.ndim == 2 else -(u[..., None, :] @ B)[..., 0, :]  # -B^T u
        return g if s.J is None else g + _matvec(s.J, u)

    def hvp(self, x: np.ndarray, y: np.ndarray, u: np.ndarray, s: OracleSample, k: int = 0) -> np.ndarray:
        """grad_yy g_m(xi_k) u in R^d (the k-th independent Hessian draw of the sample)."""
        A, B, c, d, e = self._clients(x)
        g = _matvec(A, u)
        return g if s.H is None else g + _matvec(s.H[..., k, :, :], u)

    # -- SimFBO's oracle protocol, so its FedNest / LFedNest run here unchanged (full participation) ----
    def gather(self, clients: np.ndarray) -> np.ndarray:
        """The oracles above use every client's data aligned with the client axis: full participation only."""
        if clients.shape[1] != self.num_clients or np.any(clients != np.arange(self.num_clients)):
            raise ValueError(f"{self.family} oracles need full participation (all {self.num_clients} clients in order)")
        return clients

    def lower_grad(self, batch: Any, x: np.ndarray, y: np.ndarray, noise: ReplicaStream | None) -> np.ndarray:
        return self.grad_y_g(x, y, self.draw(noise, x.shape[1:2], oracles=("gy",)))

    def ls_grad(self, batch: Any, x: np.ndarray, y: np.ndarray, v: np.ndarray,
                noise: ReplicaStream | None) -> np.ndarray:
        """grad_yy g v - grad_y f: the gradient of eq. (4) (SimFBO's LS loss), one sample."""
        s = self.draw(noise, x.shape[1:2], oracles=("fy", "H"))
        return self.hvp(x, y, v, s) - self.grad_y_f(x, y, s)

    def surrogate_grad(self, batch: Any, x: np.ndarray, y: np.ndarray, v: np.ndarray,
                       noise: ReplicaStream | None) -> np.ndarray:
        """grad_x f - grad_xy g v, one sample."""
        s = self.draw(noise, x.shape[1:2], oracles=("fx", "J"))
        return self.grad_x_f(x, y, s) - self.jvp(x, y, v, s)

    # -- start, measures ------------------------------------------------------------------------
    def initial_state(self) -> dict[str, np.ndarray]:
        """x1, y1, u1: zero, or the solution (x*, y*, u*) for floor measurements (spec §6.6)."""
        if self.start == "solution":
            x = self.x_star
            if self.setting == "global":
                return {"x": x, "y": self.y_star(x), "v": self.u_star(x)}
            return {"x": x, "y": self.y_star_clients(x).mean(0), "v": np.zeros(self.dim_y)}
        return {"x": np.zeros(self.dim_x), "y": np.zeros(self.dim_y), "v": np.zeros(self.dim_y)}

    def initial_point(self) -> np.ndarray:
        return self.initial_state()["x"]

    def measures(self, point: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """At the virtual averages: ||grad h(x)||^2, ||x - x*||^2, and the lower-level errors
        (global: ||y - y_x||^2, ||u - u_x||^2; local: (1/M) sum_m ||y_m - y_m*(x)||^2 from y_clients)."""
        x = point["x"]
        grad = self.hypergrad(x)
        out = {"grad_norm_sq": np.einsum("ri,ri->r", grad, grad), "dist_sq": ((x - self.x_star) ** 2).sum(-1)}
        if self.setting == "global":
            u = point.get("u", point.get("v"))
            if "y" in point:
                out["y_err"] = ((point["y"] - self.y_star(x)) ** 2).sum(-1)
            if u is not None:
                out["u_err"] = ((u - self.u_star(x)) ** 2).sum(-1)
            if self.x_naive is not None:
                out["dist_sq_naive"] = ((x - self.x_naive) ** 2).sum(-1)
            if "u_clients" in point:
                out.update(self._lemma8_measures(point))
        elif "y_clients" in point:
            out["y_err"] = ((point["y_clients"] - self.y_star_clients(x)) ** 2).sum(-1).mean(-1)
        return out

    def _lemma8_measures(self, point: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The quantities of Lemma 8 (appendix B.1.4) at the client iterates (R, M, .) of FedBiO:
        hg_bias = ||grad h(x_bar) - E_xi nu_bar||^2 with nu^(m) = grad_x f_m(x_m, y_m) - grad_xy g_m u_m
        (exact oracles: the expectation over the sample), the dispersions x_drift, y_drift, u_disp =
        (1/M) sum_m ||v_bar - v^(m)||^2."""
        xs, ys, us = point["x_clients"], point["y_clients"], point["u_clients"]
        exact = self.draw(None, ())
        nu = (self.grad_x_f(xs, ys, exact) - self.jvp(xs, ys, us, exact)).mean(1)
        bias = self.hypergrad(xs.mean(1)) - nu
        def spread(v):
            return ((v - v.mean(1, keepdims=True)) ** 2).sum(-1).mean(-1)
        return {"hg_bias": np.einsum("ri,ri->r", bias, bias), "x_drift": spread(xs), "y_drift": spread(ys),
                "u_disp": spread(us)}

    # -- constants (spec §3.3, §6.1-6.4) --------------------------------------------------------
    @cached_property
    def ball(self) -> tuple[float, float]:
        """(R_x, R_y): R_x = 2 max(1, ||x1||, ||x*||); R_y bounds every ||y_m*(x)||, ||y_x|| on it."""
        R_x = 2 * max(1.0, float(np.linalg.norm(self.initial_point())), float(np.linalg.norm(self.x_star)))
        inv = np.linalg.norm(self.A_inv, 2, axis=(1, 2))
        R_y = inv * (np.linalg.norm(self.B, 2, axis=(1, 2)) * R_x + np.linalg.norm(self.c, axis=1))
        R_bar = np.linalg.norm(np.linalg.inv(self.A_bar), 2) * (np.linalg.norm(self.B_bar, 2) * R_x
                                                                + np.linalg.norm(self.c.mean(0)))
        return R_x, float(max(R_y.max(), R_bar))

    def constants(self) -> dict[str, Constant]:
        return dict(self._constants)

    @cached_property
    def _constants(self) -> dict[str, Constant]:
        M, p, d = self.num_clients, self.dim_x, self.dim_y
        mu = self.mu
        L_g = joint_hessian_norm(self.A, self.B)
        L = max(L_g, 1.0, self.rho)
        kappa = L / mu
        R_x, R_y = self.ball
        def pair(a):
            return float(max((np.linalg.norm(a[i] - a[j], 2) if a.ndim == 3 else np.linalg.norm(a[i] - a[j]))
                                           for i in range(M) for j in range(M)))
        zeta_gyy, zeta_gxy = pair(self.A), pair(self.B)
        if self.upper == "quadratic":
            C_f = float(np.sqrt((self.rho * (R_x + np.linalg.norm(self.e_m, axis=1))) ** 2
                                + (R_y + np.linalg.norm(self.d_m, axis=1)) ** 2).max())
            cf_how = f"max_m ||grad f_m|| on ||x|| <= {R_x:.3g}, ||y|| <= {R_y:.3g} (quadratic f: no global C_f)"
            zeta_f = float(max(np.sqrt(self.rho**2 * np.sum((self.e_m[i] - self.e_m[j]) ** 2)
                                       + np.sum((self.d_m[i] - self.d_m[j]) ** 2)) for i in range(M) for j in range(M)))
        else:
            C_f = self.delta * np.sqrt(d + self.rho**2 * p)
            cf_how = "delta sqrt(d + rho^2 p): |psi'| < delta (global)"
            def cap(r):
                return np.minimum(np.abs(r), 2 * self.delta)
            zeta_f = float(max(np.sqrt(np.sum(cap(self.d_m[i] - self.d_m[j]) ** 2)
                                       + self.rho**2 * np.sum(cap(self.e_m[i] - self.e_m[j]) ** 2))
                               for i in range(M) for j in range(M)))
        zeta_g = float(max((zeta_gyy * R_y + np.linalg.norm(self.B[i] - self.B[j], 2) * (R_x + 0 * R_y)
                            + np.linalg.norm(self.c[i] - self.c[j])) for i in range(M) for j in range(M)))
        zeta_gstar = float(max(np.linalg.norm(self.A_inv[i] @ self.c[i] - self.A_inv[j] @ self.c[j])
                               + np.linalg.norm(self.A_inv[i] @ self.B[i] - self.A_inv[j] @ self.B[j], 2) * R_x
                               for i in range(M) for j in range(M)))
        Lhat = (1 + kappa) * L  # [DERIVED] with L_xy = L_y2 = 0 (g quadratic)
        # exact: Lipschitz constants of Phi_m jointly in (x, y), and of grad h
        Bt_Ai = np.swapaxes(self.B, 1, 2) @ self.A_inv
        Lhat_exact = float(np.sqrt(self.rho**2 + np.linalg.norm(Bt_Ai, 2, axis=(1, 2)) ** 2).max())
        K = np.linalg.solve(self.A_bar, self.B_bar)
        Lbar_exact = float(self.rho + np.linalg.norm(K, 2) ** 2) if self.setting == "global" else \
            float(np.linalg.norm(self.rho * np.eye(p) + np.swapaxes(self.A_inv @ self.B, 1, 2) @ (self.A_inv @ self.B),
                                 2, axis=(1, 2)).max())
        x1 = self.initial_state()
        if self.setting == "global":
            dy = float(np.sum((x1["y"] - self.y_star(x1["x"])) ** 2))
            du = float(np.sum((x1["v"] - self.u_star(x1["x"])) ** 2))
        else:
            dy = float(np.sum((x1["y"] - self.y_star_clients(x1["x"])) ** 2, axis=-1).mean())
            du = 0.0
        sigma_g, noise_how = self._noise_levels(R_x, R_y)
        sigma = max(self.sigma_f, sigma_g, self.sigma_J, self.sigma_H)
        return {
            "mu": Constant(mu, "min_m lambda_min(A_m) (eigvalsh)"),
            "L": Constant(L, "max(max_m ||joint Hessian of g_m||_2, max(1, rho)) (spec §6.1)"),
            "kappa": Constant(kappa, "L / mu"),
            "L_xy": Constant(0.0, "g_m quadratic: grad_xy g_m constant"),
            "L_y2": Constant(0.0, "g_m quadratic: grad_yy g_m constant"),
            "L_tilde": Constant(L, "sqrt(L^2 + 2 L_xy^2 C_f^2/mu^2) = L (L_xy = L_y2 = 0)"),
            "Lhat": Constant(Lhat, "(1 + kappa) L + C_f L_xy/mu + kappa C_f L_y2/mu ([DERIVED], spec §3.3)"),
            "Lbar": Constant((1 + kappa) * Lhat, "(1 + kappa) Lhat ([DERIVED], spec §3.3)"),
            "Lhat_exact": Constant(Lhat_exact, "max_m sqrt(rho^2 + ||B_m^T A_m^-1||^2) (spec §6.3)"),
            "Lbar_exact": Constant(Lbar_exact, "||Hessian of h||_2 for the quadratic instance (spec §6.1, §6.3)"),
            "C_f": Constant(C_f, cf_how),
            "zeta_f": Constant(zeta_f, "max_{m,j} ||grad f_m - grad f_j|| (z-independent for quadratic f)"),
            "zeta_g": Constant(zeta_g, f"max_{{m,j}} ||grad g_m - grad g_j|| on the ball (R_x = {R_x:.3g})"),
            "zeta_gxy": Constant(zeta_gxy, "max_{m,j} ||B_m - B_j||_2"),
            "zeta_gyy": Constant(zeta_gyy, "max_{m,j} ||A_m - A_j||_2"),
            "zeta_gstar": Constant(zeta_gstar, f"max_{{m,j}} ||y_m*(x) - y_j*(x)|| on the ball (R_x = {R_x:.3g})"),
            "sigma": Constant(sigma, "max of the per-oracle sigmas (the paper's one sigma, spec §6.0)"),
            "sigma_f": Constant(self.sigma_f, noise_how["f"]), "sigma_g": Constant(sigma_g, noise_how["g"]),
            "sigma_J": Constant(self.sigma_J, noise_how["J"]), "sigma_H": Constant(self.sigma_H, noise_how["H"]),
            "Delta": Constant(float(self.value(x1["x"]) - self.value(self.x_star)), "h(x1) - h(x*) (exact)"),
            "Delta_y": Constant(dy, "||y1 - y_x1||^2 (local: mean over clients)"),
            "Delta_u": Constant(du, "||u1 - u_x1||^2"),
            "R_x": Constant(R_x, "radius of the x ball the state-dependent constants are taken on"),
            DIST0: Constant(float(np.sum((x1["x"] - self.x_star) ** 2)), "||x1 - x*||^2, x* in closed form"),
        }

    def _noise_levels(self, R_x: float, R_y: float) -> tuple[float, dict[str, str]]:
        """sigma_g (state-dependent under N2 with matrix rows) and how each sigma is known."""
        if self.rows_f is None:
            return self.sigma_g, {k: f"N1 on {o}: E||noise||^2 = sigma^2 exactly" for k, o in
                                  (("f", "grad f"), ("g", "grad_y g"), ("J", "grad_xy g (Frobenius)"),
                                   ("H", "grad_yy g (Frobenius)"))}
        rows = "N2: (1/K) sum_i ||row_i - client mean||^2 = sigma^2 exactly on every client"
        how = {"f": f"{rows} (rows of d_m, e_m)", "g": f"{rows} (rows of c_m)",
               "J": f"{rows} (rows B_m,i, Frobenius)" if self.rows_B is not None else "N1 on grad_xy g (Frobenius)",
               "H": f"{rows} (rows A_m,i, Frobenius)" if self.rows_A is not None else "N1 on grad_yy g (Frobenius)"}
        if self.rows_A is None and self.rows_B is None:
            return self.sigma_g, how
        # grad_y g(z; i) - grad_y g_m(z) = dA_i y - dB_i x + r_i: by Minkowski in L2 over the rows, its root mean
        # square is at most ||E dA^T dA||^(1/2) R_y + ||E dB^T dB||^(1/2) R_x + sigma_g on the ball
        assert self.rows_g is not None  # N2 rows of c_m
        def gram(r):
            return 0.0 if r is None else np.sqrt(np.linalg.eigvalsh(np.einsum("mkij,mkil->mjl", r, r)
                                                                                   / r.shape[1])[:, -1])
        rms_c = np.sqrt((self.rows_g**2).sum(-1).mean(1))
        bound = float((gram(self.rows_A) * R_y + gram(self.rows_B) * R_x + rms_c).max())
        how["g"] = (f"N2 with matrix rows, state-dependent: an upper bound of sup over the C_f ball (||x|| <= "
                    f"{R_x:.3g}, ||y|| <= {R_y:.3g}) of max_m ((1/K) sum_i ||grad_y g(z; i) - grad_y g_m(z)||^2)^(1/2), "
                    "||E dA^T dA||^(1/2) R_y + ||E dB^T dB||^(1/2) R_x + (E||dc||^2)^(1/2) (Minkowski over the rows)")
        return bound, how


def _zero_sum(rng: np.random.Generator, M: int, shape: tuple[int, ...]) -> np.ndarray:
    z = rng.standard_normal((M, *shape))
    return z - z.mean(0)


@declare(
    test=Param.choice("spec §6 test: A (drift-free), B (heterogeneous A_m, B_m), C1/C2 (local lower level, "
                      "shared/heterogeneous A_m, B_m), D (pseudo-Huber, antisymmetric pairs), Dp (D', asymmetric)",
                      FEDBIO_TESTS),
    setting=Param.choice("lower level: 'global' (eq. (1)) or 'local' (eq. (5)); null: the test's own",
                         SETTINGS, nullable=True),
    dim_x=Param.int("p, dimension of x", low=1, high=1000),
    dim_y=Param.int("d, dimension of y", low=1, high=1000),
    clients=Param.int("M, number of clients (all participate)", low=1, high=4096),
    a_min=Param.real("smallest eigenvalue of A_bar", positive=True),
    a_max=Param.real("largest eigenvalue of A_bar", positive=True),
    b=Param.real("B_bar = b I (needs p == d); null: Gaussian B_bar", nullable=True),
    rho=Param.real("weight rho of the x-part of f_m", positive=True),
    delta=Param.real("pseudo-Huber scale delta (Tests D, Dp)", positive=True),
    s=Param.real("scale of the zero-sum offsets of c_m, d_m, e_m", low=0.0),
    s_H=Param.real("Hessian heterogeneity: A_m = A_bar + s_H Delta_m, ||Delta_m|| <= 1", low=0.0),
    s_B=Param.real("Jacobian heterogeneity: B_m = B_bar + s_B Gamma_m", low=0.0),
    sigma_f=Param.real("N1 noise on grad f (E||.||^2 over (x, y))", low=0.0),
    sigma_g=Param.real("N1 noise on grad_y g", low=0.0),
    sigma_J=Param.real("N1 noise on grad_xy g (Frobenius)", low=0.0),
    sigma_H=Param.real("N1 noise on grad_yy g (symmetric, Frobenius), < mu", low=0.0),
    start=Param.choice("x1 = y1 = u1 = 0 ('zero') or the solution ('solution', for floors)", ("zero", "solution")),
    seed=Param.int("seed of the instance construction", low=0),
    finite_sum=Param.int("N2: K samples per client replacing N1 (each oracle's rows have mean square sigma^2 "
                         "exactly); 0: N1", low=0, high=10**6),
    replacement=Param.bool("N2 minibatches drawn with replacement (default: without, spec §6)"),
    finite_sum_matrices=Param.bool("N2 samples carry their own A_m,i (spread sigma_H) and B_m,i (spread sigma_J), "
                                   "means exactly A_m, B_m: the Jacobian, Hessian and grad_y g oracles are row draws "
                                   "and grad_y g's noise depends on (x, y) (spec §6.0 N2, the default); false: rows "
                                   "of c_m, d_m, e_m only, the Jacobian and Hessian keep N1"),
)
def make_fedbio(test: str = "A", setting: str | None = None, dim_x: int = 2, dim_y: int = 2, clients: int = 4,
                a_min: float = 1.0, a_max: float = 4.0, b: float | None = 1.0, rho: float = 1.0, delta: float = 1.0,
                s: float = 1.0, s_H: float = 0.0, s_B: float = 0.0, sigma_f: float = 0.0, sigma_g: float = 0.0,
                sigma_J: float = 0.0, sigma_H: float = 0.0, start: str = "zero", seed: int = 0, finite_sum: int = 0,
                replacement: bool = False, finite_sum_matrices: bool = True) -> FedBilevel:
    """Build a spec §6 test problem. A_bar = diag(linspace(a_min, a_max, d)), B_bar = b I; with p = d = 2
    and the defaults the base vectors are the spec's worked instance (c_bar = (1, 0), d_bar = (0, 1),
    e_bar = 0; x* = (-1/2, 4/17)). Client offsets are zero-sum (so x* does not move with s, M), drawn
    from a generator keyed by (seed, M); Tests A, C1, D, Dp keep A_m = A_bar, B_m = B_bar.
    finite_sum = K gives N2 (spec §6.0): K samples per client, centred on the client's data, each oracle's
    rows scaled to mean square sigma^2 exactly (sigma_f, sigma_g; with finite_sum_matrices also sigma_J for
    B_m,i - B_m and sigma_H for the symmetric A_m,i - A_m)."""
    params = dict(locals())
    if a_max < a_min:
        raise ParamError("fedbio_bilevel", "a_max", a_max, f"must be >= a_min = {a_min}")
    if b is not None and dim_x != dim_y:
        raise ParamError("fedbio_bilevel", "b", b, f"B_bar = b I needs dim_x == dim_y, got {dim_x}, {dim_y}")
    hetero = test in ("B", "C2")
    if not hetero and (s_H or s_B):
        raise ParamError("fedbio_bilevel", "s_H" if s_H else "s_B", s_H or s_B,
                         f"test {test} has shared A_m, B_m; use test B or C2 for Hessian/Jacobian heterogeneity")
    if s_H >= a_min:
        raise ParamError("fedbio_bilevel", "s_H", s_H, f"must be < a_min = {a_min} so every A_m stays positive definite")
    setting = setting or ("local" if test in ("C1", "C2") else "global")
    upper = "pseudo_huber" if test in ("D", "Dp") else "quadratic"
    rng = np.random.default_rng(seed)
    A_bar = np.diag(np.linspace(a_min, a_max, dim_y))
    B_bar = b * np.eye(dim_y) if b is not None else rng.standard_normal((dim_y, dim_x)) / np.sqrt(dim_x)
    if dim_x == dim_y == 2 and b == 1.0 and (a_min, a_max) == (1.0, 4.0):
        c_bar, d_bar, e_bar = np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.zeros(2)  # spec §6.1 worked
    else:
        c_bar, d_bar, e_bar = rng.standard_normal(dim_y), rng.standard_normal(dim_y), rng.standard_normal(dim_x)
    dev = np.random.default_rng([seed, clients])
    M = clients
    if test == "D":  # antisymmetric pairs around (x*, d*): c_bar = A d* - B x* (spec §6.4)
        x_s, d_s = rng.standard_normal(dim_x), rng.standard_normal(dim_y)
        c_bar = A_bar @ d_s - B_bar @ x_s
        sign = np.where(np.arange(M) % 2 == 0, 1.0, -1.0)[:, None]
        if M % 2:
            sign[-1] = 0.0
        def pairs(k):
            return np.repeat(dev.standard_normal((M // 2 + 1, k)), 2, axis=0)[:M] * sign
        d_m, e_m = d_s + s * pairs(dim_y), x_s + s * pairs(dim_x)
        c = c_bar + s * _matvec(A_bar, pairs(dim_y))
    else:
        c = c_bar + s * _zero_sum(dev, M, (dim_y,))
        d_m = d_bar + s * _zero_sum(dev, M, (dim_y,))
        e_m = e_bar + s * _zero_sum(dev, M, (dim_x,))
    A = np.repeat(A_bar[None], M, axis=0)
    B = np.repeat(B_bar[None], M, axis=0)
    if hetero:  # zero-sum symmetric Delta_m with ||Delta_m|| <= 1, zero-sum Gamma_m (spec §6.2)
        Dm = dev.standard_normal((M, dim_y, dim_y))
        Dm = Dm + np.swapaxes(Dm, 1, 2)
        Dm -= Dm.mean(0)
        Dm /= max(1.0, float(np.linalg.norm(Dm, 2, axis=(1, 2)).max()))
        A = A + s_H * Dm
        Gm = _zero_sum(dev, M, (dim_y, dim_x))
        B = B + s_B * Gm / max(1.0, float(np.linalg.norm(Gm, 2, axis=(1, 2)).max()))
    rows_f = rows_g = rows_A = rows_B = None
    if finite_sum:
        if finite_sum < 2:
            raise ParamError("fedbio_bilevel", "finite_sum", finite_sum, "needs K >= 2 rows per client (0: N1)")
        gen = np.random.default_rng([seed, clients, finite_sum])
        rows_f = np.concatenate([_rows(gen, M, finite_sum, dim_x, sigma_f * np.sqrt(dim_x / (dim_x + dim_y))),
                                 _rows(gen, M, finite_sum, dim_y, sigma_f * np.sqrt(dim_y / (dim_x + dim_y)))], axis=-1)
        rows_g = _rows(gen, M, finite_sum, dim_y, sigma_g)
        if finite_sum_matrices:  # drawn after the offsets' rows: those do not change with this flag
            if sigma_H > 0:
                N = gen.standard_normal((M, finite_sum, dim_y, dim_y))
                rows_A = _rows(gen, M, finite_sum, dim_y * dim_y, sigma_H,
                               0.5 * (N + np.swapaxes(N, -1, -2)).reshape(M, finite_sum, -1)).reshape(N.shape)
            if sigma_J > 0:
                rows_B = _rows(gen, M, finite_sum, dim_y * dim_x, sigma_J).reshape(M, finite_sum, dim_y, dim_x)
    return FedBilevel(test=test, setting=setting, upper=upper, A=A, B=B, c=c, d_m=d_m, e_m=e_m, rho=float(rho),
                      delta=float(delta), sigma_f=float(sigma_f), sigma_g=float(sigma_g), sigma_J=float(sigma_J),
                      sigma_H=float(sigma_H), start=start, spec_params=params, rows_f=rows_f, rows_g=rows_g,
                      replacement=bool(replacement), rows_A=rows_A, rows_B=rows_B)


def _rows(gen: np.random.Generator, M: int, K: int, k: int, scale: float, z: np.ndarray | None = None) -> np.ndarray:
    """K zero-mean rows per client (M, K, k) with (1/K) sum_i ||row_i||^2 = scale^2 exactly: a finite sum whose
    single-sample variance equals N1's for the same sigma. ``z``: the raw rows (default: i.i.d. normal)."""
    z = gen.standard_normal((M, K, k)) if z is None else z
    z -= z.mean(1, keepdims=True)  # each client's rows average to its own data
    return z * scale / np.sqrt((z**2).sum(-1).mean(1, keepdims=True))[..., None]


# =============================================================================================
# Search space of the SimFBO family (issue #13): hypothesis strategies for hunts and property tests.


def simfbo_strategy(**fixed: Any):
    """A hypothesis strategy of SimFBO-family instances (parameters of ``make``), for hunts and property
    tests; keyword arguments fix a parameter (a value) or replace its strategy.

    Ranges are those the family builds quickly and well-posed: d_x, d_y <= 3, 1..8 clients, mu_g in
    [0.1, 5] with a_max/a_min <= 10, noise and heterogeneity up to 2. Relative draws keep every
    instance valid: the Hessian spread stays below mu_g/2 (so every A_i is positive definite) and the
    Hessian noise sigma_h below the smallest client curvature; the pseudo-Huber and nonconvex shapes
    get B = b I with b != 0 and d_x = d_y, as ``make`` requires.
    """
    from hypothesis import strategies as st

    from ratecheck.strategies import finite_floats, fixed_draws  # start-up: hypothesis loads when a hunt draws

    number = finite_floats
    base = {
        "upper": st.sampled_from(UPPERS),
        "dim_x": st.integers(min_value=1, max_value=3),
        "dim_y": st.integers(min_value=1, max_value=3),
        "clients": st.integers(min_value=1, max_value=8),
        "a_min": number(0.1, 5.0),
        "a_ratio": number(1.0, 10.0),  # a_max / a_min
        "b": st.one_of(st.none(), number(0.2, 3.0)),
        # lam > 0: with lam = 0 and d_x > d_y P1's Hessian M'M is singular (no unique x*; make refuses it, naming lam)
        "lam": number(0.05, 2.0),
        "delta": number(0.2, 5.0),
        "zeta": number(0.0, 2.0),
        "spread_fraction": number(0.0, 0.45),  # hessian_spread / a_min
        "sigma_f": number(0.0, 2.0),
        "sigma_g": number(0.0, 2.0),
        "sigma_h_fraction": number(0.0, 0.9),  # sigma_h / (smallest client curvature)
        "start": st.one_of(st.just("zero"), number(-3.0, 3.0)),
        "seed": st.integers(min_value=0, max_value=3),
    }
    base.update(fixed_draws(fixed))

    def to_params(drawn: dict[str, Any]) -> dict[str, Any]:
        params = dict(drawn)
        a_min = params["a_min"]
        params["a_max"] = a_min * params.pop("a_ratio")
        spread = a_min * params.pop("spread_fraction")
        params.setdefault("hessian_spread", spread)
        # client curvatures are >= a_min - 2 spread (p-centred u_i in [-1, 1]); N2 noise must stay below
        params.setdefault("sigma_h", params.pop("sigma_h_fraction") * (a_min - 2 * params["hessian_spread"]))
        if params["upper"] != "quadratic":  # B = b I with b != 0 and d_x = d_y (make's rule)
            params["b"] = params["b"] if params["b"] else 1.0
            params["dim_x"] = params["dim_y"]
        elif params["b"] is not None:
            params["dim_x"] = params["dim_y"]
        return params

    return st.fixed_dictionaries(base).map(to_params)


# =============================================================================================
# Search space of the FedBiO family (issue #13): hypothesis strategies for hunts and property tests.


def fedbio_strategy(**fixed: Any):
    """A hypothesis strategy of fedbio_bilevel instances (parameters of ``make_fedbio``), for hunts and
    property tests; keyword arguments fix a parameter (a value) or replace its strategy.

    Every test of spec §6 (A, B and C2 quadratic with global or local lower levels, C1, and the
    pseudo-Huber D, D'), on the ranges the family builds quickly and well-posed: p = d <= 3 (B_bar = b I),
    2..6 clients, A_bar's spectrum in [a_min, a_min a_ratio] with a_min in [0.5, 2], a_ratio <= 5;
    offsets s, Jacobian heterogeneity s_B up to 1.5; the Hessian heterogeneity a fraction of a_min below
    0.9 (every A_m stays positive definite); additive N1 noise on grad f and grad_y g up to 1, exactly 0
    half the time. Tests with shared A_m, B_m get s_H = s_B = 0 (make_fedbio's rule). Jacobian and Hessian
    noise stay 0: they multiply the state, so runs would no longer be exact expectations
    (ratecheck.exact); fix them to search with them.
    """
    from hypothesis import strategies as st

    from ratecheck.strategies import finite_floats, fixed_draws  # start-up: hypothesis loads when a hunt draws

    number = finite_floats
    base = {
        "test": st.sampled_from(FEDBIO_TESTS),
        "dim": st.integers(min_value=1, max_value=3),
        "clients": st.integers(min_value=2, max_value=6),
        "a_min": number(0.5, 2.0),
        "a_ratio": number(1.0, 5.0),
        "b": number(0.2, 2.0),
        "delta": number(0.3, 3.0),  # pseudo-Huber scale (Tests D, D')
        "s": number(0.0, 1.5),
        "s_H_fraction": number(0.0, 0.9),  # s_H / a_min
        "s_B": number(0.0, 1.5),
        # noise-free instances half the time: the structure of a bound shows there, noise adds to both sides
        "sigma_f": st.one_of(st.just(0.0), number(0.0, 1.0)),
        "sigma_g": st.one_of(st.just(0.0), number(0.0, 1.0)),
        "sigma_J": st.just(0.0),
        "sigma_H": st.just(0.0),
        "start": st.sampled_from(("solution", "zero")),
        "seed": st.integers(min_value=0, max_value=3),
    }
    base.update(fixed_draws(fixed))

    def to_params(drawn: dict[str, Any]) -> dict[str, Any]:
        params = dict(drawn)
        params["dim_x"] = params["dim_y"] = params.pop("dim")
        params["a_max"] = params["a_min"] * params.pop("a_ratio")
        params["s_H"] = params["a_min"] * params.pop("s_H_fraction")
        if params["test"] not in ("B", "C2"):  # shared A_m, B_m
            params["s_H"] = params["s_B"] = 0.0
        return params

    return st.fixed_dictionaries(base).map(to_params)
