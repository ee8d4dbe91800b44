"""`ratecheck describe`: every registered kind of thing described from its declarations."""

from __future__ import annotations

import json

import pytest

from ratecheck.interfaces.cli import main
from ratecheck.interfaces.describe import DescribeError, describe, render
from ratecheck.params import declarations
from ratecheck.registry import default


def one(name: str) -> dict:
    (record,) = describe(name, default())
    return record


def test_an_algorithm_lists_every_declared_parameter_with_rule_default_and_meaning():
    from ratecheck.algorithms.fedavg import FedAvg

    record = one("fedavg")
    assert record["kind"] == "algorithm"
    params = {p["name"]: p for p in record["parameters"]}
    assert set(params) == set(declarations(FedAvg))
    assert params["local_steps"] == {"name": "local_steps", "kind": "int", "rule": "an integer >= 1 and <= 1e+06",
                                     "default": 1, "meaning": "local SGD steps K per round"}
    assert "the paper's eta-bar" in render(record)  # the meaning is printed whole, never truncated


def test_a_family_gives_its_constants_with_how_each_is_obtained_and_what_it_certifies():
    record = one("quadratic")
    constants = {c["name"]: c for c in record["constants"]}
    assert constants["kappa"]["value"] == pytest.approx(10.0)  # L / mu at the defaults L = 1, mu = 0.1
    assert constants["dist0_sq"]["value"] == pytest.approx(10.0)  # ||x0 - x*||^2 = d * x0_offset^2
    assert "eigvalsh" in constants["L"]["how"]
    assert any("strong convexity" in a for a in record["certifies"])
    assert "defedavg.theorem2" in record["theorems"]


def test_a_theorem_gives_symbols_conditions_bounds_schedule_and_orders():
    record = one("defedavg.theorem2")
    assert [b["version"] for b in record["bounds"]] == ["main_text", "appendix", "corrected", "general"]
    assert "eq. (13)" in record["conditions"][0]["source"]
    orders = {(o["bound"], o["symbol"]): o["exponent"] for o in record["orders"]}
    # eq. (14) with the prescribed step sizes: T^(-1/2); n saturates (8L/(KT) does not shrink with n)
    assert orders[("corrected", "T")] == pytest.approx(-0.5)
    assert orders[("corrected", "n")] == pytest.approx(0.0)
    assert set(record["schedule"]) == {"eta", "etabar"}
    assert "quadratic" in record["families"]


def test_a_claim_says_what_it_runs_and_how_it_decides():
    record = one("defedavg.T2.bound_corrected")
    assert record["theorem"] == "defedavg.theorem2" and record["settings"]["version"] == "corrected"
    assert record["runs"]["algorithms"] == ["defedavg_iid"] and record["runs"]["quick profile"] >= 5


def test_a_paper_names_its_theorems_and_errata():
    record = one("defedavg")
    assert "defedavg.theorem2" in record["paper_theorems"]
    assert "defedavg.T2.bound_main_text" in record["expected_fail"]


def test_an_unknown_name_suggests_close_ones():
    with pytest.raises(DescribeError, match=r"did you mean one of \['defedavg.T2.bound_corrected'"):
        describe("T2.bound_corrected", default())


def test_the_command(capsys: pytest.CaptureFixture[str]):
    assert main(["describe", "fedavg", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "fedavg"
    assert main(["describe", "no_such_thing"]) == 2
    assert "no algorithm, problem family, paper, theorem or claim is named 'no_such_thing'" in capsys.readouterr().err


def test_a_theorem_whose_t_counts_local_steps_reads_local_iterations():
    from ratecheck.binding import local_iterations, rounds
    from ratecheck.inspection import view
    from ratecheck.trace import RunConfig

    run = view(RunConfig("fedavg", {"local_steps": 5}, "quadratic", {"dim": 2, "clients": 4}, rounds=30))
    assert (rounds(run, None), local_iterations(run, None)) == (30.0, 150.0)
