"""Federated minimax problems min_x max_{y in Y} f(x, y) = (1/M) sum_i f_i(x, y) in closed form.

Paper: FESS-GDA (004_57c332141565532a.txt, arXiv:2311.00944); spec ../shared/spec/fessgda.md §6.

One registry family ``minimax`` whose ``kind`` parameter selects the problem (``make``):

* ``quadratic`` (spec §6.1 a1): SC-SC quadratic f_i = 1/2 x'Ax + x'By - 1/2 y'Cy + b_i'x - c_i'y,
  linear zero-sum heterogeneity, saddle (0, 0), PL-PL potential W and its exact stationary value
  under FSGDA/Local SGDA (discrete Lyapunov equation, any local and global step sizes).
* ``quadratic_pl`` (spec §6.1 a2): the same family with A = U'U singular (PL, not strongly convex in x).
* ``ncnc_pl`` (spec §6.1 a3): nonconvex-nonconcave two-sided PL x^2 + 3 sin^2 x sin^2 y - 4 y^2 - 10 sin^2 y,
  mu1 < mu2 (Theorem 3.5 through the role swap of spec §2.4(C)).
* ``ncpl`` (spec §6.2 b): f = sum_k [-alpha log(1+x_k^2) + b x_k y_k - mu/2 y_k^2], b = sqrt(c mu),
  Phi independent of mu (mu is a pure conditioning knob), stationary points x_k in {0, +-1}.
* ``wgan`` (spec §6.3 b'): the paper's WGAN in closed form (population moments), NC-SC with
  kappa = l/(2 lam); two minimizers sigma_g = +-sigma^.
* ``tanh`` (spec §6.5 d): nonconvex-concave f = sum_k [lam/2 x^2 - alpha log(1+x^2) + y tanh(b x)] on a box,
  Moreau-envelope stationarity via its separable prox; ``reg_eps`` gives Theorem 3.3's regularized clients.
* ``onepc`` (spec §6.6 e): nonconvex-one-point-concave (not concave) f = sum_k [lam/2 x^2 - alpha log(1+x^2)
  - q(y - tanh x)], q(u) = u^2 + a sin^2 u, on a box; Phi smooth and closed form.
* ``pwmax`` (spec §6.4 c): point-wise maximum of 4 components over the simplex with strict
  complementarity margin c0; negative controls c0 = 0 and a duplicated component.

Shared conventions (spec §6.0):

* one stochastic sample for BOTH partial gradients: xi ~ N(0, s^2 I_{d1+d2}), so sigma^2 = s^2 (d1+d2)
  (pitfall P9);
* sinusoidal zero-sum heterogeneity zeta sum_k sin(omega x_k + 2 pi i/M) (real client drift, P10),
  sigma_G^2 = zeta^2 omega^2 d1 (a sup, attained), client smoothness l + zeta omega^2 (P7);
* oracles take points (R, m, d) and client ids (R, m); ``gather`` once per round;
* measures take the algorithm's output {"x": (R, d1), "y": (R, d2), ...}; the y-measure of Def 2.1
  uses the projection step exactly 1/l (P13);
* y0 outside Y is refused (ValueError), never silently projected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np
from scipy.linalg import solve_discrete_lyapunov
from scipy.optimize import minimize_scalar

from ratecheck.params import Param, ParamError, declare
from ratecheck.problem import Constant, Problem, check_int, check_positive
from ratecheck.projections import project_box, project_simplex
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
    y_set: ClassVar[str] = "free"

    x0: np.ndarray
    y0: np.ndarray
    noise: float  # s: per-coordinate standard deviation of the additive gradient noise
    zeta: float  # sinusoidal heterogeneity amplitude
    omega: float
    spec_params: Mapping[str, Any]

    # -- shared machinery --------------------------------------------------------------------
    def _init_common(self, clients: int, dim_x: int, dim_y: int) -> None:
        check_int("clients (M)", clients)
        check_positive("noise", self.noise, strict=False)
        check_positive("zeta", self.zeta, strict=False)
        check_positive("omega", self.omega)
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
    params["clients"] = check_int("clients (M)", params["clients"])
    _check_entries(params["kind"], params["clients"], dim_x + dim_y)
    return {"x0": _vector("x0", params["x0"], dim_x), "y0": _vector("y0", params["y0"], dim_y),
            "noise": float(params["noise"]), "zeta": float(params["zeta"]), "omega": float(params["omega"]),
            "spec_params": params}


# =============================================================================================
# (a1) SC-SC quadratic, spec §6.1


@dataclass(frozen=True, eq=False)
class MinimaxQuadratic(MinimaxProblem):
    """f_i = 1/2 x'Ax + x'By - 1/2 y'Cy + b_i'x - c_i'y with sum_i (b_i, c_i) = 0 (spec §6.1 a1)."""

    family: ClassVar[str] = "minimax"

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    offsets: np.ndarray  # (M, 2d): v_i = (b_i, c_i); no sinusoid (zeta = 0): the floor stays exact
    spread: np.ndarray  # (M, d): A_i = A + diag(spread_i), sum_i spread_i = 0 (client drift, spec §6.1 test 5)

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
    if (a_diag <= 0).any() or (c_diag <= 0).any():
        raise ValueError(f"a and c must be positive (A, C positive definite), got a={a!r}, c={c!r}")
    clients = check_int("clients (M)", clients)
    check_positive("zeta", zeta, strict=False)
    d = a_diag.size
    _check_quadratic_size("quadratic", clients, d)
    rng = np.random.default_rng(seed)  # instance construction only
    offsets = _zero_sum_offsets(rng, clients, 2 * d, zeta)
    check_positive("spread", spread, strict=False)
    if spread and clients % 2:
        raise ValueError(f"spread > 0 alternates +-spread over clients and needs an even number of clients, got {clients}")
    signs = np.where(np.arange(clients) % 2 == 0, 1.0, -1.0)
    return MinimaxQuadratic(
        A=np.diag(a_diag), B=float(coupling) * np.eye(d), C=np.diag(c_diag), offsets=offsets,
        spread=float(spread) * signs[:, None] * np.ones((1, d)),
        x0=_vector("x0", x0, d), y0=_vector("y0", y0, d), noise=float(noise), zeta=0.0, omega=1.0,
        spec_params=params,
    )


# =============================================================================================
# (b) NC-PL log problem, spec §6.2


@dataclass(frozen=True, eq=False)
class NCPLLog(MinimaxProblem):
    """f_i = sum_k [-alpha log(1+x_k^2) + b x_k y_k - mu/2 y_k^2 + zeta sin(omega x_k + theta_i)]."""

    family: ClassVar[str] = "minimax"

    alpha: float
    c: float
    mu: float

    def __post_init__(self) -> None:
        d = self.x0.shape[0]
        self._init_common(self.spec_params["clients"], d, d)
        b = float(np.sqrt(self.c * self.mu))
        # per-coordinate Hessian [[d_xx, b], [b, -mu]], d_xx in [-2 alpha, alpha/4]; the spectral
        # norm is convex in d_xx, so its sup is at an endpoint (exact)
        ends = np.array([-2 * self.alpha, self.alpha / 4])
        centre, radius = (ends - self.mu) / 2, np.sqrt(((ends + self.mu) / 2) ** 2 + b**2)
        l_global = float(np.max(np.maximum(np.abs(centre + radius), np.abs(centre - radius))))
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "l_global", l_global)
        # Assumption 2.1 is for every client: add the heterogeneity curvature (pitfall P7)
        object.__setattr__(self, "l", l_global + self.zeta * self.omega**2)

    def local_grads(self, batch, x, y):
        gx = -2 * self.alpha * x / (1 + x * x) + self.b * y
        if self.zeta:
            gx = gx + self.sin_grad(x, batch.phase)
        return gx, self.b * x - self.mu * y

    def grads(self, x, y):
        return -2 * self.alpha * x / (1 + x * x) + self.b * y, self.b * x - self.mu * y

    def local_values(self, batch, x, y):
        per = -self.alpha * np.log1p(x * x) + self.b * x * y - 0.5 * self.mu * y * y
        return np.sum(per + self.zeta * np.sin(self.omega * x + batch.phase), axis=-1)

    def phi(self, x: np.ndarray) -> np.ndarray:
        """Phi(x) = max_y f = sum_k [-alpha log(1+x_k^2) + c/2 x_k^2] (b^2/mu = c: no mu)."""
        return np.sum(-self.alpha * np.log1p(x * x) + 0.5 * self.c * x * x, axis=-1)

    def phi_grad(self, x: np.ndarray) -> np.ndarray:
        return -2 * self.alpha * x / (1 + x * x) + self.c * x

    @property
    def phi_star(self) -> float:
        if 2 * self.alpha > self.c:
            per = -self.alpha * np.log(2 * self.alpha / self.c) + self.alpha - self.c / 2
        else:
            per = 0.0
        return float(self.dim_x * per)

    def measures(self, point):
        x, y = point["x"], point["y"]
        out = self.stationarity(x, y)
        kappa = self.l / self.mu
        # Theorem 3.1's S: ||grad_x f||^2 + kappa ||grad_y f||^2
        out["stat_kappa"] = out["grad_x_sq"] + kappa * out["grad_y_sq"]
        g = self.phi_grad(x)
        out["phi_grad_sq"] = np.einsum("ri,ri->r", g, g)
        out["phi_gap"] = self.phi(x) - self.phi_star
        return out

    def potential_gap(self) -> float:
        """Delta = V0 - Phi* with V = f_hat - 2 Psi + 2 P at z0 = x0, p = 2l (spec §1.5, §6.2).

        Separable strongly convex 1-D inner minimizations (p - l_global > 0), solved to 1e-12.
        """
        x0, y0, l = self.x0, self.y0, self.l  # p/2 ||x - z||^2 = l ||x - z||^2 with p = 2l

        f0 = float(self.value_f(x0, y0))
        psi = sum(
            _min_1d(lambda s, yk=yk, zk=zk: -self.alpha * np.log1p(s * s) + self.b * s * yk + l * (s - zk) ** 2)
            for yk, zk in zip(y0, x0)
        ) - 0.5 * self.mu * float(y0 @ y0)
        P = sum(
            _min_1d(lambda s, zk=zk: -self.alpha * np.log1p(s * s) + 0.5 * self.c * s * s + l * (s - zk) ** 2)
            for zk in x0
        )
        return f0 - 2 * psi + 2 * P - self.phi_star

    def value_f(self, x: np.ndarray, y: np.ndarray) -> float:
        """The global f(x, y) (heterogeneity sums to zero)."""
        return float(np.sum(-self.alpha * np.log1p(x * x) + self.b * x * y - 0.5 * self.mu * y * y))

    def constants(self) -> dict[str, Constant]:
        return {
            "l": Constant(self.l, "max over d_xx in {-2 alpha, alpha/4} of ||[[d_xx, b], [b, -mu]]||_2 (convex in d_xx) + zeta omega^2"),
            "mu": Constant(self.mu, "f(x, .) is mu-strongly concave, hence mu-PL"),
            "kappa": Constant(self.l / self.mu, "l / mu"),
            "sigma_G": _sin_sigma_g(self.zeta, self.omega, self.dim_x),
            "Delta": Constant(self.potential_gap(), "V0 - Phi* (z0 = x0, p = 2l), 1-D minimizations"),
            "Phi_star": Constant(self.phi_star, "d (alpha - c/2 - alpha log(2 alpha/c)) at x_k^2 = 2 alpha/c - 1"),
            **self.heterogeneity_constants(),
        }


@declare(dim=DIM, mu=Param.real("strong concavity mu in y", positive=True),
         alpha=Param.real("weight alpha of -log(1+x^2)", positive=True),
         c=Param.real("coupling constant c (b = sqrt(c mu))", positive=True), **SHARED)
def make_ncpl(
    dim: int = 1,
    mu: float = 1.0,
    alpha: float = 1.0,
    c: float = 1.0,
    clients: int = 1,
    zeta: float = 0.0,
    omega: float = 1.0,
    noise: float = 0.0,
    x0: Any = 0.3,
    y0: Any = 0.0,
) -> NCPLLog:
    """Spec §6.2 (b). With alpha = c = 1, Phi = sum [-log(1+x^2) + x^2/2] for every mu; l(mu=1) = 2.618."""
    params = {"kind": "ncpl", **locals()}
    dim = check_int("dim", dim)
    for name in ("mu", "alpha", "c"):
        check_positive(name, params[name])
    shared = _shared_fields(params, dim, dim)
    if np.any(shared["x0"] == 0):
        # x = 0 is an exact stationary point (a local max of Phi): the run would never move
        raise ValueError(f"x0 must have no zero coordinate (x_k = 0 is a stationary saddle), got {x0!r}")
    return NCPLLog(alpha=float(alpha), c=float(c), mu=float(mu), **shared)


# =============================================================================================
# (c) Point-wise maximum over the simplex, spec §6.4


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
    params = {"kind": "pwmax", **locals()}
    check_positive("r", r)
    check_positive("c0", c0, strict=False)
    return PointwiseMax(r=float(r), c0=float(c0), duplicate=bool(duplicate), **_shared_fields(params, 2, 4))



# =============================================================================================
# (d) Nonconvex-concave tanh coupling on a box, spec §6.5 (Theorems 3.2 and 3.3)


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
    dim = check_int("dim", dim)
    for name in ("b", "R"):
        check_positive(name, params[name])
    for name in ("lam", "alpha", "reg_eps"):
        check_positive(name, params[name], strict=False)
    return TanhBox(lam=float(lam), alpha=float(alpha), b=float(b), R=float(R), reg_eps=float(reg_eps), moreau=bool(moreau),
                   **_shared_fields(params, dim, dim))


# =============================================================================================
# (e) Nonconvex-one-point-concave (not concave) on a box, spec §6.6 (Theorem 3.2)


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
    dim = check_int("dim", dim)
    for name in ("lam", "R"):
        check_positive(name, params[name])
    check_positive("alpha", alpha, strict=False)
    check_positive("a", a, strict=False)
    if a > OnePointConcave.a_star:
        raise ValueError(f"a must be <= {OnePointConcave.a_star} (q star-convex: Assumption 3.4), got a={a}")
    if R < 1:
        raise ValueError(f"R must be >= 1 so that y*(x) = tanh x lies in Y, got R={R}")
    return OnePointConcave(lam=float(lam), alpha=float(alpha), a=float(a), R=float(R), moreau=bool(moreau),
                           **_shared_fields(params, dim, dim))


# =============================================================================================
# (b') The paper's WGAN in closed form, spec §6.3 (NC-SC, conditioning through lambda)


def shard_moments(clients: int, mean: float, std: float, split: str) -> np.ndarray:
    """(M, 2) client moments (E x, E x^2) of real data mean + std z, z ~ N(0, 1).

    'iid': every client has the population moments. 'sorted': client i holds the i-th of M
    equal-probability quantile shards of z (a non-i.i.d. split, spec §6.3), truncated-normal moments;
    their client mean is exactly the population's (equal shard probabilities)."""
    if split == "iid":
        return np.tile([mean, mean**2 + std**2], (clients, 1))
    from scipy.stats import norm, truncnorm

    edges = norm.ppf(np.arange(clients + 1) / clients)
    ez, vz = truncnorm.mean(edges[:-1], edges[1:]), truncnorm.var(edges[:-1], edges[1:])
    return np.stack([mean + std * ez, mean**2 + 2 * mean * std * ez + std**2 * (vz + ez**2)], axis=1)


@dataclass(frozen=True, eq=False)
class WGAN(MinimaxProblem):
    """f_i = phi1 (m1_i - mu_g) + phi2 (m2_i - mu_g^2 - sigma_g^2) - lam (phi1^2 + phi2^2), x = (mu_g, sigma_g),
    y = (phi1, phi2): the population objective of the paper's federated WGAN (§5.1) with generator
    mu_g + sigma_g z and discriminator phi1 x + phi2 x^2; client i's real-data moments (m1_i, m2_i).

    2 lam-strongly concave in y; smooth only on a box (|mu_g|, |sigma_g| <= R_x, |phi2| <= R_phi), where l is
    the exact sup of the Hessian norm (the Hessian is affine in (mu_g, sigma_g, phi2), its norm convex, so
    the sup is at one of the 8 box vertices). Two minimizers (m1, +-std): distances go to the nearer (P22).
    """

    lam: float
    data_mean: float
    data_std: float
    moments: np.ndarray  # (M, 2)
    R_x: float
    R_phi: float

    def __post_init__(self) -> None:
        self._init_common(self.moments.shape[0], 2, 2)
        object.__setattr__(self, "m1", float(self.moments[:, 0].mean()))
        object.__setattr__(self, "m2", float(self.moments[:, 1].mean()))
        object.__setattr__(self, "l", self._smoothness())

    def hessian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The 4x4 Hessian of f at (x, y) of shape (..., 2): [[-2 phi2 I, J], [J', -2 lam I]]."""
        H = np.zeros((*x.shape[:-1], 4, 4))
        H[..., 0, 0] = H[..., 1, 1] = -2 * y[..., 1]
        H[..., 0, 2] = H[..., 2, 0] = -1.0
        H[..., 0, 3] = H[..., 3, 0] = -2 * x[..., 0]
        H[..., 1, 3] = H[..., 3, 1] = -2 * x[..., 1]
        H[..., 2, 2] = H[..., 3, 3] = -2 * self.lam
        return H

    def _smoothness(self) -> float:
        corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1], indexing="ij")).reshape(3, -1).T
        x = corners[:, :2] * self.R_x
        y = np.stack([np.zeros(8), corners[:, 2] * self.R_phi], axis=1)
        return float(np.linalg.norm(self.hessian(x, y), 2, axis=(1, 2)).max())

    def _grads(self, x, y, moments):
        mu_g, s_g = x[..., :1], x[..., 1:]
        phi1, phi2 = y[..., :1], y[..., 1:]
        gx = np.concatenate([-phi1 - 2 * phi2 * mu_g, -2 * phi2 * s_g], axis=-1)
        resid = moments - np.concatenate([mu_g, mu_g * mu_g + s_g * s_g], axis=-1)
        return gx, resid - 2 * self.lam * y

    def gather(self, clients):
        return MinimaxBatch(clients, self.phases(clients), self.moments[clients])

    def local_grads(self, batch, x, y):
        return self._grads(x, y, batch.offsets)

    def grads(self, x, y):
        return self._grads(x, y, np.array([self.m1, self.m2]))

    def local_values(self, batch, x, y):
        resid = batch.offsets - np.concatenate([x[..., :1], (x * x).sum(-1, keepdims=True)], axis=-1)
        return np.einsum("...i,...i->...", y, resid) - self.lam * np.einsum("...i,...i->...", y, y)

    def residual(self, x: np.ndarray) -> np.ndarray:
        return np.stack([self.m1 - x[..., 0], self.m2 - x[..., 0] ** 2 - x[..., 1] ** 2], axis=-1)

    def phi(self, x: np.ndarray) -> np.ndarray:
        """Phi = ||(m1 - mu_g, m2 - mu_g^2 - sigma_g^2)||^2/(4 lam), Phi* = 0."""
        r = self.residual(x)
        return np.einsum("...i,...i->...", r, r) / (4 * self.lam)

    def measures(self, point):
        x, y = point["x"], point["y"]
        out = self.stationarity(x, y)
        out["stat_kappa"] = out["grad_x_sq"] + (self.l / (2 * self.lam)) * out["grad_y_sq"]
        gphi = self.grads(x, self.residual(x) / (2 * self.lam))[0]  # Danskin: grad_x f(x, y*(x))
        out["phi_grad_sq"] = np.einsum("ri,ri->r", gphi, gphi)
        out["phi_gap"] = self.phi(x)
        std = np.sqrt(self.m2 - self.m1**2)
        out["dist_sq"] = (x[:, 0] - self.m1) ** 2 + (np.abs(x[:, 1]) - std) ** 2  # nearer of sigma_g = +-std
        return out

    def constants(self) -> dict[str, Constant]:
        dev = self.moments - np.array([self.m1, self.m2])
        return {
            "l": Constant(self.l, f"max of the Hessian norm over the 8 vertices of |mu_g|, |sigma_g| <= {self.R_x:g}, "
                                  f"|phi2| <= {self.R_phi:g} (norm convex in the affine Hessian): smooth on that box only"),
            "mu": Constant(2 * self.lam, "f(x, .) is 2 lam-strongly concave, hence PL"),
            "kappa": Constant(self.l / (2 * self.lam), "l / (2 lam)"),
            "sigma_G": Constant(float(np.linalg.norm(dev, axis=1).max()), "max_i ||(m1_i - m1, m2_i - m2)|| (exact)"),
            "Phi_star": Constant(0.0, "Phi = 0 at (m1, +-sqrt(m2 - m1^2))"),
            **self.heterogeneity_constants(),
        }


@declare(lam=Param.real("discriminator regularization lam", positive=True), data_mean=Param.real("mean of the real data"),
         data_std=Param.real("standard deviation of the real data", positive=True),
         split=Param.choice("client split of the data: 'iid' or 'sorted' quantile shards", ("iid", "sorted")),
         clients=CLIENTS, R_x=Param.real("radius R_x", positive=True), R_phi=Param.real("radius R_phi", positive=True),
         noise=NOISE, x0=X0, y0=Y0)
def make_wgan(
    lam: float = 0.01,
    data_mean: float = 0.0,
    data_std: float = 0.1,
    split: str = "iid",
    clients: int = 1,
    R_x: float = 1.0,
    R_phi: float = 1.0,
    noise: float = 0.0,
    x0: Any = (0.5, 0.5),
    y0: Any = 0.0,
) -> WGAN:
    """Spec §6.3 (b'): the paper's §5.1 WGAN (mu^ = 0, sigma^ = 0.1, lam in {0.001, 0.005, 0.01})."""
    params = {"kind": "wgan", **locals()}
    for name in ("lam", "data_std", "R_x", "R_phi"):
        check_positive(name, params[name])
    clients = check_int("clients (M)", clients)
    if split not in ("iid", "sorted"):
        raise ValueError(f"split must be 'iid' or 'sorted', got {split!r}")
    return WGAN(lam=float(lam), data_mean=float(data_mean), data_std=float(data_std),
                moments=shard_moments(clients, float(data_mean), float(data_std), split), R_x=float(R_x),
                R_phi=float(R_phi), x0=_vector("x0", x0, 2), y0=_vector("y0", y0, 2), noise=float(noise), zeta=0.0,
                omega=1.0, spec_params=params)


# =============================================================================================
# (a3) Nonconvex-nonconcave two-sided PL (Yang et al. 2020 example), spec §6.1 (a3)


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
    params = {"kind": "ncnc_pl", **locals()}
    dim = check_int("dim", dim)
    return TwoSidedPLSine(**_shared_fields(params, dim, dim))


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
    rank, dim = check_int("rank", rank), check_int("dim", dim)
    if rank >= dim:
        raise ValueError(f"rank must be < dim for a PL-but-not-strongly-convex x-part, got rank={rank}, dim={dim}")
    c_diag = _vector("c", c, dim)
    _check_quadratic_size("quadratic_pl", clients, dim)
    clients = check_int("clients (M)", clients)
    check_positive("zeta", zeta, strict=False)
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


KINDS = {"quadratic": make_quadratic, "quadratic_pl": make_quadratic_pl, "ncpl": make_ncpl, "pwmax": make_pwmax, "tanh": make_tanh, "onepc": make_onepc, "wgan": make_wgan, "ncnc_pl": make_ncnc_pl}


KIND = Param.choice("which minimax problem: " + ", ".join(KINDS), tuple(KINDS))


def make(kind: str = "quadratic", **params: Any) -> MinimaxProblem:
    """The registry's factory: ``kind`` selects the family, the rest are that family's parameters
    (each kind's factory declares them, see ``declared_for``)."""
    kind = KIND.check("kind", kind, "minimax")
    return KINDS[kind](**params)


make.checks_parameters = True  # type: ignore[attr-defined]  # each kind's declared factory checks them


def declared_for(kind: str) -> dict[str, Param]:
    """The declared parameters of one kind (with ``kind`` itself), for listings and the fuzz tests."""
    return {"kind": KIND, **KINDS[KIND.check("kind", kind, "minimax")].declared}
