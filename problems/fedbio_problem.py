"""The FedBilevel problem (the fedbio_bilevel family, described in problems/fedbio_bilevel.py, which builds it):
closed forms of y*, u*, the hypergradient and x*, the one-sample oracles under N1 and N2, measures, certified constants."""

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
    bounded_gradient,
    bounded_variance,
    heterogeneity,
    initial_distance,
    initial_gap,
    smooth,
    strongly_convex,
)
from ratecheck.params import ParamError
from ratecheck.problem import Constant, Problem
from ratecheck.seeding import ReplicaStream

from .fedbio_sample import (
    OracleSample,
    _matvec,
    _pseudo_huber_prime,
    _pseudo_huber_second,
    joint_hessian_norm,
)


@dataclass(frozen=True, eq=False)
class FedBilevel(Problem):
    """A FedBiO test problem (spec §6): exact y*(x), u*(x), hypergradient, x*, constants and oracles."""

    family: ClassVar[str] = "fedbio_bilevel"
    assumptions: ClassVar[tuple[Assumption, ...]] = BILEVEL.assume(
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
        backtracking until h decreases enough, or ||grad h|| does without h rising: near x* h's decrease
        (~||grad h||^2) is below round-off, while far out the pseudo-Huber gradient saturates and
        ||grad h|| can fall as h rises (x* ran off to -7e177 on a D instance with b = 1.25, delta = 0.35)."""
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
                h_t = float(self.value(x_t))
                return (h_t <= h0 - 1e-4 * t * slope
                        or (h_t <= h0 + 1e-12 * max(1.0, abs(h0))
                            and float(np.linalg.norm(self.hypergrad(x_t))) <= (1 - 1e-4 * t) * g_norm))

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
        (global: ||y - y_x||^2, ||u - u_x||^2; local: (1/M) sum_m ||y_m - y_m*(x)||^2 from y_clients).
        FedBiO's Lemma 8 quantities at the client iterates are the paper's (ratecheck.proofs.fedbio.measures)."""
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
        elif "y_clients" in point:
            out["y_err"] = ((point["y_clients"] - self.y_star_clients(x)) ** 2).sum(-1).mean(-1)
        return out

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
        zeta_g = float(max((zeta_gyy * R_y + np.linalg.norm(self.B[i] - self.B[j], 2) * (R_x + R_y)
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
