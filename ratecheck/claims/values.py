"""Claim kinds on grid-point means: bounds, thresholds, closed-form values, intervals, limits, rates."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..model.fit import log_rate
from ..trace import RunConfig, Trace
from .base import Claim
from .model import PointResult, Verdict, _first_divergence, _fmt
from .power import SCALE, Constraint, power
from .rules import _compare_to_ceiling, exact_or_monte_carlo
from .statistics import _bootstrap_distance, _deterministic_note, _ratio, deterministic, point_ci, relative
from .views import NoRule, Piece, Statistic
from .views_values import BoundCurves, Distance, DistanceTolerance, IntervalSides, LogRate, PredictionBand, ThresholdLine


@dataclass(frozen=True, kw_only=True)
class BoundClaim(Claim):
    """E[measure] <= bound (one version of the theorem's bound) at every grid point.

    PASS when the upper confidence bound of the mean is below the bound everywhere; FAIL when the
    lower confidence bound exceeds it somewhere; INCONCLUSIVE otherwise.
    """

    version: str
    kind: str = "bound"
    statistic_view: ClassVar[Statistic] = Statistic()
    rule_view: ClassVar[Piece] = BoundCurves()

    def _validate(self) -> None:
        if self.theorem is None or self.bindings is None:
            raise ValueError(f"bound claim {self.id} needs a theorem and bindings")
        self.theorem.bound(self.version)  # fail early on an unknown version

    def _decide(self, points):
        rows, above, unsure = _compare_to_ceiling(points, self.level, lambda p: p.evaluation.bounds[self.version])
        for p, row in zip(points, rows):
            row["bound"] = row.pop("ceiling")
            row["ratio"] = row["mean"] / row["bound"]
            row["all_bounds"] = dict(p.evaluation.bounds)
        evidence = {"version": self.version, "rows": rows}
        worst = max(rows, key=lambda r: r["ratio"])
        tag = f"bound '{self.version}'; worst mean/bound = {worst['ratio']:.3g} at {self.vary}={_fmt(worst['value'])}"
        tag += _deterministic_note(points)
        if above:
            where = ", ".join(_fmt(v) for v in above)
            verdict, reason = Verdict.FAIL, f"measured mean exceeds {tag} (confidently at {self.vary}={where})"
        elif unsure:
            where = ", ".join(_fmt(v) for v in unsure)
            verdict, reason = Verdict.INCONCLUSIVE, f"upper confidence bound crosses {tag} at {self.vary}={where}"
        else:
            verdict, reason = Verdict.PASS, f"upper confidence bound below {tag}"
        return verdict, reason, {**evidence, "power": _ceiling_power(rows, "bound", "relative change of the mean "
                                                                     "(and of mean/bound)", verdict)}


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
    statistic_view: ClassVar[Statistic] = Statistic()
    rule_view: ClassVar[Piece] = PredictionBand()

    def _decide(self, points):
        rows, outside, unsure = [], [], []
        for p in points:
            ci = point_ci(p, level=self.level)
            pred = float(self.predict(p.config))
            lo, hi = pred * (1 - self.rel_tolerance), pred * (1 + self.rel_tolerance)
            rows.append({"value": p.value, "mean": ci.mean, "low": ci.low, "high": ci.high,
                         "predicted": pred, "ratio": ci.mean / pred})
            if ci.high < lo or ci.low > hi:
                outside.append(p.value)
            elif ci.low < lo or ci.high > hi:
                unsure.append(p.value)
        evidence = {"prediction": self.prediction, "rel_tolerance": self.rel_tolerance, "rows": rows}
        worst = max(rows, key=lambda r: abs(r["ratio"] - 1))
        tag = (f"{self.prediction} within {relative(self.rel_tolerance)}; worst mean/predicted = "
               f"{_ratio(worst['ratio'], self.rel_tolerance)} "
               f"at {self.vary}={_fmt(worst['value'])}") + _deterministic_note(points)
        if outside:
            verdict, reason = Verdict.FAIL, f"CI outside {tag} (at {self.vary}={', '.join(map(_fmt, outside))})"
        elif unsure:
            verdict, reason = Verdict.INCONCLUSIVE, f"CI straddles the band of {tag}: more replicas needed"
        else:
            verdict, reason = Verdict.PASS, f"CI inside {tag}"
        bands = [Constraint(r["low"], r["high"], r["predicted"] * (1 - self.rel_tolerance),
                            r["predicted"] * (1 + self.rel_tolerance)) for r in rows]
        return verdict, reason, {**evidence, "power": power(bands, SCALE, "relative change of the mean "
                                                            "(and of mean/predicted)", verdict)}


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
    statistic_view: ClassVar[Statistic] = Distance()
    rule_view: ClassVar[Piece] = DistanceTolerance()

    def points(self, profile, traces):
        out = []
        for value, config in zip(self.values(profile), self.own_runs(profile)):
            trace = traces[config.key()]
            final = trace.final[self.point]
            final = final[np.isfinite(final).all(axis=1)]
            nominal = self.target(config)
            target = nominal if self.target_of_run is None else self.target_of_run(config, trace)
            est, low, high = _bootstrap_distance(final, target, self.level)
            if trace.exact and final.shape[0] == 1:  # issue #8: the mean itself, no bootstrap
                est = low = high = float(np.linalg.norm(final[0] - target))
            per_replica = np.linalg.norm(final - target, axis=1)
            stats = {"distance": est, "low": low, "high": high}
            if self.target_of_run is not None:
                stats["target_offset"] = float(np.linalg.norm(target - nominal))
            out.append(PointResult(value, config, per_replica, trace.diverged_count, stats=stats,
                                   first_divergence=_first_divergence(trace), trace=trace))
        return out

    def _decide(self, points):
        rows = [{"value": p.value, **p.stats} for p in points]
        evidence = {"target": self.target_name, "tolerance": self.tolerance, "rows": rows}
        if all(r["high"] <= self.tolerance for r in rows):
            verdict, reason = Verdict.PASS, f"distance to {self.target_name} <= {self.tolerance:g} with confidence"
        elif any(r["low"] > self.tolerance for r in rows):
            verdict, reason = Verdict.FAIL, f"distance to {self.target_name} > {self.tolerance:g} with confidence"
        else:
            verdict, reason = Verdict.INCONCLUSIVE, f"distance CI straddles the tolerance {self.tolerance:g}"
        bands = [Constraint(r["low"], r["high"], b=self.tolerance) for r in rows]
        return verdict, reason, {**evidence, "power": power(bands, SCALE, f"relative change of the distance to "
                                                            f"{self.target_name}", verdict)}


@dataclass(frozen=True, kw_only=True)
class ThresholdClaim(Claim):
    """E[measure] <= a fixed threshold at every grid point, e.g. "exactly 0 at P = n" to machine precision.

    PASS when the upper confidence bound of the mean is below the threshold everywhere; FAIL when the
    lower confidence bound exceeds it somewhere; INCONCLUSIVE otherwise. No theorem evaluation needed.
    """

    threshold: float
    kind: str = "threshold"
    statistic_view: ClassVar[Statistic] = Statistic()
    rule_view: ClassVar[Piece] = ThresholdLine()

    def _decide(self, points):
        rows, above, unsure = _compare_to_ceiling(points, self.level, lambda p: self.threshold)
        for row in rows:
            row["threshold"] = row.pop("ceiling")
        evidence = {"threshold": self.threshold, "rows": rows}
        worst = max(rows, key=lambda row: row["mean"])
        tag = f"threshold {self.threshold:g}; largest mean {worst['mean']:.3g} at {self.vary}={_fmt(worst['value'])}"
        tag += _deterministic_note(points)
        if above:
            verdict, reason = Verdict.FAIL, f"mean exceeds the {tag} with confidence"
        elif unsure:
            verdict, reason = Verdict.INCONCLUSIVE, f"upper confidence bound crosses the {tag}"
        else:
            verdict, reason = Verdict.PASS, f"upper confidence bound below the {tag}"
        return verdict, reason, {**evidence, "power": _ceiling_power(rows, "threshold", "relative change of the mean",
                                                                     verdict)}


@dataclass(frozen=True, kw_only=True)
class IntervalClaim(Claim):
    """lower <= E[measure] <= upper at every grid point, the two sides being bound versions of the theorem.

    The measure may be signed. PASS when the two-sided confidence interval of the mean lies inside
    [lower, upper] everywhere; FAIL when it lies entirely outside somewhere; INCONCLUSIVE otherwise.
    """

    lower: str  # bound version giving the lower side
    upper: str  # bound version giving the upper side
    kind: str = "interval"
    statistic_view: ClassVar[Statistic] = Statistic()
    rule_view: ClassVar[Piece] = IntervalSides()

    def _validate(self) -> None:
        if self.theorem is None or self.bindings is None:
            raise ValueError(f"interval claim {self.id} needs a theorem and bindings")
        self.theorem.bound(self.lower)
        self.theorem.bound(self.upper)

    def _decide(self, points):
        rows, outside, unsure = [], [], []
        for p in points:
            ci = point_ci(p, level=self.level)
            lo, hi = float(p.evaluation.bounds[self.lower]), float(p.evaluation.bounds[self.upper])
            rows.append({"value": p.value, "mean": ci.mean, "low": ci.low, "high": ci.high, "lower": lo, "upper": hi,
                         "conditions_hold": p.evaluation.all_hold,
                         "lower_over_mean": lo / ci.mean if ci.mean else math.nan})
            if ci.high < lo or ci.low > hi:
                outside.append(p.value)
            elif ci.low < lo or ci.high > hi:
                unsure.append(p.value)
        evidence = {"lower": self.lower, "upper": self.upper, "rows": rows}
        tag = f"[{self.lower}, {self.upper}]"
        if outside:
            verdict, reason = Verdict.FAIL, f"mean outside {tag} with confidence at {self.vary}={', '.join(map(_fmt, outside))}"
        elif unsure:
            verdict, reason = Verdict.INCONCLUSIVE, f"CI crosses a side of {tag} at {self.vary}={', '.join(map(_fmt, unsure))}"
        else:
            verdict, reason = Verdict.PASS, f"CI inside {tag} at every {self.vary}"
        bands = [Constraint(r["low"], r["high"], r["lower"], r["upper"]) for r in rows]
        return verdict, reason, {**evidence, "power": power(bands, SCALE, "relative change of the mean", verdict)}


@dataclass(frozen=True, kw_only=True)
class ExactValueClaim(ValueClaim):
    """A value claim with ``rel_tolerance`` on exact points and ``mc_rel_tolerance`` on Monte-Carlo ones
    (as ExactSlopeClaim: none stated, Monte-Carlo points are INCONCLUSIVE)."""

    tolerance_reason: str
    mc_rel_tolerance: float | None = None
    mc_tolerance_reason: str = ""

    def _decide(self, points):
        return exact_or_monte_carlo(self, points, ValueClaim._decide, "rel_tolerance", self.rel_tolerance,
                                    self.tolerance_reason, self.mc_rel_tolerance, self.mc_tolerance_reason)


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
    statistic_view: ClassVar[Statistic] = LogRate()
    rule_view: ClassVar[Piece] = NoRule()

    def _validate(self) -> None:
        if not 0 <= self.start_fraction < 1:
            raise ValueError(f"start_fraction must be in [0, 1), got {self.start_fraction}")
        if self.rel_tolerance <= 0:
            raise ValueError(f"rel_tolerance must be > 0, got {self.rel_tolerance}")

    def points(self, profile, traces):
        out = super().points(profile, traces)
        for point in out:
            trace = point.trace
            marks = np.asarray(trace.checkpoints, dtype=float)
            window = marks >= self.start_fraction * marks[-1]
            rates = log_rate(marks[window], trace.measures[self.measure][window])
            point.samples = rates[np.isfinite(rates)]
            point.stats = {"window": [float(marks[window][0]), float(marks[-1])],
                           "window_points": int(window.sum()),
                           "exact": float(self.exact(point.config, marks[window]))}
            if self.guaranteed is not None:
                point.stats["guaranteed"] = float(self.guaranteed(point))
            if self.asymptotic is not None:
                point.stats["asymptotic"] = float(self.asymptotic(point.config))
            if self.spectral is not None:
                try:
                    point.stats["spectral"] = float(self.spectral(point.config))
                except ValueError as exc:  # e.g. NotExact: a round not vouched time-invariant (a broken variant)
                    point.stats["spectral_unavailable"] = str(exc)
        return out

    def _decide(self, points):
        rows, outside, unsure, slower, slower_unsure = [], [], [], [], []
        spectral_off, bound_broken, no_spectral = [], [], []
        for p in points:
            if p.stats["window_points"] < self.min_window_points:
                return (Verdict.INCONCLUSIVE, f"only {p.stats['window_points']} checkpoints in the fit window at "
                        f"{self.vary}={_fmt(p.value)} (need {self.min_window_points})", {})
            ci = point_ci(p, level=self.level)
            e = p.stats["exact"]
            lo, hi = sorted((e * (1 - self.rel_tolerance), e * (1 + self.rel_tolerance)))
            row = {"value": p.value, "rate": ci.mean, "low": ci.low, "high": ci.high, "exact": e,
                   "ratio": ci.mean / e if e else math.nan, "window": p.stats["window"]}
            if "asymptotic" in p.stats:
                row["asymptotic"] = p.stats["asymptotic"]
            if ci.high < lo or ci.low > hi:
                outside.append(p.value)
            elif ci.low < lo or ci.high > hi:
                unsure.append(p.value)
            if "guaranteed" in p.stats:
                g = p.stats["guaranteed"]
                row["guaranteed"] = g
                row["tightness"] = e / g if g else math.inf  # how much faster the exact rate is
                if ci.low > g:
                    slower.append(p.value)
                elif ci.high > g:
                    slower_unsure.append(p.value)
            if "spectral_unavailable" in p.stats:
                no_spectral.append((p.value, p.stats["spectral_unavailable"]))
            if "spectral" in p.stats:  # issue #21: the exact asymptotic rate as an eigenvalue
                s_ = row["spectral"] = p.stats["spectral"]
                a = p.stats.get("asymptotic")
                if a is not None and not abs(s_ - a) <= self.spectral_rtol * abs(a):
                    spectral_off.append(p.value)
                if "guaranteed" in row:
                    row["spectral_tightness"] = s_ / row["guaranteed"] if row["guaranteed"] else math.inf
                    if s_ > row["guaranteed"] + self.spectral_rtol * abs(row["guaranteed"]):
                        bound_broken.append(p.value)
            rows.append(row)
        evidence = {"exact_name": self.exact_name, "guaranteed_name": self.guaranteed_name,
                    "rel_tolerance": self.rel_tolerance, "start_fraction": self.start_fraction, "rows": rows}
        worst = max(rows, key=lambda r: abs(r["ratio"] - 1))
        det = deterministic(points)
        measured = (f"log-contraction per round {worst['rate']:.5g}" +
                    (" (exact)" if all(p.exact for p in points) else " (deterministic)" if det
                     else f" (CI [{worst['low']:.5g}, {worst['high']:.5g}])"))
        tag = (f"{measured} vs {self.exact_name} {worst['exact']:.5g} within {relative(self.rel_tolerance)} "
               f"at {self.vary}={_fmt(worst['value'])}")
        if "guaranteed" in worst:
            tag += f"; {self.guaranteed_name} {worst['guaranteed']:.3g} ({worst['tightness']:.3g}x slower than exact)"
        if "spectral" in worst:
            tag += f"; exact asymptotic log rho {worst['spectral']:.10g} (eigenvalue of the moment map)"
        verdict, reason = self._rule(spectral_off, bound_broken, outside, slower, no_spectral,
                                     bool(unsure or slower_unsure), tag)
        # the measured rate against its bands; the eigenvalue checks do not move with it (fixed constraints)
        bands = [Constraint(r["low"], r["high"], *sorted((r["exact"] * (1 - self.rel_tolerance),
                                                          r["exact"] * (1 + self.rel_tolerance)))) for r in rows]
        bands += [Constraint(r["low"], r["high"], b=r["guaranteed"]) for r in rows if "guaranteed" in r]
        bands += [Constraint(1.0, 1.0, b=0.0, moves=False) for _ in spectral_off + bound_broken]
        return verdict, reason, {**evidence, "power": power(bands, SCALE, "relative change of the log-contraction "
                                                            "per round", verdict, cap=bool(no_spectral))}

    def _rule(self, spectral_off: list[float], bound_broken: list[float], outside: list[float], slower: list[float],
              no_spectral: list[tuple[float, str]], unsure: bool, tag: str) -> tuple[Verdict, str]:
        if spectral_off:
            return (Verdict.FAIL, f"the moment map's spectral radius differs from the recursion's at {self.vary}="
                    f"{_fmt(spectral_off[0])} (rtol {self.spectral_rtol:g}): {tag}")
        if bound_broken:
            return (Verdict.FAIL, f"{self.guaranteed_name} is faster than the exact asymptotic contraction at "
                    f"{self.vary}={_fmt(bound_broken[0])}: {tag}")
        if outside:
            return Verdict.FAIL, f"rate differs from the exact one: {tag}"
        if slower:
            return Verdict.FAIL, f"decay slower than {self.guaranteed_name}: {tag}"
        if no_spectral:  # nothing failed, but the eigenvalue check this claim promises could not run
            value, why = no_spectral[0]
            return Verdict.INCONCLUSIVE, f"no exact asymptotic rate at {self.vary}={_fmt(value)} ({why}): {tag}"
        if unsure:
            return Verdict.INCONCLUSIVE, f"CI straddles the band: {tag}"
        tail = ", and no slower than the theorem" if self.guaranteed is not None else ""
        return Verdict.PASS, f"{tag}: as exact{tail}"


def _ceiling_power(rows: list[dict[str, Any]], ceiling: str, quantity: str, verdict: Verdict) -> dict[str, Any]:
    """The one-sided ceiling rule's power (bound and threshold claims): [lcb, ucb] against (-inf, ceiling]."""
    return power([Constraint(r["lcb"], r["ucb"], b=r[ceiling]) for r in rows], SCALE, quantity, verdict)
