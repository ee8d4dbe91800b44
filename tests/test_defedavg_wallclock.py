"""The timing model behind DeFedAvg's wall-clock claims, against the event simulator and by hand."""

import dataclasses
import math

import numpy as np
import pytest

from ratecheck.claims import PROFILES, Verdict
from ratecheck.model.asynchrony import SystemModel, simulate
from ratecheck.proofs.defedavg import wallclock as a
from ratecheck.proofs.defedavg.presets import p1, p2
from ratecheck.runner.executors import SerialExecutor
from ratecheck.runner.sweep import check_claims

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
    """Close time of round 25 of first-n arrivals: the renewal model within the band's tolerance at n."""
    config = a.wall_config("defedavg_iid_events", n, p1(clients=a.WALL_CLIENTS), QUICK)
    walls = [simulate("iid", SystemModel(), clients=a.WALL_CLIENTS, n=n, local_steps=50, rounds=25,
                      replica=r).wall[-1] for r in range(32)]
    predicted = float(a.first_arrivals_time(config, np.array([25]))[0])
    assert abs(math.log(np.mean(walls) / predicted)) < a.band_tolerance(a.WALL_IID_TOLERANCE, config)


def test_the_band_tolerance_is_looked_up_per_grid_value_and_runs_and_refuses_others():
    quick = a.wall_config("defedavg_iid_events", 4, p1(clients=a.WALL_CLIENTS), QUICK)
    full = a.wall_config("defedavg_iid_events", 16, p1(clients=a.WALL_CLIENTS), PROFILES["full"])
    assert a.band_tolerance(a.WALL_IID_TOLERANCE, quick) == a.WALL_IID_TOLERANCE[(4, quick.replicas)]
    assert a.band_tolerance(a.WALL_IID_TOLERANCE, full) == a.WALL_IID_TOLERANCE[(16, full.replicas)]
    with pytest.raises(ValueError, match=r"n = 4 with 12 runs"):
        a.band_tolerance(a.WALL_IID_TOLERANCE, quick.with_(replicas=12))


def test_niid_rounds_lie_between_the_transfers_and_a_synchronous_round():
    baseline = a.wall_config("fedavg_events", 4, p2(clients=a.WALL_CLIENTS), QUICK)
    times = np.concatenate([simulate("niid", SystemModel(), clients=a.WALL_CLIENTS, n=4, local_steps=50,
                                     rounds=100, replica=r).round_times() for r in range(16)])
    assert times.min() >= 0.088 - 1e-12
    assert times.mean() < a.sync_round_time(baseline)


@pytest.mark.parametrize("n", [4, 8])
def test_niid_close_times_match_the_simulator(n):
    """Round 25's close time over 32 runs: the mean-field recursion within 8% (3.7% at n = 4, 5.9% at n = 8, as
    WALL_NIID_TOLERANCE_WHY states), and between the transfers and synchronous rounds."""
    config = a.wall_config("defedavg_niid_events", n, p2(clients=a.WALL_CLIENTS), QUICK)
    baseline = a.wall_config("fedavg_events", n, p2(clients=a.WALL_CLIENTS), QUICK)
    walls = [simulate("niid", SystemModel(), clients=a.WALL_CLIENTS, n=n, local_steps=50, rounds=25,
                      replica=r).wall[-1] for r in range(32)]
    close = a.niid_close_times(config, 25)
    assert 0 < math.log(np.mean(walls) / close[-1]) < 0.08
    assert 25 * 0.088 < close[-1] < 25 * a.sync_round_time(baseline)
    assert np.all(np.diff(close) >= 0.088 - 1e-12)


def test_niid_band_is_the_predicted_ratio_times_its_tolerance():
    config = a.wall_config("defedavg_niid_events", 4, p2(clients=a.WALL_CLIENTS), QUICK)
    baseline = a.wall_config("fedavg_events", 4, p2(clients=a.WALL_CLIENTS), QUICK)
    low, high = a.niid_ratio_band(config, baseline, np.array([20.0, 25.0]), np.array([25.0, 28.0]))
    close = a.niid_close_times(config, 25)
    predicted = np.array([close[19] / 25, close[24] / 28]) / a.sync_round_time(baseline)
    factor = math.exp(a.WALL_NIID_TOLERANCE[(4, config.replicas)])
    assert np.allclose(low, predicted / factor, rtol=1e-12) and np.allclose(high, predicted * factor, rtol=1e-12)


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_a_timing_model_off_by_a_factor_two_fails_the_niid_band(factor):
    """The claim decided on its own quick runs with the nIID prediction scaled by 2 (or 1/2): at the tolerance
    each grid value needs, the band no longer holds the measured ratio, whatever the model's bias and the 8-run
    intervals' width (measured here, not typed in)."""
    def off(config, baseline, rounds, base_rounds):
        low, high = a.niid_ratio_band(config, baseline, rounds, base_rounds)
        return low * factor, high * factor

    claim = dataclasses.replace(a.WALL_NIID, band=off)
    (outcome,) = check_claims([claim], QUICK, executor=SerialExecutor(), progress=False)
    assert outcome.verdict == Verdict.FAIL and "outside the timing model's band" in outcome.reason, outcome.reason


def test_niid_round_time_model_refuses_what_it_was_not_derived_for():
    config = a.wall_config("defedavg_niid_events", 4, p2(clients=a.WALL_CLIENTS), QUICK)
    with pytest.raises(ValueError, match="variant A"):
        a.niid_close_times(config.with_(params={**config.params, "niid_variant": "B"}), 5)


def _tool(name: str):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent.parent / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_band_tables_pool_holds_none_of_the_runs_the_claims_decide_on():
    """The pool that set the band tolerances (tools/wallclock_band.py's default offset, replicas 0..1023) shares no
    seed with the claims' runs, in either profile, registered or under the seed-stability offsets: the streams are
    (seed, run identity, replica), so their verdicts are out of sample."""
    from ratecheck.proofs.defedavg.wallclock_band import POOL_SEED_OFFSET

    assert _tool("wallclock_band").options([]).seed == POOL_SEED_OFFSET
    offsets = (0, *_tool("seed_stability").DEFAULT_OFFSETS)
    for claim in (a.WALL_IID, a.WALL_NIID):
        configs = [config for profile in ("quick", "full") for value in claim.grid[profile]
                   for _, config in claim.runs_at(value, PROFILES[profile])]
        decided = {config.seed + offset for config in configs for offset in offsets}
        pooled = {config.seed + POOL_SEED_OFFSET for config in configs}
        assert decided and not decided & pooled, (claim.id, sorted(decided & pooled))
