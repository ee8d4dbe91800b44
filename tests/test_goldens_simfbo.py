"""Goldens of SimFBO's theorem encodings (issue #23 item 3): every bound version of Theorems 1 and 2 at a reference
point against plain arithmetic on the explicit form before the O(.) step (paper §D.6 eqs. (46)-(52), as quoted in
spec simfbo §4.4), Theorem 2's factor (Appendix E, last display) and eq. (9)'s O-form; and the schedule.
The step-size conditions of §D.5 have their goldens in test_goldens_simfbo_conditions.py."""

from math import sqrt

import pytest
from goldens import assert_goldens

from ratecheck.proofs import simfbo as s

VALUES = {"n": 10, "P": 4, "T": 5000, "tau_bar": 3.0, "rho_bar": 2.5, "gamma_x": 0.01, "eta_x": 0.002,
          "eta_y": 0.003, "eta_v": 0.0025, "alpha_min": 0.5, "alpha_max": 1.0, "beta_max": 2.0, "c_a_p": 0.7,
          "M_1": 3.1, "M_2": 1.7, "M_3": 5.3, "sigma_M1_sq": 0.9, "sigma_M2_sq": 1.4, "Delta_Psi": 2.2,
          "beta_p_max": 0.3, "beta_min": 0.2}


def _explicit(v, n):
    # 4 DPsi/(T rho gamma_x) + 12 rho gamma_x (n-P)/(P(n-1)) M_1 + 6 a_max b_max/(c'_a a_min) rho gamma_x M_2/(P tau)
    # + 6 ((eta_x^2 + eta_v^2) tau sM1^2 + 2 eta_y^2 tau sM2^2) M_3
    rg = v["rho_bar"] * v["gamma_x"]
    init = 4 * v["Delta_Psi"] / (v["T"] * rg)
    partial = 12 * rg * (n - v["P"]) / (v["P"] * (n - 1)) * v["M_1"]
    sync = 6 * v["alpha_max"] * v["beta_max"] / (v["c_a_p"] * v["alpha_min"]) * rg * v["M_2"] / (v["P"] * v["tau_bar"])
    drift = 6 * ((v["eta_x"] ** 2 + v["eta_v"] ** 2) * v["tau_bar"] * v["sigma_M1_sq"]
                 + 2 * v["eta_y"] ** 2 * v["tau_bar"] * v["sigma_M2_sq"]) * v["M_3"]
    return init, partial, sync, drift


def _bounds(v):
    init, partial, sync, drift = _explicit(v, v["n"])
    full = sum(_explicit(v, v["P"]))  # P = n: the partial-participation term vanishes
    o_form = v["M_1"] * (v["n"] - v["P"]) / v["n"] * sqrt(v["tau_bar"] / (v["P"] * v["T"])) \
        + v["M_2"] * sqrt(1 / (v["P"] * v["tau_bar"] * v["T"])) + v["M_3"] / (v["tau_bar"] * v["T"])  # eq. (9)
    return {"explicit": init + partial + sync + drift, "full_participation": full, "init_term": init,
            "partial_term": partial, "partial_term_per_fpc": 12 * v["rho_bar"] * v["gamma_x"] / v["P"] * v["M_1"],
            "sync_term": sync, "drift_term": drift, "eq9_O_form": o_form}


def _needed(theorem):
    """The reference point restricted to the theorem's symbols, with the constants its conditions read (any
    positive values: the conditions are not compared here)."""
    extra = {"L_f": 1.0, "L_1": 1.0, "L_2": 0.5, "L_3": 0.2, "mu_g": 0.8, "sigma_f": 1.0, "sigma_g": 1.0,
             "sigma_gg": 0.5, "beta_gh": 0.1, "sigma_gh": 0.1, "c_a": 1.0, "Delta": 1.0, "y0_err": 1.0, "v0_err": 1.0,
             "rho_max": 3.0, "rho_min": 2.0, "c_gamma_y": 50.0, "c_gamma_v": 50.0}
    names = {sym.name for sym in (*theorem.constants, *theorem.parameters)}
    return {k: val for k, val in {**VALUES, **extra}.items() if k in names}


def test_theorem1_bound_goldens():
    assert_goldens(s.THEOREM_1, _needed(s.THEOREM_1), _bounds(VALUES), None)


def test_theorem2_bound_goldens():
    bounds = _bounds(VALUES)
    # Appendix E, last display: 2 [1 + 2 ((b'_max - b_min)/b_min)^2] times the explicit form
    factor = 2 * (1 + 2 * ((VALUES["beta_p_max"] - VALUES["beta_min"]) / VALUES["beta_min"]) ** 2)
    assert_goldens(s.THEOREM_2, _needed(s.THEOREM_2), {**bounds, "paper_factor": factor * bounds["explicit"]}, None)


def test_schedule_goldens():
    # gamma_x = c_x sqrt(P/(tau T)), eta = c_eta/(tau sqrt(T)), rho_bar = rho_0 tau; growing tau: tau = kappa T/P
    c_x, c_eta, rho_0, kappa = 0.3, 0.2, 1.1, 0.01
    P, T, tau = VALUES["P"], VALUES["T"], VALUES["tau_bar"]
    values = {k: v for k, v in _needed(s.THEOREM_1).items()
              if k not in ("gamma_x", "eta_x", "eta_y", "eta_v", "rho_bar")}
    values.update(c_x=c_x, c_eta=c_eta, rho_0=rho_0, kappa=kappa)
    sched = s.THEOREM_1.evaluate(values).schedule
    assert sched["gamma_x"] == pytest.approx(c_x * sqrt(P / (tau * T)), rel=1e-12)
    assert sched["eta_y"] == pytest.approx(c_eta / (tau * sqrt(T)), rel=1e-12)
    assert sched["rho_bar"] == pytest.approx(rho_0 * tau, rel=1e-12)
    grow = s.THEOREM_1_GROWING_TAU.evaluate({k: v for k, v in values.items() if k != "tau_bar"}).schedule
    assert grow["tau_bar"] == pytest.approx(kappa * T / P, rel=1e-12)
