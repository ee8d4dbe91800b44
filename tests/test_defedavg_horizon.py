"""Rounds to eps by bisection on the horizon (ratecheck.horizon; DeFedAvg P1-f, issue #12)."""

import math

import pytest

from proofs.defedavg.horizon import T2_ROUNDS_TO_EPS, t2_min_at
from ratecheck.claims import PROFILES, Verdict
from ratecheck.horizon import smallest_horizon


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


def test_a_speedup_that_is_not_there_fails():
    """Rounds that fall like n^-1/2 only (as if the server used sqrt(n) of the n updates) FAIL the band."""
    import dataclasses

    from proofs.defedavg import horizon as h

    flat = dataclasses.replace(T2_ROUNDS_TO_EPS, configure_at=lambda n, t, p: h.p1f_config(math.ceil(math.sqrt(n)), t, p),
                               smallest_admissible=None, regime=None)
    outcome = flat.decide(PROFILES["quick"], {})
    assert outcome.verdict == Verdict.FAIL, outcome.reason
    assert -0.7 < outcome.evidence["fit"]["slope"] < -0.3
