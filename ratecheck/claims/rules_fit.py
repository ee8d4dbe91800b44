"""Rules of a claim's decision on fitted slopes and rates (ratecheck.claims.compose): the band of an
expected exponent (with the fit's design and regime checks), the difference of two series' exponents, a
linear rate against its exact value and the theorem's guarantee."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..model.fit import MeanCI, SlopeFit
from .compose import Decision, Rule
from .evidence import BandEvidence, DifferenceEvidence
from .model import PointResult, Verdict, _fmt
from .power import SCALE, SHIFT, Constraint, power
from .statistics import Difference, deterministic, point_ci, relative, slope_text
from .views_slopes import ExponentBand, Monotone


def _design(claim: Any, fit: SlopeFit) -> str:
    """Why the grid cannot decide a slope (empty when it can)."""
    if claim.design_reason:
        return ""
    count = len(set(fit.x))
    if count < claim.min_points or fit.decades < claim.min_decades - 1e-9:
        return (f"fit design: {count} points over {fit.decades:.2f} decades (need {claim.min_points} over "
                f"{claim.min_decades:g}, or a declared design_reason)")
    return ""


CURVATURE_BANDS = ("limit", "resolved")


def _regime_change(claim: Any, fit: SlopeFit, expected: float, curvature_band: str = "resolved") -> str:
    # R^2 speaks only when there is a slope to explain: a flat curve in noise has R^2 near 0 and is a
    # fine power law (exponent 0), which the band then judges
    significant = fit.ci_low > 0 or fit.ci_high < 0
    if expected != 0 and significant and fit.r2 < claim.r2_floor:
        return (f"regime change: R^2 {fit.r2:.4f} below the floor {claim.r2_floor:g} (not one power law over "
                f"the grid)")
    if not math.isfinite(fit.curvature):
        return ""
    limit = claim.tolerance if claim.max_curvature is None else claim.max_curvature
    # "limit": a curvature CI entirely beyond +-limit, a test of |curvature| <= limit whose false-fire rate is
    # at most (1 - level)/2 a side, given a CI that covers (the bootstrap-t does: benchmarks/bench_coverage.py,
    # and fessgda B2/C2's curvature spread over 12 seed offsets matches its CI's standard error). "resolved":
    # the band widened to +-max(limit, h), h the CI's half-width: a smaller false-fire rate (beyond 2h, about
    # 4 standard errors, where h > limit) bought with the power to see a bend between limit + h and 2h.
    half = (fit.curvature_high - fit.curvature_low) / 2
    band = max(limit, half) if curvature_band == "resolved" else limit
    if fit.curvature_low > band or fit.curvature_high < -band:
        widened = f" (the limit {limit:g} widened to the CI half-width the replicas resolve)" if band > limit else ""
        return (f"regime change: the local slope changes by {fit.curvature:+.3f} across the grid (CI "
                f"[{fit.curvature_low:+.3f}, {fit.curvature_high:+.3f}]), beyond +-{band:.3g}{widened}: "
                f"not one power law")
    return ""


@dataclass(frozen=True)
class ExponentInBand(Rule):
    """The fitted slope inside ``claim.expected.exponent() +- claim.tolerance`` (``claim.side``: two-sided, a
    cap or a floor): PASS when its whole CI is inside, FAIL when entirely outside, else INCONCLUSIVE. Before
    the band: ``claim.regime`` (a reason when not in regime), the fit design (``min_points`` over
    ``min_decades`` unless ``design_reason``) and a regime change (R^2 below ``r2_floor``, a local slope
    changing by more than ``max_curvature``: its CI entirely beyond +-max_curvature, or with
    ``curvature_band="resolved"`` beyond +-max(max_curvature, the CI's half-width)), each INCONCLUSIVE with its
    reason."""

    # "resolved" by default: the gate voids a decided verdict, so its false alarms are flips on correct code;
    # "limit" fires on a true power law up to (1 - level) a decision (2 of 36 at fessgda's offsets)
    curvature_band: str = "resolved"  # CURVATURE_BANDS
    reads: ClassVar[tuple[str, ...]] = ("design_reason", "expected", "regime", "side", "tolerance")  # the claim fields it reads
    view: ClassVar[Any] = ExponentBand()  # the tolerance band of the expected exponent

    def __post_init__(self) -> None:
        if self.curvature_band not in CURVATURE_BANDS:
            raise ValueError(f"curvature_band must be one of {CURVATURE_BANDS}, got {self.curvature_band!r}")

    def __call__(self, claim: Any, points: Sequence[PointResult], fit: SlopeFit) -> Decision:
        if claim.regime is not None:
            why = claim.regime(points)
            if why:
                return Verdict.INCONCLUSIVE, f"regime not reached: {why}", {}
        e = claim.expected.exponent()
        lo, hi = e - claim.tolerance, e + claim.tolerance
        band = {"two-sided": (lo, hi), "at_most": (-math.inf, hi), "at_least": (lo, math.inf)}[claim.side]
        evidence = BandEvidence(fit=fit.to_dict(), expected_exponent=e, expected_from=claim.expected.describe(),
                                tolerance=claim.tolerance, side=claim.side, band=band,
                                design_reason=claim.design_reason).to_dict()
        ci = slope_text(fit)
        why = _design(claim, fit) or _regime_change(claim, fit, e, self.curvature_band)
        if why:
            return Verdict.INCONCLUSIVE, f"{why}; {ci}", evidence
        if claim.side == "two-sided":
            target = f"band [{band[0]:+.3f}, {band[1]:+.3f}] around {e:+.3f}"
        elif claim.side == "at_most":
            target = f"the theorem's cap: at most {e:+.3f} (+{claim.tolerance:g} tolerance: <= {band[1]:+.3f})"
        else:
            target = f"the theorem's floor: at least {e:+.3f} (-{claim.tolerance:g} tolerance: >= {band[0]:+.3f})"
        if band[0] <= fit.ci_low and fit.ci_high <= band[1]:
            verdict, reason = Verdict.PASS, f"measured {ci} within {target}"
        elif fit.ci_high < band[0] or fit.ci_low > band[1]:
            verdict, reason = Verdict.FAIL, f"measured {ci} entirely outside {target}"
        else:
            verdict, reason = Verdict.INCONCLUSIVE, f"measured {ci} straddles {target}: more replicas needed"
        # a shift of the exponent moves the slope's CI and not the band (the fit gates are not part of it)
        rule = power([Constraint(fit.ci_low, fit.ci_high, *band)], SHIFT, "shift of the exponent", verdict,
                     reference=e)
        return verdict, reason, {**evidence, "power": rule}


@dataclass(frozen=True)
class DifferenceBelow(Rule):
    """slope A - slope B < -``claim.margin`` with confidence, each series inside its own band
    ``claim.expected[i] +- claim.tolerance`` when given: PASS when the difference's whole CI is below and
    every band holds, FAIL when the CI lies above or a slope lies entirely outside its band."""

    reads: ClassVar[tuple[str, ...]] = ("expected", "labels", "margin", "tolerance")  # the claim fields it reads

    def __call__(self, claim: Any, points: Sequence[PointResult], d: Difference) -> Decision:
        bands, expectations = [], {}
        for label, fit, expected in zip(claim.labels, d.fits, claim.expected):
            if expected is not None:
                e = expected.exponent()
                band = (e - claim.tolerance, e + claim.tolerance)
                expectations[label] = {"exponent": e, "from": expected.describe(), "band": list(band)}
                bands.append((label, fit, band))
        labels, fits, margin = claim.labels, d.fits, claim.margin
        evidence = DifferenceEvidence(labels=labels, margin=margin,
                                      fits={label: f.to_dict() for label, f in zip(labels, fits)},
                                      expected=expectations, value=d.value, ci_low=d.low, ci_high=d.high).to_dict()
        text = (f"slope {labels[0]} {fits[0].slope:+.3f}, {labels[1]} {fits[1].slope:+.3f}; difference "
                f"{d.value:+.3f}, {int(claim.level * 100)}% CI [{d.low:+.3f}, {d.high:+.3f}] against < {-margin:+.3f}")
        outside = [label for label, fit, band in bands if fit.ci_high < band[0] or fit.ci_low > band[1]]
        unsure = [label for label, fit, band in bands if not (band[0] <= fit.ci_low and fit.ci_high <= band[1])]
        if d.low > -margin or outside:
            extra = f"; outside its band: {', '.join(outside)}" if outside else ""
            verdict, reason = Verdict.FAIL, text + extra
        elif d.high < -margin and not unsure:
            verdict, reason = Verdict.PASS, text + ", every band held"
        else:
            extra = f"; band straddled: {', '.join(unsure)}" if unsure else ""
            verdict, reason = Verdict.INCONCLUSIVE, text + extra + ": more replicas needed"
        # a shift of series A's exponent moves the difference and A's band test; B's band test stays.
        # The rule wants the difference strictly below -margin: its band ends just under it.
        edge = math.nextafter(-margin, -math.inf)
        rule = [Constraint(d.low, d.high, b=edge)] + [Constraint(fit.ci_low, fit.ci_high, *band, moves=label == labels[0])
                                                      for label, fit, band in bands]
        reference = expectations[labels[0]]["exponent"] if labels[0] in expectations else fits[0].slope
        return verdict, reason, {**evidence, "power": power(rule, SHIFT, f"shift of the exponent of {labels[0]} "
                                                            f"(and of {labels[0]} - {labels[1]})", verdict,
                                                            reference=reference)}


@dataclass(frozen=True)
class RateAgreement(Rule):
    """A linear rate (two-sided CIs of the per-replica log-contraction, ``point.stats`` from LogRates): within
    ``claim.rel_tolerance`` of the exact value over the window, never confidently slower than the theorem's
    guaranteed rate, and (issue #21) the moment map's eigenvalue equal to the paper's recursion and no
    slower than the guarantee (RateClaim's docstring)."""

    reads: ClassVar[tuple[str, ...]] = ("exact_name", "guaranteed_name", "min_window_points", "rel_tolerance",
                                        "spectral_rtol", "start_fraction")

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Sequence[MeanCI]) -> Decision:
        rows, outside, unsure, slower, slower_unsure = [], [], [], [], []
        spectral_off, bound_broken, no_spectral = [], [], []
        for p, ci in zip(points, estimate):
            if p.stats["window_points"] < claim.min_window_points:
                return (Verdict.INCONCLUSIVE, f"only {p.stats['window_points']} checkpoints in the fit window at "
                        f"{claim.vary}={_fmt(p.value)} (need {claim.min_window_points})", {})
            e = p.stats["exact"]
            lo, hi = sorted((e * (1 - claim.rel_tolerance), e * (1 + claim.rel_tolerance)))
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
                if a is not None and not abs(s_ - a) <= claim.spectral_rtol * abs(a):
                    spectral_off.append(p.value)
                if "guaranteed" in row:
                    row["spectral_tightness"] = s_ / row["guaranteed"] if row["guaranteed"] else math.inf
                    if s_ > row["guaranteed"] + claim.spectral_rtol * abs(row["guaranteed"]):
                        bound_broken.append(p.value)
            rows.append(row)
        evidence = {"exact_name": claim.exact_name, "guaranteed_name": claim.guaranteed_name,
                    "rel_tolerance": claim.rel_tolerance, "start_fraction": claim.start_fraction, "rows": rows}
        worst = max(rows, key=lambda r: abs(r["ratio"] - 1))
        det = deterministic(points)
        measured = (f"log-contraction per round {worst['rate']:.5g}" +
                    (" (exact)" if all(p.exact for p in points) else " (deterministic)" if det
                     else f" (CI [{worst['low']:.5g}, {worst['high']:.5g}])"))
        tag = (f"{measured} vs {claim.exact_name} {worst['exact']:.5g} within {relative(claim.rel_tolerance)} "
               f"at {claim.vary}={_fmt(worst['value'])}")
        if "guaranteed" in worst:
            tag += f"; {claim.guaranteed_name} {worst['guaranteed']:.3g} ({worst['tightness']:.3g}x slower than exact)"
        if "spectral" in worst:
            tag += f"; exact asymptotic log rho {worst['spectral']:.10g} (eigenvalue of the moment map)"
        verdict, reason = _rate_verdict(claim, spectral_off, bound_broken, outside, slower, no_spectral,
                                        bool(unsure or slower_unsure), tag)
        # the measured rate against its bands; the eigenvalue checks do not move with it (fixed constraints)
        bands = [Constraint(r["low"], r["high"], *sorted((r["exact"] * (1 - claim.rel_tolerance),
                                                          r["exact"] * (1 + claim.rel_tolerance)))) for r in rows]
        bands += [Constraint(r["low"], r["high"], b=r["guaranteed"]) for r in rows if "guaranteed" in r]
        bands += [Constraint(1.0, 1.0, b=0.0, moves=False) for _ in spectral_off + bound_broken]
        return verdict, reason, {**evidence, "power": power(bands, SCALE, "relative change of the log-contraction "
                                                            "per round", verdict, cap=bool(no_spectral))}


def _rate_verdict(claim: Any, spectral_off: list[float], bound_broken: list[float], outside: list[float],
                  slower: list[float], no_spectral: list[tuple[float, str]], unsure: bool, tag: str
                  ) -> tuple[Verdict, str]:
    if spectral_off:
        return (Verdict.FAIL, f"the moment map's spectral radius differs from the recursion's at {claim.vary}="
                f"{_fmt(spectral_off[0])} (rtol {claim.spectral_rtol:g}): {tag}")
    if bound_broken:
        return (Verdict.FAIL, f"{claim.guaranteed_name} is faster than the exact asymptotic contraction at "
                f"{claim.vary}={_fmt(bound_broken[0])}: {tag}")
    if outside:
        return Verdict.FAIL, f"rate differs from the exact one: {tag}"
    if slower:
        return Verdict.FAIL, f"decay slower than {claim.guaranteed_name}: {tag}"
    if no_spectral:  # nothing failed, but the eigenvalue check this claim promises could not run
        value, why = no_spectral[0]
        return Verdict.INCONCLUSIVE, f"no exact asymptotic rate at {claim.vary}={_fmt(value)} ({why}): {tag}"
    if unsure:
        return Verdict.INCONCLUSIVE, f"CI straddles the band: {tag}"
    tail = ", and no slower than the theorem" if claim.guaranteed is not None else ""
    return Verdict.PASS, f"{tag}: as exact{tail}"


@dataclass(frozen=True)
class StrictlyDecreasing(Rule):
    """Judges only the direction: E[measure] falls strictly along the grid. Between neighbours, a confident
    rise (the later CI entirely above the earlier one) is a FAIL, a confident fall (entirely below) counts
    towards a PASS, overlapping CIs make it INCONCLUSIVE; exact points have zero-width CIs, so there the
    means decide. The ``reported`` rule (e.g. a slope band) is applied for its reason and evidence only."""

    reported: Rule

    def display(self) -> Any:
        return Monotone(reported=self.reported.display())  # the direction, the reported rule named only

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> Decision:
        _, reason, evidence = self.reported(claim, points, estimate)
        ordered = sorted(points, key=lambda p: p.value)
        cis = [point_ci(p, level=claim.level) for p in ordered]
        means = [ci.mean for ci in cis]
        pairs = list(zip(ordered, ordered[1:], cis, cis[1:]))
        rises = [f"{a.value:g} -> {b.value:g} ({c0.mean:.4g} -> {c1.mean:.4g})" for a, b, c0, c1 in pairs
                 if c1.low >= c0.high and not c1.mean < c0.mean]
        unsure = [f"{a.value:g} -> {b.value:g}" for a, b, c0, c1 in pairs if not c1.high < c0.low]
        evidence = {**evidence, "means": means, "monotone": not rises and not unsure}
        if rises:
            return Verdict.FAIL, f"not monotone in {claim.vary}: {'; '.join(rises)}; {reason}", evidence
        if unsure:
            return (Verdict.INCONCLUSIVE, f"CIs overlap between neighbours in {claim.vary} ({'; '.join(unsure)}): "
                    f"more replicas needed; {reason}", evidence)
        return Verdict.PASS, f"strictly decreasing in {claim.vary}; slope reported, not judged: {reason}", evidence
