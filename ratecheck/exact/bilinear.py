"""Bilinear maps read off code: out = T u + c + sum_q z_q (F_q u + g_q), per client, for inputs u and standard-normal
draws z (issue #21 item 4: multiplicative noise, exactly).

``read_bilinear`` probes a function of (inputs, draws) on the origin and the unit inputs under zero and unit draws,
after a cheap refusal by second differences (a term quadratic in the draws or in the inputs, a nonlinearity), and
checks the read-off map on random inputs and draws. ``BilinearMap.augmented`` lifts it to the augmented vector
(inputs, 1), where its second moment is E[o o^T] = A S A^T + sum_q B_q S B_q^T (the z_q independent, unit variance,
zero mean: no cross terms).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .probing import AFFINE_RTOL, PROBE_ELEMENTS, NotExact, _close

ADDITIVE_RTOL = 1e-12  # a draw whose map is below this (relative) is not read by the function: round-off of zero


@dataclass(frozen=True)
class BilinearMap:
    """out_i = T_i u + c_i + sum_q z_q (F_q,i u + g_q,i) for client i; only the draws the map reads (``columns``)."""

    T: np.ndarray  # (N, n_out, n_in)
    c: np.ndarray  # (N, n_out)
    F: np.ndarray  # (P, N, n_out, n_in), P = columns.size
    g: np.ndarray  # (P, N, n_out)
    columns: np.ndarray  # (P,): the indices of the draws read, among all the probe's draws

    def apply(self, u: np.ndarray, z: np.ndarray) -> np.ndarray:
        """The map on inputs u (R, N, n_in) and ALL the probe's draws z (R, N, P_all)."""
        out = np.einsum("nij,rnj->rni", self.T, u) + self.c
        if self.columns.size:
            zq = z[..., self.columns]  # (R, N, P)
            P, N, n_out, n_in = self.F.shape  # sum_q z_q F_q first (R rows, few): one product per client
            Fz = np.swapaxes(np.swapaxes(zq, 0, 1) @ self._by_client, 0, 1)  # (R, N, n_out n_in)
            out += (Fz.reshape(-1, N, n_out, n_in) @ u[..., None])[..., 0] + np.einsum("rnq,qni->rni", zq, self.g)
        return out

    @functools.cached_property
    def _by_client(self) -> np.ndarray:
        """F as (N, P, n_out n_in), contiguous per client."""
        return np.ascontiguousarray(np.swapaxes(self.F, 0, 1)).reshape(self.F.shape[1], self.F.shape[0], -1)

    def augmented(self, select: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
        """(A (N, n_out, size), B (P, N, n_out, size)) on an augmented vector of ``size`` entries whose last is 1 and
        whose entries ``select`` are the inputs: out = A v + sum_q z_q B_q v."""
        return _lift(self.T, self.c, select, size), _lift(self.F, self.g, select, size)

    @property
    def multiplies(self) -> bool:
        """Whether some draw multiplies the inputs (not merely added)."""
        scale = max(float(np.max(np.abs(self.T), initial=0.0)), float(np.max(np.abs(self.g), initial=0.0)), 1.0)
        return bool(np.max(np.abs(self.F), initial=0.0) > ADDITIVE_RTOL * scale)


def _lift(T: np.ndarray, c: np.ndarray, select: np.ndarray, size: int) -> np.ndarray:
    """[T | c] scattered into the columns ``select`` (the inputs) and -1 (the constant) of ``size`` columns."""
    out = np.zeros((*T.shape[:-1], size))
    out[..., select] = T
    out[..., -1] = c
    return out


def read_bilinear(run: Callable[[np.ndarray, np.ndarray], np.ndarray], n_in: int, draws: int, clients: int,
                  scale: float, what: str, seed: int = 3) -> BilinearMap:
    """The bilinear map of ``run(u (R, N, n_in), z (R, N, draws)) -> (R, N, n_out)``, every client at once, checked
    on random inputs and draws; NotExact (naming ``what``) when the function is not bilinear in (u, z)."""
    N = clients
    rng = np.random.default_rng(seed)
    # 1) cheaply first: zero second differences in the inputs and in the draws
    u = scale * rng.standard_normal((2, N, n_in))
    z = rng.standard_normal((2, N, draws))
    f = run(np.concatenate([u, u, u, 2 * u, 0 * u]), np.concatenate([z, 2 * z, 0 * z, z, z])).reshape(5, 2, N, -1)
    gap = max(_close(f[1], 2 * f[0] - f[2]), _close(f[3], 2 * f[0] - f[4]))
    if not gap <= AFFINE_RTOL:
        raise NotExact(f"{what} is not bilinear in (inputs, noise): a second difference is off by {gap:.2e} on random "
                       "inputs (a term quadratic in the draws or the inputs, a nonlinearity)")
    n_out = f.shape[-1]
    # 2) rows (q, j): draw q in {none, 0..draws-1} times input j in {origin, e_1..e_n_in}, in chunks
    total = (draws + 1) * (n_in + 1)
    flat_ends = np.empty((total, N, n_out))
    chunk = max(1, PROBE_ELEMENTS // (N * max(n_in, n_out, draws, 1)))
    for lo in range(0, total, chunk):
        rows = np.arange(lo, min(lo + chunk, total))
        q, j = np.divmod(rows, n_in + 1)
        U = np.zeros((rows.size, N, n_in))
        unit = j >= 1
        U[unit, :, j[unit] - 1] = 1.0
        Z = np.zeros((rows.size, N, draws))
        drawn = q >= 1
        Z[drawn, :, q[drawn] - 1] = 1.0
        flat_ends[rows] = run(U, Z)
    ends = flat_ends.reshape(draws + 1, n_in + 1, N, n_out)
    c = ends[0, 0]
    T = np.transpose(ends[0, 1:] - c, (1, 2, 0))  # (N, n_out, n_in)
    g = ends[1:, 0] - c  # (draws, N, n_out)
    F = np.transpose(ends[1:, 1:] - ends[0, 1:][None] - g[:, None], (0, 2, 3, 1))  # (draws, N, n_out, n_in)
    size = max(float(np.max(np.abs(T), initial=0.0)), float(np.max(np.abs(c), initial=0.0)), 1.0)
    reads = (np.max(np.abs(F), axis=(1, 2, 3), initial=0.0) > ADDITIVE_RTOL * size) | \
        (np.max(np.abs(g), axis=(1, 2), initial=0.0) > ADDITIVE_RTOL * size)
    columns = np.flatnonzero(reads)
    out = BilinearMap(T=T, c=c, F=F[columns], g=g[columns], columns=columns)
    # 3) random inputs and draws
    u = scale * rng.standard_normal((3, N, n_in))
    z = rng.standard_normal((3, N, draws))
    gap = _close(run(u, z), out.apply(u, z))
    if not gap <= AFFINE_RTOL:
        raise NotExact(f"{what} is not bilinear in (inputs, noise): off by {gap:.2e} on random inputs (a term "
                       "quadratic in the draws, a nonlinearity or coupled clients)")
    return out
