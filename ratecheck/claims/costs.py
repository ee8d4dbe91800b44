"""Cost claims (issue #23, mutation score): a run's recorded cost counters (oracle calls, vectors sent up and
down, communication rounds), replica by replica and checkpoint by checkpoint, against the per-round cost a paper
states for its algorithm, written as a closed form from the paper (never read from the code under test).

Counts are integers and the engine sums them in float64 (exact below 2**53), so the claim asks for exact
equality: the summary is the largest absolute difference, over the replicas, the checkpoints and the counters,
between a replica's recorded cumulative counter and the sum of the paper's per-round costs over the rounds it ran;
the threshold is ``COST_TOLERANCE``. Comparing each replica (not the replica mean) sees a count off in one replica
that another's error cancels, and costs that follow random draws assigned to the wrong replica. A counter the paper
names but the run does not record is a NaN sample, so the claim cannot PASS by omission; a recorded count that is
not finite is an UNBOUNDED deviation, a FAIL. On an exact-mode run the recorded counters are expectations (one
row), compared with the paper's expected costs (``per_round`` then gives expectations, e.g. the mean number of
distinct clients of n draws with replacement): a float sum, equal to round-off.

Where a round's cost follows the clients drawn (distinct clients of a draw with replacement, the sum of the drawn
clients' local steps), the claim replays the draws here, from the papers' sampling rules and the seeding contract
(ratecheck.seeding: replica r's generator of a purpose, its uniforms consumed in order), never through
ratecheck.model.participation, which is code under test: a sampler drawing with the wrong replacement mode, the
wrong probabilities or the wrong number of clients moves a count.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..model.participation import Participation
from ..seeding import replica_generator
from ..theory import Source
from ..trace import RunConfig, Trace
from .compose import named
from .model import Profile, Verdict
from .trajectory import UNBOUNDED
from .values import ThresholdClaim

# per_round(config, t) -> {counter name: what round t costs, from the paper}: a number, or one per replica (R,)
PerRound = Callable[[RunConfig, int], Mapping[str, float | np.ndarray]]
COST_TOLERANCE = 1e-9  # integer counts summed exactly in float64: any count off in any replica is >= 1


def expected_counters(per_round: PerRound, config: RunConfig, checkpoints: Sequence[int] | np.ndarray,
                      counters: Sequence[str]) -> dict[str, np.ndarray]:
    """Each replica's cumulative costs after ``checkpoints[c]`` rounds, (C, R): sums of the paper's per-round
    costs."""
    marks, R = [int(t) for t in np.asarray(checkpoints)], int(config.replicas)
    out = {name: np.zeros((len(marks), R)) for name in counters}
    total = {name: np.zeros(R) for name in counters}
    want = {t: j for j, t in enumerate(marks)}
    for t in range(max(marks, default=0) + 1):
        if t in want:
            for name in counters:
                out[name][want[t]] = total[name]
        if t < max(marks, default=0):
            cost = per_round(config, t)
            for name in counters:
                total[name] = total[name] + np.broadcast_to(np.asarray(cost[name], float), (R,))
    return out


def cost_deviation(per_round: PerRound, counters: Sequence[str]) -> Callable[[RunConfig, Trace], np.ndarray]:
    """A claim summary: the largest |recorded - paper| over the replicas, the checkpoints and ``counters``, the
    same for every replica (deterministic given the draws: the worst replica decides, no mean over them). On an
    exact run the recorded counters are expectations (one row) and ``per_round`` gives the paper's expected
    costs."""

    def summary(config: RunConfig, trace: Trace) -> np.ndarray:
        if not np.array_equal(trace.replica_ids, np.arange(int(config.replicas))):
            return np.full(trace.replicas, np.nan)  # the replays draw for replicas 0..R-1
        expected = expected_counters(per_round, config, trace.checkpoints, counters)
        worst = 0.0
        for name in counters:
            got = trace.replica_counters.get(name)
            if trace.exact and name in trace.counters:  # the expected counts, one row
                got = np.asarray(trace.counters[name], float)[:, None]
            if got is None:
                return np.full(trace.replicas, np.nan)
            gap = float(np.max(np.abs(np.asarray(got, float) - expected[name])))
            worst = max(worst, gap if math.isfinite(gap) else UNBOUNDED)  # max(0.0, nan) would be 0.0: a PASS
        return np.full(trace.replicas, worst)

    return named(summary, f"largest |recorded - paper| of {', '.join(counters)} over the replicas and checkpoints")


@dataclass(frozen=True, kw_only=True)
class CostClaim(ThresholdClaim):
    """A threshold on the deviation of ``counters`` from the sums of ``per_round`` (see cost_claim)."""

    counters: tuple[str, ...]
    per_round: PerRound


def cost_claim(*, id: str, paper: str, title: str, statement: str, source: Source,
               configure: Callable[[float, Profile], RunConfig], per_round: PerRound, counters: Sequence[str],
               measure: str, grid: Mapping[str, Sequence[float]], vary: str = "T",
               expect: Verdict = Verdict.PASS, expect_reason: str = "",
               tolerance_reason: str = "integer counts sum exactly in float64") -> CostClaim:
    """A ThresholdClaim: every replica's cumulative ``counters`` equal the sums of ``per_round`` at every
    checkpoint.

    ``measure`` is a measure the run records, shown in plots (the decision reads only the counters); the
    statement says what the per-round costs are, written from the paper."""
    return CostClaim(
        id=id, paper=paper, title=title,
        statement=f"{statement} Counters compared for every replica at every checkpoint: {', '.join(counters)}; "
                  f"exact equality (tolerance {COST_TOLERANCE:g}: {tolerance_reason}).",
        source=source, vary=vary, grid=grid, configure=configure, measure=measure,
        summary=cost_deviation(per_round, counters), threshold=COST_TOLERANCE, min_replicas=1,
        require_conditions=False, expect=expect, expect_reason=expect_reason, counters=tuple(counters),
        per_round=per_round)


# -- the papers' sampling rules, replayed from the primitive draws (not through Participation) ----------------
def sampling_rule(spec: str) -> tuple[str, int | None]:
    """(mode, m) of a participation spec ('full', 'without_replacement:m', 'with_replacement:m'), read through
    its one parser (the declared option); the counts and draws below are computed here from these two fields."""
    participation = Participation.parse(spec)
    return participation.mode, participation.clients


def participants(spec: str, clients: int) -> int:
    """P, the clients one round samples: all N ('full'), or m distinct ones ('without_replacement:m'); the counts
    a cost claim can predict without the draws (with replacement, the distinct clients are random: see
    ``sampled_clients``)."""
    mode, m = sampling_rule(spec)
    if mode == "with_replacement":
        raise ValueError(f"participation {spec!r}: the distinct clients of draws with replacement are random; "
                         "replay them with sampled_clients")
    if mode == "full":
        return int(clients)
    assert m is not None
    if m > clients:
        raise ValueError(f"participation {spec!r}: m = {m} distinct clients of N = {clients}")
    return m


def sampled_clients(config: RunConfig) -> np.ndarray:
    """The client ids every replica drew in every round, (T, R, m), replayed from the run's 'sampling' stream
    (ratecheck.seeding: replica r's generator for (seed, run key, r, 'sampling'), its uniforms used in order, one
    round's draw after the other) by the papers' rules:

    * full: the N clients, every round;
    * without replacement (SimFBO §2.5, FESS-GDA Algorithm 1 line 2): a uniform m-subset, the clients holding the
      m smallest of N i.i.d. uniform keys (rank order of i.i.d. keys is a uniform permutation);
    * with replacement (DeFedAvg Algorithm 1 S3, eqs. (2)-(3)): m i.i.d. uniform clients floor(N u), one uniform
      each."""
    mode, m = sampling_rule(str(config.params.get("participation", "full")))
    return _draws(int(config.seed), config.run_key(), int(config.rounds), int(config.replicas),
                  int(config.problem_params["clients"]), mode, m)


@lru_cache(maxsize=32)  # a cost claim asks for round t's draws T times
def _draws(seed: int, run_key: str, T: int, R: int, N: int, mode: str, m: int | None) -> np.ndarray:
    if mode == "full":
        return np.broadcast_to(np.arange(N), (T, R, N))
    assert m is not None
    if mode == "without_replacement" and m > N:
        raise ValueError(f"participation without_replacement:{m}: m distinct clients of N = {N}")
    width = N if mode == "without_replacement" else m  # uniforms a round
    u = np.stack([replica_generator(seed, run_key, r, "sampling").random(T * width).reshape(T, width)
                  for r in range(R)], axis=1)  # (T, R, width)
    out = np.argsort(u, axis=-1, kind="stable")[..., :m] if mode == "without_replacement" else \
        np.floor(u * N).astype(np.int64)
    out.flags.writeable = False  # shared by the callers of the cache
    return out


@lru_cache(maxsize=32)
def timeline_selections(seed: int, key: str, replicas: int, rounds: int, clients: int, n: int) -> np.ndarray:
    """The event timeline's server draws (T, R, n) of DeFedAvg's Algorithm 1 S3 and eqs. (2)-(3): n i.i.d. uniform
    clients with replacement a round, numpy's bounded integers on replica r's 'server' generator of the timeline
    key (ratecheck.model.asynchrony.timeline_key), one draw of n a round in round order."""
    out = np.stack([np.stack([gen.integers(0, clients, n) for _ in range(rounds)])
                    for gen in (replica_generator(seed, key, r, "server") for r in range(replicas))], axis=1)
    out.flags.writeable = False  # shared by the callers of the cache
    return out


def distinct_clients(draws: np.ndarray) -> np.ndarray:
    """How many distinct clients each draw holds: (..., m) -> (...)."""
    ordered = np.sort(draws, axis=-1)
    return 1 + (np.diff(ordered, axis=-1) != 0).sum(axis=-1)
