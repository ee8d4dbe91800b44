"""Asymptotics of a theorem's bound: orders (elasticities), exponents derived when first used, and
complexity tables read off a rate; every derivation is kept as a store record (ratecheck.derivations)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import sympy as sp

from .derivations import DERIVATIONS, cached_derivation

__all__ = ["Derived", "OrderDerivation", "derive_complexity", "derive_order", "elasticity", "exponent", "leading_term"]

SymbolLike: TypeAlias = "sp.Symbol | str"


def _limit_point(at: str) -> tuple[Any, str]:
    if at in ("oo", "inf", "+oo"):
        return sp.oo, "-"
    if at in ("0", "0+"):
        return sp.Integer(0), "+"
    raise ValueError(f"at must be 'oo' or '0', got {at!r}")


def elasticity(expr: sp.Expr, var: SymbolLike, at: str = "oo") -> sp.Expr:
    """``lim var * d/dvar log(expr)`` as ``var -> oo`` (or ``0+`` with ``at="0"``).

    For ``expr ~ c * var**p`` this is ``p``: the exponent of the dependence on ``var``.
    A string ``var`` is matched by name among the expression's symbols (absent: 0).
    Numeric results are kept as store records (ratecheck.derivations), like runs.
    """
    expr = sp.sympify(expr)
    if isinstance(var, str):
        matches = [s for s in expr.free_symbols if s.name == var]
        if not matches:
            return sp.Integer(0)
        var = matches[0]
    if var not in expr.free_symbols:
        return sp.Integer(0)
    key = DERIVATIONS.key("elasticity", sp.srepr(expr), sp.srepr(var), at)
    known = _ORDERS.get(key)
    if known is None:
        stored = DERIVATIONS.get(key)
        known = _rational(stored) if stored is not None else None
    if known is None:
        known = _derive_elasticity(expr, var, at)
        if isinstance(known, sp.Rational):  # kept as 'p/q': reading it back never evaluates code
            DERIVATIONS.put(key, str(known), "elasticity")
    _ORDERS[key] = known
    return known


def _rational(text: str) -> sp.Expr | None:
    try:
        return sp.Rational(text)
    except (TypeError, ValueError):
        return None


_ORDERS: dict[str, sp.Expr] = {}  # this process's derived orders, numeric or not


def _derive_elasticity(expr: sp.Expr, var: sp.Symbol, at: str) -> sp.Expr:
    """The derivation behind ``elasticity`` (uncached)."""
    point, direction = _limit_point(at)
    ratio = sp.simplify(var * sp.diff(expr, var) / expr)
    if var not in ratio.free_symbols:
        # a product of powers: the ratio is already the exponent, no limit needed (fast path)
        return ratio
    result = sp.limit(ratio, var, point, dir=direction)
    if result.has(sp.Limit) or isinstance(result, sp.AccumBounds) or result is sp.nan:
        raise ValueError(f"elasticity of {expr} in {var} as {var} -> {at} is undetermined: {result}")
    return sp.simplify(result)


def _is_greater(a: sp.Expr, b: sp.Expr) -> bool:
    """a > b, refusing to guess when sympy cannot decide (symbolic exponents)."""
    rel = sp.Gt(a, b)
    if rel not in (sp.true, sp.false):
        raise ValueError(f"cannot compare elasticities {a} and {b}")
    return bool(rel)


def leading_term(expr: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """The term of the expanded ``expr`` with the largest elasticity in ``var`` as var -> oo; tied terms
    are added."""
    best: list[sp.Expr] = []
    best_e: sp.Expr | None = None
    for term in sp.Add.make_args(sp.powsimp(sp.expand(expr))):
        e = elasticity(term, var, "oo")
        if best_e is None or _is_greater(e, best_e):
            best, best_e = [term], e
        elif not _is_greater(best_e, e):
            best.append(term)
    return sp.Add(*best)


@dataclass(frozen=True)
class OrderDerivation:
    """An exponent derived in context, with its steps in words (``str`` prints them)."""

    var: str
    at: str
    value: sp.Expr
    steps: tuple[str, ...]

    def __float__(self) -> float:
        return float(self.value)

    def __str__(self) -> str:
        return "\n".join(self.steps)


def derive_order(expr: sp.Expr, var: sp.Symbol, *, fixed: Mapping[sp.Symbol, sp.Expr] | None = None,
                 dominant_in: sp.Symbol | None = None, at: str = "oo", what: str = "the bound") -> OrderDerivation:
    """The exponent of ``expr`` in ``var`` in a stated regime: first the ``fixed`` symbols are set (e.g.
    H = 1, or K = T), then only the leading term as ``dominant_in`` -> oo is kept, then the elasticity
    as ``var`` -> ``at`` (every other symbol held fixed). "Linear speedup" is the order in M with one
    local step (fixed={H: 1}) of the term that dominates as T -> oo, not the term that wins as M -> oo."""
    steps = [f"{what}: {expr}"]
    if fixed:
        expr = expr.xreplace(dict(fixed))
        steps.append(f"with {', '.join(f'{k} = {v}' for k, v in fixed.items())}: {expr}")
    if var not in expr.free_symbols:
        steps.append(f"{var} is not in it: order 0")
        return OrderDerivation(str(var), at, sp.Integer(0), tuple(steps))
    if dominant_in is not None:
        expr = leading_term(expr, dominant_in)
        steps.append(f"leading term as {dominant_in} -> oo: {expr}")
    value = elasticity(expr, var, at)
    steps.append(f"order in {var} ({var} d log/d{var} as {var} -> {'0+' if at in ('0', '0+') else 'oo'}, "
                 f"the other symbols fixed): {value}")
    return OrderDerivation(str(var), at, value, tuple(steps))


class Derived:
    """A number derived (with sympy) when first used, not when it is declared: ``float(d)`` calls
    ``derive()`` once and keeps the result. A paper module passes one where a number is expected
    (e.g. ``ExpectedOrder(value=Derived(lambda: exponent(floor, m)), why=...)``) so that importing the
    paper, and so ``ratecheck list``, derives nothing."""

    __slots__ = ("_derive", "_value")

    def __init__(self, derive: Callable[[], Any]) -> None:
        self._derive = derive
        self._value: float | None = None

    def __float__(self) -> float:
        if self._value is None:
            self._value = float(self._derive())
        return self._value

    def __repr__(self) -> str:
        return f"Derived({self._value!r})" if self._value is not None else "Derived(<not yet derived>)"


def exponent(expr: sp.Expr, var: sp.Symbol, *, inverse: bool = False) -> float:
    """Exponent of ``expr`` in ``var`` (its elasticity as var -> oo); in 1/var when ``inverse`` (as var -> 0+)."""
    if inverse:
        return float(-elasticity(expr, var, at="0"))
    return float(elasticity(expr, var, at="oo"))


@cached_derivation
def derive_complexity(
    rate: sp.Expr,
    *,
    eps: sp.Symbol,
    rounds: sp.Symbol,
    local_steps: sp.Symbol,
    samples: sp.Symbol,
    k_is_constant: bool = False,
    before: Mapping[sp.Symbol, sp.Expr] | None = None,
    after: Mapping[sp.Symbol, sp.Expr] | None = None,
) -> tuple[sp.Expr, sp.Expr]:
    """(per-client samples K T, rounds T) that make every term of ``rate`` (a bound on a SQUARED
    measure) at most eps^2: a term in T alone fixes T, a term in K T alone fixes K T (K = samples/T).

    With ``k_is_constant`` (K = O(1), e.g. partial participation) samples and rounds coincide.
    ``before`` is substituted in each term before solving (units, e.g. {l: 1}), ``after`` in the
    results (e.g. {mu: 1/kappa}). A term that mixes K and T is a ValueError. Kept on disk
    (``cached_derivation``): each derivation is a few ``sp.solve`` calls."""
    before, after = dict(before or {}), dict(after or {})
    expr = rate.subs(local_steps, 1) if k_is_constant else rate.subs(local_steps, samples / rounds)
    need_t: list[Any] = []
    need_n: list[Any] = []
    for term in sp.Add.make_args(sp.expand(expr)):
        syms = term.free_symbols
        target = (rounds if (rounds in syms and samples not in syms)
                  else samples if samples in syms and rounds not in syms else None)
        if target is None:
            raise ValueError(f"term {term} mixes K and T: cannot read off a complexity")
        sol = [x for x in sp.solve(sp.Eq(term.subs(before), eps**2), target) if x.is_positive is not False]
        (need_t if target is rounds else need_n).append(sp.simplify(sol[0]))
    total_rounds = sp.Add(*need_t) if need_t else sp.Integer(1)
    total_samples = sp.Add(*need_n) if need_n else total_rounds
    if k_is_constant:
        total_samples = total_rounds

    def finish(value: sp.Expr) -> sp.Expr:
        for old, new in after.items():
            value = value.subs(old, new)
        for old, new in before.items():
            value = value.subs(old, new)
        return sp.simplify(value)

    return finish(total_samples), finish(total_rounds)
