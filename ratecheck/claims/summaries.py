"""What a claim reads from each run: per-replica summaries of a trace, and the reading pieces of a claim's
decision (ratecheck.claims.compose): hitting times, log-rates over a window, distances of the final iterate
to a target, another abscissa."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..model.fit import log_rate
from ..trace import RunConfig, Trace
from .compose import Reading, named
from .model import PointResult, _fmt
from .statistics import _bootstrap_distance
from .views_slopes import HittingTimes
from .views_values import Distance, LogRate


def tail_average(measure: str, start_fraction: float = 0.25) -> Callable[[RunConfig, Trace], np.ndarray]:
    """A claim summary: per-replica time average of `measure` over rounds [t0, T), t0 the checkpoint
    nearest start_fraction * T. Exact, from the recorded running averages: for noise floors, where
    the transient from x0 must not count."""
    if not 0 < start_fraction < 1:
        raise ValueError(f"start_fraction must be in (0, 1), got {start_fraction}")

    def summary(config: RunConfig, trace: Trace) -> np.ndarray:
        marks = trace.checkpoints
        total = float(marks[-1])
        c = int(np.argmin(np.abs(marks[1:-1] - start_fraction * total))) + 1 if marks.size > 2 else 0
        avg = trace.measures[f"avg:{measure}"]
        t0 = float(marks[c])
        head = avg[c] * t0 if t0 > 0 else 0.0
        return (avg[-1] * total - head) / (total - t0)

    return named(summary, f"time average of {measure} over rounds [{start_fraction:g} T, T]")


def final_value(measure: str) -> Callable[[RunConfig, Trace], np.ndarray]:
    """A claim summary: per-replica value of `measure` after the last round (a limit or a floor of a
    deterministic run, read where it has settled)."""

    def summary(config: RunConfig, trace: Trace) -> np.ndarray:
        return trace.at_end(measure)

    return named(summary, f"{measure} after the last round")


def hitting_rounds(checkpoints: np.ndarray, values: np.ndarray, level: float) -> np.ndarray:
    """Per replica, the first recorded checkpoint whose value is <= level (NaN if never).

    ``values`` is (C, R) as in ``Trace.measures``; resolution is that of the checkpoints, so runs
    that need hitting times should record many (RunConfig.checkpoints).
    """
    vals = np.asarray(values, dtype=float)
    hit = np.isfinite(vals) & (vals <= level)
    first = np.argmax(hit, axis=0)
    rounds = np.asarray(checkpoints, dtype=float)[first]
    return np.where(hit.any(axis=0), rounds, np.nan)


def first_crossing(trace: Trace, measure: str, level: float) -> np.ndarray:
    """Per replica, the first recorded checkpoint at which ``measure`` is <= level (NaN if never): the
    crossing rule of HittingTimeClaim (resolution: the run's checkpoints)."""
    return hitting_rounds(trace.checkpoints, trace.measures[measure], level)


def windowed(trace: Trace, measure: str) -> tuple[np.ndarray, np.ndarray]:
    """(t, w): w_i = mean of the measure over rounds (t_{i-1}, t_i] per replica (C-1, R), from the running
    averages; t the windows' geometric midpoints."""
    marks = np.asarray(trace.checkpoints, dtype=float)
    sums = np.nan_to_num(trace.measures[f"avg:{measure}"]) * marks[:, None]
    keep = np.flatnonzero(np.diff(marks) > 0) + 1
    keep = keep[marks[keep - 1] > 0]  # the first window (from round 0) has no geometric midpoint
    width = (marks[keep] - marks[keep - 1])[:, None]
    return np.sqrt(marks[keep] * marks[keep - 1]), (sums[keep] - sums[keep - 1]) / width


def last_crossing(t: np.ndarray, w: np.ndarray, level: float) -> np.ndarray:
    """Per replica, the time after which the smoothed measure stays <= level: the last window above it
    and the next one, log-log interpolated (NaN when the last window is still above the level)."""
    out = np.full(w.shape[1], np.nan)
    for r in range(w.shape[1]):  # replicas: a few numbers each, after the run
        above = np.flatnonzero(~(w[:, r] <= level))
        if above.size == 0:
            out[r] = t[0]
            continue
        j = above[-1]
        if j + 1 >= t.size:
            continue
        lw0, lw1 = math.log(w[j, r]), math.log(w[j + 1, r])
        frac = (lw0 - math.log(level)) / (lw0 - lw1)
        out[r] = math.exp(math.log(t[j]) + frac * (math.log(t[j + 1]) - math.log(t[j])))
    return out


def settled_crossing(trace: Trace, measure: str, level: float) -> np.ndarray:
    """Rounds until the smoothed measure (``windowed``) stays <= level, as claim samples (a crossing rule
    of HittingTime, e.g. FedBiO's iterations to eps).

    Exact run: the one hitting time of the exact curve. Monte-Carlo run: the hitting time of the replica-mean
    curve, as jackknife pseudo-values n theta - (n - 1) theta_(-i) (leave-one-out mean curves), so that their
    mean is the estimate and their spread its standard error. Per-replica hitting times would not do: a
    single replica's window is noisy, and its last crossing of a low level lands on the last noise spike."""
    t, w = windowed(trace, measure)
    R = w.shape[1]
    if R == 1:
        return last_crossing(t, w, level)
    mean = w.mean(axis=1, keepdims=True)
    theta = last_crossing(t, mean, level)[0]
    loo = (R * mean - w) / (R - 1)
    return R * theta - (R - 1) * last_crossing(t, loo, level)


Crossing = Callable[[Trace, str, float], np.ndarray]


def hitting_label(measure: str, crossing: Crossing) -> str:
    """What a hitting time is, by its crossing rule (the report's y axis)."""
    if crossing is first_crossing:
        return f"rounds until {measure} first reaches the threshold"
    return f"rounds until {measure} ({getattr(crossing, '__name__', 'crossing').replace('_', ' ')}) reaches the threshold"


@dataclass(frozen=True)
class HittingTime(Reading):
    """What to read from a run: the per-replica time at which ``measure`` reaches ``level(grid value)``,
    by a crossing rule: ``first_crossing`` (the first checkpoint at or below it) or ``settled_crossing``
    (when the smoothed measure stays below it, jackknifed over replicas). As a reading, each point's
    samples become the finite hitting times and its stats the level."""

    level: Callable[[float], float]
    crossing: Crossing = first_crossing
    view: ClassVar[Any] = HittingTimes()  # hitting times and their fitted power law

    def label(self, claim: Any) -> str:
        return hitting_label(claim.measure, self.crossing)

    def read(self, trace: Trace, measure: str, value: float) -> tuple[float, np.ndarray]:
        """(the level at this grid value, the per-replica hitting times; NaN where never reached)."""
        level = float(self.level(value))
        return level, self.crossing(trace, measure, level)

    def __call__(self, claim: Any, point: PointResult) -> None:
        assert point.trace is not None  # a reading reads a run
        level, times = self.read(point.trace, claim.measure, point.value)
        point.stats = {**point.stats, "level": level}
        point.samples = times[np.isfinite(times)]


@dataclass(frozen=True)
class RoundsToLevel(Reading):
    """HittingTimeClaim's reading: the hitting times of ``HittingTime(claim.threshold, claim.crossing)`` against
    ``claim.abscissa(grid value)`` (default the grid value), with the level, the replicas that missed it, the
    grid value and the rounds run; a miss makes the claim INCONCLUSIVE ("level not reached")."""

    reads: ClassVar[tuple[str, ...]] = ("abscissa", "crossing", "threshold")  # the claim fields it reads
    view: ClassVar[Any] = HittingTimes()  # hitting times and their fitted power law

    def label(self, claim: Any) -> str:
        return hitting_label(claim.measure, claim.crossing)

    def __call__(self, claim: Any, point: PointResult) -> None:
        trace = point.trace
        assert trace is not None  # a reading reads a run
        value = point.value
        level, rounds = HittingTime(claim.threshold, claim.crossing).read(trace, claim.measure, value)
        point.value = float(claim.abscissa(value)) if claim.abscissa is not None else float(value)
        point.samples = rounds[np.isfinite(rounds)]
        point.stats = {"level": level, "not_reached": int(np.sum(np.isnan(rounds) & trace.valid)),
                       "grid_value": float(value), "rounds_run": int(point.config.rounds)}

    def precheck(self, claim: Any, points: Sequence[PointResult]) -> str:
        missed = [p for p in points if p.stats.get("not_reached")]
        if not missed:
            return ""
        where = ", ".join(f"{claim.vary}={_fmt(p.value)} ({p.stats['not_reached']} replicas above {p.stats['level']:.3g} "
                          f"after {p.stats['rounds_run']} rounds)" for p in missed)
        return f"level not reached within the run: {where}"


@dataclass(frozen=True)
class Abscissa(Reading):
    """The ``inner`` reading, fitted against ``claim.abscissa(config)`` instead of the grid value (kept in the
    stats) and on the absolute per-replica values when ``claim.magnitude`` (signed measures of known sign)."""

    reads: ClassVar[tuple[str, ...]] = ("abscissa", "magnitude")  # the claim fields it reads

    inner: Reading

    def label(self, claim: Any) -> str:
        return ("|" + self.inner.label(claim) + "|") if claim.magnitude else self.inner.label(claim)

    def __call__(self, claim: Any, point: PointResult) -> None:
        self.inner(claim, point)
        if claim.abscissa is not None:
            point.stats = {**point.stats, "grid_value": float(point.value)}
            point.value = float(claim.abscissa(point.config))
        if claim.magnitude:
            point.samples = np.abs(point.samples)

    def precheck(self, claim: Any, points: Sequence[PointResult]) -> str:
        return self.inner.precheck(claim, points)


@dataclass(frozen=True)
class LogRates(Reading):
    """RateClaim's reading: per replica, the fitted log-contraction per round of ``claim.measure`` over the
    rounds [start_fraction T, T]; the stats hold the window, the exact value over it and, when the claim
    gives them, the theorem's guaranteed rate, the paper's asymptotic one and the eigenvalue's (issue #21)."""

    reads: ClassVar[tuple[str, ...]] = ("asymptotic", "exact", "guaranteed", "spectral", "start_fraction")  # the claim fields it reads
    view: ClassVar[Any] = LogRate()  # the measure against the round, the fitted and the exact rates

    def label(self, claim: Any) -> str:
        return f"{claim.measure} (replica mean)"

    def __call__(self, claim: Any, point: PointResult) -> None:
        trace = point.trace
        assert trace is not None  # a reading reads a run
        marks = np.asarray(trace.checkpoints, dtype=float)
        window = marks >= claim.start_fraction * marks[-1]
        rates = log_rate(marks[window], trace.measures[claim.measure][window])
        point.samples = rates[np.isfinite(rates)]
        point.stats = {"window": [float(marks[window][0]), float(marks[-1])],
                       "window_points": int(window.sum()),
                       "exact": float(claim.exact(point.config, marks[window]))}
        if claim.guaranteed is not None:
            point.stats["guaranteed"] = float(claim.guaranteed(point))
        if claim.asymptotic is not None:
            point.stats["asymptotic"] = float(claim.asymptotic(point.config))
        if claim.spectral is not None:
            try:
                point.stats["spectral"] = float(claim.spectral(point.config))
            except ValueError as exc:  # e.g. NotExact: a round not vouched time-invariant (a broken variant)
                point.stats["spectral_unavailable"] = str(exc)


@dataclass(frozen=True)
class FinalDistance(Reading):
    """LimitClaim's reading: per replica, the distance of the final ``claim.point`` to ``claim.target(config)``
    (or ``claim.target_of_run(config, trace)``, its offset from the nominal target in the stats), and the
    distance of the replica mean with its bootstrap CI (the mean itself on an exact run)."""

    reads: ClassVar[tuple[str, ...]] = ("point", "target", "target_name", "target_of_run")  # the claim fields it reads
    view: ClassVar[Any] = Distance()  # the distance of the mean with its bootstrap CI

    def label(self, claim: Any) -> str:
        return f"||mean final {claim.point} - {claim.target_name}||"

    def __call__(self, claim: Any, point: PointResult) -> None:
        trace, config = point.trace, point.config
        assert trace is not None  # a reading reads a run
        final = trace.final[claim.point]
        final = final[np.isfinite(final).all(axis=1)]
        nominal = claim.target(config)
        target = nominal if claim.target_of_run is None else claim.target_of_run(config, trace)
        est, low, high = _bootstrap_distance(final, target, claim.level)
        if trace.exact and final.shape[0] == 1:  # issue #8: the mean itself, no bootstrap
            est = low = high = float(np.linalg.norm(final[0] - target))
        point.samples = np.linalg.norm(final - target, axis=1)
        point.stats = {"distance": est, "low": low, "high": high}
        if claim.target_of_run is not None:
            point.stats["target_offset"] = float(np.linalg.norm(target - nominal))
