"""ratecheck mutate's categories and its two scores (issue #23 item 4): a mutant whose runs raise is
"raises", apart from a verdict lost to INCONCLUSIVE or an erratum's FAIL lost ("caught"); the strict score
counts every non-equivalent mutant, the power score only those that run to completion; a search's wall
seconds never make an equivalent mutant a survivor; a survivor says where its numbers moved; a run that
raised is traced to the mutant's line (or found downstream of it)."""

from types import SimpleNamespace

import pytest

from ratecheck.mutate import runner
from ratecheck.mutate.scoring import RUN_FAILED, STATUSES, classify, figures, moved, score, text
from ratecheck.trace import RunConfig


def _outcome(claim, verdict, mean=1.0, reason="", **evidence):
    return {"claim": claim, "verdict": verdict, "reason": reason, "evidence": evidence,
            "points": [{"mean": mean, "config_key": "k"}], "runs": {"computed": 1}}


BASE = {"a": _outcome("a", "PASS"), "b": _outcome("b", "FAIL"), "c": _outcome("c", "PASS")}
RAISED = f"{RUN_FAILED}: ValueError: operands could not be broadcast together"


def test_the_reason_of_a_failed_run_is_the_one_the_sweep_gives():
    from ratecheck.runner.sweep import _error

    claim = SimpleNamespace(id="x")
    assert _error(claim, "ValueError: boom").reason.startswith(RUN_FAILED)  # type: ignore[arg-type]


def test_a_mutant_whose_runs_raise_is_not_a_lost_verdict():
    every = [_outcome("a", "ERROR", reason=RAISED), _outcome("b", "ERROR", reason=RAISED), _outcome("c", "PASS")]
    status, by = classify(BASE, every)
    assert status == "raises" and [c["claim"] for c in by] == ["a", "b"]  # an erratum's FAIL lost the same way
    assert by[0]["reason"] == RAISED
    decide = [_outcome("a", "ERROR", reason="broken claim: its decide raised ZeroDivisionError"), *every[1:]]
    assert classify(BASE, decide)[0] == "caught"  # the runs ended: a claim broke on the mutant's numbers
    lost = [_outcome("a", "ERROR", reason=RAISED), _outcome("b", "FAIL"), _outcome("c", "INCONCLUSIVE")]
    assert classify(BASE, lost)[0] == "caught"  # one run completed and moved a verdict: not only a raise
    assert classify(BASE, [_outcome("a", "FAIL"), _outcome("b", "ERROR", reason=RAISED)])[0] == "caught by FAIL"
    assert classify(BASE, [_outcome("a", "ERROR", reason=RAISED)], "timeout", complete=False)[0] == "timeout"
    assert classify(BASE, [_outcome("a", "PASS"), _outcome("b", "PASS"), _outcome("c", "PASS")])[0] == "caught"
    assert STATUSES.index("raises") < STATUSES.index("survived")
    moved_too = [_outcome("a", "ERROR", reason=RAISED), _outcome("b", "FAIL"), _outcome("c", "PASS", mean=1.5)]
    assert classify(BASE, moved_too)[0] == "caught"  # a silent wrong number beside the raise counts for power


def test_strict_and_power_scores_side_by_side():
    statuses = ["caught by FAIL"] * 6 + ["raises"] * 3 + ["caught", "broken", "timeout", "crashed", "survived"] \
        + ["equivalent"] * 2
    s = score([{"status": st} for st in statuses])
    assert s["non_equivalent"] == 14 and s["completed"] == 8  # 14 less 3 raises, 1 broken, 1 timeout, 1 crashed
    assert s["strict"] == s["score"] == pytest.approx(6 / 14) and s["power"] == pytest.approx(6 / 8)
    assert s["detected"] == pytest.approx(13 / 14) and s["raises"] == 3
    line = figures(s)
    assert "strict 6/14 = 43%" in line and "power 6/8 = 75%" in line and "3 raises" in line
    empty = score([{"status": "raises"}])
    assert empty["strict"] == 0 and empty["power"] is None and "power 0/0 = n/a" in figures(empty)


def test_a_search_s_wall_seconds_do_not_make_a_survivor_and_a_survivor_says_where_it_moved():
    base = {"h": _outcome("h", "PASS", hunt={"seconds": 1.14, "best": 0.5})}
    again = [_outcome("h", "PASS", hunt={"seconds": 2.71, "best": 0.5})]  # recomputed under a mutant's identity
    assert classify(base, again)[0] == "equivalent"
    other = [_outcome("h", "PASS", mean=1.5, hunt={"seconds": 2.71, "best": 0.5})]
    assert classify(base, other)[0] == "survived"
    assert moved(base, other) == [{"claim": "h", "at": "points[0].mean", "baseline": 1.0, "mutant": 1.5}]


def test_the_summary_names_both_scores_and_how_a_mutant_raised():
    record = {"id": "m:3:1:constant", "index": 0, "kind": "constant", "line": 3, "before": "1", "after": "2",
              "status": "raises", "decided": 2, "seconds": 1.0, "scope": "", "diff": "",
              "caught_by": [{"claim": "a", "baseline": "PASS", "verdict": "ERROR", "reason": RAISED}],
              "raised": {"exception": "IndexError: index 3 is out of bounds", "line": 3, "at": "m.py:3"}}
    result = {"module": "m", "path": "m.py", "mutants_run": 1, "mutants_found": 1, "seed": 0, "claims": ["a", "b"],
              "profile": "quick", "timeout": 60, "seconds": 1, "all_claims": False, "mutants": [record],
              "score": score([record])}
    out = text(result)
    assert "raises by a (PASS -> ERROR)" in out and "IndexError: index 3 is out of bounds at line 3 of the mutant" in out
    assert "strict 0/1 = 0%" in out and "power 0/0 = n/a" in out


def _raise_in(path, code):
    """Run ``code`` compiled as the file ``path`` and return the exception it raises."""
    try:
        exec(compile(code, str(path), "exec"), {})
    except Exception as exc:
        return exc
    raise AssertionError("no exception")


def test_where_a_run_raised_in_the_mutant_or_downstream(tmp_path):
    mutant = tmp_path / "mutant.py"
    inside = _raise_in(mutant, "import numpy as np\nx = np.zeros(3)\ny = x[3]\n")
    assert runner._where(inside, mutant.resolve()) == {
        "exception": "IndexError: index 3 is out of bounds for axis 0 with size 3", "line": 3, "at": "mutant.py:3"}
    below = _raise_in(mutant, "import numpy as np\nnp.ones((3, 6)) + np.ones(3)\n")  # raised inside numpy's C code
    assert runner._where(below, mutant.resolve())["line"] == 2
    elsewhere = _raise_in(tmp_path / "problem.py", "1 / 0\n")
    assert runner._where(elsewhere, mutant.resolve()) == {"exception": "ZeroDivisionError: division by zero",
                                                          "line": None, "at": "problem.py:1"}


def test_the_runner_reruns_a_failed_run_to_find_where_it_raised(tmp_path, monkeypatch):
    """Only runs the store lacks are re-run (a run that raised is never stored), only for claims that turned
    ERROR because a run failed, at most TRIES of them."""
    import ratecheck.simulate.engine as engine
    from ratecheck.mutate.hook import ENV

    mutant = tmp_path / "mutant.py"
    monkeypatch.setenv(ENV, f"some.module={mutant}")
    configs = [RunConfig("fedavg", {"eta": e}, "quadratic", {}, rounds=2) for e in (0.1, 0.2, 0.3, 0.4, 0.5)]
    stored = {configs[0].key()}
    ran = []

    def run_config(config):
        ran.append(config.params["eta"])
        if config.params["eta"] == 0.3:
            raise _raise_in(mutant, "import numpy as np\nnp.zeros(2)[5]\n")
        return None

    monkeypatch.setattr(engine, "run_config", run_config)
    store = SimpleNamespace(get=lambda key: object() if key in {c.key() for c in configs if c.key() in stored} else None)
    monkeypatch.setattr("ratecheck.runner.identity.stored_key", lambda config: config.key())
    claims = [SimpleNamespace(id="a", runs=lambda profile: configs)]
    profile = SimpleNamespace(seed_offset=0)
    outcomes = [_outcome("a", "ERROR", reason=RAISED)]
    raised = runner._raised(claims, outcomes, {"a": "PASS"}, profile, store)
    assert ran == [0.2, 0.3] and raised is not None and raised["line"] == 2 and raised["exception"].startswith("IndexError")
    ran.clear()
    assert runner._raised(claims, outcomes, {"a": "ERROR"}, profile, store) is None and not ran  # was ERROR already
    decide = [_outcome("a", "ERROR", reason="broken claim: its decide raised KeyError")]
    assert runner._raised(claims, decide, {"a": "PASS"}, profile, store) is None and not ran
    stored.update(c.key() for c in configs[:3])
    assert runner._raised(claims, outcomes, {"a": "PASS"}, profile, store) is None and ran == [0.4, 0.5]
