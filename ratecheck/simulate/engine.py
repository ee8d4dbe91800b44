"""engine.run: T rounds of an algorithm on a problem, R replicas as an array axis.

Measures of the global iterate are computed every round (they are closed form and cheap), so that
time averages such as M_T = (1/T) sum_{t<T} ||grad F(w^t)||^2 are exact; point values and running
averages are recorded at log-spaced checkpoints plus the last round. A replica whose iterate becomes
non-finite or has grown without bound (see ``_blown_up``) is recorded with its round and masked with
NaN from then on; the other replicas carry on, and their numbers do not change. A run that stops
early because every replica diverged keeps the counters of the rounds it ran.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ..algorithms.base import Algorithm
from ..model.blas import one_blas_thread
from ..model.diagnostics import check as check_diagnostics
from ..model.points import as_points
from ..params import ParamError, check_run, check_size, replica_ids
from ..problem import Problem
from ..registry import make_algorithm, make_problem  # names resolve only through the registry
from ..seeding import Streams
from ..trace import RunConfig, Trace

# Divergence rule: a replica has diverged once a coordinate of its global point(s) is non-finite, or
# exceeds DIVERGENCE_GROWTH times the initial scale max(1, max |x0|) of that point, or exceeds
# DIVERGENCE_THRESHOLD outright. Every problem here has its solutions within a few units of the start,
# so an iterate 1e8 times farther out is growing without bound, not converging slowly: flagging it
# early (|x| ~ 1e8, grad_norm_sq ~ 1e16) keeps such runs from reporting numbers like 3.8e126.
DIVERGENCE_GROWTH = 1e8
DIVERGENCE_THRESHOLD = 1e100


def run(
    algorithm: Algorithm,
    problem: Problem,
    rounds: int,
    *,
    replicas: int | Sequence[int] = 16,
    seed: int = 0,
    checkpoints: int = 24,
    progress: bool = False,
    mode: str = "monte_carlo",
) -> Trace:
    """Run `algorithm` on `problem` for `rounds` rounds; `replicas` is a count or explicit ids.

    `mode` "exact" propagates exact expectations (ratecheck.exact), "auto" does so where the run is
    linear-Gaussian and falls back to Monte Carlo otherwise, saying why in info["exact_fallback"]."""
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
        mode=mode,
    )
    with one_blas_thread():  # as in a pool worker, wherever the run is called from (ratecheck.model.blas)
        return _execute(config, algorithm, problem, ids, progress)


def run_config(
    config: RunConfig, *, replica_ids: Sequence[int] | None = None, progress: bool = False
) -> Trace:
    """Build the algorithm and problem a configuration names, and run it."""
    algorithm = make_algorithm(config.algorithm, config.params)
    problem = make_problem(config.problem, config.problem_params)
    ids = _replica_ids(config.replicas if replica_ids is None else replica_ids)
    with one_blas_thread():  # as in a pool worker, wherever the run is called from (ratecheck.model.blas)
        return _execute(config, algorithm, problem, ids, progress)


def _replica_ids(replicas: int | Sequence[int]) -> np.ndarray:
    return replica_ids("run", replicas)


def _execute(
    config: RunConfig, algorithm: Algorithm, problem: Problem, ids: np.ndarray, progress: bool
) -> Trace:
    from ..model.fit import log_spaced_checkpoints  # here, not at import: fit pulls in scipy.stats

    for name in ("rounds", "checkpoints", "seed"):
        check_run("run", name, getattr(config, name))
    algorithm.check_problem(problem)
    try:
        algorithm.validate(problem)
    except (KeyError, AttributeError) as exc:  # a constant or an oracle the family does not have
        what = f"the constant {exc.args[0]!r}" if isinstance(exc, KeyError) and exc.args else \
            f"{getattr(exc, 'name', None) or exc}"
        raise ValueError(f"algorithm {algorithm.name!r} does not run on problem family {problem.family!r}: it "
                         f"needs {what}, which that family does not provide") from None
    except (TypeError, IndexError, OverflowError) as exc:
        # a check that did not expect this input: still an input error, said with both names
        raise ValueError(f"{algorithm.name} on {problem.family}: its parameters were refused "
                         f"({type(exc).__name__}: {exc})") from None
    # -- issue #8: exact expectations (ratecheck/exact/); Monte Carlo below is unchanged --------
    fallback = None
    if config.mode != "monte_carlo":
        from ..exact import NotExact, run_exact  # start-up: exact mode's machinery loads when a run asks for it

        try:
            _check_size(config, algorithm, problem, ids, exact=True)
            exact = run_exact(config, algorithm, problem)
            check_diagnostics(algorithm, exact.info)
            return exact
        except (NotExact, ParamError) as why:
            # mode "auto": exact moments too large for the machine are a reason for Monte Carlo, not an error
            if config.mode == "exact" or (isinstance(why, ParamError) and "exact mode" not in why.name):
                raise
            fallback = f"Monte Carlo instead of exact: {why}"
    # -- end issue #8 ------------------------------------------------------------------------------
    rounds = int(config.rounds)
    _check_size(config, algorithm, problem, ids)
    started = time.perf_counter()
    streams = Streams(int(config.seed), config.run_key(), ids)
    marks = log_spaced_checkpoints(rounds, int(config.checkpoints))
    mark_index = {int(t): c for c, t in enumerate(marks)}
    R = ids.size

    state = algorithm.init(problem, streams)
    scales = {name: max(1.0, float(np.nanmax(np.abs(point), initial=0.0)))
              for name, point in as_points(algorithm.output(state)).items()}
    diverged = np.full(R, -1, dtype=np.int64)
    recorded: dict[str, np.ndarray] = {}
    sums: dict[str, np.ndarray] = {}
    costs_total: dict[str, np.ndarray] = {}
    counters: dict[str, np.ndarray] = {}
    replica_counters: dict[str, np.ndarray] = {}  # (C, R): what each replica spent, for the cost claims

    def record(t: int, values: dict[str, np.ndarray]) -> None:
        c = mark_index[t]
        for name, value in values.items():
            recorded.setdefault(name, np.full((marks.size, R), np.nan))[c] = value
            avg = sums[name] / t if t > 0 else np.full(R, np.nan)  # mean over rounds 0..t-1
            recorded.setdefault(f"avg:{name}", np.full((marks.size, R), np.nan))[c] = avg
        for name, total in costs_total.items():
            counters.setdefault(name, np.zeros(marks.size))[c] = float(np.mean(total))
            replica_counters.setdefault(name, np.zeros((marks.size, R)))[c] = total
        counters.setdefault("rounds", np.zeros(marks.size))[c] = t

    bar = tqdm(total=rounds, desc=f"{config.algorithm}", disable=not progress, leave=False)
    with np.errstate(all="ignore"):  # a diverging replica must not flood the log or crash
        values = _measure(problem, algorithm.output(state), None)
        any_diverged = R == 0  # kept as a flag, not recomputed from ``diverged`` every round (R = 0: vacuously all)
        for t in range(rounds):
            if t in mark_index:  # before adding round t: avg at t is the mean over rounds < t
                record(t, values)
            for name, value in values.items():
                sums[name] = sums.get(name, 0.0) + value
            state, costs = algorithm.round(state, problem, t, streams)
            for name, cost in costs.items():
                total = costs_total.get(name)
                if total is None or (np.ndim(cost) != 0 and np.shape(cost) != (R,)):
                    costs_total[name] = (0.0 if total is None else total) + np.broadcast_to(cost, (R,))
                else:  # the same sum without broadcast_to's cost, paid every round (issue #19)
                    costs_total[name] = total + cost
            output = algorithm.output(state)  # once a round: the divergence rule and the measures read it
            newly = _blown_up(output, R, scales) & (diverged < 0)
            if newly.any():
                diverged[newly] = t + 1
                any_diverged = True
            values = _measure(problem, output, diverged if any_diverged else None)
            bar.update(1)
            if any_diverged and (diverged >= 0).all():  # nothing left to learn; the remaining checkpoints stay NaN
                # ... but the counters say what was spent: the totals of the t + 1 rounds that ran
                for c in range(int(np.searchsorted(marks, t + 1)), marks.size):
                    for name, total in costs_total.items():
                        counters.setdefault(name, np.zeros(marks.size))[c] = float(np.mean(total))
                        replica_counters.setdefault(name, np.zeros((marks.size, R)))[c] = total
                    counters.setdefault("rounds", np.zeros(marks.size))[c] = t + 1
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
        **({"exact_fallback": fallback} if fallback else {}),  # issue #8
    }
    check_diagnostics(algorithm, info)
    return Trace(
        config=config,
        replica_ids=ids,
        checkpoints=marks,
        measures=recorded,
        counters=counters,
        final=final,
        diverged_round=diverged,
        info=info,
        replica_counters=replica_counters,
    )


def _blown_up(output, replicas: int, scales: Mapping[str, float] | None = None) -> np.ndarray:
    """Replicas whose global point(s) are non-finite, or beyond DIVERGENCE_GROWTH x their initial
    scale, or beyond DIVERGENCE_THRESHOLD (the module docstring states the rule)."""
    bad = np.zeros(replicas, dtype=bool)
    for name, point in as_points(output).items():
        flat = np.asarray(point, dtype=float).reshape(replicas, -1)
        limit = DIVERGENCE_THRESHOLD
        if scales is not None and name in scales:
            limit = min(limit, DIVERGENCE_GROWTH * scales[name])
        # one pass: NaN and inf make the largest |entry| fail "<= limit" as they fail isfinite
        bad |= ~(np.abs(flat).max(axis=1, initial=0.0) <= limit)
    return bad


def _check_size(config: RunConfig, algorithm: Algorithm, problem: Problem, ids: np.ndarray,
                exact: bool = False) -> None:
    """The size rule (ratecheck.params.check_size) with every cost of this run that scales."""
    timeline = int(problem.num_clients) if hasattr(algorithm, "timeline") else 0  # event-driven algorithms
    state = _state_floats(algorithm, problem, config) if exact else 0
    check_size("run", rounds=int(config.rounds), replicas=int(ids.size), clients=_slots(algorithm, problem),
               dim=int(problem.dim), local_steps=_local_work(algorithm), checkpoints=int(config.checkpoints),
               timeline_clients=timeline, state=state)


def _state_floats(algorithm: Algorithm, problem: Problem, config: RunConfig) -> int:
    """Numbers in one replica's state (what exact mode keeps the second moment of), at least 1."""
    check_size("run", rounds=int(config.rounds), replicas=1, clients=_slots(algorithm, problem),
               dim=int(problem.dim), local_steps=_local_work(algorithm))  # building one replica fits
    return max(1, _floats(algorithm.init(problem, Streams(int(config.seed), config.run_key(), [0]))))


def _floats(value: object) -> int:
    if isinstance(value, np.ndarray):
        return int(value.size) if value.dtype.kind in "fc" else 0
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(_floats(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, Mapping):
        return sum(_floats(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_floats(v) for v in value)
    return 0


def _slots(algorithm: Algorithm, problem: Problem) -> int:
    """Client slots per round (participants, counted with multiplicity), for the size rule."""
    participation: Any = getattr(algorithm, "participation", None)
    try:
        return max(int(problem.num_clients), int(participation.per_round(problem.num_clients)))
    except (AttributeError, TypeError, ValueError):
        return int(problem.num_clients)


def _local_work(algorithm: Algorithm) -> int:
    """Local steps per round, if the algorithm declares an integer ``local_steps`` (else 1)."""
    steps = getattr(algorithm, "local_steps", 1)
    return int(steps) if isinstance(steps, (int, np.integer)) and not isinstance(steps, bool) and steps >= 1 else 1


def _measure(problem: Problem, output: Any, diverged: np.ndarray | None) -> dict[str, np.ndarray]:
    """The output's measures, NaN for replicas that diverged (``diverged``: None when none has)."""
    values = problem.all_measures(output)
    if diverged is not None:
        values = {k: np.where(diverged >= 0, np.nan, v) for k, v in values.items()}
    return values
