"""Claims and verdicts: what a paper says, what to run, and how the data decide.

Verdict semantics (the rules every claim follows; README-ready):

* PASS / FAIL / INCONCLUSIVE. A verdict is decisive only when the data are. A slope passes when its
  whole confidence interval (bootstrap over replicas) lies inside the tolerance band around the
  expected exponent, fails when it lies entirely outside, and is INCONCLUSIVE otherwise. Bounds,
  thresholds and closed-form values use one-sided (or two-sided) Student-t bounds of the replica
  mean at every grid point; limits a bootstrap CI of the distance; rates a CI of the per-replica
  log-contraction per round.
* Deterministic runs (no spread across replicas) have no CI: the text says "deterministic" and the
  comparison is exact.
* Exact runs (issue #8: ``RunConfig(mode="exact")``, a Trace with one row of exact expectations,
  ``trace.exact``) are deterministic too: ``min_replicas`` does not apply, every CI has zero width,
  and the reason, the evidence (``"exact"``) and ``Outcome.to_dict()`` say "exact". An ``auto`` run
  that fell back to Monte Carlo is judged as Monte Carlo, its fallback reason in the evidence.
* A slope fit needs at least ``min_points`` (5) distinct grid points spanning ``min_decades`` (1)
  decade, unless the claim declares why not (``design_reason``); otherwise it is INCONCLUSIVE with
  that reason. A fit whose residuals show a regime change is INCONCLUSIVE: R^2 below ``r2_floor``
  (0.98; applied when the expected exponent is not 0 and the fitted slope is confidently not 0:
  otherwise R^2 has nothing to explain and the band judges), or a local
  slope that changes across the grid by more than ``max_curvature`` (default: the tolerance) with
  confidence (quadratic fit in log x, bootstrap CI).
* One-sided claims (``side="at_most"``/``"at_least"``) state what the theorem bounds (the cap) and
  what was measured; the report draws the one-sided band.
* Linear rates are checked as rates (``RateClaim``): the fitted log-contraction per round of the
  measure on a linear round axis against the exact spectral value (two-sided, relative tolerance)
  and against the theorem's guaranteed rate (one-sided: never slower).
* An ``Observation`` is a number with no verdict (a vacuity ratio, a tightness factor, an exponent
  against a far cap): its verdict is OBSERVED, it is shown in the report, the JSON and the CLI, and
  it never counts as PASS or FAIL nor makes ``check`` fail.
* A negative control declares the claim it controls (``controls``) and is run on the same instance
  (the same grid); it must be shown to differ: if its verdict equals the controlled claim's, it is
  INCONCLUSIVE ("does not differ from ..."), which is unexpected and fails the check.
* Every claim records what is expected of it. Most are expected to PASS; a bound printed wrongly in
  a paper is an expected FAIL with the reason (a confirmed erratum); a negative control is an
  expected FAIL of a property of an algorithm. No claim may expect INCONCLUSIVE. Only a verdict
  different from the expected one fails the check.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, SupportsFloat, cast

import numpy as np
import sympy as sp

from .fit import MeanCI, SlopeFit, fit_slope, log_rate, mean_ci
from .theory import Evaluation, Source, Theorem
from .trace import RunConfig, Trace


class Verdict(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"
    OBSERVED = "OBSERVED"  # an Observation: a number reported with no verdict

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Profile:
    """How much work a check may do: 'quick' for CI and the default command, 'full' for the report."""

    name: str
    replicas: int
    scale: float = 1.0  # multiplies round counts where a claim allows it


PROFILES = {"quick": Profile("quick", replicas=16), "full": Profile("full", replicas=48, scale=4.0)}


@dataclass
class Outcome:
    """A claim's verdict with its evidence (JSON-able through ``to_dict``)."""

    claim: Claim
    verdict: Verdict
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)
    points: list[PointResult] = field(default_factory=list)

    @property
    def expected(self) -> Verdict:
        return self.claim.expect

    @property
    def ok(self) -> bool:
        return self.verdict == self.claim.expect

    @property
    def observation(self) -> bool:
        """A number with no verdict (never PASS/FAIL, never unexpected)."""
        return self.claim.expect == Verdict.OBSERVED

    @property
    def erratum(self) -> bool:
        """A confirmed error of the paper: expected to FAIL, and it did (negative controls excluded)."""
        return (
            self.claim.expect == Verdict.FAIL
            and self.verdict == Verdict.FAIL
            and not self.claim.negative_control
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim.id,
            "paper": self.claim.paper,
            "kind": self.claim.kind,
            "title": self.claim.title,
            "verdict": str(self.verdict),
            "expected": str(self.claim.expect),
            "ok": self.ok,
            "reason": self.reason,
            "expect_reason": self.claim.expect_reason,
            "negative_control": self.claim.negative_control,
            "erratum": self.erratum,
            "observation": self.observation,
            "exact": exact_state(self.points),  # issue #8
            "controls": self.claim.controls.id if self.claim.controls is not None else None,
            "source": str(self.claim.source),
            "evidence": _jsonable(self.evidence),
            "points": [p.to_dict() for p in self.points],
        }


@dataclass
class PointResult:
    """One grid point: the measured samples and, when the claim has a theorem, its evaluation."""

    value: float
    config: RunConfig
    samples: np.ndarray  # finite per-replica values of the claim's measure
    diverged: int
    evaluation: Evaluation | None = None
    stats: dict[str, Any] = field(default_factory=dict)  # claim-specific summaries
    first_divergence: int | None = None  # earliest round at which a replica diverged
    trace: Trace | None = field(default=None, repr=False)  # the run itself, for paper-specific figures

    @property
    def exact(self) -> bool:
        """Issue #8: the samples are exact expectations (an exact-mode run), not replica draws."""
        return self.trace is not None and self.trace.exact

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "value": self.value,
            "exact": self.exact,
            "mean": float(np.mean(self.samples)) if self.samples.size else None,
            "replicas_used": int(self.samples.size),
            "diverged": self.diverged,
            "first_divergence": self.first_divergence,
            "config_key": self.config.key(),
        }
        if self.evaluation is not None:
            out["theory"] = self.evaluation.to_dict()
        out.update(_jsonable(self.stats))
        return out


Bindings = Callable[[RunConfig, Trace], Mapping[str, float]]


@dataclass(frozen=True, kw_only=True)
class Claim:
    """Base of all claims: identity, expectation, the sweep to run and the theorem to bind."""

    id: str
    paper: str
    title: str
    statement: str  # what the paper claims, in words
    source: Source
    vary: str  # name of the varied parameter (for plots and tables)
    grid: Mapping[str, Sequence[float]]  # profile name -> values of the varied parameter
    configure: Callable[[float, Profile], RunConfig]
    measure: str
    expect: Verdict = Verdict.PASS
    expect_reason: str = ""
    # an expected FAIL that is a property of the algorithm (a negative control), not a paper error
    negative_control: bool = False
    # the claim a negative control controls: run on the same grid, its verdict must differ
    controls: Claim | None = None
    theorem: Theorem | None = None
    bindings: Bindings | None = None  # run -> theorem symbol values (constants and parameters)
    # per-replica numbers a run contributes; default: the measure after the last round. Use it for
    # rounds-to-eps, tail averages, ratios to a closed-form value, ... (NaN marks a diverged replica)
    summary: Callable[[RunConfig, Trace], np.ndarray] | None = None
    require_conditions: bool = True  # conditions violated at a grid point => INCONCLUSIVE
    min_replicas: int = 8
    level: float = 0.95
    kind: str = "claim"

    def __post_init__(self) -> None:
        if self.expect == Verdict.INCONCLUSIVE:
            raise ValueError(f"claim {self.id}: no claim may expect INCONCLUSIVE (it cannot tell a bug from noise)")
        if (self.expect == Verdict.OBSERVED) != (self.kind == "observation"):
            raise ValueError(f"claim {self.id}: only an Observation expects OBSERVED, and it always does")
        if self.controls is not None:
            if not self.negative_control:
                raise ValueError(f"claim {self.id} declares controls= but is not a negative control")
            if dict(self.controls.grid) != dict(self.grid) or self.controls.vary != self.vary:
                raise ValueError(f"negative control {self.id} must run on the grid of {self.controls.id}")

    def values(self, profile: Profile) -> list[float]:
        if profile.name not in self.grid:
            raise ValueError(f"claim {self.id} has no grid for profile {profile.name!r}")
        return list(self.grid[profile.name])

    def own_runs(self, profile: Profile) -> list[RunConfig]:
        """The runs behind this claim's own grid points (one per grid value), planned once per
        profile (issue #9): configure may take seconds, and a check asks when it plans and decides."""
        planned = self.__dict__.setdefault("_planned", {})
        if profile not in planned:
            planned[profile] = [self.configure(v, profile) for v in self.values(profile)]
        return list(planned[profile])

    def runs(self, profile: Profile) -> list[RunConfig]:
        """Every run the decision reads: its own, and a negative control's controlled claim's."""
        own = self.own_runs(profile)
        return own + self.controls.runs(profile) if self.controls is not None else own

    def points(self, profile: Profile, traces: Mapping[str, Trace]) -> list[PointResult]:
        out = []
        for value, config in zip(self.values(profile), self.own_runs(profile)):
            trace = traces[config.key()]
            samples = self.summary(config, trace) if self.summary else trace.at_end(self.measure)
            evaluation = None
            if self.theorem is not None and self.bindings is not None:
                # at the run's own step sizes, not the schedule: the run is what is being judged
                evaluation = self.theorem.evaluate(self.bindings(config, trace), use_schedule=False)
            out.append(
                PointResult(value, config, samples[np.isfinite(samples)], trace.diverged_count, evaluation,
                            first_divergence=_first_divergence(trace), trace=trace)
            )
        return out

    def decide(self, profile: Profile, traces: Mapping[str, Trace]) -> Outcome:
        points = self.points(profile, traces)
        reason = self._precheck(points)
        if reason:
            return Outcome(self, Verdict.INCONCLUSIVE, reason, {}, points)
        verdict, reason, evidence = self._decide(points)
        evidence = {**evidence, **exact_evidence(points)}  # issue #8
        if evidence["exact"] is True and "exact" not in reason:
            reason = f"{reason} (exact expectations)"
        if self.controls is not None:
            other = self.controls.decide(profile, traces)
            evidence = {**evidence, "controlled": {"claim": self.controls.id, "verdict": str(other.verdict),
                                                   "reason": other.reason}}
            if other.verdict == verdict:
                return Outcome(self, Verdict.INCONCLUSIVE,
                               f"negative control does not differ from {self.controls.id} on the same instance "
                               f"(both {verdict}): {reason}", evidence, points)
            reason = f"{reason}; differs from {self.controls.id} ({other.verdict})"
        return Outcome(self, verdict, reason, evidence, points)

    def _precheck(self, points: Sequence[PointResult]) -> str:
        """Reasons that make any verdict premature, in words."""
        # an exact point is one row of expectations: it needs that row, not min_replicas (issue #8)
        few = [p for p in points if p.samples.size < (1 if p.exact else self.min_replicas)]
        if few and all(p.exact for p in few):
            where = ", ".join(f"{self.vary}={_fmt(p.value)} (at round {p.first_divergence})" for p in few)
            return f"the exact expectations diverged: {where}"
        if few:
            where = ", ".join(
                f"{self.vary}={_fmt(p.value)} ({p.samples.size} left, {p.diverged} diverged"
                + (f", the first at round {p.first_divergence})" if p.first_divergence is not None else ")")
                for p in few
            )
            return f"too few non-diverged replicas (need {self.min_replicas}): {where}"
        if self.require_conditions:
            broken = []
            for p in points:
                if p.evaluation is None:
                    continue
                for c in p.evaluation.conditions:
                    if not c.holds:
                        broken.append(f"{self.vary}={_fmt(p.value)}: {c.name} (margin {c.margin:.3g})")
            if broken:
                return "theorem conditions violated: " + "; ".join(broken)
        return ""

    def _decide(self, points: Sequence[PointResult]) -> tuple[Verdict, str, dict[str, Any]]:
        raise NotImplementedError  # pragma: no cover - abstract


@dataclass(frozen=True)
class ExpectedOrder:
    """An exponent derived from a theorem (never typed in), or given with the reason it is known."""

    theorem: Theorem | None = None
    var: str = ""
    version: str = ""
    dominant_in: str | None = None
    value: SupportsFloat | None = None  # used when there is no theorem for it (a float, or a theory.Derived)
    why: str = ""

    def exponent(self) -> float:
        if self.theorem is not None:
            return float(self.theorem.order(self.var, version=self.version, dominant_in=self.dominant_in))
        if self.value is None:
            raise ValueError("ExpectedOrder needs a theorem or a value with the reason")
        return float(self.value)

    def describe(self) -> str:
        if self.theorem is not None:
            lead = f", leading term as {self.dominant_in} -> oo" if self.dominant_in else ""
            return f"order in {self.var} of {self.theorem.id} bound '{self.version}'{lead} (sympy)"
        return self.why


def tail_average(measure: str, start_fraction: float = 0.25) -> Callable[[RunConfig, Trace], np.ndarray]:
    """A claim summary: per-replica time average of `measure` over rounds [t0, T), t0 the checkpoint
    nearest start_fraction * T. Exact, from the recorded running averages: for noise floors, where
    the transient from x0 must not count."""
    if not 0 < start_fraction < 1:
        raise ValueError(f"start_fraction must be in (0, 1), got {start_fraction}")

    def summary(config: RunConfig, trace: Trace) -> np.ndarray:
        marks = trace.checkpoints
        total = float(marks[-1])
        c = int(np.argmin(np.abs(marks[1:-1] - start_fraction * total))) + 1 if marks.size > 2 else 0
        avg = trace.measures[f"avg:{measure}"]
        t0 = float(marks[c])
        head = avg[c] * t0 if t0 > 0 else 0.0
        return (avg[-1] * total - head) / (total - t0)

    return summary


def final_value(measure: str) -> Callable[[RunConfig, Trace], np.ndarray]:
    """A claim summary: per-replica value of `measure` after the last round (a limit or a floor of a
    deterministic run, read where it has settled)."""

    def summary(config: RunConfig, trace: Trace) -> np.ndarray:
        return trace.at_end(measure)

    return summary


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
            assert p.evaluation is not None  # bound claims evaluate every point
            values = p.evaluation.values
            size = float(evaluate(*(values[s.name] for s in symbols)))
            measured = float(np.mean(p.samples))
            if size > fraction * measured:
                bad.append(f"{label} = {size:.3g} > {fraction:g} x measured {measured:.3g} at {_fmt(p.value)}")
        return "; ".join(bad)

    return check


SIDES = ("two-sided", "at_most", "at_least")


@dataclass(frozen=True, kw_only=True)
class SlopeClaim(Claim):
    """log(measure) against log(varied parameter) has the expected slope, within a tolerance band.

    side 'at_most': the slope is no larger than expected + tolerance ("no slower than"); the theorem
    bounds the exponent from above and the reason states the cap next to the measured slope.

    Fit design (module docstring): at least ``min_points`` distinct points over ``min_decades``
    decades unless ``design_reason`` says why not; R^2 >= ``r2_floor`` and no confident local-slope
    change beyond ``max_curvature`` (default: the tolerance), else INCONCLUSIVE (regime change).
    """

    expected: ExpectedOrder
    tolerance: float = 0.1
    side: str = "two-sided"
    regime: Callable[[Sequence[PointResult]], str] | None = None  # returns a reason if not in regime
    min_points: int = 5
    min_decades: float = 1.0
    design_reason: str = ""  # why fewer points or a narrower range are enough, when they are
    r2_floor: float = 0.98
    max_curvature: float | None = None  # None: the tolerance
    kind: str = "slope"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.side not in SIDES:
            raise ValueError(f"side must be one of {SIDES}, got {self.side!r}")
        if self.tolerance <= 0:
            raise ValueError(f"tolerance must be > 0, got {self.tolerance}")

    def _design(self, fit: SlopeFit) -> str:
        """Why the grid cannot decide a slope (empty when it can)."""
        if self.design_reason:
            return ""
        count = len(set(fit.x))
        if count < self.min_points or fit.decades < self.min_decades - 1e-9:
            return (f"fit design: {count} points over {fit.decades:.2f} decades (need {self.min_points} over "
                    f"{self.min_decades:g}, or a declared design_reason)")
        return ""

    def _regime_change(self, fit: SlopeFit, expected: float) -> str:
        # R^2 speaks only when there is a slope to explain: a flat curve in noise has R^2 near 0 and is a
        # fine power law (exponent 0), which the band then judges
        significant = fit.ci_low > 0 or fit.ci_high < 0
        if expected != 0 and significant and fit.r2 < self.r2_floor:
            return (f"regime change: R^2 {fit.r2:.4f} below the floor {self.r2_floor:g} (not one power law over "
                    f"the grid)")
        limit = self.tolerance if self.max_curvature is None else self.max_curvature
        if math.isfinite(fit.curvature) and (fit.curvature_low > limit or fit.curvature_high < -limit):
            return (f"regime change: the local slope changes by {fit.curvature:+.3f} across the grid (CI [{fit.curvature_low:+.3f}, "
                    f"{fit.curvature_high:+.3f}]), beyond +-{limit:g}: not one power law")
        return ""

    def _decide(self, points):
        if self.regime is not None:
            why = self.regime(points)
            if why:
                return Verdict.INCONCLUSIVE, f"regime not reached: {why}", {}
        fit = fit_slope([p.value for p in points], [p.samples for p in points], level=self.level,
                        exact=[p.exact for p in points])
        e = self.expected.exponent()
        lo, hi = e - self.tolerance, e + self.tolerance
        band = {"two-sided": (lo, hi), "at_most": (-math.inf, hi), "at_least": (lo, math.inf)}[self.side]
        evidence = {
            "fit": fit.to_dict(),
            "expected_exponent": e,
            "expected_from": self.expected.describe(),
            "tolerance": self.tolerance,
            "side": self.side,
            "band": list(band),
        }
        if self.design_reason:
            evidence["design_reason"] = self.design_reason
        ci = slope_text(fit)
        why = self._design(fit) or self._regime_change(fit, e)
        if why:
            return Verdict.INCONCLUSIVE, f"{why}; {ci}", evidence
        if self.side == "two-sided":
            target = f"band [{band[0]:+.3f}, {band[1]:+.3f}] around {e:+.3f}"
        elif self.side == "at_most":
            target = f"the theorem's cap: at most {e:+.3f} (+{self.tolerance:g} tolerance: <= {band[1]:+.3f})"
        else:
            target = f"the theorem's floor: at least {e:+.3f} (-{self.tolerance:g} tolerance: >= {band[0]:+.3f})"
        if band[0] <= fit.ci_low and fit.ci_high <= band[1]:
            return Verdict.PASS, f"measured {ci} within {target}", evidence
        if fit.ci_high < band[0] or fit.ci_low > band[1]:
            return Verdict.FAIL, f"measured {ci} entirely outside {target}", evidence
        return Verdict.INCONCLUSIVE, f"measured {ci} straddles {target}: more replicas needed", evidence


def slope_text(fit: SlopeFit) -> str:
    """'slope +0.500, 95% CI [+0.49, +0.51]', or 'slope +0.500 (deterministic)' without spread."""
    if fit.exact:
        return f"slope {fit.slope:+.4f} (exact expectations, no CI)"
    if fit.deterministic:
        return f"slope {fit.slope:+.3f} (deterministic)"
    return f"slope {fit.slope:+.3f}, {int(round(fit.level * 100))}% CI [{fit.ci_low:+.3f}, {fit.ci_high:+.3f}]"


@dataclass(frozen=True, kw_only=True)
class BoundClaim(Claim):
    """E[measure] <= bound (one version of the theorem's bound) at every grid point.

    PASS when the upper confidence bound of the mean is below the bound everywhere; FAIL when the
    lower confidence bound exceeds it somewhere; INCONCLUSIVE otherwise.
    """

    version: str
    kind: str = "bound"

    def __post_init__(self) -> None:
        super().__post_init__()
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
            return Verdict.FAIL, f"measured mean exceeds {tag} (confidently at {self.vary}={where})", evidence
        if unsure:
            where = ", ".join(_fmt(v) for v in unsure)
            return Verdict.INCONCLUSIVE, f"upper confidence bound crosses {tag} at {self.vary}={where}", evidence
        return Verdict.PASS, f"upper confidence bound below {tag}", evidence


def _compare_to_ceiling(points, level: float, ceiling_of):
    """Rows (value, mean, ucb, lcb, ceiling) and the grid values confidently above / possibly above.

    The one-sided rule shared by bound and threshold claims: above when the lower confidence bound
    of the mean exceeds the ceiling, possibly above when only the upper one does.
    """
    rows, above, unsure = [], [], []
    for p in points:
        upper = point_ci(p, level=level, side="upper")
        lower = point_ci(p, level=level, side="lower")
        ceiling = float(ceiling_of(p))
        rows.append({"value": p.value, "mean": upper.mean, "ucb": upper.high, "lcb": lower.low, "ceiling": ceiling})
        if lower.low > ceiling:
            above.append(p.value)
        elif upper.high > ceiling:
            unsure.append(p.value)
    return rows, above, unsure


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
            return Verdict.FAIL, f"CI outside {tag} (at {self.vary}={', '.join(map(_fmt, outside))})", evidence
        if unsure:
            return Verdict.INCONCLUSIVE, f"CI straddles the band of {tag}: more replicas needed", evidence
        return Verdict.PASS, f"CI inside {tag}", evidence


@dataclass(frozen=True, kw_only=True)
class LimitClaim(Claim):
    """The replica-mean final iterate is within `tolerance` of a target point (x* or a biased point).

    The distance's confidence interval comes from a bootstrap over replicas. ``target`` maps a run
    configuration to the point (from the problem's closed form).
    """

    target: Callable[[RunConfig], np.ndarray]
    target_name: str = "x*"
    tolerance: float = 1e-2
    point: str = "x"
    kind: str = "limit"

    def points(self, profile, traces):
        out = []
        for value, config in zip(self.values(profile), self.own_runs(profile)):
            trace = traces[config.key()]
            final = trace.final[self.point]
            final = final[np.isfinite(final).all(axis=1)]
            target = self.target(config)
            est, low, high = _bootstrap_distance(final, target, self.level)
            if trace.exact and final.shape[0] == 1:  # issue #8: the mean itself, no bootstrap
                est = low = high = float(np.linalg.norm(final[0] - target))
            per_replica = np.linalg.norm(final - target, axis=1)
            stats = {"distance": est, "low": low, "high": high}
            out.append(PointResult(value, config, per_replica, trace.diverged_count, stats=stats,
                                   first_divergence=_first_divergence(trace), trace=trace))
        return out

    def _decide(self, points):
        rows = [{"value": p.value, **p.stats} for p in points]
        evidence = {"target": self.target_name, "tolerance": self.tolerance, "rows": rows}
        if all(r["high"] <= self.tolerance for r in rows):
            return Verdict.PASS, f"distance to {self.target_name} <= {self.tolerance:g} with confidence", evidence
        if any(r["low"] > self.tolerance for r in rows):
            return Verdict.FAIL, f"distance to {self.target_name} > {self.tolerance:g} with confidence", evidence
        return Verdict.INCONCLUSIVE, f"distance CI straddles the tolerance {self.tolerance:g}", evidence


def _bootstrap_distance(
    points: np.ndarray, target: np.ndarray, level: float, n_boot: int = 2000
) -> tuple[float, float, float]:
    """(distance, low, high) of ||mean_r x_r - target|| with a percentile bootstrap over replicas."""
    if points.shape[0] < 2:
        return math.nan, math.nan, math.nan
    rng = np.random.default_rng(0)
    idx = rng.integers(0, points.shape[0], size=(n_boot, points.shape[0]))
    boot = np.linalg.norm(points[idx].mean(axis=1) - target, axis=1)
    alpha = (1 - level) / 2
    est = float(np.linalg.norm(points.mean(axis=0) - target))
    low, high = np.quantile(boot, [alpha, 1 - alpha])
    return est, float(low), float(high)


def deterministic(points: Sequence[PointResult]) -> bool:
    """True when every grid point's replicas agree exactly (no Monte-Carlo spread to bound)."""
    return all(p.samples.size and np.ptp(p.samples) == 0 for p in points)


def _deterministic_note(points: Sequence[PointResult]) -> str:
    if points and all(p.exact for p in points):
        return " (exact expectations: no Monte-Carlo error, no CI)"
    return " (deterministic: replicas identical, no CI)" if deterministic(points) else ""


def _first_divergence(trace: Trace) -> int | None:
    rounds = trace.diverged_round[trace.diverged_round >= 0]
    return int(rounds.min()) if rounds.size else None


def _fmt(value: float) -> str:
    return f"{value:g}"


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, sp.Basic):
        return str(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return obj


@dataclass(frozen=True, kw_only=True)
class ThresholdClaim(Claim):
    """E[measure] <= a fixed threshold at every grid point, e.g. "exactly 0 at P = n" to machine precision.

    PASS when the upper confidence bound of the mean is below the threshold everywhere; FAIL when the
    lower confidence bound exceeds it somewhere; INCONCLUSIVE otherwise. No theorem evaluation needed.
    """

    threshold: float
    kind: str = "threshold"

    def _decide(self, points):
        rows, above, unsure = _compare_to_ceiling(points, self.level, lambda p: self.threshold)
        for row in rows:
            row["threshold"] = row.pop("ceiling")
        evidence = {"threshold": self.threshold, "rows": rows}
        worst = max(rows, key=lambda row: row["mean"])
        tag = f"threshold {self.threshold:g}; largest mean {worst['mean']:.3g} at {self.vary}={_fmt(worst['value'])}"
        tag += _deterministic_note(points)
        if above:
            return Verdict.FAIL, f"mean exceeds the {tag} with confidence", evidence
        if unsure:
            return Verdict.INCONCLUSIVE, f"upper confidence bound crosses the {tag}", evidence
        return Verdict.PASS, f"upper confidence bound below the {tag}", evidence


# ---------------------------------------------------------------------------------------------
# Appended for the FESS-GDA paper (issue #3): generic claim kinds that other papers can reuse.


def hitting_rounds(checkpoints: np.ndarray, values: np.ndarray, level: float) -> np.ndarray:
    """Per replica, the first recorded checkpoint whose value is <= level (NaN if never).

    ``values`` is (C, R) as in ``Trace.measures``; resolution is that of the checkpoints, so runs
    that need hitting times should record many (RunConfig.checkpoints).
    """
    vals = np.asarray(values, dtype=float)
    hit = np.isfinite(vals) & (vals <= level)
    first = np.argmax(hit, axis=0)
    rounds = np.asarray(checkpoints, dtype=float)[first]
    return np.where(hit.any(axis=0), rounds, np.nan)


@dataclass(frozen=True, kw_only=True)
class HittingTimeClaim(SlopeClaim):
    """Rounds until ``measure`` first falls to ``threshold(value)``, against a knob, as a log-log slope.

    For rounds against accuracy, let the grid be 1/eps and threshold(v) = v**-2 (a squared measure);
    grid values that only change the threshold share one run (the sweep deduplicates configurations).
    ``abscissa`` maps a grid value to the fitted x (e.g. mu -> kappa = l(mu)/mu); default: itself.
    A replica that never reaches the threshold makes the claim INCONCLUSIVE with that reason.
    """

    threshold: Callable[[float], float]
    abscissa: Callable[[float], float] | None = None
    kind: str = "hitting_time"

    def points(self, profile, traces):
        # the base class evaluates the theorem per run; the samples become hitting rounds
        out = super().points(profile, traces)
        for value, point in zip(self.values(profile), out):
            trace = traces[point.config.key()]
            level = float(self.threshold(value))
            rounds = hitting_rounds(trace.checkpoints, trace.measures[self.measure], level)
            point.value = float(self.abscissa(value)) if self.abscissa is not None else float(value)
            point.samples = rounds[np.isfinite(rounds)]
            point.stats = {"level": level, "not_reached": int(np.sum(np.isnan(rounds) & trace.valid)),
                           "grid_value": float(value), "rounds_run": int(point.config.rounds)}
        return out

    def _precheck(self, points):
        missed = [p for p in points if p.stats.get("not_reached")]
        if missed:
            where = ", ".join(
                f"{self.vary}={_fmt(p.value)} ({p.stats['not_reached']} replicas above {p.stats['level']:.3g} "
                f"after {p.stats['rounds_run']} rounds)" for p in missed)
            return f"level not reached within the run: {where}"
        return super()._precheck(points)


# ---------------------------------------------------------------------------------------------
# Issue #7: linear rates checked as rates, and observations (numbers with no verdict).


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
    """

    exact: Callable[[RunConfig, np.ndarray], float]
    exact_name: str = "exact rate"
    asymptotic: Callable[[RunConfig], float] | None = None  # e.g. 2 log rho(F): reported, not compared
    guaranteed: Callable[[PointResult], float] | None = None
    guaranteed_name: str = "the theorem's rate"
    rel_tolerance: float = 0.05
    start_fraction: float = 0.5
    min_window_points: int = 5
    kind: str = "rate"

    def __post_init__(self) -> None:
        super().__post_init__()
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
        return out

    def _decide(self, points):
        rows, outside, unsure, slower, slower_unsure = [], [], [], [], []
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
        if outside:
            return Verdict.FAIL, f"rate differs from the exact one: {tag}", evidence
        if slower:
            return Verdict.FAIL, f"decay slower than {self.guaranteed_name}: {tag}", evidence
        if unsure or slower_unsure:
            return Verdict.INCONCLUSIVE, f"CI straddles the band: {tag}", evidence
        tail = ", and no slower than the theorem" if self.guaranteed is not None else ""
        return Verdict.PASS, f"{tag}: as exact{tail}", evidence


@dataclass(frozen=True, kw_only=True)
class Observation(Claim):
    """A number with no verdict: a vacuity ratio, a tightness factor, an exponent against a far cap.

    It reads the points (and, given ``of``, the evidence) of another claim kind on the same runs and
    reports ``compute(points, evidence) -> {name: value}`` with ``quantity`` saying what it is. Its
    verdict is always OBSERVED: shown in the report, the JSON and the CLI, never PASS or FAIL.
    Build one from a claim with ``observe(claim, ...)``.
    """

    quantity: str
    compute: Callable[[Sequence[PointResult], Mapping[str, Any]], Mapping[str, float]]
    of: Claim | None = None
    expect: Verdict = Verdict.OBSERVED
    kind: str = "observation"

    def points(self, profile, traces):
        return self.of.points(profile, traces) if self.of is not None else super().points(profile, traces)

    def runs(self, profile):
        return self.of.runs(profile) if self.of is not None else super().runs(profile)

    def decide(self, profile: Profile, traces: Mapping[str, Trace]) -> Outcome:
        points = self.points(profile, traces)
        evidence: dict[str, Any] = {}
        note = ""
        if self.of is not None:
            why = self.of._precheck(points)
            if why:
                note = f" (read despite: {why})"
            else:
                evidence = dict(self.of._decide(points)[2])
        values = {k: float(v) for k, v in self.compute(points, evidence).items()}
        evidence["observed"] = values
        evidence["quantity"] = self.quantity
        text = ", ".join(f"{k} = {_num(v)}" for k, v in values.items())
        return Outcome(self, Verdict.OBSERVED, f"observed {self.quantity}: {text}{note}", evidence, points)


def _tolerance_evidence(evidence: Mapping[str, Any], name: str, value: float, why: str) -> dict[str, Any]:
    return {**evidence, "tolerance_used": {"name": name, "value": value, "why": why}}


_NO_MC_BAND = "Monte-Carlo points, and this claim states a band for exact runs only (ratecheck.exact refused a run)"


@dataclass(frozen=True, kw_only=True)
class ExactSlopeClaim(SlopeClaim):
    """A slope claim with two tolerances: ``tolerance`` on exact points (from the theory's finite-grid
    asymptotics, said in ``tolerance_reason``) and ``mc_tolerance`` on Monte-Carlo points (asymptotics
    plus noise, said in ``mc_tolerance_reason``), e.g. for its ``monte_carlo_twin``. Without an
    ``mc_tolerance`` the claim is decided on exact runs only: Monte-Carlo points are INCONCLUSIVE."""

    tolerance_reason: str
    mc_tolerance: float | None = None
    mc_tolerance_reason: str = ""

    def _decide(self, points):
        if points and all(p.exact for p in points):
            verdict, reason, evidence = super()._decide(points)
            return verdict, reason, _tolerance_evidence(evidence, "exact", self.tolerance, self.tolerance_reason)
        if self.mc_tolerance is None:
            return Verdict.INCONCLUSIVE, _NO_MC_BAND, {}
        verdict, reason, evidence = SlopeClaim._decide(dataclasses.replace(self, tolerance=self.mc_tolerance), points)
        return verdict, reason, _tolerance_evidence(evidence, "monte_carlo", self.mc_tolerance,
                                                    self.mc_tolerance_reason)


@dataclass(frozen=True, kw_only=True)
class ExactValueClaim(ValueClaim):
    """A value claim with ``rel_tolerance`` on exact points and ``mc_rel_tolerance`` on Monte-Carlo ones
    (as ExactSlopeClaim: none stated, Monte-Carlo points are INCONCLUSIVE)."""

    tolerance_reason: str
    mc_rel_tolerance: float | None = None
    mc_tolerance_reason: str = ""

    def _decide(self, points):
        if points and all(p.exact for p in points):
            verdict, reason, evidence = super()._decide(points)
            return verdict, reason, _tolerance_evidence(evidence, "exact", self.rel_tolerance, self.tolerance_reason)
        if self.mc_rel_tolerance is None:
            return Verdict.INCONCLUSIVE, _NO_MC_BAND, {}
        mc = dataclasses.replace(self, rel_tolerance=self.mc_rel_tolerance)
        verdict, reason, evidence = ValueClaim._decide(mc, points)
        return verdict, reason, _tolerance_evidence(evidence, "monte_carlo", self.mc_rel_tolerance,
                                                    self.mc_tolerance_reason)


def monte_carlo_twin(claim: Claim, *, quick: bool = False, **changes: Any) -> Claim:
    """The claim on Monte-Carlo runs, ``<id>.monte_carlo``, so an exact verdict and its Monte-Carlo
    counterpart sit in one report (issue #8). In the full profile it draws replicas; in the quick one it
    reads the claim's own exact runs (same run keys: no extra cost) unless ``quick=True`` (a question
    about the draws themselves). ``changes`` replace fields, e.g. a Monte-Carlo tolerance."""
    def drawn(configure: Callable[[float, Profile], RunConfig]) -> Callable[[float, Profile], RunConfig]:
        def configure_mc(value: float, profile: Profile) -> RunConfig:
            config = configure(value, profile)
            if profile.name == "quick" and not quick:
                return config
            # an exact run has one row: the draws get the profile's replicas
            return config.with_(mode="monte_carlo",
                                replicas=config.replicas if config.replicas > 1 else profile.replicas)
        return configure_mc

    if getattr(claim, "configure_other", None) is not None:  # a comparison of two algorithms' runs
        changes.setdefault("configure_other", drawn(cast(Any, claim).configure_other))
    return dataclasses.replace(claim, id=f"{claim.id}.monte_carlo", configure=drawn(claim.configure),
                               title=f"{claim.title} (Monte Carlo in the full profile)", **changes)


def observe(claim: Claim, *, id: str, title: str, quantity: str,
            compute: Callable[[Sequence[PointResult], Mapping[str, Any]], Mapping[str, float]],
            statement: str | None = None) -> Observation:
    """An observation on the runs of ``claim`` (which is not registered itself)."""
    return Observation(id=id, paper=claim.paper, title=title, statement=statement or claim.statement,
                       source=claim.source, vary=claim.vary, grid=claim.grid, configure=claim.configure,
                       measure=claim.measure, theorem=claim.theorem, bindings=claim.bindings,
                       summary=claim.summary, min_replicas=claim.min_replicas, level=claim.level,
                       quantity=quantity, compute=compute, of=claim)


def _num(v: float) -> str:
    return f"{v:.4g}" if math.isfinite(v) else str(v)


# ---------------------------------------------------------------------------------------------
# Issue #10: comparing the fitted exponents of two algorithms (FedBiO's headline S9: FedBiOAcc's
# communication exponent is below FedBiO's). Appended; the classes above are unchanged.


@dataclass(frozen=True, kw_only=True)
class ExponentComparisonClaim(Claim):
    """The log-log slope of series A (``configure``) is smaller than that of series B (``configure_other``)
    by at least ``margin``, each series also inside its own band ``expected +- tolerance`` when given.

    Both series share the grid, the measure and the summary. The difference's CI combines the two
    replica-bootstrap standard errors (the series are independent runs): PASS when the whole CI of
    slope_A - slope_B lies below -margin and every given band holds; FAIL when the CI lies above -margin
    or a slope's CI lies entirely outside its band; INCONCLUSIVE otherwise.
    """

    configure_other: Callable[[float, Profile], RunConfig]
    labels: tuple[str, str] = ("A", "B")
    margin: float = 0.0
    expected: tuple[ExpectedOrder | None, ExpectedOrder | None] = (None, None)
    tolerance: float = 0.3
    kind: str = "exponent_comparison"

    def runs(self, profile: Profile) -> list[RunConfig]:
        values = self.values(profile)
        return [self.configure(v, profile) for v in values] + [self.configure_other(v, profile) for v in values]

    def points(self, profile, traces):
        values = self.values(profile)
        out = []
        for series, configs in ((0, self.runs(profile)[: len(values)]), (1, self.runs(profile)[len(values):])):
            for value, config in zip(values, configs):
                trace = traces[config.key()]
                samples = self.summary(config, trace) if self.summary else trace.at_end(self.measure)
                out.append(PointResult(value, config, samples[np.isfinite(samples)], trace.diverged_count,
                                       stats={"series": self.labels[series]},
                                       first_divergence=_first_divergence(trace), trace=trace))
        return out

    def _decide(self, points):
        fits, bands, evidence = [], [], {"labels": list(self.labels), "margin": self.margin}
        from scipy.stats import norm  # here: claims load without scipy.stats (startup time)

        z = float(norm.ppf(0.5 + self.level / 2))
        for label, expected in zip(self.labels, self.expected):
            pts = [p for p in points if p.stats["series"] == label]
            fit = fit_slope([p.value for p in pts], [p.samples for p in pts], level=self.level,
                            exact=[p.exact for p in pts])
            fits.append(fit)
            evidence[f"fit_{label}"] = fit.to_dict()
            if expected is not None:
                e = expected.exponent()
                band = (e - self.tolerance, e + self.tolerance)
                evidence[f"expected_{label}"] = {"exponent": e, "from": expected.describe(), "band": list(band)}
                bands.append((label, fit, band))
        diff = fits[0].slope - fits[1].slope
        se = math.hypot(fits[0].stderr, fits[1].stderr)
        low, high = diff - z * se, diff + z * se
        evidence["difference"] = {"value": diff, "ci_low": low, "ci_high": high}
        text = (f"slope {self.labels[0]} {fits[0].slope:+.3f}, {self.labels[1]} {fits[1].slope:+.3f}; difference "
                f"{diff:+.3f}, {int(self.level * 100)}% CI [{low:+.3f}, {high:+.3f}] against < {-self.margin:+.3f}")
        outside = [label for label, fit, band in bands if fit.ci_high < band[0] or fit.ci_low > band[1]]
        unsure = [label for label, fit, band in bands if not (band[0] <= fit.ci_low and fit.ci_high <= band[1])]
        if low > -self.margin or outside:
            extra = f"; outside its band: {', '.join(outside)}" if outside else ""
            return Verdict.FAIL, text + extra, evidence
        if high < -self.margin and not unsure:
            return Verdict.PASS, text + ", every band held", evidence
        extra = f"; band straddled: {', '.join(unsure)}" if unsure else ""
        return Verdict.INCONCLUSIVE, text + extra + ": more replicas needed", evidence
# Issue #11: signed measures. A selection method's f - f* is typically negative (its iterates are
# infeasible), so it is checked between a lower and an upper bound, and its rate is fitted on |mean|
# against any abscissa (e.g. the regularization eta(R) rather than R).


@dataclass(frozen=True, kw_only=True)
class IntervalClaim(Claim):
    """lower <= E[measure] <= upper at every grid point, the two sides being bound versions of the theorem.

    The measure may be signed. PASS when the two-sided confidence interval of the mean lies inside
    [lower, upper] everywhere; FAIL when it lies entirely outside somewhere; INCONCLUSIVE otherwise.
    """

    lower: str  # bound version giving the lower side
    upper: str  # bound version giving the upper side
    kind: str = "interval"

    def __post_init__(self) -> None:
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
            return Verdict.FAIL, f"mean outside {tag} with confidence at {self.vary}={', '.join(map(_fmt, outside))}", evidence
        if unsure:
            return Verdict.INCONCLUSIVE, f"CI crosses a side of {tag} at {self.vary}={', '.join(map(_fmt, unsure))}", evidence
        return Verdict.PASS, f"CI inside {tag} at every {self.vary}", evidence


@dataclass(frozen=True, kw_only=True)
class AbscissaSlopeClaim(SlopeClaim):
    """A slope claim whose x axis is ``abscissa(config)`` (e.g. the run's eta) instead of the grid value,
    fitted on |per-replica value| when ``magnitude`` (signed measures whose sign is known)."""

    abscissa: Callable[[RunConfig], float] | None = None
    magnitude: bool = False
    kind: str = "slope"

    def points(self, profile, traces):
        out = super().points(profile, traces)
        for point in out:
            if self.abscissa is not None:
                point.stats = {**point.stats, "grid_value": float(point.value)}
                point.value = float(self.abscissa(point.config))
            if self.magnitude:
                point.samples = np.abs(point.samples)
        return out


# ---------------------------------------------------------------------------------------------
# Issue #8: claims on exact traces (RunConfig(mode="exact"/"auto"): one row of exact expectations).
# The hooks above call these; everything else in a claim is unchanged.


def point_ci(point: PointResult, *, level: float = 0.95, side: str = "two-sided") -> MeanCI:
    """The CI of a grid point's mean: Student-t over replicas, or zero width for an exact point (its
    single sample is the expectation itself, with no Monte-Carlo error)."""
    if point.exact and point.samples.size == 1:
        m = float(point.samples[0])
        return MeanCI(mean=m, low=m, high=m, level=level, n=1)
    return mean_ci(point.samples, level=level, side=side)


def _ratio(ratio: float, tolerance: float) -> str:
    """A measured/predicted ratio with as many digits as the tolerance needs."""
    return f"{ratio:.4g}" if tolerance >= 0.01 else f"1{ratio - 1:+.2g}"


def relative(tolerance: float) -> str:
    """A relative tolerance in words: '10%', or '1e-09 (relative)' for the tiny ones exact values allow."""
    return f"{tolerance:.0%}" if tolerance >= 0.01 else f"{tolerance:.1g} (relative)"


def exact_state(points: Sequence[PointResult]) -> bool | str:
    """True when every point is exact, False when none is, "partial" otherwise (an auto fallback)."""
    flags = [p.exact for p in points]
    if flags and all(flags):
        return True
    return "partial" if any(flags) else False


def exact_evidence(points: Sequence[PointResult]) -> dict[str, Any]:
    """What a verdict's evidence says about exactness: the state and any auto fallback's reason."""
    out: dict[str, Any] = {"exact": exact_state(points)}
    fallbacks = sorted({str(p.trace.info["exact_fallback"]) for p in points
                        if p.trace is not None and "exact_fallback" in p.trace.info})
    if fallbacks:
        out["exact_fallback"] = fallbacks
    return out
