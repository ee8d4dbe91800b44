"""What a claim reads from each run: per-replica summaries of a trace."""

from __future__ import annotations

from typing import Callable

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
