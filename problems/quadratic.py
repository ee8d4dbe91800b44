"""Heterogeneous federated quadratics with closed-form minimizer and analytic constants.

F_i(x) = 1/2 (x - c_i)^T H_i (x - c_i),  F = (1/N) sum_i F_i,  stochastic gradient
grad F_i(x) + xi with xi ~ N(0, sigma^2/d I), so E||xi||^2 = sigma^2 exactly (spec defedavg §6).

Knobs: conditioning (spectrum h_j = mu (L/mu)^((j-1)/(d-1)), log-spaced from mu to L), heterogeneity
zeta (client centres c_i = c_bar + zeta u_i with sum_i u_i = 0), noise sigma, shared or per-client
curvature. DeFedAvg's P1 (IID, ill-conditioned) and P2 (non-IID, alternating +-e_d) are parameters of this
family, P3 of ``cosine_quadratic`` below (ratecheck.proofs.defedavg.presets).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ratecheck.assumptions import (
    DIST0,
    FEDERATED,
    Assumption,
    bounded_gradient,
    bounded_variance,
    heterogeneity,
    initial_distance,
    initial_gap,
    smooth,
    strongly_convex,
)
from ratecheck.params import Param, declare
from ratecheck.problem import Constant, SmoothFederatedProblem, check_positive

HETEROGENEITY = ("none", "alternating", "random")
CURVATURE = ("shared", "per_client")


@dataclass(frozen=True, eq=False)
class QuadraticBatch:
    hessians: np.ndarray  # (d, d) shared, or (R, m, d, d) gathered per client
    centers: np.ndarray  # (R, m, d)
    offsets: np.ndarray  # (R, m, d): H_i c_i, so a local gradient is H_i x - H_i c_i (one pass less)


@dataclass(frozen=True, eq=False)
class Quadratic(SmoothFederatedProblem):
    family: ClassVar[str] = "quadratic"
    assumptions: ClassVar[tuple[Assumption, ...]] = FEDERATED.assume(
        smooth("L"), strongly_convex("mu", "kappa"), bounded_variance("sigma"), heterogeneity("nu", "zeta"),
        bounded_gradient("G"), initial_gap("Delta", "F_star"), initial_distance(DIST0))

    hessians: np.ndarray  # (d, d) shared by all clients, or (N, d, d)
    centers: np.ndarray  # (N, d)
    sigma: float
    x0: np.ndarray  # (d,)
    radius: float  # ball B(x*, radius) on which G^2 and nu^2 are bounded (Assumption 6 is local)
    spec_params: Mapping[str, Any]
    # derived in __post_init__ (not parameters)
    h_bar: np.ndarray = field(init=False, repr=False, compare=False)
    x_star: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        centers = np.asarray(self.centers, dtype=float)
        hess = np.asarray(self.hessians, dtype=float)
        if centers.ndim != 2:
            raise ValueError(f"centers must have shape (N, d), got {centers.shape}")
        n_clients, dim = centers.shape
        if hess.shape not in ((dim, dim), (n_clients, dim, dim)):
            raise ValueError(
                f"hessians must have shape (d, d) = {(dim, dim)} or (N, d, d) = {(n_clients, dim, dim)}"
                f" to match centers {centers.shape}, got {hess.shape}"
            )
        if not np.allclose(hess, np.swapaxes(hess, -1, -2)):
            raise ValueError("hessians must be symmetric")
        eig = np.linalg.eigvalsh(hess)
        if eig.min() <= 0:
            where = "" if hess.ndim == 2 else f" (client {int(np.argmin(eig.min(axis=-1)))})"
            raise ValueError(
                f"hessians must be positive definite{where}: min eigenvalue {eig.min():.3g} <= 0, "
                "and strong convexity (mu > 0) needs SPD client Hessians"
            )
        x0 = np.asarray(self.x0, dtype=float)
        if x0.shape != (dim,):
            raise ValueError(f"x0 must have shape (d,) = {(dim,)}, got {x0.shape}")
        check_positive("sigma", self.sigma, strict=False)
        object.__setattr__(self, "centers", centers)
        object.__setattr__(self, "hessians", hess)
        object.__setattr__(self, "x0", x0)
        object.__setattr__(self, "num_clients", n_clients)
        object.__setattr__(self, "dim", dim)
        h_bar = hess if hess.ndim == 2 else hess.mean(axis=0)
        hc = centers @ hess if hess.ndim == 2 else np.einsum("nij,nj->ni", hess, centers)
        x_star = np.linalg.solve(h_bar, hc.mean(axis=0))
        object.__setattr__(self, "h_bar", h_bar)
        object.__setattr__(self, "x_star", x_star)
        if self.radius is None or self.radius <= 0:
            object.__setattr__(self, "radius", max(float(np.linalg.norm(x0 - x_star)), 1e-12))

    # -- identity -------------------------------------------------------------------------
    @property
    def params(self) -> Mapping[str, Any]:
        return self.spec_params

    # -- oracles --------------------------------------------------------------------------
    def gather(self, clients: np.ndarray) -> QuadraticBatch:
        hess = self.hessians if self.hessians.ndim == 2 else self.hessians[clients]
        centers = self.centers[clients]
        return QuadraticBatch(hess, centers, self._apply(hess, centers))

    def _apply(self, hess: np.ndarray, w: np.ndarray) -> np.ndarray:
        """H_i w_i for points (R, m, d) and shared (d, d) or gathered (R, m, d, d) Hessians."""
        if hess.ndim == 2:  # one (R m, d) x (d, d) product; H is symmetric
            return (w.reshape(-1, self.dim) @ hess).reshape(w.shape)
        return np.einsum("rmij,rmj->rmi", hess, w)

    def local_grad(self, batch: QuadraticBatch, w: np.ndarray) -> np.ndarray:
        grad = self._apply(batch.hessians, w)
        grad -= batch.offsets
        return grad

    def client_grads(self, x: np.ndarray) -> np.ndarray:
        """Exact gradients of all N clients at global points x (R, d): (R, N, d)."""
        clients = np.broadcast_to(np.arange(self.num_clients), (x.shape[0], self.num_clients))
        return self.local_grad(self.gather(clients), np.repeat(x[:, None, :], self.num_clients, 1))

    def grad(self, x: np.ndarray) -> np.ndarray:
        """Exact gradient of F at x (..., d)."""
        return (x - self.x_star) @ self.h_bar

    def value(self, x: np.ndarray) -> np.ndarray:
        diff = x - self.x_star
        return 0.5 * np.einsum("...i,ij,...j->...", diff, self.h_bar, diff) + self.f_star

    # -- solution and measures ------------------------------------------------------------
    @property
    def f_star(self) -> float:
        diff = self.centers - self.x_star
        if self.hessians.ndim == 2:
            return float(0.5 * np.mean(np.einsum("ni,ij,nj->n", diff, self.hessians, diff)))
        return float(0.5 * np.mean(np.einsum("ni,nij,nj->n", diff, self.hessians, diff)))

    def initial_point(self) -> np.ndarray:
        return self.x0

    def measures(self, point: np.ndarray) -> dict[str, np.ndarray]:
        diff = point - self.x_star
        grad = diff @ self.h_bar
        return {
            "grad_norm_sq": np.einsum("ri,ri->r", grad, grad),
            "dist_sq": np.einsum("ri,ri->r", diff, diff),
            "gap": 0.5 * np.einsum("ri,ri->r", diff, grad),
        }

    def solution(self) -> dict[str, np.ndarray]:
        return {"x_star": self.x_star}

    # -- constants ------------------------------------------------------------------------
    def constants(self) -> dict[str, Constant]:
        hess = self.hessians if self.hessians.ndim == 3 else self.hessians[None]
        eig_clients = np.linalg.eigvalsh(hess)  # (N or 1, d)
        eig_bar = np.linalg.eigvalsh(self.h_bar)
        L = float(eig_clients.max())
        mu = float(eig_bar.min())
        at_star = self.client_grads(self.x_star[None])[0]  # grad F_i(x*), (N, d)
        b = np.linalg.norm(at_star, axis=1)
        r = self.radius
        if self.hessians.ndim == 2:
            nu = float(b.max())  # grad F_i - grad F = H (c_bar - c_i) is constant in x
            nu_how = "max_i ||H (c_i - c_bar)||: grad F_i - grad F is constant in x"
        else:
            spread = np.linalg.norm(self.hessians - self.h_bar, ord=2, axis=(1, 2))
            nu = float((spread * r + b).max())
            nu_how = f"max_i ||H_i - H_bar|| R + ||grad F_i(x*)|| on the ball R = {r:.4g}"
        G = float((eig_clients.max(axis=1) * r + b).max())
        delta = float(self.value(self.x0) - self.f_star)
        return {
            "L": Constant(L, "max eigenvalue of the client Hessians (eigvalsh)"),
            "mu": Constant(mu, "min eigenvalue of H_bar = mean_i H_i (eigvalsh)"),
            "kappa": Constant(L / mu, "L / mu"),
            "sigma": Constant(float(self.sigma), "noise xi ~ N(0, sigma^2/d I): E||xi||^2 = sigma^2 exactly"),
            "nu": Constant(nu, nu_how),
            "zeta": Constant(nu, "alias of nu (the package's heterogeneity zeta)"),
            "G": Constant(G, f"max_i L_i R + ||grad F_i(x*)|| on the ball B(x*, R = {r:.4g})"),
            "Delta": Constant(delta, "F(x0) - F* with F* in closed form"),
            "F_star": Constant(self.f_star, "F(x*) in closed form"),
            DIST0: Constant(float(np.sum((self.x0 - self.x_star) ** 2)), "||x0 - x*||^2, x* in closed form"),
        }


def spectrum(dim: int, mu: float, L: float) -> np.ndarray:
    """h_j = mu (L/mu)^((j-1)/(d-1)), j = 1..d: condition number L/mu, log-spaced (spec P1)."""
    if dim == 1:
        return np.array([L])  # make() insists on mu == L here
    return mu * (L / mu) ** (np.arange(dim) / (dim - 1))


@declare(
    dim=Param.int("dimension d", low=1, high=10_000),
    clients=Param.int("number of clients N", low=1, high=1_000_000),
    mu=Param.real("smallest eigenvalue of the spectrum (strong convexity)", positive=True),
    L=Param.real("largest eigenvalue of the spectrum (smoothness)", positive=True),
    zeta=Param.real("heterogeneity: client centres c_i = c_bar + zeta u_i", low=0.0),
    sigma=Param.real("gradient noise: E||xi||^2 = sigma^2", low=0.0),
    heterogeneity=Param.choice("directions u_i: none, alternating (+-e_d), random", HETEROGENEITY),
    curvature=Param.choice("shared Hessian or one per client", CURVATURE),
    rotate=Param.bool("rotate the shared Hessian by a random orthogonal matrix"),
    x0_offset=Param.real("x0 = x* + x0_offset 1_d"),
    radius=Param.real("radius of the ball where G and nu are bounded (default ||x0 - x*||)", positive=True,
                      nullable=True),
    seed=Param.int("seed of the instance construction (not of the runs)", low=0),
)
def make(
    dim: int = 10,
    clients: int = 16,
    mu: float = 0.1,
    L: float = 1.0,
    zeta: float = 0.0,
    sigma: float = 1.0,
    heterogeneity: str = "alternating",
    curvature: str = "shared",
    rotate: bool = False,
    x0_offset: float = 1.0,
    radius: float | None = None,
    seed: int = 0,
) -> Quadratic:
    """Build a quadratic instance from JSON-able parameters (the registry's factory).

    heterogeneity 'alternating': u_i = (+1 for even i, -1 for odd i) e_d, the direction of largest
    curvature (spec P2, N even); 'random': u_i i.i.d. Gaussian directions, centred and scaled so
    that max_i ||u_i|| = 1. x* = c_bar = 0 for shared curvature; x0 = x* + x0_offset 1_d.
    """
    params = dict(locals())  # every value already checked by its declaration above (@declare)
    if mu > L:
        raise ValueError(f"mu must be <= L, got mu={mu} > L={L}")
    if dim == 1 and mu != L:
        raise ValueError(f"dim=1 has a single eigenvalue, so it needs mu == L, got mu={mu}, L={L}")
    rng = np.random.default_rng(seed)  # instance construction only; runs have their own streams
    h = spectrum(dim, mu, L)
    if curvature == "shared":
        q = _orthogonal(rng, dim) if rotate else np.eye(dim)
        hessians = (q * h) @ q.T
    else:
        qs = np.stack([_orthogonal(rng, dim) for _ in range(clients)])
        hessians = np.einsum("nij,j,nkj->nik", qs, h, qs)
    top = np.eye(dim)[np.argmax(np.diag(hessians))] if curvature == "shared" and not rotate else np.eye(dim)[-1]
    centers = zeta * client_directions(rng, clients, dim, heterogeneity if zeta else "none", top)
    h_bar = hessians if hessians.ndim == 2 else hessians.mean(axis=0)
    hc = centers @ hessians if hessians.ndim == 2 else np.einsum("nij,nj->ni", hessians, centers)
    x_star = np.linalg.solve(h_bar, hc.mean(axis=0))
    return Quadratic(
        hessians=hessians,
        centers=centers,
        sigma=float(sigma),
        x0=x_star + x0_offset,
        radius=radius or 0.0,  # 0: the default ||x0 - x*|| (__post_init__)
        spec_params=params,
    )


def client_directions(rng: np.random.Generator, clients: int, dim: int, heterogeneity: str,
                      axis: np.ndarray) -> np.ndarray:
    """u_i (N, d) with sum_i u_i = 0: none (zeros), alternating (+-axis: +1 for even i, -1 for odd
    i, N even) or random (i.i.d. Gaussian, centred, scaled so that max_i ||u_i|| = 1)."""
    if heterogeneity == "none":
        return np.zeros((clients, dim))
    if heterogeneity == "alternating":
        if clients % 2:
            raise ValueError(f"heterogeneity 'alternating' needs an even number of clients, got {clients}")
        return np.where(np.arange(clients)[:, None] % 2 == 0, 1.0, -1.0) * axis
    u = rng.standard_normal((clients, dim))
    u -= u.mean(axis=0)
    u /= np.linalg.norm(u, axis=1).max()
    return u


def _orthogonal(rng: np.random.Generator, dim: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    return q * np.sign(np.diag(r))


# ------------------------------------------------------------------------------------------------
# The smooth nonconvex separable "cosine-perturbed quadratic" (spec defedavg P3).


@dataclass(frozen=True, eq=False)
class CosineBatch:
    centers: np.ndarray  # (R, m, d)


@dataclass(frozen=True, eq=False)
class CosineQuadratic(SmoothFederatedProblem):
    """F_i(w) = 1/2 ||w - c_i||^2 + alpha sum_j cos(w_j): nonconvex for alpha > 1, L = 1 + alpha.

    grad F_i(w) = w - c_i - alpha sin(w); grad F_i - grad F = c_bar - c_i is constant, so
    nu^2 = max_i ||c_i - c_bar||^2 exactly. F is separable: F* is the sum over coordinates of the
    least root value of phi_j(x) = 1/2 (x - c_bar_j)^2 + alpha cos x, found by sign changes on a fine
    grid of [c_bar_j - alpha, c_bar_j + alpha] (every stationary point lies there) and brentq.
    """

    family: ClassVar[str] = "cosine_quadratic"
    assumptions: ClassVar[tuple[Assumption, ...]] = FEDERATED.assume(
        smooth("L"), bounded_variance("sigma"), heterogeneity("nu", "zeta"), bounded_gradient("G"),
        initial_gap("Delta", "F_star"), initial_distance(DIST0))

    centers: np.ndarray  # (N, d)
    alpha: float
    sigma: float
    x0: np.ndarray
    spec_params: Mapping[str, Any]
    # derived in __post_init__ (not parameters)
    c_bar: np.ndarray = field(init=False, repr=False, compare=False)
    spread: float = field(init=False, repr=False, compare=False)
    minimizer: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        centers = np.asarray(self.centers, dtype=float)
        object.__setattr__(self, "centers", centers)
        object.__setattr__(self, "num_clients", centers.shape[0])
        object.__setattr__(self, "dim", centers.shape[1])
        object.__setattr__(self, "c_bar", centers.mean(axis=0))
        object.__setattr__(self, "spread", float(0.5 * np.mean(np.sum((centers - centers.mean(axis=0)) ** 2, axis=1))))
        object.__setattr__(self, "minimizer", np.array([self._best_root(c) for c in self.c_bar]))

    @property
    def params(self) -> Mapping[str, Any]:
        return self.spec_params

    def _best_root(self, c: float) -> float:
        from scipy.optimize import brentq

        a = self.alpha
        grid = np.linspace(c - a - 1e-9, c + a + 1e-9, 100_001)
        g = grid - c - a * np.sin(grid)
        roots = [brentq(lambda x: x - c - a * np.sin(x), grid[k], grid[k + 1])
                 for k in np.flatnonzero(np.sign(g[:-1]) * np.sign(g[1:]) <= 0)]
        phi = [0.5 * (x - c) ** 2 + a * np.cos(x) for x in roots]
        return float(roots[int(np.argmin(phi))])

    # -- oracles ----------------------------------------------------------------------------
    def gather(self, clients: np.ndarray) -> CosineBatch:
        return CosineBatch(self.centers[clients])

    def local_grad(self, batch: CosineBatch, w: np.ndarray) -> np.ndarray:
        return w - batch.centers - self.alpha * np.sin(w)

    def grad(self, x: np.ndarray) -> np.ndarray:
        return x - self.c_bar - self.alpha * np.sin(x)

    def value(self, x: np.ndarray) -> np.ndarray:
        return 0.5 * np.sum((x - self.c_bar) ** 2, axis=-1) + self.alpha * np.sum(np.cos(x), axis=-1) + self.spread

    @property
    def f_star(self) -> float:
        return float(self.value(self.minimizer))

    def initial_point(self) -> np.ndarray:
        return self.x0

    def measures(self, point: np.ndarray) -> dict[str, np.ndarray]:
        grad = self.grad(point)
        return {"grad_norm_sq": np.einsum("ri,ri->r", grad, grad), "gap": self.value(point) - self.f_star}

    def solution(self) -> dict[str, np.ndarray]:
        return {"x_star": self.minimizer}  # one global minimizer; replicas may settle at any of 2^d

    def constants(self) -> dict[str, Constant]:
        nu = float(np.sqrt(np.max(np.sum((self.centers - self.c_bar) ** 2, axis=1))))
        radius = float(np.linalg.norm(self.x0 - self.c_bar)) + self.alpha * np.sqrt(self.dim)
        return {
            "L": Constant(1.0 + self.alpha, "Hessian I - alpha diag(cos w): eigenvalues in [1 - alpha, 1 + alpha]"),
            "sigma": Constant(float(self.sigma), "noise xi ~ N(0, sigma^2/d I): E||xi||^2 = sigma^2 exactly"),
            "nu": Constant(nu, "max_i ||c_i - c_bar||: grad F_i - grad F = c_bar - c_i is constant"),
            "zeta": Constant(nu, "alias of nu"),
            "G": Constant(radius + nu + self.alpha * np.sqrt(self.dim),
                          f"R + nu + alpha sqrt(d) on the ball B(c_bar, R = {radius:.4g}) holding the stationary points"),
            "Delta": Constant(float(self.value(self.x0)) - self.f_star, "F(x0) - F*, F* by root finding (brentq)"),
            "F_star": Constant(self.f_star, "sum of the least root values of phi_j, plus the spread term"),
            DIST0: Constant(float(np.sum((self.x0 - self.minimizer) ** 2)), "||x0 - x*||^2, x* the minimizer (root finding)"),
        }


@declare(
    dim=Param.int("dimension d", low=1, high=10_000),
    clients=Param.int("number of clients N", low=1, high=1_000_000),
    alpha=Param.real("cosine amplitude: nonconvex for alpha > 1, L = 1 + alpha", positive=True),
    zeta=Param.real("heterogeneity: c_i = +-zeta e_d alternating (0: IID)", low=0.0),
    sigma=Param.real("gradient noise: E||xi||^2 = sigma^2", low=0.0),
    x0_offset=Param.real("x0 = c_bar + x0_offset 1_d (0.01: next to the local maximum at c_bar = 0)"),
)
def make_cosine(dim: int = 10, clients: int = 16, alpha: float = 3.0, zeta: float = 0.0, sigma: float = 1.0,
                x0_offset: float = 0.01) -> CosineQuadratic:
    """Spec defedavg P3 from JSON-able parameters (registry name 'cosine_quadratic')."""
    params = dict(locals())
    if zeta > 0 and clients % 2:
        raise ValueError(f"zeta > 0 alternates the centres: it needs an even number of clients, got {clients}")
    u = np.zeros((clients, dim))
    if zeta > 0:
        u[:, -1] = np.where(np.arange(clients) % 2 == 0, 1.0, -1.0)
    return CosineQuadratic(centers=zeta * u, alpha=float(alpha), sigma=float(sigma),
                           x0=np.full(dim, float(x0_offset)), spec_params=params)


def strategy(**fixed: Any):
    """A hypothesis strategy of quadratic instances (parameters of ``make``), for hunts and property
    tests; keyword arguments fix a parameter (a value) or replace its strategy.

    Ranges are those the family builds quickly and well-posed: d <= 12, condition number <= 100,
    noise and heterogeneity over four decades.
    """
    from hypothesis import strategies as st

    from ratecheck.model.strategies import fixed_draws  # start-up: hypothesis loads when a hunt draws

    scales = st.floats(min_value=0.05, max_value=20.0, allow_nan=False, allow_infinity=False)
    base = {
        "dim": st.integers(min_value=2, max_value=12),
        "clients": st.sampled_from([16, 32]),
        "L": scales,
        "kappa": st.floats(min_value=1.0, max_value=100.0),
        "sigma": st.floats(min_value=0.01, max_value=100.0),
        "zeta": st.floats(min_value=0.0, max_value=10.0),
        "heterogeneity": st.sampled_from(HETEROGENEITY),
        "curvature": st.sampled_from(CURVATURE),
        "x0_offset": st.floats(min_value=0.01, max_value=10.0),
        "seed": st.integers(min_value=0, max_value=3),
    }
    base.update(fixed_draws(fixed))

    def to_params(drawn: dict[str, Any]) -> dict[str, Any]:
        params = dict(drawn)
        kappa = params.pop("kappa")
        params.setdefault("mu", params["L"] / kappa)
        if params["heterogeneity"] == "none":
            params["zeta"] = 0.0
        return params

    return st.fixed_dictionaries(base).map(to_params)
