"""Federated over-parameterized least squares: an affine solution set, its projection, selection losses.

Inner loss (spec strfedavg §6): h_i(x) = (s/2)||A_i x - b_i||^2 with s = ``row_scale`` (1 in the
StR-FedAvg paper, 1/m in DeFedAvg's P4), h = (1/N) sum_i h_i. The data follow the spec's recipe:
an orthogonal V = [V_1 | V_2] (V_1 spans the row space, r columns), B = U diag(sqrt(N lam_j)) W^T with
a chosen spectrum lam_j of B^T B / N, split into row blocks B_i (m_i <= r rows, so every client is
consistent), A_i = B_i V_1^T and b_i = A_i x_0 + delta eps_i (delta > 0 makes the global system
inconsistent, h* > 0). Then X*_h = {x : V_1^T x = z_1} with z_1 = V_1^T x_LS, x_LS = A^+ b, the
projection is Pi(y) = y - V_1 (V_1^T y - z_1), h(x) - h* = 1/2 (x - Pi x)^T H_h (x - Pi x) exactly, and
h is weakly sharp with kappa = 2, alpha = lambda_min^+(H_h)/2 (tight).

Outer losses (``outer``), each with the selected solution x* in closed form:

* ``tp1``  f_i = (mu/2)||x - c_i||^2, c_i = c + rho w_i: strongly convex, x* = Pi(c_bar) (Theorem 1);
* ``tp2a`` f_i = (s_f/2)||P_W (x - c_i)||^2, W = [V_2 | V_1(:, J)]: convex, not strongly (Theorem 2);
* ``tp2b`` f = sum_j Huber_mu(x_j) on coordinate-aligned data (V = I): convex, x* = (z on S, 0);
* ``tp3a`` f = w sum_j phi(v_j^T x - o_j), phi(u) = u^2/(1+u^2) (Geman-McClure): nonconvex (Theorem 3);
* ``tp3b`` f = 1/2 x^T Q_f x - q^T x with Q_f indefinite on the row space (Theorem 3);
* ``none`` no outer loss (plain least squares, e.g. DeFedAvg's interpolation instance P4).

Oracles: additive Gaussian noise (sigma_h/sqrt(n)) zeta and (sigma_f/sqrt(n)) xi, independent, so
Assumption 2 holds exactly; or, for P4 only, mini-batches of B rows drawn uniformly with replacement
(multiplicative noise that vanishes on the solution set; it breaks Assumption 2, spec pitfall 7).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ratecheck.params import Param, ParamError, declare

from .least_squares_problem import (
    CONVENTIONS,
    OUTERS,
    LeastSquares,
    LeastSquaresBatch,  # noqa: F401  (re-exported)
    QuadraticOuter,
    SeparableOuter,
    _complement,  # noqa: F401  (re-exported)
    _orthogonal,
    _quadratic_min,  # noqa: F401  (re-exported)
)

# ------------------------------------------------------------------------------------------------
# Factories


def from_data(A: np.ndarray, b: np.ndarray, *, outer: Any = None, x0: np.ndarray | None = None,
              spec_params: Mapping[str, Any] | None = None, owner: str = "least_squares",
              require_consistent: bool = True, V1: np.ndarray | None = None, **kwargs: Any) -> LeastSquares:
    """A problem from explicit client data A (N, rows, n), b (N, rows); checks per-client consistency."""
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float)
    if A.ndim != 3 or b.shape != A.shape[:2]:
        raise ParamError(owner, "A", A.shape, f"client data must be A (N, rows, n) and b (N, rows), got b {b.shape}")
    N, rows, n = A.shape
    if require_consistent:
        for i in range(N):
            rank = np.linalg.matrix_rank(A[i])
            if rank < rows:
                raise ParamError(owner, "A", f"client {i}", f"each client's rows must be linearly independent "
                                 f"(rank {rank} < {rows} rows): the construction needs consistent clients")
            x_i = np.linalg.lstsq(A[i], b[i], rcond=None)[0]
            if np.linalg.norm(A[i] @ x_i - b[i]) > 1e-9 * max(1.0, float(np.linalg.norm(b[i]))):
                raise ParamError(owner, "b", f"client {i}", "each client's system must be consistent (min h_i = 0)")
    flat = A.reshape(-1, n)
    u, sv, vt = np.linalg.svd(flat, full_matrices=True)
    rank = int((sv > 1e-10 * sv.max()).sum())
    if rank >= n:
        raise ParamError(owner, "A", f"rank {rank}", f"the stacked system must be over-parameterized (rank < n = {n})")
    if V1 is None:
        V1 = vt[:rank].T
    elif V1.shape != (n, rank) or not np.allclose(V1 @ (V1.T @ flat.T), flat.T):
        raise ParamError(owner, "V1", V1.shape, f"must be an orthonormal basis (n, {rank}) of the row space of A")
    return LeastSquares(A=A, b=b, V1=V1, outer=outer, x0=np.zeros(n) if x0 is None else np.asarray(x0, float),
                        spec_params=dict(spec_params or {}), **kwargs)


@declare(
    dim=Param.int("model dimension n", low=2, high=4096),
    rank=Param.int("r = dim of the row space (r < n)", low=1, high=4096),
    clients=Param.int("number of clients N", low=1, high=4096),
    rows=Param.int("rows m_i per client (m_i <= r: every client consistent)", low=1, high=4096),
    lam_min=Param.real("smallest nonzero eigenvalue of H_h = A^T A/N", positive=True),
    lam_max=Param.real("largest eigenvalue of H_h", positive=True),
    delta=Param.real("inner heterogeneity: b_i = A_i x_0 + delta eps_i", low=0.0),
    outer=Param.choice("outer loss", OUTERS),
    mu=Param.real("outer scale: mu (tp1), s_f (tp2a), Huber weight (tp2b), w (tp3a, tp3b)", positive=True),
    rho=Param.real("outer heterogeneity: c_i = c + rho w_i (tp1, tp2a)", low=0.0),
    c_scale=Param.real("scale of the outer centre c (or offsets o)", low=0.0),
    huber_mu=Param.real("Huber smoothing mu (tp2b): L_f = weight/mu", positive=True),
    directions=Param.int("tp2a: |J|, row-space directions in range(W)", low=1, high=4096),
    sigma_h=Param.real("additive noise of the h oracle, E||zeta||^2 = sigma_h^2", low=0.0),
    sigma_f=Param.real("additive noise of the f oracle, E||xi||^2 = sigma_f^2", low=0.0),
    x0_scale=Param.real("initial point x0 = x0_scale * u, u a fixed random unit vector", low=0.0),
    x0=Param.choice("initial point: 'random' (x0_scale u), 'zero', 'x_eta' (x*_eta at eta_ref)",
                    ("random", "zero", "x_eta")),
    eta_ref=Param.real("measure distances to x*_eta at this eta (TP4)", positive=True, nullable=True),
    lam=Param.real("Moreau parameter lambda of F_lambda (TP3)", positive=True, nullable=True),
    convention=Param.choice("F_lambda = f + dist^2/(2 lam) ('half', package) or f + dist^2/lam ('paper', I18)",
                            CONVENTIONS),
    homogeneous=Param.bool("identical clients (same rows, same centre; needs rows == rank): no dissimilarity, "
                           "G = 0 (spec TP4.1)"),
    seed=Param.int("instance seed", low=0),
)
def make(dim: int = 40, rank: int = 20, clients: int = 10, rows: int = 4, lam_min: float = 0.01,
         lam_max: float = 0.01, delta: float = 0.1, outer: str = "tp1", mu: float = 1e-4, rho: float = 0.5,
         c_scale: float = 1.0, huber_mu: float = 0.5, directions: int = 2, sigma_h: float = 0.0,
         sigma_f: float = 0.0, x0_scale: float = 1.0, x0: str = "random", eta_ref: float | None = None,
         lam: float | None = None, convention: str = "half", homogeneous: bool = False, seed: int = 0) -> LeastSquares:
    """The spec's recipe (§6): controllable row spectrum, consistent clients, inner heterogeneity delta."""
    params = dict(locals())
    owner = "least_squares"
    if rank >= dim:
        raise ParamError(owner, "rank", rank, f"must be < dim = {dim} (over-parameterized: X*_h is not a point)")
    if rows > rank:
        raise ParamError(owner, "rows", rows, f"must be <= rank = {rank} so that every client is consistent")
    if homogeneous and rows != rank:
        raise ParamError(owner, "rows", rows, f"identical consistent clients need rows == rank = {rank}")
    if clients * rows < rank and not homogeneous:
        raise ParamError(owner, "rows", rows, f"clients * rows = {clients * rows} must be >= rank = {rank}")
    if lam_min > lam_max:
        raise ParamError(owner, "lam_min", lam_min, f"must be <= lam_max = {lam_max}")
    if outer == "tp2a" and directions > rank:
        raise ParamError(owner, "directions", directions, f"must be <= rank = {rank}")
    if x0 == "x_eta" and eta_ref is None:
        raise ParamError(owner, "x0", x0, "'x_eta' needs eta_ref")
    if outer in ("tp3a", "tp3b") and lam is None:
        raise ParamError(owner, "lam", lam, f"outer {outer!r} (Theorem 3) needs the Moreau parameter lam > 0")
    rng = np.random.default_rng(seed)
    V = np.eye(dim) if outer == "tp2b" else _orthogonal(rng, dim)  # tp2b: coordinate-aligned
    V1 = V[:, :rank]
    copies = 1 if homogeneous else clients  # distinct data blocks; identical clients repeat one block
    m = copies * rows
    spectrum = lam_min * (lam_max / lam_min) ** (np.arange(rank) / max(rank - 1, 1))
    U = np.linalg.qr(rng.standard_normal((m, rank)))[0]
    W = _orthogonal(rng, rank)
    B = (U * np.sqrt(copies * spectrum)) @ W.T
    A = (B @ V1.T).reshape(copies, rows, dim)
    x_true = rng.standard_normal(dim)
    b = np.einsum("nkj,j->nk", A, x_true) + delta * rng.standard_normal((copies, rows))
    if homogeneous:
        A, b = np.repeat(A, clients, axis=0), np.repeat(b, clients, axis=0)
    direction = rng.standard_normal(dim)
    direction /= np.linalg.norm(direction)  # x0 = x0_scale * (a fixed random unit vector)

    omega = rng.standard_normal((clients, dim))
    omega -= omega.mean(axis=0)
    if homogeneous:
        omega[:] = 0.0
    c = c_scale * rng.standard_normal(dim)
    centers = c + rho * omega
    if outer == "tp1":
        model: QuadraticOuter | SeparableOuter | None
        model = QuadraticOuter(mu * np.eye(dim), mu * centers, 0.5 * mu * np.einsum("ni,ni->n", centers, centers))
    elif outer == "tp2a":
        Wm = np.hstack([V[:, rank:], V1[:, :directions]])
        P = mu * Wm @ Wm.T
        q = centers @ P
        model = QuadraticOuter(P, q, 0.5 * np.einsum("ni,ij,nj->n", centers, P, centers))
    elif outer == "tp2b":
        model = SeparableOuter(np.eye(dim), np.zeros(dim), mu, "huber", huber_mu)
    elif outer == "tp3a":
        model = SeparableOuter(V, c_scale * rng.standard_normal(dim), mu, "geman_mcclure")
    elif outer == "tp3b":
        D = np.where(np.arange(dim) < rank, -mu, mu)
        P = (V * D) @ V.T
        q = np.broadcast_to(c_scale * rng.standard_normal(dim) @ P, (clients, dim)).copy()
        model = QuadraticOuter(P, q, np.zeros(clients))
    else:
        model = None
    problem = from_data(A, b, outer=model, x0=np.zeros(dim), spec_params=params, owner=owner, V1=V1,
                        sigma=float(sigma_h), sigma_f=float(sigma_f), eta_ref=eta_ref, lam=lam, convention=convention)
    start = {"random": x0_scale * direction, "zero": np.zeros(dim)}.get(x0)
    if start is None:
        start = problem.x_eta.copy()
    object.__setattr__(problem, "x0", start)
    return problem


@declare(
    dim=Param.int("model dimension d", low=2, high=20000),
    clients=Param.int("number of clients N", low=1, high=4096),
    rows=Param.int("rows m per client (N m < d: interpolation)", low=1, high=4096),
    batch=Param.int("mini-batch size B of the row-sampling oracle", low=1, high=4096),
    x0_scale=Param.real("initial point w0 = x0_scale * u (u a fixed unit vector)", low=0.0),
    seed=Param.int("instance seed", low=0),
)
def interpolation(dim: int = 2000, clients: int = 16, rows: int = 50, batch: int = 5, x0_scale: float = 1.0,
                  seed: int = 0) -> LeastSquares:
    """DeFedAvg's P4 (spec defedavg §6): F_i(w) = (1/(2m))||A_i w - b_i||^2, Gaussian rows scaled by
    1/sqrt(d), b_i = A_i w_true; F* = 0 on an affine set, w^dagger = A^+ b (minimum norm); the oracle
    samples B rows uniformly with replacement (multiplicative noise, zero on the solution set)."""
    params = dict(locals())
    if clients * rows >= dim:
        raise ParamError("least_squares", "rows", rows, f"clients * rows = {clients * rows} must be < dim = {dim} "
                         "(interpolation needs an over-parameterized system)")
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((clients, rows, dim)) / np.sqrt(dim)
    w_true = rng.standard_normal(dim)
    b = A @ w_true
    u = rng.standard_normal(dim)
    return from_data(A, b, x0=x0_scale * u / np.linalg.norm(u), spec_params=params, row_scale=1.0 / rows,
                     batch_rows=batch)


def tp0(eta_ref: float | None = None) -> LeastSquares:
    """The hand-checkable TP0 instance (spec §6): n = 4, N = 3, one row per client, f = 1/2||x - c||^2."""
    s = 1 / np.sqrt(2)
    A = np.array([[[1.0, 0, 0, 0]], [[0, 1.0, 0, 0]], [[s, s, 0, 0]]])
    b = np.array([[1.0], [1.0], [0.0]])
    c = np.array([0.0, 0.0, 1.0, 2.0])
    outer = QuadraticOuter(np.eye(4), np.tile(c, (3, 1)), np.full(3, 0.5 * c @ c))
    # row_scale 1/3 * 3: h = (1/3) sum 1/2 (a_i^T x - b_i)^2 is the package's (1/N) sum h_i
    return from_data(A, b, outer=outer, x0=np.zeros(4), spec_params={"instance": "tp0"}, eta_ref=eta_ref)


def strategy(**fixed: Any):
    """A hypothesis strategy of least-squares instances (parameters of ``make``), for hunts and property
    tests; keyword arguments fix a parameter (a value) or replace its strategy.

    Small, quickly built and well-posed: n <= 6, the row rank r < n, every client consistent
    (rows <= r, clients * rows >= r), lam_min <= lam_max; spectra, heterogeneity, outer scale, start
    and noise over two to three decades.
    """
    from hypothesis import strategies as st

    from ratecheck.model.strategies import finite_floats, fixed_draws  # start-up: hypothesis loads when a hunt draws

    real = finite_floats
    base = {
        "dim": st.integers(min_value=2, max_value=6),
        "rank_fraction": real(0.0, 1.0),
        "rows_fraction": real(0.0, 1.0),
        "clients": st.integers(min_value=1, max_value=4),
        "lam_max": real(0.001, 1.0),
        "lam_ratio": real(1.0, 10.0),
        "delta": real(0.0, 1.0),
        "outer": st.just("tp1"),
        "mu": real(0.01, 1.0),
        "rho": real(0.0, 1.0),
        "c_scale": real(0.0, 2.0),
        "x0_scale": real(0.1, 10.0),
        "sigma_h": st.just(0.0),
        "sigma_f": st.just(0.0),
        "seed": st.integers(min_value=0, max_value=3),
    }
    base.update(fixed_draws(fixed))

    def to_params(drawn: dict[str, Any]) -> dict[str, Any]:
        params = dict(drawn)
        dim = params["dim"]
        rank_fraction = params.pop("rank_fraction")
        rank = 1 + int(rank_fraction * (dim - 2) + 0.5) if dim > 2 else 1  # 1 <= r < n
        rows = 1 + int(params.pop("rows_fraction") * (rank - 1) + 0.5)  # 1 <= rows <= r
        params.update(rank=rank, rows=rows, clients=max(params["clients"], -(-rank // rows)))
        params["lam_min"] = params["lam_max"] / params.pop("lam_ratio")
        return params

    return st.fixed_dictionaries(base).map(to_params)
