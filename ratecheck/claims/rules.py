"""Rules and gates shared by claim kinds: sides of a band, the one-sided ceiling, a regime gate, the
exact-or-Monte-Carlo tolerance record."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import sympy as sp

from .model import PointResult, Verdict, _fmt
from .statistics import point_ci

SIDES = ("two-sided", "at_most", "at_least")


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
            assert p.evaluation is not None  # the regime term is read at each point's theorem constants
            values = p.evaluation.values
            size = float(evaluate(*(values[s.name] for s in symbols)))
            measured = float(np.mean(p.samples))
            if size > fraction * measured:
                bad.append(f"{label} = {size:.3g} > {fraction:g} x measured {measured:.3g} at {_fmt(p.value)}")
        return "; ".join(bad)

    return check


def _tolerance_evidence(evidence: Mapping[str, Any], name: str, value: float, why: str) -> dict[str, Any]:
    return {**evidence, "tolerance_used": {"name": name, "value": value, "why": why}}


_NO_MC_BAND = "Monte-Carlo points, and this claim states a band for exact runs only (ratecheck.exact refused a run)"


def exact_or_monte_carlo(claim: Any, points: Sequence[PointResult], decide: Callable[..., Any], field: str,
                         exact_value: float, exact_why: str, mc_value: float | None, mc_why: str) -> Any:
    """The exact-or-Monte-Carlo tolerance gate: ``decide(claim, points)`` with the tolerance ``field`` at
    ``exact_value`` on exact points, at ``mc_value`` on Monte-Carlo ones (INCONCLUSIVE when none is stated),
    the evidence saying which was used and why."""
    if points and all(p.exact for p in points):
        verdict, reason, evidence = decide(claim, points)
        return verdict, reason, _tolerance_evidence(evidence, "exact", exact_value, exact_why)
    if mc_value is None:
        return Verdict.INCONCLUSIVE, _NO_MC_BAND, {}
    verdict, reason, evidence = decide(dataclasses.replace(claim, **{field: mc_value}), points)
    return verdict, reason, _tolerance_evidence(evidence, "monte_carlo", mc_value, mc_why)
