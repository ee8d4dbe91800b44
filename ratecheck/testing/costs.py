"""Test helpers for cost claims (ratecheck.claims.costs): decide one, and cost mutants to show that it FAILs: one
count off in the first round of one counter; one replica's count up and another's down (the replica mean kept);
the replicas' costs of every round rotated by one (a permutation: the mean and the multiset of counts kept)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..algorithms.base import lookup
from ..claims import PROFILES, Verdict
from ..claims.base import Outcome
from ..claims.costs import CostClaim, expected_counters
from ..runner.sweep import check_claims

PROFILE = PROFILES["quick"]


def decide(claim: CostClaim) -> Outcome:
    return check_claims([claim], PROFILE, progress=False)[0]


def mutants(claims: Iterable[Any]) -> Iterator[tuple[CostClaim, str]]:
    """(claim, counter) for every counter every cost claim checks."""
    for claim in claims:
        for counter in claim.counters:
            yield claim, counter


def patch_costs(monkeypatch: Any, claim: CostClaim, change: Any) -> None:
    """Patch the claim's algorithm so that round t's costs (R replicas) become ``change(costs, t, R)``."""
    cls = lookup(claim.configure(claim.grid["quick"][0], PROFILE).algorithm)
    assert cls is not None
    original = cls.round

    def round(self: Any, state: Any, problem: Any, t: int, streams: Any) -> Any:
        new, costs = original(self, state, problem, t, streams)
        return new, change(dict(costs), t, len(streams.replicas))

    monkeypatch.setattr(cls, "round", round)


def per_replica(cost: Any, R: int) -> np.ndarray:
    return np.array(np.broadcast_to(np.asarray(cost, float), (R,)))


def count_off(monkeypatch: Any, claim: CostClaim, counter: str, by: float = 1.0) -> None:
    """Patch the claim's algorithm so that its first round reports ``counter`` off by ``by``."""
    patch_costs(monkeypatch, claim, lambda costs, t, R: {**costs, counter: costs[counter] + by} if t == 0 else costs)


def mean_kept(monkeypatch: Any, claim: CostClaim, counter: str) -> None:
    """The first round's ``counter`` one up in replica 0 and one down in the last replica: the mean is unchanged."""
    def change(costs: dict, t: int, R: int) -> dict:
        if t == 0:
            cost = per_replica(costs[counter], R)
            cost[0] += 1.0
            cost[-1] -= 1.0
            costs[counter] = cost
        return costs
    patch_costs(monkeypatch, claim, change)


def replicas_rotated(monkeypatch: Any, claim: CostClaim, counter: str) -> None:
    """Every round's ``counter`` of replica r reported as replica r + 1's (mod R): a permutation of the replicas."""
    patch_costs(monkeypatch, claim, lambda costs, t, R: {**costs, counter: np.roll(per_replica(costs[counter], R), 1)})


def replicas_differ(claim: CostClaim, counter: str) -> bool:
    """Whether the paper's costs of ``counter`` differ between replicas (a rotation of them is then a change)."""
    config = claim.configure(claim.grid["quick"][0], PROFILE)
    expected = expected_counters(claim.per_round, config, range(int(config.rounds) + 1), [counter])[counter]
    return bool((expected != expected[:, :1]).any())


def cost_tests(claims: tuple[CostClaim, ...]) -> tuple[Any, Any, Any]:
    """The three tests of a paper's cost claims, parametrized (assign them to test_* names in a test module): each
    claim PASSes on the code; one count off in any counter it checks makes it FAIL; and so does, in its first
    counter, a change that keeps the replica mean (one replica up, another down), and a rotation of the replicas'
    costs where the paper's costs differ between replicas (else the rotation changes nothing and it PASSes)."""
    import pytest  # a test helper: pytest loads only in the tests that use it

    if not claims or not list(mutants(claims)):
        raise ValueError("cost_tests needs cost claims that check at least one counter (else they test nothing)")

    @pytest.mark.parametrize("claim", claims, ids=lambda c: c.id)
    def passes_on_the_code(claim: CostClaim) -> None:
        outcome = decide(claim)
        assert outcome.verdict == Verdict.PASS, outcome.reason

    @pytest.mark.parametrize("claim, counter", list(mutants(claims)), ids=lambda x: getattr(x, "id", x))
    def one_count_off_fails(monkeypatch: Any, claim: CostClaim, counter: str) -> None:
        count_off(monkeypatch, claim, counter)
        outcome = decide(claim)
        assert outcome.verdict == Verdict.FAIL, outcome.reason

    @pytest.mark.parametrize("claim", claims, ids=lambda c: c.id)
    def replica_changes_fail(monkeypatch: Any, claim: CostClaim) -> None:
        counter = claim.counters[0]
        with monkeypatch.context() as patch:
            mean_kept(patch, claim, counter)
            outcome = decide(claim)
            assert outcome.verdict == Verdict.FAIL, f"one replica up, one down: {outcome.reason}"
        rotated = Verdict.FAIL if replicas_differ(claim, counter) else Verdict.PASS
        replicas_rotated(monkeypatch, claim, counter)
        outcome = decide(claim)
        assert outcome.verdict == rotated, f"replicas rotated: {outcome.reason}"

    return passes_on_the_code, one_count_off_fails, replica_changes_fail
