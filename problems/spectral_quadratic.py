"""Federated quadratics whose client Hessians share one eigenbasis (issue #21): heterogeneity through
the clients' spectra and minimizers, stored in O(N d) (a rotated basis adds one d x d matrix).

F_i(x) = 1/2 (x - c_i)^T H_i (x - c_i),  H_i = Q diag(h_i) Q^T,  F = (1/N) sum_i F_i,
stochastic gradient grad F_i(x) + xi with xi ~ N(0, sigma^2/d I) (E||xi||^2 = sigma^2), as the
``quadratic`` family. Client i's spectrum: h_ij = mu (L/mu)^(clip(p_j + spread u_ij, 0, 1)), p_j =
(j-1)/(d-1) the log-spaced positions of ``quadratic``'s spectrum and u_ij ~ U(-1, 1) (seeded): spread
= 0 is ``quadratic``'s shared spectrum, spread = 1 spans [mu, L] independently per client. Centres
c_i = zeta u_i as ``quadratic`` (random directions, centred, max norm 1, or alternating +-e_d).

The minimizer and every constant are closed form coordinate by coordinate in the eigenbasis:
y* = (sum_i h_i * (Q^T c_i)) / (sum_i h_i), so instances with d = 1000, N = 100 build in milliseconds
and exact mode runs on them diagonally, in O(N d) once and O(d) a round (ratecheck.exact.diagonal).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ratecheck.assumptions import DIST0, Assumption
from ratecheck.params import Param, declare
from ratecheck.problem import Constant, SmoothFederatedProblem, check_positive

from .quadratic import Quadratic, _orthogonal, client_directions

HETEROGENEITY = ("none", "alternating", "random")


@dataclass(frozen=True, eq=False)
class SpectralBatch:
    spectra: np.ndarray  # (R, m, d) the active clients' eigenvalues
    offsets: np.ndarray  # (R, m, d): h_i * (Q^T c_i), in the eigenbasis


@dataclass(frozen=True, eq=False)
class SpectralQuadratic(SmoothFederatedProblem):
    family: ClassVar[str] = "spectral_quadratic"
    # the same constants as quadratic's, computed from the spectra
    assumptions: ClassVar[tuple[Assumption, ...]] = Quadratic.assumptions

    spectra: np.ndarray  # (N, d), every entry > 0
    basis: np.ndarray | None  # (d, d) orthogonal Q, or None for the standard basis
    centers: np.ndarray  # (N, d)
    sigma: float
    x0: np.ndarray  # (d,)
    spec_params: Mapping[str, Any]
    # derived in __post_init__ (not parameters)
    eig_centers: np.ndarray = field(init=False, repr=False, compare=False)
    h_bar: np.ndarray = field(init=False, repr=False, compare=False)
    x_star: np.ndarray = field(init=False, repr=False, compare=False)
    offsets: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        spectra = np.asarray(self.spectra, dtype=float)
        centers = np.asarray(self.centers, dtype=float)
        if spectra.ndim != 2 or spectra.shape != centers.shape:
            raise ValueError(f"spectra and centers must both have shape (N, d), got {spectra.shape} and {centers.shape}")
        if not spectra.min() > 0:
            raise ValueError(f"spectra must be positive (strong convexity): min {spectra.min():.3g}")
        n_clients, dim = spectra.shape
        if self.basis is not None:
            basis = np.asarray(self.basis, dtype=float)
            if basis.shape != (dim, dim) or not np.allclose(basis.T @ basis, np.eye(dim), atol=1e-10):
                raise ValueError(f"basis must be an orthogonal (d, d) = {(dim, dim)} matrix")
            object.__setattr__(self, "basis", basis)
        check_positive("sigma", self.sigma, strict=False)
        object.__setattr__(self, "spectra", spectra)
        object.__setattr__(self, "centers", centers)
        object.__setattr__(self, "x0", np.asarray(self.x0, dtype=float))
        object.__setattr__(self, "num_clients", n_clients)
        object.__setattr__(self, "dim", dim)
        eig_centers = self.to_eigen(centers)  # (N, d)
        h_bar = spectra.mean(axis=0)
        y_star = (spectra * eig_centers).mean(axis=0) / h_bar
        object.__setattr__(self, "eig_centers", eig_centers)
        object.__setattr__(self, "h_bar", h_bar)  # the eigenvalues of H_bar = mean_i H_i
        object.__setattr__(self, "x_star", self.from_eigen(y_star))
        object.__setattr__(self, "offsets", spectra * eig_centers)

    # -- the shared eigenbasis (read by exact mode to probe diagonally) ----------------------
    def to_eigen(self, x: np.ndarray) -> np.ndarray:
        """Coordinates of points (..., d) in the eigenbasis: Q^T x."""
        return x if self.basis is None else x @ self.basis

    def from_eigen(self, y: np.ndarray) -> np.ndarray:
        """Points (..., d) from eigen-coordinates: Q y."""
        return y if self.basis is None else y @ self.basis.T

    @property
    def eigenbasis(self) -> np.ndarray | None:
        """Q with every client Hessian Q diag(h_i) Q^T (None: the standard basis)."""
        return self.basis

    @property
    def params(self) -> Mapping[str, Any]:
        return self.spec_params

    # -- oracles --------------------------------------------------------------------------
    def gather(self, clients: np.ndarray) -> SpectralBatch:
        return SpectralBatch(self.spectra[clients], self.offsets[clients])

    def local_grad(self, batch: SpectralBatch, w: np.ndarray) -> np.ndarray:
        return self.from_eigen(batch.spectra * self.to_eigen(w) - batch.offsets)

    def grad(self, x: np.ndarray) -> np.ndarray:
        return self.from_eigen(self.h_bar * self.to_eigen(x - self.x_star))

    def value(self, x: np.ndarray) -> np.ndarray:
        y = self.to_eigen(x - self.x_star)
        return 0.5 * np.einsum("...i,i,...i->...", y, self.h_bar, y) + self.f_star

    @property
    def f_star(self) -> float:
        diff = self.eig_centers - self.to_eigen(self.x_star)
        return float(0.5 * np.mean(np.sum(self.spectra * diff * diff, axis=1)))

    def initial_point(self) -> np.ndarray:
        return self.x0

    def measures(self, point: np.ndarray) -> dict[str, np.ndarray]:
        y = self.to_eigen(point - self.x_star)
        grad = self.h_bar * y
        return {
            "grad_norm_sq": np.einsum("ri,ri->r", grad, grad),
            "dist_sq": np.einsum("ri,ri->r", y, y),
            "gap": 0.5 * np.einsum("ri,ri->r", y, grad),
        }

    def solution(self) -> dict[str, np.ndarray]:
        return {"x_star": self.x_star}

    def constants(self) -> dict[str, Constant]:
        y_star = self.to_eigen(self.x_star)
        at_star = self.spectra * (y_star - self.eig_centers)  # grad F_i(x*) in the eigenbasis, (N, d)
        b = np.linalg.norm(at_star, axis=1)
        radius = max(float(np.linalg.norm(self.x0 - self.x_star)), 1e-12)
        spread = np.abs(self.spectra - self.h_bar).max(axis=1)  # ||H_i - H_bar|| (shared eigenbasis)
        nu = float((spread * radius + b).max())
        L, mu = float(self.spectra.max()), float(self.h_bar.min())
        return {
            "L": Constant(L, "max eigenvalue of the client Hessians (their spectra)"),
            "mu": Constant(mu, "min eigenvalue of H_bar = mean_i H_i (mean spectrum, shared eigenbasis)"),
            "kappa": Constant(L / mu, "L / mu"),
            "sigma": Constant(float(self.sigma), "noise xi ~ N(0, sigma^2/d I): E||xi||^2 = sigma^2 exactly"),
            "nu": Constant(nu, f"max_i ||H_i - H_bar|| R + ||grad F_i(x*)|| on the ball R = {radius:.4g}"),
            "zeta": Constant(nu, "alias of nu (the package's heterogeneity zeta)"),
            "G": Constant(float((self.spectra.max(axis=1) * radius + b).max()),
                          f"max_i L_i R + ||grad F_i(x*)|| on the ball B(x*, R = {radius:.4g})"),
            "Delta": Constant(float(self.value(self.x0) - self.f_star), "F(x0) - F* with F* in closed form"),
            "F_star": Constant(self.f_star, "F(x*) in closed form"),
            DIST0: Constant(float(np.sum((self.x0 - self.x_star) ** 2)), "||x0 - x*||^2, x* in closed form"),
        }


@declare(
    dim=Param.int("dimension d", low=1, high=100_000),
    clients=Param.int("number of clients N", low=1, high=1_000_000),
    mu=Param.real("smallest eigenvalue any client may have", positive=True),
    L=Param.real("largest eigenvalue any client may have", positive=True),
    spread=Param.real("heterogeneity of the spectra: log-position jitter, 0 (shared) to 1", low=0.0, high=1.0),
    zeta=Param.real("heterogeneity of the minimizers: client centres c_i = zeta u_i", low=0.0),
    sigma=Param.real("gradient noise: E||xi||^2 = sigma^2", low=0.0),
    heterogeneity=Param.choice("directions u_i: none, alternating (+-e_d), random", HETEROGENEITY),
    rotate=Param.bool("a random orthogonal eigenbasis (else the standard basis)"),
    x0_offset=Param.real("x0 = x* + x0_offset 1_d"),
    seed=Param.int("seed of the instance construction (not of the runs)", low=0),
)
def make(
    dim: int = 10,
    clients: int = 16,
    mu: float = 0.1,
    L: float = 1.0,
    spread: float = 0.5,
    zeta: float = 1.0,
    sigma: float = 1.0,
    heterogeneity: str = "random",
    rotate: bool = False,
    x0_offset: float = 1.0,
    seed: int = 0,
) -> SpectralQuadratic:
    """Build an instance from JSON-able parameters (the registry's factory)."""
    params = dict(locals())
    if mu > L:
        raise ValueError(f"mu must be <= L, got mu={mu} > L={L}")
    rng = np.random.default_rng(seed)
    position = np.arange(dim) / max(dim - 1, 1)
    jitter = rng.uniform(-1.0, 1.0, (clients, dim))
    spectra = mu * (L / mu) ** np.clip(position + spread * jitter, 0.0, 1.0)
    basis = _orthogonal(rng, dim) if rotate else None
    centers = zeta * client_directions(rng, clients, dim, heterogeneity if zeta else "none", np.eye(dim)[-1])
    probe = SpectralQuadratic(spectra, basis, centers, float(sigma), np.zeros(dim), params)
    return SpectralQuadratic(spectra, basis, centers, float(sigma), probe.x_star + x0_offset, params)
