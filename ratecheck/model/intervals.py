"""Confidence intervals of a scalar statistic from its bootstrap draws, its standard error or both, every
method vectorised over leading batch axes (one fit, or a coverage study's thousands of repetitions:
benchmarks/bench_coverage.py measures each method's coverage through these same functions).

* ``percentile``: the draws' alpha/2 and 1 - alpha/2 quantiles (Efron's percentile interval).
* ``basic``: the percentile interval reflected about the estimate (2 est - quantiles).
* ``normal``: est -+ z * the draws' standard deviation.
* ``t``: est -+ t(df) * an analytic (delta-method) standard error, with Welch-Satterthwaite degrees of
  freedom for a statistic of several independent samples.
* ``studentized``: the bootstrap-t: the quantiles of (draw - est) / (the draw's own standard error) scale
  the analytic standard error (second-order accurate for a smooth statistic of skewed samples).
* ``bca``: the bias-corrected and accelerated percentile interval (Efron 1987): the percentile levels moved
  by the draws' median bias z0 and the jackknife acceleration.

A one-sided bound at ``level`` is the matching end of the two-sided interval at 2 level - 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

METHODS = ("percentile", "basic", "normal", "t", "studentized", "bca")
# what each method reads besides the estimate
_NEEDS = {"percentile": ("boot",), "basic": ("boot",), "normal": ("boot",), "t": ("se", "df"),
          "studentized": ("boot", "se", "boot_se"), "bca": ("boot", "influence")}


def check_method(method: str) -> str:
    """``method`` if it names an interval method, else a ValueError naming the choices."""
    if method not in METHODS:
        raise ValueError(f"interval must be one of {METHODS}, got {method!r}")
    return method


def quantile_rows(ordered: np.ndarray, q: np.ndarray | float) -> np.ndarray:
    """Per batch row, the ``q`` quantile (q broadcast over the batch axes) of the sorted draws ``ordered``
    (..., B), with numpy's default linear interpolation (a scalar q gives np.quantile's numbers)."""
    n = ordered.shape[-1]
    pos = np.broadcast_to(np.clip(np.asarray(q, dtype=float), 0.0, 1.0) * (n - 1), ordered.shape[:-1])
    below = np.floor(pos).astype(np.int64)
    above = np.minimum(below + 1, n - 1)
    lo = np.take_along_axis(ordered, below[..., None], axis=-1)[..., 0]
    hi = np.take_along_axis(ordered, above[..., None], axis=-1)[..., 0]
    # lo + frac * (hi - lo), numpy's form, which keeps lo exactly when frac is 0
    return lo + (pos - below) * (hi - lo)


def welch_df(parts: np.ndarray, dof: np.ndarray) -> np.ndarray:
    """Welch-Satterthwaite degrees of freedom of a sum of independent variance estimates ``parts`` (..., G),
    each on ``dof`` (G,) degrees of freedom: (sum parts)^2 / sum(parts^2 / dof)."""
    total = parts.sum(axis=-1)
    denominator = (parts**2 / dof).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, total**2 / denominator, np.inf)


def interval(method: str, level: float, est: np.ndarray, **inputs: Any) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of one method's interval: ``intervals((method,), level, est, **inputs)[method]``."""
    return intervals((method,), level, est, **inputs)[method]


def intervals(
    methods: Sequence[str],
    level: float,
    est: np.ndarray,
    *,
    side: str = "two-sided",
    boot: np.ndarray | None = None,
    se: np.ndarray | None = None,
    df: np.ndarray | None = None,
    boot_se: np.ndarray | None = None,
    influence: np.ndarray | None = None,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per method, (low, high) of its interval at ``level`` for the estimate ``est`` (batch shape S).

    ``boot`` (S + (B,)): bootstrap draws of the statistic; ``se`` (S): its analytic standard error on ``df``
    (S) degrees of freedom; ``boot_se`` (S + (B,)): each draw's standard error by the same formula;
    ``influence`` (S + (n,)): the jackknife's centred leave-one-out deviations mean(theta_(.)) - theta_(i),
    pooled over the independent samples (each centred within its own sample). ``side`` "upper" or "lower"
    gives a one-sided bound (the other end infinite).
    """
    from scipy.special import ndtr, ndtri, stdtrit  # scipy.stats's functions, without its import time

    given = {"boot": boot, "se": se, "df": df, "boot_se": boot_se, "influence": influence}
    for method in methods:
        missing = [name for name in _NEEDS[check_method(method)] if given[name] is None]
        if missing:
            raise ValueError(f"interval method {method!r} needs {', '.join(missing)}")
    est = np.asarray(est, dtype=float)
    tail = (1.0 - level) / 2 if side == "two-sided" else 1.0 - level
    z = float(ndtri(1.0 - tail))
    # what a method does not read may be absent: placeholders keep one typed name each
    boot = np.asarray(boot if boot is not None else np.zeros(est.shape + (1,)), dtype=float)
    boot_se = np.asarray(boot_se if boot_se is not None else np.ones(boot.shape), dtype=float)
    influence = np.asarray(influence if influence is not None else np.zeros(est.shape + (1,)), dtype=float)
    se = np.asarray(se if se is not None else np.zeros(est.shape), dtype=float)
    df = np.asarray(df if df is not None else np.full(est.shape, np.inf), dtype=float)
    ordered = np.sort(boot, axis=-1)
    out = {}
    for method in methods:
        if method == "percentile":
            low, high = quantile_rows(ordered, tail), quantile_rows(ordered, 1 - tail)
        elif method == "basic":
            low, high = 2 * est - quantile_rows(ordered, 1 - tail), 2 * est - quantile_rows(ordered, tail)
        elif method == "normal":
            half = z * np.std(boot, axis=-1, ddof=1)
            low, high = est - half, est + half
        elif method == "t":
            half = stdtrit(df, 1.0 - tail) * se
            low, high = est - half, est + half
        elif method == "studentized":
            with np.errstate(invalid="ignore", divide="ignore"):
                pivot = (boot - est[..., None]) / boot_se
            # a draw without spread (one replica resampled throughout) has no pivot: it counts as 0
            pivot = np.sort(np.where(boot_se > 0, pivot, 0.0), axis=-1)
            spread = se > 0  # no spread at all: the estimate itself
            low = np.where(spread, est - quantile_rows(pivot, 1 - tail) * se, est)
            high = np.where(spread, est - quantile_rows(pivot, tail) * se, est)
        else:  # bca
            below = np.mean(boot < est[..., None], axis=-1) + 0.5 * np.mean(boot == est[..., None], axis=-1)
            z0 = ndtri(np.clip(below, 0.5 / boot.shape[-1], 1 - 0.5 / boot.shape[-1]))
            num, den = (influence**3).sum(axis=-1), (influence**2).sum(axis=-1)
            with np.errstate(invalid="ignore", divide="ignore"):
                acc = np.where(den > 0, num / (6.0 * np.where(den > 0, den, 1.0) ** 1.5), 0.0)
            low, high = (quantile_rows(ordered, ndtr(z0 + (z0 + s) / (1 - acc * (z0 + s)))) for s in (-z, z))
        if side == "upper":
            low = np.full(est.shape, -np.inf)
        elif side == "lower":
            high = np.full(est.shape, np.inf)
        out[method] = (np.asarray(low, dtype=float), np.asarray(high, dtype=float))
    return out
