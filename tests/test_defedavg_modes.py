"""DeFedAvg's run modes (issue #8): exact claims in the quick profile, Monte-Carlo twins in the full one."""

import dataclasses

import numpy as np
import pytest

from ratecheck.claims import PROFILES, Verdict
from ratecheck.inspection import view
from ratecheck.proofs.defedavg import asynchronous as a
from ratecheck.proofs.defedavg import claims as c
from ratecheck.runner.sweep import check_claims

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
        # quick: rereading the exact runs would test no Monte Carlo, so the twin is a claim of the full profile only
        assert not twin.in_profile(QUICK) and claim.in_profile(QUICK) and twin.in_profile(FULL)
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


@pytest.mark.claims  # check_claims on registered claim SAMPLING_FLOOR_VALUE (one grid point) in each mode
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


@pytest.mark.claims  # check_claims on a broken variant of registered claim SAMPLING_FLOOR_VALUE
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


def _forward_schedule_floor(config) -> float:
    """The same floor by iterating the second moment from x* round by round over the whole run."""
    run = view(config)
    problem, delay, part = run.problem, run.param("delay"), run.param("participation")
    lam, n, N, K = run.delay_lambda, run.participating, problem.num_clients, run.local_steps
    eta, etabar = run.param("eta_global"), run.param("eta_local")
    t0, total = a.tail_window(config)
    floor = 0.0
    for h in np.linalg.eigvalsh(problem.h_bar):
        q = 1.0 - etabar * h
        beta = eta * (1.0 - q**K)
        noise = (eta * etabar) ** 2 / n * (problem.sigma**2 / problem.dim) * np.sum(q ** (2 * np.arange(K)))
        s, acc, operators = np.zeros((lam + 1) ** 2), 0.0, {}
        for t in range(total):
            acc += s[0] if t >= t0 else 0.0
            p, cov = a.delay_fractions(delay.kind, lam, N, n, part.mode, t)
            key = (p.tobytes(), cov.tobytes())  # rounds with the same fractions share one operator (speed only)
            if key not in operators:
                operators[key] = a._round_operator(beta, p, cov)
            s = operators[key] @ s
            s[0] += noise
        floor += h**2 * acc / (total - t0)
    return floor


@pytest.mark.parametrize("kind", ["uniform", "cyclic", "per_client"])
def test_schedule_floor_is_the_forward_second_moment(kind):
    """The stationary (periodic) fixed point matches a round-by-round iteration from x* (build-up included)."""
    config = a.schedule_config(kind, PROFILES["quick"])
    assert a.schedule_floor(config) == pytest.approx(_forward_schedule_floor(config), rel=1e-12)


@pytest.mark.parametrize("delay", ["none", "constant:1", "constant:4"])
def test_schedule_floor_reduces_to_the_constant_delay_lyapunov_floor(delay):
    config = a.flat_config(delay, PROFILES["quick"], steps=a.SCHEDULE_STEPS)
    run = view(config)
    expected = c.lyapunov_noise_floor(
        np.linalg.eigvalsh(run.problem.h_bar), eta=run.param("eta_global"), etabar=run.param("eta_local"),
        K=run.local_steps, n=run.participating, delay=run.delay_lambda, sigma2=run.problem.sigma**2,
        dim=run.problem.dim)
    assert a.schedule_floor(config) == pytest.approx(expected, rel=1e-12)


def test_schedule_floors_separate_by_many_tolerances():
    """The three schedules, delay 0 and constant lambda give floors far apart at the exact tolerance
    (and delay 0 / constant lambda outside the Monte-Carlo twins' 10% band too)."""
    quick = PROFILES["quick"]
    floors = {kind: a.schedule_floor(a.schedule_config(kind, quick)) for kind in ("uniform", "cyclic", "per_client")}
    zero = a.schedule_floor(a.flat_config("none", quick, steps=a.SCHEDULE_STEPS))
    top = a.schedule_floor(a.flat_config(f"constant:{a.SCHEDULE_LAMBDA}", quick, steps=a.SCHEDULE_STEPS))
    values = sorted([*floors.values(), zero, top])
    gaps = [hi / lo - 1 for lo, hi in zip(values, values[1:])]
    assert min(gaps) > 1e5 * c.FLOOR_REL_TOLERANCE
    for floor in floors.values():
        assert floor / zero > 1.3 and top / floor > 1.5
