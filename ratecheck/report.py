"""Markdown and HTML reports of claim outcomes, with one plot per claim.

``write_report`` writes into ``out_dir``::

    index.md, index.html          summary: one row per paper, the profile, the date and ``meta``
    <paper>.md, <paper>.html      verdicts, confirmed errata, one section per claim, the theorems
    <paper>/<claim_id>.png        one plot per claim (the id's dots replaced by underscores)

Both formats are rendered from one small document model (blocks of inline spans), so they always carry
the same content; long sympy formulas are MathML in HTML (browsers render it natively) and code in
Markdown. Every number shown comes from the outcomes and theorems passed in. Each claim kind owns its
plot and axis label (``PLOTS``): slopes draw their tolerance band (one-sided for one-sided claims),
hitting times are labelled as rounds to a threshold, rates are drawn on a linear round axis, and an
observation draws the plot of the claim kind it reads. Expected FAILs are not painted as failures,
deterministic points say so instead of a zero-width CI, and a bound equal to 0 is noted on a log axis.
"""

from __future__ import annotations

import html
import json
import math
import re
import textwrap
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from typing import Any, Mapping, Sequence, Union

import matplotlib

matplotlib.use("Agg")  # reports are written headless (CI, worker processes): never open a window

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import sympy as sp  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogFormatter, NullFormatter  # noqa: E402

from .claims import (  # noqa: E402
    BoundClaim,
    Claim,
    LimitClaim,
    Outcome,
    PointResult,
    Profile,
    SlopeClaim,
    Verdict,
)
from .fit import mean_ci  # noqa: E402
from .paper import Paper  # noqa: E402
from .theory import Theorem  # noqa: E402

__all__ = ["write_report"]

REASON_CHARS = 220  # the verdict table shows one line; the claim section has the full reason


# ---------------------------------------------------------------------------------------------
# Document model: rendered to Markdown and to HTML from the same blocks


@dataclass(frozen=True)
class Span:
    """A piece of inline text with its style and an optional link."""

    text: str
    bold: bool = False
    code: bool = False
    href: str | None = None  # relative URL, identical in both formats (images, external pages)
    page: str | None = None  # report page stem: linked as <page>.md or <page>.html
    fragment: str | None = None  # anchor id; HTML only (Markdown renderers generate their own)
    cls: str | None = None  # HTML class (verdict colours)
    math: str | None = None  # MathML markup shown in HTML instead of the (code) text


MATHML_CHARS = 60  # formulas longer than this are MathML in HTML (they overflow as code)


def formula(expr: Any) -> Span:
    """A sympy expression or relation: code text, and MathML in HTML when it is long."""
    text = sp.sstr(expr)
    if len(text) <= MATHML_CHARS:
        return Span(text, code=True)
    try:
        from sympy.printing.mathml import mathml

        markup = mathml(expr, printer="presentation")
    except Exception:  # pragma: no cover - a printer gap must not break a report
        return Span(text, code=True)
    return Span(text, code=True, math=markup)


Inline = Union[str, Span, Sequence[Union[str, Span]]]


@dataclass
class Heading:
    level: int
    content: Inline
    anchor: str | None = None


@dataclass
class Para:
    content: Inline


@dataclass
class Bullets:
    items: list[Inline]


@dataclass
class Table:
    header: list[Inline]
    rows: list[list[Inline]] = field(default_factory=list)
    cls: str | None = None  # HTML class


@dataclass
class Image:
    src: str  # relative to the report directory
    alt: str


Block = Union[Heading, Para, Bullets, Table, Image]


def _spans(content: Inline) -> list[Span]:
    if isinstance(content, str):
        return [Span(content)]
    if isinstance(content, Span):
        return [content]
    return [Span(c) if isinstance(c, str) else c for c in content]


# -- Markdown


def _md_text(text: str, in_table: bool) -> str:
    text = text.replace("\\", "\\\\").replace("*", "\\*").replace("`", "\\`")
    # '<' before a letter could open an HTML tag in Markdown; '<=' and '< 1' are left readable
    text = re.sub(r"<(?=[A-Za-z/!?])", r"\\<", text)
    if in_table:
        text = " ".join(text.split()).replace("|", "\\|")
    return text


def _md_inline(content: Inline, in_table: bool = False) -> str:
    out = []
    for s in _spans(content):
        if s.code:
            text = " ".join(s.text.split()) if in_table else s.text
            if in_table:
                text = text.replace("|", "\\|")
            tick = "``" if "`" in text else "`"
            text = f"{tick} {text} {tick}" if tick == "``" else f"`{text}`"
        else:
            text = _md_text(s.text, in_table)
        if s.bold and text.strip():
            # CommonMark ignores '**' next to inner whitespace: keep the spaces outside the markers
            core = text.strip()
            lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
            text = f"{lead}**{core}**{trail}"
        if s.href is not None:
            text = f"[{text}]({s.href})"
        elif s.page is not None:
            text = f"[{text}]({s.page}.md)"
        out.append(text)
    return "".join(out)


def render_markdown(blocks: Sequence[Block]) -> str:
    """The blocks as GitHub-flavoured Markdown."""
    parts = []
    for b in blocks:
        if isinstance(b, Heading):
            parts.append("#" * b.level + " " + _md_inline(b.content))
        elif isinstance(b, Para):
            parts.append(_md_inline(b.content))
        elif isinstance(b, Bullets):
            parts.append("\n".join("- " + _md_inline(item) for item in b.items))
        elif isinstance(b, Table):
            lines = ["| " + " | ".join(_md_inline(h, True) for h in b.header) + " |"]
            lines.append("|" + "---|" * len(b.header))
            lines += ["| " + " | ".join(_md_inline(c, True) for c in row) + " |" for row in b.rows]
            parts.append("\n".join(lines))
        elif isinstance(b, Image):
            parts.append(f"![{_md_text(b.alt, True)}]({b.src})")
    return "\n\n".join(parts) + "\n"


# -- HTML

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 1200px;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1, h2, h3 { line-height: 1.2; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
h3 { margin-top: 1.8em; }
table { border-collapse: collapse; margin: .8em 0; font-size: 90%; display: block; overflow-x: auto;
        max-width: 100%; }
table.verdicts td:nth-child(2), table.verdicts th:nth-child(2) { position: sticky; left: 0; white-space: nowrap; }
table.verdicts td:last-child { min-width: 16em; }
math { font-size: 105%; overflow-x: auto; max-width: 100%; display: inline-block; vertical-align: middle; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code { background: #f5f5f5; padding: 0 .2em; border-radius: 3px; font-size: 92%; }
img { max-width: 100%; border: 1px solid #eee; }
.v-pass { background: #d8f0dc; color: #14532d; }
.v-fail { background: #f8d7da; color: #7f1d1d; }
.v-inconclusive { background: #fff1c2; color: #7a5300; }
.v-fail-expected { background: #e3e8f4; color: #1e3a6e; }
.v-observed { background: #eeeeee; color: #333; }
.v-neutral { }
.unexpected { font-weight: bold; color: #b00020; }
.violated { color: #b00020; }
"""


def _html_inline(content: Inline) -> str:
    out = []
    for s in _spans(content):
        if s.math is not None:
            out.append(f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline" '
                       f'title="{html.escape(s.text, quote=True)}">{s.math}</math>')
            continue
        text = html.escape(s.text)
        if s.code:
            text = f"<code>{text}</code>"
        if s.bold:
            text = f"<strong>{text}</strong>"
        if s.cls:
            text = f'<span class="{html.escape(s.cls)}">{text}</span>'
        href = s.href
        if href is None and s.page is not None:
            href = f"{s.page}.html" + (f"#{s.fragment}" if s.fragment else "")
        elif href is None and s.fragment is not None:
            href = f"#{s.fragment}"
        if href is not None:
            text = f'<a href="{html.escape(href, quote=True)}">{text}</a>'
        out.append(text)
    return "".join(out)


def _cell_class(content: Inline) -> str:
    # a cell holding a verdict is coloured as a whole, not just its text
    classes = [s.cls for s in _spans(content) if s.cls and s.cls.startswith("v-")]
    return f' class="{html.escape(classes[0])}"' if classes else ""


def render_html(blocks: Sequence[Block], title: str) -> str:
    """The blocks as a self-contained HTML page (inline CSS, relative image paths)."""
    body = []
    for b in blocks:
        if isinstance(b, Heading):
            anchor = f' id="{html.escape(b.anchor, quote=True)}"' if b.anchor else ""
            body.append(f"<h{b.level}{anchor}>{_html_inline(b.content)}</h{b.level}>")
        elif isinstance(b, Para):
            body.append(f"<p>{_html_inline(b.content)}</p>")
        elif isinstance(b, Bullets):
            items = "".join(f"<li>{_html_inline(i)}</li>" for i in b.items)
            body.append(f"<ul>{items}</ul>")
        elif isinstance(b, Table):
            head = "".join(f"<th>{_html_inline(h)}</th>" for h in b.header)
            rows = "".join(
                "<tr>" + "".join(f"<td{_cell_class(c)}>{_html_inline(c)}</td>" for c in row) + "</tr>"
                for row in b.rows
            )
            cls = f' class="{html.escape(b.cls)}"' if b.cls else ""
            body.append(f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif isinstance(b, Image):
            src, alt = html.escape(b.src, quote=True), html.escape(b.alt, quote=True)
            body.append(f'<p><img src="{src}" alt="{alt}" loading="lazy"></p>')
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


# ---------------------------------------------------------------------------------------------
# Formatting helpers


def _g(x: Any) -> str:
    """A number with 3 significant digits; non-finite values and None spelled out."""
    if x is None:
        return "-"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.3g}"


def _value(x: float) -> str:
    return f"{float(x):g}"


def _safe(name: str) -> str:
    """A file name from an id: dots (and anything else unsafe) become underscores."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def _anchor(prefix: str, name: str) -> str:
    return f"{prefix}-{_safe(name)}"


def _one_line(text: str, limit: int = REASON_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def _verdict(v: Verdict | str, ok: bool | None = None) -> Span:
    """A verdict cell. ``ok`` given (a measured verdict): an expected FAIL is not painted as a failure."""
    v = str(v)
    if ok is None:  # an expectation: neutral
        return Span(v, cls="v-neutral")
    if ok and v == "FAIL":
        return Span(v, cls="v-fail-expected")
    return Span(v, cls=f"v-{v.lower()}")


def _status(o: Outcome) -> Span:
    if not o.ok:
        return Span("UNEXPECTED", bold=True, cls="unexpected")
    if o.observation:
        return Span("observation (no verdict)")
    if o.erratum:
        return Span("OK (erratum confirmed)")
    # an expected FAIL of the algorithm itself is no erratum of the paper: say which it is
    if o.verdict == Verdict.FAIL and getattr(o.claim, "negative_control", False):
        return Span("OK (negative control)")
    return Span("OK")


def _deterministic(p: PointResult) -> bool:
    return p.samples.size > 1 and float(np.ptp(p.samples)) == 0.0


def _mean_ci(p: PointResult, level: float) -> tuple[float, float, float]:
    """(mean, low, high) of a grid point's replicas; NaN when every replica diverged."""
    if p.samples.size == 0:
        return math.nan, math.nan, math.nan
    ci = mean_ci(p.samples, level=level)
    return ci.mean, ci.low, ci.high


def _pct(level: float) -> str:
    return f"{level * 100:g}%"


# ---------------------------------------------------------------------------------------------
# Plots


class _PlainLogFormatter(LogFormatter):
    """Log-axis labels as plain numbers (0.2, 0.3, ...) instead of mathtext powers (2x10^-1); the
    base class still decides which minor ticks get a label (only on axes spanning few decades)."""

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        return f"{x:.3g}"


def _positive(values: Sequence[float]) -> bool:
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
    claim = o.claim
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
    levels = sorted({p.stats.get("level") for p in o.points if p.stats.get("level") is not None})
    if levels:
        text = f"{levels[0]:.3g}" if len(levels) == 1 else f"{levels[0]:.3g} to {levels[-1]:.3g}"
        ax.plot([], [], " ", label=f"threshold on {o.claim.measure}: {text}")


def _rate_plot(ax: Any, o: Outcome, log_y: bool) -> None:
    """The measure against the round (linear axis, log y): replica mean, the fitted slope over the
    window, the exact rate and the theorem's guaranteed rate through the window's first point."""
    claim = o.claim
    for i, p in enumerate(o.points):
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
    claim = o.claim
    x, m, lo, hi = _series(o.points, claim.level)
    _draw_measured(ax, x, m, lo, hi, claim.level, log_y, "replica mean")
    ax.axhline(claim.threshold, color="C3", ls="--", lw=1.5, label=f"threshold {claim.threshold:g} (one-sided: at most)")


def _bound_plot(ax: Any, o: Outcome, log_y: bool) -> None:
    claim = o.claim
    x, m, lo, hi = _series(o.points, claim.level)
    _draw_measured(ax, x, m, lo, hi, claim.level, log_y, "replica mean")
    pts = sorted((p for p in o.points if p.evaluation is not None), key=lambda p: p.value)
    if not pts:
        return
    versions = list(claim.theorem.versions) if claim.theorem is not None else sorted(pts[0].evaluation.bounds)
    xs = np.array([p.value for p in pts], dtype=float)
    curves = {v: np.array([p.evaluation.bounds.get(v, math.nan) for p in pts], dtype=float) for v in versions}
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
    claim = o.claim
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
    claim = o.claim
    x, m, lo, hi = _series(o.points, claim.level)
    _draw_measured(ax, x, m, lo, hi, claim.level, log_y, "replica mean")
    x = np.array([p.value for p in o.points], dtype=float)
    pred = np.array([float(claim.predict(p.config)) for p in o.points])
    ax.plot(x, pred, "--", color="C2", lw=1.8, label=f"predicted: {claim.prediction}")
    ax.fill_between(x, pred * (1 - claim.rel_tolerance), pred * (1 + claim.rel_tolerance), color="C2",
                    alpha=0.12, label=f"tolerance +-{claim.rel_tolerance:.0%}")


def _plot(o: Outcome, path: Path) -> bool:
    """Draw the claim's plot into path; False when there is nothing to draw."""
    claim = _drawn(o.claim)
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
    log_x, log_y = _positive(xs) and own is None, _positive(ys)
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


# Figures are independent: drawn in forked worker processes when the platform has fork (they inherit
# the outcomes, whose claims hold lambdas and cannot be pickled); serially otherwise. No number in
# the report depends on this.
_PENDING: list[tuple[Outcome, Path]] = []


def _plot_pending(index: int) -> bool:
    outcome, path = _PENDING[index]
    with np.errstate(all="ignore"):
        return _plot(outcome, path)


def plot_all(tasks: Sequence[tuple[Outcome, Path]], jobs: int | None = None) -> list[bool]:
    """Draw every (outcome, path); ``jobs`` worker processes (default: all cores)."""
    import multiprocessing
    import os

    jobs = max(1, min(jobs or os.cpu_count() or 1, len(tasks)))
    if jobs == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [_plot(o, path) for o, path in tasks]
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


# ---------------------------------------------------------------------------------------------
# Page content


def _group(outcomes: Sequence[Outcome]) -> dict[str, list[Outcome]]:
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(o.claim.paper, []).append(o)
    return groups


def _theorems(group: Sequence[Outcome], module: Paper | None) -> list[Theorem]:
    if module is not None:
        return list(module.theorems)
    seen: dict[str, Theorem] = {}
    for o in group:
        if o.claim.theorem is not None:
            seen.setdefault(o.claim.theorem.id, o.claim.theorem)
    return list(seen.values())


def _counts(group: Sequence[Outcome]) -> dict[str, int]:
    return {
        "claims": len(group),
        **{str(v): sum(o.verdict == v for o in group) for v in Verdict},
        "ok": sum(o.ok for o in group),
        "unexpected": sum(not o.ok for o in group),
        "errata": sum(o.erratum for o in group),
    }


def _verdict_table(group: Sequence[Outcome]) -> Table:
    # the status first after the id (and sticky in HTML): on a narrow window it stays visible
    table = Table(["claim", "status", "measured", "expected", "kind", "title", "reason"], cls="verdicts")
    for o in group:
        table.rows.append([
            Span(o.claim.id, code=True, fragment=_anchor("claim", o.claim.id)),
            _status(o),
            _verdict(o.verdict, ok=o.ok),
            _verdict(o.expected),
            o.claim.kind,
            o.claim.title,
            _one_line(o.reason),
        ])
    return table


def _errata(group: Sequence[Outcome]) -> list[Block]:
    errata = [o for o in group if o.erratum]
    if not errata:
        return [Para("None confirmed in this run.")]
    blocks: list[Block] = []
    for o in errata:
        claim = o.claim
        items: list[Inline] = [[Span("Paper says: ", bold=True), claim.statement, f" [{claim.source}]"]]
        if claim.expect_reason:
            items.append([Span("Expected to fail because: ", bold=True), claim.expect_reason])
        if isinstance(claim, BoundClaim) and claim.theorem is not None:
            bound = claim.theorem.bound(claim.version)
            items.append([Span(f"Bound '{bound.version}' of {claim.theorem.id}: ", bold=True),
                          formula(bound.expr), f" [{bound.source}]"])
            if bound.note:
                items.append([Span("Note on this bound: ", bold=True), bound.note])
        items.append([Span("Measured: ", bold=True), _verdict(o.verdict, ok=o.ok), f" - {o.reason}"])
        blocks += [Heading(3, [Span(claim.id, code=True, fragment=_anchor("claim", claim.id)), f" - {claim.title}"]),
                   Bullets(items)]
    return blocks


def _observations(group: Sequence[Outcome]) -> list[Block]:
    """Numbers reported with no verdict (vacuity ratios, tightness factors, exponents against far caps)."""
    table = Table(["observation", "quantity", "values"])
    for o in group:
        if o.observation:
            values = ", ".join(f"{k} = {_g(v)}" for k, v in o.evidence.get("observed", {}).items())
            table.rows.append([Span(o.claim.id, code=True, fragment=_anchor("claim", o.claim.id)),
                               o.evidence.get("quantity", ""), values])
    tight = [(o, row) for o in group if o.claim.kind == "rate" for row in o.evidence.get("rows", [])
             if "tightness" in row]
    for o, row in tight:
        table.rows.append([Span(o.claim.id, code=True, fragment=_anchor("claim", o.claim.id)),
                           "tightness of the theorem's rate (exact / guaranteed log-contraction)",
                           f"{_g(row['tightness'])} at {o.claim.vary}={_value(row['value'])}"])
    return [table] if table.rows else [Para("None in this run.")]


def _hunts(group: Sequence[Outcome], images: Mapping[str, str | None]) -> list[Block]:
    """One section per hunted theorem and bound (ratecheck.hunt): the best ratio, the counterexample
    if any with its conditions and the command that reproduces it, the search drawn."""
    hunted = [o for o in group if "hunt" in o.evidence]
    if not hunted:
        return []
    blocks: list[Block] = [Heading(2, "Counterexample searches")]
    for o in hunted:
        h = o.evidence["hunt"]
        found = "a counterexample (shrunk)" if h["found"] else "no counterexample; the largest ratio seen"
        blocks.append(Heading(3, [Span(h["theorem"], code=True), f", bound '{h['version']}'"]))
        items: list[Inline] = [
            [Span("Claim: ", bold=True), Span(o.claim.id, code=True, fragment=_anchor("claim", o.claim.id)),
             f" ({o.verdict}, expected {o.expected})"],
            [Span("Search: ", bold=True), f"{h['examples']} admissible instances, {h['rejected']} drawn outside "
             f"the conditions, {h['seconds']}s, seed {h['seed']}" + (", truncated by the budget" if h["truncated"] else "")],
            [Span("Result: ", bold=True), f"{found}: measure/bound = {_g(h['ratio'])}"],
        ]
        if h.get("instance") is not None:
            items.append([Span("Instance: ", bold=True), Span(json.dumps(h["instance"], sort_keys=True), code=True)])
            items.append([Span("Reproduce: ", bold=True), Span(h["command"], code=True)])
        blocks.append(Bullets(items))
        if h.get("conditions"):
            table = Table(["condition", "lhs", "rhs", "margin", "holds"])
            for c in h["conditions"]:
                table.rows.append([c["name"], _g(c["lhs"]), _g(c["rhs"]), _g(c["margin"]), "yes" if c["holds"] else "no"])
            blocks.append(table)
        if images.get(o.claim.id):
            blocks.append(Image(images[o.claim.id], f"search of {o.claim.id}"))
    return blocks


def _claim_facts(o: Outcome) -> list[Inline]:
    claim = o.claim
    facts: list[Inline] = [
        [Span("Paper says: ", bold=True), claim.statement],
        [Span("Source: ", bold=True), str(claim.source)],
        [Span("Kind: ", bold=True), f"{claim.kind}; measure ", Span(claim.measure, code=True),
         f"; varied parameter {claim.vary} over ", ", ".join(_value(p.value) for p in o.points)],
    ]
    if claim.theorem is not None:
        facts.append([Span("Theorem: ", bold=True),
                      Span(claim.theorem.id, code=True, fragment=_anchor("theorem", claim.theorem.id)),
                      f" ({claim.theorem.title})"])
    expected: list[str | Span] = [Span("Expected: ", bold=True), _verdict(o.expected)]
    if claim.expect_reason:
        expected.append(f" - {claim.expect_reason}")
    facts.append(expected)
    facts.append([Span("Measured: ", bold=True), _verdict(o.verdict, ok=o.ok), " - ", _status(o)])
    facts.append([Span("Reason: ", bold=True), o.reason])
    ev = o.evidence
    if o.observation:
        facts.append([Span("Observed (no verdict): ", bold=True), f"{ev.get('quantity', '')}: " + ", ".join(
            f"{k} = {_g(v)}" for k, v in ev.get("observed", {}).items())])
    if claim.controls is not None:
        other = ev.get("controlled", {})
        facts.append([Span("Negative control of: ", bold=True),
                      Span(claim.controls.id, code=True, fragment=_anchor("claim", claim.controls.id)),
                      f" on the same grid; it measured {other.get('verdict', '-')}, this control must differ"])
    shown = _drawn(claim)
    if isinstance(shown, SlopeClaim) and "fit" in ev:
        fit = ev["fit"]
        spread = ("deterministic (replicas identical)" if fit.get("deterministic") else
                  f"{_pct(fit['level'])} bootstrap CI [{fit['ci_low']:+.4f}, {fit['ci_high']:+.4f}]")
        curv = fit.get("curvature")
        facts.append([Span("Fit: ", bold=True),
                      f"slope {fit['slope']:+.4f}, {spread}, R^2 {fit['r2']:.4f}, {len(fit['x'])} points over "
                      f"{fit.get('decades', math.nan):.2f} decades"
                      + (f", local-slope change across the grid {curv:+.3f}" if curv is not None else "")
                      + f", intercept (ln) {fit['intercept']:.4g}"])
        band = ev.get("band", [math.nan, math.nan])
        side = ev.get("side", "")
        what = {"at_most": "the theorem bounds the exponent from above: ",
                "at_least": "the theorem bounds the exponent from below: "}.get(side, "")
        facts.append([Span("Expected exponent: ", bold=True),
                      f"{what}{ev['expected_exponent']:+.4f} ({ev.get('expected_from', '')}); tolerance "
                      f"{ev.get('tolerance', math.nan):g}, {side}, band "
                      f"[{float(band[0]):+.3f}, {float(band[1]):+.3f}]"])
        if ev.get("design_reason"):
            facts.append([Span("Grid design: ", bold=True), ev["design_reason"]])
    if shown.kind == "rate":
        for row in ev.get("rows", []):
            text = (f"{claim.vary}={_value(row['value'])}: fitted {row['rate']:.5g}/round over rounds "
                    f"{row['window'][0]:g}-{row['window'][1]:g} vs exact {row['exact']:.5g}")
            if "asymptotic" in row:
                text += f" (spectral limit {row['asymptotic']:.5g})"
            if "guaranteed" in row:
                text += f"; theorem {row['guaranteed']:.4g} (tightness: exact is {row['tightness']:.3g}x faster)"
            facts.append([Span("Rate: ", bold=True), text])
    if isinstance(shown, BoundClaim) and shown.theorem is not None:
        bound = shown.theorem.bound(shown.version)
        item: list[str | Span] = [Span(f"Bound '{bound.version}': ", bold=True), formula(bound.expr),
                                  f" [{bound.source}]"]
        if bound.note:
            item.append(f" - {bound.note}")
        facts.append(item)
    if isinstance(shown, LimitClaim):
        facts.append([Span("Target: ", bold=True), f"{shown.target_name}, tolerance {shown.tolerance:g} on the "
                      f"distance of the replica-mean final {shown.point}"])
    return facts


def _grid_table(o: Outcome) -> list[Block]:
    claim = _drawn(o.claim)
    pct = _pct(claim.level)
    limit = isinstance(claim, LimitClaim)
    # a limit claim's samples are per-replica distances, not the distance of the mean
    mean_label = f"replica mean of ||{claim.point}_r - {claim.target_name}||" if limit else "replica mean"
    header: list[Inline] = [claim.vary, mean_label, f"{pct} CI", "replicas used", "diverged"]
    if limit:
        header += ["distance of mean", "CI low", "CI high"]
    evals = [p.evaluation for p in o.points if p.evaluation is not None]
    versions: list[str] = []
    conditions: list[str] = []
    if evals:
        versions = list(claim.theorem.versions) if claim.theorem is not None else list(evals[0].bounds)
        conditions = [c.name for c in evals[0].conditions]
        claimed = getattr(claim, "version", None)
        header += [f"bound '{v}'" + (" (claimed)" if v == claimed else "") for v in versions]
        if isinstance(claim, BoundClaim):
            header.append(f"mean / bound '{claim.version}'")
        header += [f"c{i + 1} lhs/rhs" for i in range(len(conditions))]
    table = Table(header)
    for p in o.points:
        mean, low, high = _mean_ci(p, claim.level)
        ci = "deterministic" if _deterministic(p) else f"[{_g(low)}, {_g(high)}]"
        row: list[Inline] = [_value(p.value), _g(mean), ci, str(p.samples.size), str(p.diverged)]
        if limit:
            row += [_g(p.stats.get(k)) for k in ("distance", "low", "high")]
        if evals:
            bounds = p.evaluation.bounds if p.evaluation is not None else {}
            row += [_g(bounds.get(v)) for v in versions]
            if isinstance(claim, BoundClaim):
                b = bounds.get(claim.version)
                row.append(_g(mean / b) if b else "-")
            results = {c.name: c for c in p.evaluation.conditions} if p.evaluation is not None else {}
            for name in conditions:
                c = results.get(name)
                if c is None:
                    row.append("-")
                    continue
                text = f"{_g(c.margin)} = {_g(c.lhs)}/{_g(c.rhs)}"
                row.append(Span(text + " violated", bold=True, cls="violated") if not c.holds else text)
        table.rows.append(row)
    blocks: list[Block] = [table]
    if claim.kind == "rate":
        blocks.insert(0, Para("Per grid point: the replica mean of the per-replica fitted log-contraction per round."))
    if conditions:
        legend: list[Inline] = [[f"c{i + 1}: ", Span(name, code=True)] for i, name in enumerate(conditions)]
        blocks += [Para("Conditions, as margin = lhs/rhs (holds when <= 1, or < 1 for strict ones):"),
                   Bullets(legend)]
    return blocks


def _claim_section(o: Outcome, image: str | None) -> list[Block]:
    claim = o.claim
    blocks: list[Block] = [
        Heading(3, [Span(claim.id, code=True), f" - {claim.title}"], anchor=_anchor("claim", claim.id)),
        Bullets(_claim_facts(o)),
    ]
    if image is not None:
        blocks.append(Image(image, f"{claim.id}: {claim.kind} plot"))
        blocks.append(Para(_plot_caption(o)))
    else:
        blocks.append(Para("No plot: no grid point has a finite replica."))
    blocks += _grid_table(o)
    return blocks


def _plot_caption(o: Outcome) -> str:
    claim = _drawn(o.claim)
    pct = _pct(claim.level)
    if claim.kind == "limit":
        return f"Points: distance of the replica-mean final iterate; bars: {pct} bootstrap CI over replicas."
    if claim.kind == "rate":
        return ("The measure against the round (linear axis, log scale): the fitted log-contraction over the shaded "
                "window, the exact rate, and the theorem's guaranteed rate, all from the window's first point.")
    text = f"Points: replica means; band: {pct} Student-t CI of the mean per grid point (none when deterministic)."
    if claim.kind == "hitting_time":
        text = ("Points: rounds until the measure first reaches the threshold (replica mean; exact up to the "
                f"checkpoint resolution); band: {pct} CI. ")
    if isinstance(claim, SlopeClaim):
        text += " Shaded: the tolerance band of the expected exponent (one-sided for a one-sided claim)."
    if o.observation:
        text += " An observation: the number is reported, with no verdict."
    return text


def _theorem_section(t: Theorem) -> list[Block]:
    blocks: list[Block] = [
        Heading(3, [Span(t.id, code=True), f" - {t.title}"], anchor=_anchor("theorem", t.id)),
        Bullets([
            [Span("Source: ", bold=True), str(t.source)],
            [Span("Measure: ", bold=True), Span(t.measure, code=True)],
            [Span("Constants: ", bold=True), ", ".join(s.name for s in t.constants) or "-"],
            [Span("Parameters: ", bold=True), ", ".join(s.name for s in t.parameters) or "-"],
        ]),
    ]
    if t.assumptions:
        blocks += [Para(Span("Assumptions", bold=True)), Bullets(list(t.assumptions))]
    blocks.append(Para(Span("Schedule", bold=True)))
    if t.schedule:
        blocks.append(Bullets([[Span(f"{k.name} = ", code=True), formula(v)] for k, v in t.schedule.items()]))
    else:
        blocks.append(Para("None prescribed."))
    if t.conditions:
        blocks.append(Para(Span("Conditions", bold=True)))
        table = Table(["name", "condition", "source", "note"])
        for c in t.conditions:
            table.rows.append([c.name, formula(c.relation), str(c.source), c.note])
        blocks.append(table)
    blocks.append(Para(Span("Bound versions", bold=True)))
    table = Table(["version", "bound", "source", "note"])
    for b in t.bounds:
        table.rows.append([Span(b.version, bold=True), formula(b.expr), str(b.source), b.note])
    blocks.append(table)
    return blocks


def _profile_text(profile: Profile) -> str:
    return f"{profile.name} ({profile.replicas} replicas, round scale {profile.scale:g})"


def _meta_items(meta: Mapping[str, Any]) -> list[Inline]:
    items: list[Inline] = []
    for key, value in meta.items():
        text = _g(value) if isinstance(value, float) else str(value)
        items.append([Span(f"{key}: ", bold=True), text])
    return items


def _paper_page(paper: str, group: Sequence[Outcome], module: Paper | None,
                images: Mapping[str, str | None], profile: Profile, generated: str,
                figures: Sequence[tuple[str, str, str]] = ()) -> list[Block]:
    title = module.title if module is not None else paper
    c = _counts(group)
    head: list[Inline] = [
        [Span("Paper key: ", bold=True), Span(paper, code=True)],
    ]
    if module is not None and module.seed:
        head.append([Span("Paper file: ", bold=True), str(module.seed)])
    head += [
        [Span("Profile: ", bold=True), _profile_text(profile)],
        [Span("Generated: ", bold=True), generated],
        [Span("Summary: ", bold=True),
         f"{c['claims'] - c['OBSERVED']} claims; PASS {c['PASS']}, FAIL {c['FAIL']}, INCONCLUSIVE "
         f"{c['INCONCLUSIVE']}; {c['ok'] - c['OBSERVED']} as expected, {c['unexpected']} unexpected; "
         f"{c['errata']} errata confirmed; {c['OBSERVED']} observations (numbers with no verdict)"],
        [Span("back to the index", page="index")],
    ]
    blocks: list[Block] = [Heading(1, title), Bullets(head),
                           Heading(2, "Verdicts"), _verdict_table(group),
                           Heading(2, "Confirmed errata"), *_errata(group),
                           Heading(2, "Observations"), *_observations(group),
                           *_hunts(group, images),
                           Heading(2, "Claims")]
    for o in group:
        blocks += _claim_section(o, images.get(o.claim.id))
    extra = module.report_sections if module is not None else None
    for heading, body in (extra(group) if extra else []):
        blocks += [Heading(2, heading), *markdown_blocks(body)]
    for title, src, caption in figures:
        blocks += [Heading(2, title), Image(src, title), Para(caption)]
    theorems = _theorems(group, module)
    if theorems:
        blocks.append(Heading(2, "Theorems"))
        for t in theorems:
            blocks += _theorem_section(t)
    return blocks


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


def markdown_blocks(text: str) -> list[Block]:
    """A paper module's extra section, written in a small Markdown subset: pipe tables, '- '
    bullets and paragraphs separated by blank lines (enough for complexity tables and errata)."""
    blocks: list[Block] = []
    lines = text.strip().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if not line:
            i += 1
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                if not all(set(c) <= set("-: ") for c in cells):  # skip the |---| rule
                    rows.append(cells)
                i += 1
            blocks.append(Table(header=list(rows[0]), rows=[list(r) for r in rows[1:]]))
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].strip().startswith("- "):
                items.append(lines[i].strip()[2:])
                i += 1
            blocks.append(Bullets(items))
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith(("|", "- ")):
                para.append(lines[i].strip())
                i += 1
            blocks.append(Para(" ".join(para)))
    return blocks


def _index_page(groups: Mapping[str, list[Outcome]], stems: Mapping[str, str],
                papers: Mapping[str, Paper], profile: Profile, meta: Mapping[str, Any],
                generated: str) -> list[Block]:
    every = [o for g in groups.values() for o in g]
    total = _counts(every)
    unexpected = [o for o in every if not o.ok]
    head: list[Inline] = [[Span("Generated: ", bold=True), generated],
                          [Span("Profile: ", bold=True), _profile_text(profile)], *_meta_items(meta)]
    status = (f"{total['claims']} claims: {total['ok']} as expected, {total['unexpected']} unexpected; "
              f"{total['errata']} errata confirmed.")
    table = Table(["paper", "title", "claims", "PASS", "FAIL", "INCONCLUSIVE", "as expected", "unexpected",
                   "errata confirmed", "page"])
    for paper, group in groups.items():
        c = _counts(group)
        module = papers.get(paper)
        title = module.title if module is not None else ""
        unexpected_cell: Inline = (Span(str(c["unexpected"]), bold=True, cls="unexpected")
                                   if c["unexpected"] else "0")
        table.rows.append([Span(paper, code=True), title, str(c["claims"]), str(c["PASS"]), str(c["FAIL"]),
                           str(c["INCONCLUSIVE"]), f"{c['ok']}/{c['claims']}", unexpected_cell,
                           str(c["errata"]), Span(stems[paper], page=stems[paper])])
    if len(groups) > 1:
        table.rows.append([Span("total", bold=True), "", str(total["claims"]), str(total["PASS"]),
                           str(total["FAIL"]), str(total["INCONCLUSIVE"]), f"{total['ok']}/{total['claims']}",
                           str(total["unexpected"]), str(total["errata"]), ""])
    blocks: list[Block] = [Heading(1, "ratecheck report"), Bullets(head), Para(status),
                           Heading(2, "Papers"), table]
    if unexpected:
        items: list[Inline] = []
        for o in unexpected:
            stem = stems[o.claim.paper]
            items.append([Span(o.claim.id, code=True, page=stem, fragment=_anchor("claim", o.claim.id)),
                          ": measured ", _verdict(o.verdict), ", expected ", _verdict(o.expected), " - ",
                          _one_line(o.reason)])
        blocks += [Heading(2, "Unexpected verdicts"), Bullets(items)]
    return blocks


# ---------------------------------------------------------------------------------------------
# Entry point


def write_report(
    outcomes: Sequence[Outcome],
    out_dir: str | Path,
    *,
    profile: Profile,
    papers: Mapping[str, Paper] | None = None,
    meta: Mapping[str, Any] | None = None,
    jobs: int | None = None,
) -> Path:
    """Write the Markdown/HTML report of ``outcomes`` into ``out_dir``; returns the path of index.html.

    Claim plots are drawn by ``jobs`` processes (default: all cores).
    ``papers`` maps a paper key to its Paper (title, seed, theorems, report hooks); without it a paper page lists the
    theorems its claims use. ``meta`` entries (wall time, version, ...) are shown on the index.
    """
    from . import __version__

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    papers = dict(papers or {})
    meta = dict(meta or {})
    meta.setdefault("ratecheck", __version__)
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    groups = _group(outcomes)
    stems: dict[str, str] = {}
    for paper in groups:
        stem = _safe(paper)
        # a paper called "index" must not overwrite the summary page; two keys must not share a file
        while stem == "index" or stem in stems.values():
            stem += "_"
        stems[paper] = stem

    tasks = [(o, out / stems[paper] / f"{_safe(o.claim.id)}.png") for paper, group in groups.items() for o in group]
    drawn = dict(zip((id(o) for o, _ in tasks), plot_all(tasks, jobs)))
    for paper, group in groups.items():
        stem = stems[paper]
        images = {o.claim.id: (f"{stem}/{_safe(o.claim.id)}.png" if drawn[id(o)] else None) for o in group}
        module = papers.get(paper)
        figures = paper_figures(module, group, out, stem)
        blocks = _paper_page(paper, group, module, images, profile, generated, figures)
        title = module.title if module is not None else paper
        (out / f"{stem}.md").write_text(render_markdown(blocks), encoding="utf-8")
        (out / f"{stem}.html").write_text(render_html(blocks, title), encoding="utf-8")

    blocks = _index_page(groups, stems, papers, profile, meta, generated)
    (out / "index.md").write_text(render_markdown(blocks), encoding="utf-8")
    (out / "index.html").write_text(render_html(blocks, "ratecheck report"), encoding="utf-8")
    return out / "index.html"
