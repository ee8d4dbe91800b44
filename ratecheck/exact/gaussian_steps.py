"""Gaussian multiplicative noise, exactly: local steps whose oracle draws a random Hessian
A_xi = A + sum_k xi_k B_k (independent standard-normal xi), so that one step is bilinear in state and
noise:

    x' = T x + c + sum_q z_q (F_q x + g_q),   z the step's standard-normal draws.

Every piece is read off the algorithm's own one-step code (the same algorithm with local_steps = 1):
zero draws on the origin and the unit starts give (T, c); the unit draw q on the origin gives g_q and
on the unit starts F_q (the bilinear part); then the map is checked on random starts, clients and
draws (a term quadratic in the draws, a nonlinearity or coupled clients shows), and the K-step code
is checked to be K independent such steps. On the augmented state v = (x, 1), with
Ta = [[T, c], [0, 1]] and Fa_q = [[F_q, g_q], [0, 0]], one step maps the second moment as

    E[v' v'^T] = Ta S Ta^T + sum_q Fa_q S Fa_q^T

(the z_q are independent with unit variance and zero mean; no cross terms). Draws that enter
additively (F_q = 0 to round-off, the gradient noise) collapse into S[-1, -1] sum_q g_q g_q^T, so a
step costs (1 + P_mult) N (d + 1)^3 with P_mult the draws that multiply the state. RandomJobs
(multiplicative.py) propagates this over the K steps and adds the jobs' random part to the round,
with delays and server state as for row sampling.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..oracles import SmoothFederatedOracles
from .bilinear import ADDITIVE_RTOL, read_bilinear
from .local_steps import _k_step_update, one_step_variant
from .multiplicative import mean_job_maps
from .probing import AFFINE_RTOL, NotExact, ProbeStream, ProbeStreams, _close, column_script, normal_layout
from .seams import ClientMaps

BILINEAR_ELEMENTS = 2**24  # entries of the bilinear maps F_q (P_mult N d^2) exact mode holds, at most


@dataclass(frozen=True)
class GaussianSteps:
    """One local step x <- T_i x + c_i + sum_q z_q (F[q, i] x + g[q, i]) + (additive draws, Cov add_i)."""

    T: np.ndarray  # (N, d, d)
    c: np.ndarray  # (N, d)
    F: np.ndarray  # (P, N, d, d + 1): [F_q, g_q] of the draws that multiply the state
    additive: np.ndarray  # (N, d, d): sum of g_q g_q^T over the draws that do not
    K: int

    def mean_augmented(self) -> np.ndarray:
        N, d = self.c.shape
        Ta = np.zeros((N, d + 1, d + 1))
        Ta[:, :d, :d] = self.T
        Ta[:, :d, d] = self.c
        Ta[:, d, d] = 1.0
        return Ta

    @functools.cached_property
    def _maps(self) -> tuple[np.ndarray, np.ndarray]:
        Ta = self.mean_augmented()
        return Ta, Ta.transpose(0, 2, 1)

    def moment(self, M: np.ndarray) -> np.ndarray:
        """E[v' v'^T] from E[v v^T] = M (N, n, n) over one step, every client at once."""
        Ta, TaT = self._maps
        out = Ta @ M @ TaT
        d = self.c.shape[1]
        for Fq in self.F:  # (N, d, n): the bilinear draws one at a time (memory: no (P, N, n, n) stack)
            out[:, :d, :d] += Fq @ M @ Fq.transpose(0, 2, 1)
        out[:, :d, :d] += M[:, -1, -1, None, None] * self.additive
        return out

    def mean_maps(self) -> ClientMaps:
        return mean_job_maps(self.T.copy(), self.c.copy(), self.K)


def gaussian_steps(algorithm: Any, problem: SmoothFederatedOracles, *, m: int | None = None,
                   seed: int = 3) -> GaussianSteps:
    """The one-step bilinear map read off ``algorithm`` with local_steps = 1, checked on random inputs,
    and the K-step code checked to be K independent such steps. NotExact otherwise."""
    K, single = one_step_variant(algorithm, "bilinear step")
    N, d = problem.num_clients, problem.dim
    everyone = np.arange(N)

    def run(starts: np.ndarray, clients: np.ndarray, serve) -> tuple[np.ndarray, list]:
        R = starts.shape[0]
        journal: list = []
        streams = ProbeStreams(R, lambda purpose: ProbeStream(R, serve, purpose=purpose, journal=journal))
        out = np.asarray(single.client_update(problem, problem.gather(clients), starts.copy(), streams), dtype=float)
        return starts - out, journal  # client_update returns start - end: the step's end point

    # 1) the layout of one step's draws: Gaussian only, client axis first
    _, log = run(np.zeros((1, N, d)), everyone[None], None)
    sizes, _ = normal_layout(log, N, "client_update (Gaussian multiplicative exact mode)")
    P = sum(sizes)

    def serve_columns(Z: np.ndarray):
        """A normal script serving Z (R, slots, P) call by call in the logged layout."""
        return column_script(Z, sizes, "client_update's draws depend on its inputs (data-dependent control flow)")

    # 2) the bilinear map of one step, every client at once (a second-difference refusal first, then unit
    # starts times unit draws, checked at random: ratecheck.exact.bilinear)
    total = (P + 1) * (d + 1)
    if total * N * d > 4 * BILINEAR_ELEMENTS:
        raise NotExact(f"reading a bilinear step with {P} draws at d = {d}, N = {N} takes {total} probe rows of "
                       f"{N * d} numbers, more than exact mode holds ({4 * BILINEAR_ELEMENTS} numbers)")
    scale = max(1.0, float(np.max(np.abs(problem.initial_point()))))
    read = read_bilinear(lambda U, Z: run(U, np.broadcast_to(everyone, U.shape[:2]), serve_columns(Z))[0], d, P, N,
                         scale, "client_update's step", seed=seed)
    T, c = read.T, read.c
    F = np.zeros((P, N, d, d))
    g = np.zeros((P, N, d))
    F[read.columns], g[read.columns] = read.F, read.g
    size = max(float(np.max(np.abs(T), initial=0.0)), float(np.max(np.abs(g), initial=0.0)), 1.0)
    bilinear = np.max(np.abs(F), axis=(1, 2, 3), initial=0.0) > ADDITIVE_RTOL * size
    if not bilinear.any():
        raise NotExact("none of client_update's draws multiplies the state: no bilinear step to read (the "
                       "affine-Gaussian reading applies, or the noise enters nonlinearly)")
    mult = int(bilinear.sum())
    if mult * N * d * (d + 1) > BILINEAR_ELEMENTS:
        raise NotExact(f"{mult} of one step's draws multiply the state: {mult} x {N} clients x {d}^2 bilinear "
                       f"entries exceed the {BILINEAR_ELEMENTS} exact mode holds")
    Fa = np.concatenate([F[bilinear], g[bilinear][..., None]], axis=-1)  # (P_mult, N, d, d + 1)
    add = g[~bilinear]
    additive = np.einsum("qna,qnb->nab", add, add)
    steps = GaussianSteps(T=T, c=c, F=Fa, additive=additive, K=K)
    # 3) the one-step code and the K-step code on random starts, clients and draws
    rng = np.random.default_rng(seed)
    m = N if m is None else m
    R = 3
    clients = rng.integers(0, N, (R, m))
    x = max(1.0, float(np.max(np.abs(problem.initial_point())))) * rng.standard_normal((R, m, d))
    z = rng.standard_normal((K, R, m, P))
    gap = _close(run(x, clients, serve_columns(z[0]))[0], _step(T, c, F, g, clients, x, z[0]))
    if not gap <= AFFINE_RTOL:
        raise NotExact(f"client_update's step is not bilinear in (start, noise): off by {gap:.2e} on random inputs "
                       "(a term quadratic in the draws, a nonlinearity or coupled clients)")
    if K > 1:
        actual = _k_step_update(algorithm, problem, x, clients, z, K)
        if actual is None:
            raise NotExact(f"the {K}-step client_update does not draw its noise as {K} repeats of one step's")
        end = x
        for k in range(K):
            end = _step(T, c, F, g, clients, end, z[k])
        gap = _close(actual, x - end)
        if not gap <= AFFINE_RTOL:
            raise NotExact(f"client_update is not {K} independent bilinear steps: off by {gap:.2e} on random inputs "
                           "(a step that reads the step counter or a local schedule)")
    return steps


def _step(T: np.ndarray, c: np.ndarray, F: np.ndarray, g: np.ndarray, clients: np.ndarray, x: np.ndarray,
          z: np.ndarray) -> np.ndarray:
    """The probed step on slots (R, m): T_i x + c_i + sum_q z_q (F_q,i x + g_q,i)."""
    out = np.einsum("rmij,rmj->rmi", T[clients], x) + c[clients]
    for q in range(F.shape[0]):
        out += z[..., q, None] * (np.einsum("rmij,rmj->rmi", F[q][clients], x) + g[q][clients])
    return out
