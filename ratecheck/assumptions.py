"""Assumptions as classes (PEPit's function classes): what a family certifies, what a theorem needs,
and one binder that connects them.

An assumption is of a problem class (``ProblemClass``: a federated objective, a bilevel problem, a
minimax problem, a selection problem): "L-smooth" of a federated F and of a bilevel pair (f, g) are
different classes, whatever their constants are called, so a family certifies, and a theorem needs,
assumptions of its class. The makers below (``smooth("L")``, ...) build an assumption of no class yet;
a declaration names its class, ``FEDERATED.assume(smooth("L"), ...)`` (or ``BILEVEL``, ``MINIMAX``,
``SELECTION``; one assumption: ``smooth("L", of=FEDERATED)``). There is no default: a bilevel family
that forgot ``BILEVEL.assume`` would otherwise pass for a federated one, so a family (at class
definition), a theorem (when built) and the matching below refuse an assumption without a class with
an ``AssumptionError`` naming it. A family is admissible for a theorem when, for every assumption the
theorem needs, it certifies one of the same class and kind quantified by the constants the theorem's
symbols name.

A family declares the assumptions it certifies (``Problem.assumptions``), each naming the constants
of ``constants()`` that quantify it: smooth (L), strongly convex (mu), PL, bounded variance (sigma),
heterogeneity (zeta, nu), the initial gap and ||x0 - x*||^2, ... An instance certifies those whose
constants it computes (a PL constant exists only on a PL kind). A theorem declares what it needs
(``Theorem.requires``). ``ratecheck.binding.Binder`` fills a theorem's symbols at a run: the constants from the
certified assumptions, the run's parameters from declared reads (``param``, ``participating``, ...),
and a paper's derived quantities from one named function; a needed assumption the family does not
certify is an error that names it (or NaN, for theorems whose conditions say so, e.g. FESS-GDA's
PL flags).

This module is a leaf (the problem and theory layers import it); the binder lives in
ratecheck.binding, above the run inspection it reads. Example (DeFedAvg, proofs/defedavg/claims.py)::

    THEOREM_1 = Theorem(..., requires=FEDERATED.assume(smooth("L"), bounded_variance("sigma"), ...))
    bindings = Binder(THEOREM_1, THEOREM_2, reads={"n": participating, "K": local_steps, "T": rounds,
                                                   "lam": lambda_used, "eta": param("eta_global"),
                                                   "etabar": param("eta_local")})
    bindings(config, trace)  # {"L": ..., "sigma": ..., ..., "n": 8.0, "lam": 3.0, ...}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ProblemClass:
    """What an assumption is about: the problem's form (its objective(s) and where the clients enter)."""

    name: str
    form: str

    def assume(self, *assumptions: Assumption) -> tuple[Assumption, ...]:
        """The assumptions, as assumptions of this class."""
        return tuple(dataclasses.replace(a, of=self) for a in assumptions)

    def __str__(self) -> str:
        return self.name


FEDERATED = ProblemClass("federated", "min_x F(x) = (1/N) sum_i F_i(x)")
BILEVEL = ProblemClass("bilevel", "min_x Phi(x) = f(x, y*(x)), y*(x) = argmin_y g(x, y), f and g federated")
MINIMAX = ProblemClass("minimax", "min_x max_y f(x, y) = (1/M) sum_m f_m(x, y)")
SELECTION = ProblemClass("selection", "min_x f(x) over x in argmin h, f and h federated (simple bilevel)")


@dataclass(frozen=True)
class Assumption:
    """An assumption of a problem class (smooth, strongly convex, ... of a federated, bilevel, ... problem)
    and the constants that quantify it."""

    kind: str
    constants: tuple[str, ...]
    text: str = ""
    of: ProblemClass | None = None  # None: no class yet, not a declaration (see the module docstring)

    def __str__(self) -> str:
        text = self.text or f"{self.kind} ({', '.join(self.constants)})"
        return f"{text} [{self.of or 'no problem class'}]"

    def covers(self, other: Assumption) -> bool:
        """This (certified) assumption is of the class and kind ``other`` needs and quantifies its constants."""
        classed((self, other), "covers")
        return self.of == other.of and self.kind == other.kind and set(other.constants) <= set(self.constants)


class AssumptionError(ValueError):
    """An assumption declared without its problem class (or something that is not an Assumption)."""


CLASSES = (FEDERATED, BILEVEL, MINIMAX, SELECTION)


def classed(assumptions: Iterable[Any], where: str) -> tuple[Assumption, ...]:
    """``assumptions`` as a tuple, each an Assumption of a problem class; AssumptionError naming each one
    that is not, and the rule, otherwise (``where``: the declaration, e.g. "theorem defedavg.theorem1")."""
    out = tuple(assumptions)
    for a in out:
        if not isinstance(a, Assumption):
            raise AssumptionError(f"{where}: {a!r} is not an Assumption (build one with ratecheck.assumptions' "
                                  "makers: smooth(...), bounded_variance(...), ...)")
    loose = [a for a in out if a.of is None]
    if loose:
        names = "; ".join(f"'{a.kind} ({', '.join(a.constants)})'" for a in loose)
        classes = ", ".join(f"{c.name.upper()}.assume(...)" for c in CLASSES)
        raise AssumptionError(
            f"{where}: no problem class for {names}. An assumption is of a problem class, and there is no "
            f"default: declare it through its class ({classes}, or the maker's of=...), since 'L-smooth' "
            f"of a federated objective never covers 'L-smooth' of a bilevel or minimax problem")
    return out


def _maker(kind: str, meaning: str) -> Callable[..., Assumption]:
    def make(*constants: str, text: str = "", of: ProblemClass | None = None) -> Assumption:
        return Assumption(kind, tuple(constants), text or f"{meaning} ({', '.join(constants)})", of)

    make.__name__ = kind.replace(" ", "_")
    make.__doc__ = (f"The '{kind}' assumption: {meaning}, quantified by the named constants; of no problem "
                    "class until declared through one (``FEDERATED.assume(...)``, ..., or ``of=``).")
    return make


smooth = _maker("smooth", "Lipschitz gradients (and Jacobians, Hessians where named)")
strongly_convex = _maker("strongly convex", "strong convexity (and the condition number)")
pl = _maker("PL", "Polyak-Lojasiewicz inequality")
two_sided_pl = _maker("two-sided PL", "PL in x and in y")
sharpness = _maker("sharpness", "error bound / weak sharpness of the inner loss")
bounded_variance = _maker("bounded variance", "unbiased stochastic oracles with bounded variance")
heterogeneity = _maker("heterogeneity", "bounded dissimilarity of the clients")
bounded_gradient = _maker("bounded gradient", "bounded gradients on the region")
bounded_domain = _maker("bounded domain", "a bounded constraint set or region")
initial_gap = _maker("initial gap", "the initial optimality gap and optimal values")
initial_distance = _maker("initial distance", "distances of the start to the solution, ||x0 - x*||^2")
structure = _maker("structure", "sizes and exact constants of the construction")
other = _maker("other", "a paper-specific assumption")

# every family exposes ||x0 - x*||^2 under this name (issue #20 item 4)
DIST0 = "dist0_sq"


def certified(declared: Iterable[Assumption], constants: Iterable[str]) -> tuple[Assumption, ...]:
    """The assumptions an instance certifies: each declared one with the constants it computes
    (none: not certified)."""
    have = set(constants)
    out = []
    for a in classed(declared, "certified assumptions"):
        present = tuple(c for c in a.constants if c in have)
        if present:
            out.append(Assumption(a.kind, present, a.text, a.of))
    return tuple(out)


def missing(needed: Iterable[Assumption], have: Iterable[Assumption]) -> list[Assumption]:
    """The needed assumptions nothing in ``have`` covers."""
    have = classed(have, "certified assumptions")
    return [a for a in classed(needed, "needed assumptions") if not any(h.covers(a) for h in have)]


def declared_by(problem: Any) -> tuple[Assumption, ...]:
    """What a problem (instance or class) declares it can certify."""
    return tuple(getattr(problem, "assumptions", ()))


def satisfies(problem_assumptions: Iterable[Assumption], theorem: Any) -> bool:
    return not missing(getattr(theorem, "requires", ()), problem_assumptions)


def family_assumptions(registry: Any) -> dict[str, tuple[Assumption, ...]]:
    """What each registered family declares it can certify: read off the class its factory declares it
    returns (no instance built: least_squares_interpolation's default takes seconds), else off an
    instance built with its defaults; a family that cannot be built so declares nothing here."""
    import typing

    out: dict[str, tuple[Assumption, ...]] = {}
    for item in registry.items("problem"):
        try:
            returned = typing.get_type_hints(item.obj).get("return")
        except Exception:  # an unresolvable annotation: build one instead
            returned = None
        if isinstance(returned, type) and "assumptions" in dir(returned):
            out[item.name] = declared_by(returned)
            continue
        try:
            out[item.name] = declared_by(item.obj())
        except Exception:  # a factory without defaults: listed, certifying nothing we can see
            out[item.name] = ()
    return out


def admissible_families(theorem: Any, families: Mapping[str, Iterable[Assumption]]) -> list[str]:
    """The families whose declared assumptions cover everything ``theorem`` requires."""
    return [name for name, have in families.items() if satisfies(have, theorem)]
