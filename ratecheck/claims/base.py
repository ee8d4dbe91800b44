"""The base of every claim (identity, expectation, the sweep, the theorem, the shared prechecks), what a
claim decided (Outcome), and the expected order of a slope."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np

from ..theory import Derived, Source, Theorem
from ..trace import RunConfig, Trace
from .compose import Decision, Estimator, Grid, Plan, Points, Reading, Rule, Summary, Undecided, unread_fields
from .model import Bindings, PointResult, Profile, Verdict, _fmt, _jsonable, exact_state
from .views import View, view_of


@dataclass
class Outcome:
    """A claim's verdict with its evidence (JSON-able through ``to_dict``)."""

    claim: Claim
    verdict: Verdict
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)
    points: list[PointResult] = field(default_factory=list)
    runs: dict[str, int] = field(default_factory=dict)  # issue #19: results read, "reused" / "computed"
    # decided before any statistic (too few replicas, violated conditions): nothing to compare a control with
    premature: bool = field(default=False, repr=False, compare=False)

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


Gate = Callable[["Claim", Sequence[PointResult], Verdict, str, dict[str, Any]], tuple[Verdict, str, dict[str, Any]]]


def check_invariants(claim: Claim) -> None:
    """The rules every claim meets, whatever its kind or pieces (run after each kind's own checks)."""
    if claim.expect == Verdict.INCONCLUSIVE:
        raise ValueError(f"claim {claim.id}: no claim may expect INCONCLUSIVE (it cannot tell a bug from noise)")
    unread = unread_fields(claim)
    if unread:
        raise ValueError(f"claim {claim.id}: its pieces read fields it does not have ({'; '.join(unread)})")
    if (claim.expect == Verdict.OBSERVED) != type(claim).observes:
        raise ValueError(f"claim {claim.id}: only an Observation expects OBSERVED, and it always does")
    if claim.controls is not None:
        if not claim.negative_control:
            raise ValueError(f"claim {claim.id} declares controls= but is not a negative control")
        if dict(claim.controls.grid) != dict(claim.grid) or claim.controls.vary != claim.vary:
            raise ValueError(f"negative control {claim.id} must run on the grid of {claim.controls.id}")


def controlled(claim: Claim, outcome: Outcome, profile: Profile, traces: Mapping[str, Trace]) -> Outcome:
    """A negative control's outcome, shown to differ from the claim it controls on the same runs: when
    both verdicts agree it is INCONCLUSIVE ("does not differ from ..."). Other claims pass through."""
    if claim.controls is None or outcome.premature or outcome.claim is not claim:
        return outcome
    other = claim.controls.decide(profile, traces)
    verdict, reason = outcome.verdict, outcome.reason
    evidence = {**outcome.evidence, "controlled": {"claim": claim.controls.id, "verdict": str(other.verdict),
                                                   "reason": other.reason}}
    if other.verdict == verdict:
        return Outcome(claim, Verdict.INCONCLUSIVE,
                       f"negative control does not differ from {claim.controls.id} on the same instance "
                       f"(both {verdict}): {reason}", evidence, outcome.points)
    return Outcome(claim, verdict, f"{reason}; differs from {claim.controls.id} ({other.verdict})", evidence,
                   outcome.points)


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

    # the decision's pieces (ratecheck.claims.compose): what to run, what to read from each run, the statistic,
    # the rule; a kind names its own as defaults, a claim may name others
    plan: Plan = Grid()
    reading: Reading = Summary()
    statistic: Estimator = Points()
    rule: Rule = Undecided()
    # extra gates, applied in order after the kind's own decision (e.g. FedBiO's after-run ball check):
    # gate(claim, points, verdict, reason, evidence) -> (verdict, reason, evidence); see with_gates
    gates: tuple[Gate, ...] = ()
    # a claim that reports a number and never a verdict (an Observation) expects OBSERVED, and only it
    observes: ClassVar[bool] = False

    def __post_init__(self) -> None:
        self._validate()
        check_invariants(self)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # the invariants hold for every claim: a kind that writes its own __post_init__ or decide (instead
        # of _validate / _decide) still has them checked after its own code (check_invariants, controlled)
        super().__init_subclass__(**kwargs)
        own_init = cls.__dict__.get("__post_init__")
        if own_init is not None and not getattr(own_init, "_checks_invariants", False):
            def __post_init__(self: Claim, _own: Callable[[Claim], None] = own_init) -> None:
                _own(self)
                check_invariants(self)

            __post_init__._checks_invariants = True  # type: ignore[attr-defined]  # a marker: wrapped once
            cls.__post_init__ = __post_init__  # type: ignore[method-assign]  # the subclass's own, wrapped
        own_decide = cls.__dict__.get("decide")
        if own_decide is not None and not getattr(own_decide, "_controlled", False):
            def decide(self: Claim, profile: Profile, traces: Mapping[str, Trace],
                       _own: Callable[..., Outcome] = own_decide) -> Outcome:
                return controlled(self, _own(self, profile, traces), profile, traces)

            decide._controlled = True  # type: ignore[attr-defined]  # a marker: wrapped once
            decide.__doc__ = own_decide.__doc__
            cls.decide = decide  # type: ignore[method-assign]  # the subclass's own, wrapped

    def _validate(self) -> None:
        """A kind's own checks of its fields (the invariants every claim meets are checked after it)."""

    def view(self) -> View:
        """How the report shows this claim, asked of its decision's pieces: the plan's, reading's or
        statistic's plot layer and axes, the rule's yardstick, their captions, table columns and facts
        (ratecheck.claims.views); a claim that draws itself (``draw_plot``, e.g. FESS-GDA's rate across step
        sizes) is shown through that."""
        return view_of(self)

    def in_profile(self, profile: Profile) -> bool:
        """Is this a claim of ``profile``? A claim is registered in the profiles its grid names (issue #23:
        a Monte-Carlo twin that would only reread its exact claim's runs in the quick profile is not one)."""
        return profile.name in self.grid

    def values(self, profile: Profile) -> list[float]:
        if profile.name not in self.grid:
            raise ValueError(f"claim {self.id} has no grid for profile {profile.name!r}")
        return list(self.grid[profile.name])

    def own_runs(self, profile: Profile) -> list[RunConfig]:
        """The runs the claim's plan makes up front (none for an adaptive plan), planned once per profile
        (issue #9): configure may take seconds, and a check asks when it plans and decides."""
        planned = self.__dict__.setdefault("_planned", {})
        if profile not in planned:
            planned[profile] = self.plan.runs(self, profile)
        return list(planned[profile])

    def runs(self, profile: Profile) -> list[RunConfig]:
        """Every run the decision reads up front: its own, and a negative control's controlled claim's."""
        own = self.own_runs(profile)
        return own + self.controls.runs(profile) if self.controls is not None else own

    @property
    def plans_runs(self) -> bool:
        """Its runs are planned (and the plan stored) before any request (ratecheck.runner.sweep)."""
        return not self.plan.adaptive

    def requests(self, profile: Profile, results: Mapping[str, Any]) -> list[Any]:
        """What the plan still needs beyond the planned runs (runs or stored tasks; ratecheck.runner.tasks)."""
        return self.plan.requests(self, profile, results)

    def compute_task(self, task: Any) -> dict[str, Any]:
        """A stored task the plan asked for (a recursion beside a run), computed on the executor."""
        return self.plan.compute_task(self, task)

    def points(self, profile: Profile, traces: Mapping[str, Trace]) -> list[PointResult]:
        """The grid points, as the claim's plan makes them from the runs (each read by the claim's reading)."""
        return self.plan.points(self, profile, traces)

    def _reading(self) -> Reading:
        """The reading the points are taken with (a kind may derive it from its fields)."""
        return self.reading

    def decide(self, profile: Profile, traces: Mapping[str, Trace]) -> Outcome:
        """The composition: the plan's points, its and the shared prechecks, ``rule(statistic(points))`` on the
        points it judges, the gates, what the plan adds; then the invariants of a negative control."""
        points = self.points(profile, traces)
        judged = self.plan.judged(self, points)
        reason = self.plan.precheck(self, points) or self._precheck(judged)
        if reason:
            return Outcome(self, Verdict.INCONCLUSIVE, reason, self.plan.evidence(self, points, decided=False), points,
                           premature=True)
        verdict, reason, evidence = self.plan.finish(self, points, self.judge(judged))
        evidence = {**evidence, **self.plan.evidence(self, points, decided=True)}  # issue #8: the exact state
        if evidence.get("exact") is True and "exact" not in reason:
            reason = f"{reason} (exact expectations)"
        return controlled(self, Outcome(self, verdict, reason, evidence, points), profile, traces)

    decide._controlled = True  # type: ignore[attr-defined]  # a marker: calls controlled itself

    def judge(self, points: Sequence[PointResult]) -> tuple[Verdict, str, dict[str, Any]]:
        """The kind's decision on the points, then each extra gate in turn."""
        verdict, reason, evidence = self._decide(points)
        ruled = verdict
        for gate in self.gates:
            verdict, reason, evidence = gate(self, points, verdict, reason, evidence)
        if verdict != ruled and "power" in evidence:  # the rule's power is about the rule's verdict, not a gate's
            evidence = {**evidence, "power": {"undetermined": f"a gate turned the rule's {ruled} into {verdict}"}}
        return verdict, reason, evidence

    def _precheck(self, points: Sequence[PointResult]) -> str:
        """Reasons that make any verdict premature, in words: the reading's, then the shared ones."""
        why = self._reading().precheck(self, points)
        if why:
            return why
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

    def _decide(self, points: Sequence[PointResult]) -> Decision:
        """The composition: ``rule(statistic(points))`` (the gates come after it, in ``judge``)."""
        return self.rule(self, points, self.statistic(self, points))


@dataclass(frozen=True)
class ExpectedOrder:
    """An exponent derived from a theorem (never typed in), or given with the reason it is known."""

    theorem: Theorem | None = None
    var: str = ""
    version: str = ""
    dominant_in: str | None = None
    value: float | Derived | None = None  # used when there is no theorem for it
    why: str = ""
    # symbols set before the order is derived, e.g. {"H": 1}: the order in M with one local step
    fixed: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fixed", tuple(dict(self.fixed).items()))  # hashable, like the claim

    def exponent(self) -> float:
        if self.theorem is not None:
            return float(self.theorem.order(self.var, version=self.version, dominant_in=self.dominant_in,
                                            fixed=dict(self.fixed)))
        if self.value is None:
            raise ValueError("ExpectedOrder needs a theorem or a value with the reason")
        return float(self.value)

    def describe(self) -> str:
        if self.theorem is not None:
            lead = f", leading term as {self.dominant_in} -> oo" if self.dominant_in else ""
            held = "".join(f", {k} = {v}" for k, v in dict(self.fixed).items())
            return f"order in {self.var} of {self.theorem.id} bound '{self.version}'{held}{lead} (sympy)"
        return self.why


def with_gates(claim: Claim, *gates: Gate) -> Claim:
    """The same claim (same id and fields) with extra gates applied after its own decision."""
    return dataclasses.replace(claim, gates=tuple(claim.gates) + gates)


ClaimT = TypeVar("ClaimT", bound=Claim)


def negative_control(of: ClaimT, *, id: str, title: str, statement: str, expect_reason: str,
                     compare: bool = True, **changes: Any) -> ClaimT:
    """A negative control of ``of``: the same claim (kind, grid, measure, rule, tolerances) with
    ``changes`` (typically another ``configure``), expected to FAIL as a property of the algorithm, not an
    erratum. With ``compare`` (default) it declares ``controls=of``: run on the same grid, its verdict
    must differ from ``of``'s (else INCONCLUSIVE)."""
    return dataclasses.replace(of, id=id, title=title, statement=statement, expect=Verdict.FAIL,
                               expect_reason=expect_reason, negative_control=True,
                               controls=of if compare else None, **changes)
