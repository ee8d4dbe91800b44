"""How a claim is shown, asked of its decision's pieces (ratecheck.claims.compose), never of its kind: the
points' side (the axes, the points and their CI, a fit) is the view of the plan, else of the reading, else of
the statistic (the first that declares one, ``piece.display()``: a plan or a reading that makes the points
something else than means of the measure, e.g. distances, rates, rounds found by a search, shows them); the
reading names the y axis (``Reading.label``); the rule owns what the data are judged against (a band, a cap,
a threshold, bound curves, a direction). Each adds its plot layer, caption, table columns and facts. The
report draws any claim through ``claim.view()``; a claim that draws itself (``draw_plot``, a paper's own
figure) is shown through that.

Pieces draw on a matplotlib Axes they are given and import no plotting library. An outcome is typed
``Any`` here: ``Outcome`` lives with the Claim base, which imports this module.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from ..model.fit import POINT_INTERVAL, mean_ci
from .model import PointResult

# a fact of the report's claim section: a bold label, then text and sympy expressions (shown as formulas)
Fact = tuple[str, tuple[Any, ...]]


@dataclass(frozen=True)
class Column:
    """A column of the claim's grid table: header, and the cell of a grid point (a number or text)."""

    header: str
    cell: Callable[[PointResult], Any]


def pct(level: float) -> str:
    return f"{level * 100:g}%"


def value_text(x: float) -> str:
    return f"{float(x):g}"


def point_mean_ci(p: PointResult, level: float) -> tuple[float, float, float]:
    """(mean, low, high) of a grid point's replicas (the claims' method, POINT_INTERVAL); NaN when every
    replica diverged."""
    if p.samples.size == 0:
        return math.nan, math.nan, math.nan
    ci = mean_ci(p.samples, level=level, interval=POINT_INTERVAL)
    return ci.mean, ci.low, ci.high


def replicas_identical(p: PointResult) -> bool:
    return p.samples.size > 1 and float(np.ptp(p.samples)) == 0.0


def positive(values: Sequence[float | None] | np.ndarray) -> bool:
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    arr = arr[np.isfinite(arr)]
    return arr.size > 0 and bool((arr > 0).all())


def mean_series(points: Sequence[PointResult], level: float) -> tuple[np.ndarray, ...]:
    """x, mean, CI low, CI high over the grid points that have finite replicas."""
    rows = [(p.value, *point_mean_ci(p, level)) for p in points if p.samples.size]
    if not rows:
        return tuple(np.empty(0) for _ in range(4))
    return tuple(np.asarray(col, dtype=float) for col in zip(*rows))


def mean_label(points: Sequence[PointResult]) -> str:
    """The legend of the points: exact expectations (no CI) or replica means."""
    return "exact expectation (no CI)" if points and all(p.exact for p in points) else "replica mean"


def draw_means(ax: Any, x: np.ndarray, m: np.ndarray, lo: np.ndarray, hi: np.ndarray, level: float, log_y: bool,
               label: str, color: str = "C0") -> None:
    """Replica means as points and their CI as a band (lower ends <= 0 clipped on a log axis)."""
    if not x.size:
        return
    order = np.argsort(x)
    x, m, lo, hi = x[order], m[order], lo[order], hi[order]
    clipped = np.isfinite(lo) & (lo <= 0) if log_y else np.zeros(x.shape, dtype=bool)
    low = np.where(clipped, m / 10, lo) if log_y else lo
    band = f"{pct(level)} CI of the mean"
    if np.all(np.isfinite(lo) & (lo == hi)):
        label += " (deterministic: replicas identical, no CI)"
    if clipped.any():
        band += " (lower end <= 0 drawn at mean/10)"
    ok = np.isfinite(low) & np.isfinite(hi) & (hi > low)  # no band where unbounded (1 replica) or deterministic
    if ok.any():
        ax.fill_between(x, np.where(ok, low, np.nan), np.where(ok, hi, np.nan), color=color, alpha=0.2,
                        lw=0, label=band)
        ax.vlines(x[ok], low[ok], hi[ok], color=color, alpha=0.6, lw=1)
    ax.plot(x, m, "o", color=color, ms=5, label=label, zorder=4)


def grid_line(x: np.ndarray) -> np.ndarray:
    return np.geomspace(x.min(), x.max(), 64) if positive(x) else np.linspace(x.min(), x.max(), 64)


def draw_fit(ax: Any, xx: np.ndarray, fit: Mapping[str, Any], color: str = "C1", prefix: str = "fit") -> None:
    spread = ("deterministic" if fit.get("deterministic") else
              f"{pct(fit['level'])} CI [{fit['ci_low']:+.3f}, {fit['ci_high']:+.3f}]")
    label = f"{prefix}: slope {fit['slope']:+.3f}, {spread}, R\u00b2 {fit['r2']:.3f}"
    ax.plot(xx, math.exp(fit["intercept"]) * xx ** fit["slope"], "-", color=color, lw=1.8, label=label)


class Piece:
    """A statistic's or a rule's share of a claim's display (every part optional)."""

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        """Its plot layer."""

    def annotate(self, ax: Any, o: Any, log_y: bool) -> None:
        """Legend notes, drawn after every layer."""

    def caption(self, o: Any) -> str:
        return ""

    def columns(self, claim: Any) -> list[Column]:
        """Columns of the grid table (a statistic's come before the theorem's, a rule's after its bounds)."""
        return []

    def facts(self, o: Any) -> list[Fact]:
        return []

    def observed(self, o: Any) -> list[tuple[str, str]]:
        """Numbers with no verdict this outcome carries beside its verdict: (quantity, values)."""
        return []

    def y_values(self, o: Any) -> list[float]:
        """Values the rule adds to the y range (e.g. a tolerance line)."""
        return []

    def stated_bound(self, claim: Any) -> Any:
        """The theorem's Bound this piece compares with (shown beside an erratum), if any."""
        return None


class Statistic(Piece):
    """What is measured per grid point, and so the axes: by default replica means with their CI."""

    caption_text = "Points: replica means; band: {pct} Student-t CI of the mean per grid point (none when deterministic)."

    def ylabel(self, claim: Any) -> str:
        return claim._reading().label(claim)  # the reading says what a point's samples are

    def xlabel(self, claim: Any) -> str:
        return claim.vary

    def categories(self, o: Any) -> list[str] | None:
        """Names of the grid values when they index named things (0, 1, 2 for the algorithms compared)."""
        values = [p.value for p in o.points]
        names = [str(p.config.algorithm) for p in o.points]
        if values == list(range(len(values))) and len(set(names)) == len(names) > 1:
            return names
        return None

    def x_values(self, o: Any) -> list[float]:
        return [p.value for p in o.points]

    def y_values(self, o: Any) -> list[float]:
        return [float(np.mean(p.samples)) for p in o.points if p.samples.size]

    def scales(self, o: Any, xs: Sequence[float], ys: Sequence[float]) -> tuple[bool, bool]:
        """(log x, log y)."""
        return positive(xs), positive(ys)

    def mean_label(self, claim: Any) -> str:
        """The grid table's mean column."""
        return "replica mean"

    def grid_columns(self, claim: Any) -> bool:
        """Whether the grid table opens with the grid value, the mean, its CI, the replicas and divergences
        (False for a statistic whose points are not replica means over a grid: its own columns say it all)."""
        return True

    def table_note(self, o: Any) -> str:
        """A sentence before the grid table, when its rows need one."""
        return ""

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        x, m, lo, hi = mean_series(o.points, o.claim.level)
        draw_means(ax, x, m, lo, hi, o.claim.level, log_y, mean_label(o.points))

    def caption(self, o: Any) -> str:
        return self.caption_text.format(pct=pct(o.claim.level))


class NoRule(Piece):
    """A claim whose statistic carries its own yardstick."""


@dataclass(frozen=True)
class View:
    """A claim's display: its statistic's layers and axes, then its rule's."""

    statistic: Statistic
    rule: Piece = NoRule()

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        self.statistic.draw(ax, o, log_y)
        self.rule.draw(ax, o, log_y)
        self.statistic.annotate(ax, o, log_y)
        self.rule.annotate(ax, o, log_y)

    def ylabel(self, claim: Any) -> str:
        return self.statistic.ylabel(claim)

    def xlabel(self, claim: Any) -> str:
        return self.statistic.xlabel(claim)

    def x_values(self, o: Any) -> list[float]:
        return self.statistic.x_values(o)

    def categories(self, o: Any) -> list[str] | None:
        return self.statistic.categories(o)

    def y_values(self, o: Any) -> list[float]:
        return self.statistic.y_values(o) + self.rule.y_values(o)

    def scales(self, o: Any, xs: Sequence[float], ys: Sequence[float]) -> tuple[bool, bool]:
        return self.statistic.scales(o, xs, ys)

    def caption(self, o: Any) -> str:
        return self.statistic.caption(o) + self.rule.caption(o)

    def mean_label(self, claim: Any) -> str:
        return self.statistic.mean_label(claim)

    def grid_columns(self, claim: Any) -> bool:
        return self.statistic.grid_columns(claim)

    def statistic_columns(self, claim: Any) -> list[Column]:
        return self.statistic.columns(claim)

    def rule_columns(self, claim: Any) -> list[Column]:
        return self.rule.columns(claim)

    def facts(self, o: Any) -> list[Fact]:
        return self.statistic.facts(o) + self.rule.facts(o)

    def observed(self, o: Any) -> list[tuple[str, str]]:
        return self.statistic.observed(o) + self.rule.observed(o)

    def table_note(self, o: Any) -> str:
        return self.statistic.table_note(o)


class _Delegated:
    """Captions, columns, facts and numbers of the wrapped piece (``inner``)."""

    inner: Any

    def caption(self, o: Any) -> str:
        return self.inner.caption(o)

    def columns(self, claim: Any) -> list[Column]:
        return self.inner.columns(claim)

    def facts(self, o: Any) -> list[Fact]:
        return self.inner.facts(o)

    def observed(self, o: Any) -> list[tuple[str, str]]:
        return self.inner.observed(o)

    def stated_bound(self, claim: Any) -> Any:
        return self.inner.stated_bound(claim)


@dataclass(frozen=True)
class OwnDrawing(_Delegated, Statistic):
    """A claim that draws itself (``draw_plot(ax, outcome, log_y)``, ``plot_label``, ``plot_log_x``):
    its drawing and y label; captions, facts and columns still come from its kind's statistic."""

    inner: Statistic

    def ylabel(self, claim: Any) -> str:
        return claim.plot_label

    def scales(self, o: Any, xs: Sequence[float], ys: Sequence[float]) -> tuple[bool, bool]:
        return positive(xs) and bool(getattr(o.claim, "plot_log_x", False)), positive(ys)

    def x_values(self, o: Any) -> list[float]:
        # the claim may draw past its grid (``plot_x_values(outcome)``, e.g. a rate beyond a theorem's region)
        extra = getattr(o.claim, "plot_x_values", None)
        return super().x_values(o) + (list(extra(o)) if callable(extra) else [])

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        o.claim.draw_plot(ax, o, log_y)

    def mean_label(self, claim: Any) -> str:
        return self.inner.mean_label(claim)

    def grid_columns(self, claim: Any) -> bool:
        return self.inner.grid_columns(claim)


@dataclass(frozen=True)
class Undrawn(_Delegated, Piece):
    """A rule whose drawing the claim does itself: only its captions, columns and facts remain."""

    inner: Piece


def view_of(claim: Any) -> View:
    """The view of a claim from its decision's pieces (see the module docstring)."""
    shown = [piece.display() for piece in (claim.plan, claim._reading(), claim.statistic)]
    statistic = next((v for v in shown if v is not None), None) or Statistic()
    rule = claim.rule.display() or NoRule()
    if callable(getattr(claim, "draw_plot", None)):
        # the claim draws the whole figure: the rule's layer is part of its drawing
        return View(OwnDrawing(statistic), Undrawn(rule))
    return View(statistic, rule)


def formula_parts(expr: sp.Basic, source: Any, note: str = "") -> tuple[Any, ...]:
    """Fact parts for a bound: the expression, its source, and its note when it has one."""
    # the place in the paper (the page names the paper; its file name would say nothing to a reader)
    return (expr, f" [{getattr(source, 'where', source)}]") + ((f" - {note}",) if note else ())
