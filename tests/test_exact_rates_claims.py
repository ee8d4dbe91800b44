"""RateClaim against the exact asymptotic rate as an eigenvalue (issue #21): FESS-GDA A6's round
(Algorithm 1 with smoothing, linear on the quadratic) probed by exact mode, its moment map's spectral
radius held to the paper's recursion 2 log rho(F) (hand-written in proofs/fessgda) at round-off, and
the two ways the check can fail: a radius that is not the recursion's, a theorem rate faster than it."""

import dataclasses

import pytest

from ratecheck.claims import PROFILES, Verdict
from ratecheck.exact.rates import config_log_rate
from ratecheck.proofs.fessgda.claims import A6_SMOOTHED_RATE, spectral_log_rate
from ratecheck.runner.sweep import check_claims

# every test decides registered claim A6_SMOOTHED_RATE or A1_RATE_VS_STEP on its own runs, on the code or on
# a broken variant
pytestmark = pytest.mark.claims
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


def test_rate_against_step_size_passes_and_draws():
    """fessgda.A1.rate_vs_step_size: at every scale of Theorem 3.5's step sizes the probed radius is the
    recursion's, the rate falls with the scale (a faster contraction at larger eta) and the figure
    draws the grid, the theorem's line and the recursion beyond the admissible region."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ratecheck.proofs.fessgda.step_sizes import A1_RATE_VS_STEP, BEYOND

    outcome = _decide(A1_RATE_VS_STEP)
    assert outcome.verdict == Verdict.PASS
    rows = sorted(outcome.evidence["rows"], key=lambda r: r["value"])
    spectral = [r["spectral"] for r in rows]
    assert all(a > b for a, b in zip(spectral, spectral[1:]))  # larger eta, faster contraction
    for r in rows:
        assert r["spectral"] == pytest.approx(r["asymptotic"], rel=1e-8)
        assert r["guaranteed"] > r["spectral"]
    assert [b["value"] for b in outcome.evidence["beyond"]] == list(BEYOND)
    fig, ax = plt.subplots()
    A1_RATE_VS_STEP.draw_plot(ax, outcome, False)
    labels = [line.get_label() for line in ax.get_lines()]
    assert any("Theorem 3.5" in label for label in labels) and any("beyond" in label for label in labels)
    plt.close(fig)


def test_rate_against_step_size_fails_when_the_run_is_not_the_recursion():
    """Runs at half the step sizes the recursion and the theorem are evaluated at (a simulator that
    halves eta): the fitted rate is about half the recursion's and the claim FAILs."""
    from ratecheck.proofs.fessgda.step_sizes import A1_RATE_VS_STEP, scaled_config

    def recursion_at_twice(config, rounds):
        scale = config.params["eta_x_local"] / scaled_config(1.0).params["eta_x_local"]
        return A1_RATE_VS_STEP.exact(scaled_config(2 * scale), rounds)

    broken = dataclasses.replace(A1_RATE_VS_STEP, configure=lambda c, profile: scaled_config(c / 2, profile),
                                 exact=recursion_at_twice)
    outcome = _decide(broken)
    assert outcome.verdict == Verdict.FAIL and "rate differs from the exact one" in outcome.reason
