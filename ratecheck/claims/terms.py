"""Which term of a bound decides it at each grid point (issue #22 item 5): each additive term's share of
the bound at the run's own values, a column and a ``check -v`` line naming the dominant term, and the
masked-term gate: a bound claim whose term under test is a small share of the bound at every grid point
tests the other terms only, so its PASS says nothing about that term and becomes INCONCLUSIVE.

    claim = with_gates(BoundClaim(...), MaskedTerm(r"\\frac{\\sigma^{2}}{M^{2}}", share=0.1))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from ..statements import _call, _compile
from .model import PointResult, Verdict, _fmt
from .views import Column

__all__ = ["MaskedTerm", "dominant_term_column", "term_shares", "terms_text"]


def _label(term: sp.Expr, width: int = 40) -> str:
    text = sp.sstr(term)
    return text if len(text) <= width else text[: width - 3] + "..."


def term_shares(bound: sp.Expr, values: Mapping[str, float]) -> dict[str, float]:
    """Each additive term of ``bound`` (as written, not expanded) as a share of the bound at ``values``
    (every symbol's value by name, e.g. ``Evaluation.values``); a bound of one term is {term: 1}."""
    terms = sp.Add.make_args(bound)
    numbers = {name: np.float64(v) for name, v in values.items()}
    with np.errstate(all="ignore"):
        parts = [_call(_compile(t), numbers) if t.free_symbols else float(t) for t in terms]
    total = sum(parts)
    return {_label(t): (part / total if total else float("nan")) for t, part in zip(terms, parts)}


def _bound_of(claim: Any) -> sp.Expr | None:
    version = getattr(claim, "version", None)
    theorem = getattr(claim, "theorem", None)
    return theorem.bound(version).expr if theorem is not None and isinstance(version, str) else None


def _dominant(shares: Mapping[str, float]) -> tuple[str, float]:
    return max(shares.items(), key=lambda item: item[1] if np.isfinite(item[1]) else -np.inf)


def dominant_term_column(claim: Any) -> list[Column]:
    """The report's column for a bound of several terms: which term dominates at each point, with its share."""
    bound = _bound_of(claim)
    if bound is None or len(sp.Add.make_args(bound)) < 2:
        return []

    def cell(p: PointResult) -> str | None:
        if p.evaluation is None:
            return None
        term, share = _dominant(term_shares(bound, p.evaluation.values))
        return f"{term} ({share:.0%})"

    return [Column(f"dominant term of '{claim.version}' (share)", cell)]


def terms_text(outcome: Any) -> str:
    """``check -v``: the dominant term of a bound claim's bound at each grid point ("" for other claims)."""
    bound, claim = _bound_of(outcome.claim), outcome.claim
    if bound is None or len(sp.Add.make_args(bound)) < 2:
        return ""
    where: dict[str, list[str]] = {}  # each dominant term with the points it dominates (and its share there)
    for p in sorted(outcome.points, key=lambda p: p.value):
        if p.evaluation is not None:
            term, share = _dominant(term_shares(bound, p.evaluation.values))
            where.setdefault(term, []).append(f"{_fmt(p.value)} ({share:.0%})")
    cells = [f"{term} at {claim.vary}={', '.join(points)}" for term, points in where.items()]
    return f"; dominant term of bound '{claim.version}': " + "; ".join(cells) if cells else ""


@dataclass(frozen=True)
class MaskedTerm:
    """A gate for a bound claim: the term under test (a sympy expression over the theorem's symbols, or
    its LaTeX) must reach ``share`` of the bound at some grid point, else a PASS is INCONCLUSIVE ("the
    term under test is masked by <the dominant term>"): a wrong 1/M^2 term hidden under a loose
    optimization term passes at every M and tests nothing. A FAIL stands (the whole bound is exceeded).
    The shares at every point are in the evidence ("terms")."""

    term: sp.Expr | str
    share: float = 0.1
    _parsed: dict[Any, sp.Expr] = field(default_factory=dict, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not 0 < self.share < 1:
            raise ValueError(f"MaskedTerm share must be in (0, 1), got {self.share!r}")

    def expression(self, theorem: Any) -> sp.Expr:
        """The term under test over the theorem's declared symbols (LaTeX parsed once)."""
        if theorem not in self._parsed:
            if isinstance(self.term, str):
                from ..model.latex import expression  # start-up time: the LaTeX grammar loads only for a LaTeX term

                term = expression(self.term, theorem.symbols, "term under test")
            else:
                term = sp.sympify(self.term)
                unknown = sorted(s.name for s in term.free_symbols if theorem.symbols.get(s.name) != s)
                if unknown:
                    raise ValueError(f"term under test {term}: {', '.join(unknown)} not declared by theorem "
                                     f"{theorem.id} (with the same assumptions)")
            self._parsed[theorem] = term
        return self._parsed[theorem]

    def __call__(self, claim: Any, points: Sequence[PointResult], verdict: Verdict, reason: str,
                 evidence: dict[str, Any]) -> tuple[Verdict, str, dict[str, Any]]:
        bound = _bound_of(claim)
        if bound is None:
            raise ValueError(f"claim {claim.id}: MaskedTerm gates a bound claim (a theorem and a bound version)")
        term = self.expression(claim.theorem)
        rows: list[dict[str, Any]] = []
        for p in points:
            if p.evaluation is None:
                continue
            rows.append({"value": p.value, "under_test": _share(term, bound, p.evaluation.values),
                         "shares": term_shares(bound, p.evaluation.values)})
        evidence = {**evidence, "terms": {"under_test": str(term), "min_share": self.share, "rows": rows}}
        if verdict != Verdict.PASS or not rows or any(r["under_test"] >= self.share for r in rows):
            return verdict, reason, evidence
        top = max(rows, key=lambda r: r["under_test"])
        others = {k: v for k, v in top["shares"].items() if k != _label(term)}
        masking = _dominant(others)[0] if others else "the rest of the bound"
        return (Verdict.INCONCLUSIVE,
                f"the term under test {_label(term)} is masked by {masking}: at most {top['under_test']:.2%} of "
                f"bound '{claim.version}' (at {claim.vary}={_fmt(top['value'])}; the rule: at least "
                f"{self.share:.0%} at some point), so the bound's PASS does not test it: {reason}", evidence)


def _share(term: sp.Expr, bound: sp.Expr, values: Mapping[str, float]) -> float:
    numbers = {name: np.float64(v) for name, v in values.items()}
    with np.errstate(all="ignore"):
        top = _call(_compile(term), numbers) if term.free_symbols else float(term)
        return top / _call(_compile(bound), numbers)
