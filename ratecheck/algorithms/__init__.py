"""The algorithm contract (base.py) and the shared client machinery (local.py).

Algorithm families live in their own modules (fedavg.py, bilevel.py, bilevel_baselines.py,
minimax.py) and are registered by entry point like anyone's (group ``ratecheck.algorithms`` in
pyproject.toml); importing this package imports none of them, so the engine depends only on the
contract. ``make_algorithm`` resolves a name through ratecheck.registry.
"""

from .base import REGISTRY, Algorithm, make_algorithm, register

__all__ = ["REGISTRY", "Algorithm", "make_algorithm", "register"]
