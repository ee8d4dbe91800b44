"""Closed-form problem families, one module each, and the registry that builds them by name."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ratecheck.problem import Problem

from . import quadratic
from . import quadratic_bilevel
from . import minimax
from . import least_squares

# family name -> factory taking JSON-able keyword parameters
FAMILIES: dict[str, Callable[..., Problem]] = {
    "quadratic": quadratic.make,
    "quadratic_bilevel": quadratic_bilevel.make,
    "minimax": minimax.make,
    "least_squares": least_squares.make,
    "least_squares_interpolation": least_squares.interpolation,
}


def make_problem(name: str, params: Mapping[str, Any] | None = None) -> Problem:
    """Build a registered problem; the error lists the known families and the factory's parameters."""
    if name not in FAMILIES:
        raise ValueError(f"unknown problem family {name!r}; known: {sorted(FAMILIES)}")
    try:
        return FAMILIES[name](**dict(params or {}))
    except TypeError as exc:  # an unknown keyword: name the accepted ones
        import inspect

        accepted = list(inspect.signature(FAMILIES[name]).parameters)
        raise ValueError(f"problem {name!r}: {exc}; accepted parameters: {accepted}") from None
