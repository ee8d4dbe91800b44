"""Symbolic encoding of a convergence theorem: conditions, bound versions, step-size schedule.

A ``Theorem`` holds sympy expressions over named symbols (assumption constants and run parameters).
It answers two kinds of questions:

* numeric: ``evaluate(values)`` computes the schedule, each condition (lhs, rhs, margin, holds) and
  each bound version at concrete values; it is called many times in sweeps, so every expression is
  compiled once with ``lambdify`` and cached;
* asymptotic: ``leading_term`` and ``order`` give the dominant term of a bound and the exponent of its
  dependence on one variable (its elasticity ``var * d/dvar log(bound)`` in the limit).

Symbols are matched by *name* against the theorem's declared symbols: sympy treats ``Symbol("n")``
and ``Symbol("n", positive=True)`` as different symbols, a silent source of wrong substitutions, so
construction rejects such mixtures and lookups by string always resolve to the declared symbol.
"""

from __future__ import annotations

import functools
import math
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import sympy as sp
from sympy.core.relational import Relational

from .assumptions import Assumption

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
]

SymbolLike: TypeAlias = "sp.Symbol | str"


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
        ``symbols`` are the theorem's declared symbols (matched by name; see ratecheck.latex)."""
        from .latex import relation

        return cls(name, relation(latex, symbols, f"condition {name!r}"), source, note, printed=latex)


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
        ``symbols`` are the theorem's declared symbols (matched by name; see ratecheck.latex)."""
        from .latex import expression

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


# ---------------------------------------------------------------------------------------------
# Asymptotics


def _limit_point(at: str) -> tuple[Any, str]:
    if at in ("oo", "inf", "+oo"):
        return sp.oo, "-"
    if at in ("0", "0+"):
        return sp.Integer(0), "+"
    raise ValueError(f"at must be 'oo' or '0', got {at!r}")


class _OrderCache:
    """Derived orders kept on disk between runs: ``elasticity`` costs sympy limits and simplifies
    (tenths of a second each) and paper modules derive their expected orders at import, so every
    command paid them. The key is a SHA-256 of the expression's ``srepr`` (symbols with their
    assumptions), the variable and the limit point; the value is the order as an exact rational
    ('p/q'), so reading the file never evaluates code. Orders that are not numbers are not kept.

    Location: ``$RATECHECK_SYMPY_CACHE`` (a file path; empty disables it), else
    ``~/.cache/ratecheck/orders-<sympy version>.json``. Writes are atomic and merge with what other
    processes wrote meanwhile.
    """

    def __init__(self) -> None:
        self._data: dict[str, str] | None = None
        self._new: dict[str, str] = {}

    @property
    def path(self) -> Path | None:
        import os

        configured = os.environ.get("RATECHECK_SYMPY_CACHE")
        if configured is not None:
            return Path(configured) if configured else None
        return Path.home() / ".cache" / "ratecheck" / f"orders-{sp.__version__}.json"

    def _load(self) -> dict[str, str]:
        if self._data is None:
            self._data = {}
            path = self.path
            if path is not None:
                try:
                    import json

                    data = json.loads(path.read_text())
                    if isinstance(data, dict):
                        self._data = {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
                except (OSError, ValueError):
                    pass  # absent or damaged: derive again
        return self._data

    @staticmethod
    def key(expr: sp.Expr, var: sp.Symbol, at: str) -> str:
        import hashlib

        return hashlib.sha256(f"{sp.srepr(expr)}|{sp.srepr(var)}|{at}".encode()).hexdigest()

    def get(self, key: str) -> sp.Expr | None:
        text = self._load().get(key)
        if text is None:
            return None
        try:
            return sp.Rational(text)
        except (TypeError, ValueError):
            return None

    def put(self, key: str, value: sp.Expr) -> None:
        if not (isinstance(value, sp.Rational)):
            return
        self._load()[key] = self._new[key] = str(value)
        if len(self._new) == 1:
            import atexit

            atexit.register(self.save)

    def save(self) -> None:
        """Merge the new orders into the file (atomically); errors leave the file as it was."""
        import json
        import os
        import tempfile

        path = self.path
        if path is None or not self._new:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                merged = json.loads(path.read_text())
                merged = merged if isinstance(merged, dict) else {}
            except (OSError, ValueError):
                merged = {}
            merged.update(self._new)
            fd, tmp = tempfile.mkstemp(prefix=".orders.", suffix=".tmp", dir=path.parent)
            with os.fdopen(fd, "w") as fh:
                json.dump(merged, fh, sort_keys=True)
            os.replace(tmp, path)
            self._new = {}
        except OSError:
            pass  # a read-only home: the orders are derived again next time


    def get_text(self, key: str) -> str | None:
        return self._load().get(key)

    def put_text(self, key: str, text: str) -> None:
        self._load()[key] = self._new[key] = text
        if len(self._new) == 1:
            import atexit

            atexit.register(self.save)


ORDER_CACHE = _OrderCache()

# Names a cached expression may be rebuilt from: sympy's atoms and operations, nothing else.
_REBUILD = ("Symbol", "Dummy", "Integer", "Rational", "Float", "Add", "Mul", "Pow", "Tuple", "exp", "log", "sqrt",
            "Max", "Min", "Abs", "sin", "cos", "tanh", "Piecewise", "ExprCondPair", "Eq", "Lt", "Le", "Gt", "Ge",
            "StrictLessThan", "StrictGreaterThan", "LessThan", "GreaterThan", "Equality", "BooleanTrue",
            "BooleanFalse", "floor", "ceiling", "Function")
_REBUILD_ATOMS = ("pi", "E", "oo", "zoo", "nan", "I", "true", "false")


def _rebuild(text: str) -> Any:
    """The sympy object an ``srepr`` string describes, rebuilt WITHOUT eval: only calls of the names
    in _REBUILD on literals are allowed (a cache file can hold only expressions, never code)."""
    import ast

    def build(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = build(node.operand)
            if isinstance(value, (int, float)):
                return -value
        if isinstance(node, ast.Tuple):
            return tuple(build(e) for e in node.elts)
        if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):  # a table of expressions
            return {build(k): build(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]  # no None key (checked above)
        if isinstance(node, ast.Name) and node.id in _REBUILD_ATOMS:
            return getattr(sp, node.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _REBUILD:
            func = getattr(sp, node.func.id)
            return func(*[build(a) for a in node.args], **{k.arg: build(k.value) for k in node.keywords if k.arg})
        raise ValueError(f"not a plain sympy expression: {ast.dump(node)[:80]}")

    return build(ast.parse(text, mode="eval").body)


def cached_derivation(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Keep a symbolic derivation's result on disk (with ``elasticity``'s orders, see _OrderCache).

    For pure functions of sympy expressions and plain values that return an expression, a number,
    or a tuple or dict of them, e.g. a complexity table read off a rate with ``sp.solve``. The key
    holds the function's module, name and source (an edit derives again) and the ``srepr`` of its
    arguments; a result is kept only if it rebuilds exactly (``_rebuild``, no eval), and is
    rebuilt once per process."""
    import hashlib
    import inspect

    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        source = fn.__qualname__

    memo: dict[str, Any] = {}

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            text = repr((fn.__module__, fn.__qualname__, source, [sp.srepr(a) for a in args],
                         sorted((k, sp.srepr(v)) for k, v in kwargs.items())))
        except Exception:  # arguments sympy cannot print: just derive
            return fn(*args, **kwargs)
        key = "derivation:" + hashlib.sha256(text.encode()).hexdigest()
        if key in memo:  # rebuilding a stored table costs sympy's constructors: once per process
            return memo[key]
        memo[key] = result = _derive(key, args, kwargs)
        return result

    def _derive(key: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        stored = ORDER_CACHE.get_text(key)
        if stored is not None:
            try:
                return _rebuild(stored)
            except (ValueError, TypeError, SyntaxError, AttributeError):
                pass  # damaged or foreign: derive again
        result = fn(*args, **kwargs)
        try:
            text = sp.srepr(result)
            if _rebuild(text) == result:
                ORDER_CACHE.put_text(key, text)
        except Exception:  # not rebuildable: keep deriving it
            pass
        return result

    return wrapper


def elasticity(expr: sp.Expr, var: SymbolLike, at: str = "oo") -> sp.Expr:
    """``lim var * d/dvar log(expr)`` as ``var -> oo`` (or ``0+`` with ``at="0"``).

    For ``expr ~ c * var**p`` this is ``p``: the exponent of the dependence on ``var``.
    A string ``var`` is matched by name among the expression's symbols (absent: 0).
    Numeric results are cached in memory and on disk (``_OrderCache``).
    """
    expr = sp.sympify(expr)
    if isinstance(var, str):
        matches = [s for s in expr.free_symbols if s.name == var]
        if not matches:
            return sp.Integer(0)
        var = matches[0]
    if var not in expr.free_symbols:
        return sp.Integer(0)
    key = ORDER_CACHE.key(expr, var, at)
    known = _ORDERS.get(key)
    if known is None:
        known = ORDER_CACHE.get(key)
    if known is None:
        known = _derive_elasticity(expr, var, at)
        ORDER_CACHE.put(key, known)
    _ORDERS[key] = known
    return known


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
        expr = sp.powsimp(sp.expand(self.bound_expr(version, use_schedule=use_schedule)))
        best: list[sp.Expr] = []
        best_e: sp.Expr | None = None
        for term in sp.Add.make_args(expr):
            e = elasticity(term, sym, "oo")
            if best_e is None or _is_greater(e, best_e):
                best, best_e = [term], e
            elif not _is_greater(best_e, e):
                best.append(term)
        return sp.Add(*best)

    def order(
        self,
        var: SymbolLike,
        *,
        version: str,
        dominant_in: SymbolLike | None = None,
        use_schedule: bool = True,
        at: str = "oo",
    ) -> sp.Expr:
        """Exponent of the bound's dependence on ``var`` (its elasticity as var -> ``at``).

        With ``dominant_in``, only the leading term as ``dominant_in -> oo`` is kept first: e.g.
        the n-dependence of the rate in T, not of a lower-order term that wins as n -> oo.
        """
        sym = self._var(var, use_schedule)
        if dominant_in is None:
            expr = self.bound_expr(version, use_schedule=use_schedule)
        else:
            expr = self.leading_term(version, dominant_in, use_schedule=use_schedule)
        return elasticity(expr, sym, at)
