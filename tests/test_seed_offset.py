"""check --seed-offset (issue #23, "no claim flips on correct code across 5 seeds"): every Monte-Carlo run a check
makes is the run of the claim's configuration with the seed shifted, stored under its own key; exact runs are not
shifted; offset 0 is the registered check; a replay oracle replays the draws the run made; tools/seed_stability.py
reports a claim whose verdict moves under some offset."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest

from ratecheck import registry
from ratecheck.claims import PROFILES
from ratecheck.interfaces.cli import main
from ratecheck.model.store import Store
from ratecheck.runner.sweep import check_claims, seeded
from ratecheck.trace import RunConfig

ROOT = Path(__file__).resolve().parent.parent
QUICK = PROFILES["quick"]


def _tool():
    spec = importlib.util.spec_from_file_location("seed_stability", ROOT / "tools" / "seed_stability.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _decide(claim_id: str, offset: int, store: Store):
    profile = dataclasses.replace(QUICK, seed_offset=offset)
    return check_claims(registry.select_claims(claim_id), profile, store=store, progress=False)[0]


def test_seeded_shifts_monte_carlo_runs_only():
    mc = RunConfig("fedavg", {}, "quadratic", {}, 5, seed=2)
    assert seeded(mc, 0) is mc
    assert seeded(mc, 1000).seed == 1002 and seeded(mc, 1000).key() != mc.key()
    exact = RunConfig("fedavg", {}, "quadratic", {}, 5, seed=2, mode="exact")
    assert seeded(exact, 1000) is exact  # expectations: no draw enters them


def test_a_check_under_an_offset_runs_other_draws_and_decides_the_same_claim(tmp_path):
    store = Store(tmp_path)
    base, shifted = (_decide("fessgda.cost.smoothed_agda", k, store) for k in (0, 1000))
    assert base.verdict == shifted.verdict and str(base.verdict) == "PASS"
    (run0,), (run1,) = ([p.trace.config for p in o.points] for o in (base, shifted))
    assert run1.seed == run0.seed + 1000 and run1.with_(seed=run0.seed) == run0
    assert base.points[0].config == shifted.points[0].config  # the claim's own configuration is unchanged
    again = _decide("fessgda.cost.smoothed_agda", 1000, store)
    assert again.runs == {"reused": 1, "computed": 0}  # stored under the shifted run's key


def test_a_replay_oracle_replays_the_draws_of_the_shifted_run(tmp_path):
    # Algorithm 2 replayed with the run's own client draws: under an offset it must read the run's seed
    outcome = _decide("strfedavg.oracle.ipir_fedavg_replay", 1000, Store(tmp_path))
    assert str(outcome.verdict) == "PASS" and outcome.points[0].trace.config.seed == 1000


def test_the_cli_refuses_a_negative_offset_by_its_declaration(capsys):
    assert main(["check", "fessgda.cost.fsgda", "--seed-offset", "-1", "--no-report", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "seed_offset" in err and "-1" in err and ">= 0" in err


def test_the_cli_reports_its_offset(capsys):
    assert main(["check", "fessgda.cost.fsgda", "--seed-offset", "7", "--json", "--no-report", "--no-cache",
                 "--jobs", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["seed_offset"] == 7


def test_flips_names_a_claim_off_its_expected_verdict_under_some_offset():
    tool = _tool()
    ok = {"verdict": "PASS", "expected": "PASS", "reason": ""}
    bad = {"verdict": "INCONCLUSIVE", "expected": "PASS", "reason": "CI straddles"}
    columns = {"1000": {"a": ok, "b": ok}, "2000": {"a": ok, "b": bad}, "0 (base)": {"b": ok}}
    found = tool.flips(columns, frozenset({"0 (base)"}))
    assert list(found) == ["b"] and found["b"]["by_offset"]["2000"] == bad
    assert list(tool.flips({"1000": {"a": ok}, "2000": {}})) == ["a"]  # a check that did not decide it


@pytest.mark.parametrize("offsets", [["5", "5"], ["-3"]])
def test_the_tool_refuses_bad_offsets(offsets):
    with pytest.raises(SystemExit):
        _tool().main(["x", "--offsets", *offsets])


def test_a_cost_summary_that_replays_draws_reads_the_shifted_run(tmp_path):
    # ShroFBO's cost replays each replica's client sets: under an offset it must replay the run's own seed
    outcome = _decide("simfbo.cost.shrofbo", 1000, Store(tmp_path))
    assert str(outcome.verdict) == "PASS", outcome.reason
    assert outcome.points[0].trace.config.seed == outcome.points[0].config.seed + 1000


def test_hunt_restarts_under_offsets_share_no_seed():
    from ratecheck.seeding import restart_seed

    assert [restart_seed(3, r) for r in range(4)] == [3, 4, 5, 6]  # offset 0: the registered searches
    shifted = {(k, r): restart_seed(0, r, k) for k in (1, 2, 1000, 2000) for r in range(4)}
    # seed + restart + offset made offsets 1 and 2 share three restarts; drawn seeds share none, and lie
    # above every registered seed + restart
    assert len(set(shifted.values())) == len(shifted) and min(shifted.values()) >= 2**64
    assert restart_seed(0, 1, 1000) == restart_seed(0, 1, 1000) != restart_seed(1, 0, 1000)


def test_the_tool_validates_through_the_declarations():
    tool = _tool()
    args = tool.argparse.Namespace(offsets=[1000, -1], jobs=1)
    assert "seed_offset = -1" in tool.option_problems(args) and ">= 0" in tool.option_problems(args)
    assert "jobs = 0" in tool.option_problems(tool.argparse.Namespace(offsets=[1], jobs=0))
    assert tool.option_problems(tool.argparse.Namespace(offsets=[0, 1000], jobs=1)) is None
