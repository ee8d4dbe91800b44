"""proofs/defedavg.py: the encodings against the spec's derivations and numbers."""

import math

import numpy as np
import pytest
import sympy as sp

from proofs import defedavg as d


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
    const = d.problem_constants(config)
    eta = math.sqrt(4 * 5 * const["Delta"] / 2)
    etabar = 1 / (5 * math.sqrt(const["sigma"] ** 2 * const["L"] * 2000))
    assert config.params["eta_global"] == pytest.approx(eta)
    assert config.params["eta_local"] == pytest.approx(etabar)
    # T >= T2_min = max(48 L/sigma^2, 8 n K L Delta lam^2 / sigma^2) is what makes (13) hold
    t2_min = max(48 * const["L"] / const["sigma"] ** 2, 8 * 32 * 5 * const["L"] * const["Delta"] * 4 / const["sigma"] ** 2)
    assert d.T_FOR_N["quick"] >= t2_min
