"""Run modes of DeFedAvg's claims (issue #8): exact expectations where the runs allow them.

Runs on the quadratics P1/P2 with Gaussian noise under delay schedules are linear-Gaussian: every
round is an affine map of the state and the noise given the clients drawn and their delays, so
``mode="exact"`` computes E[measure] exactly (one row, no Monte-Carlo error; ratecheck/exact.py).
Claims on those runs are decided on exact numbers, with tolerances that come from the theory's
finite-grid asymptotics rather than from noise. The question "does Monte Carlo agree?" stays: each
such claim has a Monte-Carlo twin (``<id>.monte_carlo``) that draws replicas in the full profile,
with the tolerance its noise needs, so both verdicts sit in one full report. In the quick profile
the twin reads the exact runs (the same run keys: no extra cost), except for claims whose question
is the randomness of client sampling or delays (``monte_carlo_twin(..., quick=True)``): exact mode
computes those expectations from its own skeleton, not from the algorithm's ``schedule()``, so the
draws must be checked too.

Not exact, on purpose: the nonconvex P3 (cosine terms), the event-timeline and wall-clock claims
(their question is the random timeline itself), and the stability claim (already deterministic).
"""

from __future__ import annotations

from ratecheck.claims import Profile

EXACT = "exact"
MONTE_CARLO = "monte_carlo"


def exact_when_quick(profile: Profile) -> str:
    """Bound and limit claims: exact in the quick profile, Monte Carlo in the full one (their
    decision rule is the same either way; the full report then shows the Monte-Carlo check)."""
    return EXACT if profile.name == "quick" else MONTE_CARLO


# The exact claims with a Monte-Carlo band are ratecheck.claims.ExactSlopeClaim / ExactValueClaim; their
# twins come from ratecheck.claims.monte_carlo_twin, whose quick=True draws in the quick profile too, for
# claims about the sampling or delay randomness (a wrong sampling inside schedule() is refused by exact
# mode, so only the draws decide it).
