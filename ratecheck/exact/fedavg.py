"""Exact moments of the FedAvg family, from its probed seams and schedules."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ..algorithms.fedavg import FedAvg, FedAvgState
from ..oracles import SmoothFederatedOracles
from ..seeding import Streams
from .delays import delay_table, schedule_delay_table, slot_moments
from .gaussian_steps import GaussianSteps, gaussian_steps
from .local_steps import client_maps
from .multiplicative import MultiplicativeOperator, RandomJobs, SampledSteps, sampled_steps
from .operators import DENSE_MAX, JobsOperator, RoundOperator, _outer_map
from .probing import NotExact
from .seams import (
    ServerMap,
    _server_shape,
    probe_aggregate,
    probe_server_step,
)

SCHEDULE_SLACK = 4  # an overridden schedule() may reach this far beyond its delay's lam (an off-by-one)


class FedAvgModel:
    """Exact moments of FedAvg.round, built from the probed seams of one algorithm on one problem.

    The round's skeleton (FedAvg.round: sample clients, delays, one job per distinct client when
    duplicates are shared, ring buffer of the last lam+1 models) is mirrored here in expectation;
    every number comes from the seams and the schedules, probed.
    """

    def __init__(self, algorithm: FedAvg, problem: SmoothFederatedOracles, rounds: int):
        if type(algorithm).round is not FedAvg.round:
            raise NotExact(f"{algorithm.name} overrides round(); exact mode reads the seams of FedAvg.round")
        if not hasattr(problem, "gather"):
            raise NotExact(f"problem {problem.family!r} has no per-client oracles")
        self.algorithm, self.problem = algorithm, problem
        N, d = problem.num_clients, problem.dim
        self.N, self.d = N, d
        self.lam = int(algorithm.delay.lam)
        self.m = algorithm.participation.per_round(N)
        # an overridden schedule(): its clients must be FedAvg.schedule's (checked on seeded draws), its
        # delays are read off it (a delay off by one shows), the ring buffer as deep as they reach
        self.own_schedule = type(algorithm).schedule is not FedAvg.schedule
        if self.own_schedule:
            self._check_schedule_clients()
            reach = max(int(np.flatnonzero(self.delay_table(t, width=self.lam + SCHEDULE_SLACK).sum(axis=0) > 0).max())
                        for t in sorted({0, 1, 2, rounds - 1}))
            self.lam = max(self.lam, reach)
        self.random_jobs: RandomJobs | None = None  # multiplicative-noise local steps (row sampling, Gaussian)
        try:
            clients = client_maps(algorithm, problem, m=self.m)  # K local steps composed by squaring
        except NotExact as additive:
            steps = _random_steps(algorithm, problem, self.m, additive)
            clients, self.random_jobs = steps.mean_maps(), RandomJobs(steps)
        self.noise_sum = clients.cov.sum(axis=0)  # only the sum enters a round
        clients = dataclasses.replace(clients, cov=self.noise_sum[None])  # memory: N d^2 fewer
        self.w = probe_aggregate(algorithm, self.m, N, d)
        shared = algorithm.duplicates == "shared" or algorithm.participation.mode != "with_replacement"
        self.moments = slot_moments(algorithm.participation, N, "shared" if shared else "independent")
        x0 = np.asarray(problem.initial_point(), dtype=float).reshape(1, d)
        server0 = algorithm.server_init(x0)
        self.server_shape = _server_shape(server0)
        self.s = int(np.prod(self.server_shape, dtype=np.int64)) if self.server_shape is not None else 0
        self.u_init = np.zeros(self.s) if server0 is None else np.asarray(server0, float).reshape(-1)
        self.n = (self.lam + 1) * d + self.s + 1  # augmented dimension, the constant last
        # jobs J_{i,k} = A_i P_k + b_i e_const: (N, lam+1, d, n); the client maps are not kept besides
        J = np.zeros((N, self.lam + 1, d, self.n))
        for k in range(self.lam + 1):
            J[:, k, :, k * d:(k + 1) * d] = clients.A
        J[:, :, :, -1] = clients.b[:, None, :]
        self.jobs = J
        self.client_draws = clients.draws
        del clients
        # server maps probed at rounds 0, 1 and T-1; if they differ, every round is probed
        probes = [probe_server_step(algorithm, d, self.server_shape, t) for t in sorted({0, 1, rounds - 1})]
        self.server_time_invariant = all(p.same_as(probes[0]) for p in probes)
        self._server0 = probes[0]
        # delay tables probed over 3 (lam+1) rounds and at T-1: periodic in t mod (lam+1) (every
        # schedule of DelaySchedule is) or else probed every round
        self.period = self.lam + 1
        window = [self.delay_table(t, check=(t == 0)) for t in range(min(rounds, 3 * self.period))]
        periodic = all(np.array_equal(tab, window[t % self.period]) for t, tab in enumerate(window))
        periodic &= np.array_equal(self.delay_table(rounds - 1), window[(rounds - 1) % self.period]) \
            if rounds - 1 >= len(window) else True
        self._tables = window[:self.period] if periodic else None
        self.max_delay = 0
        self._operators: dict[Any, RoundOperator | JobsOperator | MultiplicativeOperator] = {}

    def delay_table(self, t: int, check: bool = False, width: int | None = None) -> np.ndarray:
        if self.own_schedule:
            return schedule_delay_table(self.algorithm, self.problem, t, self.lam if width is None else width,
                                        check=check)
        return delay_table(self.algorithm.delay, np.arange(self.N), t, self.lam, check=check)

    def _check_schedule_clients(self, replicas: int = 16) -> None:
        """An overridden schedule() must draw the clients (and the duplicate convention) FedAvg.schedule
        draws, on the same seeded streams: exact mode averages the sampling from the participation's
        multiplicity moments. Else NotExact (Monte Carlo draws it)."""
        d, lam = self.d, int(self.algorithm.delay.lam)
        for t in (0, 1, 2):
            state = FedAvgState(history=np.zeros((replicas, lam + 1, d)), t=t)
            try:
                mine = self.algorithm.schedule(state, self.problem, t, Streams(t, "5e" * 32, range(replicas)))
            except (AttributeError, TypeError, KeyError) as exc:
                # e.g. an event timeline in the state: its delays are random per replica, not modelled
                raise NotExact(f"{self.algorithm.name}.schedule() needs state beyond the model history "
                               f"(w^t, ..., w^(t-lam)), e.g. an event timeline: {type(exc).__name__}: {exc}") from None
            paper = FedAvg.schedule(self.algorithm, state, self.problem, t, Streams(t, "5e" * 32, range(replicas)))
            same = (np.shape(mine[0]) == np.shape(paper[0]) and np.array_equal(mine[0], paper[0])
                    and bool(mine[2]) == bool(paper[2]))
            if not same:
                raise NotExact(f"{self.algorithm.name}.schedule() draws other clients (or another duplicate "
                               f"convention) than FedAvg.schedule with participation {self.algorithm.participation} "
                               "on the same seeded streams: exact mode averages only that sampling")

    # -- state layout ---------------------------------------------------------------------------
    def initial(self) -> np.ndarray:
        """E[v v^T] at round 0 (deterministic start)."""
        x0 = np.asarray(self.problem.initial_point(), dtype=float)
        v = np.concatenate([np.tile(x0, self.lam + 1), self.u_init, [1.0]])
        return np.outer(v, v)

    def measure_space(self) -> tuple[int, Callable[[np.ndarray], Any], np.ndarray]:
        """(dim, V -> algorithm output, where V sits in v): FedAvg's output is w^t, block 0 of v."""
        return self.d, lambda V: V, np.arange(self.d)

    def final(self, second: np.ndarray) -> dict[str, np.ndarray]:
        return {"x": second[:self.d, -1][None, :].copy()}

    # -- one round ------------------------------------------------------------------------------
    def server_map(self, t: int) -> ServerMap:
        return self._server0 if self.server_time_invariant else probe_server_step(
            self.algorithm, self.d, self.server_shape, t)

    def operator(self, t: int) -> RoundOperator | JobsOperator | MultiplicativeOperator:
        key: int | tuple[int, bytes]
        if self._tables is not None and self.server_time_invariant:
            op = self._operators.get(t % self.period)
            if op is not None:
                return op
            key, table = t % self.period, self._tables[t % self.period]
        else:
            table = self._tables[t % self.period] if self._tables is not None else self.delay_table(t)
            key = (t, table.tobytes())
        op = self._operators.get(key)
        if op is None:
            if len(self._operators) > 4 * self.period:  # time-varying: keep the cache small
                self._operators.clear()
            op = self._build(table, self.server_map(t))
            if self.random_jobs is not None:  # each job's own randomness: w^2 E[n_i^2] sum_ik p_ik Cov(Phi_i v_k)
                assert op.E is not None  # FedAvg's direction always enters
                op = MultiplicativeOperator(op, op.E, self.w * self.w * self.moments.single, self.random_jobs,
                                            None if self.lam == 0 else table)
            self._operators[key] = op
            reached = np.flatnonzero(table.sum(axis=0) > 0)
            self.max_delay = max(self.max_delay, int(reached.max(initial=0)))
        return op

    def _build(self, table: np.ndarray, sm: ServerMap) -> RoundOperator | JobsOperator:
        """The round's operator for one delay table: D = w sum_i n_i (J_{i,d_i} v + G_i z_i)."""
        d, lam, s, n, w, mo = self.d, self.lam, self.s, self.n, self.w, self.moments
        M = np.zeros((n, n))
        E = np.zeros((n, d))
        u = slice((lam + 1) * d, (lam + 1) * d + s)
        M[:d, :d] = sm.Sx
        M[:d, u] = sm.Su
        M[:d, -1] = sm.s0
        E[:d] = sm.Sd
        for k in range(1, lam + 1):  # the ring buffer: w^{t-k+1} becomes w^{(t+1)-k}
            M[k * d:(k + 1) * d, (k - 1) * d:k * d] = np.eye(d)
        if s:
            M[u, :d] = sm.Tx
            M[u, u] = sm.Tu
            M[u, -1] = sm.u0
            E[u] = sm.Td
        M[-1, -1] = 1.0
        if table.shape[1] == 1 and np.all(table == 1.0):  # no delays: the jobs themselves (a view, no copy)
            Jbar = self.jobs[:, 0]
        else:
            Jbar = np.einsum("ik,ikap->iap", table, self.jobs)  # delay-averaged jobs
        Jsum = Jbar.sum(axis=0)
        B = w * mo.first * Jsum  # E[D | v] = B v
        if n > DENSE_MAX:
            return self._jobs_operator(table, Jbar, Jsum, M + E @ B, E)
        # E[D D^T | v] - E[D|v] E[D|v]^T as a linear map of S = E[v v^T] (noise via S[-1, -1] = 1);
        # sums of J S J^T over clients and delays are one product of stacked jobs (weights >= 0)
        Q = mo.pair * _outer_map(Jsum[None])
        if mo.same:
            Q += mo.same * _outer_map(Jbar)
        Q += mo.single * _outer_map(np.sqrt(table)[:, :, None, None] * self.jobs)
        Q *= w * w
        Q[:, :, -1, -1] += w * w * mo.single * self.noise_sum
        Q -= _outer_map(B[None])
        return RoundOperator(F=M + E @ B, E=E, Q=Q.reshape(d * d, n * n))

    def _jobs_operator(self, table: np.ndarray, Jbar: np.ndarray, Jsum: np.ndarray, F: np.ndarray,
                       E: np.ndarray) -> JobsOperator:
        """The same round as ``_build``'s Q, in O(d^2 + N d n) memory: Cov(D | v) averaged is
        w^2 [(pair - first^2) Jsum S Jsum^T + same sum_i Jbar_i S Jbar_i^T
             + single sum_i sum_k p_ik J_ik S J_ik^T + single S[-1, -1] sum_i Cov_i]."""
        w, mo = self.w, self.moments
        if np.all((table == 0.0) | (table == 1.0)):  # each client at one delay: Jbar_i = J_{i, d_i}
            jobs, weights = Jbar, np.full(self.N, w * w * (mo.same + mo.single))
        else:
            who, delay = np.nonzero(table)
            jobs = np.concatenate([self.jobs[who, delay], Jbar]) if mo.same else self.jobs[who, delay]
            weights = w * w * mo.single * table[who, delay]
            if mo.same:
                weights = np.concatenate([weights, np.full(self.N, w * w * mo.same)])
        keep = weights != 0.0
        if not keep.all():
            jobs, weights = jobs[keep], weights[keep]
        return JobsOperator(F=F, E=E, Jsum=Jsum, pair=w * w * (mo.pair - mo.first ** 2), jobs=jobs,
                            weights=weights, noise=w * w * mo.single * self.noise_sum)

    def step(self, t: int, flat: np.ndarray) -> np.ndarray:
        """vec E[v v^T] after round t from before it."""
        return self.operator(t).apply(flat)

    def costs(self) -> dict[str, float]:
        """Expected costs per round, as FedAvg.round counts them."""
        jobs = self.moments.expected_jobs
        return {"oracle_calls": jobs * self.algorithm.local_steps, "vectors_up": jobs,
                "vectors_down": float(self.N) if self.algorithm.broadcast_to_all else jobs}

    def info(self, second: np.ndarray) -> dict[str, Any]:
        """The algorithm's own info() on a state carrying the largest delay of positive probability."""
        state = FedAvgState(history=np.zeros((1, self.lam + 1, self.d)), t=0, max_delay=self.max_delay)
        return self.algorithm.info(state)


def _random_steps(algorithm: FedAvg, problem: SmoothFederatedOracles, m: int,
                  additive: NotExact) -> SampledSteps | GaussianSteps:
    """The local steps as random affine maps when the job is not affine-Gaussian: row-sampled picks, else
    Gaussian multiplicative draws; NotExact with every reading's reason."""
    try:
        return sampled_steps(algorithm, problem, m=m)
    except NotExact as sampled:
        try:
            return gaussian_steps(algorithm, problem, m=m)
        except NotExact as gaussian:
            raise NotExact(f"{additive}; read as row-sampled steps: {sampled}; read as Gaussian multiplicative "
                           f"steps: {gaussian}") from None
