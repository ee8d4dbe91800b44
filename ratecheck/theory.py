"""Symbolic encoding of a convergence theorem: conditions, bound versions, step-size schedule.

A ``Theorem`` holds sympy expressions over named symbols (assumption constants and run parameters).
It answers two kinds of questions:

* numeric: ``evaluate(values)`` computes the schedule, each condition (lhs, rhs, margin, holds) and
  each bound version at concrete values; it is called many times in sweeps, so every expression is
  compiled once with ``lambdify`` and cached;
* asymptotic: ``leading_term`` and ``order`` give the dominant term of a bound and the exponent of its
  dependence on one variable (its elasticity ``var * d/dvar log(bound)`` in the limit).

Its pieces live in ratecheck.statements (Source, Condition, Bound, Evaluation) and
ratecheck.asymptotics (elasticity, exponent, Derived, derive_complexity); they are importable from
here, where papers and plugins import them.

Symbols are matched by *name* against the theorem's declared symbols: sympy treats ``Symbol("n")``
and ``Symbol("n", positive=True)`` as different symbols, a silent source of wrong substitutions, so
construction rejects such mixtures and lookups by string always resolve to the declared symbol.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import sympy as sp

from .assumptions import Assumption, classed
from .asymptotics import (
    Derived,
    OrderDerivation,
    SymbolLike,
    derive_complexity,
    derive_order,
    elasticity,
    exponent,
    leading_term,
)
from .derivations import cached_derivation
from .statements import (
    Bound,
    Condition,
    ConditionResult,
    Evaluation,
    Source,
    _call,
    _compile,
    _condition_result,
    at_least,
    at_most,
)

__all__ = [
    "Bound",
    "cached_derivation",
    "Condition",
    "ConditionResult",
    "Derived",
    "Evaluation",
    "Source",
    "Theorem",
    "at_least",
    "at_most",
    "derive_complexity",
    "elasticity",
    "exponent",
    "OrderDerivation",
]


# ---------------------------------------------------------------------------------------------
# The theorem


@dataclass(frozen=True)
class Theorem:
    """A convergence theorem: symbols, conditions, bound versions and prescribed schedule."""

    id: str
    title: str
    source: Source
    measure: str
    constants: tuple[sp.Symbol, ...]
    parameters: tuple[sp.Symbol, ...]
    conditions: tuple[Condition, ...]
    bounds: tuple[Bound, ...]
    schedule: Mapping[sp.Symbol, sp.Expr] = field(default_factory=dict)
    assumptions: tuple[str, ...] = ()  # the paper's wording, for the report
    # what a problem family must certify (ratecheck.assumptions): the binder fills these constants
    requires: tuple[Assumption, ...] = ()

    def __post_init__(self) -> None:
        for name in ("constants", "parameters", "conditions", "bounds", "assumptions", "requires"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "requires", classed(self.requires, f"theorem {self.id}: requires"))
        declared: dict[str, sp.Symbol] = {}
        for sym in (*self.constants, *self.parameters):
            if not isinstance(sym, sp.Symbol):
                raise ValueError(f"theorem {self.id}: {sym!r} in constants/parameters is not a Symbol")
            if sym.name in declared:
                raise ValueError(f"theorem {self.id}: symbol {sym.name!r} declared twice")
            declared[sym.name] = sym

        def check(expr: sp.Basic, where: str) -> None:
            for s in sorted(expr.free_symbols, key=lambda s: s.name):
                if s.name not in declared:
                    raise ValueError(
                        f"theorem {self.id}: symbol {s.name!r} in {where} is in neither constants "
                        f"nor parameters"
                    )
                if declared[s.name] != s:
                    raise ValueError(
                        f"theorem {self.id}: symbol {s.name!r} in {where} has assumptions "
                        f"{s.assumptions0} but is declared with {declared[s.name].assumptions0}"
                    )

        names = [c.name for c in self.conditions]
        if len(set(names)) != len(names):
            raise ValueError(f"theorem {self.id}: duplicate condition names {names}")
        versions = [b.version for b in self.bounds]
        if len(set(versions)) != len(versions):
            raise ValueError(f"theorem {self.id}: duplicate bound versions {versions}")
        if not self.bounds:
            raise ValueError(f"theorem {self.id}: no bounds")
        for cond in self.conditions:
            check(cond.relation, f"condition {cond.name!r}")
        for b in self.bounds:
            check(b.expr, f"bound {b.version!r}")

        params = {p.name: p for p in self.parameters}
        schedule: dict[sp.Symbol, sp.Expr] = {}
        for key, value in dict(self.schedule).items():
            kname = key if isinstance(key, str) else getattr(key, "name", None)
            if kname not in params:
                raise ValueError(f"theorem {self.id}: schedule key {key!s} is not a parameter")
            if not isinstance(key, str) and key != params[kname]:
                check(key, "schedule keys")
            expr = sp.sympify(value)
            check(expr, f"schedule of {kname!r}")
            schedule[params[kname]] = expr
        # read-only view: the theorem is frozen, its schedule should be too
        object.__setattr__(self, "schedule", types.MappingProxyType(schedule))
        _ = self._resolved_schedule  # detect cycles at construction

    def __hash__(self) -> int:
        # the generated hash would fail on the schedule mapping
        return hash((self.id, self.bounds, self.conditions, tuple(self.schedule.items())))

    # -- lookups ------------------------------------------------------------------------------

    @cached_property
    def symbols(self) -> dict[str, sp.Symbol]:
        """Declared symbols by name (constants then parameters)."""
        return {s.name: s for s in (*self.constants, *self.parameters)}

    @property
    def versions(self) -> tuple[str, ...]:
        return tuple(b.version for b in self.bounds)

    def symbol(self, var: SymbolLike) -> sp.Symbol:
        """The declared symbol with this name (ValueError if unknown)."""
        name = var if isinstance(var, str) else var.name
        try:
            return self.symbols[name]
        except KeyError:
            raise ValueError(
                f"theorem {self.id}: unknown symbol {name!r}; known: {', '.join(self.symbols)}"
            ) from None

    def bound(self, version: str) -> Bound:
        """The bound of this version (ValueError listing the known versions if unknown)."""
        for b in self.bounds:
            if b.version == version:
                return b
        raise ValueError(
            f"theorem {self.id}: unknown bound version {version!r}; known: {', '.join(self.versions)}"
        )

    def condition(self, name: str) -> Condition:
        for c in self.conditions:
            if c.name == name:
                return c
        known = ", ".join(c.name for c in self.conditions)
        raise ValueError(f"theorem {self.id}: unknown condition {name!r}; known: {known}")

    def cap(self, name: str, values: Mapping[SymbolLike, float]) -> float:
        """The right side of condition ``name`` (lhs <= rhs) at these values: the step-size cap a search
        or a claim draws its steps under, read off the condition so that a fix to it reaches the runs."""
        rhs = self.condition(name).rhs
        base = self._base_values(values, use_schedule=False)
        compiled = _compile(rhs)
        self._require(frozenset(compiled[1]), base, f"needed by the right side of {name!r}")
        with np.errstate(all="ignore"):
            return _call(compiled, base)

    @cached_property
    def _resolved_schedule(self) -> dict[sp.Symbol, sp.Expr]:
        """Schedule expressions with scheduled symbols substituted away (a schedule may refer to
        another scheduled symbol, e.g. a local step defined from a global one)."""
        resolved = dict(self.schedule)
        for _ in range(len(resolved) + 1):
            if not any(e.free_symbols & resolved.keys() for e in resolved.values()):
                return resolved
            resolved = {k: e.xreplace(resolved) for k, e in resolved.items()}
        cyclic = sorted(k.name for k, e in resolved.items() if e.free_symbols & resolved.keys())
        raise ValueError(f"theorem {self.id}: cyclic schedule among {cyclic}")

    def _expr(self, expr: sp.Expr, use_schedule: bool) -> sp.Expr:
        return expr.xreplace(self._resolved_schedule) if use_schedule else expr

    # -- numeric ------------------------------------------------------------------------------

    def _base_values(self, values: Mapping[SymbolLike, float], use_schedule: bool) -> dict[str, np.float64]:
        """Values by name as numpy scalars; names not declared by the theorem are ignored, so a
        caller may pass a whole run configuration."""
        out: dict[str, np.float64] = {}
        for key, value in values.items():
            name = key if isinstance(key, str) else key.name
            if name not in self.symbols:
                continue
            try:
                out[name] = np.float64(float(value))
            except (TypeError, ValueError):
                raise ValueError(f"theorem {self.id}: value of {name!r} is not a number: {value!r}") from None
        if use_schedule:
            given = sorted(k.name for k in self.schedule if k.name in out)
            if given:
                raise ValueError(
                    f"theorem {self.id}: {', '.join(given)} prescribed by the schedule; do not pass "
                    f"a value for it, or pass use_schedule=False to set it explicitly"
                )
        return out

    @cached_property
    def _numeric(self) -> dict[str, Any]:
        """Compiled functions and needed symbol names, built once: evaluate() runs in sweeps and
        walking sympy trees (free_symbols) on every call would dominate its cost."""
        sched = self._resolved_schedule

        def names(exprs: list[sp.Basic]) -> frozenset[str]:
            return frozenset(s.name for e in exprs for s in e.free_symbols)

        return {
            "schedule": [(k.name, _compile(e)) for k, e in sched.items()],
            "conditions": [(c, _compile(c.lhs), _compile(c.rhs)) for c in self.conditions],
            "bounds": [(b.version, _compile(b.expr)) for b in self.bounds],
            "need_schedule": names(list(sched.values())),
            "need_rest": names([c.relation for c in self.conditions] + [b.expr for b in self.bounds]),
        }

    def _require(self, needed: frozenset[str], have: Mapping[str, Any], what: str) -> None:
        missing = sorted(needed.difference(have))
        if missing:
            raise ValueError(f"theorem {self.id}: missing value(s) for {', '.join(missing)} ({what})")

    def _schedule_numbers(self, base: Mapping[str, np.float64]) -> dict[str, np.float64]:
        num = self._numeric
        self._require(num["need_schedule"], base, "needed by the schedule")
        return {name: np.float64(_call(fn, base)) for name, fn in num["schedule"]}

    def schedule_values(self, values: Mapping[SymbolLike, float]) -> dict[str, float]:
        """The prescribed schedule (step sizes, ...) at these values of the other symbols."""
        base = self._base_values(values, use_schedule=True)
        with np.errstate(all="ignore"):
            return {k: float(v) for k, v in self._schedule_numbers(base).items()}

    def evaluate(self, values: Mapping[SymbolLike, float], *, use_schedule: bool = True) -> Evaluation:
        """Conditions and every bound version at these values (schedule applied first if asked)."""
        num = self._numeric
        base = self._base_values(values, use_schedule)
        # numpy scalars give inf/nan (not exceptions) on division by zero or sqrt of a negative
        with np.errstate(all="ignore"):
            sched = self._schedule_numbers(base) if use_schedule else {}
            full = {**base, **sched}
            self._require(num["need_rest"], full, "needed by conditions and bounds" + (
                "" if use_schedule else "; use_schedule=False, so scheduled symbols must be given"))
            results = tuple(
                _condition_result(c, _call(lhs, full), _call(rhs, full))
                for c, lhs, rhs in num["conditions"]
            )
            bounds = {version: _call(fn, full) for version, fn in num["bounds"]}
        return Evaluation(
            conditions=results,
            bounds=bounds,
            schedule={k: float(v) for k, v in sched.items()},
            values={k: float(v) for k, v in sorted(full.items())},
        )

    # -- asymptotic ---------------------------------------------------------------------------

    def _var(self, var: SymbolLike, use_schedule: bool) -> sp.Symbol:
        sym = self.symbol(var)
        if use_schedule and sym in self.schedule:
            # after substitution the symbol is gone and its order would read as a meaningless 0
            raise ValueError(
                f"theorem {self.id}: {sym.name} is prescribed by the schedule; pass "
                f"use_schedule=False to study the dependence on it"
            )
        return sym

    def bound_expr(self, version: str, *, use_schedule: bool = True) -> sp.Expr:
        """The bound of this version, with the schedule substituted if asked."""
        return self._expr(self.bound(version).expr, use_schedule)

    def leading_term(self, version: str, var: SymbolLike, *, use_schedule: bool = True) -> sp.Expr:
        """The term of the (expanded) bound with the largest elasticity in ``var`` as var -> oo;
        tied terms are added."""
        sym = self._var(var, use_schedule)
        return leading_term(self.bound_expr(version, use_schedule=use_schedule), sym)

    def order(
        self,
        var: SymbolLike,
        *,
        version: str,
        dominant_in: SymbolLike | None = None,
        use_schedule: bool = True,
        at: str = "oo",
        fixed: Mapping[SymbolLike, Any] | None = None,
    ) -> sp.Expr:
        """Exponent of the bound's dependence on ``var`` (its elasticity as var -> ``at``).

        With ``dominant_in``, only the leading term as ``dominant_in -> oo`` is kept first: e.g.
        the n-dependence of the rate in T, not of a lower-order term that wins as n -> oo. With
        ``fixed`` (e.g. ``{"H": 1}``: one local step), those symbols are set first (see
        ``derive_order``; ``order_derivation`` gives the steps).
        """
        if dominant_in is None and not fixed:
            return elasticity(self.bound_expr(version, use_schedule=use_schedule), self._var(var, use_schedule), at)
        return self.order_derivation(var, version=version, dominant_in=dominant_in, use_schedule=use_schedule,
                                     at=at, fixed=fixed).value

    def order_derivation(self, var: SymbolLike, *, version: str, dominant_in: SymbolLike | None = None,
                         use_schedule: bool = True, at: str = "oo",
                         fixed: Mapping[SymbolLike, Any] | None = None) -> OrderDerivation:
        """The order of ``order`` with its derivation in words (``print`` it): the bound, the fixed
        symbols set, the leading term kept, the limit taken."""
        sym = self._var(var, use_schedule)
        lead = self._var(dominant_in, use_schedule) if dominant_in is not None else None
        given = {}
        for key, value in dict(fixed or {}).items():
            held = self.symbol(key)
            if held == sym:
                raise ValueError(f"theorem {self.id}: {held.name} is the variable of the order; it cannot be fixed")
            given[held] = sp.sympify(value, locals=self.symbols) if isinstance(value, str) else sp.sympify(value)
        where = f"{self.id} bound '{version}'" + (" (schedule applied)" if use_schedule and self.schedule else "")
        return derive_order(self.bound_expr(version, use_schedule=use_schedule), sym, fixed=given,
                            dominant_in=lead, at=at, what=where)
