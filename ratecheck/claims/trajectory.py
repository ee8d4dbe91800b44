"""Trajectory oracles (issue #23 item 2): a run's exact expectations, checkpoint by checkpoint, against an
independent recursion written from the paper's algorithm box (never by calling the code under test).

The claim is a ThresholdClaim on one number per run: the largest relative deviation over the recorded
checkpoints and measures, ``max_c,k |E_run[m_k](t_c) - oracle_k(t_c)| / (|oracle_k(t_c)| + floor_k)``, where
``floor_k = atol_fraction * max_c |oracle_k(t_c)|`` keeps a measure that falls to round-off from dividing by
zero. An exact run is one row of expectations, so the verdict is deterministic; a noise-free run has identical
replicas (its CI has zero width). The tolerance is the caller's, stated with its reason (round-off of the
recursion over the run's rounds, not noise).

The recursion is a stored computation (a ``Task`` of kind "oracle", one per run, issue #19; the claim's plan
``StoredRecursion``): the sweep computes it on the executor once the run is there and stores it under a key
that covers the oracle's own module and its imports, so a cached check decides without recomputing it; the
reading ``OracleDeviation`` turns it and the run into the per-replica deviation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from ..model.tasks import Task
from ..theory import Source
from ..trace import RunConfig, Trace
from .compose import Plan, Reading, Summary, ran
from .model import PointResult, Profile, Verdict
from .plans import StoredRecursion
from .rules import Decision, ThresholdCeiling
from .values import ThresholdClaim

# oracle(config, checkpoints) -> {measure: expected values at the checkpoints (C,), or per replica (C, R) for
# a noise-free run replayed with the run's own random draws}
Oracle = Callable[[RunConfig, np.ndarray], Mapping[str, np.ndarray]]


def trajectory_deviation(oracle: Oracle, atol_fraction: float = 1e-12) -> Callable[[RunConfig, Trace], np.ndarray]:
    """A claim summary: per replica, the largest relative deviation of the run's measures from the oracle's
    over every recorded checkpoint (NaN when a measure the oracle names is missing or diverged). An oracle
    that predicts every replica (a replay with the run's own draws) is deterministic: each replica then carries
    the worst replica's deviation, so one replica off is a FAIL (a mean over replicas would dilute it)."""

    def summary(config: RunConfig, trace: Trace) -> np.ndarray:
        return deviation(oracle_values(oracle, config, trace.checkpoints), trace, atol_fraction)

    return summary


def oracle_values(oracle: Oracle, config: RunConfig, checkpoints: Sequence[int] | np.ndarray) -> dict[str, list]:
    """The oracle's expectations as they are stored (float lists by measure name, in name order), so a
    fresh and a stored decision read the same numbers (JSON keeps a float64 exactly)."""
    expected = oracle(config, np.asarray(checkpoints))
    return {name: np.asarray(expected[name], dtype=float).tolist() for name in sorted(expected)}


# the oracle's value is finite where it is compared: a run that left the finite numbers there deviates without
# bound. A finite stand-in, since a claim drops non-finite samples as diverged replicas (an INCONCLUSIVE, where a
# wrong number that overflows must FAIL)
UNBOUNDED = 1e100


def deviation(expected: Mapping[str, Any], trace: Trace, atol_fraction: float) -> np.ndarray:
    """Per replica, the largest relative deviation of ``trace`` from ``expected`` (see trajectory_deviation);
    UNBOUNDED where the run is not finite and the oracle is."""
    expected_per_replica = any(np.ndim(v) == 2 for v in expected.values())
    worst = np.zeros(trace.measures[next(iter(expected))].shape[1])
    for name, want in expected.items():
        want = np.asarray(want, dtype=float)
        want = want[:, None] if want.ndim == 1 else want  # (C,) expectations or (C, R) per replica
        got = trace.measures[name]
        known = np.isfinite(want[:, 0])  # e.g. a running average has no value at round 0
        want, got = want[known], got[known]
        scale = np.abs(want) + atol_fraction * float(np.max(np.abs(want)))
        dev = np.max(np.abs(got - want) / scale, axis=0)
        worst = np.maximum(worst, np.where(np.isfinite(dev), dev, UNBOUNDED))
    if expected_per_replica:  # deterministic given the draws: the worst replica decides, no mean over them
        return np.full_like(worst, np.max(worst))
    return worst


@dataclass(frozen=True)
class OracleDeviation(Reading):
    """Per replica, the largest relative deviation of the run's measures from the oracle's recursion (the
    stored one the plan put beside the run, ``point.inputs["recursion"]``, else computed here), or the claim's
    own deviation when it gives one (``summary``, e.g. measures and event timeline)."""

    reads: ClassVar[tuple[str, ...]] = ("atol_fraction", "oracle", "summary")  # the claim fields it reads

    def label(self, claim: Any) -> str:
        if claim.summary is not None:
            return Summary().label(claim)
        return "largest relative deviation from the oracle's recursion (checkpoints, measures)"

    def __call__(self, claim: Any, point: PointResult) -> None:
        if claim.summary is not None:
            return Summary()(claim, point)
        trace = point.trace
        assert trace is not None  # a reading reads a run
        stored = point.inputs.get("recursion")  # absent outside a sweep: computed here
        expected = stored["expected"] if stored is not None else oracle_values(claim.oracle, ran(point.config, trace),
                                                                               trace.checkpoints)
        samples = deviation(expected, trace, claim.atol_fraction)
        point.samples = samples[np.isfinite(samples)]
        return None


def median_lower_bound(samples: np.ndarray, level: float) -> float:
    """A one-sided lower confidence bound of the median at ``level`` from the order statistics: x_(k) with
    the largest k such that P(Bin(n, 1/2) >= k) >= level (-inf when n is too small: 5 samples at 95%)."""
    x = np.sort(np.asarray(samples, dtype=float))
    k = np.flatnonzero(stats.binom.sf(np.arange(x.size), x.size, 0.5) >= level)
    return float(x[k[-1]]) if k.size else -np.inf


@dataclass(frozen=True)
class DeviationCeiling(ThresholdCeiling):
    """The threshold rule on per-replica deviations, which are >= 0: also FAIL when half the median's lower
    confidence bound exceeds the threshold (E X >= m P(X >= m) >= m/2 for X >= 0 and m <= the median). The
    mean's t interval cannot FAIL a heavy-tailed sample (an oracle of exact expectations whose run fell back
    to Monte Carlo, one replica far out): its lower end drops below 0. On correct code an oracle's
    deviations are the same round-off in every replica, and both routes read the same number."""

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> Decision:
        verdict, reason, evidence = super().__call__(claim, points, estimate)
        if verdict is Verdict.FAIL:
            return verdict, reason, evidence
        for p in points:
            half = median_lower_bound(p.samples, claim.level) / 2
            if half > claim.threshold:
                return (Verdict.FAIL, f"half the median's {claim.level:.0%} lower confidence bound, {half:.3g}, "
                        f"exceeds the threshold {claim.threshold:g} at {claim.vary}={p.value:g} (the mean's "
                        f"interval, heavy-tailed, could not decide: {reason})", evidence)
        return verdict, reason, evidence


@dataclass(frozen=True, kw_only=True)
class TrajectoryClaim(ThresholdClaim):
    """A threshold on the deviation from ``oracle``, whose recursion is a stored task per run beside it (the
    plan ``StoredRecursion``); a claim with its own deviation (``summary``) requests none."""

    oracle: Oracle
    atol_fraction: float = 1e-12
    plan: Plan = StoredRecursion()
    reading: Reading = OracleDeviation()
    rule: ThresholdCeiling = DeviationCeiling()

    def oracle_task(self, config: RunConfig, trace: Trace) -> Task:
        """The recursion for one run: its configuration (as run: with a check's seed offset, ratecheck.runner.sweep)
        and the checkpoints it recorded."""
        return Task("oracle", self.id, {"config": ran(config, trace).to_dict(),
                                        "checkpoints": [int(t) for t in np.asarray(trace.checkpoints)]})

    def compute_recursion(self, task: Task) -> dict[str, Any]:
        config = RunConfig.from_dict(task.spec["config"])
        return {"expected": oracle_values(self.oracle, config, task.spec["checkpoints"])}


def trajectory_oracle(*, id: str, paper: str, title: str, statement: str, source: Source,
                      configure: Callable[[float, Profile], RunConfig], oracle: Oracle, measures: Sequence[str],
                      rtol: float, tolerance_reason: str, vary: str = "T",
                      grid: Mapping[str, Sequence[float]], atol_fraction: float = 1e-12,
                      expect: Verdict = Verdict.PASS, expect_reason: str = "",
                      negative_control: bool = False) -> TrajectoryClaim:
    """A ThresholdClaim: the run's largest relative deviation from ``oracle`` stays below ``rtol``.

    ``measures`` names what the oracle predicts (the first is the claim's measure, for plots); the statement
    says what the oracle is written from, the tolerance reason why ``rtol`` is round-off and not slack."""
    return TrajectoryClaim(
        id=id, paper=paper, title=title,
        statement=f"{statement} Measures compared at every checkpoint: {', '.join(measures)}. Tolerance "
                  f"{rtol:g} (relative): {tolerance_reason}",
        source=source, vary=vary, grid=grid, configure=configure, measure=measures[0],
        threshold=rtol, min_replicas=1,
        require_conditions=False, expect=expect, expect_reason=expect_reason, negative_control=negative_control,
        oracle=oracle, atol_fraction=atol_fraction)


def moment_trajectory(v0: np.ndarray, round_maps: Callable[[int], tuple[np.ndarray, np.ndarray, np.ndarray]],
                      forms: Mapping[str, np.ndarray], marks: np.ndarray) -> dict[str, np.ndarray]:
    """E[q(v_t)] at the checkpoints for an augmented state v = (state, 1) whose round t maps v to F_s v + noise
    with probability p_s: ``round_maps(t) = (F (S, n, n), p (S,), Q (n, n))`` with Q = E[noise noise^T]; the
    second moment follows S' = sum_s p_s F_s S F_s^T + Q exactly. ``forms[name]`` is the affine map L (k, n) of
    the measure ||L v||^2 (its last column the constant part). One BLAS thread, as exact mode: the matrices are
    small and a thread pool on busy cores is many times slower."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _moment_trajectory(v0, round_maps, forms, marks)


def _moment_trajectory(v0: np.ndarray, round_maps: Callable[[int], tuple[np.ndarray, np.ndarray, np.ndarray]],
                       forms: Mapping[str, np.ndarray], marks: np.ndarray) -> dict[str, np.ndarray]:
    S = np.outer(v0, v0)
    want = {int(t): j for j, t in enumerate(marks)}
    out = {name: np.full(len(marks), np.nan) for name in forms}
    for t in range(int(max(marks)) + 1):
        if t in want:
            for name, L in forms.items():
                out[name][want[t]] = float(np.sum((L @ S) * L))
        Fs, ps, Q = round_maps(t)
        FS = np.matmul(Fs, S) * ps[:, None, None]
        S = np.tensordot(FS, Fs, axes=([0, 2], [0, 2])) + Q  # sum_s p_s F_s S F_s^T + E[noise noise^T]
    return out
