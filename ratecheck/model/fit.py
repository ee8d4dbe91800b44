"""Statistics that turn replica measurements into checkable numbers.

* ``fit_slope``: the empirical exponent of a power law y ~ C x^slope, with a bootstrap-t CI over
  replicas, to compare with a theorem's rate; also the fit's R^2 and its curvature (how much the
  local slope changes across the grid, with the same CI), the evidence of a regime change. Both CIs'
  coverage is measured by benchmarks/bench_coverage.py (SLOPE_INTERVAL below).
* ``log_rate``: per replica, the fitted log-contraction per round (slope of log y against the round
  on a linear axis), to compare a linear rate with an exact spectral value.
* ``mean_ci``: a Student-t interval (or one-sided bound) for a replica mean.
* ``rounds_to_eps``: the first checkpoint where the replica mean falls below a tolerance.
* ``log_spaced_checkpoints``: the rounds at which a run records its measurements.

Diverged replicas are marked NaN (or inf) by the engine and are dropped here, never imputed.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .intervals import check_method, welch_df
from .intervals import interval as interval_of

SIDES = ("two-sided", "upper", "lower")
# The slope's, the curvature's and a slope difference's interval method (ratecheck.model.intervals), measured
# by benchmarks/bench_coverage.py (4000 repetitions a scenario, 5 log-spaced points, level 0.95, 16 replicas,
# mean-1 replica noise from Gaussian to Pareto(2.5)): the percentile bootstrap (the method before) covers
# 92.2-93.6% for the slope and 91.9-93.4% for the curvature, more than 3 MC s.e. (0.4%) below nominal on
# every noise; the bootstrap-t ("studentized") covers 94.1-95.2% and 94.2-94.8% on Gaussian and chi-square
# replicas (within 3 s.e.), 92.2-93.6% and 91.5-93.1% on lognormal and Pareto ones.
SLOPE_INTERVAL = "studentized"
# The claims' interval of a grid point's mean (ratecheck.claims.statistics.point_ci and the claims' views;
# mean_ci itself keeps Student-t, "t", for its other callers). Same study: at 16 replicas Student-t covers
# 94.8% on Gaussian replicas but 89.1% on chi-square(1), 86.1% on lognormal(1), 81.5% on Pareto (a one-sided
# upper bound 85.9%, 82.2%, 77.5%); the bootstrap-t 94.6%, 92.2%, 89.2% (93.4%, 89.0%, 85.7%).
POINT_INTERVAL = "studentized"
# below this many finite replicas a bootstrap interval of a mean is Student-t's: with 2 replicas every resample
# either has no spread or is the sample again, and the bootstrap-t's pivots are all 0
MIN_BOOTSTRAP = 5


@dataclass(frozen=True)
class SlopeFit:
    """OLS fit of log(mean y) against log(x), with a replica-bootstrap CI of the slope (method ``interval``)."""

    slope: float  # OLS slope of log(mean y) against log(x) over grid points
    intercept: float  # in natural log
    ci_low: float  # CI of the slope (method ``interval``)
    ci_high: float
    level: float  # e.g. 0.95
    r2: float  # R^2 of the OLS fit on the replica-mean curve
    stderr: float  # bootstrap standard deviation of the slope
    x: tuple[float, ...]  # grid values used
    means: tuple[float, ...]  # replica mean of y per grid point (NaN-excluded)
    replicas_used: tuple[int, ...]  # finite replicas per grid point
    # change of the local slope across the grid: d(log y)/d(log x) at the largest x minus at the
    # smallest, from a quadratic fit in log x (0 for a power law; NaN with fewer than 3 points)
    curvature: float = math.nan
    curvature_low: float = math.nan  # CI of the curvature (method ``interval``)
    curvature_high: float = math.nan
    exact: bool = False  # issue #8: every mean is an exact expectation (no Monte-Carlo error)
    interval: str = SLOPE_INTERVAL  # the CIs' method (ratecheck.model.intervals)
    # the replica pieces the CIs came from, for a contrast with another fit (slope_difference)
    draws: LogMeanDraws | None = field(default=None, repr=False, compare=False)

    @property
    def decades(self) -> float:
        """log10 of the grid's range x_max / x_min."""
        return float(math.log10(max(self.x) / min(self.x)))

    @property
    def deterministic(self) -> bool:
        """True when the replicas carry no spread (every bootstrap draw gives the same slope)."""
        return self.ci_low == self.ci_high

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (plain floats, ints and lists)."""
        return {
            "slope": float(self.slope),
            "intercept": float(self.intercept),
            "ci_low": float(self.ci_low),
            "ci_high": float(self.ci_high),
            "level": float(self.level),
            "r2": float(self.r2),
            "stderr": float(self.stderr),
            "x": [float(v) for v in self.x],
            "means": [float(v) for v in self.means],
            "replicas_used": [int(v) for v in self.replicas_used],
            # None where undefined (fewer than 3 points): JSON has no NaN
            "curvature": _finite_or_none(self.curvature),
            "curvature_low": _finite_or_none(self.curvature_low),
            "curvature_high": _finite_or_none(self.curvature_high),
            "decades": self.decades,
            "deterministic": self.deterministic,
            "exact": self.exact,
            "interval": self.interval,
        }

    def predict(self, x: Any) -> np.ndarray:
        """The fitted power law exp(intercept) * x**slope."""
        return math.exp(self.intercept) * np.asarray(x, dtype=float) ** self.slope


@dataclass(frozen=True)
class LogMeanDraws:
    """One series' replica pieces for the CI of a linear contrast sum_g w_g log(mean_g) of its grid points'
    means (a slope, a curvature; with another series, a slope difference): the estimate's, the delta-method
    standard error's, the bootstrap draws' and the jackknife's (ratecheck.model.intervals reads them)."""

    log_means: np.ndarray  # (G,)
    rel: np.ndarray  # (G,) squared relative standard error s^2 / (R mean^2) of each mean (0 with one replica)
    dof: np.ndarray  # (G,) its degrees of freedom R - 1 (1 with one replica: it adds nothing)
    boot: np.ndarray  # (B, G) log means of the bootstrap draws
    boot_rel: np.ndarray  # (B, G) each draw's squared relative standard error
    jack: tuple[np.ndarray, ...]  # per grid point, log(leave-one-out mean) - log(mean) (zeros: one replica)

    def contrast(self, w: np.ndarray) -> dict[str, Any]:
        """The interval inputs of theta = sum_g w_g log(mean_g)."""
        parts = self.rel * w**2
        jack = [wg * j for wg, j in zip(w, self.jack)]
        return {"est": float(self.log_means @ w), "boot": self.boot @ w, "se": math.sqrt(float(parts.sum())),
                "parts": parts, "dof": self.dof, "boot_se": np.sqrt(self.boot_rel @ w**2),
                "influence": np.concatenate([j.mean() - j for j in jack])}


def contrast_interval(method: str, level: float, *pieces: dict[str, Any]) -> tuple[float, float]:
    """The CI of sum_i sign_i theta_i over independent series' contrasts (``pieces`` of LogMeanDraws.contrast,
    the first counted +, the others -). Series after the first pair their draws shifted by one, so that two
    series bootstrapped from the same seed still resample independently."""
    signs = [1.0] + [-1.0] * (len(pieces) - 1)
    est = sum(s * p["est"] for s, p in zip(signs, pieces))
    if method == "normal":  # the draws' standard deviations combined, as independent (no pairing needed)
        from scipy.special import ndtri

        half = float(ndtri(0.5 + level / 2)) * math.sqrt(sum(float(np.var(p["boot"], ddof=1)) for p in pieces))
        return est - half, est + half
    boot = sum(s * np.roll(p["boot"], i) for i, (s, p) in enumerate(zip(signs, pieces)))
    boot_se = np.sqrt(sum(np.roll(p["boot_se"], i) ** 2 for i, p in enumerate(pieces)))
    parts = np.concatenate([p["parts"] for p in pieces])
    low, high = interval_of(method, level, np.float64(est), boot=boot, boot_se=boot_se,
                         se=np.float64(math.sqrt(float(parts.sum()))),
                         df=welch_df(parts, np.concatenate([p["dof"] for p in pieces])),
                         influence=np.concatenate([s * p["influence"] for s, p in zip(signs, pieces)]))
    return float(low), float(high)


class NonPositiveMean(ValueError):
    """A log fit of samples whose mean is zero or below (a measure at its exact 0 plus round-off):
    the fit has no answer, which a claim reports as INCONCLUSIVE with this reason."""


def _finite_or_none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _check_level(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:  # also rejects NaN
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    return level


def fit_slope(
    x: Sequence[float],
    samples: Sequence[np.ndarray],
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
    exact: bool | Sequence[bool] = False,
    interval: str = SLOPE_INTERVAL,
) -> SlopeFit:
    """Fit log(mean y) = intercept + slope * log(x) and bootstrap the slope over replicas.

    ``samples[g]`` holds the per-replica measurements at ``x[g]``; non-finite entries (diverged
    replicas) are dropped. Each bootstrap draw resamples the finite replicas of every grid point
    independently with replacement (replicas at different grid points are independent runs), averages
    them and refits. The slope and the curvature are linear contrasts sum_g w_g log(mean_g); ``interval``
    (ratecheck.model.intervals.METHODS) turns the draws into the CI: "studentized" (the default,
    SLOPE_INTERVAL) is the bootstrap-t, the quantiles of (draw - estimate) / (the draw's delta-method
    standard error, sqrt(sum_g w_g^2 s_g^2 / (R_g mean_g^2))) scaling the estimate's; "percentile" (the
    method before) the draws' quantiles, which at 16 replicas cover 92-94% at a nominal 95%.

    The CI reflects replica noise only: a curve that is not a power law over the grid shows up in
    ``r2``, not in the CI. Measured coverage and its limits: SLOPE_INTERVAL's comment (heavy tails and a
    replica spread that changes along the grid still undercover: log(mean) is biased by -cv^2/(2R)).

    ``exact`` (one flag, or one per grid point) marks samples that are exact expectations (issue #8:
    one value each, no noise): such a point is not warned about, and it adds nothing to the CI.
    """
    level = _check_level(level)
    check_method(interval)
    try:
        n_boot = operator.index(n_boot)
    except TypeError:
        raise ValueError(f"n_boot must be an integer >= 100, got {n_boot!r}") from None
    if n_boot < 100:
        # Fewer draws make the percentile endpoints mostly Monte Carlo noise.
        raise ValueError(f"n_boot must be an integer >= 100, got {n_boot}")

    grid = np.asarray(x, dtype=float)
    if grid.ndim != 1:
        raise ValueError(f"x must be a 1-D sequence of grid values, got shape {grid.shape}")
    if len(samples) != grid.size:
        raise ValueError(
            f"samples must have one array per grid point: len(samples)={len(samples)} "
            f"but len(x)={grid.size} (lengths must match)"
        )
    bad = ~(np.isfinite(grid) & (grid > 0))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"x must be finite and positive (log-log fit), got x[{i}]={grid[i]!r}")
    if np.unique(grid).size < 2:
        raise ValueError(f"x needs at least 2 distinct grid points for a slope, got {grid.tolist()}")

    flags = [bool(exact)] * grid.size if isinstance(exact, (bool, np.bool_)) else [bool(e) for e in exact]
    if len(flags) != grid.size:
        raise ValueError(f"exact must be one flag or one per grid point, got {len(flags)} for {grid.size} points")
    finite: list[np.ndarray] = []
    for g, raw in enumerate(samples):
        arr = np.asarray(raw, dtype=float)
        if arr.ndim != 1:
            raise ValueError(
                f"samples[{g}] (x={grid[g]:g}) must be a 1-D array of replicas, got shape {arr.shape}"
            )
        kept = arr[np.isfinite(arr)]
        if kept.size == 0:
            raise ValueError(
                f"samples[{g}] at grid value x={grid[g]:g} has no finite values "
                f"(every replica diverged); each grid point needs at least one finite sample"
            )
        if kept.mean() <= 0:
            raise NonPositiveMean(
                f"samples[{g}] at grid value x={grid[g]:g} has mean {kept.mean():g} <= 0; "
                f"log(mean) is undefined, so samples must have a positive mean"
            )
        if kept.size == 1 and not flags[g]:
            warnings.warn(
                f"only one finite replica at x={grid[g]:g}: the bootstrap cannot see its noise, "
                f"so the slope CI is too narrow",
                RuntimeWarning,
                stacklevel=2,
            )
        finite.append(kept)

    means = np.array([s.mean() for s in finite])
    u = np.log(grid)
    uc = u - u.mean()
    sxx = float(uc @ uc)
    v = np.log(means)
    slope = float(uc @ (v - v.mean()) / sxx)
    intercept = float(v.mean() - slope * u.mean())
    ss_res = float(np.sum((v - (intercept + slope * u)) ** 2))
    ss_tot = float(np.sum((v - v.mean()) ** 2))
    # A flat curve fitted exactly (ss_tot == 0) is a perfect fit, not 0/0.
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0

    rng = np.random.default_rng(seed)
    boot_log_means = np.empty((n_boot, grid.size))
    boot_rel = np.zeros((n_boot, grid.size))
    for g, kept in enumerate(finite):
        idx = rng.integers(0, kept.size, size=(n_boot, kept.size))
        boot_means = kept[idx].mean(axis=1)
        if (boot_means <= 0).any():
            # Dropping such draws would hide exactly the uncertainty the CI is meant to show
            # (a mean indistinguishable from 0 has an unbounded log), so refuse instead.
            count = int((boot_means <= 0).sum())
            raise NonPositiveMean(
                f"samples[{g}] at grid value x={grid[g]:g}: {count} of {n_boot} bootstrap "
                f"resamples have mean <= 0, so log(mean) is undefined; samples must have a mean "
                f"clearly above 0"
            )
        boot_log_means[:, g] = np.log(boot_means)
        if kept.size > 1:
            boot_rel[:, g] = kept[idx].var(axis=1, ddof=1) / (kept.size * boot_means**2)
    draws = _draws(finite, means, boot_log_means, boot_rel)
    # the slope is the contrast uc / sxx of the log means
    slope_pieces = draws.contrast(uc / sxx)
    ci_low, ci_high = contrast_interval(interval, level, slope_pieces)
    if ci_high - ci_low <= 1e-12 * max(1.0, abs(slope)):  # no spread: identical replicas
        ci_low = ci_high = slope
    curv, curv_low, curv_high = math.nan, math.nan, math.nan
    if np.unique(grid).size >= 3:
        # quadratic in the centred log x: the local slope is b + 2 c u, so it changes by
        # 2 c (u_max - u_min) across the grid
        design = np.column_stack([np.ones_like(uc), uc, uc**2])
        weights = np.linalg.pinv(design)[2] * 2.0 * float(uc.max() - uc.min())
        curv = float(weights @ v)
        curv_low, curv_high = contrast_interval(interval, level, draws.contrast(weights))
        if curv_high - curv_low <= 1e-12 * max(1.0, abs(curv)):
            curv_low = curv_high = curv

    return SlopeFit(
        slope=slope,
        intercept=intercept,
        ci_low=float(ci_low),
        ci_high=float(ci_high),
        level=level,
        r2=float(r2),
        stderr=float(np.std(slope_pieces["boot"], ddof=1)),
        x=tuple(float(v) for v in grid),
        means=tuple(float(m) for m in means),
        replicas_used=tuple(int(s.size) for s in finite),
        curvature=curv,
        curvature_low=curv_low,
        curvature_high=curv_high,
        exact=all(flags),
        interval=interval,
        draws=draws,
    )


def _draws(finite: list[np.ndarray], means: np.ndarray, boot_log_means: np.ndarray,
           boot_rel: np.ndarray) -> LogMeanDraws:
    """The fit's replica pieces (LogMeanDraws) from its finite samples and bootstrap draws."""
    sizes = np.array([s.size for s in finite], dtype=float)
    spread = np.array([s.var(ddof=1) if s.size > 1 else 0.0 for s in finite])
    loo = [(s.sum() - s) / (s.size - 1) if s.size > 1 else np.ones(1) for s in finite]
    # a leave-one-out mean <= 0 has no log: that point then adds nothing to BCa's acceleration
    jack = tuple(np.log(l_) - math.log(m) if (l_ > 0).all() and s.size > 1 else np.zeros(s.size)
                 for s, l_, m in zip(finite, loo, means))
    return LogMeanDraws(log_means=np.log(means), rel=spread / (sizes * means**2), dof=np.maximum(sizes - 1, 1.0),
                        boot=boot_log_means, boot_rel=boot_rel, jack=jack)


def slope_difference(a: SlopeFit, b: SlopeFit, level: float, interval: str | None = None) -> tuple[float, float, float]:
    """(slope A - slope B, low, high): the CI of the difference of two independent series' slopes by
    ``interval`` (default: A's method; ``"normal"`` is est -+ z * hypot of the two bootstrap standard
    deviations, the method before the coverage study)."""
    diff = a.slope - b.slope
    pieces = []
    for f in (a, b):
        if f.draws is None:
            raise ValueError("slope_difference needs fits made by fit_slope (their replica draws)")
        pieces.append(f.draws.contrast(_slope_weights(f.x)))
    low, high = contrast_interval(check_method(interval or a.interval), level, *pieces)
    return diff, low, high


def _slope_weights(x: tuple[float, ...]) -> np.ndarray:
    u = np.log(np.asarray(x, dtype=float))
    uc = u - u.mean()
    return uc / float(uc @ uc)


def log_rate(rounds: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per replica, the OLS slope of log(value) against the round (linear axis): the fitted
    log-contraction per round of a linearly converging measure (negative when it falls).

    ``values`` is (C, R) at ``rounds`` (C,); a replica with a non-finite or non-positive value
    in the window gives NaN (it diverged or reached exactly 0: no rate to read).
    """
    t = np.asarray(rounds, dtype=float)
    vals = np.asarray(values, dtype=float)
    if t.ndim != 1 or vals.ndim != 2 or vals.shape[0] != t.size:
        raise ValueError(f"values must be (C, R) with C = len(rounds) = {t.size}, got shape {vals.shape}")
    if t.size < 2:
        raise ValueError(f"a rate needs at least 2 rounds, got {t.size}")
    ok = np.all(np.isfinite(vals) & (vals > 0), axis=0)
    logs = np.log(np.where(ok, vals, 1.0))
    tc = t - t.mean()
    rates = (tc @ (logs - logs.mean(axis=0))) / float(tc @ tc)
    return np.where(ok, rates, np.nan)


@dataclass(frozen=True)
class MeanCI:
    """A confidence interval for a mean; a one-sided bound has the other end infinite."""

    mean: float
    low: float
    high: float
    level: float
    n: int


def mean_ci(samples: np.ndarray, *, level: float = 0.95, side: str = "two-sided", interval: str = "t",
            n_boot: int = 2000, seed: int = 0) -> MeanCI:
    """Confidence interval for the mean of the finite entries of ``samples``: Student-t by default.

    ``side="upper"`` gives a one-sided upper bound in ``high`` (``low`` = -inf); ``"lower"`` gives a
    lower bound in ``low`` (``high`` = +inf). With a single finite sample the spread is unknown, so
    nothing is known about the mean beyond that value: both ends are infinite. ``interval`` names another
    method of ratecheck.model.intervals (a bootstrap one draws ``n_boot`` resamples from ``seed``).
    """
    level = _check_level(level)
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    check_method(interval)
    arr = np.asarray(samples, dtype=float).ravel()
    kept = arr[np.isfinite(arr)]
    n = int(kept.size)
    if n == 0:
        raise ValueError("samples has no finite values; a mean needs at least one")
    mean = float(kept.mean())
    if n == 1:
        return MeanCI(mean=mean, low=-math.inf, high=math.inf, level=level, n=1)
    se = float(kept.std(ddof=1)) / math.sqrt(n)
    if interval != "t" and n < MIN_BOOTSTRAP:  # too few replicas for resamples to show the spread (review:
        interval = "t"                          # 2 replicas gave a bootstrap-t interval of width 0)
    if interval == "t":
        # Student's t quantile: scipy.special's stdtrit is what scipy.stats.t.ppf computes, without
        # scipy.stats's import (about a second of every check)
        from scipy.special import stdtrit

        tail = level if side != "two-sided" else 0.5 + level / 2
        half = float(stdtrit(n - 1, tail)) * se
        low, high = mean - half, mean + half
    else:
        draws = kept[np.random.default_rng(seed).integers(0, n, size=(n_boot, n))]
        loo = (kept.sum() - kept) / (n - 1)
        low_, high_ = interval_of(interval, level, np.float64(mean), side=side, boot=draws.mean(axis=1), se=np.float64(se),
                                  df=np.float64(n - 1), boot_se=draws.std(axis=1, ddof=1) / math.sqrt(n),
                                  influence=loo.mean() - loo)
        low, high = float(low_), float(high_)
        if se == 0:  # no spread: every method gives the mean itself
            low = high = mean
    if side == "upper":
        low = -math.inf
    elif side == "lower":
        high = math.inf
    return MeanCI(mean=mean, low=low, high=high, level=level, n=n)


def rounds_to_eps(checkpoints: np.ndarray, values: np.ndarray, eps: float) -> int | None:
    """The first checkpoint whose replica mean is <= eps, or None if it is never reached.

    ``values[c, r]`` is replica r's measure at ``checkpoints[c]``. Diverged replicas (NaN, and inf
    for consistency with ``fit_slope``) are left out of the mean; a checkpoint where every replica
    diverged counts as not reached.
    """
    eps = float(eps)
    if not eps > 0:  # also rejects NaN
        raise ValueError(f"eps must be > 0, got {eps!r}")
    marks = np.asarray(checkpoints)
    vals = np.asarray(values, dtype=float)
    if marks.ndim != 1:
        raise ValueError(f"checkpoints must be 1-D (C,), got shape {marks.shape}")
    if vals.ndim != 2 or vals.shape[0] != marks.size:
        raise ValueError(
            f"values must have shape (C, R) with C = len(checkpoints) = {marks.size}, "
            f"got shape {vals.shape}"
        )
    if marks.size and not np.all(np.asarray(marks, dtype=float) == np.round(marks)):
        raise ValueError(f"checkpoints must be integers (rounds completed), got {marks.tolist()}")
    if np.any(np.diff(marks) <= 0):
        raise ValueError(f"checkpoints must be strictly increasing, got {marks.tolist()}")
    ok = np.isfinite(vals)
    count = ok.sum(axis=1)
    # Mean by hand rather than np.nanmean: an all-NaN row is an expected case, not a warning.
    mean = np.where(ok, vals, 0.0).sum(axis=1) / np.maximum(count, 1)
    reached = (count > 0) & (mean <= eps)
    if not reached.any():
        return None
    return int(marks[int(np.argmax(reached))])


def log_spaced_checkpoints(rounds: int, count: int) -> np.ndarray:
    """Sorted unique rounds: 0 and up to ``count`` roughly log-spaced values in [1, rounds].

    Always contains 0 (the initial point) and ``rounds`` (the end of the run); at most count+1 entries,
    fewer where small rounds coincide after rounding.
    """
    try:
        rounds = operator.index(rounds)
        count = operator.index(count)
    except TypeError:
        raise ValueError(
            f"rounds and count must be integers, got rounds={rounds!r}, count={count!r}"
        ) from None
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    if count < 2:
        raise ValueError(f"count must be >= 2 (to hold both 1 and rounds), got {count}")
    points = np.rint(np.geomspace(1.0, float(rounds), count)).astype(np.int64)
    # Pin the ends: float rounding of a huge `rounds` must not move the last checkpoint.
    points[0], points[-1] = 1, rounds
    points = np.clip(points, 1, rounds)
    return np.concatenate([np.zeros(1, dtype=np.int64), np.unique(points)])
