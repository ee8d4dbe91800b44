"""Federated quadratics whose clients' gradient noise levels differ: sigma_i per client.

F_i(x) = 1/2 (x - c_i)^T H_i (x - c_i) as ``quadratic`` (same Hessians, centres and x0 for the same
parameters and seed); client i's stochastic gradient is grad F_i(x) + xi, xi ~ N(0, sigma_i^2/d I), so
E||xi||^2 = sigma_i^2 with sigma_i = sigma * noise_spread^(-i/(N-1)), log-spaced from sigma (client 0)
down to sigma / noise_spread (client N-1). The bounded-variance constant is sigma = max_i sigma_i.

With a per-client noise level the clients' K-step noise covariances sum_j T_i^j Sigma_i T_i^jT differ in
both factors, so code that mixes one client's covariance with another's, or weights them uniformly, shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ratecheck.params import Param, declare
from ratecheck.problem import Constant
from ratecheck.seeding import ReplicaStream

from . import quadratic
from .quadratic import Quadratic, QuadraticBatch


@dataclass(frozen=True, eq=False)
class ClientNoiseBatch(QuadraticBatch):
    scales: np.ndarray  # (R, m, 1): sigma_i / sqrt(d) of the active clients


@dataclass(frozen=True, eq=False)
class ClientNoiseQuadratic(Quadratic):
    family: ClassVar[str] = "client_noise_quadratic"

    noise_levels: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (N,) sigma_i

    def __post_init__(self) -> None:
        super().__post_init__()
        levels = np.asarray(self.noise_levels, dtype=float)
        if levels.shape != (self.num_clients,):
            raise ValueError(f"noise_levels must have shape (N,) = ({self.num_clients},), got {levels.shape}")
        if levels.min() < 0 or not np.isclose(levels.max(), self.sigma, rtol=1e-12, atol=0.0):
            raise ValueError(f"noise_levels must be >= 0 with max_i sigma_i = sigma = {self.sigma}, got "
                             f"min {levels.min():.6g}, max {levels.max():.6g}")
        object.__setattr__(self, "noise_levels", levels)

    def gather(self, clients: np.ndarray) -> ClientNoiseBatch:
        base = super().gather(clients)
        scales = (self.noise_levels / np.sqrt(self.dim))[clients][..., None]
        return ClientNoiseBatch(base.hessians, base.centers, base.offsets, scales)

    def stochastic_grad(self, batch: ClientNoiseBatch, w: np.ndarray, noise: ReplicaStream) -> np.ndarray:
        """grad F_i(w) + (sigma_i / sqrt(d)) z, z (R, m, d) standard normal."""
        grad = self.local_grad(batch, w)
        if self.sigma != 0.0:
            xi = noise.normal(w.shape[1:])
            xi *= batch.scales
            grad += xi
        return grad

    def constants(self) -> dict[str, Constant]:
        out = super().constants()
        out["sigma"] = Constant(float(self.sigma), "max_i sigma_i: client i's noise xi ~ N(0, sigma_i^2/d I) has "
                                "E||xi||^2 = sigma_i^2 exactly")
        return out


# the quadratic family's declarations, where the meaning is the same (sigma here is the largest level)
SHARED = ("dim", "clients", "mu", "L", "zeta", "heterogeneity", "curvature", "x0_offset", "seed")


@declare(
    **{name: quadratic.make.declared[name] for name in SHARED},  # type: ignore[attr-defined]  # set by @declare
    sigma=Param.real("largest client noise level: E||xi||^2 = sigma^2 for client 0", low=0.0),
    noise_spread=Param.real("sigma_0 / sigma_{N-1}: client noise levels log-spaced from sigma down", low=1.0),
)
def make(
    dim: int = 3,
    clients: int = 4,
    mu: float = 0.5,
    L: float = 1.0,
    zeta: float = 0.5,
    sigma: float = 0.5,
    noise_spread: float = 4.0,
    heterogeneity: str = "random",
    curvature: str = "per_client",
    x0_offset: float = 1.0,
    seed: int = 0,
) -> ClientNoiseQuadratic:
    """Build an instance: Hessians, centres and x0 as ``quadratic`` with the same parameters and seed;
    sigma_i = sigma * noise_spread^(-i/(N-1)) (sigma for N = 1)."""
    params = dict(locals())  # every value already checked by its declaration above (@declare)
    base = quadratic.make(dim=dim, clients=clients, mu=mu, L=L, zeta=zeta, sigma=sigma, heterogeneity=heterogeneity,
                          curvature=curvature, x0_offset=x0_offset, seed=seed)
    levels = sigma * noise_spread ** (-np.arange(clients) / max(clients - 1, 1))
    return ClientNoiseQuadratic(hessians=base.hessians, centers=base.centers, sigma=base.sigma, x0=base.x0,
                                radius=0.0, spec_params=params, noise_levels=levels)
