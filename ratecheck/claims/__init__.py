"""Claims and verdicts: what a paper says, what to run, and how the data decide.

The package, by responsibility: ``model`` (verdicts, profiles, outcomes, grid points), ``base`` (the
Claim base and ExpectedOrder), ``compose`` (a decision from pieces: plan, reading, statistic, rule; the
``Grid`` plan), ``plans`` (what to run beyond one run per grid value: two series, a stored recursion beside
each run, several runs per grid value), ``summaries`` (what to read from a run: the reading pieces),
``statistics`` (confidence intervals, fits and their text: the statistic pieces), ``rules`` and
``rules_fit`` (ceilings, bands, intervals, exponent bands, rates: the rule pieces), ``views*`` (how each
piece is shown), and the claim kinds, each a named composition of pieces: ``slopes``, ``values``,
``observation``, ``trajectory``, ``constants`` (declared problem constants against independent computations,
no run). Every public name is importable from ``ratecheck.claims``.

Verdict semantics (the rules every claim follows; README-ready):

* PASS / FAIL / INCONCLUSIVE. A verdict is decisive only when the data are. A slope passes when its
  whole confidence interval (bootstrap over replicas) lies inside the tolerance band around the
  expected exponent, fails when it lies entirely outside, and is INCONCLUSIVE otherwise. Bounds,
  thresholds and closed-form values use one-sided (or two-sided) Student-t bounds of the replica
  mean at every grid point; limits a bootstrap CI of the distance; rates a CI of the per-replica
  log-contraction per round.
* Deterministic runs (no spread across replicas) have no CI: the text says "deterministic" and the
  comparison is exact.
* Exact runs (issue #8: ``RunConfig(mode="exact")``, a Trace with one row of exact expectations,
  ``trace.exact``) are deterministic too: ``min_replicas`` does not apply, every CI has zero width,
  and the reason, the evidence (``"exact"``) and ``Outcome.to_dict()`` say "exact". An ``auto`` run
  that fell back to Monte Carlo is judged as Monte Carlo, its fallback reason in the evidence.
* A slope fit needs at least ``min_points`` (5) distinct grid points spanning ``min_decades`` (1)
  decade, unless the claim declares why not (``design_reason``); otherwise it is INCONCLUSIVE with
  that reason. A fit whose residuals show a regime change is INCONCLUSIVE: R^2 below ``r2_floor``
  (0.98; applied when the expected exponent is not 0 and the fitted slope is confidently not 0:
  otherwise R^2 has nothing to explain and the band judges), or a local
  slope that changes across the grid by more than ``max_curvature`` (default: the tolerance) with
  confidence (quadratic fit in log x, bootstrap CI), or by more than the CI's own half-width where that is wider
  (a band the replicas cannot resolve would make the gate fire on correct code at its level).
* One-sided claims (``side="at_most"``/``"at_least"``) state what the theorem bounds (the cap) and
  what was measured; the report draws the one-sided band.
* Linear rates are checked as rates (``RateClaim``): the fitted log-contraction per round of the
  measure on a linear round axis against the exact spectral value (two-sided, relative tolerance)
  and against the theorem's guaranteed rate (one-sided: never slower).
* An ``Observation`` is a number with no verdict (a vacuity ratio, a tightness factor, an exponent
  against a far cap): its verdict is OBSERVED, it is shown in the report, the JSON and the CLI, and
  it never counts as PASS or FAIL nor makes ``check`` fail.
* A negative control declares the claim it controls (``controls``) and is run on the same instance
  (the same grid); it must be shown to differ: if its verdict equals the controlled claim's, it is
  INCONCLUSIVE ("does not differ from ..."), which is unexpected and fails the check.
* Every claim records what is expected of it. Most are expected to PASS; a bound printed wrongly in
  a paper is an expected FAIL with the reason (a confirmed erratum); a negative control is an
  expected FAIL of a property of an algorithm. No claim may expect INCONCLUSIVE. Only a verdict
  different from the expected one fails the check.
"""

from .base import Claim, ExpectedOrder, Gate, Outcome, check_invariants, negative_control, with_gates
from .compose import Decision, Estimator, Grid, Plan, Points, Reading, Rule, Summary
from .constants import ConstantsClaim, Independent

# helpers other modules of the project read (underscored: not part of the public API)
from .model import PROFILES, Bindings, PointResult, Profile, Verdict, _first_divergence, _fmt, _jsonable, _num, exact_evidence, exact_state  # noqa: F401
from .observation import Observation, monte_carlo_twin, observe
from .plans import RunsPerValue, SeriesPair, StoredRecursion
from .rules import (
    SIDES,
    BetweenBounds,
    BoundCeiling,
    ExactOrMonteCarlo,
    RelativeBand,
    ThresholdCeiling,
    WithinTolerance,
    term_negligible,
)
from .rules_fit import DifferenceBelow, ExponentInBand, RateAgreement, StrictlyDecreasing
from .slopes import EXACT_BAND, AbscissaSlopeClaim, ExactSlopeClaim, ExponentComparisonClaim, HittingTimeClaim, SlopeClaim
from .statistics import (
    LogLogSlope,
    MeanIntervals,
    OneSidedMeans,
    SlopeDifference,
    _bootstrap_distance,  # noqa: F401
    deterministic,
    point_ci,
    relative,
    slope_text,
)
from .summaries import (
    Abscissa,
    FinalDistance,
    HittingTime,
    LogRates,
    RoundsToLevel,
    final_value,
    first_crossing,
    hitting_rounds,
    settled_crossing,
    tail_average,
)
from .values import BoundClaim, ExactValueClaim, IntervalClaim, LimitClaim, RateClaim, ThresholdClaim, ValueClaim

__all__ = [
    "PROFILES", "SIDES", "AbscissaSlopeClaim", "Bindings", "BoundClaim", "Claim", "ExactSlopeClaim",
    "ExactValueClaim", "ExpectedOrder", "Gate", "ExponentComparisonClaim", "HittingTime", "HittingTimeClaim", "IntervalClaim",
    "LimitClaim", "Observation", "Outcome", "PointResult", "Profile", "RateClaim", "SlopeClaim",
    "ThresholdClaim", "ValueClaim", "Verdict", "deterministic", "exact_evidence", "exact_state",
    "final_value", "hitting_rounds", "monte_carlo_twin", "observe", "point_ci", "relative", "slope_text",
    "tail_average", "term_negligible", "check_invariants", "negative_control", "with_gates", "first_crossing", "settled_crossing",
    "ConstantsClaim", "Independent",
    # the pieces of a decision (ratecheck.claims.compose)
    "Decision", "Estimator", "Grid", "Plan", "Points", "Reading", "Rule", "Summary",
    "RunsPerValue", "SeriesPair", "StoredRecursion",
    "Abscissa", "FinalDistance", "LogRates", "RoundsToLevel",
    "LogLogSlope", "MeanIntervals", "OneSidedMeans", "SlopeDifference",
    "BetweenBounds", "BoundCeiling", "DifferenceBelow", "EXACT_BAND", "ExactOrMonteCarlo", "ExponentInBand",
    "RateAgreement", "RelativeBand", "StrictlyDecreasing", "ThresholdCeiling", "WithinTolerance",
]
