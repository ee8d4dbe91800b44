"""The algorithm contract (base.py) and the shared client machinery (local.py).

Algorithm families live in their own modules (fedavg.py, bilevel.py, bilevel_baselines.py,
minimax.py) and are registered by entry point like anyone's (group ``ratecheck.algorithms`` in
pyproject.toml); importing this package imports none of them, so the engine depends only on the
contract. A name resolves to an algorithm through ratecheck.registry.make_algorithm (the registry
sits above this package: it imports the contract).
"""

from __future__ import annotations

from .base import REGISTRY, Algorithm, register

__all__ = ["REGISTRY", "Algorithm", "register"]
