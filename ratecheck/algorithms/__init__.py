"""The algorithm contract (base.py) and the shared client machinery (local.py).

Algorithm families live in their own modules (fedavg.py, bilevel.py, bilevel_baselines.py,
minimax.py) and are registered by entry point like anyone's (group ``ratecheck.algorithms`` in
pyproject.toml); importing this package imports none of them, so the engine depends only on the
contract. ``make_algorithm`` resolves a name through ratecheck.registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import REGISTRY, Algorithm, register

__all__ = ["REGISTRY", "Algorithm", "make_algorithm", "register"]


def make_algorithm(name: str, params: Mapping[str, Any] | None = None) -> Algorithm:
    """The algorithm registered under ``name`` (see ratecheck.registry), built from parameters."""
    # here, not in base.py: the registry imports the contract (base.py), and must not be imported by it
    from ..registry import make_algorithm as build

    return build(name, params)
