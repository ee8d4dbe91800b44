"""ratecheck hunt (issue #13): the search, its determinism, the CLI, the registered hunts."""

from __future__ import annotations

import json

import pytest
import sympy as sp
from hypothesis import given, settings

from ratecheck.claims import PROFILES, Verdict
from ratecheck.interfaces.cli import main
from ratecheck.problems.quadratic import make, strategy
from ratecheck.proofs.defedavg.hunts import HUNT_CORRECTED, HUNT_MAIN_TEXT, THEOREM_2_SPACE
from ratecheck.runner.hunt import hunt, reproduce_command, smallest_admissible
from ratecheck.theory import Bound, Condition, Source, Theorem

T, a = sp.symbols("T a", positive=True)
SRC = Source("toy.txt", "Thm 1")
TOY = Theorem(id="toy", title="toy", source=SRC, measure="m", constants=(a,), parameters=(T,),
              conditions=(Condition("T large", a / T <= 1, SRC),), bounds=(Bound("b", a / T, SRC),))


def test_smallest_admissible_is_the_first_horizon_meeting_the_conditions():
    assert smallest_admissible(TOY, {"a": 37.0}, "T") == 37
    assert smallest_admissible(TOY, {"a": 0.5}, "T") == 1
    assert smallest_admissible(TOY, {"a": 1e12}, "T", high=1000) is None


@settings(max_examples=25, deadline=None, derandomize=True)
@given(strategy())
def test_quadratic_strategy_draws_buildable_instances(params):
    problem = make(**params)
    assert problem.dim == params["dim"] and problem.num_clients == params["clients"]


def test_main_text_bound_breaks_and_shrinks_deterministically():
    first = hunt(THEOREM_2_SPACE, "main_text", examples=24, seed=0)
    again = hunt(THEOREM_2_SPACE, "main_text", examples=24, seed=0)
    assert first.found and first.best.breaks and first.ratio > 1
    assert first.best.instance == again.best.instance  # same seed, same counterexample
    assert all(c.holds for c in first.best.evaluation.conditions)  # inside the theorem's conditions
    command = first.command
    assert command.startswith("ratecheck run defedavg_iid --problem quadratic") and command.endswith("--exact")
    assert reproduce_command(first.best.config) == command


def test_corrected_bound_survives_the_same_search():
    result = hunt(THEOREM_2_SPACE, "corrected", examples=24, seed=0)
    assert not result.found and result.examples > 5 and 0 < result.ratio < 1


def test_registered_hunts_give_their_expected_verdicts():
    main_text = HUNT_MAIN_TEXT.decide(PROFILES["quick"], {})
    assert main_text.verdict == Verdict.FAIL and main_text.ok and main_text.erratum
    assert "counterexample" in main_text.reason and "reproduce: ratecheck run" in main_text.reason
    corrected = HUNT_CORRECTED.decide(PROFILES["quick"], {})
    assert corrected.verdict == Verdict.PASS and corrected.ok
    json.dumps(corrected.to_dict())  # JSON-able evidence


def test_cli_hunt_json_and_bad_input(capsys, tmp_path):
    assert main(["hunt", "defedavg.theorem2", "--bound", "main_text", "--examples", "12", "--json",
                 "--cache-dir", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["found"] is True and out["ratio"] > 1 and out["command"] and out["conditions"]
    assert {"instance", "conditions", "command", "found", "ratio"} <= set(out)
    assert main(["hunt", "no.such.theorem", "--cache-dir", str(tmp_path)]) == 2
    assert main(["hunt", "defedavg.theorem2", "--bound", "nope", "--cache-dir", str(tmp_path)]) == 2
    assert main(["hunt", "defedavg.theorem2", "--examples", "0", "--cache-dir", str(tmp_path)]) == 2


def test_unknown_version_is_refused():
    with pytest.raises(ValueError, match="no_such_version"):
        hunt(THEOREM_2_SPACE, "no_such_version", examples=1)


def test_best_instance_trajectory_is_in_the_evidence_and_drawn_in_the_report(tmp_path):
    """Issue #13 item 3: the report plots measure against bound along the best instance's run."""
    from ratecheck.proofs.defedavg import PAPER
    from ratecheck.report import write_report

    outcome = HUNT_MAIN_TEXT.decide(PROFILES["quick"], {})
    tr = outcome.evidence["trajectory"]
    hunt_best = outcome.evidence["hunt"]["best"]
    assert tr["found"] and tr["version"] == "main_text" and tr["exact"]
    assert tr["horizon"] == hunt_best["config"]["rounds"] == tr["rounds"][-1]
    assert len(tr["rounds"]) == len(tr["mean"]) == len(tr["bound"]) >= 5
    # the last checkpoint is the run the search judged: its measure and bound are the hunt's
    assert tr["mean"][-1] == pytest.approx(hunt_best["mean"]) and tr["bound"][-1] == pytest.approx(hunt_best["bound"])
    assert tr["mean"][-1] > tr["bound"][-1]  # a counterexample: above the bound at its horizon
    # the bound at T = t with the instance's own constants (L, sigma, Delta, n, K, lambda): it falls with t
    assert all(a > b for a, b in zip(tr["bound"], tr["bound"][1:]))
    json.dumps(outcome.to_dict())

    index = write_report([outcome], tmp_path, profile=PROFILES["quick"], papers={"defedavg": PAPER}, jobs=1)
    page = (index.parent / "defedavg.md").read_text()
    figure = tmp_path / "defedavg" / "defedavg_hunt_T2_main_text_trajectory.svg"  # SVG by default (issue #18)
    assert figure.exists() and figure.stat().st_size > 1000
    assert "defedavg/defedavg_hunt_T2_main_text_trajectory.svg" in page
    assert "along the run of the counterexample" in page


def test_probe_ratio_at_a_zero_bound():
    """A zero bound met by a zero measure is ratio 0 (held), not inf (the search would call it best)."""
    from ratecheck.runner.hunt import Probe

    fields = {f.name for f in __import__("dataclasses").fields(Probe)}
    base = {name: None for name in fields} | {"roundoff": 0.0}
    held = Probe(**{**base, "mean": 0.0, "bound": 0.0, "lcb": 0.0})
    broken = Probe(**{**base, "mean": 1e-3, "bound": 0.0, "lcb": 1e-3})
    assert held.ratio == 0.0 and not held.breaks
    assert broken.ratio == float("inf") and broken.breaks
    # a space's round-off floor: exact runs at rest give +-1e-17 against a bound of 0 (or -1e-15)
    at_rest = Probe(**{**base, "mean": 3e-17, "bound": -1e-15, "lcb": 3e-17, "roundoff": 1e-12})
    assert at_rest.ratio == 0.0 and not at_rest.breaks
    assert Probe(**{**base, "mean": 2e-12, "bound": 0.0, "lcb": 2e-12, "roundoff": 1e-12}).breaks


def test_search_ignores_constants_of_loaded_modules():
    """hypothesis mixes constants from every loaded local module into its draws; a hunt must not depend
    on what happens to be imported, so inside a search there are none (and they are back after)."""
    from hypothesis.internal.conjecture import providers

    from ratecheck.runner.hunt import _without_local_constants

    original = providers._get_local_constants
    with _without_local_constants():
        assert len(providers._get_local_constants()) == 0
    assert providers._get_local_constants is original
