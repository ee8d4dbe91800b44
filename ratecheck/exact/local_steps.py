"""K local steps composed by repeated squaring: the client map of a K-step job from one step's.

FedAvg's local job on a quadratic repeats one affine-Gaussian step x <- T_i x + c_i + e (Cov e =
Sigma_i) K times. Probing the K-step job directly runs K steps per probe row and takes K times as
many noise probes (K^2 step evaluations per client coordinate); reading the ONE-step map off the
algorithm's own code (the same algorithm with local_steps = 1) and composing it by squaring costs
log2 K batched products. The composition is then checked against the real K-step client_update on
random starts, clients and draws (to AFFINE_RTOL, the probing tolerance): a job whose steps differ
(a local step-size schedule, a step that reads the step counter) or whose draws are laid out
otherwise is not composed, and the direct probe reads it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..oracles import SmoothFederatedOracles
from .probing import AFFINE_RTOL, PROBE_ELEMENTS, NotExact, ProbeStream, ProbeStreams, _close
from .seams import ClientMaps, probe_client_update

CHECK_ROWS = 3  # random replicas of the composition's check (as the direct probe's check)
CHECK_CLIENTS = 8  # distinct clients in the check's slots
# compose only when the direct probe's work, N d^2 (K (d + 1) + K^2 d) multiply-adds with d draws a
# step, exceeds this (~10 ms of numpy): below it the composition's Python overhead costs more, and
# small registered runs keep their directly probed numbers
COMPOSE_WORK = 2**24


def client_maps(algorithm: Any, problem: SmoothFederatedOracles, *, m: int | None = None,
                compose: bool = True) -> ClientMaps:
    """The K-step client maps: composed from one step where that reproduces the code, else probed
    directly (``compose=False`` always probes directly)."""
    K = local_step_count(algorithm)
    N, d = problem.num_clients, problem.dim
    if compose and K is not None and N * d * d * (K * (d + 1) + K * K * d) > COMPOSE_WORK:
        composed = composed_client_maps(algorithm, problem, m=m)
        if composed is not None:
            return composed
    return probe_client_update(algorithm, problem, m=m)


def local_step_count(algorithm: Any) -> int | None:
    """K when the algorithm is a dataclass with an integer field ``local_steps`` > 1, else None."""
    if not dataclasses.is_dataclass(algorithm) or "local_steps" not in {f.name for f in dataclasses.fields(algorithm)}:
        return None
    K = getattr(algorithm, "local_steps", None)
    return int(K) if isinstance(K, (int, np.integer)) and K > 1 else None


def one_step_variant(algorithm: Any, reading: str) -> tuple[int, Any]:
    """(K, the same algorithm with local_steps = 1) to read one random local step off; NotExact when
    the algorithm has no such variant (``reading`` names what was to be read, for the message)."""
    K = local_step_count(algorithm) or int(getattr(algorithm, "local_steps", 1))
    try:
        return K, dataclasses.replace(algorithm, local_steps=1) if K > 1 else algorithm
    except (TypeError, ValueError) as exc:
        raise NotExact(f"{algorithm.name}: no one-step variant to read the {reading} off ({exc})") from None


def compose_power(T: np.ndarray, c: np.ndarray, Sigma: np.ndarray, K: int, chunk: int | None = None,
                  inplace: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The K-fold composition of x -> T_i x + c_i + e_i (Cov e_i = Sigma_i) for stacks (N, d, d),
    (N, d), (N, d, d): (T^K, sum_{j<K} T^j c, sum_{j<K} T^j Sigma T^jT) by repeated squaring,
    2 log2 K batched products; clients in chunks (``chunk`` of them, default within PROBE_ELEMENTS).
    ``inplace``: the results overwrite T, c and Sigma (memory: no second (N, d, d) stack)."""
    N, d, _ = T.shape
    chunk = chunk or max(1, PROBE_ELEMENTS // (8 * d * d))
    power, offset, cov = (T, c, Sigma) if inplace else (np.empty_like(T), np.empty_like(c), np.empty_like(Sigma))
    for lo in range(0, N, chunk):
        part = slice(lo, min(lo + chunk, N))
        base = (T[part].copy(), c[part].copy(), Sigma[part].copy())
        result: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        k = K
        while True:
            if k & 1:
                result = base if result is None else _then(result, base)
            k >>= 1
            if not k:
                break
            base = _then(base, base)
        assert result is not None  # K >= 1
        power[part], offset[part], cov[part] = result
    return power, offset, cov


def _then(first: tuple[np.ndarray, np.ndarray, np.ndarray],
          second: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """second after first: (T2 T1, T2 c1 + c2, T2 S1 T2^T + S2), batched over the leading axis.
    Powers of one map commute, so the order in compose_power does not matter."""
    T1, c1, S1 = first
    T2, c2, S2 = second
    return T2 @ T1, (T2 @ c1[..., None])[..., 0] + c2, T2 @ S1 @ T2.transpose(0, 2, 1) + S2


def composed_client_maps(algorithm: Any, problem: SmoothFederatedOracles, *, m: int | None = None,
                         seed: int = 1) -> ClientMaps | None:
    """ClientMaps of the K-step client_update from the one-step algorithm's, composed by squaring and
    checked against the K-step code; None when there is no ``local_steps`` > 1 or the check fails."""
    K = local_step_count(algorithm)
    if K is None:
        return None
    try:
        single = dataclasses.replace(algorithm, local_steps=1)
    except (TypeError, ValueError):
        return None
    N, d = problem.num_clients, problem.dim
    m = N if m is None else m
    rng = np.random.default_rng(seed)
    # the check's slots draw from a few clients (the composition is one code path for every client),
    # so only their one-step maps are kept beside the composed stacks
    chosen = rng.choice(N, size=min(N, CHECK_CLIENTS), replace=False)
    clients = chosen[rng.integers(0, chosen.size, (CHECK_ROWS, m))]
    z = np.zeros((K, CHECK_ROWS, m, 0))

    def extra(draws: int) -> tuple[np.ndarray, np.ndarray]:
        nonlocal z
        z = rng.standard_normal((K, CHECK_ROWS, m, draws))
        return np.tile(clients, (K, 1)), z.reshape(K * CHECK_ROWS, m, draws)

    one = probe_client_update(single, problem, m=m, extra=extra)
    draws = one.draws
    assert one.applied is not None  # asked for through extra
    # Delta_1 = A1 x + b1 + G1 z is start - end: one step is end = (I - A1) x - b1 - G1 z
    T = one.A  # overwritten: T, then T^K, then A = I - T^K (one (N, d, d) stack besides the covariances)
    np.negative(T, out=T)
    T[:, np.arange(d), np.arange(d)] += 1.0
    steps_T = {int(i): T[i].copy() for i in chosen}
    power, offset, cov = compose_power(T, -one.b, one.cov, K, inplace=True)
    power *= -1.0
    power[:, np.arange(d), np.arange(d)] += 1.0
    maps = ClientMaps(A=power, b=-offset, cov=cov, draws=K * draws)
    scale = max(1.0, float(np.max(np.abs(problem.initial_point()))))
    starts = scale * rng.standard_normal((CHECK_ROWS, m, d))
    actual = _k_step_update(algorithm, problem, starts, clients, z, K)
    if actual is None:
        return None
    # the composed (A, b) on the starts; the noise stepped through T_i, one step's G1 z_k at a time
    noise = np.zeros((CHECK_ROWS, m, d))
    steps = one.applied.reshape(K, CHECK_ROWS, m, d)
    for k in range(K):
        noise = _per_client(steps_T, clients, noise) - steps[k]
    predicted = _per_client(maps.A, clients, starts) + maps.b[clients] - noise
    if not _close(actual, predicted) <= AFFINE_RTOL:
        return None
    return maps


def _per_client(maps: np.ndarray | dict[int, np.ndarray], clients: np.ndarray, x: np.ndarray) -> np.ndarray:
    """maps[clients[r, j]] @ x[r, j] for every slot, one product per distinct client (no gathered stack)."""
    out = np.empty_like(x)
    for i in np.unique(clients):
        where = clients == i
        out[where] = x[where] @ maps[i].T
    return out


def _k_step_update(algorithm: Any, problem: SmoothFederatedOracles, starts: np.ndarray, clients: np.ndarray,
                   z: np.ndarray, K: int) -> np.ndarray | None:
    """The real client_update on (starts, clients), step k served the draws z[k] (R, m, draws) in
    call order; None when its draws are not laid out as K repeats of one step's."""
    R, m, _ = starts.shape
    draws = z.shape[-1]
    position = {"k": 0, "offset": 0}

    def make(purpose: str) -> ProbeStream:
        def serve(index: int, shape: tuple[int, ...]) -> np.ndarray:
            size = int(np.prod(shape[1:], dtype=np.int64))
            k, offset = position["k"], position["offset"]
            if not shape or shape[0] != m or k >= K or offset + size > draws:
                raise _Layout
            position["offset"] += size
            if position["offset"] == draws:  # step k has taken all its draws
                position["k"], position["offset"] = k + 1, 0
            return z[k, :, :, offset:offset + size].reshape((R, *shape))

        return ProbeStream(R, serve, purpose=purpose)

    try:
        out = algorithm.client_update(problem, problem.gather(clients), starts.copy(), ProbeStreams(R, make))
    except (_Layout, NotExact):
        return None
    if draws and position != {"k": K, "offset": 0}:
        return None
    out = np.asarray(out, dtype=float)
    return out if out.shape == starts.shape else None


class _Layout(Exception):
    """The K-step job draws its noise otherwise than K repeats of one step."""
