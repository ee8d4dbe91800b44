"""One plot per claim: the frame (scales, ticks, limits, title, legend) is drawn here, the content and
the axis labels by the claim's pieces (``claim.view()``, ratecheck.claims.views); figures are drawn in
parallel."""

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
from matplotlib.ticker import FuncFormatter, LogFormatter, NullLocator  # noqa: E402

from ..claims import Claim, Outcome  # noqa: E402
from ..claims.views import positive  # noqa: E402
from ..paper import Paper  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Plots


class _PlainLogFormatter(LogFormatter):
    """Log-axis labels as plain numbers (0.2, 0.3, ...) instead of mathtext powers (2x10^-1); the
    base class still decides which minor ticks get a label (only on axes spanning few decades)."""

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        return f"{x:.3g}"


# the frame, in inches: the axes keep one size, the figure grows with its legend (below the axes, so
# it never hides data); margins are fixed, so no layout pass draws the figure before it is saved
AXES_W, AXES_H = 5.2, 2.9
LEFT, RIGHT, TOP, BELOW_AXES = 1.05, 0.25, 0.62, 0.62
LEGEND_LINE = 0.18
YLABEL_CHARS, LEGEND_CHARS = 44, 95

plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "ratecheck"})  # SVG text stays text; stable ids


def _plain_log(axis: Any) -> None:
    """Plain-number labels on a log axis; minor ticks only where they are labelled (under two decades):
    elsewhere they would cost a Tick each and say nothing the grid does not."""
    axis.set_major_formatter(_PlainLogFormatter(labelOnlyBase=False))
    low, high = axis.get_view_interval()
    if low > 0 and high / low < 100:
        axis.set_minor_formatter(_PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    else:
        axis.set_minor_locator(NullLocator())


def _frame(fig: Any, ax: Any, title: str) -> None:
    """Title, legend (below the axes, wrapped) and the fixed margins around the axes."""
    ax.set_title(title, fontsize=10, y=1.0, pad=6)  # an explicit y: no search for tick labels above the axes
    handles, labels = ax.get_legend_handles_labels()
    labels = [textwrap.fill(lab, LEGEND_CHARS) for lab in labels]
    lines = sum(lab.count("\n") + 1 for lab in labels)
    below = BELOW_AXES + (lines * LEGEND_LINE + 0.15 if handles else 0)
    width, height = LEFT + AXES_W + RIGHT, TOP + AXES_H + below
    fig.set_size_inches(width, height)
    fig.subplots_adjust(left=LEFT / width, right=1 - RIGHT / width, top=1 - TOP / height, bottom=below / height)
    if handles:
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, (below - BELOW_AXES) / height),
                   fontsize=8, frameon=False)


def _figure(o: Outcome) -> Any:
    """The claim's figure (matplotlib), or None when there is nothing to plot: no finite value, or a
    single grid point (a table row says that better than one dot)."""
    claim = _drawn(o.claim)
    view = claim.view()  # the claim's statistic and rule draw it (ratecheck.claims.views)
    drawn = _as_drawn(o)
    ys = view.y_values(drawn)
    if not any(v is not None and math.isfinite(v) for v in ys):
        return None
    xs = view.x_values(drawn)
    if len(set(xs)) < 2:
        return None
    names = view.categories(drawn)
    log_x, log_y = view.scales(drawn, xs, ys)
    log_x = log_x and names is None

    fig, ax = plt.subplots(figsize=(6.6, 4.3), dpi=110)
    try:
        if log_x:
            ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        view.draw(ax, drawn, log_y)
        if names is not None:  # the grid values index named things (the algorithms compared): name them
            ax.set_xticks(range(len(names)), names)
        elif log_x:
            # label the grid values themselves: decade ticks alone say little on a 1..32 grid
            ticks = sorted(set(xs))
            if len(ticks) <= 12:
                ax.set_xticks(ticks)
                ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
                ax.xaxis.set_minor_locator(NullLocator())  # unlabelled minor ticks cost a Tick each
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
            ax.set_xlim(lo_x - max(pad, 0.3 if names else 0), hi_x + max(pad, 0.3 if names else 0))
        if log_y:
            _plain_log(ax.yaxis)
        ax.set_xlabel(view.xlabel(claim) + ("" if names else f" ({'log' if log_x else 'linear'} scale)"))
        ax.set_ylabel(textwrap.fill(f"{view.ylabel(claim)} ({'log' if log_y else 'linear'})", YLABEL_CHARS))
        title = (f"{o.claim.id}\nobservation (no verdict)" if o.observation else
                 f"{o.claim.id}\nmeasured {o.verdict}, expected {o.expected}")
        ax.grid(True, which="major", alpha=0.3)
        _frame(fig, ax, title)
    except BaseException:
        plt.close(fig)
        raise
    return fig


def _plot(o: Outcome, path: Path, formats: Sequence[str] = ("png",)) -> bool:
    """Draw the claim's plot into path.<format> for each format; False when there is nothing to draw."""
    fig = _figure(o)
    if fig is None:
        return False
    try:
        _save(fig, path, formats)
    finally:
        plt.close(fig)
    return True


def _save(fig: Any, path: Path, formats: Sequence[str] = ("png",)) -> None:
    """Save ``path.<format>`` for each format (the frame fixed its margins: no layout pass)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for fmt in formats:
        fig.savefig(path.with_name(f"{path.name}.{fmt}"), format=fmt, dpi=110)


def _trajectory_plot(o: Outcome, path: Path, formats: Sequence[str] = ("png",)) -> bool:
    """A hunt's best instance (the counterexample if any) along its run: the measure at each checkpoint
    against the bound evaluated at that checkpoint's T with the instance's constants (ratecheck.runner.hunt)."""
    tr = o.evidence.get("trajectory")
    if not tr or not tr.get("rounds"):
        return False
    t = np.asarray(tr["rounds"], dtype=float)
    mean, low, high = (np.asarray(tr[k], dtype=float) for k in ("mean", "low", "high"))
    bound = np.asarray(tr["bound"], dtype=float)
    fig, ax = plt.subplots(figsize=(6.6, 4.3), dpi=110)
    try:
        ax.set_xscale("log")
        if positive(np.concatenate([mean, bound])):
            ax.set_yscale("log")
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
        if ax.get_yscale() == "log":
            _plain_log(ax.yaxis)
        kind = "counterexample" if tr.get("found") else "largest measure/bound found"
        ax.set_xlabel(f"round T (log scale; the run's horizon {tr.get('horizon')})")
        ax.set_ylabel(textwrap.fill(f"{tr['measure']} and the bound", YLABEL_CHARS))
        ax.grid(True, which="major", alpha=0.3)
        _frame(fig, ax, f"{o.claim.id}\n{kind}: measure against the bound along its run")
        _save(fig, path, formats)
    finally:
        plt.close(fig)
    return True


# extra figures an outcome may ask for, by name (write_report adds a task per outcome that has one)
FIGURES = {"trajectory": _trajectory_plot}


def extra_figures(o: Outcome) -> list[str]:
    """Names of the extra figures (FIGURES) this outcome's evidence can be drawn as."""
    return ["trajectory"] if o.evidence.get("trajectory") else []


def _draw_task(task: tuple) -> bool:
    """(outcome, path without suffix, formats) a claim plot, (..., name) an extra figure (FIGURES)."""
    outcome, path, formats, *kind = task
    return FIGURES[kind[0]](outcome, path, formats) if kind else _plot(outcome, path, formats)


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


def paper_figures(module: Paper | None, group: Sequence[Outcome], out_dir: Path,
                  stem: str, formats: Sequence[str] = ("svg", "png")) -> list[tuple[str, str, str]]:
    """Figures a paper module draws itself: ``report_figures(outcomes)`` yields
    (title, draw(ax), caption); each is saved as <stem>/figure_<i>.<format>. Returns (title, src of the
    first format, caption)."""
    make = module.report_figures if module is not None else None
    out = []
    for i, (title, draw, caption) in enumerate(make(group) if make else []):
        fig, ax = plt.subplots(figsize=(6.6, 4.3), dpi=110)
        try:
            draw(ax)
            ax.grid(True, alpha=0.3)
            ax.set_ylabel(textwrap.fill(ax.get_ylabel(), YLABEL_CHARS))
            _frame(fig, ax, title)
            _save(fig, out_dir / stem / f"figure_{i}", formats)
        finally:
            plt.close(fig)
        out.append((title, f"{stem}/figure_{i}.{formats[0]}", caption))
    return out


