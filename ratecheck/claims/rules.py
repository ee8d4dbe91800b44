"""Rules of a claim's decision on grid-point means (ratecheck.claims.compose): the one-sided ceiling of a
bound or a threshold, a relative band around a prediction, an interval between two bounds, a tolerance on a
distance; the exact-or-Monte-Carlo tolerance wrapper; a regime gate. Each reads its parameters from the
claim's fields and writes its power (ratecheck.claims.power) to the evidence."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import sympy as sp

from ..model.fit import MeanCI
from ..theory import Evaluation
from .compose import Decision, Rule
from .model import PointResult, Verdict, _fmt
from .power import OFFSET, SCALE, Constraint, power
from .statistics import _deterministic_note, _ratio, relative
from .views_values import BoundCurves, DistanceTolerance, IntervalSides, PredictionBand, ThresholdLine

SIDES = ("two-sided", "at_most", "at_least")


def term_negligible(term: sp.Expr, label: str, fraction: float = 0.1) -> Callable[[Sequence[PointResult]], str]:
    """A regime check for slope claims: `term` (a sympy expression in the theorem's symbols, e.g.
    the O(1/(KT)) term of a bound) must stay below `fraction` of the measured mean at every point.

    Returns a function giving the reason when the regime is not reached (empty string when it is).
    """
    symbols = sorted(term.free_symbols, key=lambda s: s.name)
    evaluate = sp.lambdify(symbols, term, "math")

    def check(points: Sequence[PointResult]) -> str:
        bad = []
        for p in points:
            assert p.evaluation is not None  # the regime term is read at each point's theorem constants
            values = p.evaluation.values
            size = float(evaluate(*(values[s.name] for s in symbols)))
            measured = float(np.mean(p.samples))
            if size > fraction * measured:
                bad.append(f"{label} = {size:.3g} > {fraction:g} x measured {measured:.3g} at {_fmt(p.value)}")
        return "; ".join(bad)

    return check


def _tolerance_evidence(evidence: Mapping[str, Any], name: str, value: float, why: str) -> dict[str, Any]:
    return {**evidence, "tolerance_used": {"name": name, "value": value, "why": why}}


_NO_MC_BAND = "Monte-Carlo points, and this claim states a band for exact runs only (ratecheck.exact refused a run)"


@dataclass(frozen=True)
class ExactOrMonteCarlo(Rule):
    """The ``inner`` rule with the claim's tolerance ``field`` as stated on exact points (why: the claim's
    ``why`` field) and at ``mc_field`` on Monte-Carlo ones (why: ``mc_why``); INCONCLUSIVE on Monte-Carlo
    points when the claim states none. The evidence says which was used and why."""

    inner: Rule
    field: str
    mc_field: str
    why: str
    mc_why: str

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> Decision:
        if points and all(p.exact for p in points):
            verdict, reason, evidence = self.inner(claim, points, estimate)
            return verdict, reason, _tolerance_evidence(evidence, "exact", getattr(claim, self.field),
                                                        getattr(claim, self.why))
        mc_value = getattr(claim, self.mc_field)
        if mc_value is None:
            return Verdict.INCONCLUSIVE, _NO_MC_BAND, {}
        verdict, reason, evidence = self.inner(dataclasses.replace(claim, **{self.field: mc_value}), points, estimate)
        return verdict, reason, _tolerance_evidence(evidence, "monte_carlo", mc_value, getattr(claim, self.mc_why))


def _evaluation(p: PointResult) -> Evaluation:
    assert p.evaluation is not None, "a rule on the theorem's bounds needs the claim's theorem and bindings"
    return p.evaluation


def _ceiling(claim: Any, rows: list[dict[str, Any]], ceiling_of: Callable[[PointResult], float],
             points: Sequence[PointResult], name: str) -> tuple[list[dict[str, Any]], list[float], list[float]]:
    """Rows with the ceiling (under ``name``) and the grid values confidently above / possibly above: above
    when the lower confidence bound of the mean exceeds the ceiling, possibly above when only the upper does."""
    out, above, unsure = [], [], []
    for p, row in zip(points, rows):
        ceiling = float(ceiling_of(p))
        out.append({**row, name: ceiling})
        if row["lcb"] > ceiling:
            above.append(p.value)
        elif row["ucb"] > ceiling:
            unsure.append(p.value)
    return out, above, unsure


def _ceiling_power(rows: list[dict[str, Any]], ceiling: str, quantity: str, verdict: Verdict,
                   mode: str = SCALE) -> dict[str, Any]:
    """The one-sided ceiling rule's power (bound and threshold claims): [lcb, ucb] against (-inf, ceiling]."""
    return power([Constraint(r["lcb"], r["ucb"], b=r[ceiling]) for r in rows], mode, quantity, verdict)


@dataclass(frozen=True)
class BoundCeiling(Rule):
    """E[measure] <= the theorem's bound ``claim.version`` at every grid point (one-sided means): PASS when
    every upper confidence bound is below it, FAIL when a lower one exceeds it, else INCONCLUSIVE."""

    reads: ClassVar[tuple[str, ...]] = ("version",)  # the claim fields it reads
    view: ClassVar[Any] = BoundCurves()  # every bound version along the grid, the claimed one bold

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> Decision:
        version = claim.version
        rows, above, unsure = _ceiling(claim, estimate, lambda p: _evaluation(p).bounds[version], points, "bound")
        for p, row in zip(points, rows):
            row["ratio"] = row["mean"] / row["bound"]
            row["all_bounds"] = dict(_evaluation(p).bounds)
        evidence = {"version": version, "rows": rows}
        worst = max(rows, key=lambda r: r["ratio"])
        tag = f"bound '{version}'; worst mean/bound = {worst['ratio']:.3g} at {claim.vary}={_fmt(worst['value'])}"
        tag += _deterministic_note(points)
        if above:
            where = ", ".join(_fmt(v) for v in above)
            verdict, reason = Verdict.FAIL, f"measured mean exceeds {tag} (confidently at {claim.vary}={where})"
        elif unsure:
            where = ", ".join(_fmt(v) for v in unsure)
            verdict, reason = Verdict.INCONCLUSIVE, f"upper confidence bound crosses {tag} at {claim.vary}={where}"
        else:
            verdict, reason = Verdict.PASS, f"upper confidence bound below {tag}"
        return verdict, reason, {**evidence, "power": _ceiling_power(rows, "bound", "relative change of the mean "
                                                                     "(and of mean/bound)", verdict)}


@dataclass(frozen=True)
class ThresholdCeiling(Rule):
    """E[measure] <= ``claim.threshold`` at every grid point (one-sided means), no theorem needed."""

    reads: ClassVar[tuple[str, ...]] = ("threshold",)  # the claim fields it reads
    view: ClassVar[Any] = ThresholdLine()

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> Decision:
        rows, above, unsure = _ceiling(claim, estimate, lambda p: claim.threshold, points, "threshold")
        evidence = {"threshold": claim.threshold, "rows": rows}
        worst = max(rows, key=lambda row: row["mean"])
        tag = f"threshold {claim.threshold:g}; largest mean {worst['mean']:.3g} at {claim.vary}={_fmt(worst['value'])}"
        tag += _deterministic_note(points)
        if above:
            verdict, reason = Verdict.FAIL, f"mean exceeds the {tag} with confidence"
        elif unsure:
            verdict, reason = Verdict.INCONCLUSIVE, f"upper confidence bound crosses the {tag}"
        else:
            verdict, reason = Verdict.PASS, f"upper confidence bound below the {tag}"
        # a threshold caps a quantity meant to be about 0 (a deviation, a residual): what it sees is the
        # amount added to it, in the measure's own units
        return verdict, reason, {**evidence, "power": _ceiling_power(rows, "threshold", "amount added to the mean "
                                                                     "(the measure's units)", verdict, OFFSET)}


@dataclass(frozen=True)
class RelativeBand(Rule):
    """E[measure] = ``claim.predict(config)`` within ``claim.rel_tolerance`` (two-sided CIs): PASS when every CI
    lies inside the band, FAIL when one lies entirely outside, else INCONCLUSIVE."""

    reads: ClassVar[tuple[str, ...]] = ("predict", "prediction", "rel_tolerance")  # the claim fields it reads
    view: ClassVar[Any] = PredictionBand()

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Sequence[MeanCI]) -> Decision:
        rows, outside, unsure = [], [], []
        tol = claim.rel_tolerance
        for p, ci in zip(points, estimate):
            pred = float(claim.predict(p.config))
            lo, hi = sorted((pred * (1 - tol), pred * (1 + tol)))  # a negative prediction flips the ends
            rows.append({"value": p.value, "mean": ci.mean, "low": ci.low, "high": ci.high,
                         "predicted": pred, "ratio": ci.mean / pred})
            if ci.high < lo or ci.low > hi:
                outside.append(p.value)
            elif ci.low < lo or ci.high > hi:
                unsure.append(p.value)
        evidence = {"prediction": claim.prediction, "rel_tolerance": tol, "rows": rows}
        worst = max(rows, key=lambda r: abs(r["ratio"] - 1))
        tag = (f"{claim.prediction} within {relative(tol)}; worst mean/predicted = {_ratio(worst['ratio'], tol)} "
               f"at {claim.vary}={_fmt(worst['value'])}") + _deterministic_note(points)
        if outside:
            verdict, reason = Verdict.FAIL, f"CI outside {tag} (at {claim.vary}={', '.join(map(_fmt, outside))})"
        elif unsure:
            verdict, reason = Verdict.INCONCLUSIVE, f"CI straddles the band of {tag}: more replicas needed"
        else:
            verdict, reason = Verdict.PASS, f"CI inside {tag}"
        bands = [Constraint(r["low"], r["high"], *sorted((r["predicted"] * (1 - tol), r["predicted"] * (1 + tol))))
                 for r in rows]
        return verdict, reason, {**evidence, "power": power(bands, SCALE, "relative change of the mean "
                                                            "(and of mean/predicted)", verdict)}


@dataclass(frozen=True)
class BetweenBounds(Rule):
    """``claim.lower`` <= E[measure] <= ``claim.upper`` (two bound versions of the theorem; two-sided CIs)."""

    reads: ClassVar[tuple[str, ...]] = ("lower", "upper")  # the claim fields it reads
    view: ClassVar[Any] = IntervalSides()

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Sequence[MeanCI]) -> Decision:
        rows, outside, unsure = [], [], []
        for p, ci in zip(points, estimate):
            evaluation = _evaluation(p)
            lo, hi = float(evaluation.bounds[claim.lower]), float(evaluation.bounds[claim.upper])
            rows.append({"value": p.value, "mean": ci.mean, "low": ci.low, "high": ci.high, "lower": lo, "upper": hi,
                         "conditions_hold": evaluation.all_hold,
                         "lower_over_mean": lo / ci.mean if ci.mean else math.nan})
            if ci.high < lo or ci.low > hi:
                outside.append(p.value)
            elif ci.low < lo or ci.high > hi:
                unsure.append(p.value)
        evidence = {"lower": claim.lower, "upper": claim.upper, "rows": rows}
        tag = f"[{claim.lower}, {claim.upper}]"
        if outside:
            where = ", ".join(map(_fmt, outside))
            verdict, reason = Verdict.FAIL, f"mean outside {tag} with confidence at {claim.vary}={where}"
        elif unsure:
            verdict, reason = Verdict.INCONCLUSIVE, f"CI crosses a side of {tag} at {claim.vary}={', '.join(map(_fmt, unsure))}"
        else:
            verdict, reason = Verdict.PASS, f"CI inside {tag} at every {claim.vary}"
        bands = [Constraint(r["low"], r["high"], r["lower"], r["upper"]) for r in rows]
        return verdict, reason, {**evidence, "power": power(bands, SCALE, "relative change of the mean", verdict)}


@dataclass(frozen=True)
class WithinTolerance(Rule):
    """A distance to ``claim.target_name`` at most ``claim.tolerance`` at every grid point: PASS when every
    CI (``point.stats``: distance, low, high) lies below it, FAIL when one lies above, else INCONCLUSIVE."""

    reads: ClassVar[tuple[str, ...]] = ("target_name", "tolerance")  # the claim fields it reads
    view: ClassVar[Any] = DistanceTolerance()

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> Decision:
        rows = [{"value": p.value, **p.stats} for p in points]
        name, tol = claim.target_name, claim.tolerance
        evidence = {"target": name, "tolerance": tol, "rows": rows}
        if all(r["high"] <= tol for r in rows):
            verdict, reason = Verdict.PASS, f"distance to {name} <= {tol:g} with confidence"
        elif any(r["low"] > tol for r in rows):
            verdict, reason = Verdict.FAIL, f"distance to {name} > {tol:g} with confidence"
        else:
            verdict, reason = Verdict.INCONCLUSIVE, f"distance CI straddles the tolerance {tol:g}"
        bands = [Constraint(r["low"], r["high"], b=tol) for r in rows]
        # the distance is about 0 on a PASS: what the claim sees is the distance a moved limit adds, judged
        # against the size of the target itself
        target = getattr(claim, "target", None)
        size = max((float(np.linalg.norm(target(p.config))) for p in points), default=0.0) if target else 0.0
        scale = f"relative: over the norm of {name}, {size:.3g}" if size else f"absolute: {name} is 0"
        return verdict, reason, {**evidence, "power": power(bands, OFFSET, f"distance added to the distance to {name} "
                                                            f"({scale})", verdict, reference=size or 1.0)}
