"""Exact expectations for linear-Gaussian runs: moment propagation instead of Monte Carlo (issue #8).

On a quadratic problem with additive Gaussian noise every round of FedAvg-type methods is an affine
map of the state and the noise, given the clients drawn and their delays. The mean and the second
moment of the (augmented) state then propagate exactly, and every quadratic measure's expectation
follows: no Monte-Carlo error, a cost independent of the number of replicas.

Faithful to the implementation: nothing here re-derives an algorithm. The affine maps are READ OFF
the algorithm's own seams by probing: ``client_update`` runs on probe start points (the origin and
the unit vectors, laid out as "replicas") with a probe noise stream (zero draws, then unit draws),
``aggregate`` and ``server_step`` on unit inputs, ``problem.measures`` on points that determine a
quadratic form, the delay schedule's ``sample`` on the exact quadrature of its uniform draws. Every
read-off map is then checked on random inputs; a piece that is not affine (a projection that binds,
tanh, clipping, a non-Gaussian draw) raises ``NotExact`` with the reason, and the engine falls back
to Monte Carlo (mode ``auto``) or refuses (mode ``exact``). So a bug in an algorithm's seams shows in
exact mode too. What stays here is the round's skeleton (who is sampled, which stale model a job
starts from, how duplicates count): its expectations come from the multiplicity moments of the
sampling scheme and the delay schedule's distribution, exactly.

The augmented state of the FedAvg family is v = (w^t, w^{t-1}, ..., w^{t-lam}, server state, 1); a
round maps it to v' = M v + E D with the aggregated direction D = w sum_i n_i (J_{i,d_i} v + G_i z_i),
n_i the multiplicity of client i, d_i its delay, z_i its standard-normal draws. E[v'] and E[v' v'^T]
follow in closed form from E[n_i], E[n_i^2], E[n_i n_k] and the delay probabilities.

Algorithms without those seams (SimFBO, FESS-GDA, StR-FedAvg, FedBiO) are exact where their whole
``round`` is affine-Gaussian given the clients drawn: ``RoundModel`` probes the round itself on the
flattened state, under every outcome of its client sampling (the 'sampling' stream scripted to the
draws that pick each outcome), and averages E S' = sum_s p_s (F_s S F_s^T + N_s) over the outcomes
(enumerated, up to OUTCOME_CAP) or, for rounds additive over the clients drawn (F_s = sum_i n_i D_i,
checked on random outcomes), through the multiplicities' exact moments E n_i n_k. Any other uniform
draw (random local-step counts, random delays inside ``round``) raises NotExact.

A run in exact mode produces the usual Trace with ONE "replica" (the expectations), zero spread,
``info["exact"] = True`` (``Trace.exact``). Other algorithm families join by exposing the same seams
(client_update -> aggregate -> server_step) and registering a model with ``exact_model``.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .algorithms.base import Algorithm
from .algorithms.fedavg import FedAvg, FedAvgState
from .fit import log_spaced_checkpoints
from .oracles import SmoothFederatedOracles
from .participation import Participation
from .problem import Problem
from .seeding import ReplicaStream, Streams
from .trace import RunConfig, Trace

AFFINE_RTOL = 1e-9  # a read-off map must reproduce the code on random inputs to this relative error
DIVERGENCE_THRESHOLD = 1e100  # as in the engine: a second moment beyond this counts as divergence
DENSE_MAX = 16  # augmented states up to this size propagate as one dense (n^2 x n^2) matrix
MIXTURE_DENSE_MAX = 40  # averaged over many sampling outcomes, dense pays off up to this size (20 MB)
OUTCOME_CAP = 5000  # client-sampling outcomes a round is probed under, at most, when not additive
SAMPLING_CHECKS = 8  # random outcomes that check an additive sampling map (and re-verify every round)
PROBE_ROWS = 8192  # replicas per probe call (memory)
BOOKKEEPING_WATCH = 8  # verified rounds of constant bookkeeping steps before a vouched round is carried
SCHEDULE_SLACK = 4  # an overridden schedule() may reach this far beyond its delay's lam (an off-by-one)


class NotExact(ValueError):
    """The run is not linear-Gaussian (or not supported): the message says which piece and why."""


class _NotAdditive(Exception):
    """A round's map under client sampling is not additive over the clients drawn: enumerate instead."""


# ------------------------------------------------------------------------------------------------
# Probe streams: scripted draws served through the ReplicaStream interface


class ProbeStream(ReplicaStream):
    """A ReplicaStream that serves scripted draws instead of random ones.

    ``normal`` serves, call after call, the arrays a ``script(call, shape)`` returns (R, *shape);
    every request is logged in ``calls`` as (kind, shape), so probes can be laid out per draw.
    ``uniform`` serves ``uniform_script`` the same way, or raises NotExact: a uniform draw inside a
    step that should be linear-Gaussian (minibatch sampling, say) is not Gaussian noise.
    """

    def __init__(self, replicas: int, script: Callable[[int, tuple[int, ...]], np.ndarray] | None = None,
                 uniform_script: Callable[[int, tuple[int, ...]], np.ndarray] | None = None,
                 purpose: str = "noise", journal: list | None = None):
        self.replicas = tuple(range(replicas))
        self.purpose = purpose
        self.journal = journal  # shared by the streams of one probe: (purpose, kind, shape) in call order
        self._script = script
        self._uniform_script = uniform_script
        self._integers: int | None = None  # set while integers() draws its uniforms
        self.calls: list[tuple[str, tuple[int, ...]]] = []

    def normal(self, shape: tuple[int, ...] = ()) -> np.ndarray:
        shape = tuple(int(s) for s in shape)
        index = sum(kind == "normal" for kind, _ in self.calls)
        self.calls.append(("normal", shape))
        if self.journal is not None:
            self.journal.append((self.purpose, "normal", shape))
        if self._script is None:
            return np.zeros((self.count, *shape))
        return np.array(self._script(index, shape), dtype=float).reshape((self.count, *shape))

    def uniform(self, shape: tuple[int, ...] = ()) -> np.ndarray:
        shape = tuple(int(s) for s in shape)
        index = sum(kind != "normal" for kind, _ in self.calls)
        kind = "uniform" if self._integers is None else f"integers:{self._integers}"
        self.calls.append((kind, shape))
        if self.journal is not None:
            self.journal.append((self.purpose, kind, shape))
        if self._uniform_script is None:
            raise NotExact(f"stream {self.purpose!r} drew uniform numbers where only Gaussian noise is "
                           "linear-Gaussian")
        return np.array(self._uniform_script(index, shape), dtype=float).reshape((self.count, *shape))

    def integers(self, high: int, shape: tuple[int, ...] = ()) -> np.ndarray:
        """As ReplicaStream.integers (floor of high * U), logged as kind 'integers:<high>'."""
        self._integers = int(high)
        try:
            draws = self.uniform(shape)
        finally:
            self._integers = None
        return np.minimum((draws * high).astype(np.int64), high - 1)


class ProbeStreams(Streams):
    """Streams whose every purpose is a ProbeStream built by ``factory(purpose)``."""

    def __init__(self, replicas: int, factory: Callable[[str], ProbeStream]):
        self.seed = 0
        self.run_key = "probe"
        self.replicas = tuple(range(replicas))
        self._factory = factory
        self._streams: dict[str, Any] = {}  # ProbeStreams, read as ReplicaStreams

    def __getitem__(self, purpose: str) -> ProbeStream:
        if purpose not in self._streams:
            self._streams[purpose] = self._factory(purpose)
        return self._streams[purpose]


def _close(actual: np.ndarray, predicted: np.ndarray) -> float:
    """Largest deviation relative to the size of the values (0 when identical)."""
    scale = max(float(np.max(np.abs(actual), initial=0.0)), float(np.max(np.abs(predicted), initial=0.0)), 1.0)
    return float(np.max(np.abs(actual - predicted), initial=0.0)) / scale


# ------------------------------------------------------------------------------------------------
# Reading affine maps off code


@dataclass(frozen=True)
class ClientMaps:
    """Delta_i = A[i] start + b[i] + G_i z with Cov(G_i z) = cov[i], for every client i."""

    A: np.ndarray  # (N, d, d)
    b: np.ndarray  # (N, d)
    cov: np.ndarray  # (N, d, d)
    draws: int  # standard-normal draws one job consumes


def probe_client_update(algorithm: Any, problem: SmoothFederatedOracles, *, m: int | None = None, seed: int = 0) -> ClientMaps:
    """Read client_update's affine map in (start, noise) for every client, then check it on random
    inputs laid out as a real round (m slots, clients repeated) with random draws."""
    N, d = problem.num_clients, problem.dim
    everyone = np.arange(N)

    def call(starts: np.ndarray, clients: np.ndarray, script) -> tuple[np.ndarray, list]:
        R = starts.shape[0]
        journal: list = []
        streams = ProbeStreams(R, lambda purpose: ProbeStream(R, script, purpose=purpose, journal=journal))
        batch = problem.gather(clients)
        out = np.asarray(algorithm.client_update(problem, batch, starts.copy(), streams), dtype=float)
        if out.shape != starts.shape:
            raise NotExact(f"client_update returned shape {out.shape}, expected {starts.shape}")
        return out, journal

    # 1) origin and unit vectors as start points, zero draws (also logs the draws one job takes)
    starts = np.zeros((d + 1, N, d))
    starts[1:] = np.eye(d)[:, None, :]
    out, log = call(starts, np.broadcast_to(everyone, (d + 1, N)), None)
    b = out[0]
    A = np.transpose(out[1:] - b, (1, 2, 0))  # (N, d_out, d_in)
    # 2) unit draws, one probe replica per (call, per-client coordinate), the same in every slot
    layout = []  # (purpose-call position, per-slot size)
    for purpose, kind, shape in log:
        if not shape or shape[0] != N:
            raise NotExact(f"client_update drew {kind} numbers of shape {shape} from {purpose!r}: exact mode "
                           f"needs per-client draws with the client axis first ({N} clients)")
        layout.append(int(np.prod(shape[1:], dtype=np.int64)))
    offsets = np.concatenate([[0], np.cumsum(layout)]).astype(int)
    draws = int(offsets[-1])
    G = np.zeros((N, d, 0))
    if draws:
        order = {"n": 0}

        def unit(index: int, shape: tuple[int, ...]) -> np.ndarray:
            position = order["n"]
            order["n"] += 1
            if position >= len(layout):
                raise NotExact("client_update drew more noise on the second probe than on the first")
            block = np.zeros((draws, *shape))
            per = block.reshape(draws, shape[0], -1)
            for j in range(layout[position]):
                per[offsets[position] + j, :, j] = 1.0
            return block

        out_noise, _ = call(np.zeros((draws, N, d)), np.broadcast_to(everyone, (draws, N)), unit)
        G = np.transpose(out_noise - b, (1, 2, 0))  # (N, d, draws)
    cov = np.einsum("nik,njk->nij", G, G)
    # 3) check on random starts, random clients (with repeats) and random draws
    rng = np.random.default_rng(seed)
    m = N if m is None else m
    R = 3
    clients = rng.integers(0, N, (R, m))
    scale = max(1.0, float(np.max(np.abs(problem.initial_point()))))
    starts = scale * rng.standard_normal((R, m, d))
    z = rng.standard_normal((R, m, draws))
    served = {"n": 0}

    def random_draws(index: int, shape: tuple[int, ...]) -> np.ndarray:
        position = served["n"]
        served["n"] += 1
        if position >= len(layout) or int(np.prod(shape[1:], dtype=np.int64)) != layout[position]:
            raise NotExact("client_update's draws depend on its inputs (data-dependent control flow)")
        return z[:, :, offsets[position]:offsets[position + 1]].reshape((R, *shape))

    actual, _ = call(starts, clients, random_draws)
    predicted = (np.einsum("rmij,rmj->rmi", A[clients], starts) + b[clients]
                 + np.einsum("rmik,rmk->rmi", G[clients], z))
    gap = _close(actual, predicted)
    if not gap <= AFFINE_RTOL:
        raise NotExact(f"client_update is not affine in (start, noise) per client: off by {gap:.2e} (relative) "
                       "on random inputs (a nonlinearity, a binding projection or clients coupled in a job)")
    return ClientMaps(A=A, b=b, cov=cov, draws=draws)


def probe_aggregate(algorithm: Any, clients_per_round: int, num_clients: int, dim: int, seed: int = 0) -> float:
    """The aggregation weight w: aggregate(updates, clients) = w * sum_j updates[:, j], read off one
    unit update and checked on random updates (zero included) for two different client draws."""
    m, d = clients_per_round, dim
    rng = np.random.default_rng(seed)
    unit = np.zeros((1, m, d))
    unit[0, 0, 0] = 1.0
    w = float(np.asarray(algorithm.aggregate(unit, np.arange(m)[None] % num_clients), dtype=float)[0, 0])
    for clients in (np.arange(m) % num_clients, rng.integers(0, num_clients, m)):
        updates = rng.standard_normal((4, m, d))
        updates[0] = 0.0
        out = np.asarray(algorithm.aggregate(updates.copy(), np.broadcast_to(clients, (4, m))), dtype=float)
        gap = _close(out, w * updates.sum(axis=1))
        if not gap <= AFFINE_RTOL:
            raise NotExact(f"aggregate is not w * (sum over slots) with one weight for every slot and any clients "
                           f"(off by {gap:.2e}): exact sampling expectations need exchangeable slots")
    return w


@dataclass(frozen=True)
class ServerMap:
    """(x', u') = (Sx x + Sd D + Su u + s0, Tx x + Td D + Tu u + u0), u the flattened server state."""

    Sx: np.ndarray
    Sd: np.ndarray
    Su: np.ndarray
    s0: np.ndarray
    Tx: np.ndarray
    Td: np.ndarray
    Tu: np.ndarray
    u0: np.ndarray

    def same_as(self, other: ServerMap) -> bool:
        return all(np.array_equal(getattr(self, f), getattr(other, f)) for f in self.__dataclass_fields__)


def _server_shape(server: Any) -> tuple[int, ...] | None:
    if server is None:
        return None
    if isinstance(server, np.ndarray) and server.ndim >= 1:
        return tuple(server.shape[1:])
    raise NotExact(f"the server state is a {type(server).__name__}; exact mode handles None or one array")


def probe_server_step(algorithm: Any, dim: int, server_shape: tuple[int, ...] | None, t: int,
                      seed: int = 0) -> ServerMap:
    """Read server_step's affine map in (x, direction, server state) at round t, check it at random."""
    d = dim
    s = int(np.prod(server_shape, dtype=np.int64)) if server_shape is not None else 0
    n_in = 2 * d + s
    probes = np.vstack([np.zeros(n_in), np.eye(n_in)])
    rng = np.random.default_rng(seed)
    probes = np.vstack([probes, rng.standard_normal((3, n_in))])

    def call(inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x, direction = inputs[:, :d].copy(), inputs[:, d:2 * d].copy()
        server = inputs[:, 2 * d:].reshape((inputs.shape[0], *(server_shape or ()))).copy() if s else None
        x_new, u_new = algorithm.server_step(x, direction, server, t)
        u_flat = np.zeros((inputs.shape[0], 0)) if u_new is None else np.asarray(u_new, float).reshape(inputs.shape[0], -1)
        if u_flat.shape[1] != s:
            raise NotExact("server_step changed the shape of its state")
        return np.asarray(x_new, dtype=float), u_flat

    x_out, u_out = call(probes)
    base = np.hstack([x_out[0], u_out[0]])
    J = (np.hstack([x_out, u_out])[1:1 + n_in] - base).T  # (d + s, n_in)
    predicted = probes[1 + n_in:] @ J.T + base
    gap = _close(np.hstack([x_out, u_out])[1 + n_in:], predicted)
    if not gap <= AFFINE_RTOL:
        raise NotExact(f"server_step is not affine in (x, direction, server state): off by {gap:.2e}")
    return ServerMap(Sx=J[:d, :d], Sd=J[:d, d:2 * d], Su=J[:d, 2 * d:], s0=base[:d],
                     Tx=J[d:, :d], Td=J[d:, d:2 * d], Tu=J[d:, 2 * d:], u0=base[d:])


@dataclass(frozen=True)
class QuadraticMeasure:
    """q(x) = c + l.x + x^T Q x, read off problem.measures; E q = c + l.E[x] + tr(Q E[x x^T])."""

    c: float
    l: np.ndarray
    Q: np.ndarray


def probe_measures(problem: Problem, to_output: Callable[[np.ndarray], Any], dim: int, scale: float = 1.0,
                   seed: int = 0, omitted: dict[str, str] | None = None) -> dict[str, QuadraticMeasure]:
    """Every measure of ``problem.measures(to_output(V))`` as a quadratic form of V (R, dim), read off
    the origin, +-unit vectors and pair sums, and checked on random points of size ``scale``.

    A measure that is not a quadratic form (a norm, not its square) has no exact expectation from
    the moments: NotExact, or, given ``omitted``, recorded there with the reason and left out."""
    d = dim
    eye = np.eye(d)
    pairs = [(k, l) for k in range(d) for l in range(k + 1, d)]
    rng = np.random.default_rng(seed)
    check = max(1.0, scale) * rng.standard_normal((3, d))
    points = np.vstack([np.zeros(d), eye, -eye] + ([np.array([eye[k] + eye[l] for k, l in pairs])] if pairs else [])
                       + [check])
    values = problem.measures(to_output(points))
    out = {}
    for name, v in values.items():
        v = np.asarray(v, dtype=float)
        c = v[0]
        plus, minus = v[1:1 + d], v[1 + d:1 + 2 * d]
        lin = (plus - minus) / 2
        Q = np.diag((plus + minus) / 2 - c)
        for index, (k, l) in enumerate(pairs):
            Q[k, l] = Q[l, k] = (v[1 + 2 * d + index] - plus[k] - plus[l] + c) / 2
        gap = _close(v[-3:], c + check @ lin + np.einsum("ri,ij,rj->r", check, Q, check))
        declared = name.removeprefix("avg:") in getattr(problem, "non_quadratic_measures", ())
        if declared or not gap <= AFFINE_RTOL:
            why = (f"measure {name!r} is not a quadratic form of the output "
                   + ("(the problem says so)" if declared else f"(off by {gap:.2e})"))
            if omitted is None:
                raise NotExact(why)
            omitted[name] = why
            continue
        out[name] = QuadraticMeasure(float(c), lin, Q)
    return out


# ------------------------------------------------------------------------------------------------
# Sampling and delays, exact


@dataclass(frozen=True)
class SlotMoments:
    """Coefficients of E[D D^T] / w^2 for D/w = sum over slots of (J_slot v + noise_slot):

    E[D] / w = first * sum_i Jbar_i v
    E[D D^T] / w^2 = pair * Jsum S Jsum^T + same * sum_i Jbar_i S Jbar_i^T
                     + single * sum_i E_delay[J_i S J_i^T] + single * sum_i Cov_i
    """

    first: float
    pair: float
    same: float
    single: float
    expected_jobs: float  # distinct local jobs per round, in expectation


def slot_moments(participation: Participation, num_clients: int, duplicates: str) -> SlotMoments:
    """From the multiplicities n_i: E n_i, E n_i^2 and E n_i n_k (i != k), exact."""
    N = num_clients
    m = participation.per_round(N)
    if participation.mode == "full":
        return SlotMoments(first=1.0, pair=1.0, same=-1.0, single=1.0, expected_jobs=float(N))
    if participation.mode == "without_replacement":  # n_i in {0, 1}, pairs drawn together m(m-1)/(N(N-1))
        pair = m * (m - 1) / (N * (N - 1)) if N > 1 else 0.0
        return SlotMoments(first=m / N, pair=pair, same=-pair, single=m / N, expected_jobs=float(m))
    # with replacement: (n_i) multinomial(m, 1/N)
    if duplicates == "shared":  # one job per distinct client, counted n_i times (same noise): E n_i^2
        second = m / N * (1 - 1 / N) + (m / N) ** 2
        pair = m * (m - 1) / N**2
        jobs = N * participation.inclusion_probability(N)
        return SlotMoments(first=m / N, pair=pair, same=-pair, single=second, expected_jobs=jobs)
    # independent jobs per draw: i.i.d. slots, each with its own noise (and its own uniform delay)
    return SlotMoments(first=m / N, pair=m * (m - 1) / N**2, same=0.0, single=m / N, expected_jobs=float(m))


def delay_table(delay: Any, clients: np.ndarray, t: int, lam: int, *, check: bool = True) -> np.ndarray:
    """P(delay = k) for each client, (N, lam+1), read off ``delay.sample`` at round t.

    A schedule that draws nothing is deterministic: one call. One that draws uniforms gets the exact
    quadrature of them: 64 (lam+1) mid-points per client, which integrates every step function with
    breakpoints on that grid (``integers(lam+1)`` is one) exactly; with ``check`` the result must
    agree with a 3x finer grid, so a schedule with other breakpoints is refused, not approximated.
    """
    N = clients.size

    def run(points: int) -> tuple[np.ndarray, bool]:
        grid = (np.arange(points) + 0.5) / points

        def uniform(index: int, shape: tuple[int, ...]) -> np.ndarray:
            if index > 0 or shape != (N,):
                raise NotExact(f"delay schedule {delay} draws {shape} uniforms: exact mode needs one per client")
            return np.broadcast_to(grid[:, None], (points, N))

        stream = ProbeStream(points, None, uniform, purpose="delay")
        got = np.asarray(delay.sample(np.broadcast_to(clients, (points, N)), t, stream), dtype=np.int64)
        got = np.broadcast_to(got, (points, N))
        if got.min(initial=0) < 0 or got.max(initial=0) > lam:
            raise NotExact(f"delay schedule {delay} produced delays outside 0..{lam}")
        return _slot_histograms(got, lam), bool(stream.calls)

    table, random = run(1)
    if not random:
        return table
    return _step_quadrature(lambda points: run(points)[0], lam + 1, check, f"delay schedule {delay}")


def _step_quadrature(run: Callable[[int], np.ndarray], cells: int, check: bool, what: str) -> np.ndarray:
    """A delay table from ``run(points)`` on 64 mid-points per grid cell: exact for a step function on
    the (lam+1) grid; with ``check`` it must agree with a 3x finer grid, else NotExact naming ``what``."""
    table = run(64 * cells)
    if check and not np.allclose(table, run(192 * cells), rtol=0, atol=1e-12):
        raise NotExact(f"{what}: its delay distribution is not a step function on the (lam+1) grid")
    return table


def _slot_histograms(delays: np.ndarray, lam: int) -> np.ndarray:
    """P(delay = k) per slot, (slots, lam+1), from delays (points, slots) drawn on a quadrature grid."""
    points, slots = delays.shape
    flat = (np.arange(slots)[None, :] * (lam + 1) + delays).reshape(-1)
    return np.bincount(flat, minlength=slots * (lam + 1)).reshape(slots, lam + 1) / points


def schedule_delay_table(algorithm: Any, problem: SmoothFederatedOracles, t: int, lam: int, *, check: bool = True) -> np.ndarray:
    """P(delay = k) for each client, (N, lam+1), read off an overridden ``algorithm.schedule`` at round t.

    Its 'sampling' stream is scripted to outcomes that cover every client (the participation's own
    draws_for), its 'delay' stream to the exact quadrature grid of delay_table (the same grid value
    for every slot of a row: each slot's marginal is exact). A client's delays must not depend on the
    outcome it appears in, and the delays must be a step function on the grid, else NotExact."""
    N, d = problem.num_clients, problem.dim
    participation = algorithm.participation
    m = participation.per_round(N)
    covers = np.arange(N)[None, :] if participation.mode == "full" else \
        np.stack([(np.arange(m) + i) % N for i in range(0, N, m)])
    draws = participation.draws_for(np.sort(covers, axis=1), N)

    def run(points: int) -> np.ndarray:
        C = covers.shape[0]
        R = C * points
        grid = np.tile((np.arange(points) + 0.5) / points, C)

        def delay_uniforms(index: int, shape: tuple[int, ...]) -> np.ndarray:
            return np.broadcast_to(grid.reshape((R,) + (1,) * len(shape)), (R, *shape))

        def sampling(index: int, shape: tuple[int, ...]) -> np.ndarray:
            if draws is None or index > 0:
                raise NotExact(f"{algorithm.name}.schedule() draws its clients in a way exact mode cannot script")
            return np.repeat(draws, points, axis=0)

        scripts = {"delay": delay_uniforms, "sampling": sampling}
        streams = ProbeStreams(R, lambda purpose: ProbeStream(R, None, scripts.get(purpose), purpose=purpose))
        state = FedAvgState(history=np.zeros((R, lam + 1, d)), t=t)
        clients, delays, _, _ = algorithm.schedule(state, problem, t, streams)
        clients = np.asarray(clients).reshape(C, points, -1)
        delays = np.broadcast_to(np.asarray(delays, dtype=np.int64), (R, clients.shape[2])).reshape(C, points, -1)
        if delays.min(initial=0) < 0 or delays.max(initial=0) > lam:
            raise NotExact(f"{algorithm.name}.schedule() produced delays outside 0..{lam}")
        table = np.full((N, lam + 1), np.nan)
        for c in range(C):  # a loop over a handful of covering outcomes (the clients are an array axis)
            who = clients[c, 0]
            if not (clients[c] == clients[c, :1]).all() or set(who) != set(covers[c]):
                raise NotExact(f"{algorithm.name}.schedule() did not return the clients its sampling drew")
            hists = _slot_histograms(delays[c], lam)
            seen = ~np.isnan(table[who, 0])
            differs = seen & ~np.isclose(np.nan_to_num(table[who]), hists, rtol=0, atol=1e-12).all(axis=1)
            if differs.any():
                raise NotExact(f"{algorithm.name}.schedule(): client {who[differs][0]}'s delays depend on who "
                               "else is drawn")
            table[who] = hists
        return table

    cells = int(algorithm.delay.lam) + 1  # the schedule's own uniform draws step on this grid
    return _step_quadrature(run, cells, check, f"{algorithm.name}.schedule()")


# ------------------------------------------------------------------------------------------------
# The FedAvg family


@dataclass(frozen=True)
class RoundOperator:
    """One round on the second moment S of the augmented state v = (..., 1):

    S' = F S F^T + E X E^T + S[-1, -1] N,  vec X = Q vec S,

    F = M + E B the mean dynamics, E where the direction enters, X = Cov(D | v) averaged over the
    sampling, the delays and the noise (the noise enters through S[-1, -1] = 1). E[v] = S[:, -1].
    ``noise`` (N) is a state-independent covariance added directly (RoundModel: G G^T), so that a
    model without a direction needs no (n^2 x n^2) Q.
    """

    F: np.ndarray  # (n, n)
    E: np.ndarray | None = None  # (n, d)
    Q: np.ndarray | None = None  # (d*d, n*n)
    noise: np.ndarray | None = None  # (n, n)
    dense: np.ndarray | None = field(init=False, repr=False, compare=False)  # set by __post_init__

    def __post_init__(self) -> None:
        # small states: one (n^2, n^2) matrix, vec S' = (F (x) F + (E (x) E) Q) vec S, is one call
        # per round instead of six (numpy call overhead dominates at these sizes)
        n = self.F.shape[0]
        dense = None
        if n <= DENSE_MAX:  # einsum, not a threaded GEMM (see _outer_map)
            dense = np.kron(self.F, self.F)
            if self.E is not None:
                assert self.Q is not None  # E and Q come together
                dense = dense + np.einsum("ij,jk->ik", np.kron(self.E, self.E), self.Q)
            if self.noise is not None:
                dense[:, -1] += self.noise.reshape(-1)
        object.__setattr__(self, "dense", dense)

    def apply(self, flat: np.ndarray) -> np.ndarray:
        """vec S -> vec S' (row-major vec of the n x n second moment)."""
        if self.dense is not None:
            return self.dense @ flat
        n = self.F.shape[0]
        second = flat.reshape(n, n)
        out = self.F @ second @ self.F.T
        if self.E is not None:
            d = self.E.shape[1]
            X = (self.Q @ flat).reshape(d, d)
            out += self.E @ X @ self.E.T
        if self.noise is not None:
            out += second[-1, -1] * self.noise
        return out.reshape(-1)


def _outer_map(jobs: np.ndarray) -> np.ndarray:
    """sum_j J_j (x) J_j as a (d, d, n, n) array: the map S -> sum_j J_j S J_j^T, for jobs (..., d, n)."""
    d, n = jobs.shape[-2:]
    flat = jobs.reshape(-1, d * n)
    # einsum, not BLAS: a threaded GEMM of this size loses more to thread start-up than it gains
    return np.einsum("ja,jb->ab", flat, flat).reshape(d, n, d, n).transpose(0, 2, 1, 3)


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
        self.clients = probe_client_update(algorithm, problem, m=self.m)
        self.w = probe_aggregate(algorithm, self.m, N, d)
        shared = algorithm.duplicates == "shared" or algorithm.participation.mode != "with_replacement"
        self.moments = slot_moments(algorithm.participation, N, "shared" if shared else "independent")
        x0 = np.asarray(problem.initial_point(), dtype=float).reshape(1, d)
        server0 = algorithm.server_init(x0)
        self.server_shape = _server_shape(server0)
        self.s = int(np.prod(self.server_shape, dtype=np.int64)) if self.server_shape is not None else 0
        self.u_init = np.zeros(self.s) if server0 is None else np.asarray(server0, float).reshape(-1)
        self.n = (self.lam + 1) * d + self.s + 1  # augmented dimension, the constant last
        # jobs J_{i,k} = A_i P_k + b_i e_const: (N, lam+1, d, n)
        J = np.zeros((N, self.lam + 1, d, self.n))
        for k in range(self.lam + 1):
            J[:, k, :, k * d:(k + 1) * d] = self.clients.A
        J[:, :, :, -1] = self.clients.b[:, None, :]
        self.jobs = J
        self.noise_sum = self.clients.cov.sum(axis=0)
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
        self._operators: dict[Any, RoundOperator] = {}

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

    def operator(self, t: int) -> RoundOperator:
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
            self._operators[key] = op
            reached = np.flatnonzero(table.sum(axis=0) > 0)
            self.max_delay = max(self.max_delay, int(reached.max(initial=0)))
        return op

    def _build(self, table: np.ndarray, sm: ServerMap) -> RoundOperator:
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
        Jbar = np.einsum("ik,ikap->iap", table, self.jobs)  # delay-averaged jobs
        Jsum = Jbar.sum(axis=0)
        B = w * mo.first * Jsum  # E[D | v] = B v
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


@dataclass(frozen=True)
class MixtureOperator:
    """One round averaged over the clients drawn: S' = sum_ab W_ab F_a S F_b^T + S[-1, -1] noise.

    Enumerated outcomes: F_a the round's map under outcome a and W = diag P(a). Rounds additive
    over the clients drawn (F_s = sum_i n_i D_i): F_i = D_i and W = E[n n^T], the multiplicities'
    second moments. ``noise`` is the expected covariance of the noise. Small states propagate as
    one dense (n^2 x n^2) matrix, built once.
    """

    F: np.ndarray  # (K, n, n)
    W: np.ndarray  # (K, K), symmetric
    noise: np.ndarray  # (n, n)
    dense: np.ndarray | None = field(init=False, repr=False, compare=False)  # set by __post_init__

    def __post_init__(self) -> None:
        K, n, _ = self.F.shape
        dense = None
        if n <= DENSE_MAX or (n <= MIXTURE_DENSE_MAX and n <= 4 * K):  # dense: n^4 a round, else 4 K n^3
            Y = np.tensordot(self.W, self.F, axes=(0, 0))  # Y_b = sum_a W_ab F_a
            dense = np.tensordot(Y, self.F, axes=(0, 0)).transpose(0, 2, 1, 3).reshape(n * n, n * n)
            dense[:, -1] += self.noise.reshape(-1)
        object.__setattr__(self, "dense", dense)

    def apply(self, flat: np.ndarray) -> np.ndarray:
        """vec S -> vec S' (row-major vec of the n x n second moment)."""
        if self.dense is not None:
            return self.dense @ flat
        K, n, _ = self.F.shape
        second = flat.reshape(n, n)
        Y = np.tensordot(self.W, (self.F.reshape(K * n, n) @ second).reshape(K, n, n), axes=(0, 0))  # sum_a W_ab F_a S
        # sum_b Y_b F_b^T as one product: (n, K n) @ (K n, n)
        out = Y.transpose(1, 0, 2).reshape(n, K * n) @ self.F.transpose(0, 2, 1).reshape(K * n, n)
        return (out + second[-1, -1] * self.noise).reshape(-1)


@dataclass(frozen=True)
class _Sampling:
    """How RoundModel averages a round's client sampling: the outcomes it probes (client ids and the
    'sampling' draws that pick them), their probabilities when enumerated (else the first ``design``
    outcomes determine an additive map and the others check it), and the check outcomes."""

    participation: Participation
    clients: np.ndarray  # (K, m)
    draws: np.ndarray  # (K, ...): the uniforms that make Participation.sample pick each outcome
    weights: np.ndarray | None  # (K,) probabilities, or None: additive over the multiplicities
    design: int
    checks: np.ndarray  # indices into clients of the outcomes random checks run under


@dataclass(frozen=True)
class _Seen:
    """One call of a round on random states V and draws z: its outputs, draw layout and bookkeeping."""

    V: np.ndarray
    z: np.ndarray
    actual: np.ndarray
    sizes: tuple[int, ...]
    after: Mapping[str, Any]


@dataclass(frozen=True)
class _KnownRound:
    """A probed round as an operator on the second moment, with what it costs; its maps
    v' = A v + c + G z under the check outcomes (one per check, or one without sampling) re-verify it."""

    operator: RoundOperator | MixtureOperator
    A: np.ndarray  # (C, n, n)
    c: np.ndarray  # (C, n)
    G: np.ndarray  # (C, n, draws)
    sizes: tuple[int, ...]  # the sizes of the normal draws, in call order
    costs: dict[str, float]  # expected over the sampling
    after: dict[str, Any]  # the bookkeeping after the round


class RoundModel:
    """Exact moments of any algorithm whose ``round`` itself is affine-Gaussian in its array state.

    For algorithms without the FedAvg seams: the whole round is probed (the state's arrays, and the
    arrays of its dict fields, flattened into v; origin and unit vectors as replicas, then unit draws
    of every normal number the round takes), giving v' = F v + G z exactly.

    Client sampling inside the round is averaged exactly. The sampler is read off what the round asks
    the 'sampling' stream for (``_sampler``: m integer draws is with replacement, N uniform keys is the
    participation's without-replacement draw), so a round that samples otherwise than its field says
    is averaged as it samples. The round is then probed under many outcomes at once (blocks of
    replicas, each served the draws that pick its clients, Participation.draws_for): all of them with
    their probabilities when few, else a design of N outcomes that fixes an additive map
    F_s = sum_i n_i D_i (with the noise covariance and the costs), checked on random outcomes and
    averaged with E n_i n_k (MixtureOperator); a non-additive round with more than OUTCOME_CAP
    outcomes is refused with the count. Any other uniform draw (random local-step counts, random
    delays) raises NotExact.

    Fields that are not arrays are bookkeeping (a round counter, a sum of step sizes, an output
    weight): they may move, but only deterministically, the same on every probe whatever the state
    and the noise; they are then carried round by round. Fields the algorithm names in its
    ``monitors`` class attribute (running maxima of the iterates, say: not a moment) are not tracked
    and keep their initial value.

    A round's map may change with t in ways no probe at a few rounds reveals (a sync every I steps, a
    step-size schedule), so every round is checked: one call of the round on three random states
    with random draws (under three of the check outcomes when it samples) must match a known
    operator to AFFINE_RTOL (the one used last, usually), or the round is probed afresh. A
    time-invariant run thus costs one small call per round; a time-varying one under sampling pays a
    probe over all its outcomes every round (Tikhonov FedAvg's output average: ~0.1-0.2 s a round).
    A round the algorithm vouches ignores t and whose map ignores the bookkeeping (``t_free_rounds``
    names the very function, so an overriding subclass is not vouched for) is not called again once
    its bookkeeping has moved by constant steps for BOOKKEEPING_WATCH verified rounds: the steps carry
    it (a round counter, a sum of a constant rho). That makes such runs cost a probe plus one small
    matrix-vector product a round.
    """

    def __init__(self, algorithm: Any, problem: Problem, rounds: int):
        self.algorithm, self.problem = algorithm, problem
        journal: list = []
        zero = ProbeStreams(1, lambda purpose: ProbeStream(1, None, purpose=purpose, journal=journal))
        self.template = algorithm.init(problem, zero)
        if not dataclasses.is_dataclass(self.template):
            raise NotExact(f"{algorithm.name}'s state is not a dataclass of arrays")
        self.monitors = frozenset(getattr(algorithm, "monitors", ()))
        self.layout = []  # (field, key or None, shape without the replica axis, slice in v)
        start = 0
        for name, key, value in self._leaves(self.template):
            size = int(np.prod(value.shape[1:], dtype=np.int64))
            self.layout.append((name, key, value.shape[1:], slice(start, start + size)))
            start += size
        self.array_fields = {name for name, _, _, _ in self.layout}
        self.book = self._bookkeeping(self.template)
        self.n_state = start
        self.n = start + 1
        self.v0 = self.flatten(self.template)[0]
        self.scale = max(1.0, float(np.max(np.abs(self.v0), initial=0.0)))
        self.init_cov = self._initial_noise(journal)
        self.sampling = self._sampling_plan()
        # a round the algorithm vouches ignores t (its ``t_free_rounds`` names this very function, so a
        # subclass that overrides round() is not vouched for) and a state without bookkeeping has one
        # map for every round: probed once, not re-verified each round
        self._vouched = type(algorithm).round in getattr(algorithm, "t_free_rounds", ())
        self._constant = self._vouched and not self.book
        self._steps: dict[str, Any] = {}
        self._history: list[dict[str, Any]] = [dict(self.book)]
        first = self._probe(0, self.book)
        self._known: list[_KnownRound] = [first]  # operators seen, most recent first, re-verified every round
        self._costs = first.costs
        self.last_costs = dict(self._costs)

    def _initial_noise(self, journal: list) -> np.ndarray:
        """Cov of the initial state when ``init`` draws noise (a first STORM batch): G0 G0^T, probed."""
        sizes = [int(np.prod(shape, dtype=np.int64)) for _, _, shape in journal]
        draws = sum(sizes)
        if not draws:
            return np.zeros((self.n_state, self.n_state))

        def call(block: np.ndarray) -> np.ndarray:
            R = block.shape[0]
            script = self._script(block, tuple(sizes), "init's draws depend on the replica count")
            state = self.algorithm.init(self.problem, ProbeStreams(R, lambda p: ProbeStream(R, script, purpose=p)))
            return self.flatten(state)

        G0 = (call(np.eye(draws)) - self.v0).T
        z = np.random.default_rng(1).standard_normal((3, draws))
        gap = _close(call(z), self.v0 + z @ G0.T)
        if not gap <= AFFINE_RTOL:
            raise NotExact(f"{self.algorithm.name}.init is not affine in its noise (off by {gap:.2e})")
        return G0 @ G0.T

    # -- state <-> vectors ----------------------------------------------------------------------
    @staticmethod
    def _leaves(state: Any):
        """(field, dict key or None, array) for every array with a replica axis, dict fields included."""
        for f in dataclasses.fields(state):
            value = getattr(state, f.name)
            if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == 1:
                yield f.name, None, value
            elif isinstance(value, dict) and value and all(isinstance(v, np.ndarray) and v.ndim >= 1
                                                           and v.shape[0] == 1 for v in value.values()):
                for key in sorted(value):
                    yield f.name, key, value[key]

    def _bookkeeping(self, state: Any) -> dict[str, Any]:
        return {f.name: getattr(state, f.name) for f in dataclasses.fields(state)
                if f.name not in self.array_fields and f.name not in self.monitors}

    def flatten(self, state: Any) -> np.ndarray:
        parts = []
        for name, key, shape, _ in self.layout:
            value = getattr(state, name)
            value = value.get(key) if key is not None and isinstance(value, dict) else value
            if not isinstance(value, np.ndarray) or value.shape[1:] != shape:
                where = name if key is None else f"{name}[{key!r}]"
                raise NotExact(f"{self.algorithm.name}'s state field {where} changed its shape or type in a round")
            parts.append(value.reshape(value.shape[0], -1))
        return np.hstack(parts).astype(float)

    def unflatten(self, V: np.ndarray, book: Mapping[str, Any] | None = None) -> Any:
        R = V.shape[0]
        fields: dict[str, Any] = dict(self.book if book is None else book)
        for name, key, shape, sl in self.layout:
            value = V[:, sl].reshape((R, *shape)).copy()
            if key is None:
                fields[name] = value
            else:
                fields.setdefault(name, {})[key] = value
        return dataclasses.replace(self.template, **fields)

    # -- probing the round ----------------------------------------------------------------------
    def _call(self, V: np.ndarray, t: int, script, book: Mapping[str, Any],
              sampling: np.ndarray | None = None) -> tuple[np.ndarray, list, Any, dict]:
        """One call of the round on the states V (R, n_state) with scripted normal draws and, for the
        'sampling' stream, the uniform draws ``sampling`` (R, ...) that pick each replica's clients."""
        R = V.shape[0]
        journal: list = []

        def draw_clients(index: int, shape: tuple[int, ...]) -> np.ndarray:
            if index > 0:
                raise NotExact(f"{self.algorithm.name}.round draws its clients more than once per round: the "
                               "outcomes of the draws multiply (exact mode averages one draw per round)")
            assert sampling is not None  # a round that draws clients is probed with sampling draws
            if tuple(shape) != sampling.shape[1:]:
                raise NotExact(f"{self.algorithm.name}.round drew {tuple(shape)} uniforms from 'sampling', then "
                               f"{sampling.shape[1:]}: its sampling depends on the state")
            return sampling

        def stream(purpose: str) -> ProbeStream:
            uniform = draw_clients if purpose == "sampling" and sampling is not None else None
            return ProbeStream(R, script, uniform, purpose=purpose, journal=journal)

        try:
            new, costs = self.algorithm.round(self.unflatten(V, book), self.problem, t, ProbeStreams(R, stream))
        except NotExact:
            raise
        except (ValueError, TypeError, AttributeError, IndexError) as exc:
            # state that is not a moment (an event timeline sized for other replicas, say): not probe-able
            raise NotExact(f"{self.algorithm.name}.round cannot run on probe states (its state holds more than "
                           f"arrays with a replica axis): {type(exc).__name__}: {exc}") from None
        costs = {k: np.broadcast_to(np.asarray(v, dtype=float), (R,)) for k, v in costs.items()}
        return self.flatten(new), journal, costs, self._bookkeeping(new)

    def _rows(self, V: np.ndarray, t: int, Z: np.ndarray | None, book: Mapping[str, Any],
              sampling: np.ndarray | None, sizes: tuple[int, ...] | None = None) -> tuple[np.ndarray, list, dict, list]:
        """``_call`` on many rows, in chunks of at most PROBE_ROWS replicas: Z (R, draws) are the normal
        draws laid out in call order (None: zeros). Returns outputs, journal, costs and the bookkeeping
        of every chunk."""
        outs: list[Any] = []
        costs: list[Any] = []
        books: list[Any] = []
        journal: list[Any] = []
        for lo in range(0, V.shape[0], PROBE_ROWS):
            hi = min(lo + PROBE_ROWS, V.shape[0])
            script = None if Z is None else self._script(Z[lo:hi], cast(tuple[int, ...], sizes))  # sizes come with Z
            out, journal, cost, after = self._call(V[lo:hi], t, script, book,
                                                   None if sampling is None else sampling[lo:hi])
            outs.append(out)
            costs.append(cost)
            books.append(after)
        merged = {k: np.concatenate([c[k] for c in costs]) for k in costs[0]}
        return np.vstack(outs), journal, merged, books

    def _script(self, Z: np.ndarray, sizes: tuple[int, ...], mismatch: str = "round's draws depend on its inputs"):
        """Serve the columns of Z (R, draws) as the normal draws of init or round, call after call;
        a call whose size differs from the probed layout is NotExact (``mismatch`` says why)."""
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        order = iter(range(len(sizes)))

        def script(index: int, shape: tuple[int, ...]) -> np.ndarray:
            position = next(order, None)
            if position is None or int(np.prod(shape, dtype=np.int64)) != sizes[position]:
                raise NotExact(f"{self.algorithm.name}.{mismatch}")
            return Z[:, offsets[position]:offsets[position + 1]]

        return script

    def _sampler(self) -> Participation | None:
        """The sampling the round really does, from what it asks the 'sampling' stream for in one call:
        ``integers(N, (m,))`` is m draws with replacement; ``uniform((N,))`` are the keys of m clients
        without replacement (m from the algorithm's ``participation``: the m smallest keys, as
        Participation.sample takes them); nothing is no sampling. So a round that samples otherwise
        than its ``participation`` field says is averaged as it samples, not as the field says."""
        N = self.problem.num_clients
        journal: list = []

        def distinct(index: int, shape: tuple[int, ...]) -> np.ndarray:
            size = int(np.prod(shape, dtype=np.int64))
            return ((np.arange(size) + 0.5) / max(size, 1)).reshape((1, *shape))

        def stream(purpose: str) -> ProbeStream:
            return ProbeStream(1, None, distinct if purpose == "sampling" else None, purpose=purpose, journal=journal)

        try:
            self.algorithm.round(self.unflatten(self.v0[None, :]), self.problem, 0, ProbeStreams(1, stream))
        except NotExact as why:
            raise NotExact(f"{self.algorithm.name}.round: {why}") from None
        requests = [(kind, shape) for purpose, kind, shape in journal if purpose == "sampling"]
        declared = getattr(self.algorithm, "participation", None)
        if not requests:
            return None
        if len(requests) > 1:
            raise NotExact(f"{self.algorithm.name}.round draws its clients {len(requests)} times per round: the "
                           "outcomes of the draws multiply (exact mode averages one draw per round)")
        kind, shape = requests[0]
        if kind == f"integers:{N}" and len(shape) == 1:
            return Participation("with_replacement", shape[0])
        if (kind == "uniform" and shape == (N,) and isinstance(declared, Participation)
                and declared.mode == "without_replacement"):
            return declared
        raise NotExact(f"{self.algorithm.name}.round draws {kind} numbers of shape {shape} from 'sampling' (participation "
                       f"{declared}): exact mode averages integers(N, (m,)) draws, or uniform((N,)) keys of a "
                       "without-replacement Participation")

    def _sampling_plan(self, enumerate_all: bool = False) -> _Sampling | None:
        """How the round's client sampling is averaged (None: the algorithm samples nothing): every
        outcome when there are few (or ``enumerate_all``), else an additive design."""
        participation = self._sampler()
        if participation is None:
            return None
        N = self.problem.num_clients
        m = participation.per_round(N)
        count = participation.outcome_count(N)
        rng = np.random.default_rng(11)
        replace = participation.mode == "with_replacement"
        random_outcomes = np.sort(np.stack([rng.integers(0, N, m) if replace else rng.permutation(N)[:m]
                                            for _ in range(SAMPLING_CHECKS)]), axis=1)
        if count <= N + SAMPLING_CHECKS or enumerate_all:
            clients, weights = participation.outcomes(N)
            draws = participation.draws_for(clients, N)
            assert draws is not None  # a sampler (not 'full') has draws
            return _Sampling(participation, clients, draws, weights,
                             design=0, checks=rng.choice(clients.shape[0], SAMPLING_CHECKS))
        # a design of N outcomes whose multiplicities span R^N, then the random outcomes that check it
        if replace:  # all m draws on client i
            design = np.repeat(np.arange(N)[:, None], m, axis=1)
        else:  # {0..m-1}, then one swap at a time: a client i >= m in for 0, then m in for each j in 1..m-1
            base = np.arange(m)
            swaps = [base] + [np.sort(np.r_[base[1:], i]) for i in range(m, N)] \
                + [np.sort(np.r_[np.delete(base, j), m]) for j in range(1, m)]
            design = np.stack(swaps)
        clients = np.vstack([design, random_outcomes])
        checks = np.arange(N, N + SAMPLING_CHECKS)
        draws = participation.draws_for(clients, N)
        assert draws is not None  # a sampler (not 'full') has draws
        return _Sampling(participation, clients, draws, None, design=N, checks=checks)

    def _probe(self, t: int, book: Mapping[str, Any], seen: _Seen | None = None) -> _KnownRound:
        """The round-t maps from bookkeeping ``book``, checked on random inputs, with its costs.

        ``seen``: a call of this very round on random states and draws that matched no known map
        (``_operator``'s check, without client sampling). It gives the draws' layout, so the origin, the
        unit states and the unit draws go in ONE call, and it is the check on random inputs: one call
        per new map instead of three (rounds whose map changes every round, e.g. a step size alpha_t).

        Under client sampling the maps are read off under every probed outcome at once (outcomes
        laid out as blocks of replicas, the 'sampling' stream serving each block the draws that
        pick its clients), then averaged: over the enumerated outcomes with their probabilities, or,
        when there are too many, through the multiplicities (F_s = sum_i n_i D_i, checked on random
        outcomes) and their exact moments E n_i n_k."""
        n, plan = self.n_state, self.sampling
        K = 1 if plan is None else plan.clients.shape[0]

        def outcome_rows(count: int) -> np.ndarray | None:
            return None if plan is None else np.repeat(plan.draws, count, axis=0)

        if seen is not None and plan is None:
            return self._probe_seen(t, book, seen)
        # 1) origin and unit vectors under every outcome, zero draws (also logs the draws a round takes)
        V = np.tile(np.vstack([np.zeros(n), np.eye(n)]), (K, 1))
        try:
            out, journal, costs, books = self._rows(V, t, None, book, outcome_rows(n + 1))
        except NotExact as why:
            hint = ("; exact mode averages client sampling through the algorithm's `participation` "
                    "(a ratecheck.participation.Participation)") if "'sampling'" in str(why) and plan is None else ""
            raise NotExact(f"{self.algorithm.name}.round: {why}{hint}") from None
        after = books[0]
        out = out.reshape(K, n + 1, n)
        c = out[:, 0]
        A = np.transpose(out[:, 1:] - c[:, None], (0, 2, 1))  # (K, n_out, n_in)
        sizes = tuple(int(np.prod(shape, dtype=np.int64)) for _, kind, shape in journal if kind == "normal")
        draws = int(sum(sizes))
        costs = {k: v.reshape(K, n + 1)[:, 0] for k, v in costs.items()}
        G = np.zeros((K, n, 0))
        if draws:  # 2) unit draws, one replica per draw, under every outcome
            unit_out, _, _, unit_books = self._rows(np.zeros((K * draws, n)), t, np.tile(np.eye(draws), (K, 1)), book,
                                                    outcome_rows(draws), sizes)
            G = np.transpose(unit_out.reshape(K, draws, n) - c[:, None], (0, 2, 1))
            books += unit_books
        # 3) random states and random draws under the check outcomes
        chk = np.zeros(3, dtype=int) if plan is None else plan.checks
        rng = np.random.default_rng(t)
        Vr = self.scale * rng.standard_normal((chk.size, n))
        z = rng.standard_normal((chk.size, draws))
        actual, _, _, random_books = self._rows(Vr, t, z, book, None if plan is None else plan.draws[chk], sizes)
        books += random_books
        predicted = np.einsum("rij,rj->ri", A[chk], Vr) + c[chk] + np.einsum("rik,rk->ri", G[chk], z)
        self._check_affine(actual, predicted, after, books)
        F = np.zeros((K, self.n, self.n))
        F[:, :n, :n] = A
        F[:, :n, -1] = c
        F[:, -1, -1] = 1.0
        cov = np.zeros((K, self.n, self.n))
        for k in range(K):  # 2-D products: a batched matmul with a transposed operand is far slower
            cov[k, :n, :n] = G[k] @ G[k].T  # enters through S[-1, -1] = 1
        check = (A[chk], c[chk], G[chk])
        operator: RoundOperator | MixtureOperator
        if plan is None:
            operator = RoundOperator(F=F[0], noise=cov[0])
            mean_costs = {k: float(v[0]) for k, v in costs.items()}
        elif plan.weights is not None:  # every outcome, with its probability
            w = plan.weights
            operator = MixtureOperator(F, np.diag(w), np.tensordot(w, cov, axes=(0, 0)))
            mean_costs = {k: float(w @ v) for k, v in costs.items()}
        else:
            try:
                operator, mean_costs = self._additive(F, cov, costs)
            except _NotAdditive as why:
                count = plan.participation.outcome_count(self.problem.num_clients)
                if count > OUTCOME_CAP:
                    raise NotExact(f"{why}, and {plan.participation} has {count} outcomes on "
                                   f"{self.problem.num_clients} clients, more than the {OUTCOME_CAP} exact mode "
                                   "enumerates") from None
                self.sampling, self._known = self._sampling_plan(enumerate_all=True), []
                return self._probe(t, book)
        return _KnownRound(operator, *check, sizes, mean_costs, after)

    def _check_affine(self, actual: np.ndarray, predicted: np.ndarray, after: Mapping[str, Any], books: list) -> None:
        """NotExact unless the round's outputs on random inputs are the probed affine map's, and its
        bookkeeping is the same on every probe."""
        gap = _close(actual, predicted)
        if not gap <= AFFINE_RTOL:
            raise NotExact(f"{self.algorithm.name}.round is not affine in (state, noise): off by {gap:.2e} "
                           "on random inputs (a nonlinear problem or a projection that binds)")
        for name in after:  # bookkeeping must not depend on the state, the noise or the clients drawn
            if not all(_same(b[name], after[name]) for b in books):
                raise NotExact(f"{self.algorithm.name}'s state field {name!r} is not an array and depends on "
                               "the iterates, the noise or the clients drawn (exact mode tracks moments of arrays; "
                               "name it in the algorithm's `monitors` if it is only a diagnostic)")

    def _probe_seen(self, t: int, book: Mapping[str, Any], seen: _Seen) -> _KnownRound:
        """``_probe`` without client sampling, from a call already seen on random inputs: the origin, the
        n unit states (zero draws) and the unit draws (zero state) in one call, checked against ``seen``."""
        n, sizes = self.n_state, seen.sizes
        draws = int(sum(sizes))
        V = np.zeros((n + 1 + draws, n))
        V[1:n + 1] = np.eye(n)
        Z = np.vstack([np.zeros((n + 1, draws)), np.eye(draws)]) if draws else None
        out, _, costs, books = self._rows(V, t, Z, book, None, sizes if draws else None)
        after = books[0]
        c = out[0]
        A = (out[1:n + 1] - c).T
        G = (out[n + 1:] - c).T if draws else np.zeros((n, 0))
        self._check_affine(seen.actual, seen.V @ A.T + c + seen.z @ G.T, after, [*books, seen.after])
        F = np.zeros((self.n, self.n))
        F[:n, :n], F[:n, -1], F[-1, -1] = A, c, 1.0
        cov = np.zeros((self.n, self.n))
        cov[:n, :n] = G @ G.T
        return _KnownRound(RoundOperator(F=F, noise=cov), A[None], c[None], G[None], sizes,
                           {k: float(v[0]) for k, v in costs.items()}, after)

    def _additive(self, F: np.ndarray, cov: np.ndarray, costs: Mapping[str, np.ndarray]) -> tuple[MixtureOperator, dict]:
        """F_s = sum_i n_i D_i, Cov_s = sum_i n_i C_i and cost_s = sum_i n_i k_i read off the design
        outcomes, checked on the random ones; averaged with E n_i and E n_i n_k. Else NotExact with
        _NotAdditive."""
        plan, N = self.sampling, self.problem.num_clients
        assert plan is not None  # only a sampled round is additive
        counts = (plan.clients[..., None] == np.arange(N)).sum(axis=-2).astype(float)  # multiplicities (K, N)
        X, rest = counts[:plan.design], counts[plan.design:]
        pieces = {"map": F.reshape(F.shape[0], -1), "noise": cov.reshape(cov.shape[0], -1),
                  **{f"cost {k}": v[:, None] for k, v in costs.items()}}
        solved = {}
        for name, Y in pieces.items():
            per_client = np.linalg.solve(X, Y[:plan.design])
            gap = _close(Y[plan.design:], rest @ per_client)
            if not gap <= AFFINE_RTOL:
                raise _NotAdditive(f"{self.algorithm.name}.round's {name} is not additive over the clients drawn "
                                   f"(off by {gap:.2e} on random outcomes)")
            solved[name] = per_client
        first, second = plan.participation.multiplicity_moments(N)
        n = self.n
        operator = MixtureOperator(solved["map"].reshape(N, n, n), second, (first @ solved["noise"]).reshape(n, n))
        return operator, {k: float(first @ solved[f"cost {k}"][:, 0]) for k in costs}

    def _watch_bookkeeping(self, after: Mapping[str, Any]) -> None:
        """A vouched round whose bookkeeping moves by the same step for BOOKKEEPING_WATCH verified rounds
        (a round counter, a sum of a constant) and whose map stayed the same: from then on its
        bookkeeping is carried by those steps, without calling the round (non-numbers must not move)."""
        self._history.append(dict(after))
        if len(self._history) <= BOOKKEEPING_WATCH or len(self._known) != 1:
            return
        recent = self._history[-BOOKKEEPING_WATCH - 1:]
        steps = {}
        for name, value in after.items():
            if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
                moves = [b[name] - a[name] if b[name] != a[name] else 0 for a, b in zip(recent, recent[1:])]  # inf stays
                if not all(math.isclose(m, moves[0], rel_tol=1e-9, abs_tol=1e-300) for m in moves):
                    return
                if moves[0] != 0:
                    steps[name] = moves[0]
            elif not all(_same(b[name], value) for b in recent):
                return
        self._steps, self._constant = steps, True

    def _operator(self, t: int) -> RoundOperator | MixtureOperator:
        """Round t's operator: a known one if a random call of the round (under the check outcomes of
        the sampling) matches it, else probed."""
        n = self.n_state
        rng = np.random.default_rng([t, 7])
        V = self.scale * rng.standard_normal((3, n))
        draws: list[np.ndarray] = []

        def random_draws(index: int, shape: tuple[int, ...]) -> np.ndarray:
            draws.append(rng.standard_normal((3, int(np.prod(shape, dtype=np.int64)))))
            return draws[-1]

        if self._constant and self._known:  # a vouched t-free round: one map for all t
            self.last_costs = self._known[0].costs
            self.book = {k: v + self._steps[k] if k in self._steps else v for k, v in self.book.items()}
            return self._known[0].operator
        plan = self.sampling
        pick = np.zeros(3, dtype=int) if plan is None else np.arange(3) % plan.checks.size
        sampling = None if plan is None else plan.draws[plan.checks[pick]]
        actual, journal, costs, after = self._call(V, t, random_draws, self.book, sampling)
        sizes = tuple(int(np.prod(shape, dtype=np.int64)) for _, kind, shape in journal if kind == "normal")
        z = np.hstack(draws) if draws else np.zeros((3, 0))
        if self._vouched:
            self._watch_bookkeeping(after)
        for k, known in enumerate(self._known):
            if known.sizes != sizes:
                continue
            A, c, G = known.A[pick], known.c[pick], known.G[pick]
            if _close(actual, np.einsum("rij,rj->ri", A, V) + c + np.einsum("rik,rk->ri", G, z)) <= AFFINE_RTOL:
                self._known.insert(0, self._known.pop(k))
                self.book = after
                # without sampling the costs of this very call; with it, the expectation probed
                self.last_costs = {k: float(np.mean(v)) for k, v in costs.items()} if plan is None else known.costs
                return known.operator
        known = self._probe(t, self.book, _Seen(V, z, actual, sizes, after))
        self._known = [known, *self._known[:7]]
        self.book, self.last_costs = known.after, known.costs
        return known.operator

    # -- the model interface used by run_exact -------------------------------------------------
    def initial(self) -> np.ndarray:
        v = np.append(self.v0, 1.0)
        second = np.outer(v, v)
        second[:self.n_state, :self.n_state] += self.init_cov
        return second

    def step(self, t: int, flat: np.ndarray) -> np.ndarray:
        """vec E[v v^T] after round t from before it (rounds are stepped in order); the round's
        expected costs are then in ``last_costs``."""
        return self._operator(t).apply(flat)

    def measure_space(self) -> tuple[int, Callable[[np.ndarray], Any], np.ndarray]:
        book = dict(self.book)
        self._output_book = book
        self._inert: set[str] = getattr(self, "_inert", set())  # numeric bookkeeping the output ignores
        return self.n_state, lambda V: self.algorithm.output(self.unflatten(V, book)), np.arange(self.n_state)

    def output_moved(self) -> bool:
        """Whether the output map changed since ``measure_space`` (an output average's weight is
        bookkeeping): then the measures' quadratic forms must be read off again."""
        changed = {k for k, v in self._output_book.items() if not _same(self.book[k], v)}
        if changed <= self._inert:  # numbers that did not move the output before (a round counter)
            self._output_book = dict(self.book)
            return False
        V = self.scale * np.random.default_rng(5).standard_normal((3, self.n_state))
        from .engine import as_points  # the engine imports this module lazily

        before = as_points(self.algorithm.output(self.unflatten(V, self._output_book)))
        after = as_points(self.algorithm.output(self.unflatten(V)))
        if all(np.array_equal(np.asarray(before[k]), np.asarray(after[k])) for k in after):
            self._output_book = dict(self.book)
            self._inert |= {k for k in changed if isinstance(self.book[k], (int, float, np.number))}
            return False
        return True

    def final(self, second: np.ndarray) -> dict[str, np.ndarray]:
        from .engine import as_points  # the engine imports this module lazily

        output = self.algorithm.output(self.unflatten(second[:self.n_state, -1][None, :]))
        return {name: np.asarray(point, dtype=float) for name, point in as_points(output).items()}

    def costs(self) -> dict[str, float]:
        return dict(self._costs)

    def info(self, second: np.ndarray) -> dict[str, Any]:
        info = dict(self.algorithm.info(self.unflatten(second[:self.n_state, -1][None, :])))
        for name in self.monitors & set(info):
            info[name] = float("nan")  # a monitor of the iterates: not an expectation, not tracked
        return info


def _same(a: Any, b: Any) -> bool:
    """Equal bookkeeping; floats up to rounding (a mean over R equal replicas depends on R in the last bit)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if isinstance(a, float) and isinstance(b, float) and not (a == b):
        return math.isclose(a, b, rel_tol=1e-12)
    return a == b


# algorithm class -> model builder, tried from the most derived class up: the FedAvg family through
# its seams (any participation and delay schedule), everything else through its whole round
MODELS: dict[type, Callable[..., Any]] = {FedAvg: FedAvgModel, Algorithm: RoundModel}


def exact_model(algorithm_class: type) -> Callable[[Callable], Callable]:
    """Register a model builder (algorithm, problem, rounds) -> model for an algorithm family."""

    def decorate(builder: Callable) -> Callable:
        MODELS[algorithm_class] = builder
        return builder

    return decorate


def model_for(algorithm: Any, problem: Problem, rounds: int) -> Any:
    """The first model along the class hierarchy that accepts the run; NotExact with every reason."""
    reasons = []
    for cls in type(algorithm).__mro__:
        if cls in MODELS:
            try:
                return MODELS[cls](algorithm, problem, rounds)
            except NotExact as why:
                reasons.append(f"{MODELS[cls].__name__}: {why}")
    raise NotExact("; ".join(reasons) or f"{algorithm.name} has no exact model")


# ------------------------------------------------------------------------------------------------
# The run


def run_exact(config: RunConfig, algorithm: Any, problem: Problem) -> Trace:
    """The Trace of ``config`` with exact expectations: one "replica", zero spread, info["exact"].

    With one BLAS thread: the matrices are small (a thread pool only adds synchronization) and the
    cores are usually busy with other runs (measured 9x slower with OpenBLAS's pool under load)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _run_exact(config, algorithm, problem)


def _run_exact(config: RunConfig, algorithm: Any, problem: Problem) -> Trace:
    started = time.perf_counter()
    rounds = int(config.rounds)
    model = model_for(algorithm, problem, rounds)
    scale = float(np.sqrt(np.max(np.abs(np.diag(model.initial())))))
    omitted: dict[str, str] = {}
    names, forms = _measure_forms(model, problem, scale, omitted)
    marks = log_spaced_checkpoints(rounds, int(config.checkpoints))
    mark_index = {int(t): c for c, t in enumerate(marks)}
    per_round = model.costs()
    cost_names = list(per_round)
    varying = hasattr(model, "last_costs")  # costs that change by round (a sync every I steps)
    totals = np.zeros(len(cost_names))
    spent = np.outer(marks, [per_round[k] for k in cost_names]) if not varying else np.zeros((marks.size, len(cost_names)))
    point = np.full((marks.size, len(names)), np.nan)
    average = np.full((marks.size, len(names)), np.nan)
    sums = np.zeros(len(names) + 1)
    diverged = -1

    flat = model.initial().reshape(-1)
    values = forms @ flat
    with np.errstate(all="ignore"):
        for t in range(rounds):
            if t in mark_index:  # before adding round t: avg at t is the mean over rounds < t
                point[mark_index[t]] = values[:-1]
                average[mark_index[t]] = sums[:-1] / t if t > 0 else np.nan
                if varying:
                    spent[mark_index[t]] = totals
            sums += values
            flat = model.step(t, flat)
            if varying:
                totals += [model.last_costs.get(k, 0.0) for k in cost_names]
            if getattr(model, "output_moved", lambda: False)():
                forms = _measure_forms(model, problem, scale, {})[1]
            values = forms @ flat
            if not values[-1] <= DIVERGENCE_THRESHOLD:  # NaN too
                diverged = t + 1  # like the engine: the remaining checkpoints stay NaN
                break
        else:
            point[-1] = values[:-1]
            average[-1] = sums[:-1] / rounds
            if varying:
                spent[-1] = totals
    second = flat.reshape(model.n, model.n)
    measures = {name: point[:, j:j + 1] for j, name in enumerate(names)}
    measures.update({f"avg:{name}": average[:, j:j + 1] for j, name in enumerate(names)})
    for name in omitted:  # present, so a claim reading one says what is missing instead of a KeyError
        measures[name] = measures[f"avg:{name}"] = np.full((marks.size, 1), np.nan)
    counters = {name: spent[:, j].copy() for j, name in enumerate(cost_names)}
    counters["rounds"] = marks.astype(float)
    if diverged >= 0:
        reached = marks < diverged
        counters = {k: np.where(reached, v, 0.0) for k, v in counters.items()}
    if "oracle_calls" in counters:
        counters["oracle_calls_per_client"] = counters["oracle_calls"] / problem.num_clients
    final = model.final(second)
    if diverged >= 0:
        final = {name: np.full_like(point, np.nan) for name, point in final.items()}
    info = {
        **model.info(second),
        "wall_seconds": time.perf_counter() - started,
        "algorithm_source": algorithm.source,
        "problem_spec": problem.spec,
        "exact": True,
        **({"exact_omitted": omitted} if omitted else {}),
        "exact_how": "moments propagated exactly from the probed seams (ratecheck.exact); one row = expectations",
    }
    return Trace(config=config, replica_ids=np.array([0]), checkpoints=marks, measures=measures,
                 counters=counters, final=final, diverged_round=np.array([diverged]), info=info)


def _measure_forms(model: Any, problem: Problem, scale: float, omitted: dict[str, str]) -> tuple[list[str], np.ndarray]:
    """The measures as rows on vec E[v v^T], plus a last row, the trace of S: |S_ij| <= tr S for
    S >= 0, so it detects divergence."""
    dim, to_output, index = model.measure_space()
    names, forms = _augmented_measures(probe_measures(problem, to_output, dim, scale, omitted=omitted), index, model.n)
    return names, np.vstack([forms, np.eye(model.n).reshape(1, -1)])


def _augmented_measures(measures: Mapping[str, QuadraticMeasure], index: np.ndarray,
                        n: int) -> tuple[list[str], np.ndarray]:
    """Each q(x) = c + l.x + x^T Q x as a matrix on v = (..., 1): E q = <Qv, E[v v^T]>, stacked."""
    names = list(measures)
    forms = np.zeros((len(names), n, n))
    for j, name in enumerate(names):
        q = measures[name]
        forms[j][np.ix_(index, index)] = q.Q
        forms[j][index, -1] += q.l / 2
        forms[j][-1, index] += q.l / 2
        forms[j][-1, -1] = q.c
    return names, forms.reshape(len(names), n * n)
