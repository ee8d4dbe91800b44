"""Tests of ratecheck.model.fit: slope fits with bootstrap CIs, t intervals, rounds-to-eps, checkpoints.

Every random input comes from an explicitly seeded numpy Generator, so each test is deterministic;
the tolerances are still chosen so that a correct implementation would pass for almost any seed
(each comment gives the size of the margin), while a wrong one fails by a wide margin.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ratecheck.model.fit import MeanCI, SlopeFit, fit_slope, log_rate, log_spaced_checkpoints, mean_ci, rounds_to_eps

GRID = tuple(np.geomspace(10.0, 1e4, 8).tolist())


def power_law_samples(
    rng: np.random.Generator,
    x: tuple[float, ...],
    exponent: float,
    replicas: int,
    sigma: float,
    scale: float = 2.0,
) -> list[np.ndarray]:
    """y = scale * x**exponent * exp(sigma * Z): multiplicative log-normal noise, i.i.d. replicas.

    The noise multiplies every grid point's mean by the same exp(sigma^2/2), so log(mean y) is
    exactly linear in log(x) with slope `exponent`.
    """
    return [scale * xv**exponent * np.exp(sigma * rng.standard_normal(replicas)) for xv in x]


def slope_se(x: tuple[float, ...], replicas: int, sigma: float) -> float:
    """Delta-method standard error of the OLS slope for power_law_samples.

    The relative sd of a log-normal mean of R replicas is sqrt(exp(sigma^2) - 1) / sqrt(R), which is
    the sd of log(mean); OLS divides it by sqrt(sum (log x - mean log x)^2).
    """
    u = np.log(np.asarray(x))
    return math.sqrt(math.expm1(sigma**2) / replicas) / math.sqrt(float(np.sum((u - u.mean()) ** 2)))


# --- fit_slope: point estimate and CI ------------------------------------------------------------


@pytest.mark.parametrize("exponent", [-0.5, -1.0, 1.5])
def test_recovers_known_exponent(exponent: float) -> None:
    rng = np.random.default_rng(20240611)
    replicas, sigma = 64, 0.3
    fit = fit_slope(GRID, power_law_samples(rng, GRID, exponent, replicas, sigma), seed=1)
    se = slope_se(GRID, replicas, sigma)  # about 0.006 here
    # 5 standard errors: a correct estimator misses with probability ~6e-7 (normal tail).
    assert abs(fit.slope - exponent) < 5 * se
    assert fit.ci_low <= exponent <= fit.ci_high
    assert fit.ci_low < fit.slope < fit.ci_high
    # The bootstrap sd should estimate the same se. Its own relative error is ~6% here (sample
    # variances of 64 log-normal replicas, averaged over the grid, plus 2000-draw Monte Carlo), so
    # +-30% is ~5 of its sds, while e.g. forgetting the 1/sqrt(R) of a mean would be off 8x.
    assert 0.7 * se < fit.stderr < 1.3 * se
    # The means are exactly log-linear, so the residual sum of squares is noise only:
    # SS_res / point_sd^2 ~ chi2(G - 2), with point_sd the sd of log(mean) at one grid point, and
    # SS_tot >= about exponent^2 * Sxx. A one-in-a-million chi2 quantile bounds 1 - R^2.
    u = np.log(np.asarray(GRID))
    sxx = float(np.sum((u - u.mean()) ** 2))
    point_sd = math.sqrt(math.expm1(sigma**2) / replicas)
    chi2_max = float(stats.chi2.ppf(1 - 1e-6, len(GRID) - 2))
    assert (1 - fit.r2) * exponent**2 * sxx / point_sd**2 < chi2_max
    assert fit.level == 0.95
    assert fit.x == GRID
    assert fit.replicas_used == (replicas,) * len(GRID)
    # The intercept estimates log(scale) plus the log-normal mean factor sigma^2/2. OLS gives it
    # sd = point_sd * sqrt(1/G + mean(log x)^2 / Sxx) (about 0.037 here); allow 5 of them.
    intercept_sd = point_sd * math.sqrt(1 / u.size + u.mean() ** 2 / sxx)
    assert abs(fit.intercept - (math.log(2.0) + sigma**2 / 2)) < 5 * intercept_sd


def test_ci_coverage_over_many_datasets() -> None:
    """Nominal 95% CIs cover the true exponent in 88%..99% of 200 independent datasets.

    The percentile bootstrap of R=32 replicas is slightly narrow (variance factor 31/32, plus an
    estimated rather than known spread), so its true coverage is about 0.93-0.95 (a 3000-dataset
    run of exactly this setup gave 0.934). For X ~
    Binomial(200, p): P(X < 176 or X > 198) is 5e-4 at p=0.94, 4e-4 at p=0.95 and 4e-3 at p=0.93,
    so the band [0.88, 0.99] leaves a correct CI very little chance to fail. A CI that ignores the
    1/sqrt(R) of a mean covers ~100% (> 0.99) and one that is half as wide covers ~68% (< 0.88).
    """
    rng = np.random.default_rng(7)
    x = tuple(np.geomspace(1.0, 1e3, 6).tolist())
    exponent, replicas, sigma, datasets = -1.0, 32, 0.3, 200
    covered = 0
    for i in range(datasets):
        samples = power_law_samples(rng, x, exponent, replicas, sigma)
        # n_boot=500 keeps the test fast; its Monte Carlo error in the 2.5% quantile is small next
        # to the binomial tolerance.
        fit = fit_slope(x, samples, n_boot=500, seed=i)
        covered += fit.ci_low <= exponent <= fit.ci_high
    assert 0.88 <= covered / datasets <= 0.99


def test_exact_data_gives_exact_slope() -> None:
    x = [1.0, 2.0, 5.0, 10.0, 100.0]
    y = [3.0 * xv**-1.25 for xv in x]
    samples = [np.full(4, yv) for yv in y]  # identical replicas: no noise at all
    fit = fit_slope(x, samples)
    # Only floating-point rounding separates the OLS slope from -1.25.
    assert fit.slope == pytest.approx(-1.25, abs=1e-12)
    assert fit.intercept == pytest.approx(math.log(3.0), abs=1e-12)
    assert fit.r2 == 1.0
    # Every bootstrap draw is the same data, so the CI collapses onto the slope.
    assert fit.ci_low == pytest.approx(-1.25, abs=1e-12)
    assert fit.ci_high == pytest.approx(-1.25, abs=1e-12)
    assert fit.stderr < 1e-12
    np.testing.assert_allclose(fit.predict(x), y, rtol=1e-12)
    np.testing.assert_allclose(fit.means, y, rtol=1e-15)


def test_flat_exact_curve_has_zero_slope_and_r2_one() -> None:
    fit = fit_slope([1.0, 10.0], [np.ones(3), np.ones(3)])
    assert fit.slope == 0.0
    assert fit.r2 == 1.0


def test_nan_and_inf_replicas_are_dropped_and_counted() -> None:
    rng = np.random.default_rng(3)
    clean = power_law_samples(rng, GRID[:4], -1.0, 10, 0.2)
    dirty = [s.copy() for s in clean]
    dirty[0] = np.concatenate([dirty[0], [np.nan, np.nan]])
    dirty[2] = np.concatenate([[np.inf], dirty[2], [np.nan]])
    dirty[3] = dirty[3][:7]  # different replica counts per grid point are allowed
    clean[3] = clean[3][:7]
    fit_dirty = fit_slope(GRID[:4], dirty, seed=5)
    fit_clean = fit_slope(GRID[:4], clean, seed=5)
    assert fit_dirty.replicas_used == (10, 10, 10, 7)
    # Dropping diverged replicas must leave exactly the fit of the clean data (same seed, same R_g).
    assert fit_dirty == fit_clean
    assert fit_dirty.means[0] == pytest.approx(float(np.mean(clean[0])), rel=1e-15)


def test_single_replica_warns_that_ci_ignores_its_noise() -> None:
    samples = [np.array([1.0, 1.1]), np.array([np.nan, 0.5])]
    with pytest.warns(RuntimeWarning, match="one finite replica"):
        fit = fit_slope([1.0, 2.0], samples)
    assert fit.replicas_used == (2, 1)


def test_ci_narrows_as_replicas_grow() -> None:
    rng = np.random.default_rng(11)
    x = tuple(np.geomspace(10.0, 1e4, 16).tolist())
    sigma = 0.3
    widths = []
    for replicas in (16, 64, 256):
        fit = fit_slope(x, power_law_samples(rng, x, -0.5, replicas, sigma), seed=2)
        widths.append(fit.ci_high - fit.ci_low)
        # A 95% CI is about 2 * 1.96 se wide, and se shrinks like 1/sqrt(R). The width's relative
        # sd is at most ~8% (R=16: sample sd of 16 log-normal replicas, pooled over the ~9 effective
        # grid points of a 16-point OLS fit) and the bootstrap shrinks it by sqrt((R-1)/R) >= 0.97,
        # so +-30% is > 3 sds away, while a width that ignores R is off 4x at R=256.
        expected = 2 * 1.959964 * slope_se(x, replicas, sigma)
        assert 0.7 < widths[-1] / expected < 1.3
    assert widths[0] > widths[1] > widths[2]


def test_same_seed_reproduces_other_seed_changes_ci() -> None:
    rng = np.random.default_rng(0)
    samples = power_law_samples(rng, GRID, -1.0, 16, 0.3)
    a, b, c = fit_slope(GRID, samples, seed=4), fit_slope(GRID, samples, seed=4), fit_slope(
        GRID, samples, seed=5
    )
    assert a == b
    assert a.slope == c.slope  # the point estimate does not depend on the bootstrap
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)


def test_to_dict_is_json_and_predict_broadcasts() -> None:
    fit = fit_slope([1.0, 4.0], [np.array([2.0, 2.0]), np.array([1.0, 1.0])])
    d = fit.to_dict()
    assert json.loads(json.dumps(d)) == d
    # every field but the replica draws (arrays kept for slope_difference, not evidence)
    assert set(d) == ({f for f in SlopeFit.__dataclass_fields__} - {"draws"}) | {"decades", "deterministic"}
    assert d["curvature"] is None  # two points: no curvature to read
    assert isinstance(d["x"], list) and isinstance(d["replicas_used"][0], int)
    assert fit.slope == pytest.approx(-0.5, abs=1e-12)
    np.testing.assert_allclose(fit.predict(np.array([[1.0, 16.0]])), [[2.0, 0.5]], rtol=1e-12)


_GOOD = [np.array([1.0, 1.2]), np.array([0.5, 0.6]), np.array([0.2, 0.3])]


@pytest.mark.parametrize(
    ("x", "samples", "kwargs", "match"),
    [
        ([1.0], [np.ones(2)], {}, r"x needs at least 2 distinct"),
        ([2.0, 2.0], [np.ones(2), np.ones(2)], {}, r"x needs at least 2 distinct"),
        ([0.0, 1.0, 2.0], _GOOD, {}, r"x must be finite and positive.*x\[0\]"),
        ([1.0, -2.0, 3.0], _GOOD, {}, r"x must be finite and positive.*x\[1\]"),
        ([1.0, 2.0], _GOOD, {}, r"samples .*lengths must match"),
        ([1.0, 2.0, 3.0], [np.ones(2), np.array([np.nan, np.inf]), np.ones(2)], {},
         r"samples\[1\] at grid value x=2 has no finite values"),
        ([1.0, 2.0, 3.0], [np.ones(2), np.ones(2), np.array([])], {},
         r"samples\[2\] at grid value x=3 has no finite values"),
        ([1.0, 2.0, 3.0], [np.ones(2), np.array([-1.0, 0.5]), np.ones(2)], {},
         r"samples\[1\] at grid value x=2 has mean .* <= 0"),
        ([1.0, 2.0, 3.0], [np.ones(2), np.ones((2, 2)), np.ones(2)], {}, r"samples\[1\].*1-D"),
        ([1.0, 2.0, 3.0], _GOOD, {"level": 0.0}, r"level must lie strictly between 0 and 1"),
        ([1.0, 2.0, 3.0], _GOOD, {"level": 1.0}, r"level must lie strictly between 0 and 1"),
        ([1.0, 2.0, 3.0], _GOOD, {"level": float("nan")}, r"level must lie"),
        ([1.0, 2.0, 3.0], _GOOD, {"n_boot": 99}, r"n_boot must be an integer >= 100"),
        ([1.0, 2.0, 3.0], _GOOD, {"n_boot": 500.0}, r"n_boot must be an integer >= 100"),
    ],
)
def test_fit_slope_rejects_bad_input(x, samples, kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        fit_slope(x, samples, **kwargs)


def test_fit_slope_rejects_mean_indistinguishable_from_zero() -> None:
    # Positive mean, but resamples of {-1, 1.2} often average <= 0, where log(mean) is undefined.
    samples = [np.ones(3), np.array([-1.0, 1.2, -1.0, 1.2, 1.0])]
    with pytest.raises(ValueError, match=r"samples\[1\] at grid value x=2: .*bootstrap"):
        fit_slope([1.0, 2.0], samples)


# --- mean_ci -------------------------------------------------------------------------------------

# Student-t quantiles with 3 degrees of freedom, from a printed table (not from scipy).
T3_975 = 3.182446305284263
T3_95 = 2.353363434801823


def test_mean_ci_two_sided_matches_hand_computation() -> None:
    samples = np.array([1.0, 2.0, np.nan, 3.0, 4.0])
    ci = mean_ci(samples)
    # n = 4, mean = 2.5, s^2 = (2.25 + 0.25 + 0.25 + 2.25) / 3 = 5/3, se = sqrt(5/3) / 2.
    half = T3_975 * math.sqrt(5.0 / 3.0) / 2.0
    assert isinstance(ci, MeanCI)
    assert ci.n == 4 and ci.level == 0.95
    assert ci.mean == pytest.approx(2.5, abs=1e-15)
    assert ci.low == pytest.approx(2.5 - half, abs=1e-12)
    assert ci.high == pytest.approx(2.5 + half, abs=1e-12)


def test_mean_ci_one_sided_bounds() -> None:
    samples = np.array([1.0, 2.0, 3.0, 4.0])
    half = T3_95 * math.sqrt(5.0 / 3.0) / 2.0
    upper = mean_ci(samples, side="upper")
    assert upper.low == -math.inf
    assert upper.high == pytest.approx(2.5 + half, abs=1e-12)
    lower = mean_ci(samples, side="lower")
    assert lower.high == math.inf
    assert lower.low == pytest.approx(2.5 - half, abs=1e-12)


def test_mean_ci_single_sample_knows_nothing() -> None:
    ci = mean_ci(np.array([np.nan, 0.7]))
    assert ci.n == 1 and ci.mean == 0.7
    assert ci.low == -math.inf and ci.high == math.inf


@pytest.mark.parametrize(
    ("samples", "kwargs", "match"),
    [
        (np.array([np.nan, np.nan]), {}, r"samples has no finite values"),
        (np.array([1.0, 2.0]), {"level": 1.5}, r"level must lie strictly between 0 and 1"),
        (np.array([1.0, 2.0]), {"side": "both"}, r"side must be one of"),
    ],
)
def test_mean_ci_rejects_bad_input(samples, kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        mean_ci(samples, **kwargs)


# --- rounds_to_eps -------------------------------------------------------------------------------

CHECKPOINTS = np.array([0, 10, 20, 40, 80])
VALUES = np.array(
    [
        [5.0, 4.0, np.nan],  # mean 4.5
        [np.nan, np.nan, np.nan],  # every replica diverged: never counts as reached
        [0.6, 0.4, np.nan],  # mean exactly 0.5 (the NaN replica is ignored, not counted as 0)
        [0.3, 0.1, np.nan],  # mean 0.2
        [0.05, 0.05, np.nan],  # mean 0.05
    ]
)


def test_rounds_to_eps_hand_made() -> None:
    assert rounds_to_eps(CHECKPOINTS, VALUES, 5.0) == 0
    assert rounds_to_eps(CHECKPOINTS, VALUES, 4.0) == 20  # the all-NaN row at 10 is skipped
    assert rounds_to_eps(CHECKPOINTS, VALUES, 0.5) == 20  # "<= eps" includes equality
    assert rounds_to_eps(CHECKPOINTS, VALUES, 0.49) == 40
    assert rounds_to_eps(CHECKPOINTS, VALUES, 0.05) == 80
    assert rounds_to_eps(CHECKPOINTS, VALUES, 0.01) is None  # never reached
    assert isinstance(rounds_to_eps(CHECKPOINTS, VALUES, 1.0), int)


@pytest.mark.parametrize(
    ("checkpoints", "values", "eps", "match"),
    [
        (CHECKPOINTS, VALUES, 0.0, r"eps must be > 0"),
        (CHECKPOINTS, VALUES, -1.0, r"eps must be > 0"),
        (CHECKPOINTS, VALUES, float("nan"), r"eps must be > 0"),
        (CHECKPOINTS, VALUES[:4], 1.0, r"values must have shape \(C, R\)"),
        (CHECKPOINTS, VALUES[:, 0], 1.0, r"values must have shape \(C, R\)"),
        (CHECKPOINTS[:, None], VALUES, 1.0, r"checkpoints must be 1-D"),
        (np.array([0, 10, 10, 40, 80]), VALUES, 1.0, r"checkpoints must be strictly increasing"),
        (np.array([0, 10, 20.5, 40, 80]), VALUES, 1.0, r"checkpoints must be integers"),
    ],
)
def test_rounds_to_eps_rejects_bad_input(checkpoints, values, eps, match) -> None:
    with pytest.raises(ValueError, match=match):
        rounds_to_eps(checkpoints, values, eps)


# --- log_spaced_checkpoints ----------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(rounds=st.integers(1, 10**9), count=st.integers(2, 300))
def test_log_spaced_checkpoints_properties(rounds: int, count: int) -> None:
    marks = log_spaced_checkpoints(rounds, count)
    assert np.issubdtype(marks.dtype, np.integer)
    assert marks[0] == 0 and marks[-1] == rounds
    assert np.all(np.diff(marks) > 0)
    assert marks.size <= count + 1
    assert marks[1] == 1  # the log grid starts at round 1
    # Roughly log-spaced: between consecutive positive marks the ratio never exceeds the geometric
    # step by more than what rounding to integers can add (+1 on the larger, -0.5 on the smaller).
    step = rounds ** (1.0 / (count - 1))
    pos = marks[1:].astype(float)
    assert np.all(pos[1:] <= step * (pos[:-1] + 0.5) + 1.0)


def test_log_spaced_checkpoints_example() -> None:
    assert log_spaced_checkpoints(1000, 4).tolist() == [0, 1, 10, 100, 1000]
    assert log_spaced_checkpoints(1, 5).tolist() == [0, 1]
    assert log_spaced_checkpoints(np.int64(3), 2).tolist() == [0, 1, 3]


@pytest.mark.parametrize(
    ("rounds", "count", "match"),
    [
        (0, 5, r"rounds must be >= 1"),
        (10, 1, r"count must be >= 2"),
        (10.5, 5, r"rounds and count must be integers"),
        (10, 5.0, r"rounds and count must be integers"),
    ],
)
def test_log_spaced_checkpoints_rejects_bad_input(rounds, count, match) -> None:
    with pytest.raises(ValueError, match=match):
        log_spaced_checkpoints(rounds, count)


# --- curvature (regime change) and per-round log rates -----------------------------------------


def test_curvature_is_zero_for_a_power_law_and_reads_a_bend() -> None:
    x = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
    straight = fit_slope(x, [np.full(4, v**-0.5) for v in x])
    assert straight.curvature == pytest.approx(0.0, abs=1e-12) and straight.deterministic
    assert straight.decades == pytest.approx(math.log10(32.0))
    # y = x^-1 + 0.1: the local slope goes from about -0.9 at x = 1 to about -0.24 at x = 32
    bent = fit_slope(x, [np.full(4, v**-1.0 + 0.1) for v in x])
    assert bent.curvature > 0.5 and bent.curvature_low == bent.curvature_high == bent.curvature


def test_curvature_ci_covers_zero_for_noisy_power_laws() -> None:
    rng = np.random.default_rng(3)
    fit = fit_slope(GRID, power_law_samples(rng, GRID, -0.5, 32, 0.3))
    assert fit.curvature_low < 0 < fit.curvature_high and not fit.deterministic


def test_log_rate_reads_the_contraction_per_round_and_marks_bad_replicas() -> None:
    t = np.arange(100, 200, 10)
    vals = np.column_stack([3.0 * 0.99**t, 0.5 * 0.9**t, np.where(t > 150, np.nan, 1.0)])
    rates = log_rate(t, vals)
    np.testing.assert_allclose(rates[:2], [math.log(0.99), math.log(0.9)], rtol=1e-12)
    assert math.isnan(rates[2])
