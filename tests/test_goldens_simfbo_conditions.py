"""Goldens of SimFBO's step-size conditions (issue #23 item 3): the 20 encoded conditions of Theorems 1 and 2 at a
reference point against plain arithmetic on the paper's printed expressions (../shared/seeds/000_66e1ccf0a50396e9.txt:
eqs. (38)-(39) of §D.5 with K_1, K_2 and c_gamma_y >= 256 K_1 L_y/mu_g, c_gamma_v >= 256 K_2 L_v/mu_g printed just
before them; the constants of Lemmas 1-4 and Prop. 1: r, r_max, L_R, L~, L_Phi, L_y, L_yx, L_v, L_vx; as quoted in
spec simfbo §4.1 and §4.3; C4 and C6 of spec §3.2). The bounds are test_goldens_simfbo's."""

from math import sqrt

import pytest
from goldens import assert_goldens
from test_goldens_simfbo import VALUES, _bounds

from ratecheck.proofs import simfbo as s

CONSTANTS = {"L_f": 1.3, "L_1": 2.0, "L_2": 0.7, "L_3": 0.4, "mu_g": 0.8, "sigma_f": 1.1, "sigma_g": 0.6,
             "sigma_gg": 0.5, "beta_gh": 0.6, "sigma_gh": 0.3, "c_a": 1.5, "Delta": 1.0, "y0_err": 1.0, "v0_err": 1.0,
             "rho_max": 3.0, "rho_min": 2.0, "c_gamma_y": 900.0, "c_gamma_v": 120.0}


def _hand(v):
    Lf, L1, L2, L3, mu = v["L_f"], v["L_1"], v["L_2"], v["L_3"], v["mu_g"]
    a_min, a_max, b_max, c_a, P = v["alpha_min"], v["alpha_max"], v["beta_max"], v["c_a"], v["P"]
    cgy, cgv, tau = v["c_gamma_y"], v["c_gamma_v"], v["tau_bar"]
    r = Lf / mu  # Lemma 1
    r_max = (1 + a_max / a_min) * r  # Prop. 1
    L_R = sqrt(2 * (L2**2 * r_max**2 + L1**2))  # Lemma 3
    Lt = L1 + L1**2 / mu + Lf * (L2 / mu + L1 * L2 / mu**2)  # Lemma 4
    L_Phi = Lt + Lt * L1 / mu
    L_y = L1 / mu
    L_yx = (L2 + L2 * L_y) / mu + L1 * (L2 + L2 * L_y) / mu**2
    L_v = sqrt(2 * L1**2 / mu**2 + 2 * Lf**2 * L2**2 / mu**4) * sqrt(1 + L_y**2)
    L_vx = 2 / mu * sqrt((L2**2 + r**2 * L3**2 + L2**2 * L_v**2) * (1 + L_y**2) + L2**2 * L_v**2)
    K1 = (40 * (L1**2 + r**2 * L2**2) / mu + 384 * L_R**2 * L1**2 / mu**3) / cgy  # §D.5
    K2 = 6 * L1**2 / (mu * cgv)
    A, B = 2 * b_max / P + 3, Lf**2 + r_max**2 * L1**2
    terms = [  # eq. (38): rho^(t) gamma_x <= min of these twelve (term 9 with L_v^2 as printed, spec §4.8 item 8)
        mu / (12 * L1**2 * cgv),
        mu / (36 * L1**2 * cgv) / A,
        P * mu * cgv / (36 * L1**2 * b_max) / (L_v**2 + L_vx / 2),
        P / (6 * L_Phi**2 * b_max),
        4 / L_Phi**2,
        4 / cgy,
        4 / cgv,
        mu / (12 * cgy) / (A * L1**2 + 2 * b_max * v["beta_gh"] ** 2 / P + 3 * L1**2),
        P * cgy * mu / (36 * b_max * (L1**2 + r**2 * L2**2)) / (L_v**2 + L_yx / 2),
        cgy * mu / (4 * L_yx * B),
        cgv * mu / (4 * L_vx * B),
        1 / 8 / (K1 * (L_y**2 + L_yx / 2) + K2 * (L_v**2 + L_vx / 2)),
    ]
    lhs = v["rho_max"] * v["gamma_x"]
    out = {f"rho gamma_x cap {k + 1}": (lhs, term) for k, term in enumerate(terms)}
    # c_gamma_y >= 256 K_1 L_y/mu_g with K_1 = k_1/c_gamma_y: the encoding compares the smallest admissible c_gamma_y,
    # sqrt(256 L_y k_1/mu_g) = sqrt(c_gamma_y * 256 K_1 L_y/mu_g), with c_gamma_y (same for v)
    printed_y, printed_v = 256 * K1 * L_y / mu, 256 * K2 * L_v / mu
    out["c_gamma_y >= 256 K_1 L_y/mu_g"] = (sqrt(cgy * printed_y), cgy)
    out["c_gamma_v >= 256 K_2 L_v/mu_g"] = (sqrt(cgv * printed_v), cgv)
    assert (cgy >= printed_y) == (sqrt(cgy * printed_y) <= cgy) and (cgv >= printed_v) == (sqrt(cgv * printed_v) <= cgv)
    # eq. (39)
    out["eta_x^2 tau_bar cap"] = (v["eta_x"] ** 2 * tau, 1 / (2 * c_a * a_max * L1**2))
    out["eta_y^2 tau_bar cap (a)"] = (v["eta_y"] ** 2 * tau, 1 / (4 * c_a * a_max * L1**2))
    out["eta_y^2 tau_bar cap (b)"] = (v["eta_y"] ** 2 * tau, mu**2 / (96 * c_a * a_max * L1**4))
    out["C6: eta_v alpha_max L_1 <= 1"] = (v["eta_v"] * a_max * L1, 1.0)
    out["C4: rho^(t) <= 3 rho_bar/2"] = (v["rho_max"], 3 * v["rho_bar"] / 2)
    out["C4: rho^(t) >= rho_bar/2"] = (v["rho_bar"] / 2, v["rho_min"])
    return out


def _values(theorem):
    names = {sym.name for sym in (*theorem.constants, *theorem.parameters)}
    return {k: val for k, val in {**VALUES, **CONSTANTS}.items() if k in names}


@pytest.mark.parametrize("theorem", [s.THEOREM_1, s.THEOREM_2], ids=["theorem1", "theorem2"])
def test_condition_goldens(theorem):
    v = _values(theorem)
    bounds = _bounds(VALUES)
    if theorem is s.THEOREM_2:  # Appendix E, last display (test_goldens_simfbo)
        bounds["paper_factor"] = 2 * (1 + 2 * ((VALUES["beta_p_max"] - VALUES["beta_min"]) / VALUES["beta_min"]) ** 2) \
            * bounds["explicit"]
    assert_goldens(theorem, v, bounds, _hand({**VALUES, **CONSTANTS}))
