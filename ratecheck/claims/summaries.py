"""What a claim reads from each run: per-replica summaries of a trace."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..trace import RunConfig, Trace


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

    return summary


def final_value(measure: str) -> Callable[[RunConfig, Trace], np.ndarray]:
    """A claim summary: per-replica value of `measure` after the last round (a limit or a floor of a
    deterministic run, read where it has settled)."""

    def summary(config: RunConfig, trace: Trace) -> np.ndarray:
        return trace.at_end(measure)

    return summary


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


@dataclass(frozen=True)
class HittingTime:
    """What to read from a run: the per-replica time at which ``measure`` reaches ``level(grid value)``,
    by a crossing rule: ``first_crossing`` (the first checkpoint at or below it) or ``settled_crossing``
    (when the smoothed measure stays below it, jackknifed over replicas)."""

    level: Callable[[float], float]
    crossing: Crossing = first_crossing

    def read(self, trace: Trace, measure: str, value: float) -> tuple[float, np.ndarray]:
        """(the level at this grid value, the per-replica hitting times; NaN where never reached)."""
        level = float(self.level(value))
        return level, self.crossing(trace, measure, level)
