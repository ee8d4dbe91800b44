"""proofs/defedavg.py: the encodings against the spec's derivations and numbers."""

import math

import numpy as np
import pytest
import sympy as sp

from ratecheck.inspection import constants_of
from ratecheck.proofs import defedavg as d


def test_theorem1_general_form_at_the_schedule_is_10_sqrt_not_32_sqrt():
    """Spec §4.1: at the prescribed step sizes the general form equals
    10 sqrt(Delta A1/(nKT)) + 8L^2(sigma^2+8K nu^2)/(A1 K T); the stated (12) has 32 (3.2x loose)."""
    general = d.THEOREM_1.bound_expr("general")
    A1 = d.A1
    derived = 10 * sp.sqrt(d.Delta * A1 / (d.n * d.K * d.T)) + 8 * d.L**2 * (d.sigma**2 + 8 * d.K * d.nu**2) / (A1 * d.K * d.T)
    values = {d.L: 1.3, d.sigma: 0.7, d.nu: 0.4, d.G: 2.1, d.Delta: 3.0, d.n: 4, d.K: 5, d.T: 7000}
    assert float(general.subs(values)) == pytest.approx(float(derived.subs(values)), rel=1e-12)
    stated_lead = d.THEOREM_1.leading_term("stated", d.T)
    general_lead = d.THEOREM_1.leading_term("general", d.T)
    assert float((stated_lead / general_lead).subs(values)) == pytest.approx(3.2, rel=1e-12)


def test_theorem2_versions_differ_by_sqrt_L_sigma2_and_sigma():
    values = {"L": 4.0, "sigma": 10.0, "Delta": 8.17, "n": 4, "K": 5, "T": 2000, "lam": 2,
              "eta": 1.0, "etabar": 1e-3}
    ev = d.THEOREM_2.evaluate(values, use_schedule=False)
    lead = lambda v: ev.bounds[v] - 8 * 4.0 / (5 * 2000)  # noqa: E731
    assert lead("corrected") / lead("main_text") == pytest.approx(math.sqrt(4.0 * 100.0))
    assert lead("corrected") / lead("appendix") == pytest.approx(10.0)


def test_orders_are_derived_not_typed():
    assert d.THEOREM_2.order("n", version="corrected", dominant_in="T") == sp.Rational(-1, 2)
    assert d.THEOREM_2.order("K", version="corrected", dominant_in="T") == sp.Rational(-1, 2)
    assert d.THEOREM_1.order("n", version="stated", dominant_in="T") == sp.Rational(-1, 2)
    # Theorem 1's leading term does not improve with K when G^2 K dominates (spec §4.1, pitfall 21)
    assert d.THEOREM_1.order("K", version="stated", dominant_in="T") == 0


def test_lyapunov_floor_matches_the_spec_prototype():
    """Spec §6 P1-c: h = (0.2, 0.5, 1), eta = 0.5, etabar = 0.05, K = 5, sigma^2 = 1, d = 3."""
    floor = lambda n, delay: d.lyapunov_noise_floor([0.2, 0.5, 1.0], eta=0.5, etabar=0.05, K=5, n=n,  # noqa: E731
                                                    delay=delay, sigma2=1.0, dim=3)
    np.testing.assert_allclose([floor(n, 0) for n in (1, 4, 16)], [6.89e-3, 1.72e-3, 4.31e-4], rtol=2e-3)
    np.testing.assert_allclose([floor(n, 3) for n in (1, 4, 16)], [9.04e-3, 2.26e-3, 5.65e-4], rtol=2e-3)


def test_scheduled_config_uses_the_theorem_schedule():
    config = d.t2_config(4, 2000, d.PROFILES["quick"])
    const = constants_of(config)
    eta = math.sqrt(4 * 5 * const["Delta"] / 2)
    etabar = 1 / (5 * math.sqrt(const["sigma"] ** 2 * const["L"] * 2000))
    assert config.params["eta_global"] == pytest.approx(eta)
    assert config.params["eta_local"] == pytest.approx(etabar)
    # T >= T2_min = max(48 L/sigma^2, 8 n K L Delta lam^2 / sigma^2) is what makes (13) hold
    t2_min = max(48 * const["L"] / const["sigma"] ** 2, 8 * 32 * 5 * const["L"] * const["Delta"] * 4 / const["sigma"] ** 2)
    assert d.T_FOR_N["quick"] >= t2_min


def test_minimum_T_is_derived_from_the_conditions_and_matches_the_spec():
    """T1_min / T2_min: each condition at the prescribed step sizes solved for T (spec §4.1, §4.2)."""
    from ratecheck.proofs.defedavg import theorems as t

    assert sp.simplify(t.t2_min() - t.T2_MIN_SPEC) == 0
    values = {t.L: 1.3, t.sigma: 0.7, t.nu: 0.4, t.G: 2.1, t.Delta: 3.0, t.n: 4, t.K: 5, t.lam: 3}
    assert float(t.t1_min().subs(values)) == pytest.approx(float(t.T1_MIN_SPEC.subs(values)), rel=1e-12)
    # spec §6 P1: T2_min = 327 n at K = 5, lambda = 2, L = sigma = 1, Delta = 2.0435
    p1_values = {t.L: 1.0, t.sigma: 1.0, t.Delta: 2.0435, t.K: 5, t.lam: 2}
    assert [round(float(t.t2_min().subs({**p1_values, t.n: k}))) for k in (1, 2, 4)] == [327, 654, 1308]


def test_rates_are_derived_term_by_term():
    """O(1/sqrt(nT) + 1/(KT)) for Theorem 1 (stated), O(1/sqrt(nKT) + 1/(KT)) for Theorem 2."""
    from ratecheck.proofs.defedavg import theorems as t

    half = sp.Rational(-1, 2)
    assert sorted(t.rate(t.THEOREM_1, "stated").values()) == sorted([(half, 0, half), (0, -1, -1)])
    assert sorted(t.rate(t.THEOREM_2, "corrected").values()) == sorted([(half, half, half), (0, -1, -1)])
    general = t.at_schedule(t.THEOREM_1)
    values = {d.L: 1.3, d.sigma: 0.7, d.nu: 0.4, d.G: 2.1, d.Delta: 3.0, d.n: 4, d.K: 5, d.T: 7000}
    assert float(general.subs(values)) == pytest.approx(float(t.T1_AT_SCHEDULE.subs(values)), rel=1e-12)


def test_levin_may_thresholds_match_the_spec_and_the_companion_matrix():
    from ratecheck.proofs.defedavg.asynchronous import companion, levin_may

    expected = {0: 2.0, 1: 1.0, 2: 0.618, 3: 0.445, 5: 0.285, 10: 0.149, 20: 0.0766, 50: 0.0311}
    for delay, beta in expected.items():
        assert levin_may(delay) == pytest.approx(beta, abs=6e-4)
        if delay:
            rho = lambda b: max(abs(np.linalg.eigvals(companion(b, delay))))  # noqa: E731
            assert rho(0.99 * levin_may(delay)) < 1 < rho(1.01 * levin_may(delay))


def test_sampling_floor_is_the_delayed_recursion_with_variance_beta2_zeta2_over_n():
    """P2-d: a direct simulation of x <- x - beta x_{t-d} + beta zeta u_bar (u = +-1 draws) agrees."""
    from ratecheck.proofs.defedavg.asynchronous import delayed_floor

    rng = np.random.default_rng(0)
    beta, delay, n_draws, rounds = 0.27, 2, 4, 400_000
    u_bar = rng.choice([-1.0, 1.0], size=(rounds, n_draws)).mean(axis=1)
    x = np.zeros(rounds + 1)
    for t in range(rounds):
        x[t + 1] = x[t] - beta * x[max(0, t - delay)] + beta * u_bar[t]
    assert np.mean(x[1000:] ** 2) == pytest.approx(delayed_floor(beta, delay, beta**2 / n_draws), rel=0.03)


def test_p2c_band_covers_the_finite_grid_departures_from_minus_one_half():
    """P2-c (spec §6): on the grid the sigma-regime slope departs from -1/2 by the leading term's own
    bending and the noise floor's build-up; both are computed, and together stay inside the band."""
    from ratecheck.claims import PROFILES
    from ratecheck.proofs.defedavg.claims import P2C_TOLERANCE, T1_K_REGIMES, p2c_slope_corrections

    for profile in PROFILES.values():
        fix = p2c_slope_corrections(profile)
        assert fix["beta_T"] > 5 and fix["r"] < 0.02  # converged modes, sigma^2 >> G^2 K on the whole grid
        assert fix["bending"] + fix["build_up"] < P2C_TOLERANCE == T1_K_REGIMES.tolerance
    assert T1_K_REGIMES.expected[0].exponent() == -0.5 and T1_K_REGIMES.expected[1].exponent() == 0.0


@pytest.mark.claims  # check_claims on registered claims T1_BOUND_EDGE and T1_BOUND_TIGHTNESS, and on a broken variant
def test_theorem1_general_form_is_decided_where_it_can_be_tight():
    """At the schedule no quadratic run gets within 10x of (46) (the ceiling is computed); at the edge
    of (11) a transient-dominated run sits within the bound's factor 4, and an algorithm that runs one
    local step where K = 5 are configured (a transient 5x slower than the bound assumes) breaks it."""
    import dataclasses

    from ratecheck.claims import PROFILES, Verdict
    from ratecheck.proofs.defedavg.claims import T1_BOUND_EDGE, T1_BOUND_TIGHTNESS, edge_config
    from ratecheck.runner.sweep import check_claims

    quick = PROFILES["quick"]
    edge, seen = check_claims([T1_BOUND_EDGE, T1_BOUND_TIGHTNESS], quick, progress=False)
    assert edge.verdict == Verdict.PASS and min(r["ratio"] for r in edge.evidence["rows"]) > 0.2
    assert seen.verdict == Verdict.OBSERVED
    observed = seen.evidence["observed"]
    assert observed["general/ceiling"] > 9 and observed["stated/ceiling"] > 30
    assert observed["general/measure"] >= observed["general/ceiling"]  # the runs sit below the ceiling

    from ratecheck.proofs.defedavg.claims import bindings

    def one_step(lam, profile):
        config = edge_config(lam, profile)
        return config.with_(params={**config.params, "local_steps": 1})

    broken = dataclasses.replace(T1_BOUND_EDGE, configure=one_step,
                                 bindings=lambda config, trace: {**bindings(config, trace), "K": 5.0})
    outcome = check_claims([broken], quick, progress=False)[0]
    assert outcome.verdict == Verdict.FAIL, outcome.reason


@pytest.mark.claims  # check_claims on a broken variant of registered claim P2C
def test_p2c_fails_when_the_local_steps_are_ignored():
    """The claim's comment says a K that is ignored FAILS: the runs take one local step whatever the
    schedule was computed for, so both series leave their bands."""
    import dataclasses

    from ratecheck.claims import PROFILES, Verdict
    from ratecheck.proofs.defedavg.claims import P2C_SIGMA, T1_K_REGIMES, p2c_config
    from ratecheck.runner.sweep import check_claims

    def one_step(sigma):
        def configure(value, profile):
            config = p2c_config(value, profile, sigma=sigma)
            return config.with_(params={**config.params, "local_steps": 1})
        return configure

    broken = dataclasses.replace(T1_K_REGIMES, configure=one_step(P2C_SIGMA["sigma"]),
                                 configure_other=one_step(P2C_SIGMA["G"]))
    outcome = check_claims([broken], PROFILES["quick"], progress=False)[0]
    assert outcome.verdict == Verdict.FAIL, outcome.reason
