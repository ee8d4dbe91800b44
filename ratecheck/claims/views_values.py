"""The display pieces of claims on grid-point values: bound curves, a threshold, a predicted value, a
distance to a target with its tolerance, a log-contraction rate (ratecheck.claims.views)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .model import PointResult
from .views import Column, Fact, Piece, Statistic, formula_parts, pct, point_mean_ci, replicas_identical, value_text


class BoundCurves(Piece):
    """Every bound version of the claim's theorem along the grid; the claimed one(s) drawn bold."""

    def claimed(self, claim: Any) -> tuple[str, ...]:
        return (claim.version,)

    def versions(self, claim: Any, evaluation: Any) -> list[str]:
        """The bound versions drawn: every version of the theorem."""
        return list(claim.theorem.versions) if claim.theorem is not None else sorted(evaluation.bounds)

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        claim = o.claim
        pts = sorted((p for p in o.points if p.evaluation is not None), key=lambda p: p.value)
        if not pts:
            return
        versions = self.versions(claim, pts[0].evaluation)
        xs = np.array([p.value for p in pts], dtype=float)
        curves = {v: np.array([p.evaluation.bounds.get(v, math.nan) for p in pts], dtype=float) for v in versions}
        styles = ["--", "-.", ":", (0, (6, 2, 1, 2))]
        claimed = self.claimed(claim)
        for i, v in enumerate(versions):
            ys = curves[v]
            zero = [value_text(x) for x, y in zip(xs, ys) if np.isfinite(y) and y <= 0]
            if log_y:
                ys = np.where(ys > 0, ys, np.nan)  # a non-positive bound has no place on a log axis
            mine = v in claimed
            label = f"bound '{v}'" + (" (this claim)" if mine else "")
            # equal curves (e.g. a general form at the prescribed steps) would hide each other: say so
            same = [w for w in versions[:i] if np.allclose(curves[w], curves[v], rtol=1e-9, equal_nan=True)]
            if same:
                label += " = " + ", ".join(f"'{w}'" for w in same) + " on this grid"
            if zero and log_y:
                label += f" (= 0 at {', '.join(zero)}: not drawable on a log axis)"
            ax.plot(xs, ys, linestyle="-" if mine else styles[i % len(styles)], marker="s" if mine else "o",
                    ms=6 if mine else max(2.0, 5.0 - i), lw=2.4 if mine else 1.4, color=f"C{i + 1}",
                    alpha=1.0 if mine else 0.85, zorder=3 if mine else 2, label=label)

    def columns(self, claim: Any) -> list[Column]:
        def ratio(p: Any) -> float | None:
            b = p.evaluation.bounds.get(claim.version) if p.evaluation is not None else None
            return point_mean_ci(p, claim.level)[0] / b if b else None

        from .terms import dominant_term_column  # issue #22: which term of the bound decides each point

        return [Column(f"mean / bound '{claim.version}'", ratio), *dominant_term_column(claim)]

    def stated_bound(self, claim: Any) -> Any:
        return claim.theorem.bound(claim.version) if claim.theorem is not None else None

    def facts(self, o: Any) -> list[Fact]:
        bound = self.stated_bound(o.claim)
        if bound is None:
            return []
        return [(f"Bound '{bound.version}': ", formula_parts(bound.expr, bound.source, bound.note))]


class IntervalSides(BoundCurves):
    """The two bound versions an interval claim lies between (the theorem's others would set the scale)."""

    def claimed(self, claim: Any) -> tuple[str, ...]:
        return (claim.lower, claim.upper)

    def versions(self, claim: Any, evaluation: Any) -> list[str]:
        return [claim.lower, claim.upper]

    def columns(self, claim: Any) -> list[Column]:
        return []

    def stated_bound(self, claim: Any) -> Any:
        return None


class ThresholdLine(Piece):
    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        t = o.claim.threshold
        ax.axhline(t, color="C3", ls="--", lw=1.5, label=f"threshold {t:g} (one-sided: at most)")


class PredictionBand(Piece):
    """The closed-form prediction per grid point and its relative tolerance."""

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        claim = o.claim
        x = np.array([p.value for p in o.points], dtype=float)
        pred = np.array([float(claim.predict(p.config)) for p in o.points])
        ax.plot(x, pred, "--", color="C2", lw=1.8, label=f"predicted: {claim.prediction}")
        ax.fill_between(x, pred * (1 - claim.rel_tolerance), pred * (1 + claim.rel_tolerance), color="C2",
                        alpha=0.12, label=f"tolerance \u00b1{100 * claim.rel_tolerance:.3g}%")


class Distance(Statistic):
    """The distance of the replica-mean final iterate to a target, with its bootstrap CI (points' stats)."""

    def ylabel(self, claim: Any) -> str:
        return f"||mean final {claim.point} - {claim.target_name}||"

    def y_values(self, o: Any) -> list[float]:
        return [v for p in o.points for v in (p.stats.get("distance"), p.stats.get("high"))]

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        claim = o.claim
        pts = sorted((p for p in o.points if "distance" in p.stats), key=lambda p: p.value)
        x = np.array([p.value for p in pts], dtype=float)
        d = np.array([p.stats["distance"] for p in pts], dtype=float)
        lo = np.array([p.stats["low"] for p in pts], dtype=float)
        hi = np.array([p.stats["high"] for p in pts], dtype=float)
        if log_y:
            lo = np.where(lo > 0, lo, d / 10)
        # vlines rather than errorbar: a bootstrap interval of a norm need not contain the estimate
        ax.vlines(x, lo, hi, color="C0", lw=2, alpha=0.6, label=f"{pct(claim.level)} bootstrap CI")
        ax.plot(x, d, "o", color="C0", ms=6, label=f"distance of the replica-mean final {claim.point} "
                f"to {claim.target_name}", zorder=4)

    def caption(self, o: Any) -> str:
        return (f"Points: distance of the replica-mean final iterate; bars: {pct(o.claim.level)} bootstrap CI over "
                "replicas.")

    def mean_label(self, claim: Any) -> str:
        # the samples are per-replica distances, not the distance of the mean
        return f"replica mean of ||{claim.point}_r - {claim.target_name}||"

    def columns(self, claim: Any) -> list[Column]:
        def stat(key: str) -> Callable[[PointResult], Any]:
            return lambda p: p.stats.get(key)

        return [Column(header, stat(key))
                for header, key in (("distance of mean", "distance"), ("CI low", "low"), ("CI high", "high"))]


class DistanceTolerance(Piece):
    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        ax.axhline(o.claim.tolerance, color="C3", ls="--", lw=1.5, label=f"tolerance {o.claim.tolerance:g}")

    def y_values(self, o: Any) -> list[float]:
        return [o.claim.tolerance]

    def facts(self, o: Any) -> list[Fact]:
        c = o.claim
        return [("Target: ", (f"{c.target_name}, tolerance {c.tolerance:g} on the distance of the replica-mean "
                              f"final {c.point}",))]


class LogRate(Statistic):
    """The measure against the round (linear axis, log scale): the replica mean, the fitted log-contraction
    over the window, the exact rate and the theorem's guaranteed rate through the window's first point."""

    def ylabel(self, claim: Any) -> str:
        return f"{claim.measure} (replica mean)"

    def xlabel(self, claim: Any) -> str:
        return "round"

    def x_values(self, o: Any) -> list[float]:
        return [0.0, max(float(p.trace.checkpoints[-1]) for p in o.points if p.trace is not None)]

    def y_values(self, o: Any) -> list[float]:
        return [float(v) for p in o.points if p.trace is not None for v in np.ravel(p.trace.measures[o.claim.measure])]

    def scales(self, o: Any, xs: Any, ys: Any) -> tuple[bool, bool]:
        return False, True  # rounds on a linear axis, the measure on a log axis

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        claim = o.claim
        for p in o.points:
            trace = p.trace
            if trace is None:
                continue
            marks = np.asarray(trace.checkpoints, dtype=float)
            mean = np.nanmean(trace.measures[claim.measure], axis=1)
            ok = np.isfinite(mean) & (mean > 0)
            ax.plot(marks[ok], mean[ok], "-", color="C0", lw=1.4, label=f"{claim.measure}, replica mean ({claim.vary}="
                    f"{value_text(p.value)})" + (" - deterministic" if replicas_identical(p) else ""))
            row = next((r for r in o.evidence.get("rows", []) if r["value"] == p.value), None)
            if row is None:
                continue
            t0, t1 = row["window"]
            tt = np.linspace(t0, t1, 32)
            start = float(np.interp(t0, marks[ok], mean[ok]))
            ax.plot(tt, start * np.exp(row["rate"] * (tt - t0)), "-", color="C1", lw=2.2,
                    label=f"fitted log-contraction {row['rate']:.4g}/round over [{t0:g}, {t1:g}]")
            ax.plot(tt, start * np.exp(row["exact"] * (tt - t0)), "--", color="C2", lw=1.6,
                    label=f"exact {row['exact']:.4g}/round \u00b1 {claim.rel_tolerance:.0%}")
            if "guaranteed" in row:
                ax.plot(tt, start * np.exp(row["guaranteed"] * (tt - t0)), ":", color="C3", lw=1.6,
                        label=f"theorem {row['guaranteed']:.3g}/round ({row['tightness']:.3g}x slower than exact)")
            ax.axvspan(t0, t1, color="C1", alpha=0.06, lw=0)

    def caption(self, o: Any) -> str:
        return ("The measure against the round (linear axis, log scale): the fitted log-contraction over the shaded "
                "window, the exact rate, and the theorem's guaranteed rate, all from the window's first point.")

    def table_note(self, o: Any) -> str:
        return "Per grid point: the replica mean of the per-replica fitted log-contraction per round."

    def facts(self, o: Any) -> list[Fact]:
        out: list[Fact] = []
        for row in o.evidence.get("rows", []):
            text = (f"{o.claim.vary}={value_text(row['value'])}: fitted {row['rate']:.5g}/round over rounds "
                    f"{row['window'][0]:g}-{row['window'][1]:g} vs exact {row['exact']:.5g}")
            if "asymptotic" in row:
                text += f" (spectral limit {row['asymptotic']:.5g})"
            if "guaranteed" in row:
                text += f"; theorem {row['guaranteed']:.4g} (tightness: exact is {row['tightness']:.3g}x faster)"
            out.append(("Rate: ", (text,)))
        return out

    def observed(self, o: Any) -> list[tuple[str, str]]:
        return [("tightness of the theorem's rate (exact / guaranteed log-contraction)",
                 f"{row['tightness']:.3g} at {o.claim.vary}={value_text(row['value'])}")
                for row in o.evidence.get("rows", []) if "tightness" in row]
