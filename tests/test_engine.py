"""engine.run: determinism, replica independence, checkpoints and running averages, divergence."""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from ratecheck import RunConfig, run, run_config
from ratecheck.algorithms.base import Algorithm
from ratecheck.problem import Problem
from ratecheck.problems import make_problem
from ratecheck.proofs.defedavg.presets import p1
from ratecheck.registry import make_algorithm
from ratecheck.trace import Trace


def _fedavg(**overrides):
    params = dict(eta_global=1.0, eta_local=0.05, local_steps=3, participation="without_replacement:4",
                  delay="constant:1")
    params.update(overrides)
    return make_algorithm("defedavg_iid", params)


PROBLEM = make_problem("quadratic", p1(clients=8))


def test_same_seed_same_numbers_and_other_seeds_differ():
    a = run(_fedavg(), PROBLEM, 50, replicas=4, seed=3)
    b = run(_fedavg(), PROBLEM, 50, replicas=4, seed=3)
    c = run(_fedavg(), PROBLEM, 50, replicas=4, seed=4)
    for name in a.measures:
        np.testing.assert_array_equal(a.measures[name], b.measures[name])
    assert not np.allclose(a.measures["grad_norm_sq"][-1], c.measures["grad_norm_sq"][-1])


def test_a_replica_does_not_depend_on_which_other_replicas_ran():
    full = run(_fedavg(), PROBLEM, 60, replicas=6, seed=1)
    part = run(_fedavg(), PROBLEM, 60, replicas=[4, 1], seed=1)
    np.testing.assert_array_equal(part.measures["grad_norm_sq"], full.measures["grad_norm_sq"][:, [4, 1]])
    np.testing.assert_array_equal(part.final["x"], full.final["x"][[4, 1]])


def test_configuration_changes_change_the_streams():
    a = run(_fedavg(), PROBLEM, 30, replicas=2, seed=0)
    b = run(_fedavg(eta_local=0.0500001), PROBLEM, 30, replicas=2, seed=0)
    assert a.config.run_key() != b.config.run_key()


def test_running_average_is_the_mean_over_rounds_before_t():
    trace = run(_fedavg(), PROBLEM, 40, replicas=3, seed=0, checkpoints=1000)
    np.testing.assert_array_equal(trace.checkpoints, np.arange(41))
    per_round = trace.measures["grad_norm_sq"]  # (41, R): w^0 .. w^40
    avg = trace.measures["avg:grad_norm_sq"]
    np.testing.assert_allclose(avg[-1], per_round[:-1].mean(axis=0), rtol=1e-12)
    for t in (1, 7, 23):  # every checkpoint, not only the last
        np.testing.assert_allclose(avg[t], per_round[:t].mean(axis=0), rtol=1e-12)
    assert np.isnan(trace.measures["avg:grad_norm_sq"][0]).all()


def test_counters_count_oracle_calls_and_vectors():
    trace = run(_fedavg(local_steps=3), PROBLEM, 20, replicas=2, seed=0)
    assert trace.counters["rounds"][-1] == 20
    assert trace.counters["oracle_calls"][-1] == 20 * 4 * 3
    assert trace.counters["oracle_calls_per_client"][-1] == 20 * 4 * 3 / 8
    assert trace.counters["vectors_up"][-1] == 20 * 4
    assert trace.counters["vectors_down"][-1] == 20 * 8  # DeFedAvg broadcasts to all N clients


def test_checkpoints_are_log_spaced_and_include_the_last_round():
    trace = run(_fedavg(), PROBLEM, 1000, replicas=2, seed=0, checkpoints=12)
    assert trace.checkpoints[0] == 0 and trace.checkpoints[-1] == 1000
    assert len(trace.checkpoints) <= 13
    assert np.all(np.diff(trace.checkpoints) > 0)


@dataclass(frozen=True)
class _Blowup(Algorithm):
    """Replica 1 jumps to inf at round 5, replica 2 to 1e200 at round 7; replica 0 stays finite."""

    name: ClassVar[str] = "_blowup"

    def init(self, problem, streams):
        return (np.zeros((len(streams.replicas), problem.dim)), 0)

    def round(self, state, problem, t, streams):
        x, _ = state
        x = x + 0.01
        if t == 4:
            x[1] = np.inf
        if t == 6:
            x[2] = 1e200
        return (x, t + 1), {"oracle_calls": 1.0}

    def output(self, state):
        return state[0]


def test_divergence_is_recorded_per_replica_and_never_crashes():
    trace = run(_Blowup(), PROBLEM, 20, replicas=3, seed=0, checkpoints=100)
    np.testing.assert_array_equal(trace.diverged_round, [-1, 5, 7])
    assert trace.diverged_count == 2
    g = trace.measures["grad_norm_sq"]
    assert np.isfinite(g[:, 0]).all()
    assert np.isnan(g[5:, 1]).all() and np.isfinite(g[:5, 1]).all()
    assert np.isnan(g[7:, 2]).all()
    assert np.isnan(trace.final["x"][1:]).all() and np.isfinite(trace.final["x"][0]).all()


def test_a_step_past_the_stability_edge_diverges_without_crashing():
    trace = run(_fedavg(eta_global=50.0, eta_local=1.0), PROBLEM, 200, replicas=2, seed=0)
    assert (trace.diverged_round > 0).all()
    assert np.isnan(trace.at_end("grad_norm_sq")).all()


def test_run_config_rebuilds_the_same_run_and_trace_round_trips():
    direct = run(_fedavg(), PROBLEM, 25, replicas=3, seed=2)
    config = RunConfig.from_dict(direct.config.to_dict())
    again = run_config(config)
    np.testing.assert_array_equal(direct.measures["grad_norm_sq"], again.measures["grad_norm_sq"])
    arrays, meta = again.to_arrays()
    back = Trace.from_arrays(arrays, meta)
    assert back.config == again.config
    np.testing.assert_array_equal(back.measures["avg:gap"], again.measures["avg:gap"])


@pytest.mark.parametrize(
    "params, message",
    [
        ({"eta_local": -0.1}, "eta_local = -0.1 is invalid: must be a finite real number > 0"),
        ({"eta_global": 0.0}, "eta_global = 0.0 is invalid"),
        ({"local_steps": 0}, "local_steps"),
        ({"local_steps": 2.5}, "local_steps"),
        ({"participation": "without_replacement:9"}, "m <= N"),
        ({"participation": "with_replacement:2"}, "defedavg_iid needs participation"),
        ({"delay": "sometimes:2"}, "delay kind"),
    ],
)
def test_bad_algorithm_input_names_parameter_and_rule(params, message):
    with pytest.raises(ValueError, match=message):
        run(_fedavg(**params), PROBLEM, 5, replicas=1)


def test_unknown_names_are_listed():
    with pytest.raises(ValueError, match="has no parameter"):
        make_algorithm("fedavg", {"lr": 0.1})
    with pytest.raises(ValueError, match="unknown algorithm"):
        make_algorithm("fedprox", {})
    with pytest.raises(ValueError, match="rounds"):
        run(_fedavg(), PROBLEM, 0)
    with pytest.raises(ValueError, match="replicas"):
        run(_fedavg(), PROBLEM, 5, replicas=0)


@dataclass(frozen=True)
class _TwoPoints(Algorithm):
    """Outputs named points (as minimax and bilevel algorithms do); y blows up in replica 0."""

    name: ClassVar[str] = "_two_points"

    def init(self, problem, streams):
        r = len(streams.replicas)
        return np.ones((r, problem.dim)), np.ones((r, 2))

    def round(self, state, problem, t, streams):
        x, y = state
        y = y * 2.0
        if t == 3:
            y = y.copy()
            y[0] = np.nan
        return (0.5 * x, y), {}

    def output(self, state):
        return {"x": state[0], "y": state[1]}


class _TwoPointProblem(Problem):
    family = "two_points"
    num_clients, dim, params = 1, 3, {}

    def measures(self, point):
        return {"x_sq": (point["x"] ** 2).sum(axis=1), "y_sq": (point["y"] ** 2).sum(axis=1)}


def test_named_outputs_are_measured_kept_and_checked_for_divergence():
    trace = run(_TwoPoints(), _TwoPointProblem(), 6, replicas=2, checkpoints=100)
    assert set(trace.final) == {"x", "y"}
    np.testing.assert_allclose(trace.final["x"][1], 0.5**6)
    np.testing.assert_allclose(trace.final["y"][1], 2.0**6)
    np.testing.assert_array_equal(trace.diverged_round, [4, -1])
    assert np.isnan(trace.final["x"][0]).all()
    np.testing.assert_allclose(trace.measures["x_sq"][:, 1], 3 * 0.25 ** np.arange(7))


# -- issue #7: divergence detects growth, counters survive an early stop, sizes and contracts ------


def test_slow_geometric_growth_is_flagged_long_before_overflow():
    # |1 - eta h| = 1.05 on the top eigenvalue: after 3000 rounds grad_norm_sq would be ~1e126,
    # far below the old 1e100 threshold on |x|; the growth rule flags it near |x| ~ 1e8.
    problem = make_problem("quadratic", {"dim": 2, "mu": 1.0, "L": 1.0, "sigma": 0.0})
    trace = run(make_algorithm("fedavg", {"eta_local": 2.05}), problem, 3000, replicas=2)
    assert trace.diverged_count == 2
    first = int(trace.diverged_round.min())
    assert 300 < first < 500  # log(1e8) / log(1.05) = 378 rounds
    finite = trace.measures["grad_norm_sq"][np.isfinite(trace.measures["grad_norm_sq"])]
    assert finite.max() < 1e20


def test_a_converging_run_is_not_flagged():
    problem = make_problem("quadratic", {"dim": 2, "mu": 1.0, "L": 1.0, "sigma": 0.0, "x0_offset": 1e6})
    trace = run(make_algorithm("fedavg", {"eta_local": 1.9}), problem, 200, replicas=2)
    assert trace.diverged_count == 0  # oscillating with factor 0.9 from a large start: not growth


def test_counters_of_a_run_whose_replicas_all_diverged_are_kept():
    problem = make_problem("quadratic", {"dim": 2, "mu": 1.0, "L": 1.0, "sigma": 0.0})
    trace = run(make_algorithm("fedavg", {"eta_local": 10.0, "local_steps": 2}), problem, 1000, replicas=3)
    stop = int(trace.diverged_round.max())
    assert trace.diverged_count == 3 and stop < 1000
    assert trace.counters["rounds"][-1] == stop
    assert trace.counters["oracle_calls"][-1] == stop * 2 * problem.num_clients
    assert np.isnan(trace.measures["grad_norm_sq"][-1]).all()


@pytest.mark.parametrize("rounds, replicas, clients, rule", [
    (10**12, 16, 16, "element updates"),
    (10, 10**6, 10**4, "GiB"),
])
def test_sizes_that_cannot_run_are_refused_with_the_rule(rounds, replicas, clients, rule):
    problem = make_problem("quadratic", {"dim": 2, "mu": 1.0, "L": 1.0, "clients": clients})
    with pytest.raises(ValueError, match=rule):
        run(make_algorithm("fedavg"), problem, rounds, replicas=replicas)


@pytest.mark.parametrize("algorithm, family", [("fedavg", "minimax"), ("fednest", "quadratic"),
                                               ("shrofbo", "minimax"), ("fess_gda", "quadratic_bilevel")])
def test_an_algorithm_on_a_family_it_does_not_support_names_both(algorithm, family):
    with pytest.raises(ValueError, match=f"algorithm '{algorithm}' does not run on problem family '{family}'"):
        run(make_algorithm(algorithm), make_problem(family), 3, replicas=1)


@pytest.mark.parametrize("replicas", [True, 0, 2.5, [], [1, 1], ["a"]])
def test_bad_replicas_are_refused(replicas):
    with pytest.raises(ValueError, match="replicas"):
        run(make_algorithm("fedavg"), make_problem("quadratic"), 3, replicas=replicas)


@pytest.mark.parametrize("field, value", [("rounds", 2.0), ("rounds", True), ("seed", None), ("seed", -1),
                                          ("checkpoints", 0), ("params", [1]), ("algorithm", "")])
def test_run_config_fields_are_checked(field, value):
    good = dict(algorithm="fedavg", params={}, problem="quadratic", problem_params={}, rounds=5)
    with pytest.raises(ValueError, match=field):
        RunConfig(**{**good, field: value})
