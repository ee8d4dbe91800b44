"""ratecheck.inspection: a RunConfig's problem, constants and typed algorithm, cached."""

from __future__ import annotations

import pytest

from ratecheck import inspection
from ratecheck.algorithms.bilevel import LocalSteps
from ratecheck.proofs.defedavg.presets import p2
from ratecheck.registry import make_problem
from ratecheck.trace import RunConfig


def fedavg(**params) -> RunConfig:
    return RunConfig("defedavg_iid", {"eta_local": 0.05, "local_steps": 3, **params}, "quadratic",
                     p2(clients=16), rounds=40, replicas=4)


def test_a_view_reads_the_run_as_theorems_need_it():
    run = inspection.view(fedavg(participation="without_replacement:8", delay="uniform:3"))
    assert (run.participating, run.delay_lambda, run.local_steps, run.rounds, run.num_clients) == (8, 3, 3, 40, 16)
    assert run.algorithm.name == "defedavg_iid" and run.param("eta_local") == 0.05
    expected = {k: float(c.value) for k, c in make_problem("quadratic", p2(clients=16)).constants().items()}
    assert dict(run.constants) == expected and all(type(v) is float for v in run.constants.values())
    with pytest.raises(TypeError):
        run.constants["L"] = 0.0  # read-only: a cached view must not be edited by one caller
    with pytest.raises(AttributeError, match="no parameter 'eta'"):
        run.param("eta")


def test_defaults_full_participation_and_no_delay():
    run = inspection.view(fedavg(participation="full"))
    assert (run.participating, run.delay_lambda) == (16, 0)
    bilevel = inspection.view(RunConfig("simfbo", {"local_steps": "per_client:1,2,3,4"}, "quadratic_bilevel",
                                        {"clients": 4}, rounds=5))
    assert isinstance(bilevel.local_steps, LocalSteps) and bilevel.participating == 4


def test_problems_and_algorithms_are_built_once_per_identity():
    a, b = fedavg(participation="without_replacement:4"), fedavg(participation="without_replacement:4")
    assert inspection.problem_of(a) is inspection.problem_of(b.with_(replicas=64, seed=3))
    assert inspection.algorithm_of(a) is inspection.algorithm_of(b)
    assert inspection.algorithm_of(a) is not inspection.algorithm_of(fedavg(participation="full"))
    extended = inspection.constants_of(a)
    extended["n"] = 4.0
    assert "n" not in inspection.constants_of(a)  # each caller gets its own copy to extend
