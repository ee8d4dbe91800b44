"""Closed-form problem families, one module each, registered by entry point (group
``ratecheck.problems`` in pyproject.toml) like anyone's; ``make_problem`` builds one by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ratecheck.params import Param, inferred_declarations
from ratecheck.problem import Problem
from ratecheck.registry import (
    default,
    make_problem,  # noqa: F401  (validated through each family's declaration)
)


def __getattr__(name: str) -> Any:
    if name == "FAMILIES":  # family name -> factory, every registered family (ratecheck.registry)
        return _families()
    raise AttributeError(name)


def _families() -> dict[str, Callable[..., Problem]]:
    return {item.name: item.obj for item in default().items("problem")}


def declarations_of(name: str) -> dict[str, Param | None]:
    """The parameters of a family as declared (or inferred from its annotations), for listings."""
    return inferred_declarations(_families()[name])
