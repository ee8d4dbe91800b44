"""The example's own tests: its claims through ratecheck.check, a broken server step caught, and the
conformance kit (ratecheck.testing) every algorithm passes."""

from dataclasses import dataclass

from fedavg_momentum.algorithm import FedAvgM
from fedavg_momentum.paper import FLOOR_IN_BETA, SPEEDUP_IN_N

from ratecheck import check, testing
from ratecheck.algorithms.base import swapped

MINE = {"fedavgm": FedAvgM}  # as the entry point registers it (explicit, so a source checkout runs too)


def test_claims_hold():
    check(FLOOR_IN_BETA, SPEEDUP_IN_N, algorithms=MINE)


@dataclass(frozen=True)
class DampedMomentum(FedAvgM):
    """A plausible bug: the EMA form v = beta v + (1 - beta) Delta, which shrinks the step by 1 - beta."""

    def server_step(self, x, direction, server, t):
        velocity = self.beta * server + (1 - self.beta) * direction
        return x - self.eta_global * velocity, velocity


def test_a_wrong_momentum_update_fails_the_floor():
    testing.assert_flags(FLOOR_IN_BETA, algorithms={"fedavgm": DampedMomentum})


def test_fedavgm_conforms():
    algorithm, problem = FedAvgM(beta=0.5), testing.small_problem("quadratic")
    testing.conforms(algorithm, problem)
    assert testing.exact_matches_monte_carlo(algorithm, problem)  # the server momentum is one array: exact


def test_fedavgm_declared_parameters_fuzzed():
    with swapped(MINE):
        testing.fuzz_algorithm("fedavgm")
