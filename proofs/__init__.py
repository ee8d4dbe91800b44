"""The package's own papers: one module (or package) per paper, each building a
``ratecheck.paper.Paper`` named PAPER (key, title, seed file, theorems, claims, report hooks).

They are registered exactly as a researcher's paper is, by an entry point in pyproject.toml, one line
per paper (this package imports none of them):

    [project.entry-points."ratecheck.papers"]
    defedavg = "ratecheck.proofs.defedavg:PAPER"

The helpers below read the one registry (ratecheck.registry: every installed paper and every
``--paper`` source); they are kept for callers that predate it.
"""

from __future__ import annotations

from ratecheck import registry
from ratecheck.claims import Claim
from ratecheck.paper import Paper
from ratecheck.theory import Theorem


def papers() -> dict[str, Paper]:
    return registry.papers()


def all_claims() -> list[Claim]:
    return registry.default().claims()


def all_theorems() -> list[Theorem]:
    return registry.default().theorems()


def select_claims(pattern: str | None = None) -> list[Claim]:
    """Claims whose id or paper matches a glob pattern (a bare word matches as a substring)."""
    return registry.select_claims(pattern)
