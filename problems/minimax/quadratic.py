"""(a1) SC-SC quadratic and (a2) its PL-but-not-strongly-convex variant, spec fessgda §6.1."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ratecheck.assumptions import DIST0
from ratecheck.params import Param, declare
from ratecheck.problem import Constant

from .base import (
    CLIENTS,
    DIM,
    MAX_DIM,
    NOISE,
    SEED,
    X0,
    Y0,
    ZETA,
    MinimaxBatch,
    MinimaxProblem,
    _check_quadratic_size,
    _vector,
)


@dataclass(frozen=True, eq=False)
class MinimaxQuadratic(MinimaxProblem):
    """f_i = 1/2 x'Ax + x'By - 1/2 y'Cy + b_i'x - c_i'y with sum_i (b_i, c_i) = 0 (spec §6.1 a1)."""

    family: ClassVar[str] = "minimax"

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    offsets: np.ndarray  # (M, 2d): v_i = (b_i, c_i); no sinusoid (zeta = 0): the floor stays exact
    spread: np.ndarray  # (M, d): A_i = A + diag(spread_i), sum_i spread_i = 0 (client drift, spec §6.1 test 5)
    # derived in __post_init__ (not parameters)
    range_projector: np.ndarray = field(init=False, repr=False, compare=False)
    mu1: float = field(init=False, repr=False, compare=False)
    hessian: np.ndarray = field(init=False, repr=False, compare=False)
    jac: np.ndarray = field(init=False, repr=False, compare=False)
    S: np.ndarray = field(init=False, repr=False, compare=False)
    Q: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        d = self.A.shape[0]
        self._init_common(self.offsets.shape[0], d, self.C.shape[0])
        eig_a, vec_a = np.linalg.eigh(self.A)
        if eig_a.min() < -1e-12 or np.linalg.eigvalsh(self.C).min() <= 0:
            raise ValueError("A must be positive semi-definite and C positive definite (two-sided PL needs mu1, mu2 > 0)")
        # PL but not strongly convex in x (spec §6.1 a2) when A is singular: then B and the b_i must lie
        # in range(A), so that f - min_x f = 1/2 ||.||^2 on range(A) and the saddle set is null(A) x {0}
        rng_a = vec_a[:, eig_a > 1e-10 * max(eig_a.max(), 1.0)]
        proj = rng_a @ rng_a.T
        if rng_a.shape[1] == 0:
            raise ValueError("A must not be zero (mu1 > 0 on range(A))")
        if np.abs(self.B - proj @ self.B).max() > 1e-10 or np.abs(self.offsets[:, :d] - self.offsets[:, :d] @ proj).max() > 1e-10:
            raise ValueError("with a singular A, B and the x-offsets b_i must lie in range(A) (two-sided PL, spec §6.1 a2)")
        object.__setattr__(self, "range_projector", proj)
        object.__setattr__(self, "mu1", float(eig_a[eig_a > 1e-10 * max(eig_a.max(), 1.0)].min()))
        if not np.allclose(self.offsets.sum(axis=0), 0.0, atol=1e-12):
            raise ValueError("client offsets (b_i, c_i) must sum to zero so that f is the client mean")
        if not np.allclose(self.spread.sum(axis=0), 0.0, atol=1e-12):
            raise ValueError("client curvature deviations must sum to zero so that f is the client mean")
        if np.any(self.spread) and min(np.linalg.eigvalsh(self.A + np.diag(r)).min() for r in self.spread) <= 0:
            raise ValueError("every client's A_i = A + diag(spread_i) must be positive definite")
        hess = np.block([[self.A, self.B], [self.B.T, -self.C]])
        jac = np.block([[self.A, self.B], [-self.B.T, self.C]])  # descent field: w <- w - H_eta (J w + v)
        S = self.A + self.B @ np.linalg.solve(self.C, self.B.T)
        Q = np.block([[2 * S - self.A, -self.B], [-self.B.T, self.C]])
        object.__setattr__(self, "hessian", hess)
        object.__setattr__(self, "jac", jac)
        object.__setattr__(self, "S", S)
        object.__setattr__(self, "Q", Q)
        # Assumption 2.1 for every client: the largest client Hessian norm (pitfall P7)
        hess_i = np.repeat(hess[None], self.spread.shape[0], axis=0)
        hess_i[:, range(d), range(d)] += self.spread
        object.__setattr__(self, "l", float(np.linalg.norm(hess_i, 2, axis=(1, 2)).max()))

    def gather(self, clients: np.ndarray) -> MinimaxBatch:
        return MinimaxBatch(clients, self.phases(clients), self.offsets[clients], self.spread[clients])

    def local_grads(self, batch, x, y):
        off = batch.offsets
        gx = x @ self.A + x * batch.curvature + y @ self.B.T + off[..., : self.dim_x]
        gy = x @ self.B - y @ self.C - off[..., self.dim_x :]
        return gx, gy

    def grads(self, x, y):
        return x @ self.A + y @ self.B.T, x @ self.B - y @ self.C

    def local_values(self, batch, x, y):
        off = batch.offsets
        quad = 0.5 * np.einsum("...i,ij,...j->...", x, self.A, x) - 0.5 * np.einsum("...i,ij,...j->...", y, self.C, y)
        quad = quad + 0.5 * np.einsum("...i,...i->...", x * batch.curvature, x)
        return quad + np.einsum("...i,ij,...j->...", x, self.B, y) + np.einsum(
            "...i,...i->...", x, off[..., : self.dim_x]) - np.einsum("...i,...i->...", y, off[..., self.dim_x :])

    def potential(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """W = 2 Phi(x) - f(x, y) - Phi* = 1/2 w'Qw (Appendix I), Phi(x) = 1/2 x'Sx, Phi* = 0."""
        w = np.concatenate([x, y], axis=-1)
        return 0.5 * np.einsum("...i,ij,...j->...", w, self.Q, w)

    def measures(self, point: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        x, y = point["x"], point["y"]
        out = self.stationarity(x, y)
        out["W"] = self.potential(x, y)
        px = x @ self.range_projector  # distance to the saddle SET null(A) x {0} (pitfall P22)
        out["dist_sq"] = np.einsum("ri,ri->r", px, px) + np.einsum("ri,ri->r", y, y)
        return out

    def stationary_potential(
        self,
        *,
        eta_x_local: float,
        eta_y_local: float,
        eta_x_global: float,
        eta_y_global: float,
        local_steps: int,
        m: int,
    ) -> float:
        """Exact E W_infinity of FSGDA / Local SGDA (p = 0) with m of M clients without replacement.

        A round is affine in w: local steps w <- G w - Lam (v_i + xi_k), G = I - Lam J, so
        w_{t+1} = F w_t - sum_k P_k (vbar_S + xibar_k) with F = I - Gam + Gam G^K and
        P_k = Gam G^(K-1-k) Lam. Noise covariance (s^2/m) sum_k P_k P_k' plus the sampled-mean
        covariance (M-m)/(m(M-1)) (1/M) sum_i v_i v_i' through sum_k P_k (spec §6.1 'exact floor').
        The stationary covariance solves Sigma = F Sigma F' + Qn (scipy solve_discrete_lyapunov);
        E W = 1/2 tr(Q Sigma). Needs identical client Hessians (spread = 0).
        """
        if np.any(self.spread):
            raise ValueError("the exact floor needs identical client Hessians (spread = 0)")
        d = self.dim
        lam = np.diag(np.r_[np.full(self.dim_x, eta_x_local), np.full(self.dim_y, eta_y_local)])
        gam = np.diag(np.r_[np.full(self.dim_x, eta_x_global), np.full(self.dim_y, eta_y_global)])
        G = np.eye(d) - lam @ self.jac
        powers = [np.eye(d)]
        for _ in range(local_steps):
            powers.append(G @ powers[-1])
        F = np.eye(d) - gam + gam @ powers[local_steps]
        if np.max(np.abs(np.linalg.eigvals(F))) >= 1:
            return float("inf")
        P = [gam @ powers[local_steps - 1 - k] @ lam for k in range(local_steps)]
        Qn = (self.noise**2 / m) * sum(p @ p.T for p in P)
        M = self.num_clients
        if m < M:
            cov_v = self.offsets.T @ self.offsets / M
            P_sum = sum(P)
            Qn = Qn + (M - m) / (m * (M - 1)) * P_sum @ cov_v @ P_sum.T
        from scipy.linalg import solve_discrete_lyapunov  # here, not at import (`ratecheck list`, split-proofs)

        Sigma = solve_discrete_lyapunov(F, Qn)
        return float(0.5 * np.trace(self.Q @ Sigma))

    def constants(self) -> dict[str, Constant]:
        mu1 = self.mu1
        mu2 = float(np.linalg.eigvalsh(self.C).min())
        l = self.l
        w0 = float(self.potential(self.x0, self.y0))
        if np.any(self.spread):  # grad f_i - grad f = (spread_i x + b_i, c_i): sup over a ball only (P8)
            radius = float(np.linalg.norm(self.x0))
            sigma_g = float((np.abs(self.spread).max(axis=1) * radius + np.linalg.norm(self.offsets, axis=1)).max())
            sg_how = f"max_i max|spread_i| R + ||(b_i, c_i)|| on the ball ||x|| <= R = ||x0|| = {radius:.4g}"
        else:
            sigma_g = float(np.linalg.norm(self.offsets, axis=1).max())
            sg_how = "max_i ||(b_i, c_i)||: grad f_i - grad f is constant"
        return {
            DIST0: Constant(float(np.sum((self.x0 @ self.range_projector) ** 2)),
                            "dist(x0, null(A))^2: the x-part of the saddle set null(A) x {0}"),
            "l": Constant(l, "max_i ||[[A_i, B], [B', -C]]||_2 (exact client Hessian norms)"),
            "mu1": Constant(mu1, "smallest nonzero eigenvalue of A (= lambda_min(U U') for A = U'U): PL constant in x"),
            "mu2": Constant(mu2, "lambda_min(C): PL constant in y"),
            "kappa1": Constant(l / mu1, "l / mu1"),
            "kappa2": Constant(l / mu2, "l / mu2"),
            "sigma_G": Constant(sigma_g, sg_how),
            "W0": Constant(w0, "W(x0, y0) = 1/2 w0'Q w0 (Phi* = 0)"),
            **self.heterogeneity_constants(),
        }


def _zero_sum_offsets(rng: np.random.Generator, clients: int, width: int, zeta: float) -> np.ndarray:
    """Gaussian client vectors centred over clients (sum zero) and scaled so max_i ||u_i|| = zeta."""
    if zeta == 0 or clients == 1:
        return np.zeros((clients, width))
    u = rng.standard_normal((clients, width))
    u -= u.mean(axis=0)
    return zeta * u / np.linalg.norm(u, axis=1).max()


@declare(a=Param.vector("diagonal of A (positive; its length is d)", positive=True, max_length=MAX_DIM),
         c=Param.vector("diagonal of C (positive, same length as a)", positive=True, max_length=MAX_DIM),
         coupling=Param.real("B = coupling I"), clients=CLIENTS, zeta=ZETA, noise=NOISE, x0=X0, y0=Y0,
         spread=Param.real("client Hessian spread: A_i = A +- spread I (needs an even M)", low=0.0), seed=SEED)
def make_quadratic(
    a: Any = (1.0, 0.8, 0.6, 0.5),
    c: Any = (1.0, 0.7, 0.5, 0.4),
    coupling: float = 0.5,
    clients: int = 16,
    zeta: float = 0.0,
    noise: float = 1.0,
    x0: Any = 1.0,
    y0: Any = 1.0,
    spread: float = 0.0,
    seed: int = 0,
) -> MinimaxQuadratic:
    """Spec §6.1 (a1) reference instance by default: l = 1.118, mu1 = 0.5, mu2 = 0.4.

    a, c: diagonals of A and C (equal length d); B = coupling I. Client offsets v_i = zeta u_i with
    u_i Gaussian, centred over clients and scaled so max_i ||u_i|| = 1 (sigma_G = zeta exactly).
    spread: client Hessians A_i = A + spread (+1 for even i, -1 for odd i) I (M even), real drift.
    """
    params = {"kind": "quadratic", **locals()}
    a_diag = np.asarray(a, dtype=float)
    c_diag = np.asarray(c, dtype=float)
    if a_diag.ndim != 1 or a_diag.shape != c_diag.shape:
        raise ValueError(f"a and c must be vectors of equal length, got {a!r} and {c!r}")
    d = a_diag.size
    _check_quadratic_size("quadratic", clients, d)
    rng = np.random.default_rng(seed)  # instance construction only
    offsets = _zero_sum_offsets(rng, clients, 2 * d, zeta)
    if spread and clients % 2:
        raise ValueError(f"spread > 0 alternates +-spread over clients and needs an even number of clients, got {clients}")
    signs = np.where(np.arange(clients) % 2 == 0, 1.0, -1.0)
    return MinimaxQuadratic(
        A=np.diag(a_diag), B=float(coupling) * np.eye(d), C=np.diag(c_diag), offsets=offsets,
        spread=float(spread) * signs[:, None] * np.ones((1, d)),
        x0=_vector("x0", x0, d), y0=_vector("y0", y0, d), noise=float(noise), zeta=0.0, omega=1.0,
        spec_params=params,
    )



@declare(rank=Param.int("rank of U (< dim)", low=1, high=MAX_DIM), dim=DIM,
         c=Param.vector("diagonal of C (positive; a number or a list of length dim)", positive=True, max_length=MAX_DIM),
         coupling=Param.real("G = coupling I"), clients=CLIENTS, zeta=ZETA, noise=NOISE, x0=X0, y0=Y0, seed=SEED)
def make_quadratic_pl(
    rank: int = 2,
    dim: int = 4,
    c: Any = (0.5, 0.3, 0.2, 0.1),
    coupling: float = 0.5,
    clients: int = 16,
    zeta: float = 0.0,
    noise: float = 1.0,
    x0: Any = 1.0,
    y0: Any = 1.0,
    seed: int = 0,
) -> MinimaxQuadratic:
    """Spec §6.1 (a2): f_i = 1/2 ||Ux||^2 + (Ux)'Gy - 1/2 y'Cy + b_i'x - c_i'y, U (rank x dim) full row
    rank < dim, G = coupling I, b_i in range(U'): two-sided PL (mu1 = lambda_min(UU')) but not strongly
    convex in x; saddle set {Ux = 0} x {0}. U is a seeded Gaussian matrix (instance construction only)."""
    params = {"kind": "quadratic_pl", **locals()}
    if rank >= dim:
        raise ValueError(f"rank must be < dim for a PL-but-not-strongly-convex x-part, got rank={rank}, dim={dim}")
    c_diag = _vector("c", c, dim)
    _check_quadratic_size("quadratic_pl", clients, dim)
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((rank, dim)) / np.sqrt(rank)
    G = float(coupling) * np.eye(rank, dim)
    u = _zero_sum_offsets(rng, clients, rank + dim, zeta)
    offsets = np.concatenate([u[:, :rank] @ U, u[:, rank:]], axis=1)  # b_i = U' beta_i
    return MinimaxQuadratic(
        A=U.T @ U, B=U.T @ G, C=np.diag(c_diag), offsets=offsets, spread=np.zeros((clients, dim)),
        x0=_vector("x0", x0, dim), y0=_vector("y0", y0, dim), noise=float(noise), zeta=0.0, omega=1.0,
        spec_params=params,
    )


def strategy(**fixed: Any):
    """A hypothesis strategy of (a1) quadratic instances (parameters of ``make(kind="quadratic", ...)``),
    for hunts and property tests; keyword arguments fix a parameter (a value) or replace its strategy.

    Ranges are those the kind builds quickly and well-posed: d <= 3, curvatures a, c in [0.02, 5]
    (condition numbers l/mu up to a few hundred), coupling in [-5, 5], starts over [-20, 20] per
    coordinate, noise and heterogeneity up to 1, 2..8 clients. ``d`` is drawn first and the vector
    parameters follow it; fixing ``d`` (a value) fixes the dimension.
    """
    from hypothesis import strategies as st

    from ratecheck.model.strategies import finite_floats, fixed_draws  # start-up: hypothesis loads when a hunt draws

    number = finite_floats
    chosen = fixed_draws(fixed)
    dims = chosen.pop("d", st.integers(min_value=1, max_value=3))

    @st.composite
    def instances(draw: Any) -> dict[str, Any]:
        d = draw(dims)
        vector = lambda lo, hi: st.lists(number(lo, hi), min_size=d, max_size=d)  # noqa: E731
        base = {
            "a": vector(0.02, 5.0),
            "c": vector(0.02, 5.0),
            "coupling": number(-5.0, 5.0),
            "clients": st.integers(min_value=2, max_value=8),
            "zeta": number(0.0, 1.0),
            "noise": number(0.0, 1.0),
            "x0": vector(-20.0, 20.0),
            "y0": vector(-20.0, 20.0),
            "seed": st.integers(min_value=0, max_value=3),
            **chosen,
        }
        return {"kind": "quadratic", **{name: draw(s) for name, s in base.items()}}

    return instances()
