"""Rounds to a target accuracy, found by bisection on the horizon T (issue #12, spec defedavg P1-f).

When a theorem prescribes step sizes that depend on the horizon T, "rounds to eps" is not read off
one run: each T is its own run (its own step sizes), and the smallest T whose measure reaches eps
is found by a search over T. ``smallest_horizon`` brackets it and bisects (the split point interpolated
in log-log, which is nearly linear for a power-law rate, kept whenever it lands strictly inside the
bracket, else the plain midpoint; the round next to it is tried too), down to one round. It needs the measure to be a noise-free function
of T: exact expectations (ratecheck.exact), not Monte Carlo, whose noise would make the predicate
flicker near eps.

``HorizonSlopeClaim`` runs its bisections through the sweep (its plan, ``Bisection``): ``requests`` replays
them on the runs found so far and yields the next horizon, so every run is stored, reused by a rerun and run
on the executor, and the decision reads the stored runs only. It fits log(rounds to eps) against log(grid
value), keeping only the grid points where the theorem's conditions hold at the rounds found (its own formula
decides the regime, e.g. T >= T_min), and shows the excluded points with the smallest admissible T in its
evidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..claims import Decision, PointResult, Profile, Reading, SlopeClaim, Verdict, exact_evidence
from ..claims.compose import Plan, grid_point
from ..claims.views import draw_fit
from ..claims.views_slopes import FittedSlope
from ..trace import RunConfig, Trace
from .tasks import Pending, complete

__all__ = ["Bisection", "HorizonSearch", "HorizonSlopeClaim", "RoundsFound", "smallest_horizon"]


@dataclass
class HorizonSearch:
    """The smallest T with measure(T) <= target, the last runs on each side, and what it cost."""

    rounds: int  # the smallest T found (measure(T) <= target < measure(T - 1))
    value: float  # measure at that T
    below: float | None  # measure at T - 1 (None when T is the lower limit)
    evaluations: list[tuple[int, float]]  # (T, measure) in the order tried
    capped: bool = False  # the upper limit was reached without meeting the target

    @property
    def runs(self) -> int:
        return len(self.evaluations)

    @property
    def rounds_run(self) -> int:
        return int(sum(t for t, _ in self.evaluations))


def smallest_horizon(measure_at: Callable[[int], float], target: float, guess: int, *, low: int = 1,
                     high: int = 10**7) -> HorizonSearch:
    """The smallest integer T in [low, high] with measure_at(T) <= target, for a measure that falls
    with T: bracket from ``guess`` (log-log secant steps), then bisect to one round.

    A non-finite measure (a diverged run) counts as above the target. When even ``high`` does not
    reach it, the result has ``capped`` set and ``rounds = high``.
    """
    if not (math.isfinite(target) and target > 0):
        raise ValueError(f"target must be a positive number, got {target!r}")
    if not 1 <= low <= high:
        raise ValueError(f"need 1 <= low <= high, got low={low}, high={high}")
    seen: dict[int, float] = {}
    order: list[tuple[int, float]] = []

    def m(t: int) -> float:
        if t not in seen:
            value = float(measure_at(int(t)))
            seen[t] = value if math.isfinite(value) else math.inf
            order.append((int(t), seen[t]))
        return seen[t]

    t = min(max(int(guess), low), high)
    lo: int | None = None  # largest T known above the target
    hi: int | None = None  # smallest T known at or below it
    while lo is None or hi is None:
        if m(t) <= target:
            hi = t
            if t == low:
                return HorizonSearch(low, m(low), None, order)
        else:
            lo = t
            if t == high:
                return HorizonSearch(high, m(high), None, order, capped=True)
        if lo is not None and hi is not None:
            break
        t = _next_bracket(order, target, t, up=hi is None, low=low, high=high)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        a, b = m(lo), m(hi)
        if math.isfinite(a) and a > 0 and b > 0:
            # log-log interpolation: exact for a power law; kept only if it lands strictly inside
            x = math.log(lo) + (math.log(a) - math.log(target)) * (math.log(hi) - math.log(lo)) / (math.log(a) - math.log(b))
            guess_mid = int(round(math.exp(x)))
            if lo < guess_mid < hi:
                mid = guess_mid
        if m(mid) <= target:
            hi = mid
        else:
            lo = mid
        # the other side of the interpolated point, one round away: brackets the root in two runs
        if hi - lo > 1:
            probe = hi - 1 if mid == hi else lo + 1
            if m(probe) <= target:
                hi = probe
            else:
                lo = probe
    return HorizonSearch(hi, m(hi), m(lo) if lo >= low else None, order)


def _next_bracket(tried: list[tuple[int, float]], target: float, t: int, *, up: bool, low: int, high: int) -> int:
    """The next T while bracketing: the log-log secant through the last two runs, extrapolated to the
    target and 2% beyond (a power law is crossed in one step), kept between x1.05 and x10 from t; the
    first step (one run only) is x1.05, a step where the measure does not fall is x2."""
    factor = 1.05
    if len(tried) >= 2:
        (t1, m1), (t2, m2) = tried[-2:]
        if t1 != t2 and all(math.isfinite(v) and v > 0 for v in (m1, m2)):
            slope = (math.log(m2) - math.log(m1)) / (math.log(t2) - math.log(t1))
            ratio = (target / m2) ** (1.0 / slope) if slope < 0 else math.nan
            factor = min(10.0, max(1.05, 1.02 * (ratio if up else 1.0 / ratio))) if slope < 0 else 2.0
    step = int(math.ceil(t * factor)) if up else int(t / factor)
    return min(high, max(step, t + 1)) if up else max(low, min(step, t - 1))


class RoundsToTarget(FittedSlope):
    """The rounds found per grid value (in the fit, or excluded where the theorem's conditions fail), the
    smallest admissible T, and the fit over the points kept (the plan's evidence ``rows``)."""

    def x_values(self, o: Any) -> list[float]:
        return [r["value"] for r in o.evidence.get("rows", [])] or super().x_values(o)

    def y_values(self, o: Any) -> list[float]:
        return [float(r["rounds"]) for r in o.evidence.get("rows", [])] or super().y_values(o)

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        rows = o.evidence.get("rows", [])
        x = np.array([r["value"] for r in rows], dtype=float)
        t = np.array([r["rounds"] for r in rows], dtype=float)
        keep = np.array([bool(r["in_fit"]) for r in rows], dtype=bool)
        ax.plot(x[keep], t[keep], "o", color="C0", ms=6, label="rounds to target (in the fit)", zorder=4)
        if (~keep).any():
            ax.plot(x[~keep], t[~keep], "x", color="C3", ms=8, mew=2,
                    label="rounds to target where the theorem's conditions fail (excluded)", zorder=4)
        t_min = [(r["value"], r["smallest_admissible"]) for r in rows if r.get("smallest_admissible")]
        if t_min:
            ax.plot(*zip(*t_min), "--", color="C7", lw=1.4, label="smallest T meeting the theorem's conditions")
        fit = o.evidence.get("fit")
        if fit and keep.any():
            draw_fit(ax, np.geomspace(x[keep].min(), x[keep].max(), 32), fit)

    def caption(self, o: Any) -> str:
        return ("Points: the smallest horizon T whose exact run reaches the target (bisection on T); crosses: "
                "grid values where the theorem's conditions fail at the rounds found (not fitted); line: the fit "
                "over the points kept.")


@dataclass(frozen=True)
class RoundsFound(Reading):
    """The smallest horizon the plan's search found at a grid value (``point.inputs["search"]``): one number,
    exact (the search runs on exact expectations)."""

    def label(self, claim: Any) -> str:
        return "rounds to the target (bisection on T)"

    def __call__(self, claim: Any, point: PointResult) -> None:
        point.samples = np.array([float(point.inputs["search"]["rounds"])])


@dataclass(frozen=True)
class Bisection(Plan):
    """An adaptive plan: per grid value, the smallest horizon T whose run's ``measure`` (after its last round)
    reaches ``claim.target``, by ``smallest_horizon`` on exact runs ``configure_at(value, T, profile)``. It
    plans no run: ``requests`` replays the bisections on the runs found so far and yields the next horizon,
    so every run is stored, reused and run on the executor. A point per grid value at the horizon found (its
    run, the theorem evaluated there); the statistic sees the points where the theorem's conditions hold at
    the rounds found (``in_fit``), the others are shown with ``smallest_admissible``. No verdict when a search
    reaches ``high`` or no point is left; the evidence has every search (rows, runs, rounds run)."""

    reads: ClassVar[tuple[str, ...]] = ("configure_at", "expected", "first_guess", "high", "smallest_admissible",
                                        "target")  # the claim fields it reads
    adaptive: ClassVar[bool] = True
    view: ClassVar[Any] = RoundsToTarget()

    def runs(self, claim: Any, profile: Profile) -> list[RunConfig]:
        return []  # the search decides what to run: ``requests`` yields its next horizon

    def requests(self, claim: Any, profile: Profile, results: Mapping[str, Any]) -> list[Any]:
        """The next run the bisection needs, given the runs in ``results`` (none once every grid
        value's search has ended): the sweep runs it through the store and asks again."""
        try:
            self.search(claim, profile, results)
        except Pending as pending:
            assert isinstance(pending.item, RunConfig)  # search pends runs only
            return [pending.item]
        return []

    def search(self, claim: Any, profile: Profile, traces: Mapping[str, Any]
               ) -> list[tuple[float, HorizonSearch, RunConfig, Trace]]:
        """The bisections replayed on the stored runs; Pending names the first run not yet there."""
        out, previous = [], None

        def measure_at(value: float, rounds: int) -> float:
            config = claim.configure_at(value, rounds, profile)
            if config.mode != "exact":
                raise ValueError(f"claim {claim.id}: the horizon search needs exact runs (noise-free in T), "
                                 f"got mode {config.mode!r}")
            trace = traces.get(config.key())
            if trace is None:
                raise Pending(config)
            values = trace.at_end(claim.measure)
            return float(values[0]) if values.size else math.inf

        e = claim.expected.exponent()
        for value in claim.values(profile):
            guess = (claim.first_guess(value, profile) if previous is None
                     else max(1, int(round(previous[1] * (value / previous[0]) ** e))))
            found = smallest_horizon(lambda t: measure_at(value, t), claim.target, guess, high=claim.high)
            config = claim.configure_at(value, found.rounds, profile)
            out.append((value, found, config, traces[config.key()]))
            previous = (value, found.rounds)
        return out

    def points(self, claim: Any, profile: Profile, traces: Mapping[str, Any]) -> list[PointResult]:
        if self.requests(claim, profile, traces):  # asked outside a sweep: run the bisection here, uncached
            traces = complete(claim, profile, traces)
        reading, out = claim._reading(), []
        for value, found, config, trace in self.search(claim, profile, traces):
            point = grid_point(claim, value, config, trace)
            t_min = claim.smallest_admissible(value, profile) if claim.smallest_admissible else None
            holds = point.evaluation is None or point.evaluation.all_hold
            row: dict[str, Any] = {"value": value, "rounds": found.rounds, "measure": found.value,
                                   "measure_before": found.below, "capped": found.capped, "runs": found.runs,
                                   "rounds_run": found.rounds_run, "conditions_hold": holds,
                                   "smallest_admissible": t_min, "in_fit": holds and not found.capped}
            if point.evaluation is not None:
                row["broken"] = [c.name for c in point.evaluation.conditions if not c.holds]
            point.stats = {k: row[k] for k in ("smallest_admissible", "in_fit", "runs")}
            point.inputs["search"] = row
            reading(claim, point)
            out.append(point)
        return out

    def judged(self, claim: Any, points: Sequence[PointResult]) -> Sequence[PointResult]:
        return [p for p in points if p.stats["in_fit"]]

    def precheck(self, claim: Any, points: Sequence[PointResult]) -> str:
        capped = [p.value for p in points if p.inputs["search"]["capped"]]
        if capped:
            where = ", ".join(f"{claim.vary}={v:g}" for v in capped)
            return f"target {claim.target:g} not reached within {claim.high} rounds at {where}"
        if not self.judged(claim, points):
            return self.finish(claim, points, (Verdict.INCONCLUSIVE, "no grid point inside the theorem's conditions",
                                               {}))[1]
        return ""

    def finish(self, claim: Any, points: Sequence[PointResult], decision: Decision) -> Decision:
        verdict, reason, evidence = decision
        excluded = [p.inputs["search"] for p in points if not p.stats["in_fit"]]
        if excluded:
            tag = ", ".join(f"{claim.vary}={r['value']:g} ({r['rounds']} rounds < {r['smallest_admissible']})"
                            if r["smallest_admissible"] is not None else f"{claim.vary}={r['value']:g}"
                            for r in excluded)
            reason = f"{reason}; outside the theorem's conditions at the rounds found, so not fitted: {tag}"
        runs = sum(p.inputs["search"]["runs"] for p in points)
        return verdict, f"{reason} (rounds to {claim.target:g} by bisection on exact runs: {runs} runs)", evidence

    def evidence(self, claim: Any, points: Sequence[PointResult], decided: bool) -> dict[str, Any]:
        rows = [p.inputs["search"] for p in points]
        return {"target": claim.target, "rows": rows, "runs": int(sum(r["runs"] for r in rows)),
                "rounds_run": int(sum(r["rounds_run"] for r in rows)), **exact_evidence(points)}


@dataclass(frozen=True, kw_only=True)
class HorizonSlopeClaim(SlopeClaim):
    """Rounds until ``measure`` (after the run's last round) reaches ``target``, against the grid, as a
    log-log slope; every grid value's rounds found by ``smallest_horizon`` on exact runs (the plan
    ``Bisection``).

    ``configure_at(value, rounds, profile)`` is the run at one horizon (with the theorem's schedule
    for that horizon); ``first_guess(value, profile)`` starts the search at the first grid value, the
    next ones start from the previous result scaled by the expected exponent (a guess only: the
    search ends on the same integer from any start). A grid point is in the fit when the theorem's
    conditions hold at the rounds found; the others are shown, with ``smallest_admissible`` (the
    smallest T where the conditions hold under the schedule), and excluded by the theorem's own
    formula. ``regime`` then judges the points kept, as for any slope claim.
    """

    target: float
    configure_at: Callable[[float, int, Profile], RunConfig]
    first_guess: Callable[[float, Profile], int]
    smallest_admissible: Callable[[float, Profile], int | None] | None = None
    high: int = 10**6
    kind: str = "horizon_slope"
    plan: Plan = Bisection()
    reading: Reading = RoundsFound()
