"""FedBiO theorems (sympy): orders derived from the bounds, the complexity table of spec §4.7, errata of
§4.9, and evaluations at the worked instance."""

import pytest
import sympy as sp

from ratecheck.problems.quadratic_bilevel import make_fedbio
from ratecheck.proofs.fedbio import PAPER
from ratecheck.proofs.fedbio import theorems as th


def test_orders_used_by_the_claims():
    assert th.THEOREM_5.order("M", version="noise_terms", use_schedule=False) == -1
    assert th.THEOREM_5.order("b", version="noise_common_b", use_schedule=False) == -1
    assert th.THEOREM_5.order("s", version="drift_scaled", use_schedule=False) == 2
    assert th.THEOREM_5.order("I", version="drift_in_I", use_schedule=False) == 2
    assert th.THEOREM_5.order("T", version="big_O_deterministic", use_schedule=False) == sp.Rational(-2, 3)
    assert th.THEOREM_7.order("M", version="upper_noise", use_schedule=False) == -1
    assert th.THEOREM_7.order("M", version="lower_noise", use_schedule=False) == 0


def test_complexity_table_matches_spec_4_7():
    c = th.complexity()
    e, M, _b = th.eps, th.M, th.b
    assert th.exponent(c["FedBiO T"], e) == -1.5
    assert th.exponent(c["FedBiOAcc T"], e) == -1.5 and th.exponent(c["FedBiOAcc T"], M) == -1
    assert th.exponent(c["FedBiOAcc I"], e) == pytest.approx(-1 / 3)
    assert th.exponent(c["FedBiOAcc rounds"], e) == pytest.approx(-7 / 6)
    assert th.exponent(c["FedBiOAcc rounds, b = eps^-1/2"], e) == -1
    assert th.exponent(c["FedBiOAcc rounds"], th.L) == pytest.approx(62 / 9)
    assert th.exponent(c["FedBiOAcc rounds"], M) == pytest.approx(-1 / 3)


def test_corollary_2_erratum_kappa16():
    """C_eta of Theorem 7 is O(kappa^16) (with Lhat = O(kappa^2), zeta = O(kappa^2)): Corollary 2's kappa^12
    should read kappa^16 (spec §4.9 item 15). zeta = O(kappa^2) comes from its ((1 + kappa) L) zeta_g* term."""
    k = sp.symbols("k", positive=True)
    kappa_order = sp.limit(sp.log(th.C_eta7.subs({th.Lhat: k**2, th.L: k, th.mu: 1, th.zeta_f: 1, th.zeta_gstar: 1,
                                                  th.zeta_gxy: 0, th.zeta_gyy: 0, th.L_xy: 0, th.L_y2: 0, th.C_f: 1,
                                                  th.tau_N: 0, th.sigma: 0, th.I: 1, th.b_x: 1})) / sp.log(k), k, sp.oo)
    assert kappa_order == 16


def test_theorem5_at_the_worked_instance():
    c = {k: v.value for k, v in make_fedbio(test="A", clients=2, sigma_f=1.0, sigma_g=1.0).constants().items()}
    values = {"L": c["L"], "mu": c["mu"], "L_xy": 0.0, "L_y2": 0.0, "C_f": c["C_f"], "sigma": c["sigma"],
              "zeta_f": c["zeta_f"], "zeta_g": c["zeta_g"], "zeta_gxy": 0.0, "zeta_gyy": 0.0, "Lbar": c["Lbar"],
              "Delta": c["Delta"], "Delta_y": c["Delta_y"], "Delta_u": c["Delta_u"], "I": 5, "M": 2, "T": 1000,
              "b_x": 1, "b_y": 1, "eta": 1e-6, "gamma": 1e-4, "tau": 1e-4, "s": 1, "c_1": 1, "b": 1}
    ev = th.THEOREM_5.evaluate(values, use_schedule=False)
    L = values["L"]
    # noise terms: sigma^2/(b_x M) + 72 L^2 sigma^2/(mu^2 b_y M) with L~_1 = L
    assert ev.bounds["noise_terms"] == pytest.approx(1 / 2 + 72 * L**2 / 2)
    assert ev.bounds["final"] > ev.bounds["final_printed"]
    assert {r.name: r.holds for r in ev.conditions}["gamma < 1/(2L)"]


def test_paper_registration():
    assert PAPER.key == "fedbio" and len(PAPER.theorems) == 4
    assert all(c.paper == "fedbio" for c in PAPER.claims)
    assert all(c.expect_reason for c in PAPER.claims if str(c.expect) == "FAIL")


def test_exponent_comparison_claim_on_synthetic_traces():
    """ExponentComparisonClaim (issue #10): PASS when series A is steeper by the margin, FAIL when the order
    is reversed, on fake traces y = x^a with log-normal noise."""
    import dataclasses

    import numpy as np

    from ratecheck.claims import PROFILES, ExpectedOrder, ExponentComparisonClaim, Verdict
    from ratecheck.theory import Source
    from ratecheck.trace import RunConfig, Trace

    grid = (1, 2, 4, 8, 16)

    def conf(tag):
        return lambda v, prof: RunConfig(tag, {"v": v}, "q", {}, rounds=10, replicas=16)

    def traces(a, b):
        rng = np.random.default_rng(0)
        out = {}
        for tag, e in (("A", a), ("B", b)):
            for v in grid:
                c = conf(tag)(v, None)
                m = v**e * np.exp(0.05 * rng.standard_normal(16))
                out[c.key()] = Trace(c, np.arange(16), np.array([0, 10]), {"m": np.vstack([m, m])}, {}, {},
                                     np.full(16, -1))
        return out

    claim = ExponentComparisonClaim(
        id="t", paper="t", title="t", statement="s", source=Source("x", "y"), vary="x", grid={"quick": grid},
        configure=conf("A"), configure_other=conf("B"), measure="m", labels=("A", "B"),
        expected=(ExpectedOrder(value=-1.0, why="t"), ExpectedOrder(value=-1.5, why="t")), margin=0.0)
    assert claim.decide(PROFILES["quick"], traces(-1.5, -1.0)).verdict == Verdict.FAIL
    good = dataclasses.replace(claim, expected=(ExpectedOrder(value=-1.5, why="t"), ExpectedOrder(value=-1.0, why="t")))
    assert good.decide(PROFILES["quick"], traces(-1.5, -1.0)).verdict == Verdict.PASS
