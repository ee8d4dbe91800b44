"""RateClaim against the exact asymptotic rate as an eigenvalue (issue #21): FESS-GDA A6's round
(Algorithm 1 with smoothing, linear on the quadratic) probed by exact mode, its moment map's spectral
radius held to the paper's recursion 2 log rho(F) (hand-written in proofs/fessgda) at round-off, and
the two ways the check can fail: a radius that is not the recursion's, a theorem rate faster than it."""

import dataclasses

import pytest

from proofs.fessgda.claims import A6_SMOOTHED_RATE, spectral_log_rate
from ratecheck.claims import PROFILES, Verdict
from ratecheck.exact.rates import config_log_rate
from ratecheck.sweep import check_claims

PROFILE = PROFILES["quick"]


def _decide(claim):
    return check_claims([claim], PROFILE, progress=False)[0]


def test_probed_radius_is_the_papers_recursion():
    config = A6_SMOOTHED_RATE.runs(PROFILE)[0]
    assert config_log_rate(config) == pytest.approx(spectral_log_rate(config), rel=1e-9)
    outcome = _decide(A6_SMOOTHED_RATE)
    assert outcome.verdict == Verdict.PASS and "eigenvalue of the moment map" in outcome.reason
    assert outcome.evidence["rows"][0]["spectral"] == pytest.approx(spectral_log_rate(config), rel=1e-9)


def test_a_radius_off_by_a_percent_fails():
    off = dataclasses.replace(A6_SMOOTHED_RATE, spectral=lambda config: 1.01 * config_log_rate(config))
    outcome = _decide(off)
    assert outcome.verdict == Verdict.FAIL and "spectral radius differs" in outcome.reason


def test_a_theorem_rate_faster_than_the_exact_one_fails():
    exact = config_log_rate(A6_SMOOTHED_RATE.runs(PROFILE)[0])
    too_fast = dataclasses.replace(A6_SMOOTHED_RATE, guaranteed=lambda point: 1.5 * exact)
    outcome = _decide(too_fast)
    assert outcome.verdict == Verdict.FAIL and "faster than the exact asymptotic contraction" in outcome.reason
    slow = dataclasses.replace(A6_SMOOTHED_RATE, guaranteed=lambda point: 0.5 * exact)
    row = _decide(slow).evidence["rows"][0]
    assert row["spectral_tightness"] == pytest.approx(2.0, rel=1e-12)


def test_a_rate_exact_mode_cannot_give_is_inconclusive_not_a_crash():
    """A round exact mode does not vouch time-invariant (a broken variant, say) raises NotExact in the
    spectral check: the claim still decides on the rest, and with nothing failed it does not PASS."""
    from ratecheck.exact import NotExact

    def refuses(config):
        raise NotExact("the round's map is not vouched time-invariant: no single spectral radius")

    outcome = _decide(dataclasses.replace(A6_SMOOTHED_RATE, spectral=refuses))
    assert outcome.verdict == Verdict.INCONCLUSIVE and "no exact asymptotic rate" in outcome.reason
