"""The event-driven wall-clock simulator (spec defedavg §2.7.3) and the algorithms it drives."""

import numpy as np
import pytest

from ratecheck import run
from ratecheck.model.asynchrony import Simulation, SystemModel, TimelineError, Timelines, simulate, simulate_replicas
from ratecheck.params import ParamError
from ratecheck.problems import make_problem
from ratecheck.proofs.defedavg.presets import p2
from ratecheck.registry import make_algorithm
from ratecheck.runner.executors import SerialExecutor
from ratecheck.runner.sweep import run_configs
from ratecheck.trace import RunConfig

# Spec §2.7.3 sanity table (an independent prototype of the same event model): N = 100, K = 50,
# FashionMNIST timing, seed 0, 300 rounds -> (mean round time in s, max delay).
SANITY = {
    ("sync", "A", 10): (0.49, 0), ("sync", "A", 80): (0.51, 0),
    ("niid", "A", 10): (0.15, 8), ("niid", "A", 80): (0.33, 4),
    ("niid", "B", 10): (0.20, 87), ("niid", "B", 80): (0.35, 12),
    ("iid", "A", 10): (0.023, 24), ("iid", "A", 80): (0.23, 3),
}


@pytest.mark.parametrize("policy,variant,n", sorted(SANITY))
def test_sanity_setup_lands_in_the_spec_ballpark(policy, variant, n):
    """Mean round time within 15% of the prototype's; max delay within 25% (+-1) for all but nIID-B
    at n = 10, whose max delay is the maximum of ~3000 geometric gaps (a heavy-tailed statistic:
    one seed's value may differ by half; measured 112 against the prototype's 87, log(NTp)/p = 83)."""
    tl = simulate(policy, SystemModel(niid_variant=variant), clients=100, n=n, local_steps=50, rounds=300, seed=0)
    mean_round, max_delay = SANITY[(policy, variant, n)]
    assert tl.wall[-1] / 300 == pytest.approx(mean_round, rel=0.15)
    if (policy, variant, n) == ("niid", "B", 10):
        assert 0.5 * max_delay <= tl.max_delay <= 1.5 * max_delay
    else:
        assert abs(tl.max_delay - max_delay) <= max(1, 0.25 * max_delay)


def test_timeline_is_deterministic_and_prefix_stable():
    """Same seed and replica: same timeline; advancing in pieces gives the same rounds as at once."""
    kw = dict(clients=30, n=4, local_steps=5)
    whole = simulate("niid", SystemModel(), rounds=200, seed=3, replica=2, **kw)
    again = Simulation("niid", SystemModel(), seed=3, replica=2, **kw)
    for stop in (7, 50, 51, 200):
        again.advance(stop)
    piecewise = again.timeline(200)
    np.testing.assert_array_equal(whole.clients, piecewise.clients)
    np.testing.assert_array_equal(whole.base, piecewise.base)
    np.testing.assert_array_equal(whole.wall, piecewise.wall)
    other = simulate("niid", SystemModel(), rounds=200, seed=3, replica=3, **kw)
    assert not np.array_equal(whole.clients, other.clients)


def test_niid_rounds_are_uniform_multisets_with_one_update_per_client():
    """nIID: the n slots are i.i.d. uniform draws (duplicates share one base version); delays >= 1
    in variant A (a selected client uploads its buffered update, spec §2.6(6))."""
    tl = simulate("niid", SystemModel(), clients=10, n=6, local_steps=5, rounds=3000, seed=0)
    counts = np.bincount(tl.clients.ravel(), minlength=10) / tl.clients.size
    assert np.abs(counts - 0.1).max() < 0.01  # 18000 draws: sd of a share is 0.0022
    assert tl.shared
    for row_c, row_b in zip(tl.clients[:200], tl.base[:200]):
        for c in set(row_c.tolist()):
            assert len(set(row_b[row_c == c].tolist())) == 1
    assert tl.delays[5:].min() >= 1 and tl.histogram().sum() == tl.clients.size  # round 0 waits for fresh jobs


def test_iid_takes_the_first_arrivals_and_fast_clients_contribute_more():
    system = SystemModel(speeds="by_parity", speed_low=1.0, speed_high=5.0)
    tl = simulate("iid", system, clients=20, n=4, local_steps=5, rounds=500, seed=0)
    even, odd = tl.participation[::2].sum(), tl.participation[1::2].sum()
    assert even > 1.5 * odd
    assert np.all(np.diff(tl.wall) >= 0)


def test_sync_fedavg_waits_for_every_selected_client():
    system = SystemModel(step_time=1.0, speed_low=1.0, speed_high=1.0, t_down=0.5, t_up=0.25)
    tl = simulate("sync", system, clients=10, n=3, local_steps=2, rounds=5, seed=0)
    np.testing.assert_allclose(np.diff(tl.wall, prepend=0.0), 0.5 + 2.0 + 0.25)
    assert tl.max_delay == 0


def test_bad_system_parameters_name_the_parameter():
    with pytest.raises(ParamError, match="system model: parameter speed_low = 0.0 is invalid: must be a finite real"):
        SystemModel(speed_low=0.0)
    with pytest.raises(ParamError, match="t_up"):
        SystemModel(t_up=-1.0)
    with pytest.raises(ParamError, match="step_time"):
        SystemModel(step_time=float("nan"))
    with pytest.raises(ParamError, match="niid_variant = 'C' is invalid: must be one of 'A', 'B'"):
        SystemModel(niid_variant="C")
    with pytest.raises(ParamError, match="t_down"):
        make_algorithm("defedavg_iid_events", {"t_down": -0.1})
    # the rules between fields, named by the algorithm that carries them
    with pytest.raises(ParamError, match="defedavg_iid_events: parameter speed_low = 6.0 is invalid: must be <= "
                                         "speed_high = 5.0"):
        make_algorithm("defedavg_iid_events", {"speed_low": 6.0}).validate(make_problem("quadratic", p2(clients=4)))


def test_the_event_algorithms_declare_the_system_model_fields_once():
    from dataclasses import fields

    from ratecheck.algorithms.asynchronous import EventTiming
    from ratecheck.params import declarations

    system = declarations(SystemModel)
    assert declarations(EventTiming) == system and [f.name for f in fields(SystemModel)] == list(system)
    assert {f.name: f.default for f in fields(EventTiming)} == {f.name: f.default for f in fields(SystemModel)}
    problem = make_problem("quadratic", p2(clients=4))
    alg = make_algorithm("defedavg_niid_events", {"participation": "with_replacement:8"})
    alg.validate(problem)  # with replacement: n > N is allowed (draws repeat)
    with pytest.raises(ValueError, match="m <= N"):
        make_algorithm("defedavg_iid_events", {"participation": "without_replacement:8"}).validate(problem)


def test_a_run_that_never_completes_a_round_stops_at_its_wall_budget():
    slow = SystemModel(step_time=1e6, wall_budget=100.0)
    with pytest.raises(TimelineError, match="wall-time budget"):
        simulate("iid", slow, clients=5, n=2, local_steps=1, rounds=3)
    problem = make_problem("quadratic", p2(clients=4))
    alg = make_algorithm("fedavg_events", {"step_time": 1e3, "wall_budget": 10.0})
    with pytest.raises(TimelineError, match="wall-time budget"):
        run(alg, problem, 5, replicas=2)


def test_tau_cap_assert_and_drop():
    with pytest.raises(TimelineError, match="tau_cap"):
        simulate("iid", SystemModel(tau_cap=1), clients=50, n=2, local_steps=5, rounds=200)
    dropped = simulate("iid", SystemModel(tau_cap=3, tau_cap_mode="drop"), clients=50, n=2, local_steps=5,
                       rounds=200)
    assert dropped.max_delay <= 3 and dropped.discarded.sum() > 0


PROBLEM = make_problem("quadratic", p2(clients=12, sigma=0.5))
QUIET = make_problem("quadratic", p2(clients=12, sigma=0.0))


@pytest.mark.parametrize("name,part", [("defedavg_niid_events", "with_replacement:4"),
                                       ("defedavg_iid_events", "without_replacement:4"),
                                       ("fedavg_events", "with_replacement:4")])
def test_replaying_the_timeline_gives_the_same_numbers(tmp_path, name, part):
    """Mode E and the 'trace' delay schedule drive the same numeric code (spec §2.7.2 'trace').
    Noise streams are keyed by the run's configuration, which differs between the two, so the
    comparison is noise-free (sigma = 0): then every number depends only on the (client, base) pairs."""
    params = dict(eta_global=0.5, eta_local=0.05, local_steps=3, participation=part)
    events = run(make_algorithm(name, params), QUIET, 60, replicas=3, seed=5)
    assert events.info["timeline"]["lambda_used"] >= 1
    alg = make_algorithm(name, params)
    timelines = simulate_replicas(alg.policy, alg.system(), clients=12, n=4, local_steps=3, rounds=60, seed=5,
                                  replicas=(0, 1, 2))
    path = tmp_path / "timeline.npz"
    timelines.save(str(path))
    replay_name = {"defedavg_niid_events": "defedavg_niid", "defedavg_iid_events": "defedavg_iid",
                   "fedavg_events": "fedavg"}[name]
    replay_part = "with_replacement:4" if replay_name != "defedavg_iid" else "without_replacement:4"
    replay = run(make_algorithm(replay_name, dict(params, participation=replay_part, delay=f"trace:{path}")),
                 QUIET, 60, replicas=3, seed=5)
    np.testing.assert_array_equal(events.final["x"], replay.final["x"])
    assert Timelines.load(str(path)).max_delay == timelines.max_delay


def test_event_run_matches_a_hand_recursion_without_noise():
    """sigma = 0: w^{t+1} = w^t - eta (1/n) sum_m Delta_m with Delta from w^{base} (nIID, shared duplicates)."""
    problem = make_problem("quadratic", p2(clients=6, sigma=0.0, dim=3, mu=0.3))
    params = dict(eta_global=0.8, eta_local=0.1, local_steps=2, participation="with_replacement:3")
    alg = make_algorithm("defedavg_niid_events", params)
    trace = run(alg, problem, 40, replicas=1, seed=1)
    tl = simulate("niid", alg.system(), clients=6, n=3, local_steps=2, rounds=40, seed=1, replica=0)
    w = [problem.x0.copy()]
    for t in range(40):
        direction = np.zeros(3)
        for client, base in zip(tl.clients[t], tl.base[t]):
            y = w[base].copy()
            for _ in range(2):
                y = y - 0.1 * problem.hessians @ (y - problem.centers[client])
            direction += (w[base] - y) / 3
        w.append(w[t] - 0.8 * direction)
    np.testing.assert_allclose(trace.final["x"][0], w[-1], rtol=1e-10)


def test_same_numbers_in_every_executor(process_executor):
    config = RunConfig("defedavg_iid_events", {"eta_global": 0.5, "eta_local": 0.05, "local_steps": 3,
                                               "participation": "without_replacement:3"},
                       "quadratic", p2(clients=12), rounds=80, replicas=4, seed=2)
    serial = run_configs([config], executor=SerialExecutor(), progress=False)[config.key()]
    pooled = run_configs([config], executor=process_executor, progress=False)[config.key()]
    np.testing.assert_array_equal(serial.final["x"], pooled.final["x"])
    assert serial.info["timeline"] == pooled.info["timeline"]


def test_fedbuff_staleness_weights_are_an_option_off_by_default():
    plain = make_algorithm("fedbuff", {"participation": "without_replacement:3"})
    assert plain.staleness == "none"
    updates = np.ones((1, 2, 3))
    weighted = make_algorithm("fedbuff", {"staleness": "inverse_sqrt"})
    np.testing.assert_allclose(weighted.aggregate(updates, np.zeros((1, 2)), np.array([[0, 3]]))[0],
                               (1 + 0.5) / 2)
    np.testing.assert_allclose(plain.aggregate(updates, np.zeros((1, 2)), np.array([[0, 3]]))[0], 1.0)


def test_asysg_is_one_step_with_one_learning_rate():
    with pytest.raises(ParamError, match="local_steps"):
        make_algorithm("asysg", {"local_steps": 2})
    with pytest.raises(ParamError, match="eta_local"):
        make_algorithm("asysg", {"eta_local": 0.5}).validate(PROBLEM)


def test_niid_options_variant_b_notify_delay_and_no_consumption():
    """Variant B's delays follow the gaps between selections (much larger than A's); an early
    notification and retraining without consuming the receive buffer run and stay consistent."""
    kw = dict(clients=40, n=4, local_steps=5, rounds=400, seed=0)
    a = simulate("niid", SystemModel(), **kw)
    b = simulate("niid", SystemModel(niid_variant="B"), **kw)
    assert b.max_delay > 2 * a.max_delay
    early = simulate("niid", SystemModel(notify_delay=0.0), **kw)
    again = simulate("iid", SystemModel(rx_consume=False), **kw)
    assert early.rounds == again.rounds == 400
    assert early.wall[-1] <= a.wall[-1]  # uploads start before the broadcast arrives
    alg = make_algorithm("defedavg_niid_events", {"notify_delay": 0.0, "niid_variant": "B",
                                                  "participation": "with_replacement:2"})
    assert alg.system().notify_delay == 0.0 and alg.system().niid_variant == "B"


def test_lambda_below_one_is_refused_in_a_theorem():
    from ratecheck.proofs.defedavg import bindings

    config = RunConfig("defedavg_iid", {"delay": "none", "participation": "without_replacement:2",
                                        "local_steps": 1, "eta_global": 1.0, "eta_local": 0.1},
                       "quadratic", p2(clients=4), rounds=10)

    class FakeTrace:
        info = {"lambda_used": 0}

    with pytest.raises(ValueError, match="lambda = 0"):
        bindings(config, FakeTrace())


def test_trace_option_names_its_file_digest_and_refuses_a_changed_file(tmp_path):
    """The option's string (and so the cache key) carries the file's digest: an edited file is refused."""
    from ratecheck.algorithms.fedavg import DelaySchedule

    path = tmp_path / "t.npz"
    simulate_replicas("iid", SystemModel(), clients=6, n=2, local_steps=2, rounds=30, seed=0,
                      replicas=(0, 1)).save(str(path))
    option = DelaySchedule.parse(f"trace:{path}")
    text = str(option)
    assert text.startswith(f"trace:{path}@") and DelaySchedule.parse(text).lam == option.lam
    simulate_replicas("iid", SystemModel(), clients=6, n=2, local_steps=2, rounds=30, seed=1,
                      replicas=(0, 1)).save(str(path))
    with pytest.raises(ValueError, match="changed since it was recorded"):
        DelaySchedule.parse(text)
    with pytest.raises(ValueError, match="does not exist"):
        DelaySchedule.parse(f"trace:{tmp_path / 'missing.npz'}")
