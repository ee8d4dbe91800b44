"""Assumptions as classes (PEPit's function classes): what a family certifies, what a theorem needs,
and one binder that connects them.

A family declares the assumptions it certifies (``Problem.assumptions``), each naming the constants
of ``constants()`` that quantify it: smooth (L), strongly convex (mu), PL, bounded variance (sigma),
heterogeneity (zeta, nu), the initial gap and ||x0 - x*||^2, ... An instance certifies those whose
constants it computes (a PL constant exists only on a PL kind). A theorem declares what it needs
(``Theorem.requires``). ``Binder`` fills a theorem's symbols at a run: the constants from the
certified assumptions, the run's parameters from declared reads (``param``, ``participating``, ...),
and a paper's derived quantities from one named function; a needed assumption the family does not
certify is an error that names it (or NaN, for theorems whose conditions say so, e.g. FESS-GDA's
PL flags).

Example (DeFedAvg, proofs/defedavg/claims.py)::

    bindings = Binder(THEOREM_1, THEOREM_2, reads={"n": participating, "K": local_steps, "T": rounds,
                                                   "lam": lambda_used, "eta": param("eta_global"),
                                                   "etabar": param("eta_local")})
    bindings(config, trace)  # {"L": ..., "sigma": ..., ..., "n": 8.0, "lam": 3.0, ...}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .inspection import RunView
    from .theory import Theorem
    from .trace import RunConfig, Trace


@dataclass(frozen=True)
class Assumption:
    """A class of problems (smooth, strongly convex, ...) and the constants that quantify it."""

    kind: str
    constants: tuple[str, ...]
    text: str = ""

    def __str__(self) -> str:
        return self.text or f"{self.kind} ({', '.join(self.constants)})"

    def covers(self, other: Assumption) -> bool:
        """This (certified) assumption is of the kind ``other`` needs and quantifies its constants."""
        return self.kind == other.kind and set(other.constants) <= set(self.constants)


def _maker(kind: str, meaning: str) -> Callable[..., Assumption]:
    def make(*constants: str, text: str = "") -> Assumption:
        return Assumption(kind, tuple(constants), text or f"{meaning} ({', '.join(constants)})")

    make.__name__ = kind.replace(" ", "_")
    make.__doc__ = f"The '{kind}' assumption: {meaning}, quantified by the named constants."
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
    for a in declared:
        present = tuple(c for c in a.constants if c in have)
        if present:
            out.append(Assumption(a.kind, present, a.text))
    return tuple(out)


def missing(needed: Iterable[Assumption], have: Iterable[Assumption]) -> list[Assumption]:
    """The needed assumptions nothing in ``have`` covers."""
    have = tuple(have)
    return [a for a in needed if not any(h.covers(a) for h in have)]


def declared_by(problem: Any) -> tuple[Assumption, ...]:
    """What a problem (instance or class) declares it can certify."""
    return tuple(getattr(problem, "assumptions", ()))


def satisfies(problem_assumptions: Iterable[Assumption], theorem: Theorem) -> bool:
    return not missing(getattr(theorem, "requires", ()), problem_assumptions)


def family_assumptions(registry: Any) -> dict[str, tuple[Assumption, ...]]:
    """What each registered family declares it can certify (read off an instance built with its
    defaults; a family that cannot be built so declares nothing here)."""
    out: dict[str, tuple[Assumption, ...]] = {}
    for item in registry.items("problem"):
        try:
            out[item.name] = declared_by(item.obj())
        except Exception:  # a factory without defaults: listed, certifying nothing we can see
            out[item.name] = ()
    return out


def admissible_families(theorem: Theorem, families: Mapping[str, Iterable[Assumption]]) -> list[str]:
    """The families whose declared assumptions cover everything ``theorem`` requires."""
    return [name for name, have in families.items() if satisfies(have, theorem)]


class BindingError(ValueError):
    """A theorem needs an assumption the run's family does not certify."""


# -- reads: run-side symbols -----------------------------------------------------------------------
Read = Callable[["RunView", "Trace | None"], float]


def param(name: str) -> Read:
    """An algorithm hyper-parameter as a float."""
    def read(run: RunView, trace: Trace | None) -> float:
        return float(run.config.params[name])

    return read


def participating(run: RunView, trace: Trace | None) -> float:
    """Clients per round (n, P, S, m)."""
    return float(run.participating)


def num_clients(run: RunView, trace: Trace | None) -> float:
    return float(run.num_clients)


def local_steps(run: RunView, trace: Trace | None) -> float:
    return float(run.local_steps)


def rounds(run: RunView, trace: Trace | None) -> float:
    return float(run.rounds)


@dataclass(frozen=True)
class Binder:
    """Fills theorems' symbols at a run (``binder(config, trace=None) -> {symbol: value}``).

    Constants come from the assumptions the run's family certifies (every certified constant, so a
    binder serves the paper's other readers too); a needed assumption that is not certified raises
    ``BindingError`` naming it, or with ``uncertified="nan"`` binds its constants as NaN (for theorems
    whose conditions test a flag). ``reads`` give the run's symbols; ``derived(run, trace, values)``
    adds a paper's derived quantities (implicit constants of its proof) and sees what is bound."""

    theorems: tuple[Theorem, ...]
    reads: Mapping[str, Read] = field(default_factory=dict)
    derived: Callable[[RunView, Trace | None, dict[str, float]], Mapping[str, float]] | None = None
    uncertified: str = "error"

    def __init__(self, *theorems: Theorem, reads: Mapping[str, Read] | None = None,
                 derived: Callable[[RunView, Trace | None, dict[str, float]], Mapping[str, float]] | None = None,
                 uncertified: str = "error") -> None:
        if uncertified not in ("error", "nan"):
            raise ValueError(f"uncertified must be 'error' or 'nan', got {uncertified!r}")
        object.__setattr__(self, "theorems", tuple(theorems))
        object.__setattr__(self, "reads", dict(reads or {}))
        object.__setattr__(self, "derived", derived)
        object.__setattr__(self, "uncertified", uncertified)

    @property
    def requires(self) -> tuple[Assumption, ...]:
        seen: dict[Assumption, None] = {}
        for t in self.theorems:
            seen.update(dict.fromkeys(getattr(t, "requires", ())))
        return tuple(seen)

    def __call__(self, config: RunConfig, trace: Trace | None = None) -> dict[str, float]:
        from .inspection import view  # inspection builds problems through the registry

        run = view(config)
        return self.bind(run, trace)

    def bind(self, run: RunView, trace: Trace | None = None) -> dict[str, float]:
        have = certified(declared_by(run.problem), run.constants)
        values: dict[str, float] = {}
        for a in missing(self.requires, have):
            if self.uncertified == "error":
                raise BindingError(f"{', '.join(t.id for t in self.theorems)} needs '{a}', which problem family "
                                   f"{run.config.problem!r} does not certify (it certifies: "
                                   f"{'; '.join(str(h) for h in have) or 'nothing'})")
            values.update(dict.fromkeys(a.constants, math.nan))
        for a in have:
            values.update({name: run.constants[name] for name in a.constants})
        values.update({name: read(run, trace) for name, read in self.reads.items()})
        if self.derived is not None:
            values.update(self.derived(run, trace, values))
        return values

    def certifies(self, run: RunView, assumption: Assumption) -> bool:
        """The run's family certifies ``assumption`` (for flags such as FESS-GDA's PL_y)."""
        return not missing((assumption,), certified(declared_by(run.problem), run.constants))
