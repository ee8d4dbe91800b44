"""The exact run: the model registry and the Trace of expectations."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..algorithms.base import Algorithm
from ..algorithms.fedavg import FedAvg
from ..algorithms.fedbio import FedBiOLocal
from ..model.fit import log_spaced_checkpoints
from ..oracles import SmoothFederatedOracles
from ..problem import Problem
from ..trace import RunConfig, Trace
from .bilinear_round import whole_round_model
from .diagonal import DiagonalFedAvgModel
from .fedavg import FedAvgModel
from .neumann import NeumannModel
from .probing import DIVERGENCE_THRESHOLD, NotExact
from .seams import QuadraticMeasure, probe_measures


def fedavg_model(algorithm: FedAvg, problem: SmoothFederatedOracles, rounds: int) -> DiagonalFedAvgModel | FedAvgModel:
    """The diagonal model where the problem declares a shared eigenbasis and every probed map and
    measure is diagonal in it (O(d) a round), else the dense FedAvgModel (with the reason why not)."""
    if getattr(problem, "eigenbasis", False) is not False:
        try:
            return DiagonalFedAvgModel(algorithm, problem, rounds)
        except NotExact as why:
            try:
                return FedAvgModel(algorithm, problem, rounds)
            except NotExact as dense:
                raise NotExact(f"{dense} (and diagonally: {why})") from None
    return FedAvgModel(algorithm, problem, rounds)


MODELS: dict[type, Callable[[Any, Any, int], Any]] = {FedAvg: fedavg_model, FedBiOLocal: NeumannModel,
                                                      Algorithm: whole_round_model}


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
    omitted: dict[str, str] = {}
    flat_state = hasattr(model, "measure_forms")  # a model whose state is not one second-moment matrix
    if flat_state:
        names, forms = model.measure_forms(omitted)
    else:
        scale = float(np.sqrt(np.max(np.abs(np.diag(model.initial())))))
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
    second = flat if flat_state else flat.reshape(model.n, model.n)
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
