"""The example's own tests: its claims through ratecheck.check, and a broken server step caught."""

from dataclasses import dataclass

import pytest
from fedavg_momentum.algorithm import FedAvgM
from fedavg_momentum.paper import FLOOR_IN_BETA, SPEEDUP_IN_N

from ratecheck import check
from ratecheck.algorithms import base


def test_claims_hold():
    check(FLOOR_IN_BETA, SPEEDUP_IN_N)


@dataclass(frozen=True)
class DampedMomentum(FedAvgM):
    """A plausible bug: the EMA form v = beta v + (1 - beta) Delta, which shrinks the step by 1 - beta."""

    def server_step(self, x, direction, server, t):
        velocity = self.beta * server + (1 - self.beta) * direction
        return x - self.eta_global * velocity, velocity


def test_a_wrong_momentum_update_fails_the_floor(monkeypatch):
    monkeypatch.setitem(base.REGISTRY, "fedavgm", DampedMomentum)
    with pytest.raises(AssertionError, match="expected PASS, measured FAIL"):
        check(FLOOR_IN_BETA)
