"""A claim's decision from small pure pieces (the optax idea, issue #20 item 1).

A claim decides in three steps, each a piece it names in a field:

* ``reading`` (what to read from each run): fills a grid point's per-replica ``samples`` (and its
  ``stats``, and its ``value`` when the abscissa is not the grid value) from its trace: the measure after
  the last round or the claim's ``summary`` (``Summary``), hitting times, distances to a target, log-rates;
* ``statistic`` (what the data say): an estimate from the points: one- or two-sided CIs of the replica
  means, a bootstrap slope, a slope difference, ...;
* ``rule`` (how the estimate decides): ``rule(claim, points, estimate) -> (verdict, reason, evidence)``: a
  one-sided ceiling, a band around a prediction, an interval, an exponent band, ...

so that a claim's decision is ``rule(statistic(points))``, then its ``gates`` in turn (``with_gates``).
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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .model import PointResult, Verdict

Decision = tuple[Verdict, str, dict[str, Any]]


class Reading:
    """What a claim reads from a run: fills ``point.samples`` (finite per-replica values) and may add
    ``point.stats`` or move ``point.value`` (another abscissa). ``point.trace`` is the run."""

    reads: ClassVar[tuple[str, ...]] = ()  # the claim fields it reads (checked when the claim is made)

    def __call__(self, claim: Any, point: PointResult) -> None:
        raise NotImplementedError  # pragma: no cover - abstract

    def precheck(self, claim: Any, points: Sequence[PointResult]) -> str:
        """Why no verdict can be given from what was read (empty when one can), checked before the
        claim's shared prechecks (too few replicas, violated conditions)."""
        return ""


@dataclass(frozen=True)
class Summary(Reading):
    """The claim's ``summary(config, trace)`` per replica, else its ``measure`` after the last round."""

    def __call__(self, claim: Any, point: PointResult) -> None:
        assert point.trace is not None  # a reading reads a run
        samples = claim.summary(point.config, point.trace) if claim.summary else point.trace.at_end(claim.measure)
        point.samples = samples[np.isfinite(samples)]


class Estimator:
    """A statistic: what the grid points say, as the estimate a rule judges."""

    reads: ClassVar[tuple[str, ...]] = ()  # the claim fields it reads (checked when the claim is made)

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
    return [piece] + [q for p in inner if isinstance(p, (Reading, Estimator, Rule)) for q in _pieces(p)]


def unread_fields(claim: Any) -> list[str]:
    """The fields a claim's pieces read that the claim does not have ('RelativeBand reads rel_tolerance'):
    a rule put on a kind it does not fit is refused when the claim is made, not when it decides."""
    reading = claim._reading() if hasattr(claim, "_reading") else None
    pieces = [q for p in (reading, claim.statistic, claim.rule) if p is not None for q in _pieces(p)]
    return [f"{type(p).__name__} reads {name}" for p in pieces for name in p.reads if not hasattr(claim, name)]


def piece_text(piece: Any) -> str:
    """A piece by name, with the pieces it wraps: 'ExactOrMonteCarlo(ExponentInBand)'."""
    inner = [piece_text(getattr(piece, f.name)) for f in dataclasses.fields(piece)
             if isinstance(getattr(piece, f.name), (Reading, Estimator, Rule))] if dataclasses.is_dataclass(piece) else []
    return type(piece).__name__ + (f"({', '.join(inner)})" if inner else "")


def pieces_of(claim: Any) -> dict[str, str]:
    """What a claim decides with (``ratecheck describe``): its reading, statistic, rule and gates."""
    out = {"reading": piece_text(claim._reading()), "statistic": piece_text(claim.statistic),
           "rule": piece_text(claim.rule)}
    if claim.gates:
        out["gates"] = ", ".join(getattr(g, "__name__", None) or piece_text(g) for g in claim.gates)
    return out
