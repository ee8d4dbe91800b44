"""The timing model behind DeFedAvg's wall-clock claims, against the event simulator and by hand."""

import math

import numpy as np
import pytest

from ratecheck.claims import PROFILES
from ratecheck.model.asynchrony import SystemModel, simulate
from ratecheck.problems.quadratic import p1, p2
from ratecheck.proofs.defedavg import wallclock as a

QUICK = PROFILES["quick"]


def test_distinct_draws_is_a_distribution_with_the_known_mean():
    for n, N in ((1, 20), (4, 20), (8, 20), (5, 3)):
        prob = a._distinct_draws(n, N)
        assert prob.sum() == pytest.approx(1.0, abs=1e-14)
        assert prob @ np.arange(n + 1) == pytest.approx(N * (1 - (1 - 1 / N) ** n), rel=1e-12)


@pytest.mark.parametrize("n", [4, 8])
def test_sync_round_time_matches_the_simulator(n):
    """Mean round time of synchronous FedAvg over 64 replicas x 100 rounds: the model's expectation
    (within 3%: the replicas' speeds scatter the per-run mean by ~6%, over 64 runs ~1%)."""
    config = a.wall_config("fedavg_events", n, p1(clients=a.WALL_CLIENTS), QUICK)
    times = [simulate("sync", SystemModel(), clients=a.WALL_CLIENTS, n=n, local_steps=50, rounds=100,
                      replica=r).round_times().mean() for r in range(64)]
    assert np.mean(times) == pytest.approx(a.sync_round_time(config), rel=0.03)


@pytest.mark.parametrize("n", [4, 8])
def test_first_arrival_times_match_the_simulator(n):
    """Close time of round 25 of first-n arrivals: the renewal model within its stated tolerance."""
    config = a.wall_config("defedavg_iid_events", n, p1(clients=a.WALL_CLIENTS), QUICK)
    walls = [simulate("iid", SystemModel(), clients=a.WALL_CLIENTS, n=n, local_steps=50, rounds=25,
                      replica=r).wall[-1] for r in range(32)]
    predicted = float(a.first_arrivals_time(config, np.array([25]))[0])
    assert abs(math.log(np.mean(walls) / predicted)) < a.WALL_IID_TOLERANCE


def test_niid_rounds_lie_between_the_transfers_and_a_synchronous_round():
    config = a.wall_config("defedavg_niid_events", 4, p2(clients=a.WALL_CLIENTS), QUICK)
    baseline = a.wall_config("fedavg_events", 4, p2(clients=a.WALL_CLIENTS), QUICK)
    times = np.concatenate([simulate("niid", SystemModel(), clients=a.WALL_CLIENTS, n=4, local_steps=50,
                                     rounds=100, replica=r).round_times() for r in range(16)])
    assert times.min() >= 0.088 - 1e-12
    assert times.mean() < a.sync_round_time(baseline)
    low, high = a.niid_ratio_band(config, baseline, np.array([20.0]), np.array([25.0]))
    assert high[0] == pytest.approx(0.8) and low[0] == pytest.approx(0.8 * 0.088 / a.sync_round_time(baseline))
