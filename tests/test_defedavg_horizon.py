"""Rounds to eps by bisection on the horizon (ratecheck.runner.horizon; DeFedAvg P1-f, issue #12)."""

import math

import pytest

from ratecheck.claims import PROFILES, Verdict
from ratecheck.proofs.defedavg.horizon import T2_ROUNDS_TO_EPS, t2_min_at
from ratecheck.runner.horizon import smallest_horizon


@pytest.mark.parametrize("guess", [1, 7, 300, 5000, 10**6])
def test_search_ends_on_the_smallest_integer_from_any_start(guess):
    measure = lambda t: 3.0 / math.sqrt(t) + 0.5 / t  # noqa: E731  (falls with T)
    found = smallest_horizon(measure, 0.05, guess)
    assert measure(found.rounds) <= 0.05 < measure(found.rounds - 1)
    assert found.runs <= 25  # secant bracketing + interpolated bisection, not a scan


def test_search_reports_the_limits():
    assert smallest_horizon(lambda t: 1.0 / t, 2.0, 50).rounds == 1  # already there at T = 1
    capped = smallest_horizon(lambda t: 1.0, 0.5, 10, high=100)
    assert capped.capped and capped.rounds == 100
    assert smallest_horizon(lambda t: math.nan if t < 40 else 0.0, 0.5, 3).rounds == 40  # diverged = above
    with pytest.raises(ValueError, match="target"):
        smallest_horizon(lambda t: 1.0, 0.0, 1)


@pytest.mark.claims  # decides registered claim T2_ROUNDS_TO_EPS on its own runs
def test_rounds_to_eps_fall_like_one_over_n_until_t2_min_dominates():
    outcome = T2_ROUNDS_TO_EPS.decide(PROFILES["quick"], {})
    assert outcome.verdict == Verdict.PASS, outcome.reason
    rows = {r["value"]: r for r in outcome.evidence["rows"]}
    for n, row in rows.items():
        # kept exactly where (13) holds at the rounds found: T >= T2_min, the theorem's own formula
        assert row["in_fit"] == (row["rounds"] >= t2_min_at(n, PROFILES["quick"]))
        assert row["measure"] <= T2_ROUNDS_TO_EPS.target < row["measure_before"]
    assert [n for n, r in rows.items() if not r["in_fit"]] == [32, 64]  # the regime where T2_min dominates
    assert outcome.evidence["exact"] is True and abs(outcome.evidence["fit"]["slope"] + 1) < 0.1


def _one_update(n, t, profile):
    from ratecheck.proofs.defedavg import horizon as h

    config = h.p1f_config(n, t, profile)  # eta scaled for n updates ...
    return config.with_(params={**config.params, "participation": "without_replacement:1"})  # ... one used


@pytest.mark.claims  # decides registered claim T2_ROUNDS_TO_EPS on a broken variant
def test_a_speedup_that_is_not_there_fails():
    """A server that steps with the n-scaled eta on one update only: its noise is not averaged, the
    rounds to eps stop falling like 1/n (flat here), and the claim turns unexpected: an exact flat curve
    that is no power law is a regime change for SlopeClaim (INCONCLUSIVE, the reason says so)."""
    import dataclasses

    broken = dataclasses.replace(T2_ROUNDS_TO_EPS, configure_at=_one_update, smallest_admissible=None)
    outcome = broken.decide(PROFILES["quick"], {})
    assert not outcome.ok and outcome.verdict != Verdict.PASS, outcome.reason
    assert abs(outcome.evidence["fit"]["slope"] + 1) > 0.5


@pytest.mark.claims  # check_claims on registered claim T2_ROUNDS_TO_EPS, twice
def test_the_bisection_runs_through_the_store_and_a_rerun_reuses_every_run(tmp_path):
    """Issue #19: the search yields its next horizon to the sweep; decide reads stored runs only."""
    from ratecheck.model.store import Store
    from ratecheck.runner.sweep import check_claims

    store = Store(tmp_path)
    first, stats = check_claims([T2_ROUNDS_TO_EPS], PROFILES["quick"], store=store, progress=False), {}
    (again,) = check_claims([T2_ROUNDS_TO_EPS], PROFILES["quick"], store=store, progress=False, stats=stats)
    (first,) = first
    assert first.runs["computed"] == first.evidence["runs"] > 0 and first.runs["reused"] == 0
    assert stats == {"reused": first.evidence["runs"], "computed": 0} and again.runs["computed"] == 0
    assert again.to_dict()["evidence"] == first.to_dict()["evidence"] and again.verdict == first.verdict
