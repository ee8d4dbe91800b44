"""Theorems 1-3 of the StR-FedAvg paper: sympy evaluations at the spec's worked instances, Table 1."""

import math

import numpy as np
import pytest

from ratecheck.proofs.strfedavg import theorems as th


def _sc_values(R, **over):
    v = dict(mu_f=0.05, L_f=0.05, L_h=0.05, sigma_f=0.0, sigma_h=0.0, G2=1.0, Q=1.0, M=0.1, alpha=0.01, kappa=2.0,
             gradf_star=0.1, N=10.0, R=float(R), K=1.0, S=10.0, gamma_g=1.0, a=2 / 3, b=1 / 3, p=1.0)
    eta_hat = v["p"] / (math.e * v["b"] * v["mu_f"] ** v["b"])
    v["B2"] = max(4 * eta_hat * v["L_f"], 4 * v["L_h"])
    v.update(over)
    return v, eta_hat


def test_theorem1_conditions_at_the_worked_instance():
    v, eta_hat = _sc_values(117)
    assert eta_hat == pytest.approx(3.0, abs=0.01)
    assert v["B2"] == pytest.approx(0.60, abs=0.01)
    assert th.THEOREM_1.evaluate(v, use_schedule=False).all_hold  # spec §6 TP1: all hold for R >= 117
    ev = th.THEOREM_1.evaluate(_sc_values(116)[0], use_schedule=False)
    assert [c.name for c in ev.conditions if not c.holds] == ["Lemma 6: gamma_tilde <= gamma_g/(27 B^2 (L_h + eta_hat L_f))"]
    second = th.THEOREM_1.condition("R >= (32 sqrt(1+B^2) p L_f / (e (a+2b) mu_f^((a+2b)/2)))^(4/(a+2b))")
    assert 60 < float(second.lhs.subs({th.sp.Symbol(k, positive=True): x for k, x in v.items() if k != "R"})) <= 70


def test_theorem1_corrected_bounds_are_three_times_the_err_terms():
    v, _ = _sc_values(1000)
    b = th.THEOREM_1.evaluate(v, use_schedule=False).bounds
    assert b["f_up_corrected"] == pytest.approx(3 * b["f_up_stated"])
    m_term = 2 * v["p"] * math.log(1000) * v["M"] / (v["mu_f"] ** v["b"] * 1000 ** v["b"])
    assert b["h_up_corrected"] - m_term == pytest.approx(3 * (b["h_up_stated"] - m_term))
    assert b["f_lo_stated"] == pytest.approx(-v["gradf_star"] * math.sqrt(b["h_up_stated"] / v["alpha"]))


def test_theorem2_conditions_at_the_worked_instance():
    v = dict(L_f=0.3, L_h=0.3, sigma_f=0.0, sigma_h=0.0, G2=1.0, B2=1.2, Qt2=1.0, M=0.1, alpha=0.1, kappa=2.0,
             gradf_star=0.1, N=10.0, K=1.0, S=10.0, gamma_g=1.0, a=0.5, b=0.25)
    assert th.THEOREM_2.evaluate({**v, "R": 378.0}, use_schedule=False).all_hold  # spec §6 TP2
    assert not th.THEOREM_2.evaluate({**v, "R": 370.0}, use_schedule=False).all_hold


def test_theorem3_constants_and_step_condition():
    t = np.arange(2, 200)
    values = 2 * np.log(t) / t ** (5 / 12)
    assert float(th.ETA_HAT_NCVX) == pytest.approx(values.max(), rel=1e-3)  # 24/(5e), not 11 (I14)
    assert int(t[values.argmax()]) == 11
    lam, Lf = 0.25, 2.0
    stated = float(th.GAMMA_MAX_STATED.subs({th.lam: lam, th.Lf: Lf}))
    corrected = float(th.GAMMA_MAX_CORRECTED.subs({th.lam: lam, th.Lf: Lf}))
    assert stated == pytest.approx(3 * corrected) and corrected == pytest.approx(lam / (4 * (Lf * lam + 2)))


def test_table1_derived_exponents():
    rows = {(r["method"], r["quantity"]): r for r in th.table1()}
    assert rows[("StR-FedAvg, str. cvx f", "E f - f* (U.B.)")]["derived"] == "3"
    assert rows[("StR-FedAvg, cvx f", "E h - h* (U.B.)")]["derived"] == "4"
    assert rows[("StR-FedAvg, cvx f, kappa > 1", "E f - f* (L.B.)")]["agrees"]
    ipir = rows[("IPIR-FedAvg, kappa = 2", "stationarity (rounds = sum_t R_t ~ T^2)")]
    assert ipir["derived"] == "12" and not ipir["agrees"]  # I21


def _holds(theorem, values) -> dict:
    return {c.name: c.holds for c in theorem.evaluate(values, use_schedule=False).conditions}


def test_theorem1_i10_conditions_and_the_printed_range():
    v, _ = _sc_values(10)  # mu_f R = 0.5 < 1
    assert _holds(th.THEOREM_1, v)["mu_f R >= 1 if a + b < 1"]  # a + b = 2/3 + 1/3 is 1 in floating point
    assert not _holds(th.THEOREM_1, {**v, "b": 0.2})["mu_f R >= 1 if a + b < 1"]
    assert _holds(th.THEOREM_1, {**v, "b": 0.2, "R": 2000.0})["mu_f R >= 1 if a + b < 1"]
    printed = {c.name for c in th.THEOREM_1_PRINTED.conditions}
    assert printed == {c.name for c in th.THEOREM_1.conditions} - {"a + b <= 1", "mu_f R >= 1 if a + b < 1"}
    wide = {**_sc_values(5000)[0], "a": 0.9, "b": 0.5}
    assert not _holds(th.THEOREM_1, wide)["a + b <= 1"]
    assert th.THEOREM_1_PRINTED.evaluate(wide, use_schedule=False).all_hold


def test_theorem3_descent_step_at_a_worked_instance():
    # 2 dF/(gamma T) + (2/lam^2 + 2 gamma (L_f lam + 2)/lam^3) E2 = 2 + (32 + 8) 0.1
    values = {"F0_minus_Fstar": 1.0, "gamma": 0.025, "T": 40.0, "lambda": 0.25, "L_f": 2.0, "E2_inner": 0.1}
    ev = th.THEOREM_3_DESCENT.evaluate(values, use_schedule=False)
    assert ev.bounds["stated"] == pytest.approx(6.0)
    assert ev.all_hold  # gamma = lam/(4(L_f lam + 2)) exactly
