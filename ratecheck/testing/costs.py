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
