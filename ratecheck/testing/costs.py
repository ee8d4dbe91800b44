"""Test helpers for cost claims (ratecheck.claims.costs): decide one, and a cost mutant (one count off in
the first round of one counter) to show that it FAILs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..algorithms.base import lookup
from ..claims import PROFILES
from ..claims.base import Outcome
from ..claims.costs import CostClaim
from ..runner.sweep import check_claims

PROFILE = PROFILES["quick"]


def decide(claim: CostClaim) -> Outcome:
    return check_claims([claim], PROFILE, progress=False)[0]


def mutants(claims: Iterable[Any]) -> Iterator[tuple[CostClaim, str]]:
    """(claim, counter) for every counter every cost claim checks."""
    for claim in claims:
        for counter in claim.counters:
            yield claim, counter


def count_off(monkeypatch: Any, claim: CostClaim, counter: str, by: float = 1.0) -> None:
    """Patch the claim's algorithm so that its first round reports ``counter`` off by ``by``."""
    cls = lookup(claim.configure(claim.grid["quick"][0], PROFILE).algorithm)
    assert cls is not None
    original = cls.round

    def round(self: Any, state: Any, problem: Any, t: int, streams: Any) -> Any:
        new, costs = original(self, state, problem, t, streams)
        return new, ({**costs, counter: costs[counter] + by} if t == 0 else costs)

    monkeypatch.setattr(cls, "round", round)


def cost_tests(claims: tuple[CostClaim, ...]) -> tuple[Any, Any]:
    """The two tests of a paper's cost claims, parametrized (assign them to test_* names in a test module):
    each claim PASSes on the code, and one count off in any counter it checks makes it FAIL."""
    import pytest

    from ..claims import Verdict

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

    return passes_on_the_code, one_count_off_fails
