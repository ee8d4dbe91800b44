"""A theorem's pieces and their evaluation at numbers: where a statement comes from (Source), its
conditions and bound versions (sympy, or pasted LaTeX), and the compiled evaluation of them."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp
from sympy.core.relational import Relational

from .model.extrema import alternatives
from .model.latex import expression, relation

__all__ = ["Bound", "Condition", "ConditionResult", "Evaluation", "Source", "at_least", "at_most"]


# ---------------------------------------------------------------------------------------------
# Provenance and pieces of a theorem


@dataclass(frozen=True)
class Source:
    """Where a statement comes from: the paper (seed file) and the place in it."""

    paper: str
    where: str
    note: str = ""

    @classmethod
    def of(cls, paper: str) -> Callable[..., Source]:
        """A paper module's citation helper: ``src = Source.of(SEED)``; ``src("Theorem 2, eq. (14)")``."""
        return functools.partial(cls, paper)

    def __str__(self) -> str:
        text = f"{self.paper}, {self.where}"
        return f"{text} ({self.note})" if self.note else text


@dataclass(frozen=True)
class Condition:
    """A side condition of the theorem, ``lhs <= rhs`` or ``lhs < rhs``.

    ``>=`` and ``>`` relations are accepted and flipped, so ``lhs``/``rhs`` below always name the
    side that must be the smaller one.
    """

    name: str
    relation: Relational
    source: Source
    note: str = ""
    printed: str = ""  # the LaTeX as the paper prints it (shown beside the encoded form), if copied

    def __post_init__(self) -> None:
        rel = self.relation
        if not isinstance(rel, Relational):
            # sympy decides trivial relations at construction (e.g. 1 <= 2 -> true): then the
            # condition carries no information and is almost certainly a typo
            raise ValueError(
                f"condition {self.name!r}: expected a sympy relation (<=, <, >=, >), got {rel!r}"
            )
        if rel.rel_op not in ("<=", "<", ">=", ">"):
            raise ValueError(
                f"condition {self.name!r}: relation {rel.rel_op!r} is not an inequality"
            )
        if not rel.free_symbols:  # at_most(1, 2) is left undecided: the same typo as above
            raise ValueError(f"condition {self.name!r}: {rel} has no symbol, it decides nothing")

    @property
    def strict(self) -> bool:
        """True for ``<`` (and ``>``)."""
        return self.relation.rel_op in ("<", ">")

    @property
    def lhs(self) -> sp.Expr:
        """The side that must be smaller."""
        rel = self.relation
        return rel.lhs if rel.rel_op in ("<=", "<") else rel.rhs

    @property
    def rhs(self) -> sp.Expr:
        """The side that must be larger."""
        rel = self.relation
        return rel.rhs if rel.rel_op in ("<=", "<") else rel.lhs

    @property
    def free_symbols(self) -> set[sp.Symbol]:
        return set(self.relation.free_symbols)

    @classmethod
    def from_latex(cls, name: str, latex: str, source: Source, symbols: Any, note: str = "") -> Condition:
        """The condition pasted from the paper, e.g. ``r"\\bar{\\eta} \\le \\frac{1}{4 \\sqrt{3} L K}"``;
        ``symbols`` are the theorem's declared symbols (matched by name; see ratecheck.model.latex)."""

        return cls(name, relation(latex, symbols, f"condition {name!r}"), source, note, printed=latex)

    @classmethod
    def implied_from_latex(cls, name: str, latex: str, source: Source, symbols: Any, note: str = "",
                           names: tuple[str, ...] | None = None) -> tuple[Condition, ...]:
        """The conditions a pasted condition implies, one per cap of its ``\\min`` (or floor of its
        ``\\max``): ``\\eta \\le \\min\\{\\frac{1}{4L}, \\frac{1}{K\\mu}\\}`` is
        ``\\eta <= 1/(4L)`` and ``\\eta <= 1/(K mu)``, so a violated one is named. See ``implied``."""
        return cls.from_latex(name, latex, source, symbols, note).implied(names)

    def implied(self, names: tuple[str, ...] | None = None) -> tuple[Condition, ...]:
        """The conditions this one is the conjunction of: ``lhs <= Min(a, b)`` is ``lhs <= a`` and
        ``lhs <= b``; ``Max(a, b) <= rhs`` is ``a <= rhs`` and ``b <= rhs``, also through sums, positive
        factors and powers (``c / Max(a, b)`` is ``Min(c / a, c / b)``). Each is named ``names[k]`` or
        ``"<name> (k)"`` (from 1), with this condition's source and printed LaTeX. A min on the larger
        side of a ``Max`` (a disjunction) is kept whole."""

        pairs = [(low, high) for low in alternatives(self.lhs, "max") for high in alternatives(self.rhs, "min")]
        if len(pairs) == 1:
            return (self,) if names is None else (dataclasses.replace(self, name=_one(names, self.name, pairs)),)
        if names is not None and len(names) != len(pairs):
            shown = "; ".join(f"{low} <= {high}" for low, high in pairs)
            raise ValueError(f"condition {self.name!r}: {len(names)} names for the {len(pairs)} conditions it "
                             f"implies ({shown})")
        relate = sp.Lt if self.strict else sp.Le
        labels = names or tuple(f"{self.name} ({k})" for k in range(1, len(pairs) + 1))
        note = f"implied by {self.name!r}" + (f"; {self.note}" if self.note else "")
        return tuple(Condition(label, relate(low, high, evaluate=False), self.source, note, self.printed)
                     for label, (low, high) in zip(labels, pairs))


def _one(names: tuple[str, ...], name: str, pairs: list[Any]) -> str:
    if len(names) != 1:
        raise ValueError(f"condition {name!r}: {len(names)} names for the 1 condition it implies")
    return names[0]


def at_most(lhs: Any, rhs: Any) -> Relational:
    """``lhs <= rhs`` as a condition's relation, left for evaluation at numbers: written ``lhs <= rhs``,
    sympy first tries to decide the inequality from the symbols' assumptions, which costs tenths of a
    second per paper at import for large step-size caps and never succeeds for a real condition."""
    return sp.Le(lhs, rhs, evaluate=False)


def at_least(lhs: Any, rhs: Any) -> Relational:
    """``lhs >= rhs``, undecided like ``at_most``."""
    return sp.Ge(lhs, rhs, evaluate=False)


@dataclass(frozen=True)
class Bound:
    """One version of the theorem's bound (as stated, as in the appendix, corrected, ...)."""

    version: str
    expr: sp.Expr
    source: Source
    note: str = ""
    printed: str = ""  # the LaTeX as the paper prints it (shown beside the encoded form), if copied

    def __post_init__(self) -> None:
        # accept plain numbers too; downstream code relies on a sympy Expr
        object.__setattr__(self, "expr", sp.sympify(self.expr))

    @classmethod
    def from_latex(cls, version: str, latex: str, source: Source, symbols: Any, note: str = "") -> Bound:
        """The bound pasted from the paper, e.g. ``r"\\sqrt{\\frac{128 \\Delta}{n K T}} + \\frac{8 L}{K T}"``;
        ``symbols`` are the theorem's declared symbols (matched by name; see ratecheck.model.latex)."""

        return cls(version, expression(latex, symbols, f"bound {version!r}"), source, note, printed=latex)


# ---------------------------------------------------------------------------------------------
# Numeric evaluation


@dataclass(frozen=True)
class ConditionResult:
    """A condition evaluated at concrete values. ``margin = lhs / rhs``: holds iff margin <= 1."""

    name: str
    lhs: float
    rhs: float
    margin: float
    holds: bool
    source: str
    strict: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "lhs": _json_float(self.lhs),
            "rhs": _json_float(self.rhs),
            "margin": _json_float(self.margin),
            "holds": bool(self.holds),
            "source": self.source,
            "strict": bool(self.strict),
        }


@dataclass(frozen=True)
class Evaluation:
    """The theorem evaluated at concrete values."""

    conditions: tuple[ConditionResult, ...]
    bounds: dict[str, float]
    schedule: dict[str, float]
    values: dict[str, float] = field(default_factory=dict)  # every symbol's value used

    @property
    def all_hold(self) -> bool:
        return all(c.holds for c in self.conditions)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; non-finite floats become the strings "inf", "-inf", "nan"
        (``float()`` reads them back) so the output is strict JSON."""
        return {
            "conditions": [c.to_dict() for c in self.conditions],
            "all_hold": self.all_hold,
            "bounds": {k: _json_float(v) for k, v in self.bounds.items()},
            "schedule": {k: _json_float(v) for k, v in self.schedule.items()},
            "values": {k: _json_float(v) for k, v in self.values.items()},
        }


def _json_float(x: float) -> float | str:
    x = float(x)
    return x if math.isfinite(x) else str(x)


@functools.lru_cache(maxsize=4096)
def _compile(expr: sp.Expr) -> tuple[Callable[..., Any], tuple[str, ...]]:
    """lambdify ``expr`` once; returns the function and the names of its positional arguments."""
    args = tuple(sorted(expr.free_symbols, key=lambda s: s.name))
    return sp.lambdify(args, expr, modules="numpy"), tuple(s.name for s in args)


def _call(compiled: tuple[Callable[..., Any], tuple[str, ...]], values: Mapping[str, np.float64]) -> float:
    """Call a compiled expression on values by name (inside np.errstate, see evaluate)."""
    fn, names = compiled
    out = fn(*[values[name] for name in names])
    if np.iscomplexobj(out):
        # a genuinely complex value has no meaning as a bound or condition side
        return float(np.real(out)) if np.imag(out) == 0 else math.nan
    return float(out)


def _condition_result(cond: Condition, lhs: float, rhs: float) -> ConditionResult:
    holds = bool(lhs < rhs) if cond.strict else bool(lhs <= rhs)
    if math.isnan(lhs) or math.isnan(rhs):
        margin = math.nan
    elif rhs > 0:
        margin = lhs / rhs
    else:
        # a ratio with a non-positive denominator is meaningless: report inf, decide directly
        margin = math.inf
    return ConditionResult(cond.name, lhs, rhs, margin, holds, str(cond.source), cond.strict)
