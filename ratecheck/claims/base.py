"""The base of every claim (identity, expectation, the sweep, the theorem, the shared prechecks), what a
claim decided (Outcome), and the expected order of a slope."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..theory import Source, Theorem
from ..trace import RunConfig, Trace
from .model import Bindings, PointResult, Profile, Verdict, _first_divergence, _fmt, _jsonable, exact_evidence, exact_state


@dataclass
class Outcome:
    """A claim's verdict with its evidence (JSON-able through ``to_dict``)."""

    claim: "Claim"
    verdict: Verdict
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)
    points: list["PointResult"] = field(default_factory=list)
    runs: dict[str, int] = field(default_factory=dict)  # issue #19: results read, "reused" / "computed"

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
            "runs": dict(self.runs),
        }


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
    controls: "Claim | None" = None
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
    value: float | None = None  # used when there is no theorem for it
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
