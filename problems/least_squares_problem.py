"""The federated over-parameterized least-squares problem (the family, its data recipe and its outer losses are
described in problems/least_squares.py, which builds it): outer losses, closed forms, oracles, certified constants."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ratecheck.assumptions import (
    DIST0,
    SELECTION,
    Assumption,
    bounded_variance,
    heterogeneity,
    initial_distance,
    initial_gap,
    other,
    sharpness,
    smooth,
    strongly_convex,
    structure,
)
from ratecheck.problem import CompositeFederatedProblem, Constant
from ratecheck.seeding import ReplicaStream

OUTERS = ("tp1", "tp2a", "tp2b", "tp3a", "tp3b", "none")
CONVENTIONS = ("half", "paper")  # F_lambda = f + dist^2/(2 lam) (package) or f + dist^2/lam (paper, I18)


# ------------------------------------------------------------------------------------------------
# Outer losses


@dataclass(frozen=True, eq=False)
class QuadraticOuter:
    """f_i(x) = 1/2 x^T P x - q_i^T x + k_i (a shared, possibly singular or indefinite P)."""

    P: np.ndarray  # (n, n)
    q: np.ndarray  # (N, n)
    k: np.ndarray  # (N,)
    separable_clients: ClassVar[bool] = True
    # derived in __post_init__ (not parameters)
    q_bar: np.ndarray = field(init=False, repr=False, compare=False)
    k_bar: float = field(init=False, repr=False, compare=False)

    def client_grad(self, clients: np.ndarray, w: np.ndarray, gathered: Any) -> np.ndarray:
        return w @ self.P - gathered

    def gather(self, clients: np.ndarray) -> Any:
        return self.q[clients]

    def __post_init__(self) -> None:
        object.__setattr__(self, "q_bar", self.q.mean(axis=0))
        object.__setattr__(self, "k_bar", float(self.k.mean()))

    def value(self, x: np.ndarray) -> np.ndarray:
        return ((0.5 * (x @ self.P) - self.q_bar) * x).sum(axis=-1) + self.k_bar

    def grad(self, x: np.ndarray) -> np.ndarray:
        return x @ self.P - self.q_bar

    def client_values(self, x: np.ndarray) -> np.ndarray:
        """f_i(x) for every client at one point x (n,): (N,)."""
        return 0.5 * x @ self.P @ x - self.q @ x + self.k

    def hessian(self) -> np.ndarray:
        return self.P


@dataclass(frozen=True, eq=False)
class SeparableOuter:
    """f(x) = w sum_j phi((V^T x)_j - o_j), the same on every client (globally known, Problem (2))."""

    V: np.ndarray
    o: np.ndarray
    weight: float
    kind: str  # 'huber' (phi = Huber_mu with mu = smoothing) or 'geman_mcclure'
    smoothing: float = 1.0
    separable_clients: ClassVar[bool] = False

    def _phi(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.kind == "huber":
            mu = self.smoothing
            a = np.abs(u)
            value = np.where(a <= mu, u * u / (2 * mu), a - mu / 2)
            return value, np.clip(u / mu, -1.0, 1.0)
        d = 1.0 + u * u
        return u * u / d, 2 * u / (d * d)

    def gather(self, clients: np.ndarray) -> Any:
        return None

    def client_grad(self, clients: np.ndarray, w: np.ndarray, gathered: Any) -> np.ndarray:
        return self.grad(w)

    def value(self, x: np.ndarray) -> np.ndarray:
        return self.weight * self._phi(x @ self.V - self.o)[0].sum(axis=-1)

    def grad(self, x: np.ndarray) -> np.ndarray:
        return self.weight * (self._phi(x @ self.V - self.o)[1] @ self.V.T)


@dataclass(frozen=True)
class LeastSquaresBatch:
    A: np.ndarray  # (R, m, rows, n)
    b: np.ndarray  # (R, m, rows)
    outer: Any  # the outer loss's gathered client data (or None)


# ------------------------------------------------------------------------------------------------
# The problem


@dataclass(frozen=True, eq=False)
class LeastSquares(CompositeFederatedProblem):
    """Federated least squares h (possibly with an outer selection loss f); see the module doc."""

    family: ClassVar[str] = "least_squares"
    assumptions: ClassVar[tuple[Assumption, ...]] = SELECTION.assume(
        smooth("L_h", "L_f", "L", "L_max", "lambda_max"), strongly_convex("mu_f"),
        sharpness("lambda_min_plus", "alpha", "kappa"), bounded_variance("sigma_h", "sigma_f"),
        heterogeneity("G_h2", "G_f2", "gradf_star", "c_f"), initial_gap("h_star", "f_star", "inf_f", "M", "F_star"),
        initial_distance(DIST0), structure("N", "lam"), other("F_lambda_star", text="F_lambda* = min of the Moreau-smoothed F"))
    non_quadratic_measures: ClassVar[frozenset[str]] = frozenset(
        {"dist", "abs_f_gap", "inner_feas", "y_feas"})

    A: np.ndarray  # (N, rows, n)
    b: np.ndarray  # (N, rows)
    V1: np.ndarray  # (n, r) orthonormal basis of the row space of A
    outer: Any  # QuadraticOuter | SeparableOuter | None
    x0: np.ndarray
    sigma: float = 0.0  # sigma_h (additive noise of the h oracle)
    sigma_f: float = 0.0
    row_scale: float = 1.0
    batch_rows: int | None = None  # mini-batch row sampling (P4) instead of additive noise
    eta_ref: float | None = None  # measure distances to x*_eta at this eta (TP4)
    lam: float | None = None  # Moreau parameter of F_lambda (TP3)
    convention: str = "half"
    spec_params: Mapping[str, Any] = field(default_factory=dict)
    # derived in __post_init__ (not parameters)
    H: np.ndarray = field(init=False, repr=False, compare=False)
    g: np.ndarray = field(init=False, repr=False, compare=False)
    x_ls: np.ndarray = field(init=False, repr=False, compare=False)
    z1: np.ndarray = field(init=False, repr=False, compare=False)
    H_row: np.ndarray = field(init=False, repr=False, compare=False)
    h_star: float = field(init=False, repr=False, compare=False)
    b_sq: float = field(init=False, repr=False, compare=False)
    V2: np.ndarray = field(init=False, repr=False, compare=False)
    null_projector: np.ndarray = field(init=False, repr=False, compare=False)
    x_star: np.ndarray = field(init=False, repr=False, compare=False)
    f_star: float = field(init=False, repr=False, compare=False)
    x_eta: np.ndarray = field(init=False, repr=False, compare=False)
    f_eta_star: float = field(init=False, repr=False, compare=False)
    y_stat: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        A = np.asarray(self.A, dtype=float)
        b = np.asarray(self.b, dtype=float)
        N, rows, n = A.shape
        object.__setattr__(self, "num_clients", N)
        object.__setattr__(self, "dim", n)
        s = self.row_scale
        H = s * np.einsum("nki,nkj->ij", A, A) / N
        g = s * np.einsum("nki,nk->i", A, b) / N
        flat_A, flat_b = A.reshape(-1, n), b.reshape(-1)
        x_ls = np.linalg.lstsq(flat_A, flat_b, rcond=None)[0]
        V1 = self.V1
        z1 = V1.T @ x_ls
        residual = flat_b - flat_A @ x_ls
        object.__setattr__(self, "H", H)
        object.__setattr__(self, "g", g)
        object.__setattr__(self, "x_ls", x_ls)
        object.__setattr__(self, "z1", z1)
        object.__setattr__(self, "H_row", V1.T @ H @ V1)  # (r, r), positive definite
        object.__setattr__(self, "h_star", float(s * residual @ residual / (2 * N)))
        object.__setattr__(self, "b_sq", float(s * flat_b @ flat_b / (2 * N)))
        null = np.eye(n) - V1 @ V1.T
        object.__setattr__(self, "V2", _complement(V1))
        object.__setattr__(self, "null_projector", null)
        x_star = self._select()
        object.__setattr__(self, "x_star", x_star)
        if self.outer is not None:
            object.__setattr__(self, "f_star", float(self.outer.value(x_star)))
        if self.eta_ref is not None:
            x_eta = self.regularized_solution(self.eta_ref)
            object.__setattr__(self, "x_eta", x_eta)
            object.__setattr__(self, "f_eta_star", float(self.h_gap(x_eta) + self.eta_ref * self.outer.value(x_eta)))
        if self.lam is not None:
            object.__setattr__(self, "y_stat", self.smoothed_stationary_point())

    # -- identity --------------------------------------------------------------------------------
    @property
    def params(self) -> Mapping[str, Any]:
        return self.spec_params

    def initial_point(self) -> np.ndarray:
        return self.x0

    # -- geometry of X*_h ----------------------------------------------------------------------
    def project(self, y: np.ndarray) -> np.ndarray:
        """Pi_{X*_h}(y) = y - V_1 (V_1^T y - z_1), for points (..., n)."""
        return y - (y @ self.V1 - self.z1) @ self.V1.T

    def dist_sq(self, y: np.ndarray) -> np.ndarray:
        r = y @ self.V1 - self.z1
        return (r * r).sum(axis=-1)

    def h_gap(self, y: np.ndarray) -> np.ndarray:
        """h(y) - h* = 1/2 (y - Pi y)^T H_h (y - Pi y), without cancellation."""
        r = y @ self.V1 - self.z1
        return 0.5 * ((r @ self.H_row) * r).sum(axis=-1)

    def h_value(self, y: np.ndarray) -> np.ndarray:
        return self.h_star + self.h_gap(y)

    def h_grad(self, y: np.ndarray) -> np.ndarray:
        return y @ self.H - self.g

    # -- solutions -------------------------------------------------------------------------------
    def _select(self) -> np.ndarray:
        """The bilevel solution x* = argmin_{X*_h} f (unique for every built-in outer loss)."""
        base = self.V1 @ self.z1
        outer = self.outer
        if outer is None:
            return self.x_ls.copy()  # the minimum-norm solution A^+ b
        V2 = self.V2
        if isinstance(outer, QuadraticOuter):
            reduced = V2.T @ outer.P @ V2
            if V2.shape[1] and np.linalg.eigvalsh(reduced).min() <= 1e-12:
                raise ValueError("the outer loss is not strongly convex on the null space: x* is not unique")
            if V2.shape[1] == 0:
                return base
            u = np.linalg.solve(reduced, V2.T @ (outer.q.mean(axis=0) - outer.P @ base))
            return base + V2 @ u
        # separable in the V coordinates: the free (null-space) coordinates sit at their minimizers o_j
        r = self.V1.shape[1]
        z = np.concatenate([self.z1, outer.o[r:]])
        return outer.V @ z

    def regularized_solution(self, eta: float) -> np.ndarray:
        """x*_eta = argmin h + eta f (quadratic outer losses): (H_h + eta P)^{-1} (g_h + eta q_bar)."""
        if not isinstance(self.outer, QuadraticOuter):
            raise ValueError("x*_eta in closed form needs a quadratic outer loss (tp1, tp2a, tp3b)")
        return np.linalg.solve(self.H + eta * self.outer.P, self.g + eta * self.outer.q.mean(axis=0))

    @property
    def moreau_weight(self) -> float:
        """c in grad F_lambda = grad f + c (y - Pi y): 1/lam (package) or 2/lam (paper's literal F)."""
        assert self.lam is not None, "the Moreau weight needs lam"
        return (1.0 if self.convention == "half" else 2.0) / self.lam

    def smoothed_grad(self, y: np.ndarray) -> np.ndarray:
        return self.outer.grad(y) + self.moreau_weight * (y - self.project(y))

    def smoothed_value(self, y: np.ndarray) -> np.ndarray:
        return self.outer.value(y) + 0.5 * self.moreau_weight * self.dist_sq(y)

    def smoothed_stationary_point(self) -> np.ndarray:
        """The stationary point of F_lambda (unique for tp3a with lam_eff < 2/w, and for tp3b)."""
        c = self.moreau_weight
        outer = self.outer
        if isinstance(outer, QuadraticOuter):
            V1 = self.V1
            M = outer.P + c * V1 @ V1.T
            if np.linalg.eigvalsh(M).min() <= 0:
                raise ValueError("F_lambda is not strongly convex here (Q_f + V_1 V_1^T/lam must be PD): lower lam")
            return np.linalg.solve(M, outer.q.mean(axis=0) + c * V1 @ self.z1)
        # tp3a: V = [V_1 | V_2] are the loss's own coordinates; the row-space ones solve a scalar root
        r = self.V1.shape[1]
        w = outer.weight
        if 1.0 / c >= 2.0 / w:
            raise ValueError(f"tp3a needs lam_eff = {1 / c:g} < 2/w = {2 / w:g} for a unique stationary point")
        from scipy.optimize import brentq  # here, not at import: scipy.optimize slows `ratecheck list` (split-proofs)

        z = outer.o.copy()
        for j in range(r):  # instance construction only, r scalar roots

            def equation(v: float, j: int = j) -> float:
                u = v - outer.o[j]
                return w * 2 * u / (1 + u * u) ** 2 + c * (v - self.z1[j])

            lo, hi = sorted((self.z1[j], outer.o[j]))
            z[j] = brentq(equation, lo - 1.0, hi + 1.0, xtol=1e-15, rtol=1e-15)
        return outer.V @ z

    # -- oracles ---------------------------------------------------------------------------------
    def gather(self, clients: np.ndarray) -> LeastSquaresBatch:
        outer = self.outer.gather(clients) if self.outer is not None else None
        return LeastSquaresBatch(self.A[clients], self.b[clients], outer)

    def local_grad(self, batch: LeastSquaresBatch, w: np.ndarray) -> np.ndarray:
        """grad h_i(w) = s A_i^T (A_i w - b_i), (R, m, n)."""
        residual = (batch.A @ w[..., None])[..., 0] - batch.b
        grad = (residual[..., None, :] @ batch.A)[..., 0, :]
        if self.row_scale != 1.0:
            grad *= self.row_scale
        return grad

    def stochastic_grad(self, batch: LeastSquaresBatch, w: np.ndarray, noise: ReplicaStream) -> np.ndarray:
        """The h oracle: additive Gaussian noise, or (P4) a mini-batch of rows with replacement."""
        if self.batch_rows is None:
            return super().stochastic_grad(batch, w, noise)
        rows = batch.A.shape[2]
        pick = noise.integers(rows, (*w.shape[1:-1], self.batch_rows))  # (R, m, B)
        A = np.take_along_axis(batch.A, pick[..., None], axis=2)
        b = np.take_along_axis(batch.b, pick, axis=2)
        residual = np.einsum("rmkn,rmn->rmk", A, w) - b
        # (1/B) sum of sampled rows of s * rows * a (a^T w - b): unbiased for s A^T (A w - b)
        return np.einsum("rmkn,rmk->rmn", A, residual) * (self.row_scale * rows / self.batch_rows)

    def composite_grad(self, batch: LeastSquaresBatch, w: np.ndarray, eta: float, noise: ReplicaStream,
                       anchor: np.ndarray | None = None) -> np.ndarray:
        """grad h~_i(w, zeta) + eta grad f~_i(w, xi), zeta and xi independent (zeta drawn first).

        With ``anchor`` (R, n) the outer term is the exact proximal gradient eta (w - anchor) of
        g = 1/2||x - y||^2 (Algorithm 2's inner problem: no xi noise, spec pitfall 17).
        """
        grad = self.stochastic_grad(batch, w, noise)
        if eta == 0.0:
            return grad
        if anchor is not None:
            grad += eta * (w - anchor[:, None, :])
            return grad
        outer = self.outer.client_grad(None, w, batch.outer)
        if self.sigma_f != 0.0:
            xi = noise.normal(w.shape[1:])
            xi *= self.sigma_f / np.sqrt(self.dim)
            outer += xi
        outer *= eta
        grad += outer
        return grad

    def global_grads(self, x: np.ndarray, eta: float) -> np.ndarray:
        """Exact grad f_eta(x) = grad h + eta grad f at global points (R, n) (centralized baselines)."""
        grad = self.h_grad(x)
        return grad + eta * self.outer.grad(x) if eta and self.outer is not None else grad

    # -- measures ---------------------------------------------------------------------------------
    def point_measures(self, x: np.ndarray) -> dict[str, np.ndarray]:
        diff = x - self.x_star
        out = {"h_gap": self.h_gap(x), "dist_sq": (diff * diff).sum(axis=-1)}
        out["dist"] = np.sqrt(out["dist_sq"])
        if self.outer is not None:
            out["f_gap"] = self.outer.value(x) - self.f_star
            out["abs_f_gap"] = np.abs(out["f_gap"])
        else:  # plain least squares: the DeFedAvg names
            grad = self.h_grad(x)
            out["gap"] = out["h_gap"]
            out["grad_norm_sq"] = (grad * grad).sum(axis=-1)
        if self.eta_ref is not None:
            d = x - self.x_eta
            out["dist_sq_eta"] = (d * d).sum(axis=-1)
        return out

    def measures(self, point: Any) -> dict[str, np.ndarray]:
        """Measures of x (R, n), of {"x": average, "last": last iterate} (last ones prefixed 'last_'),
        or of {"y": outer iterate, "x": inner output} (Algorithm 2)."""
        if not isinstance(point, Mapping):
            return self.point_measures(point)
        if "y" in point:
            y, x = point["y"], point["x"]
            grad = self.smoothed_grad(y)
            dy = y - self.y_stat
            dx = x - self.project(point.get("anchor", y))  # x^t approximates Pi(y^t)
            return {
                "stat_sq": np.einsum("ri,ri->r", grad, grad),
                "y_dist_sq": np.einsum("ri,ri->r", dy, dy),
                "inner_err_sq": np.einsum("ri,ri->r", dx, dx),
                "inner_feas": np.sqrt(self.dist_sq(x)),
                "y_feas": np.sqrt(self.dist_sq(y)),
                "y_feas_sq": self.dist_sq(y),  # dist^2(y, X*_h): quadratic, so exact runs have it
            }
        out = self.point_measures(point["x"])
        if "last" in point:  # the last iterate enters Q~^2 (Thm 2); two measures keep rounds cheap
            last = point["last"]
            diff = last - self.x_star
            out["last_dist_sq"] = (diff * diff).sum(axis=-1)
            if self.outer is not None:
                out["last_f_gap"] = self.outer.value(last) - self.f_star
            if self.eta_ref is not None:
                d = last - self.x_eta
                out["last_dist_sq_eta"] = (d * d).sum(axis=-1)
                # f_eta(x) - f*_eta, with h - h* in its cancellation-free form
                out["last_gap_eta"] = self.h_gap(last) + self.eta_ref * self.outer.value(last) - self.f_eta_star
        return out

    # -- constants ---------------------------------------------------------------------------------
    def constants(self) -> dict[str, Constant]:
        s = self.row_scale
        N = self.num_clients
        client_eig = np.linalg.eigvalsh(s * np.einsum("nki,nkj->nij", self.A, self.A))
        eig_row = np.linalg.eigvalsh(self.H_row)
        L_h = float(client_eig.max())
        out = {
            "L_h": Constant(L_h, "max_i lambda_max(s A_i^T A_i) (per client, eigvalsh)"),
            "lambda_min_plus": Constant(float(eig_row.min()), "lambda_min^+(H_h): min eigenvalue on the row space"),
            "lambda_max": Constant(float(eig_row.max()), "lambda_max(H_h)"),
            "alpha": Constant(float(eig_row.min()) / 2, "weak sharpness, kappa = 2: h - h* = 1/2 r^T H r >= "
                                                         "lambda_min^+/2 dist^2 (tight)"),
            "kappa": Constant(2.0, "least squares are weakly sharp of order 2"),
            "h_star": Constant(self.h_star, "(1/(2N)) s ||b - A x_LS||^2, x_LS = A^+ b (lstsq)"),
            "G_h2": Constant(2 * L_h * self.h_star, "Lemma 1 corrected (no 1/N): 2 L_h (h* - mean_i min h_i), "
                                                    "every client consistent (min h_i = 0)"),
            "sigma_h": Constant(float(self.sigma), "additive N(0, sigma_h^2/n I): E||zeta||^2 = sigma_h^2"),
            "sigma_f": Constant(float(self.sigma_f), "additive N(0, sigma_f^2/n I): E||xi||^2 = sigma_f^2"),
            "N": Constant(float(N), "number of clients"),
        }
        if self.batch_rows is not None:
            rows_sq = np.einsum("nki,nki->nk", self.A, self.A)
            out["L_max"] = Constant(float(s * rows_sq.max() * self.A.shape[1]),
                                    "max_r s m ||a_r||^2 (mini-batch multiplicative noise, spec defedavg P4)")
            out["L"] = Constant(L_h, "max_i lambda_max(A_i^T A_i / m) (the DeFedAvg name)")
            out["F_star"] = Constant(self.h_star, "0 up to rounding: interpolation")
        out[DIST0] = (Constant(float(np.sum((self.x0 - self.x_star) ** 2)), "||x0 - x*||^2, x* the selected solution")
                      if self.outer is not None else
                      Constant(float(self.dist_sq(self.x0)), "dist(x0, argmin h)^2: x* the projection of x0 on the solutions"))
        outer = self.outer
        if outer is None:
            return out
        grad_star = outer.grad(self.x_star)
        out["f_star"] = Constant(self.f_star, "f(x*) with x* in closed form")
        out["gradf_star"] = Constant(float(np.linalg.norm(grad_star)), "||grad f(x*)||")
        if isinstance(outer, QuadraticOuter):
            eig_P = np.linalg.eigvalsh(outer.P)
            out["L_f"] = Constant(float(np.abs(eig_P).max()), "||P||_2 (shared outer Hessian)")
            out["mu_f"] = Constant(max(float(eig_P.min()), 0.0), "lambda_min(P), 0 if singular")
            if eig_P.min() >= -1e-12:
                # min_x f_i is attained where P x = q_i (q_i in range(P) by construction)
                mins = np.array([_quadratic_min(outer.P, outer.q[i], outer.k[i]) for i in range(N)])
                inf_f = float(_quadratic_min(outer.P, outer.q.mean(axis=0), outer.k.mean()))
                out["inf_f"] = Constant(inf_f, "min of the global quadratic f (lstsq)")
                out["M"] = Constant(self.f_star - inf_f, "f* - inf f (the paper's M)")
                out["G_f2"] = Constant(2 * out["L_f"].value * (inf_f - mins.mean()),
                                       "Lemma 1 corrected: 2 L_f (inf f - mean_i min f_i)")
                Hp = np.linalg.pinv(self.H)
                out["c_f"] = Constant(float(grad_star @ Hp @ grad_star),
                                      "grad f(x*)^T H_h^+ grad f(x*): f(x*_eta) - f* ~ -c_f eta")
        else:
            w = outer.weight
            if outer.kind == "huber":
                out["L_f"] = Constant(w / outer.smoothing, "1/mu (Huber)")
                out["mu_f"] = Constant(0.0, "convex, not strongly")
                out["inf_f"] = Constant(0.0, "Huber >= 0, = 0 at 0")
            else:
                out["L_f"] = Constant(2 * w, "w max phi'' = 2w (Geman-McClure)")
                out["weak_convexity"] = Constant(w / 2, "w |min phi''| = w/2")
                out["inf_f"] = Constant(0.0, "phi >= 0, = 0 at u = 0")
            out["M"] = Constant(self.f_star - out["inf_f"].value, "f* - inf f")
        if self.lam is not None:
            out["lam"] = Constant(float(self.lam), "Moreau parameter of F_lambda")
            out["F_lambda_star"] = Constant(float(self.smoothed_value(self.y_stat)), "F_lambda at its stationary point")
        return out


def _quadratic_min(P: np.ndarray, q: np.ndarray, k: float) -> float:
    x = np.linalg.lstsq(P, q, rcond=None)[0]
    return float(0.5 * x @ P @ x - q @ x + k)


def _complement(V1: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the orthogonal complement of range(V1)."""
    n, r = V1.shape
    if r == n:
        return np.zeros((n, 0))
    q, _ = np.linalg.qr(np.hstack([V1, np.eye(n)]))
    return q[:, r:n] * 1.0


def _orthogonal(rng: np.random.Generator, n: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))
