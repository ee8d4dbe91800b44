"""Statistics of grid points: confidence intervals of means, bootstrap distances, and their text."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..model.fit import MeanCI, SlopeFit, mean_ci
from .model import PointResult


def point_ci(point: PointResult, *, level: float = 0.95, side: str = "two-sided") -> MeanCI:
    """The CI of a grid point's mean: Student-t over replicas, or zero width for an exact point (its
    single sample is the expectation itself, with no Monte-Carlo error)."""
    if point.exact and point.samples.size == 1:
        m = float(point.samples[0])
        return MeanCI(mean=m, low=m, high=m, level=level, n=1)
    return mean_ci(point.samples, level=level, side=side)


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
