"""DeFedAvg's run modes (issue #8): exact claims in the quick profile, Monte-Carlo twins in the full one."""

import dataclasses

import pytest

from proofs.defedavg import asynchronous as a
from proofs.defedavg import claims as c
from ratecheck.claims import PROFILES, Verdict
from ratecheck.sweep import check_claims

QUICK, FULL = PROFILES["quick"], PROFILES["full"]


@pytest.mark.parametrize("claim", [c.T1_SPEEDUP_N, c.T2_SPEEDUP_N, c.T2_RATE_T, c.T2_SPEEDUP_K, c.T2_FLOOR_VALUE,
                                   c.T2_FLOOR_SLOPE, a.FLOOR_VS_DELAY, a.SAMPLING_FLOOR_VALUE, a.SAMPLING_FLOOR_SLOPE],
                         ids=lambda claim: claim.id)
def test_exact_claims_and_their_twins(claim):
    twin = {t.id: t for t in c.CLAIMS + a.CLAIMS}[claim.id + ".monte_carlo"]
    assert all(config.mode == "exact" for config in claim.own_runs(QUICK) + claim.own_runs(FULL))
    if claim in (a.FLOOR_VS_DELAY, a.SAMPLING_FLOOR_VALUE, a.SAMPLING_FLOOR_SLOPE):
        # about delays and sampling: drawn in the quick profile too (exact mode does not read schedule())
        assert all(config.mode == "monte_carlo" for config in twin.own_runs(QUICK))
    else:
        # quick: the twin reads the same exact runs (no extra cost)
        assert [x.key() for x in twin.own_runs(QUICK)] == [x.key() for x in claim.own_runs(QUICK)]
    # full: Monte Carlo with the profile's replicas
    assert all(config.mode == "monte_carlo" and config.replicas == FULL.replicas for config in twin.own_runs(FULL))


def test_bounds_are_exact_when_quick_and_monte_carlo_in_full():
    for claim in (c.T1_BOUND_STATED, c.T2_BOUND_CORRECTED, c.T2_BOUND_MAIN_TEXT, c.T2_BOUND_LAM4, c.FEDAVG_DRIFT_LIMIT):
        assert {x.mode for x in claim.own_runs(QUICK)} == {"exact"}
        assert {x.mode for x in claim.own_runs(FULL)} == {"monte_carlo"}


def test_tolerances_exact_tighter_than_monte_carlo():
    for claim in (c.T1_SPEEDUP_N, c.T2_SPEEDUP_N, c.T2_RATE_T, c.T2_SPEEDUP_K):
        assert claim.tolerance == 0.05 < claim.mc_tolerance == 0.1
    assert c.T2_FLOOR_VALUE.rel_tolerance == 1e-9 < c.T2_FLOOR_VALUE.mc_rel_tolerance


@pytest.mark.parametrize("mode", ["exact", "monte_carlo"])
def test_the_sampling_floor_in_both_modes(mode):
    """The same claim on one point, exact and Monte Carlo: both PASS, each with its own tolerance."""
    claim = dataclasses.replace(a.SAMPLING_FLOOR_VALUE, grid={"quick": (4,)},
                                configure=lambda v, p: a.sampling_config(v, p, mode=mode))
    outcome = check_claims([claim], QUICK, progress=False)[0]
    assert outcome.verdict == Verdict.PASS, outcome.reason
    used = outcome.evidence["tolerance_used"]
    assert used["name"] == mode
    assert used["value"] == (1e-9 if mode == "exact" else 0.1)
    assert outcome.evidence["exact"] is (mode == "exact")


def test_exact_floor_catches_a_wrong_factor():
    """A prediction 1e-6 off (far below any Monte-Carlo resolution) FAILS on the exact run."""
    claim = dataclasses.replace(a.SAMPLING_FLOOR_VALUE, grid={"quick": (4,)},
                                predict=lambda config: a.sampling_floor(config) * (1 + 1e-6))
    outcome = check_claims([claim], QUICK, progress=False)[0]
    assert outcome.verdict == Verdict.FAIL, outcome.reason


def test_exact_mode_refuses_event_timelines():
    """An event timeline gives every replica its own random delays, which the moments do not model:
    exact mode must refuse the run (auto falls back to Monte Carlo, saying why), never ignore the
    timeline (it once settled FedBuff at x*, not at its speed-biased point, with lambda_used 1)."""
    from ratecheck.exact import NotExact, model_for
    from ratecheck.inspection import algorithm_of, problem_of

    for name in ("fedbuff", "defedavg_niid_events", "defedavg_iid_events"):
        config = a.bias_config("fedbuff", QUICK).with_(algorithm=name) if name != "fedbuff" else a.bias_config(name, QUICK)
        with pytest.raises(NotExact, match="timeline|probe states"):
            model_for(algorithm_of(config), problem_of(config), 10)
