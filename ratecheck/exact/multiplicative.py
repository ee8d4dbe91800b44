"""Multiplicative noise, exactly: local steps whose oracle samples rows (a discrete draw), so that one
step is x <- T_o x + c_o with a random outcome o, bilinear in state and noise.

A least-squares oracle that draws B of a client's rows uniformly with replacement makes each local
step an affine map chosen at random among finitely many outcomes o (the joint picks), each with
probability p_o. Every outcome's map (T_o, c_o) is read off the algorithm's own one-step code (the
same algorithm with local_steps = 1) by serving the picks as scripted uniforms, and checked on random
starts, clients and picks; the K-step job is checked to be K independent such steps. Then, on the
augmented state v = (x, 1) with maps Ta_o = [[T_o, c_o], [0, 1]],

    E[Phi S Phi^T] = (S -> sum_o p_o Ta_o S Ta_o^T)^K (S),   Phibar = (sum_o p_o Ta_o)^K,

and a job's random part adds E[Phi S Phi^T] - Phibar S Phibar^T (its x block) to the round's
direction covariance, with the weight the additive noise gets (w^2 E[n_i^2] for shared duplicates).
With delays a job starts from w^{t-k} with the schedule's probability p_ik, so its random part is
sum_k p_ik of the same expression on the (block k, 1) part of the augmented moment; a server state
only changes where the direction enters (E), so both run exactly. Gaussian multiplicative steps
(ratecheck.exact.gaussian_steps) plug into the same RandomJobs through ``moment``.
This costs K O N (d + 1)^3 per round; squaring does not apply to a map on matrices. No d^2 x d^2
operator is formed. Outcomes are enumerated, so their number is capped (MAX_OUTCOMES).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..oracles import SmoothFederatedOracles
from .local_steps import compose_power, one_step_variant
from .probing import AFFINE_RTOL, PROBE_ELEMENTS, NotExact, ProbeStream, ProbeStreams, _close
from .seams import ClientMaps

MAX_OUTCOMES = 256  # joint outcomes of one step's discrete draws that are enumerated exactly


@dataclass(frozen=True)
class SampledSteps:
    """One local step x <- T[o, i] x + c[o, i] with outcome o of probability p[o], K steps a job."""

    T: np.ndarray  # (O, N, d, d)
    c: np.ndarray  # (O, N, d)
    p: np.ndarray  # (O,)
    K: int

    def augmented(self) -> np.ndarray:
        """(O, N, d + 1, d + 1): [[T, c], [0, 1]] per outcome and client."""
        O, N, d, _ = self.T.shape
        Ta = np.zeros((O, N, d + 1, d + 1))
        Ta[:, :, :d, :d] = self.T
        Ta[:, :, :d, d] = self.c
        Ta[:, :, d, d] = 1.0
        return Ta

    def mean_augmented(self) -> np.ndarray:
        """(N, d + 1, d + 1): the mean one-step map on (x, 1)."""
        return np.einsum("o,onij->nij", self.p, self.augmented())

    @functools.cached_property
    def _maps(self) -> tuple[np.ndarray, np.ndarray]:
        Ta = self.augmented()
        return Ta, Ta.transpose(0, 1, 3, 2)

    def moment(self, M: np.ndarray) -> np.ndarray:
        """E[Ta M Ta^T] over one step's outcomes, every client at once: (N, n, n) -> (N, n, n)."""
        Ta, TaT = self._maps
        return np.einsum("o,onij->nij", self.p, Ta @ M @ TaT)

    def mean_maps(self) -> ClientMaps:
        """The mean K-step job as ClientMaps (Delta = start - end = A x + b, no additive noise)."""
        Tbar = np.einsum("o,onij->nij", self.p, self.T)
        cbar = np.einsum("o,oni->ni", self.p, self.c)
        return mean_job_maps(Tbar, cbar, self.K)


def mean_job_maps(Tbar: np.ndarray, cbar: np.ndarray, K: int) -> ClientMaps:
    """ClientMaps of K mean steps x <- Tbar_i x + cbar_i composed: Delta = (I - Tbar^K) x - offset; the
    jobs' randomness is RandomJobs' (cov = 0)."""
    N, d = cbar.shape
    power, offset, _ = compose_power(Tbar, cbar, np.zeros((N, d, d)), K)
    return ClientMaps(A=np.eye(d) - power, b=-offset, cov=np.zeros((N, d, d)), draws=0)


class RandomSteps(Protocol):
    """K random local steps a job, independent, each an affine map of (x, 1) with a random part."""

    @property
    def K(self) -> int: ...

    def mean_augmented(self) -> np.ndarray: ...  # (N, n, n)

    def moment(self, M: np.ndarray) -> np.ndarray: ...  # (N, n, n) -> E[Ta M Ta^T], (N, n, n)


class RandomJobs:
    """The jobs' own randomness: S -> sum_i sum_k p_ik Cov(Phi_i v_k) (d, d), v_k = (w^{t-k}, 1) the
    start at delay k read off the augmented second moment S, p_ik the delay table (none: k = 0)."""

    def __init__(self, steps: RandomSteps):
        self.steps = steps
        self.K = steps.K
        mean = steps.mean_augmented()
        self.Phibar = np.linalg.matrix_power(mean, self.K)  # (N, n, n): the mean job, K products once
        self.d = mean.shape[-1] - 1

    def covariance(self, S: np.ndarray, table: np.ndarray | None = None) -> np.ndarray:
        d = self.d
        if table is None or (table.shape[1] == 1 and np.all(table == 1.0)):
            return self._random_part(self._start(S, 0)).sum(axis=0)
        total = np.zeros((d, d))
        for k in range(table.shape[1]):  # each delay's start, weighted per client by its probability
            if table[:, k].any():
                total += np.einsum("i,iab->ab", table[:, k], self._random_part(self._start(S, k)))
        return total

    def _start(self, S: np.ndarray, k: int) -> np.ndarray:
        """E[v_k v_k^T] for v_k = (block k of the state, 1)."""
        d, n = self.d, S.shape[0]
        if k == 0 and n == d + 1:
            return S
        index = np.r_[k * d:(k + 1) * d, n - 1]
        return S[np.ix_(index, index)]

    def _random_part(self, S: np.ndarray) -> np.ndarray:
        """(N, d, d): E[Phi_i S Phi_i^T] - Phibar_i S Phibar_i^T, restricted to x, for every client."""
        N = self.Phibar.shape[0]
        moment = np.broadcast_to(S, (N, *S.shape))
        for _ in range(self.K):  # S -> E[Ta S Ta^T], every client at once
            moment = self.steps.moment(moment)
        mean = self.Phibar @ S @ self.Phibar.transpose(0, 2, 1)
        d = self.d
        return (moment - mean)[:, :d, :d]


@dataclass(frozen=True)
class MultiplicativeOperator:
    """A FedAvg round operator plus the jobs' random part: S' = base(S) + E (weight C(S)) E^T, the
    jobs started at the delays of ``table`` (N, lam + 1) (None: no delays)."""

    base: Any  # RoundOperator | JobsOperator
    E: np.ndarray  # (n, d)
    weight: float
    jobs: RandomJobs
    table: np.ndarray | None = None

    @property
    def F(self) -> np.ndarray:
        return self.base.F

    def apply(self, flat: np.ndarray) -> np.ndarray:
        n = self.E.shape[0]
        out = self.base.apply(flat).reshape(n, n)
        out += self.weight * (self.E @ self.jobs.covariance(flat.reshape(n, n), self.table) @ self.E.T)
        return out.reshape(-1)


def _picks_to_uniforms(picks: np.ndarray, high: int) -> np.ndarray:
    return (picks + 0.5) / high  # floor(high * u) = pick, away from the cell edges


def sampled_steps(algorithm: Any, problem: SmoothFederatedOracles, *, m: int | None = None,
                  seed: int = 2) -> SampledSteps:
    """Every outcome's one-step map, read off ``algorithm`` with local_steps = 1, checked on random
    inputs, and the K-step code checked to be K independent such steps. NotExact otherwise."""
    K, single = one_step_variant(algorithm, "sampled step")
    N, d = problem.num_clients, problem.dim
    everyone = np.arange(N)

    def run(alg: Any, starts: np.ndarray, clients: np.ndarray, serve) -> tuple[np.ndarray, list]:
        R = starts.shape[0]
        journal: list = []
        streams = ProbeStreams(R, lambda purpose: ProbeStream(R, None, serve, purpose=purpose, journal=journal))
        out = np.asarray(alg.client_update(problem, problem.gather(clients), starts.copy(), streams), dtype=float)
        return out, journal

    # 1) the layout of one step's draws: integer picks with the client axis first, no Gaussian noise
    _, log = run(single, np.zeros((1, N, d)), everyone[None], lambda i, shape: np.full((1, *shape), 0.5))
    highs: list[int] = []
    sizes: list[int] = []
    for purpose, kind, shape in log:
        if not kind.startswith("integers:") or not shape or shape[0] != N:
            raise NotExact(f"client_update drew {kind} numbers of shape {shape} from {purpose!r}: multiplicative "
                           f"exact mode needs integer picks only, client axis first ({N} clients)")
        highs.append(int(kind.split(":")[1]))
        sizes.append(int(np.prod(shape[1:], dtype=np.int64)))
    digits = [h for h, s in zip(highs, sizes, strict=True) for _ in range(s)]  # one per pick
    O = int(np.prod(digits, dtype=np.int64))
    if O > MAX_OUTCOMES:
        raise NotExact(f"one local step has {O} joint outcomes of its row picks (more than {MAX_OUTCOMES}): "
                       "exact mode enumerates them")
    outcomes = np.array(list(itertools.product(*[range(h) for h in digits])), dtype=np.int64).reshape(O, len(digits))
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)

    def serve_picks(picks: np.ndarray):
        """A uniform script serving picks (steps, R, slots, P), call by call in the logged layout."""
        def serve(index: int, shape: tuple[int, ...]) -> np.ndarray:
            step, call = divmod(index, len(sizes))
            if step >= picks.shape[0] or shape[0] != picks.shape[2] \
                    or int(np.prod(shape[1:], dtype=np.int64)) != sizes[call]:
                raise NotExact("client_update's row picks are not laid out as one step's, step after step")
            block = picks[step, :, :, offsets[call]:offsets[call + 1]]
            return _picks_to_uniforms(block, highs[call]).reshape((picks.shape[1], *shape))
        return serve

    # 2) per outcome: the origin and unit starts, every client at once, in chunks of probe rows (a
    # problem may gather a d x d matrix per slot and row, as in probe_client_update)
    T = np.empty((O, N, d, d))
    c = np.empty((O, N, d))
    chunk = max(1, PROBE_ELEMENTS // (N * d * d))
    for o in range(O):
        for lo in range(0, d + 1, chunk):
            rows = np.arange(lo, min(lo + chunk, d + 1))
            unit = rows >= 1
            starts = np.zeros((rows.size, N, d))
            starts[unit, :, rows[unit] - 1] = 1.0
            picks = np.broadcast_to(outcomes[o], (1, rows.size, N, len(digits)))
            out, _ = run(single, starts, np.broadcast_to(everyone, (rows.size, N)), serve_picks(picks))
            ends = starts - out  # client_update returns start - end
            if lo == 0:
                c[o] = ends[0]
            T[o][:, :, rows[unit] - 1] = np.transpose(ends[unit] - c[o], (1, 2, 0))
    p = np.full(O, 1.0 / O)
    steps = SampledSteps(T=T, c=c, p=p, K=K)
    # 3) the K-step code on random starts, clients and picks against K sampled steps
    rng = np.random.default_rng(seed)
    m = N if m is None else m
    R = 3
    clients = rng.integers(0, N, (R, m))
    x = max(1.0, float(np.max(np.abs(problem.initial_point())))) * rng.standard_normal((R, m, d))
    which = rng.integers(0, O, (K, R, m))
    picks_k = outcomes[which]  # (K, R, m, P)
    actual, journal = run(algorithm, x, clients, serve_picks(picks_k))
    if len(journal) != K * len(sizes):
        raise NotExact(f"the {K}-step client_update drew {len(journal)} times, not {K} x {len(sizes)}")
    end = x.copy()
    for k in range(K):
        end = np.einsum("rmij,rmj->rmi", T[which[k], clients], end) + c[which[k], clients]
    gap = _close(actual, x - end)
    if not gap <= AFFINE_RTOL:
        raise NotExact(f"client_update is not K independent row-sampled affine steps: off by {gap:.2e} on random "
                       "inputs (a nonlinearity, a step that reads the step counter, or coupled clients)")
    return steps
