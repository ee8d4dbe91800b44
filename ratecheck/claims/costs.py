"""Cost claims (issue #23, mutation score): a run's recorded cost counters (oracle calls, vectors sent up and
down, communication rounds), checkpoint by checkpoint, against the per-round cost a paper states for its
algorithm, written as a closed form from the paper (never read from the code under test).

Counts are integers and the engine sums them in float64 (exact below 2**53), so the claim asks for exact
equality: the summary is the largest absolute difference between a recorded cumulative counter and the sum
of the paper's per-round costs over the rounds run, and the threshold is ``COST_TOLERANCE`` (far below the
1/R a single count off in one of R replicas moves the replica mean by). A counter the paper names but the run
does not record is a NaN sample, so the claim cannot PASS by omission.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..model.participation import Participation
from ..theory import Source
from ..trace import RunConfig, Trace
from .compose import named
from .model import Profile, Verdict
from .values import ThresholdClaim

# per_round(config, t) -> {counter name: what round t costs, from the paper}
PerRound = Callable[[RunConfig, int], Mapping[str, float]]
COST_TOLERANCE = 1e-9  # integer counts summed exactly in float64: any count off moves a mean by >= 1/R


def expected_counters(per_round: PerRound, config: RunConfig, checkpoints: Sequence[int] | np.ndarray,
                      counters: Sequence[str]) -> dict[str, np.ndarray]:
    """The cumulative costs after ``checkpoints[c]`` rounds: sums of the paper's per-round costs."""
    marks = [int(t) for t in np.asarray(checkpoints)]
    out = {name: np.zeros(len(marks)) for name in counters}
    total = dict.fromkeys(counters, 0.0)
    want = {t: j for j, t in enumerate(marks)}
    for t in range(max(marks, default=0) + 1):
        if t in want:
            for name in counters:
                out[name][want[t]] = total[name]
        if t < max(marks, default=0):
            cost = per_round(config, t)
            for name in counters:
                total[name] += float(cost[name])
    return out


def cost_deviation(per_round: PerRound, counters: Sequence[str]) -> Callable[[RunConfig, Trace], np.ndarray]:
    """A claim summary: the largest |recorded - paper| over the checkpoints and ``counters``, the same for
    every replica (the counters are replica means: a count off in one replica shows in the mean)."""

    def summary(config: RunConfig, trace: Trace) -> np.ndarray:
        expected = expected_counters(per_round, config, trace.checkpoints, counters)
        worst = 0.0
        for name in counters:
            got = trace.counters.get(name)
            if got is None:
                return np.full(trace.replicas, np.nan)
            worst = max(worst, float(np.max(np.abs(np.asarray(got, float) - expected[name]))))
        return np.full(trace.replicas, worst)

    return named(summary, f"largest |recorded - paper| of {', '.join(counters)} over the checkpoints")


@dataclass(frozen=True, kw_only=True)
class CostClaim(ThresholdClaim):
    """A threshold on the deviation of ``counters`` from the sums of ``per_round`` (see cost_claim)."""

    counters: tuple[str, ...]
    per_round: PerRound


def cost_claim(*, id: str, paper: str, title: str, statement: str, source: Source,
               configure: Callable[[float, Profile], RunConfig], per_round: PerRound, counters: Sequence[str],
               measure: str, grid: Mapping[str, Sequence[float]], vary: str = "T",
               expect: Verdict = Verdict.PASS, expect_reason: str = "") -> CostClaim:
    """A ThresholdClaim: the run's cumulative ``counters`` equal the sums of ``per_round`` at every checkpoint.

    ``measure`` is a measure the run records, shown in plots (the decision reads only the counters); the
    statement says what the per-round costs are, written from the paper."""
    return CostClaim(
        id=id, paper=paper, title=title,
        statement=f"{statement} Counters compared at every checkpoint: {', '.join(counters)}; exact equality "
                  f"(tolerance {COST_TOLERANCE:g}: integer counts sum exactly in float64).",
        source=source, vary=vary, grid=grid, configure=configure, measure=measure,
        summary=cost_deviation(per_round, counters), threshold=COST_TOLERANCE, min_replicas=1,
        require_conditions=False, expect=expect, expect_reason=expect_reason, counters=tuple(counters),
        per_round=per_round)


def participants(spec: str, clients: int) -> int:
    """P, the clients one round samples, from a participation spec ("full", "without_replacement:P"): the
    counts a cost claim can predict exactly (with replacement, the distinct clients are random)."""
    participation = Participation.parse(spec)
    if participation.mode == "with_replacement":
        raise ValueError(f"participation {spec!r}: a cost claim needs 'full' or 'without_replacement:P' (with "
                         "replacement, the distinct clients a round touches are random)")
    return participation.per_round(clients)
