"""A claim's decision from small pure pieces (the optax idea, issue #20 item 1).

A claim decides in four steps, each a piece it names in a field:

* ``plan`` (what to run and how the runs become grid points): one run per grid value (``Grid``, the
  default), two series compared on one grid, a stored recursion beside each run, several runs per grid
  value, or an adaptive plan that asks for runs as it goes (a bisection on the horizon); a plan may keep
  some points out of the statistic, refuse a verdict first, and add to the evidence and the reason;
* ``reading`` (what to read from each run): fills a grid point's per-replica ``samples`` (and its
  ``stats``, and its ``value`` when the abscissa is not the grid value) from its trace: the measure after
  the last round or the claim's ``summary`` (``Summary``), hitting times, distances to a target, log-rates;
* ``statistic`` (what the data say): an estimate from the points: one- or two-sided CIs of the replica
  means, a bootstrap slope, a slope difference, ...;
* ``rule`` (how the estimate decides): ``rule(claim, points, estimate) -> (verdict, reason, evidence)``: a
  one-sided ceiling, a band around a prediction, an interval, an exponent band, ...

so that a claim's decision is ``rule(statistic(plan.points(...)))``, then its ``gates`` in turn (``with_gates``).
Rules compose: a rule may wrap another (``ExactOrMonteCarlo``: the inner rule at the tolerance for exact or
for Monte-Carlo points; a regime check before a band; a direction check that reports the inner rule).
Pieces read their parameters from the claim's fields (a slope rule reads ``expected``, ``tolerance``,
``side``), so the kinds (SlopeClaim, BoundClaim, ...) are named compositions: a dataclass of fields with
its pieces as field defaults, and a paper's own kind is the same kind with another piece
(``SlopeClaim(..., rule=StrictlyDecreasing(...))``), never a subclass overriding ``_decide``.

The invariants every claim meets (``check_invariants``) and the negative-control comparison
(``controlled``) are applied by the Claim base around every composition; no piece can bypass them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..trace import RunConfig, Trace
from .model import PointResult, Profile, Verdict, _first_divergence, exact_evidence

Decision = tuple[Verdict, str, dict[str, Any]]


def ran(config: RunConfig, trace: Trace) -> RunConfig:
    """The configuration that made ``trace``: ``config`` itself, unless a check ran it under a seed offset
    (``Profile.seed_offset``): then the trace's own, whose seed a replay (an oracle, a cost summary) must use to draw the same."""
    made = getattr(trace, "config", None)
    return made if isinstance(made, RunConfig) and made.seed != config.seed else config


class Plan:
    """What a claim runs and how the runs become its grid points (``claim.plan``)."""

    reads: ClassVar[tuple[str, ...]] = ()  # the claim fields it reads (checked when the claim is made)
    # it plans no run up front: ``requests`` asks for them as it goes (the sweep answers, round by round)
    adaptive: ClassVar[bool] = False
    view: ClassVar[Any] = None  # how the points are shown, when the plan decides that (ratecheck.claims.views)

    def display(self) -> Any:
        return shown(self)

    def runs(self, claim: Any, profile: Profile) -> list[RunConfig]:
        """The runs planned up front (the claim memoizes them: ``Claim.own_runs``)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def points(self, claim: Any, profile: Profile, traces: Mapping[str, Any]) -> list[PointResult]:
        """The grid points, each read by the claim's reading."""
        raise NotImplementedError  # pragma: no cover - abstract

    def requests(self, claim: Any, profile: Profile, results: Mapping[str, Any]) -> list[Any]:
        """Runs or stored tasks still needed beyond the planned runs (ratecheck.runner.tasks)."""
        return []

    def compute_task(self, claim: Any, task: Any) -> dict[str, Any]:
        raise NotImplementedError(f"claim {claim.id}: its plan ({type(self).__name__}) asks for no task")

    def judged(self, claim: Any, points: Sequence[PointResult]) -> Sequence[PointResult]:
        """The points the statistic and the rule see (all of them unless the plan keeps some out)."""
        return points

    def precheck(self, claim: Any, points: Sequence[PointResult]) -> str:
        """Why no verdict can be given from what was run (empty when one can), before any other check."""
        return ""

    def finish(self, claim: Any, points: Sequence[PointResult], decision: Decision) -> Decision:
        """The decision with what the plan adds to its reason and evidence (the search that found the points)."""
        return decision

    def evidence(self, claim: Any, points: Sequence[PointResult], decided: bool) -> dict[str, Any]:
        """What an outcome says about the runs: a decided one, whether its points are exact expectations
        (issue #8); one refused before any statistic (``decided`` False), nothing."""
        return exact_evidence(points) if decided else {}


def grid_point(claim: Any, value: float, config: RunConfig, trace: Any) -> PointResult:
    """A grid point of one run, before it is read: its theorem evaluated at the run's own step sizes (the run
    is what is judged, not the schedule) when the claim has a theorem and bindings."""
    evaluation = None
    if claim.theorem is not None and claim.bindings is not None:
        evaluation = claim.theorem.evaluate(claim.bindings(config, trace), use_schedule=False)
    return PointResult(value, config, np.empty(0), trace.diverged_count, evaluation,
                       first_divergence=_first_divergence(trace), trace=trace)


@dataclass(frozen=True)
class Grid(Plan):
    """One run per grid value, ``configure(value, profile)``: a point per run, read by the claim's reading."""

    def runs(self, claim: Any, profile: Profile) -> list[RunConfig]:
        return [claim.configure(v, profile) for v in claim.values(profile)]

    def points(self, claim: Any, profile: Profile, traces: Mapping[str, Any]) -> list[PointResult]:
        out = []
        reading = claim._reading()
        for value, config in zip(claim.values(profile), claim.own_runs(profile)):
            point = grid_point(claim, value, config, traces[config.key()])
            reading(claim, point)
            out.append(point)
        return out


def shown(piece: Any) -> Any:
    """A piece's view: its own, else that of the first piece it wraps that has one (a rule that gates or
    reports an inner rule is shown as the inner rule, unless it says how it is shown)."""
    if piece.view is not None:
        return piece.view
    wrapped = [getattr(piece, f.name) for f in dataclasses.fields(piece)] if dataclasses.is_dataclass(piece) else []
    return next((v for p in wrapped if isinstance(p, (Plan, Reading, Estimator, Rule))
                 for v in [p.display()] if v is not None), None)


def named(summary: Any, quantity: str) -> Any:
    """A claim summary with the quantity it computes, in words (the report's y axis)."""
    summary.quantity = quantity
    return summary


class Reading:
    """What a claim reads from a run: fills ``point.samples`` (finite per-replica values) and may add
    ``point.stats`` or move ``point.value`` (another abscissa). ``point.trace`` is the run, ``point.inputs``
    what the plan fetched beside it (a stored recursion, the other runs of the grid value)."""

    reads: ClassVar[tuple[str, ...]] = ()  # the claim fields it reads (checked when the claim is made)
    view: ClassVar[Any] = None  # how its points are shown when they are not means of the measure (views)

    def label(self, claim: Any) -> str:
        """What a point's samples are, in words (the report's y axis)."""
        return f"{claim.measure} after the last round"

    def display(self) -> Any:
        """Its view (a wrapper shows the reading it wraps)."""
        return shown(self)

    def __call__(self, claim: Any, point: PointResult) -> None:
        raise NotImplementedError  # pragma: no cover - abstract

    def precheck(self, claim: Any, points: Sequence[PointResult]) -> str:
        """Why no verdict can be given from what was read (empty when one can), checked before the
        claim's shared prechecks (too few replicas, violated conditions)."""
        return ""


@dataclass(frozen=True)
class Summary(Reading):
    """The claim's ``summary(config, trace)`` per replica, else its ``measure`` after the last round."""

    def label(self, claim: Any) -> str:
        if claim.summary is None:
            return f"{claim.measure} after the last round"
        # a summary is the claim's own quantity: its declared name, the summary's (``named``), else its function's
        name = getattr(claim.summary, "__name__", "")
        quantity = (getattr(claim, "quantity", "") or getattr(claim.summary, "quantity", "")
                    or ("" if name in ("summary", "<lambda>") else name.replace("_", " ")))
        return quantity or f"per-replica summary of {claim.measure}"

    def __call__(self, claim: Any, point: PointResult) -> None:
        assert point.trace is not None  # a reading reads a run
        samples = claim.summary(ran(point.config, point.trace), point.trace) if claim.summary else point.trace.at_end(claim.measure)
        point.samples = samples[np.isfinite(samples)]


class Estimator:
    """A statistic: what the grid points say, as the estimate a rule judges."""

    reads: ClassVar[tuple[str, ...]] = ()  # the claim fields it reads (checked when the claim is made)
    view: ClassVar[Any] = None  # its plot layer, caption and columns (ratecheck.claims.views); None: the means

    def display(self) -> Any:
        return shown(self)

    def __call__(self, claim: Any, points: Sequence[PointResult]) -> Any:
        raise NotImplementedError  # pragma: no cover - abstract


@dataclass(frozen=True)
class Points(Estimator):
    """No summary beyond the points themselves (a rule that reads each point's samples and stats)."""

    def __call__(self, claim: Any, points: Sequence[PointResult]) -> Sequence[PointResult]:
        return points


class Rule:
    """How an estimate decides: ``rule(claim, points, estimate) -> (verdict, reason, evidence)``."""

    reads: ClassVar[tuple[str, ...]] = ()  # the claim fields it reads (checked when the claim is made)
    view: ClassVar[Any] = None  # what it draws the data against, its caption and columns (views); None: nothing

    def display(self) -> Any:
        """The view of what decides (a wrapper shows the rule it wraps unless it has its own view)."""
        return shown(self)

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> Decision:
        raise NotImplementedError  # pragma: no cover - abstract


@dataclass(frozen=True)
class Undecided(Rule):
    """The base claim's rule: a kind names its own."""

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> Decision:
        raise NotImplementedError(f"claim {claim.id} ({type(claim).__name__}) names no rule")


def _pieces(piece: Any) -> list[Any]:
    """A piece and every piece it wraps (a rule's inner rule, ...)."""
    inner = [getattr(piece, f.name) for f in dataclasses.fields(piece)] if dataclasses.is_dataclass(piece) else []
    return [piece] + [q for p in inner if isinstance(p, (Plan, Reading, Estimator, Rule)) for q in _pieces(p)]


def unread_fields(claim: Any) -> list[str]:
    """The fields a claim's pieces read that the claim does not have ('RelativeBand reads rel_tolerance'):
    a rule put on a kind it does not fit is refused when the claim is made, not when it decides."""
    reading = claim._reading() if hasattr(claim, "_reading") else None
    pieces = [q for p in (getattr(claim, "plan", None), reading, claim.statistic, claim.rule) if p is not None
              for q in _pieces(p)]
    return [f"{type(p).__name__} reads {name}" for p in pieces for name in p.reads if not hasattr(claim, name)]


def piece_text(piece: Any) -> str:
    """A piece by name, with the pieces it wraps: 'ExactOrMonteCarlo(ExponentInBand)'."""
    inner = [piece_text(getattr(piece, f.name)) for f in dataclasses.fields(piece)
             if isinstance(getattr(piece, f.name), (Plan, Reading, Estimator, Rule))] if dataclasses.is_dataclass(piece) else []
    return type(piece).__name__ + (f"({', '.join(inner)})" if inner else "")


def pieces_of(claim: Any) -> dict[str, str]:
    """What a claim decides with (``ratecheck describe``): its reading, statistic, rule and gates."""
    out = {"plan": piece_text(claim.plan), "reading": piece_text(claim._reading()), "statistic": piece_text(claim.statistic),
           "rule": piece_text(claim.rule)}
    if claim.gates:
        out["gates"] = ", ".join(getattr(g, "__name__", None) or piece_text(g) for g in claim.gates)
    return out
