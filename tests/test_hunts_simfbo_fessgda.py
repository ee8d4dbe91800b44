"""Hunts of SimFBO Theorem 1 and FESS-GDA Theorem 3.5 (issue #13): the family strategies draw valid
instances, the hunt spaces stay inside the theorems' conditions, the counterexamples are what they
claim, and `ratecheck hunt --json` prints a command that reproduces its ratio. (The registered hunts'
verdicts are checked by tests/test_claims.py, which runs every registered claim.)"""

from __future__ import annotations

import json
import math
import shlex

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ratecheck.interfaces.cli import main
from ratecheck.problems.bilevel_strategies import simfbo_strategy
from ratecheck.problems.minimax import make as make_minimax
from ratecheck.problems.minimax.quadratic import strategy as minimax_quadratic_strategy
from ratecheck.problems.quadratic_bilevel import make as make_bilevel
from ratecheck.proofs.fessgda import hunts as fess
from ratecheck.proofs.simfbo import hunts as sim
from ratecheck.proofs.simfbo.claims import bindings as simfbo_bindings
from ratecheck.proofs.simfbo.theorems import THEOREM_1
from ratecheck.simulate.engine import run_config


def _finite_constants(problem) -> None:
    values = {name: float(c.value) for name, c in problem.constants().items()}
    assert values and all(math.isfinite(v) for v in values.values()), values


@settings(max_examples=30, deadline=None, derandomize=True)
@given(simfbo_strategy())
def test_simfbo_strategy_draws_buildable_instances(params):
    problem = make_bilevel(**params)
    assert problem.num_clients == params["clients"] and problem.dim_y == params["dim_y"]
    _finite_constants(problem)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(minimax_quadratic_strategy())
def test_minimax_quadratic_strategy_draws_buildable_instances(params):
    problem = make_minimax(**params)
    assert problem.num_clients == params["clients"] and problem.dim_x == len(params["a"])
    _finite_constants(problem)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(minimax_quadratic_strategy(d=2, noise=0.0, clients=st.just(3)))
def test_minimax_strategy_takes_fixed_values_and_strategies(draw):
    assert len(draw["a"]) == len(draw["c"]) == len(draw["x0"]) == len(draw["y0"]) == 2
    assert draw["noise"] == 0.0 and draw["clients"] == 3


@settings(max_examples=10, deadline=None, derandomize=True)
@given(simfbo_strategy(upper="nonconvex", dim_x=3, dim_y=1))
def test_simfbo_strategy_keeps_make_rules_under_fixed_values(draw):
    assert draw["dim_x"] == draw["dim_y"] == 1 and draw["b"]  # P3 needs B = b I, b != 0
    make_bilevel(**draw)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(sim._strategy())
def test_simfbo_space_meets_every_stated_condition(instance):
    """Every drawn instance satisfies Theorem 1's stated conditions; C6 holds iff eta_v alpha_max L_1 <= 1."""
    config = sim._configure(instance, 1)
    evaluation = sim.THEOREM_1_AS_STATED.evaluate(simfbo_bindings(config), use_schedule=False)
    assert evaluation.all_hold, [c.name for c in evaluation.conditions if not c.holds]
    c6 = THEOREM_1.evaluate(simfbo_bindings(config), use_schedule=False).conditions
    assert {c.name for c in c6 if not c.holds} <= {"C6: eta_v alpha_max L_1 <= 1"}
    assert all(c.holds for c in c6) == (instance["eta_v_log2"] <= 0)


def test_theorem1_as_stated_lacks_exactly_c6():
    stated = {c.name for c in sim.THEOREM_1_AS_STATED.conditions}
    assert {c.name for c in THEOREM_1.conditions} - stated == {"C6: eta_v alpha_max L_1 <= 1"}
    assert sim.THEOREM_1_AS_STATED.bound("explicit").expr == THEOREM_1.bound("explicit").expr


def test_simfbo_counterexample_diverges_inside_the_stated_conditions():
    """The shrunk counterexample of the quick hunt: eta_v L_1 = 64 with 4 local steps; v and x blow up."""
    instance = {"problem": {"upper": "quadratic", "dim_x": 1, "dim_y": 1, "clients": 2, "a_min": 1.0, "a_max": 1.0,
                            "b": None, "lam": 1.0, "delta": 1.0, "zeta": 0.0, "sigma_f": 0.0, "sigma_g": 0.0,
                            "start": "zero", "seed": 0, "hessian_spread": 0.0, "sigma_h": 0.0, "weights": None},
                "tau": 4, "rounds": 10, "eta_v_log2": 6, "step_fraction": 0.5}
    config = sim._configure(instance, 1)
    trace = run_config(config)
    evaluation = sim.THEOREM_1_AS_STATED.evaluate(simfbo_bindings(config, trace), use_schedule=False)
    assert evaluation.all_hold
    measure = float(trace.at_end("avg:grad_norm_sq")[0])
    assert measure > 1e3 * evaluation.bounds["explicit"]
    # the same instance one step inside C6 (eta_v L_1 = 1) stays far below the bound
    tame = run_config(sim._configure({**instance, "eta_v_log2": 0}, 1))
    assert float(tame.at_end("avg:grad_norm_sq")[0]) < 1e-3 * evaluation.bounds["explicit"]


@settings(max_examples=15, deadline=None, derandomize=True)
@given(fess._strategy())
def test_fessgda_space_is_in_the_branch_and_meets_the_conditions(instance):
    config = fess._configure(instance, 1)
    if config is None:  # started at the saddle: nothing to bound
        return
    evaluation = fess.THEOREM_3_5_DISTANCE.evaluate(fess.bindings(config), use_schedule=False)
    assert evaluation.all_hold, [c.name for c in evaluation.conditions if not c.holds]
    assert config.mode == "exact" and config.params["participation"] == "full"


@settings(max_examples=200, deadline=None, derandomize=True)
@given(a=st.floats(0.05, 5.0), c_frac=st.floats(0.01, 1.0), b=st.floats(-5.0, 5.0),
       x=st.floats(-10.0, 10.0), y=st.floats(-50.0, 50.0))
def test_corrected_conversion_holds_pointwise_and_printed_one_need_not(a, c_frac, b, x, y):
    """1-D f = a x^2/2 + b x y - c y^2/2 (mu1 = a >= mu2 = c): dist^2 <= max((2 + 4 kappa2^2)/mu1, 4/mu2) W at
    every state (the valid conversion of spec §4.7); W = (Phi - Phi*) + (Phi - f)."""
    c = a * c_frac
    lip = float(np.abs(np.linalg.eigvalsh([[a, b], [b, -c]])).max())
    phi = 0.5 * (a + b * b / c) * x * x
    f = 0.5 * a * x * x + b * x * y - 0.5 * c * y * y
    W, dist = (phi - 0.0) + (phi - f), x * x + y * y
    corrected = max((2 + 4 * (lip / c) ** 2) / a, 4 / c) * W
    assert dist <= corrected * (1 + 1e-9) + 1e-9


def test_printed_conversion_fails_at_a_worked_start():
    """a = 1, c = 0.2, b = 1, x0 = 1, y0 = y*(x0) + 1 = 6: dist^2 = 37 > max(4/mu1, 2/mu2) W0 = 10 * 3.1 (by hand)."""
    a, c, b, x, y = 1.0, 0.2, 1.0, 1.0, 6.0
    phi = 0.5 * (a + b * b / c) * x * x
    W = phi + (phi - (0.5 * a * x * x + b * x * y - 0.5 * c * y * y))
    assert W == pytest.approx(3.1) and x * x + y * y == 37.0
    assert max(4 / a, 2 / c) * W == pytest.approx(31.0)


def test_cli_hunt_json_and_its_command_reproduce_the_ratio(capsys, tmp_path):
    assert main(["hunt", "fessgda.theorem3_5.distance", "--bound", "printed_conversion", "--examples", "12",
                 "--json", "--cache-dir", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"found", "ratio", "instance", "conditions", "command"} <= set(out)
    assert out["found"] is True and out["ratio"] > 1
    assert all(c["holds"] for c in out["conditions"])
    command = shlex.split(out["command"])
    assert command[:2] == ["ratecheck", "run"] and command[-1] == "--exact"
    assert main(command[1:] + ["--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    measured = run["final"]["dist_sq"]["mean"]
    assert measured / out["best"]["bound"] == pytest.approx(out["ratio"], rel=1e-9)
