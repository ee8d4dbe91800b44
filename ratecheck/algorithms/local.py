"""Local client work shared by every algorithm family: one place for the local SGD loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..oracles import SmoothFederatedOracles
from ..seeding import ReplicaStream


def local_sgd(
    problem: SmoothFederatedOracles,
    batch: Any,
    start: np.ndarray,
    steps: int,
    lr: float,
    noise: ReplicaStream,
    oracle: Callable[[Any, np.ndarray, ReplicaStream], np.ndarray] | None = None,
) -> np.ndarray:
    """K steps of x <- x - lr * g(x; xi) from `start` (R, m, d), fresh noise at every step.

    `batch` is what ``problem.gather`` returned for the active clients, gathered once per round.
    `oracle(batch, x, noise)` replaces ``problem.stochastic_grad`` (e.g. a composite h + eta f oracle);
    it must return a fresh array (it is scaled in place).
    """
    grad = problem.stochastic_grad if oracle is None else oracle
    x = start.copy()
    for _ in range(steps):
        step = grad(batch, x, noise)
        step *= lr  # in place: this loop is the engine's hot path
        x -= step
    return x
