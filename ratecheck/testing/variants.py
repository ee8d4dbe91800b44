"""Broken variants: a claim must flag at least one plausible bug of the algorithm it checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..algorithms.base import Algorithm
from ..runner.checking import ClaimFailure, check


def assert_flags(claim: Any, algorithms: Mapping[str, type[Algorithm[Any]]], **check_options: Any) -> None:
    """``claim`` run with ``algorithms`` in place of the registered classes must not come out as
    expected (``ratecheck.check`` raises ClaimFailure); else AssertionError naming the variants."""
    try:
        check(claim, algorithms=algorithms, **check_options)
    except ClaimFailure:
        return
    names = ", ".join(f"{name} -> {cls.__qualname__}" for name, cls in algorithms.items())
    raise AssertionError(f"claim {getattr(claim, 'id', claim)} does not flag the broken variant(s) {names}")
