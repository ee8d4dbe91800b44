"""Statistics of grid points: confidence intervals of means, bootstrap distances, fitted slopes and their
text, and the statistic pieces of a claim's decision (ratecheck.claims.compose): one- and two-sided CIs of
the replica means, a log-log slope, the difference of two series' slopes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..model.fit import POINT_INTERVAL, SLOPE_INTERVAL, MeanCI, SlopeFit, fit_slope, mean_ci, slope_difference
from ..model.intervals import check_method
from .compose import Estimator
from .model import PointResult
from .views_slopes import FittedSlope, TwoSeries


def point_ci(point: PointResult, *, level: float = 0.95, side: str = "two-sided",
             interval: str = POINT_INTERVAL) -> MeanCI:
    """The CI of a grid point's mean: ``interval`` over replicas, or zero width for an exact point (its
    single sample is the expectation itself, with no Monte-Carlo error)."""
    if point.exact and point.samples.size == 1:
        m = float(point.samples[0])
        return MeanCI(mean=m, low=m, high=m, level=level, n=1)
    return mean_ci(point.samples, level=level, side=side, interval=interval)


def _bootstrap_distance(
    points: np.ndarray, target: np.ndarray, level: float, n_boot: int = 2000
) -> tuple[float, float, float]:
    """(distance, low, high) of ||mean_r x_r - target|| with a percentile bootstrap over replicas."""
    if points.shape[0] < 2:
        return math.nan, math.nan, math.nan
    rng = np.random.default_rng(0)
    idx = rng.integers(0, points.shape[0], size=(n_boot, points.shape[0]))
    boot = np.linalg.norm(points[idx].mean(axis=1) - target, axis=1)
    alpha = (1 - level) / 2
    est = float(np.linalg.norm(points.mean(axis=0) - target))
    low, high = np.quantile(boot, [alpha, 1 - alpha])
    return est, float(low), float(high)


def deterministic(points: Sequence[PointResult]) -> bool:
    """True when every grid point's replicas agree exactly (no Monte-Carlo spread to bound)."""
    return all(p.samples.size and np.ptp(p.samples) == 0 for p in points)


def _deterministic_note(points: Sequence[PointResult]) -> str:
    if points and all(p.exact for p in points):
        return " (exact expectations: no Monte-Carlo error, no CI)"
    return " (deterministic: replicas identical, no CI)" if deterministic(points) else ""


def slope_text(fit: SlopeFit) -> str:
    """'slope +0.500, 95% CI [+0.49, +0.51]', or 'slope +0.500 (deterministic)' without spread."""
    if fit.exact:
        return f"slope {fit.slope:+.4f} (exact expectations, no CI)"
    if fit.deterministic:
        return f"slope {fit.slope:+.3f} (deterministic)"
    return f"slope {fit.slope:+.3f}, {int(round(fit.level * 100))}% CI [{fit.ci_low:+.3f}, {fit.ci_high:+.3f}]"


def _ratio(ratio: float, tolerance: float) -> str:
    """A measured/predicted ratio with as many digits as the tolerance needs."""
    return f"{ratio:.4g}" if tolerance >= 0.01 else f"1{ratio - 1:+.2g}"


def relative(tolerance: float) -> str:
    """A relative tolerance in words: '10%', or '1e-09 (relative)' for the tiny ones exact values allow."""
    return f"{tolerance:.0%}" if tolerance >= 0.01 else f"{tolerance:.1g} (relative)"


@dataclass(frozen=True)
class OneSidedMeans(Estimator):
    """Per grid point: the replica mean and its one-sided confidence bounds at the claim's level (rows of
    value, mean, ucb, lcb), for a one-sided rule (a ceiling)."""

    def __call__(self, claim: Any, points: Sequence[PointResult]) -> list[dict[str, Any]]:
        rows = []
        for p in points:
            upper = point_ci(p, level=claim.level, side="upper")
            lower = point_ci(p, level=claim.level, side="lower")
            rows.append({"value": p.value, "mean": upper.mean, "ucb": upper.high, "lcb": lower.low})
        return rows


@dataclass(frozen=True)
class MeanIntervals(Estimator):
    """Per grid point: the two-sided CI of the replica mean at the claim's level."""

    def __call__(self, claim: Any, points: Sequence[PointResult]) -> list[MeanCI]:
        return [point_ci(p, level=claim.level) for p in points]


def _fit(points: Sequence[PointResult], level: float, interval: str = SLOPE_INTERVAL) -> SlopeFit:
    return fit_slope([p.value for p in points], [p.samples for p in points], level=level,
                     exact=[p.exact for p in points], interval=interval)


@dataclass(frozen=True)
class LogLogSlope(Estimator):
    """The log-log slope of the replica means against the grid (x: each point's value), its CI from a
    bootstrap over replicas by ``interval`` (none on exact points), R^2 and the local slope's change
    (SlopeFit)."""

    interval: str = SLOPE_INTERVAL  # ratecheck.model.intervals; "percentile" was the method before
    view: ClassVar[Any] = FittedSlope()  # the means and the fitted power law

    def __post_init__(self) -> None:
        check_method(self.interval)

    def __call__(self, claim: Any, points: Sequence[PointResult]) -> SlopeFit:
        return _fit(points, claim.level, self.interval)


@dataclass(frozen=True)
class Difference:
    """Two series' fitted slopes and the CI of slope A - slope B."""

    fits: tuple[SlopeFit, SlopeFit]
    value: float
    low: float
    high: float


@dataclass(frozen=True)
class SlopeDifference(Estimator):
    """Each series' log-log slope (points tagged ``stats["series"]`` with the claim's ``labels``) and the
    difference A - B, its CI by ``interval`` from both series' replicas (independent runs; "normal", the
    method before: est -+ z * the hypot of the two bootstrap standard deviations)."""

    interval: str = SLOPE_INTERVAL  # ratecheck.model.intervals
    reads: ClassVar[tuple[str, ...]] = ("labels",)  # the claim fields it reads
    view: ClassVar[Any] = TwoSeries()  # each series' means and fitted power law

    def __post_init__(self) -> None:
        check_method(self.interval)

    def __call__(self, claim: Any, points: Sequence[PointResult]) -> Difference:
        method = "percentile" if self.interval == "normal" else self.interval  # "normal" fits as before
        a, b = (_fit([p for p in points if p.stats["series"] == label], claim.level, method)
                for label in claim.labels)
        diff, low, high = slope_difference(a, b, claim.level, self.interval)
        return Difference((a, b), diff, low, high)
