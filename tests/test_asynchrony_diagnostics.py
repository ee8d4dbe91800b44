"""The event simulator's per-round diagnostics (busy fraction, discarded updates) and its carry_over option."""

import numpy as np

from ratecheck.model.asynchrony import Simulation, SystemModel, simulate

SYNC = SystemModel(step_time=0.01, speed_high=4.0, t_down=0.02, t_up=0.03, t_server=0.005)


def test_sync_busy_fraction_is_the_selected_clients_job_time_over_the_run():
    """Synchronous FedAvg: each distinct drawn client runs one job of K s_i step_time inside its round, so by
    round T's close client i has computed K s_i step_time x (rounds it was drawn in); by hand from the timeline."""
    K, N, T = 3, 6, 25
    sim = Simulation("sync", SYNC, clients=N, n=3, local_steps=K, seed=4)
    tl = sim.advance(T).timeline(T)
    rounds_in = np.array([sum(i in set(row.tolist()) for row in tl.clients) for i in range(N)])
    expected = rounds_in * K * sim.slowdown * SYNC.step_time / tl.wall[-1]
    np.testing.assert_allclose(tl.busy_fraction, expected, rtol=1e-12)
    assert 0 < expected.max() < 1


def test_diagnostics_of_a_prefix_do_not_see_the_rounds_simulated_ahead():
    """A live timeline simulates ahead; its first T rounds' busy fraction and discards are those of a run of T."""
    for policy in ("niid", "iid", "sync"):
        kw = dict(clients=12, n=3, local_steps=4, seed=2)
        alone = simulate(policy, SYNC, rounds=30, **kw)
        ahead = Simulation(policy, SYNC, **kw).advance(90).timeline(30)
        np.testing.assert_array_equal(alone.busy_fraction, ahead.busy_fraction)
        np.testing.assert_array_equal(alone.discarded, ahead.discarded)
        assert np.all(alone.busy_fraction <= 1.0) and alone.busy_fraction.max() > 0.02


def test_a_running_job_counts_up_to_the_close_not_to_its_end():
    """IID, one client per round, slow clients: at round 0's close every other client is mid-job, busy all along."""
    system = SystemModel(step_time=1.0, speeds="by_parity", speed_low=1.0, speed_high=3.0, parity_width=0.0,
                         t_down=0.5, t_up=0.0)
    tl = simulate("iid", system, clients=4, n=1, local_steps=1, rounds=1)
    assert tl.wall[-1] == 1.5  # client 0 (slowdown 1) is first: 0.5 s download + a 1 s job
    np.testing.assert_allclose(tl.busy_fraction, [1 / 1.5, 1 / 1.5, 1 / 1.5, 1 / 1.5])


def test_carry_over_off_drops_what_arrives_while_the_server_aggregates():
    """carry_over=False (not in the paper): an update arriving at a round's close or within t_server after it is
    discarded; the default queues it for the next round (spec §2.6(7)). With t_server = 0 and continuous speeds
    nothing arrives at a close instant, so the option drops nothing there."""
    kw = dict(clients=10, n=2, local_steps=3, rounds=120, seed=1)
    slow_server = SystemModel(step_time=0.01, t_down=0.02, t_up=0.03, t_server=0.02)
    kept = simulate("iid", slow_server, **kw)
    dropped = simulate("iid", SystemModel(**{**slow_server.to_dict(), "carry_over": False}), **kw)
    assert kept.discarded.sum() == 0 and dropped.discarded.sum() > 0
    assert not np.array_equal(kept.clients, dropped.clients)
    # no update of a kept round arrived inside an aggregation window: every round's wall time is an arrival
    # at least t_server after the previous close, unless it is round 0
    assert np.all(np.diff(dropped.wall) >= 0.02 - 1e-12)
    assert np.any(np.diff(kept.wall) < 0.02)
    plain = SystemModel(step_time=0.01, t_down=0.02, t_up=0.03)
    assert simulate("iid", SystemModel(**{**plain.to_dict(), "carry_over": False}), **kw).discarded.sum() == 0
    # ties (two speed classes, no transfer time): updates arrive at a close instant, and are dropped
    ties = SystemModel(step_time=0.01, speeds="by_parity", speed_high=4.0, parity_width=0.0, t_down=0.0, t_up=0.0,
                       carry_over=False)
    assert simulate("iid", ties, **kw).discarded.sum() > 0
