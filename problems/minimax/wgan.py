"""(b') The paper's WGAN in closed form, spec fessgda §6.3 (NC-SC, conditioning through lambda)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ratecheck.params import Param, declare
from ratecheck.problem import Constant

from .base import CLIENTS, NOISE, X0, Y0, MinimaxBatch, MinimaxProblem, _vector


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
    # derived in __post_init__ (not parameters)
    m1: float = field(init=False, repr=False, compare=False)
    m2: float = field(init=False, repr=False, compare=False)

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
    # every value is checked by its declaration (@declare above); only cross-parameter rules remain here
    return WGAN(lam=float(lam), data_mean=float(data_mean), data_std=float(data_std),
                moments=shard_moments(clients, float(data_mean), float(data_std), split), R_x=float(R_x),
                R_phi=float(R_phi), x0=_vector("x0", x0, 2), y0=_vector("y0", y0, 2), noise=float(noise), zeta=0.0,
                omega=1.0, spec_params=params)
