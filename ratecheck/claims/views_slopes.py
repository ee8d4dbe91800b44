"""The display pieces of slope claims: a fitted power law (one series, hitting times, two series), the
tolerance band of the expected exponent, and the direction a monotonicity rule judges (ratecheck.claims.views)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .evidence import BandEvidence, DifferenceEvidence
from .views import Fact, Piece, Statistic, draw_fit, draw_means, grid_line, mean_series, pct, point_mean_ci, positive


class FittedSlope(Statistic):
    """Replica means and the fitted power law (evidence ``fit``)."""

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        super().draw(ax, o, log_y)
        x = mean_series(o.points, o.claim.level)[0]
        fit = o.evidence.get("fit")
        if x.size and fit:
            draw_fit(ax, grid_line(x), fit)

    def facts(self, o: Any) -> list[Fact]:
        fit = o.evidence.get("fit")
        if not fit:
            return []
        spread = ("deterministic (replicas identical)" if fit.get("deterministic") else
                  f"{pct(fit['level'])} bootstrap CI [{fit['ci_low']:+.4f}, {fit['ci_high']:+.4f}]")
        curv = fit.get("curvature")
        return [("Fit: ", (f"slope {fit['slope']:+.4f}, {spread}, R^2 {fit['r2']:.4f}, {len(fit['x'])} points over "
                           f"{fit.get('decades', math.nan):.2f} decades"
                           + (f", local-slope change across the grid {curv:+.3f}" if curv is not None else "")
                           + f", intercept (ln) {fit['intercept']:.4g}",))]


class HittingTimes(FittedSlope):
    """Rounds until the measure reaches a threshold (the reading names the crossing), fitted as a power law."""

    def annotate(self, ax: Any, o: Any, log_y: bool) -> None:
        levels = sorted({p.stats.get("level") for p in o.points if p.stats.get("level") is not None})
        if levels:
            text = f"{levels[0]:.3g}" if len(levels) == 1 else f"{levels[0]:.3g} to {levels[-1]:.3g}"
            ax.plot([], [], " ", label=f"threshold on {o.claim.measure}: {text}")

    def caption(self, o: Any) -> str:
        return ("Points: rounds until the measure first reaches the threshold (replica mean; exact up to the "
                f"checkpoint resolution); band: {pct(o.claim.level)} CI. ")


class ExponentBand(Piece):
    """The tolerance band of the expected exponent through the points' geometric mean (where the OLS line
    also passes): two-sided between the slopes e - tol and e + tol, one-sided (at most / at least) as the
    region below / above the cap."""

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        ev = BandEvidence.read(o.evidence)
        # through the points the statistic fitted (a plan may keep some out of the fit), else every point's mean
        judged = ev.fit if ev is not None and ev.fit.get("x") and ev.fit.get("means") else None
        x, m = ((np.asarray(judged["x"], dtype=float), np.asarray(judged["means"], dtype=float)) if judged
                else mean_series(o.points, o.claim.level)[:2])
        if not x.size or ev is None or not (positive(x) and positive(m)):
            return
        xx = grid_line(x)
        gx, gy = math.exp(np.mean(np.log(x))), math.exp(np.mean(np.log(m)))
        e, tol, side, source = ev.expected_exponent, ev.tolerance, ev.side or "two-sided", ev.expected_from
        ylo, yhi = ax.get_ylim()
        if side == "two-sided":
            ax.fill_between(xx, gy * (xx / gx) ** (e - tol), gy * (xx / gx) ** (e + tol), color="C2", alpha=0.15,
                            lw=0, label=f"band: slope {e:+.3f} \u00b1 {tol:g} ({source})")
            ax.plot(xx, gy * (xx / gx) ** e, "--", color="C2", lw=1.2)
        else:
            cap = e + tol if side == "at_most" else e - tol
            edge = gy * (xx / gx) ** cap
            other = np.full_like(xx, ylo if side == "at_most" else yhi)
            word = "at most" if side == "at_most" else "at least"
            ax.fill_between(xx, other, edge, color="C2", alpha=0.15, lw=0,
                            label=f"one-sided band: slope {word} {e:+.3f} (theorem) with tolerance {tol:g} ({source})")
            ax.plot(xx, edge, "-", color="C2", lw=1.0)
            ax.set_ylim(ylo, yhi)

    def caption(self, o: Any) -> str:
        return " Shaded: the tolerance band of the expected exponent (one-sided for a one-sided claim)."

    def facts(self, o: Any) -> list[Fact]:
        ev = BandEvidence.read(o.evidence)
        if ev is None:
            return []
        what = {"at_most": "the theorem bounds the exponent from above: ",
                "at_least": "the theorem bounds the exponent from below: "}.get(ev.side, "")
        out: list[Fact] = [("Expected exponent: ", (
            f"{what}{ev.expected_exponent:+.4f} ({ev.expected_from}); tolerance {ev.tolerance:g}, {ev.side}, band "
            f"[{ev.band[0]:+.3f}, {ev.band[1]:+.3f}]",))]
        if ev.design_reason:
            out.append(("Grid design: ", (ev.design_reason,)))
        return out


class TwoSeries(Statistic):
    """Two series on one grid (points' ``stats["series"]``), each with its fitted power law."""

    COLORS = ("C0", "C4")

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        ev = DifferenceEvidence.read(o.evidence)
        if ev is None:
            return
        for label, color in zip(ev.labels, self.COLORS):
            pts = [p for p in o.points if p.stats.get("series") == label]
            x, m, lo, hi = mean_series(pts, o.claim.level)
            draw_means(ax, x, m, lo, hi, o.claim.level, log_y, f"{label}: replica mean", color=color)
            if x.size and label in ev.fits:
                draw_fit(ax, grid_line(x), ev.fits[label], color=color, prefix=f"{label} fit")

    def caption(self, o: Any) -> str:
        return (f"Points: replica means of each series; band: {pct(o.claim.level)} Student-t CI of the mean (none "
                "when deterministic); lines: each series' fitted power law. The claim judges the difference of the "
                "two slopes against the margin, and each slope against its band when one is given.")

    def facts(self, o: Any) -> list[Fact]:
        ev = DifferenceEvidence.read(o.evidence)
        if ev is None:
            return []
        slopes = ", ".join(f"{lab} {ev.fits[lab]['slope']:+.4f}" for lab in ev.labels if lab in ev.fits)
        out: list[Fact] = [("Slopes: ", (f"{slopes}; difference {ev.value:+.4f}, CI [{ev.ci_low:+.4f}, "
                                         f"{ev.ci_high:+.4f}] against < {-ev.margin:+.3f}",))]
        for lab in ev.labels:
            band = ev.expected.get(lab)
            if band:
                out.append((f"Expected exponent of {lab}: ", (f"{band['exponent']:+.4f} ({band['from']}); band "
                                                              f"[{band['band'][0]:+.3f}, {band['band'][1]:+.3f}]",)))
        return out


@dataclass(frozen=True)
class Monotone(Piece):
    """What a direction rule judges (StrictlyDecreasing): the means joined in grid order, each step between
    neighbours drawn as a confident fall or not; the rule it only reports (e.g. an exponent band) is not
    drawn, its facts are shown as reported."""

    reported: Piece | None = None

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        pts = sorted((p for p in o.points if p.samples.size), key=lambda p: p.value)
        if len(pts) < 2:
            return
        # as the rule: an exact point is its expectation (a zero-width CI), a Monte-Carlo one a Student-t CI
        x = np.array([p.value for p in pts], dtype=float)
        m, lo, hi = np.array([(float(p.samples[0]),) * 3 if p.exact and p.samples.size == 1
                              else point_mean_ci(p, o.claim.level) for p in pts], dtype=float).T
        falls = hi[1:] < lo[:-1]  # the later CI entirely below the earlier one
        labelled: set[str] = set()
        for i, fall in enumerate(falls):
            label = "judged: a confident fall between neighbours" if fall else "judged: no confident fall"
            ax.plot(x[i: i + 2], m[i: i + 2], "-" if fall else ":", color="C2" if fall else "C3", lw=1.6,
                    label=None if label in labelled else label, zorder=3)
            labelled.add(label)

    def caption(self, o: Any) -> str:
        return (f" Lines: the means in grid order; the claim judges only the direction (strictly decreasing: each "
                f"{o.claim.vary}'s CI entirely below the previous one's); the fit is reported, not judged.")

    def facts(self, o: Any) -> list[Fact]:
        monotone = o.evidence.get("monotone")
        judged: list[Fact] = [("Judged: ", (f"strictly decreasing in {o.claim.vary}" + (
            "" if monotone is None else (": yes" if monotone else ": not shown")),))]
        reported = self.reported.facts(o) if self.reported is not None else []
        return judged + [(f"Reported, not judged: {label}", parts) for label, parts in reported]
