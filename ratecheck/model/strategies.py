"""The hypothesis helpers a problem family's ``strategy()`` draws its instances with (ratecheck hunt).

A module of its own, importing only hypothesis: a family that imports it does not pull the hunt
machinery (claims, theory, the run store) into its runs' code identity."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def finite_floats(low: float, high: float) -> Any:
    """Finite floats in [low, high]: how a family's ``strategy()`` draws its real parameters."""
    from hypothesis import strategies as st

    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)


def fixed_draws(fixed: Mapping[str, Any]) -> dict[str, Any]:
    """A family ``strategy(**fixed)``'s overrides: a value is drawn as itself, a strategy replaces the default."""
    from hypothesis import strategies as st

    return {name: value if isinstance(value, st.SearchStrategy) else st.just(value) for name, value in fixed.items()}
