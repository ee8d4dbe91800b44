"""Local client work shared by every algorithm family: one place for the local SGD loop."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..problem import SmoothFederatedProblem
from ..seeding import ReplicaStream


def local_sgd(
    problem: SmoothFederatedProblem,
    batch: Any,
    start: np.ndarray,
    steps: int,
    lr: float,
    noise: ReplicaStream,
) -> np.ndarray:
    """K steps of x <- x - lr * g(x; xi) from `start` (R, m, d), fresh noise at every step.

    `batch` is what ``problem.gather`` returned for the active clients, gathered once per round.
    """
    x = start.copy()
    for _ in range(steps):
        step = problem.stochastic_grad(batch, x, noise)
        step *= lr  # in place: this loop is the engine's hot path
        x -= step
    return x
