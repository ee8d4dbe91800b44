"""StR-FedAvg: the paper's key and the schedule a run's configuration implies, shared by the claim groups."""

from __future__ import annotations

from ratecheck.inspection import algorithm_of, problem_of
from ratecheck.trace import RunConfig

KEY = "strfedavg"


def schedule_of(config: RunConfig) -> dict[str, float]:
    """gamma_l, eta, gamma_tilde, theta of a StR-FedAvg run (the algorithm's own computation)."""
    return algorithm_of(config).parameters(problem_of(config))
