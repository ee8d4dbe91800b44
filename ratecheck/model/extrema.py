"""A min or max inside an expression, read as the alternatives it chooses among: ``c + Min(a, b)`` is the
minimum of ``c + a`` and ``c + b``. A condition ``x <= Min(a, b)`` is then the conditions ``x <= a`` and
``x <= b`` (ratecheck.statements.Condition.implied), each decided and named on its own."""

from __future__ import annotations

import itertools
from typing import Literal

import sympy as sp

__all__ = ["alternatives"]

Kind = Literal["min", "max"]
_FLIP: dict[str, Kind] = {"min": "max", "max": "min"}


def alternatives(expr: sp.Expr, kind: Kind) -> list[sp.Expr]:
    """Expressions whose minimum (``kind="min"``) or maximum is ``expr``: a ``Min`` (``Max``) is split into
    its arguments through sums, factors that are positive by the symbols' assumptions, negation and
    powers of positive bases (a negative power or a negative factor turns a max into a min). An
    expression with no such extremum, or one whose sign sympy cannot tell, is its only alternative."""
    head = sp.Min if kind == "min" else sp.Max
    if isinstance(expr, head):
        return _unique(alt for arg in expr.args for alt in alternatives(arg, kind))
    if isinstance(expr, sp.Add):
        return _combine(expr, [alternatives(arg, kind) for arg in expr.args], sp.Add)
    if isinstance(expr, sp.Mul):
        coefficient, factors = expr.as_coeff_mul()
        if coefficient.is_negative:
            return [coefficient * alt for alt in alternatives(sp.Mul(*factors), _FLIP[kind])]
        options = [alternatives(f, kind) for f in factors]
        if any(len(o) > 1 for o in options) and not all(a.is_positive for o in options for a in o):
            return [expr]  # min(a, b) * c with c of unknown sign: keep it whole
        return _combine(expr, [[coefficient], *options], sp.Mul)
    if isinstance(expr, sp.Pow) and expr.exp.is_number and expr.exp.is_real and expr.exp != 0:
        bases = alternatives(expr.base, kind if expr.exp.is_positive else _FLIP[kind])
        if len(bases) > 1 and all(b.is_positive for b in bases):
            return [b ** expr.exp for b in bases]
    return [expr]


def _combine(expr: sp.Expr, options: list[list[sp.Expr]], join: type) -> list[sp.Expr]:
    if all(len(o) == 1 for o in options):
        return [expr]
    return _unique(join(*choice) for choice in itertools.product(*options))


def _unique(items) -> list[sp.Expr]:
    out: list[sp.Expr] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out
