"""engine.run: T rounds of an algorithm on a problem, R replicas as an array axis.

Measures of the global iterate are computed every round (they are closed form and cheap), so that
time averages such as M_T = (1/T) sum_{t<T} ||grad F(w^t)||^2 are exact; point values and running
averages are recorded at log-spaced checkpoints plus the last round. A replica whose iterate becomes
non-finite (or astronomically large) is recorded with its round and masked with NaN from then on;
the other replicas carry on, and their numbers do not change.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
from tqdm.auto import tqdm

from .algorithms.base import Algorithm
from .fit import log_spaced_checkpoints
from .problem import Problem
from .seeding import Streams
from .trace import RunConfig, Trace

DIVERGENCE_THRESHOLD = 1e100  # |x| beyond this counts as divergence before it overflows to inf


def run(
    algorithm: Algorithm,
    problem: Problem,
    rounds: int,
    *,
    replicas: int | Sequence[int] = 16,
    seed: int = 0,
    checkpoints: int = 24,
    progress: bool = False,
) -> Trace:
    """Run `algorithm` on `problem` for `rounds` rounds; `replicas` is a count or explicit ids."""
    ids = _replica_ids(replicas)
    config = RunConfig(
        algorithm=algorithm.name,
        params=algorithm.to_params(),
        problem=problem.family,
        problem_params=dict(problem.params),
        rounds=rounds,
        replicas=len(ids),
        seed=seed,
        checkpoints=checkpoints,
    )
    return _execute(config, algorithm, problem, ids, progress)


def run_config(
    config: RunConfig, *, replica_ids: Sequence[int] | None = None, progress: bool = False
) -> Trace:
    """Build the algorithm and problem a configuration names, and run it."""
    from .registry import make_algorithm, make_problem  # names resolve only through the registry

    algorithm = make_algorithm(config.algorithm, config.params)
    problem = make_problem(config.problem, config.problem_params)
    ids = _replica_ids(config.replicas if replica_ids is None else replica_ids)
    return _execute(config, algorithm, problem, ids, progress)


def _replica_ids(replicas: int | Sequence[int]) -> np.ndarray:
    if isinstance(replicas, (int, np.integer)):
        if replicas < 1:
            raise ValueError(f"replicas must be >= 1, got {replicas}")
        return np.arange(int(replicas))
    ids = np.asarray(list(replicas), dtype=np.int64)
    if ids.size == 0 or (ids < 0).any() or len(set(ids.tolist())) != ids.size:
        raise ValueError(f"replica ids must be distinct non-negative integers, got {list(replicas)}")
    return ids


def _execute(
    config: RunConfig, algorithm: Algorithm, problem: Problem, ids: np.ndarray, progress: bool
) -> Trace:
    if int(config.rounds) != config.rounds or config.rounds < 1:
        raise ValueError(f"rounds (T) must be an integer >= 1, got {config.rounds!r}")
    algorithm.validate(problem)
    rounds = int(config.rounds)
    started = time.perf_counter()
    streams = Streams(int(config.seed), config.run_key(), ids)
    marks = log_spaced_checkpoints(rounds, int(config.checkpoints))
    mark_index = {int(t): c for c, t in enumerate(marks)}
    R = ids.size

    state = algorithm.init(problem, streams)
    diverged = np.full(R, -1, dtype=np.int64)
    recorded: dict[str, np.ndarray] = {}
    sums: dict[str, np.ndarray] = {}
    costs_total: dict[str, np.ndarray] = {}
    counters: dict[str, np.ndarray] = {}

    def record(t: int, values: dict[str, np.ndarray]) -> None:
        c = mark_index[t]
        for name, value in values.items():
            recorded.setdefault(name, np.full((marks.size, R), np.nan))[c] = value
            avg = sums[name] / t if t > 0 else np.full(R, np.nan)  # mean over rounds 0..t-1
            recorded.setdefault(f"avg:{name}", np.full((marks.size, R), np.nan))[c] = avg
        for name, total in costs_total.items():
            counters.setdefault(name, np.zeros(marks.size))[c] = float(np.mean(total))
        counters.setdefault("rounds", np.zeros(marks.size))[c] = t

    bar = tqdm(total=rounds, desc=f"{config.algorithm}", disable=not progress, leave=False)
    with np.errstate(all="ignore"):  # a diverging replica must not flood the log or crash
        values = _measure(algorithm, problem, state, diverged)
        for t in range(rounds):
            if t in mark_index:  # before adding round t: avg at t is the mean over rounds < t
                record(t, values)
            for name, value in values.items():
                sums[name] = sums.get(name, 0.0) + value
            state, costs = algorithm.round(state, problem, t, streams)
            for name, cost in costs.items():
                costs_total[name] = costs_total.get(name, 0.0) + np.broadcast_to(cost, (R,))
            newly = _blown_up(algorithm.output(state), R) & (diverged < 0)
            diverged[newly] = t + 1
            values = _measure(algorithm, problem, state, diverged)
            bar.update(1)
            if (diverged >= 0).all():  # nothing left to learn; the remaining checkpoints stay NaN
                break
        else:
            record(rounds, values)
    bar.close()

    if "oracle_calls" in counters:
        counters["oracle_calls_per_client"] = counters["oracle_calls"] / problem.num_clients
    final = {name: point.astype(float) for name, point in as_points(algorithm.output(state)).items()}
    for point in final.values():
        point[diverged >= 0] = np.nan
    info = {
        **algorithm.info(state),
        "wall_seconds": time.perf_counter() - started,
        "algorithm_source": algorithm.source,
        "problem_spec": problem.spec,
    }
    return Trace(
        config=config,
        replica_ids=ids,
        checkpoints=marks,
        measures=recorded,
        counters=counters,
        final=final,
        diverged_round=diverged,
        info=info,
    )


def as_points(output: np.ndarray | Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """An algorithm's output as named global points: a bare array is the point "x"."""
    if isinstance(output, Mapping):
        return dict(output)
    return {"x": output}


def _blown_up(output, replicas: int) -> np.ndarray:
    """Replicas whose global point(s) are non-finite or beyond DIVERGENCE_THRESHOLD."""
    bad = np.zeros(replicas, dtype=bool)
    for point in as_points(output).values():
        flat = np.asarray(point, dtype=float).reshape(replicas, -1)
        bad |= ~np.isfinite(flat).all(axis=1)
        bad |= np.abs(np.nan_to_num(flat, nan=0.0)).max(axis=1, initial=0.0) > DIVERGENCE_THRESHOLD
    return bad


def _measure(algorithm: Algorithm, problem: Problem, state, diverged: np.ndarray) -> dict[str, np.ndarray]:
    values = problem.measures(algorithm.output(state))
    if (diverged >= 0).any():
        values = {k: np.where(diverged >= 0, np.nan, v) for k, v in values.items()}
    return values
