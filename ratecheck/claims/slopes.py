"""Claim kinds fitted as log-log slopes: one series, hitting times, another abscissa, exact tolerances,
two series compared."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..model.fit import SlopeFit, fit_slope
from ..trace import RunConfig
from .base import Claim, ExpectedOrder
from .evidence import BandEvidence, DifferenceEvidence
from .model import PointResult, Profile, Verdict, _first_divergence, _fmt
from .power import SHIFT, Constraint, power
from .rules import SIDES, exact_or_monte_carlo
from .statistics import slope_text
from .summaries import Crossing, HittingTime, first_crossing
from .views import NoRule, Piece, Statistic
from .views_slopes import ExponentBand, FittedSlope, HittingTimes, TwoSeries


@dataclass(frozen=True, kw_only=True)
class SlopeClaim(Claim):
    """log(measure) against log(varied parameter) has the expected slope, within a tolerance band.

    side 'at_most': the slope is no larger than expected + tolerance ("no slower than"); the theorem
    bounds the exponent from above and the reason states the cap next to the measured slope.

    Fit design (module docstring): at least ``min_points`` distinct points over ``min_decades``
    decades unless ``design_reason`` says why not; R^2 >= ``r2_floor`` and no confident local-slope
    change beyond ``max_curvature`` (default: the tolerance), else INCONCLUSIVE (regime change).
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
    statistic_view: ClassVar[Statistic] = FittedSlope()
    rule_view: ClassVar[Piece] = ExponentBand()

    def _validate(self) -> None:
        if self.side not in SIDES:
            raise ValueError(f"side must be one of {SIDES}, got {self.side!r}")
        if self.tolerance <= 0:
            raise ValueError(f"tolerance must be > 0, got {self.tolerance}")

    def points(self, profile, traces):
        out = super().points(profile, traces)
        if self.hitting is not None:
            for point in out:
                level, times = self.hitting.read(point.trace, self.measure, point.value)
                point.stats = {**point.stats, "level": level}
                point.samples = times[np.isfinite(times)]
        return out

    def _design(self, fit: SlopeFit) -> str:
        """Why the grid cannot decide a slope (empty when it can)."""
        if self.design_reason:
            return ""
        count = len(set(fit.x))
        if count < self.min_points or fit.decades < self.min_decades - 1e-9:
            return (f"fit design: {count} points over {fit.decades:.2f} decades (need {self.min_points} over "
                    f"{self.min_decades:g}, or a declared design_reason)")
        return ""

    def _regime_change(self, fit: SlopeFit, expected: float) -> str:
        # R^2 speaks only when there is a slope to explain: a flat curve in noise has R^2 near 0 and is a
        # fine power law (exponent 0), which the band then judges
        significant = fit.ci_low > 0 or fit.ci_high < 0
        if expected != 0 and significant and fit.r2 < self.r2_floor:
            return (f"regime change: R^2 {fit.r2:.4f} below the floor {self.r2_floor:g} (not one power law over "
                    f"the grid)")
        limit = self.tolerance if self.max_curvature is None else self.max_curvature
        if math.isfinite(fit.curvature) and (fit.curvature_low > limit or fit.curvature_high < -limit):
            return (f"regime change: the local slope changes by {fit.curvature:+.3f} across the grid (CI [{fit.curvature_low:+.3f}, "
                    f"{fit.curvature_high:+.3f}]), beyond +-{limit:g}: not one power law")
        return ""

    def _decide(self, points):
        if self.regime is not None:
            why = self.regime(points)
            if why:
                return Verdict.INCONCLUSIVE, f"regime not reached: {why}", {}
        fit = fit_slope([p.value for p in points], [p.samples for p in points], level=self.level,
                        exact=[p.exact for p in points])
        e = self.expected.exponent()
        lo, hi = e - self.tolerance, e + self.tolerance
        band = {"two-sided": (lo, hi), "at_most": (-math.inf, hi), "at_least": (lo, math.inf)}[self.side]
        evidence = BandEvidence(fit=fit.to_dict(), expected_exponent=e, expected_from=self.expected.describe(),
                                tolerance=self.tolerance, side=self.side, band=band,
                                design_reason=self.design_reason).to_dict()
        ci = slope_text(fit)
        why = self._design(fit) or self._regime_change(fit, e)
        if why:
            return Verdict.INCONCLUSIVE, f"{why}; {ci}", evidence
        if self.side == "two-sided":
            target = f"band [{band[0]:+.3f}, {band[1]:+.3f}] around {e:+.3f}"
        elif self.side == "at_most":
            target = f"the theorem's cap: at most {e:+.3f} (+{self.tolerance:g} tolerance: <= {band[1]:+.3f})"
        else:
            target = f"the theorem's floor: at least {e:+.3f} (-{self.tolerance:g} tolerance: >= {band[0]:+.3f})"
        if band[0] <= fit.ci_low and fit.ci_high <= band[1]:
            verdict, reason = Verdict.PASS, f"measured {ci} within {target}"
        elif fit.ci_high < band[0] or fit.ci_low > band[1]:
            verdict, reason = Verdict.FAIL, f"measured {ci} entirely outside {target}"
        else:
            verdict, reason = Verdict.INCONCLUSIVE, f"measured {ci} straddles {target}: more replicas needed"
        # a shift of the exponent moves the slope's CI and not the band (the fit gates are not part of it)
        rule = power([Constraint(fit.ci_low, fit.ci_high, *band)], SHIFT, "shift of the exponent", verdict,
                     reference=e)
        return verdict, reason, {**evidence, "power": rule}


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
    statistic_view: ClassVar[Statistic] = HittingTimes()
    rule_view: ClassVar[Piece] = ExponentBand()

    def points(self, profile, traces):
        # the base class evaluates the theorem per run; the samples become hitting rounds
        out = super().points(profile, traces)
        for value, point in zip(self.values(profile), out):
            trace = traces[point.config.key()]
            level, rounds = HittingTime(self.threshold, self.crossing).read(trace, self.measure, value)
            point.value = float(self.abscissa(value)) if self.abscissa is not None else float(value)
            point.samples = rounds[np.isfinite(rounds)]
            point.stats = {"level": level, "not_reached": int(np.sum(np.isnan(rounds) & trace.valid)),
                           "grid_value": float(value), "rounds_run": int(point.config.rounds)}
        return out

    def _precheck(self, points):
        missed = [p for p in points if p.stats.get("not_reached")]
        if missed:
            where = ", ".join(
                f"{self.vary}={_fmt(p.value)} ({p.stats['not_reached']} replicas above {p.stats['level']:.3g} "
                f"after {p.stats['rounds_run']} rounds)" for p in missed)
            return f"level not reached within the run: {where}"
        return super()._precheck(points)


@dataclass(frozen=True, kw_only=True)
class ExactSlopeClaim(SlopeClaim):
    """A slope claim with two tolerances: ``tolerance`` on exact points (from the theory's finite-grid
    asymptotics, said in ``tolerance_reason``) and ``mc_tolerance`` on Monte-Carlo points (asymptotics
    plus noise, said in ``mc_tolerance_reason``), e.g. for its ``monte_carlo_twin``. Without an
    ``mc_tolerance`` the claim is decided on exact runs only: Monte-Carlo points are INCONCLUSIVE."""

    tolerance_reason: str
    mc_tolerance: float | None = None
    mc_tolerance_reason: str = ""

    def _decide(self, points):
        return exact_or_monte_carlo(self, points, SlopeClaim._decide, "tolerance", self.tolerance,
                                    self.tolerance_reason, self.mc_tolerance, self.mc_tolerance_reason)


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
    statistic_view: ClassVar[Statistic] = TwoSeries()
    rule_view: ClassVar[Piece] = NoRule()

    def runs(self, profile: Profile) -> list[RunConfig]:
        values = self.values(profile)
        return [self.configure(v, profile) for v in values] + [self.configure_other(v, profile) for v in values]

    def points(self, profile, traces):
        values = self.values(profile)
        out = []
        for series, configs in ((0, self.runs(profile)[: len(values)]), (1, self.runs(profile)[len(values):])):
            for value, config in zip(values, configs):
                trace = traces[config.key()]
                samples = self.summary(config, trace) if self.summary else trace.at_end(self.measure)
                out.append(PointResult(value, config, samples[np.isfinite(samples)], trace.diverged_count,
                                       stats={"series": self.labels[series]},
                                       first_divergence=_first_divergence(trace), trace=trace))
        return out

    def _decide(self, points):
        fits, bands, expectations = [], [], {}
        from scipy.special import ndtri  # norm.ppf's own function, without scipy.stats's import (startup time)

        z = float(ndtri(0.5 + self.level / 2))
        for label, expected in zip(self.labels, self.expected):
            pts = [p for p in points if p.stats["series"] == label]
            fit = fit_slope([p.value for p in pts], [p.samples for p in pts], level=self.level,
                            exact=[p.exact for p in pts])
            fits.append(fit)
            if expected is not None:
                e = expected.exponent()
                band = (e - self.tolerance, e + self.tolerance)
                expectations[label] = {"exponent": e, "from": expected.describe(), "band": list(band)}
                bands.append((label, fit, band))
        diff = fits[0].slope - fits[1].slope
        se = math.hypot(fits[0].stderr, fits[1].stderr)
        low, high = diff - z * se, diff + z * se
        evidence = DifferenceEvidence(labels=self.labels, margin=self.margin,
                                      fits={label: f.to_dict() for label, f in zip(self.labels, fits)},
                                      expected=expectations, value=diff, ci_low=low, ci_high=high).to_dict()
        text = (f"slope {self.labels[0]} {fits[0].slope:+.3f}, {self.labels[1]} {fits[1].slope:+.3f}; difference "
                f"{diff:+.3f}, {int(self.level * 100)}% CI [{low:+.3f}, {high:+.3f}] against < {-self.margin:+.3f}")
        outside = [label for label, fit, band in bands if fit.ci_high < band[0] or fit.ci_low > band[1]]
        unsure = [label for label, fit, band in bands if not (band[0] <= fit.ci_low and fit.ci_high <= band[1])]
        if low > -self.margin or outside:
            extra = f"; outside its band: {', '.join(outside)}" if outside else ""
            verdict, reason = Verdict.FAIL, text + extra
        elif high < -self.margin and not unsure:
            verdict, reason = Verdict.PASS, text + ", every band held"
        else:
            extra = f"; band straddled: {', '.join(unsure)}" if unsure else ""
            verdict, reason = Verdict.INCONCLUSIVE, text + extra + ": more replicas needed"
        # a shift of series A's exponent moves the difference and A's band test; B's band test stays.
        # The rule wants the difference strictly below -margin: its band ends just under it.
        edge = math.nextafter(-self.margin, -math.inf)
        rule = [Constraint(low, high, b=edge)] + [Constraint(fit.ci_low, fit.ci_high, *band, moves=label == self.labels[0])
                                                  for label, fit, band in bands]
        reference = expectations[self.labels[0]]["exponent"] if self.labels[0] in expectations else fits[0].slope
        return verdict, reason, {**evidence, "power": power(rule, SHIFT, f"shift of the exponent of {self.labels[0]} "
                                                            f"(and of {self.labels[0]} - {self.labels[1]})", verdict,
                                                            reference=reference)}


@dataclass(frozen=True, kw_only=True)
class AbscissaSlopeClaim(SlopeClaim):
    """A slope claim whose x axis is ``abscissa(config)`` (e.g. the run's eta) instead of the grid value,
    fitted on the absolute per-replica value when ``magnitude`` (signed measures whose sign is known)."""

    abscissa: Callable[[RunConfig], float] | None = None
    magnitude: bool = False
    kind: str = "slope"

    def points(self, profile, traces):
        out = super().points(profile, traces)
        for point in out:
            if self.abscissa is not None:
                point.stats = {**point.stats, "grid_value": float(point.value)}
                point.value = float(self.abscissa(point.config))
            if self.magnitude:
                point.samples = np.abs(point.samples)
        return out
