"""Client sampling and delays, exact: the multiplicity moments of a sampling scheme and the delay
distributions read off a delay schedule (or an overridden schedule()) by exact quadrature."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..algorithms.fedavg import FedAvgState
from ..model.participation import Participation
from ..oracles import SmoothFederatedOracles
from .probing import NotExact, ProbeStream, ProbeStreams


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
