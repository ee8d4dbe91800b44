"""The estimators of ratecheck.claims.statistics against computations written out here from their definitions
(scipy's t and normal quantiles, the delta method for a distance far from its target) and against the identity
every equal-tailed interval obeys (a one-sided bound at L is an end of the two-sided interval at 2L - 1): a wrong
level, side, tail, axis or degrees of freedom moves a number far outside these tolerances."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from scipy import stats

from ratecheck.claims.model import PointResult
from ratecheck.claims.statistics import MeanIntervals, OneSidedMeans, SlopeDifference, _bootstrap_distance, point_ci
from ratecheck.trace import RunConfig

CONFIG = RunConfig("fedavg", {}, "quadratic", {}, rounds=1, replicas=8)
SAMPLES = np.array([1.3, 0.7, 2.1, 1.1, 0.4, 1.9, 1.5, 0.8])  # n = 8, mean 1.225


def _point(samples, value=1.0, **stats_):
    return PointResult(value=value, config=CONFIG, samples=np.asarray(samples, dtype=float), diverged=0, stats=stats_)


def _by_hand(samples, quantile):
    n = len(samples)
    mean = sum(samples) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in samples) / (n - 1))
    return mean, stats.t.ppf(quantile, n - 1) * sd / math.sqrt(n)


def test_student_t_bounds_use_the_one_or_two_sided_quantile_with_n_minus_1_degrees_of_freedom():
    mean, half90 = _by_hand(SAMPLES, 0.9)  # t_{0.9, 7} = 1.415: one-sided at 90%, not t_{0.95, 7} = 1.895
    upper = point_ci(_point(SAMPLES), level=0.9, side="upper", interval="t")
    lower = point_ci(_point(SAMPLES), level=0.9, side="lower", interval="t")
    assert upper.low == -math.inf and math.isclose(upper.high, mean + half90, rel_tol=1e-12)
    assert lower.high == math.inf and math.isclose(lower.low, mean - half90, rel_tol=1e-12)
    two = point_ci(_point(SAMPLES), level=0.9, interval="t")
    half95 = _by_hand(SAMPLES, 0.95)[1]
    assert math.isclose(two.low, mean - half95, rel_tol=1e-12) and math.isclose(two.high, mean + half95, rel_tol=1e-12)


def test_one_sided_bounds_are_the_ends_of_the_equal_tailed_interval_at_twice_the_miss():
    # whatever the claims' interval (POINT_INTERVAL), a one-sided bound at level L puts all 1 - L in one tail:
    # it is an end of the two-sided interval at level 2L - 1, from the same resamples
    claim = SimpleNamespace(level=0.9)
    (row,) = OneSidedMeans()(claim, [_point(SAMPLES)])
    wider = point_ci(_point(SAMPLES), level=0.8)
    assert math.isclose(row["mean"], float(np.mean(SAMPLES)), rel_tol=1e-12)
    assert math.isclose(row["ucb"], wider.high, rel_tol=1e-12) and math.isclose(row["lcb"], wider.low, rel_tol=1e-12)
    (ci,) = MeanIntervals()(claim, [_point(SAMPLES)])
    own = point_ci(_point(SAMPLES), level=0.9)
    assert (ci.low, ci.high) == (own.low, own.high) and ci.low < row["lcb"] < row["ucb"] < ci.high


def test_the_bootstrap_distance_is_as_wide_as_the_delta_method_says_far_from_the_target():
    # 400 replicas in 2-D, the target 50 away along e_1: ||mean - target|| ~ 50 + mean of the first
    # coordinate's deviation, whose 95% interval has half-width 1.96 sd / sqrt(n)
    rng = np.random.default_rng(11)
    points = rng.normal(0.0, [2.0, 5.0], size=(400, 2))
    target = np.array([-50.0, 0.0])
    est, low, high = _bootstrap_distance(points, target, 0.95)
    assert math.isclose(est, float(np.linalg.norm(points.mean(axis=0) - target)), rel_tol=1e-12)
    half = stats.norm.ppf(0.975) * points[:, 0].std() / math.sqrt(400)
    # the percentile bootstrap's ends differ from the normal ones by its Monte-Carlo error (2000 resamples:
    # about 3% of a half-width) and the norm's curvature (about 5/50^2 relative)
    assert math.isclose(est - low, half, rel_tol=0.1) and math.isclose(high - est, half, rel_tol=0.1)


def test_the_normal_slope_difference_combines_the_two_standard_errors_at_the_two_sided_quantile():
    grid = [1.0, 2.0, 4.0, 8.0, 16.0]
    rng = np.random.default_rng(3)
    points = [_point(g**slope * np.exp(0.1 * rng.standard_normal(16)), value=g, series=label)
              for label, slope in (("a", -1.0), ("b", -0.5)) for g in grid]
    claim = SimpleNamespace(level=0.9, labels=("a", "b"))
    d = SlopeDifference(interval="normal")(claim, points)
    a, b = d.fits
    assert math.isclose(d.value, a.slope - b.slope, rel_tol=1e-12)
    half = stats.norm.ppf(0.95) * math.sqrt(a.stderr**2 + b.stderr**2)
    assert math.isclose(d.high - d.value, half, rel_tol=1e-12) and math.isclose(d.value - d.low, half, rel_tol=1e-12)
