"""One plot per claim: each claim kind owns its drawing and axis label (``PLOTS``, or a claim's own
``draw_plot``); figures are drawn in parallel."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # reports are written headless (CI, worker processes): never open a window

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogFormatter, NullFormatter  # noqa: E402

from ..claims import Claim, Outcome, PointResult  # noqa: E402
from ..paper import Paper  # noqa: E402
from .format import (  # noqa: E402
    _deterministic,
    _mean_ci,
    _pct,
    _value,
)

# ---------------------------------------------------------------------------------------------
# Plots


class _PlainLogFormatter(LogFormatter):
    """Log-axis labels as plain numbers (0.2, 0.3, ...) instead of mathtext powers (2x10^-1); the
    base class still decides which minor ticks get a label (only on axes spanning few decades)."""

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        return f"{x:.3g}"


def _positive(values: Sequence[float | None] | np.ndarray) -> bool:
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    arr = arr[np.isfinite(arr)]
    return arr.size > 0 and bool((arr > 0).all())


def _series(points: Sequence[PointResult], level: float) -> tuple[np.ndarray, ...]:
    """x, mean, CI low, CI high over the grid points that have finite replicas."""
    rows = [(p.value, *_mean_ci(p, level)) for p in points if p.samples.size]
    if not rows:
        return tuple(np.empty(0) for _ in range(4))
    return tuple(np.asarray(col, dtype=float) for col in zip(*rows))


def _draw_measured(ax: Any, x: np.ndarray, m: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                   level: float, log_y: bool, label: str) -> None:
    """Replica means as points and their CI as a band (lower ends <= 0 clipped on a log axis)."""
    if not x.size:
        return
    order = np.argsort(x)
    x, m, lo, hi = x[order], m[order], lo[order], hi[order]
    clipped = np.isfinite(lo) & (lo <= 0) if log_y else np.zeros(x.shape, dtype=bool)
    low = np.where(clipped, m / 10, lo) if log_y else lo
    band = f"{_pct(level)} CI of the mean"
    if np.all(np.isfinite(lo) & (lo == hi)):
        label += " (deterministic: replicas identical, no CI)"
    if clipped.any():
        band += " (lower end <= 0 drawn at mean/10)"
    ok = np.isfinite(low) & np.isfinite(hi) & (hi > low)  # no band where unbounded (1 replica) or deterministic
    if ok.any():
        ax.fill_between(x, np.where(ok, low, np.nan), np.where(ok, hi, np.nan), color="C0", alpha=0.2,
                        lw=0, label=band)
        ax.vlines(x[ok], low[ok], hi[ok], color="C0", alpha=0.6, lw=1)
    ax.plot(x, m, "o", color="C0", ms=5, label=label, zorder=4)


def _slope_plot(ax: Any, o: Outcome, log_y: bool) -> None:
    """Replica means, the fitted power law and the tolerance band of the expected exponent: two-sided
    between the slopes e - tol and e + tol, one-sided (at most / at least) as the region below / above
    the cap, all through the geometric-mean point where the OLS line also passes."""
    claim: Any = o.claim  # each kind reads its own fields
    x, m, lo, hi = _series(o.points, claim.level)
    _draw_measured(ax, x, m, lo, hi, claim.level, log_y, "replica mean")
    if not x.size:
        return
    xx = np.geomspace(x.min(), x.max(), 64) if _positive(x) else np.linspace(x.min(), x.max(), 64)
    fit = o.evidence.get("fit")
    if fit:
        spread = ("deterministic" if fit.get("deterministic") else
                  f"{_pct(fit['level'])} CI [{fit['ci_low']:+.3f}, {fit['ci_high']:+.3f}]")
        label = f"fit: slope {fit['slope']:+.3f}, {spread}, R\u00b2 {fit['r2']:.3f}"
        ax.plot(xx, math.exp(fit["intercept"]) * xx ** fit["slope"], "-", color="C1", lw=1.8, label=label)
    e = o.evidence.get("expected_exponent")
    if e is None or not (_positive(x) and _positive(m)):
        return
    gx, gy = math.exp(np.mean(np.log(x))), math.exp(np.mean(np.log(m)))
    tol = float(o.evidence.get("tolerance", 0.0))
    side = o.evidence.get("side", "two-sided")
    source = o.evidence.get("expected_from", "")
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


def _hitting_plot(ax: Any, o: Outcome, log_y: bool) -> None:
    _slope_plot(ax, o, log_y)
    levels: list[Any] = sorted({p.stats.get("level") for p in o.points if p.stats.get("level") is not None})
    if levels:
        text = f"{levels[0]:.3g}" if len(levels) == 1 else f"{levels[0]:.3g} to {levels[-1]:.3g}"
        ax.plot([], [], " ", label=f"threshold on {o.claim.measure}: {text}")


def _rate_plot(ax: Any, o: Outcome, log_y: bool) -> None:
    """The measure against the round (linear axis, log y): replica mean, the fitted slope over the
    window, the exact rate and the theorem's guaranteed rate through the window's first point."""
    claim: Any = o.claim  # each kind reads its own fields
    for _i, p in enumerate(o.points):
        trace = p.trace
        if trace is None:
            continue
        marks = np.asarray(trace.checkpoints, dtype=float)
        mean = np.nanmean(trace.measures[claim.measure], axis=1)
        ok = np.isfinite(mean) & (mean > 0)
        ax.plot(marks[ok], mean[ok], "-", color="C0", lw=1.4, label=f"{claim.measure}, replica mean ({claim.vary}="
                f"{_value(p.value)})" + (" - deterministic" if _deterministic(p) else ""))
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


def _threshold_plot(ax: Any, o: Outcome, log_y: bool) -> None:
    claim: Any = o.claim  # each kind reads its own fields
    x, m, lo, hi = _series(o.points, claim.level)
    _draw_measured(ax, x, m, lo, hi, claim.level, log_y, "replica mean")
    ax.axhline(claim.threshold, color="C3", ls="--", lw=1.5, label=f"threshold {claim.threshold:g} (one-sided: at most)")


def _bound_plot(ax: Any, o: Outcome, log_y: bool) -> None:
    claim: Any = o.claim  # each kind reads its own fields
    x, m, lo, hi = _series(o.points, claim.level)
    _draw_measured(ax, x, m, lo, hi, claim.level, log_y, "replica mean")
    pts: list[Any] = sorted((p for p in o.points if p.evaluation is not None), key=lambda p: p.value)
    if not pts:
        return
    versions = list(claim.theorem.versions) if claim.theorem is not None else sorted(pts[0].evaluation.bounds)
    xs = np.array([p.value for p in pts], dtype=float)
    curves: dict[str, np.ndarray] = {v: np.array([p.evaluation.bounds.get(v, math.nan) for p in pts], dtype=float) for v in versions}
    styles = ["--", "-.", ":", (0, (6, 2, 1, 2))]
    for i, v in enumerate(versions):
        ys = curves[v]
        zero = [_value(x) for x, y in zip(xs, ys) if np.isfinite(y) and y <= 0]
        if log_y:
            ys = np.where(ys > 0, ys, np.nan)  # a non-positive bound has no place on a log axis
        mine = v == getattr(claim, "version", None)
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


def _limit_plot(ax: Any, o: Outcome, log_y: bool) -> None:
    claim: Any = o.claim  # each kind reads its own fields
    pts = sorted((p for p in o.points if "distance" in p.stats), key=lambda p: p.value)
    x = np.array([p.value for p in pts], dtype=float)
    d = np.array([p.stats["distance"] for p in pts], dtype=float)
    lo = np.array([p.stats["low"] for p in pts], dtype=float)
    hi = np.array([p.stats["high"] for p in pts], dtype=float)
    if log_y:
        lo = np.where(lo > 0, lo, d / 10)
    # vlines rather than errorbar: a bootstrap interval of a norm need not contain the estimate
    ax.vlines(x, lo, hi, color="C0", lw=2, alpha=0.6, label=f"{_pct(claim.level)} bootstrap CI")
    ax.plot(x, d, "o", color="C0", ms=6, label=f"distance of the replica-mean final {claim.point} "
            f"to {claim.target_name}", zorder=4)
    ax.axhline(claim.tolerance, color="C3", ls="--", lw=1.5, label=f"tolerance {claim.tolerance:g}")


def _value_plot(ax: Any, o: Outcome, log_y: bool) -> None:
    claim: Any = o.claim  # each kind reads its own fields
    x, m, lo, hi = _series(o.points, claim.level)
    _draw_measured(ax, x, m, lo, hi, claim.level, log_y, "replica mean")
    x = np.array([p.value for p in o.points], dtype=float)
    pred = np.array([float(claim.predict(p.config)) for p in o.points])
    ax.plot(x, pred, "--", color="C2", lw=1.8, label=f"predicted: {claim.prediction}")
    ax.fill_between(x, pred * (1 - claim.rel_tolerance), pred * (1 + claim.rel_tolerance), color="C2",
                    alpha=0.12, label=f"tolerance +-{claim.rel_tolerance:.0%}")


def _plot(o: Outcome, path: Path) -> bool:
    """Draw the claim's plot into path; False when there is nothing to draw."""
    claim: Any = _drawn(o.claim)
    own = getattr(claim, "draw_plot", None)  # a claim kind may draw itself (e.g. ratecheck.hunt)
    draw, ylabel_of = (lambda ax, o, log_y: own(ax, o, log_y), lambda c: c.plot_label) if own else \
        PLOTS.get(claim.kind, PLOTS["slope"])
    ylabel = ylabel_of(claim)
    if claim.kind == "limit":
        ys = [v for p in o.points for v in (p.stats.get("distance"), p.stats.get("high"))]
        ys.append(claim.tolerance)
    elif claim.kind == "rate":
        ys = [float(v) for p in o.points if p.trace is not None for v in np.ravel(p.trace.measures[claim.measure])]
    else:
        ys = [float(np.mean(p.samples)) for p in o.points if p.samples.size]
    if not any(v is not None and math.isfinite(v) for v in ys):
        return False
    xs = [p.value for p in o.points]
    log_x, log_y = _positive(xs) and (own is None or getattr(claim, "plot_log_x", False)), _positive(ys)
    if claim.kind == "rate":  # rounds on a linear axis, the measure on a log axis
        xs = [0.0, max(float(p.trace.checkpoints[-1]) for p in o.points if p.trace is not None)]
        log_x, log_y = False, True

    fig, ax = plt.subplots(figsize=(6.6, 4.3), dpi=110)
    try:
        if log_x:
            ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        draw(ax, _as_drawn(o), log_y)
        if log_x:
            # label the grid values themselves: decade ticks alone say little on a 1..32 grid
            ticks = sorted(set(xs))
            if len(ticks) <= 12:
                ax.set_xticks(ticks)
                ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
                ax.xaxis.set_minor_formatter(NullFormatter())
        empty = [p.value for p in o.points if p.samples.size == 0]
        for i, v in enumerate(empty):
            # a grid point without finite replicas has no mean: mark it rather than drop it silently
            ax.axvline(v, color="C3", ls=":", lw=1.2, label="no finite replica (all diverged)" if i == 0 else None)
        # x limits from the whole grid (axvline does not autoscale), with a margin so edge marks show
        lo_x, hi_x = min(xs), max(xs)
        if log_x:
            pad = max(1.08, (hi_x / lo_x) ** 0.04)
            ax.set_xlim(lo_x / pad, hi_x * pad)
        else:
            pad = 0.04 * (hi_x - lo_x) or 0.5
            ax.set_xlim(lo_x - pad, hi_x + pad)
        if log_y:
            ax.yaxis.set_major_formatter(_PlainLogFormatter(labelOnlyBase=False))
            ax.yaxis.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
        xlabel = "round" if claim.kind == "rate" else claim.vary
        ax.set_xlabel(f"{xlabel} ({'log' if log_x else 'linear'} scale)")
        ax.set_ylabel(f"{ylabel} ({'log' if log_y else 'linear'})")
        title = (f"{o.claim.id}\nobservation (no verdict)" if o.observation else
                 f"{o.claim.id}\nmeasured {o.verdict}, expected {o.expected}")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            # below the axes, so the legend never hides data
            ax.legend(handles, [textwrap.fill(lab, 90) for lab in labels], loc="upper center",
                      bbox_to_anchor=(0.5, -0.16), fontsize=8, frameon=False)
        _save(fig, path)
    finally:
        plt.close(fig)
    return True


def _save(fig: Any, path: Path) -> None:
    """Save with the layout fitted once: bbox_inches='tight' would draw every figure twice."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path)


def _trajectory_plot(o: Outcome, path: Path) -> bool:
    """A hunt's best instance (the counterexample if any) along its run: the measure at each checkpoint
    against the bound evaluated at that checkpoint's T with the instance's constants (ratecheck.hunt)."""
    tr = o.evidence.get("trajectory")
    if not tr or not tr.get("rounds"):
        return False
    t = np.asarray(tr["rounds"], dtype=float)
    mean, low, high = (np.asarray(tr[k], dtype=float) for k in ("mean", "low", "high"))
    bound = np.asarray(tr["bound"], dtype=float)
    fig, ax = plt.subplots(figsize=(6.6, 4.3), dpi=110)
    try:
        ax.set_xscale("log")
        if _positive(np.concatenate([mean, bound])):
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(_PlainLogFormatter(labelOnlyBase=False))
            ax.yaxis.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
        what = "expectation (exact)" if tr.get("exact") else "replica mean"
        ax.plot(t, mean, "o-", color="C0", ms=4, lw=1.6, label=f"{tr['measure']}: {what}")
        if not tr.get("exact"):
            ax.fill_between(t, low, high, color="C0", alpha=0.18, lw=0, label=f"{100 * tr.get('level', 0.95):g}% CI")
        at = "the checkpoint's state" if tr.get("bound_at") == "state" else "T = checkpoint"
        # markers too: a shrunk counterexample is often a single iteration, which a dashed line cannot show
        ax.plot(t, bound, "x--", color="C3", ms=6, lw=1.8, label=f"bound '{tr['version']}' at {at}")
        above = mean > bound
        if above.any():
            ax.plot(t[above], mean[above], "s", color="C3", ms=7, mfc="none", mew=1.6, label="measure above the bound")
        kind = "counterexample" if tr.get("found") else "largest measure/bound found"
        ax.set_xlabel(f"round T (log scale; the run's horizon {tr.get('horizon')})")
        ax.set_ylabel(f"{tr['measure']} and the bound")
        ax.set_title(f"{o.claim.id}\n{kind}: measure against the bound along its run", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8, frameon=False)
        _save(fig, path)
    finally:
        plt.close(fig)
    return True


# extra figures an outcome may ask for, by name (write_report adds a task per outcome that has one)
FIGURES = {"trajectory": _trajectory_plot}


def extra_figures(o: Outcome) -> list[str]:
    """Names of the extra figures (FIGURES) this outcome's evidence can be drawn as."""
    return ["trajectory"] if o.evidence.get("trajectory") else []


def _draw_task(task: tuple) -> bool:
    outcome, path, *kind = task
    return FIGURES[kind[0]](outcome, path) if kind else _plot(outcome, path)


# Figures are independent: drawn in forked worker processes when the platform has fork (they inherit
# the outcomes, whose claims hold lambdas and cannot be pickled); serially otherwise. No number in
# the report depends on this.
_PENDING: list[tuple[Outcome, Path]] = []


def _plot_pending(index: int) -> bool:
    with np.errstate(all="ignore"):
        return _draw_task(_PENDING[index])


def plot_all(tasks: Sequence[tuple], jobs: int | None = None) -> list[bool]:
    """Draw every (outcome, path) claim plot, or (outcome, path, name) extra figure (FIGURES);
    ``jobs`` worker processes (default: all cores)."""
    import multiprocessing
    import os

    jobs = max(1, min(jobs or os.cpu_count() or 1, len(tasks)))
    if jobs == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [_draw_task(task) for task in tasks]
    _PENDING[:] = list(tasks)
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            return pool.map(_plot_pending, range(len(tasks)), chunksize=1)
    finally:
        _PENDING.clear()


def _drawn(claim: Claim) -> Claim:
    """The claim whose plot an outcome shows: an observation draws the claim kind it reads."""
    inner = getattr(claim, "of", None)
    return inner if inner is not None else claim


def _as_drawn(o: Outcome) -> Outcome:
    inner = _drawn(o.claim)
    if inner is o.claim:
        return o
    return Outcome(inner, o.verdict, o.reason, o.evidence, o.points)


def _measure_label(claim: Claim) -> str:
    return f"{claim.measure} after the last round" if claim.summary is None else f"{claim.measure} (claim summary)"


# claim kind -> (draw(ax, outcome, log_y), y-axis label): each kind owns its plot
PLOTS = {
    "slope": (_slope_plot, _measure_label),
    "hitting_time": (_hitting_plot, lambda c: f"rounds until {c.measure} first reaches the threshold"),
    "bound": (_bound_plot, _measure_label),
    "value": (_value_plot, _measure_label),
    "threshold": (_threshold_plot, _measure_label),
    "limit": (_limit_plot, lambda c: f"||mean final {c.point} - {c.target_name}||"),
    "rate": (_rate_plot, lambda c: f"{c.measure} (replica mean)"),
}


def paper_figures(module: Paper | None, group: Sequence[Outcome], out_dir: Path,
                  stem: str) -> list[tuple[str, str, str]]:
    """Figures a paper module draws itself: ``report_figures(outcomes)`` yields
    (title, draw(ax), caption); each is saved as <stem>/figure_<i>.png. Returns (title, src, caption)."""
    make = module.report_figures if module is not None else None
    out = []
    for i, (title, draw, caption) in enumerate(make(group) if make else []):
        fig, ax = plt.subplots(figsize=(6.6, 4.3), dpi=110)
        try:
            draw(ax)
            ax.set_title(title, fontsize=10)
            ax.grid(True, alpha=0.3)
            handles, labels = ax.get_legend_handles_labels()
            if handles:
                ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8,
                          frameon=False, ncol=2)
            path = out_dir / stem / f"figure_{i}.png"
            _save(fig, path)
        finally:
            plt.close(fig)
        out.append((title, f"{stem}/figure_{i}.png", caption))
    return out


