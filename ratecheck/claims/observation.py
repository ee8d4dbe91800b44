"""Observations (numbers with no verdict) and Monte-Carlo twins of claims."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..trace import RunConfig, Trace
from .base import Claim, Outcome
from .compose import Grid, Plan
from .model import PointResult, Profile, Verdict, _num
from .views import View


@dataclass(frozen=True)
class Borrowed(Grid):
    """An observation's plan: the runs and grid points of the claim it reads (``claim.of``, its controlled
    claim's runs included), else one run per grid value of its own."""

    reads: ClassVar[tuple[str, ...]] = ("of",)  # the claim fields it reads

    def runs(self, claim: Any, profile: Profile) -> list[RunConfig]:
        return claim.of.runs(profile) if claim.of is not None else super().runs(claim, profile)

    def points(self, claim: Any, profile: Profile, traces: Mapping[str, Any]) -> list[PointResult]:
        return claim.of.points(profile, traces) if claim.of is not None else super().points(claim, profile, traces)


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
    plan: Plan = Borrowed()
    expect: Verdict = Verdict.OBSERVED
    kind: str = "observation"
    observes: ClassVar[bool] = True

    def view(self) -> View:
        """An observation is shown as the claim whose runs it reads."""
        return self.of.view() if self.of is not None else super().view()

    def decide(self, profile: Profile, traces: Mapping[str, Trace]) -> Outcome:
        points = self.points(profile, traces)
        evidence: dict[str, Any] = {}
        note = ""
        if self.of is not None:
            why = self.of._precheck(points)
            if why:
                note = f" (read despite: {why})"
            else:
                evidence = dict(self.of.judge(points)[2])
        values = {k: float(v) for k, v in self.compute(points, evidence).items()}
        evidence.pop("power", None)  # a number with no verdict has no power (the other kind's rule is not applied)
        evidence["observed"] = values
        evidence["quantity"] = self.quantity
        text = ", ".join(f"{k} = {_num(v)}" for k, v in values.items())
        return Outcome(self, Verdict.OBSERVED, f"observed {self.quantity}: {text}{note}", evidence, points)


def monte_carlo_twin(claim: Claim, *, quick: bool = False, **changes: Any) -> Claim:
    """The claim on Monte-Carlo runs, ``<id>.monte_carlo``, so an exact verdict and its Monte-Carlo
    counterpart sit in one report (issue #8). In the full profile it draws replicas. In the quick one it
    draws too with ``quick=True`` (a question about the draws themselves); otherwise it is not a claim of
    the quick profile (issue #23: rereading the exact runs there tests no Monte Carlo, so its grid names no
    'quick' and checks of that profile skip it; its configure still maps a quick run to the exact one).
    ``changes`` replace fields, e.g. a Monte-Carlo tolerance."""
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
        changes.setdefault("configure_other", drawn(claim.configure_other))  # type: ignore[attr-defined]  # checked above
    if not quick:
        changes.setdefault("grid", {name: values for name, values in claim.grid.items() if name != "quick"})
    return dataclasses.replace(claim, id=f"{claim.id}.monte_carlo", configure=drawn(claim.configure),
                               title=f"{claim.title} (Monte Carlo{'' if quick else ', full profile only'})", **changes)


def observe(claim: Claim, *, id: str, title: str, quantity: str,
            compute: Callable[[Sequence[PointResult], Mapping[str, Any]], Mapping[str, float]],
            statement: str | None = None) -> Observation:
    """An observation on the runs of ``claim`` (which is not registered itself)."""
    return Observation(id=id, paper=claim.paper, title=title, statement=statement or claim.statement,
                       source=claim.source, vary=claim.vary, grid=claim.grid, configure=claim.configure,
                       measure=claim.measure, theorem=claim.theorem, bindings=claim.bindings,
                       summary=claim.summary, min_replicas=claim.min_replicas, level=claim.level,
                       quantity=quantity, compute=compute, of=claim)
