"""Claim kinds on grid-point means: bounds, thresholds, closed-form values, intervals, limits, rates; each a
named composition of a reading, a statistic and a rule (ratecheck.claims.compose)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..trace import RunConfig, Trace
from .base import Claim
from .compose import Estimator, Points, Reading, Rule
from .model import PointResult
from .rules import BetweenBounds, BoundCeiling, ExactOrMonteCarlo, RelativeBand, ThresholdCeiling, WithinTolerance
from .rules_fit import RateAgreement
from .statistics import MeanIntervals, OneSidedMeans
from .summaries import FinalDistance, LogRates


@dataclass(frozen=True, kw_only=True)
class BoundClaim(Claim):
    """E[measure] <= bound (one version of the theorem's bound) at every grid point.

    PASS when the upper confidence bound of the mean is below the bound everywhere; FAIL when the
    lower confidence bound exceeds it somewhere; INCONCLUSIVE otherwise.
    """

    version: str
    kind: str = "bound"
    statistic: Estimator = OneSidedMeans()
    rule: Rule = BoundCeiling()

    def _validate(self) -> None:
        if self.theorem is None or self.bindings is None:
            raise ValueError(f"bound claim {self.id} needs a theorem and bindings")
        self.theorem.bound(self.version)  # fail early on an unknown version


@dataclass(frozen=True, kw_only=True)
class ValueClaim(Claim):
    """E[measure] equals a closed-form prediction within a relative tolerance at every grid point.

    PASS when the confidence interval of the mean lies inside [pred (1 - tol), pred (1 + tol)]
    everywhere; FAIL when it lies entirely outside somewhere; INCONCLUSIVE otherwise.
    """

    predict: Callable[[RunConfig], float]
    prediction: str  # what the prediction is, e.g. "exact Lyapunov noise floor"
    rel_tolerance: float = 0.1
    kind: str = "value"
    statistic: Estimator = MeanIntervals()
    rule: Rule = RelativeBand()


@dataclass(frozen=True, kw_only=True)
class LimitClaim(Claim):
    """The replica-mean final iterate is within `tolerance` of a target point (x* or a biased point).

    The distance's confidence interval comes from a bootstrap over replicas. ``target`` maps a run
    configuration to the point (from the problem's closed form). A target that depends on the run itself
    (e.g. shares measured on its timeline) is ``target_of_run(config, trace)``: the distance is then to
    it, and each point also records ``target_offset``, its distance from ``target(config)``.
    """

    target: Callable[[RunConfig], np.ndarray]
    target_of_run: Callable[[RunConfig, Trace], np.ndarray] | None = None
    target_name: str = "x*"
    tolerance: float = 1e-2
    point: str = "x"
    kind: str = "limit"
    reading: Reading = FinalDistance()
    statistic: Estimator = Points()
    rule: Rule = WithinTolerance()


@dataclass(frozen=True, kw_only=True)
class ThresholdClaim(Claim):
    """E[measure] <= a fixed threshold at every grid point, e.g. "exactly 0 at P = n" to machine precision.

    PASS when the upper confidence bound of the mean is below the threshold everywhere; FAIL when the
    lower confidence bound exceeds it somewhere; INCONCLUSIVE otherwise. No theorem evaluation needed.
    """

    threshold: float
    kind: str = "threshold"
    statistic: Estimator = OneSidedMeans()
    rule: Rule = ThresholdCeiling()


@dataclass(frozen=True, kw_only=True)
class IntervalClaim(Claim):
    """lower <= E[measure] <= upper at every grid point, the two sides being bound versions of the theorem.

    The measure may be signed. PASS when the two-sided confidence interval of the mean lies inside
    [lower, upper] everywhere; FAIL when it lies entirely outside somewhere; INCONCLUSIVE otherwise.
    """

    lower: str  # bound version giving the lower side
    upper: str  # bound version giving the upper side
    kind: str = "interval"
    statistic: Estimator = MeanIntervals()
    rule: Rule = BetweenBounds()

    def _validate(self) -> None:
        if self.theorem is None or self.bindings is None:
            raise ValueError(f"interval claim {self.id} needs a theorem and bindings")
        self.theorem.bound(self.lower)
        self.theorem.bound(self.upper)


@dataclass(frozen=True, kw_only=True)
class ExactValueClaim(ValueClaim):
    """A value claim with ``rel_tolerance`` on exact points and ``mc_rel_tolerance`` on Monte-Carlo ones
    (as ExactSlopeClaim: none stated, Monte-Carlo points are INCONCLUSIVE)."""

    tolerance_reason: str
    mc_rel_tolerance: float | None = None
    mc_tolerance_reason: str = ""
    rule: Rule = ExactOrMonteCarlo(RelativeBand(), "rel_tolerance", "mc_rel_tolerance", "tolerance_reason",
                                   "mc_tolerance_reason")


@dataclass(frozen=True, kw_only=True)
class RateClaim(Claim):
    """A linear rate checked as a rate: the fitted log-contraction per round of ``measure`` (slope of
    log(measure) against the round, linear axis, over the rounds [start_fraction T, T]) against

    * the exact value ``exact(config, rounds)`` over the same window (e.g. the log-slope of the
      exact linear recursion w_t = F^t w_0, whose limit is 2 log rho(F); over a finite window the
      slower modes may not dominate yet, so the comparison uses the same rounds): PASS when the CI
      of the replica mean lies within ``rel_tolerance`` of it, FAIL when entirely outside;
    * the theorem's guaranteed rate ``guaranteed(point)`` (e.g. log(1 - eta_x K mu1/16)), one-sided:
      FAIL when the measured decay is confidently slower than the theorem guarantees.

    The tightness factor exact/guaranteed is in the evidence (and the report). Runs need dense
    checkpoints in the window (RunConfig.checkpoints) and a measure that stays well above round-off.

    ``spectral(config)`` (issue #21; e.g. ratecheck.exact.rates.config_log_rate) is the exact
    asymptotic log-contraction: log of the spectral radius of the run's probed moment map. FAIL when
    it differs from ``asymptotic`` (the paper's recursion) beyond ``spectral_rtol``, or when the
    theorem's guaranteed rate is faster than it (the bound cannot hold); exact/guaranteed is reported.
    """

    exact: Callable[[RunConfig, np.ndarray], float]
    exact_name: str = "exact rate"
    asymptotic: Callable[[RunConfig], float] | None = None  # e.g. 2 log rho(F): reported, not compared
    guaranteed: Callable[[PointResult], float] | None = None
    guaranteed_name: str = "the theorem's rate"
    spectral: Callable[[RunConfig], float] | None = None  # exact log rho of the moment map (issue #21)
    spectral_rtol: float = 1e-8  # Arnoldi to 1e-13 on rho near 1: log rho to ~1e-10 relative
    rel_tolerance: float = 0.05
    start_fraction: float = 0.5
    min_window_points: int = 5
    kind: str = "rate"
    reading: Reading = LogRates()
    statistic: Estimator = MeanIntervals()
    rule: Rule = RateAgreement()

    def _validate(self) -> None:
        if not 0 <= self.start_fraction < 1:
            raise ValueError(f"start_fraction must be in [0, 1), got {self.start_fraction}")
        if self.rel_tolerance <= 0:
            raise ValueError(f"rel_tolerance must be > 0, got {self.rel_tolerance}")
