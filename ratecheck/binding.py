"""The one binder from runs to theorem symbols (issue #20 item 4): the constants a run's family
certifies (ratecheck.assumptions), declared reads of the run, and a paper's derived quantities::

    bindings = Binder(THEOREM_1, THEOREM_2, reads={"n": participating, "K": local_steps, "T": rounds,
                                                   "eta": param("eta_global")})
    bindings(config, trace)  # {"L": ..., "sigma": ..., "n": 8.0, ...}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .assumptions import Assumption, certified, declared_by, missing
from .inspection import RunView, view
from .trace import RunConfig, Trace

if TYPE_CHECKING:
    from .theory import Theorem

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
    """Rounds: communications. A theorem whose T counts local steps reads ``local_iterations``."""
    return float(run.rounds)


def local_iterations(run: RunView, trace: Trace | None) -> float:
    """Rounds x local steps: the T of a theorem that counts every local step (local SGD papers often
    do), where ratecheck's rounds count communications."""
    return float(run.rounds * run.local_steps)


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
