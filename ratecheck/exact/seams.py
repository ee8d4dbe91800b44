"""Reading affine maps off an algorithm's seams (client_update, aggregate, server_step) and the
problem's measures as quadratic forms, each checked on random inputs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..oracles import SmoothFederatedOracles
from ..problem import Problem
from .probing import (
    AFFINE_RTOL,
    PROBE_ELEMENTS,
    NotExact,
    ProbeStream,
    ProbeStreams,
    _close,
)


@dataclass(frozen=True)
class ClientMaps:
    """Delta_i = A[i] start + b[i] + G_i z with Cov(G_i z) = cov[i], for every client i."""

    A: np.ndarray  # (N, d, d)
    b: np.ndarray  # (N, d)
    cov: np.ndarray  # (N, d, d)
    draws: int  # standard-normal draws one job consumes
    applied: np.ndarray | None = None  # G_{clients} z of the ``extra`` slots asked for, (R', m', d)


def probe_client_update(algorithm: Any, problem: SmoothFederatedOracles, *, m: int | None = None, seed: int = 0,
                        extra: Callable[[int], tuple[np.ndarray, np.ndarray]] | None = None) -> ClientMaps:
    """Read client_update's affine map in (start, noise) for every client, then check it on random
    inputs laid out as a real round (m slots, clients repeated) with random draws.

    ``extra(draws)`` -> (clients (R', m'), z (R', m', draws)): the noise part G_{client} z of those
    slots is returned too (``applied``), so a caller can check a composition of this map against the code.

    Probe rows go in chunks of at most PROBE_ELEMENTS / (N d^2) rows (a problem may gather a d x d
    matrix per slot and row), and the noise map G_i (d x draws) is never held: its covariance and its
    action on the check's random draws are accumulated chunk by chunk, so memory stays O(N d^2)."""
    N, d = problem.num_clients, problem.dim
    everyone = np.arange(N)
    chunk = max(1, PROBE_ELEMENTS // (N * d * d))

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
    A = np.empty((N, d, d))  # (N, d_out, d_in), filled column by column (no (d + 1, N, d) stack)
    b = np.zeros((N, d))
    log: list = []
    for lo in range(0, d + 1, chunk):
        rows = np.arange(lo, min(lo + chunk, d + 1))
        starts = np.zeros((rows.size, N, d))
        unit_rows = rows >= 1
        starts[unit_rows, :, rows[unit_rows] - 1] = 1.0
        out, journal = call(starts, np.broadcast_to(everyone, (rows.size, N)), None)
        if lo == 0:
            log, b = journal, out[0]
        elif journal != log:
            raise NotExact("client_update's draws depend on its inputs (data-dependent control flow)")
        A[:, :, rows[unit_rows] - 1] = np.transpose(out[unit_rows] - b, (1, 2, 0))
        del out
    # the random check's inputs: random starts, random clients (with repeats) and random draws
    layout = []  # (purpose-call position, per-slot size)
    for purpose, kind, shape in log:
        if not shape or shape[0] != N:
            raise NotExact(f"client_update drew {kind} numbers of shape {shape} from {purpose!r}: exact mode "
                           f"needs per-client draws with the client axis first ({N} clients)")
        layout.append(int(np.prod(shape[1:], dtype=np.int64)))
    offsets = np.concatenate([[0], np.cumsum(layout)]).astype(int)
    draws = int(offsets[-1])
    rng = np.random.default_rng(seed)
    m = N if m is None else m
    R = 3
    clients = rng.integers(0, N, (R, m))
    scale = max(1.0, float(np.max(np.abs(problem.initial_point()))))
    check_starts = scale * rng.standard_normal((R, m, d))
    z = rng.standard_normal((R, m, draws))
    # 2) unit draws, one probe row per (call, per-client coordinate), the same in every slot
    cov = np.zeros((N, d, d))
    block = max(1, PROBE_ELEMENTS // (8 * d * d))  # clients per covariance update
    noise_part = np.zeros((R, m, d))  # G_{client} z of the check's slots
    wanted = None if extra is None else extra(draws)
    applied = None if wanted is None else np.zeros((*wanted[0].shape, d))
    for lo in range(0, draws, chunk):
        hi = min(lo + chunk, draws)
        order = {"n": 0}

        def unit(index: int, shape: tuple[int, ...], lo: int = lo, hi: int = hi, order: dict = order) -> np.ndarray:
            position = order["n"]
            order["n"] += 1
            if position >= len(layout):
                raise NotExact("client_update drew more noise on the second probe than on the first")
            block = np.zeros((hi - lo, *shape))
            per = block.reshape(hi - lo, shape[0], -1)
            cols = np.arange(max(lo - offsets[position], 0), min(hi - offsets[position], layout[position]))
            per[cols + offsets[position] - lo, :, cols] = 1.0
            return block

        out_noise, _ = call(np.zeros((hi - lo, N, d)), np.broadcast_to(everyone, (hi - lo, N)), unit)
        G = (out_noise - b).transpose(1, 2, 0)  # (N, d, rows): columns lo..hi-1 of every client's G_i
        for lo_c in range(0, N, block):  # in client blocks: no (N, d, d) temporary beside cov
            cov[lo_c:lo_c + block] += G[lo_c:lo_c + block] @ G[lo_c:lo_c + block].transpose(0, 2, 1)
        noise_part += (G[clients] @ z[:, :, lo:hi, None])[..., 0]
        if wanted is not None and applied is not None:
            _apply_noise(G, wanted[0], wanted[1][:, :, lo:hi], applied)
    served = {"n": 0}

    def random_draws(index: int, shape: tuple[int, ...]) -> np.ndarray:
        position = served["n"]
        served["n"] += 1
        if position >= len(layout) or int(np.prod(shape[1:], dtype=np.int64)) != layout[position]:
            raise NotExact("client_update's draws depend on its inputs (data-dependent control flow)")
        return z[:, :, offsets[position]:offsets[position + 1]].reshape((R, *shape))

    actual, _ = call(check_starts, clients, random_draws)
    # A_{client} start for every slot without gathering an (R, m, d, d) stack: all clients' maps on
    # all the check's starts, then each slot's own
    flat_clients = clients.reshape(-1)
    every = (A.reshape(N * d, d) @ check_starts.reshape(-1, d).T).reshape(N, d, -1)
    linear = every[flat_clients, :, np.arange(flat_clients.size)].reshape(R, m, d)
    predicted = linear + b[clients] + noise_part
    gap = _close(actual, predicted)
    if not gap <= AFFINE_RTOL:
        raise NotExact(f"client_update is not affine in (start, noise) per client: off by {gap:.2e} (relative) "
                       "on random inputs (a nonlinearity, a binding projection or clients coupled in a job)")
    return ClientMaps(A=A, b=b, cov=cov, draws=draws, applied=applied)


def _apply_noise(G: np.ndarray, clients: np.ndarray, z: np.ndarray, out: np.ndarray) -> None:
    """out[r, j] += G[clients[r, j]] @ z[r, j] for columns of every client's G (N, d, cols), in
    blocks of rows so that the gathered (rows, m, d, cols) stack stays within PROBE_ELEMENTS."""
    per_row = clients.shape[1] * G.shape[1] * G.shape[2]
    block = max(1, PROBE_ELEMENTS // max(per_row, 1))
    for lo in range(0, clients.shape[0], block):
        rows = slice(lo, lo + block)
        out[rows] += (G[clients[rows]] @ z[rows, :, :, None])[..., 0]


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
        server = inputs[:, 2 * d:].reshape((inputs.shape[0], *server_shape)).copy() if s else None  # type: ignore[misc]  # s > 0: a shape
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
    """Every measure of ``problem.all_measures(to_output(V))`` as a quadratic form of V (R, dim), read off
    the origin, +-unit vectors and pair sums, and checked on random points of size ``scale``.

    A measure that is not a quadratic form (a norm, not its square) has no exact expectation from
    the moments: NotExact, or, given ``omitted``, recorded there with the reason and left out."""
    d = dim
    first, second = np.triu_indices(d, 1)  # the pairs k < l, row by row
    rng = np.random.default_rng(seed)
    check = max(1.0, scale) * rng.standard_normal((3, d))
    total = 1 + 2 * d + first.size + 3

    def rows(lo: int, hi: int) -> np.ndarray:
        """Points lo..hi-1 of: the origin, e_k, -e_k, e_k + e_l (k < l), the checks."""
        index = np.arange(lo, hi)
        points = np.zeros((index.size, d))
        unit = (index >= 1) & (index < 1 + d)
        points[unit, index[unit] - 1] = 1.0
        minus = (index >= 1 + d) & (index < 1 + 2 * d)
        points[minus, index[minus] - 1 - d] = -1.0
        pair = (index >= 1 + 2 * d) & (index < total - 3)
        k = index[pair] - 1 - 2 * d
        points[pair, first[k]] = 1.0
        points[pair, second[k]] = 1.0
        tail = index >= total - 3
        points[tail] = check[index[tail] - (total - 3)]
        return points

    step = max(1, PROBE_ELEMENTS // max(d, 1) // 4)  # a measure may hold a few arrays of the points' size
    parts = [problem.all_measures(to_output(rows(lo, min(lo + step, total)))) for lo in range(0, total, step)]
    values = {name: np.concatenate([np.asarray(part[name], dtype=float).reshape(-1) for part in parts])
              for name in parts[0]}
    out = {}
    for name, v in values.items():
        c = v[0]
        plus, minus = v[1:1 + d], v[1 + d:1 + 2 * d]
        lin = (plus - minus) / 2
        Q = np.diag((plus + minus) / 2 - c)
        Q[first, second] = Q[second, first] = (v[1 + 2 * d:total - 3] - plus[first] - plus[second] + c) / 2
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
