"""The declared diagnostics of a run: what ``Trace.info`` may hold, each with its type and meaning.

The engine records a few keys of its own (``ENGINE``); an algorithm declares what its ``info(state)``
returns in ``Algorithm.diagnostics`` (inherited by subclasses). ``check`` runs when the engine makes a
Trace, so a claim that reads ``trace.info["lambda_used"]`` reads a declared, typed value, and a
misspelt or undeclared key fails at the run that recorded it, naming the algorithm and the key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

Number = (int, float, np.integer, np.floating)


@dataclass(frozen=True)
class Diagnostic:
    """One key of ``Trace.info``: its name, the types its value may have, and what it means."""

    name: str
    types: tuple[type, ...]
    meaning: str

    @classmethod
    def number(cls, name: str, meaning: str) -> Diagnostic:
        return cls(name, Number, meaning)

    @classmethod
    def record(cls, name: str, meaning: str) -> Diagnostic:
        """A JSON-able mapping (e.g. a timeline summary)."""
        return cls(name, (dict,), meaning)


ENGINE: tuple[Diagnostic, ...] = (
    Diagnostic.number("wall_seconds", "wall-clock seconds the run took (never part of a verdict)"),
    Diagnostic("algorithm_source", (str,), "paper file and algorithm number of the algorithm run"),
    Diagnostic.record("problem_spec", "registry name and parameters of the problem"),
    Diagnostic("exact_fallback", (str,), "why an 'auto' run fell back to Monte Carlo"),
    Diagnostic("exact", (bool,), "the run propagated exact expectations (ratecheck.exact)"),
    Diagnostic.record("exact_omitted", "measures exact mode has no expectation for, with the reason"),
    Diagnostic("exact_how", (str,), "how the exact expectations were obtained"),
)


class DiagnosticsError(ValueError):
    """A Trace's info holds a key its algorithm does not declare, or a value of the wrong type."""


def declared(algorithm: Any) -> dict[str, Diagnostic]:
    """Every key a Trace of ``algorithm`` (an instance or class) may hold: the engine's and its own."""
    own: Iterable[Diagnostic] = getattr(algorithm, "diagnostics", ())
    return {d.name: d for d in (*ENGINE, *own)}


def check(algorithm: Any, info: Mapping[str, Any]) -> None:
    """Refuse info keys ``algorithm`` does not declare and values of another type (NaN is allowed
    for a number: exact runs do not track monitors of the iterates)."""
    table = declared(algorithm)
    name = getattr(algorithm, "name", type(algorithm).__name__)
    for key, value in info.items():
        spec = table.get(key)
        if spec is None:
            raise DiagnosticsError(
                f"algorithm {name!r} recorded info[{key!r}] but does not declare it: add "
                f"Diagnostic({key!r}, ...) to its `diagnostics` (declared: {', '.join(sorted(table))})")
        if not isinstance(value, spec.types):
            kinds = " or ".join(t.__name__ for t in spec.types)
            raise DiagnosticsError(f"algorithm {name!r} recorded info[{key!r}] = {value!r}: the declaration "
                                   f"says {kinds} ({spec.meaning})")
