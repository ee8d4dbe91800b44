"""Claim kinds fitted as log-log slopes: one series, hitting times, another abscissa, exact tolerances,
two series compared; each a named composition of a reading, a statistic and a rule (ratecheck.claims.compose)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..trace import RunConfig
from .base import Claim, ExpectedOrder
from .compose import Estimator, Plan, Reading, Rule
from .model import PointResult, Profile
from .plans import SeriesPair
from .rules import SIDES, ExactOrMonteCarlo
from .rules_fit import DifferenceBelow, ExponentInBand
from .statistics import LogLogSlope, SlopeDifference
from .summaries import Abscissa, Crossing, HittingTime, RoundsToLevel, first_crossing


@dataclass(frozen=True, kw_only=True)
class SlopeClaim(Claim):
    """log(measure) against log(varied parameter) has the expected slope, within a tolerance band.

    side 'at_most': the slope is no larger than expected + tolerance ("no slower than"); the theorem
    bounds the exponent from above and the reason states the cap next to the measured slope.

    Fit design (module docstring): at least ``min_points`` distinct points over ``min_decades``
    decades unless ``design_reason`` says why not; R^2 >= ``r2_floor`` and no confident local-slope
    change beyond ``max_curvature`` (default: the tolerance; at least the curvature CI's half-width), else
    INCONCLUSIVE (regime change).
    """

    expected: ExpectedOrder
    tolerance: float = 0.1
    side: str = "two-sided"
    regime: Callable[[Sequence[PointResult]], str] | None = None  # returns a reason if not in regime
    min_points: int = 5
    min_decades: float = 1.0
    design_reason: str = ""  # why fewer points or a narrower range are enough, when they are
    r2_floor: float = 0.98
    max_curvature: float | None = None  # None: the tolerance
    # what to read from each run instead of the measure's summary: a hitting time (each point's samples
    # become the per-replica times, its stats the level)
    hitting: HittingTime | None = None
    kind: str = "slope"
    statistic: Estimator = LogLogSlope()
    rule: Rule = ExponentInBand()

    def _validate(self) -> None:
        if self.side not in SIDES:
            raise ValueError(f"side must be one of {SIDES}, got {self.side!r}")
        if self.tolerance <= 0:
            raise ValueError(f"tolerance must be > 0, got {self.tolerance}")

    def _reading(self) -> Reading:
        return self.hitting if self.hitting is not None else self.reading


@dataclass(frozen=True, kw_only=True)
class HittingTimeClaim(SlopeClaim):
    """Rounds until ``measure`` first falls to ``threshold(value)``, against a knob, as a log-log slope.

    For rounds against accuracy, let the grid be 1/eps and threshold(v) = v**-2 (a squared measure);
    grid values that only change the threshold share one run (the sweep deduplicates configurations).
    ``abscissa`` maps a grid value to the fitted x (e.g. mu -> kappa = l(mu)/mu); default: itself.
    A replica that never reaches the threshold makes the claim INCONCLUSIVE with that reason. It reads
    the same HittingTime as ``SlopeClaim(hitting=...)`` (level ``threshold``, rule ``crossing``), and adds
    that gate, the abscissa and the per-point level, misses, grid value and rounds run.
    """

    threshold: Callable[[float], float]
    crossing: Crossing = first_crossing  # or settled_crossing (ratecheck.claims.summaries)
    abscissa: Callable[[float], float] | None = None
    kind: str = "hitting_time"
    reading: Reading = RoundsToLevel()


# the exponent band at the exact or the Monte-Carlo tolerance (ExactSlopeClaim's rule, for wrappers of it)
EXACT_BAND = ExactOrMonteCarlo(ExponentInBand(), "tolerance", "mc_tolerance", "tolerance_reason", "mc_tolerance_reason")


@dataclass(frozen=True, kw_only=True)
class ExactSlopeClaim(SlopeClaim):
    """A slope claim with two tolerances: ``tolerance`` on exact points (from the theory's finite-grid
    asymptotics, said in ``tolerance_reason``) and ``mc_tolerance`` on Monte-Carlo points (asymptotics
    plus noise, said in ``mc_tolerance_reason``), e.g. for its ``monte_carlo_twin``. Without an
    ``mc_tolerance`` the claim is decided on exact runs only: Monte-Carlo points are INCONCLUSIVE."""

    tolerance_reason: str
    mc_tolerance: float | None = None
    mc_tolerance_reason: str = ""
    rule: Rule = EXACT_BAND


@dataclass(frozen=True, kw_only=True)
class ExponentComparisonClaim(Claim):
    """The log-log slope of series A (``configure``) is smaller than that of series B (``configure_other``)
    by at least ``margin``, each series also inside its own band ``expected +- tolerance`` when given.

    Both series share the grid, the measure and the summary. The difference's CI combines the two
    replica-bootstrap standard errors (the series are independent runs): PASS when the whole CI of
    slope_A - slope_B lies below -margin and every given band holds; FAIL when the CI lies above -margin
    or a slope's CI lies entirely outside its band; INCONCLUSIVE otherwise.
    """

    configure_other: Callable[[float, Profile], RunConfig]
    labels: tuple[str, str] = ("A", "B")
    margin: float = 0.0
    expected: tuple[ExpectedOrder | None, ExpectedOrder | None] = (None, None)
    tolerance: float = 0.3
    kind: str = "exponent_comparison"
    plan: Plan = SeriesPair()
    statistic: Estimator = SlopeDifference()
    rule: Rule = DifferenceBelow()


@dataclass(frozen=True, kw_only=True)
class AbscissaSlopeClaim(SlopeClaim):
    """A slope claim whose x axis is ``abscissa(config)`` (e.g. the run's eta) instead of the grid value,
    fitted on the absolute per-replica value when ``magnitude`` (signed measures whose sign is known)."""

    abscissa: Callable[[RunConfig], float] | None = None
    magnitude: bool = False
    kind: str = "slope"

    def _reading(self) -> Reading:
        return Abscissa(super()._reading())
