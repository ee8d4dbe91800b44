"""Goldens of StR-FedAvg's Theorem 3 encoding (issue #23 item 3): the stationarity bound (i-1), stated and corrected,
its descent step and the step condition, at two reference points, against plain arithmetic on the expression the
paper prints: ../shared/seeds/001_511a8e816d499631.txt, Theorem 3 (i-1) (arXiv 2503.08634v2, §3.2), with the
readings of spec strfedavg §4.8 (I15 prefactor, I17 sigma_f = 0 and ||grad g(x^t*)||, I19 step condition)."""

from math import log

import pytest
from goldens import assert_goldens

from ratecheck.proofs.strfedavg import theorems as th

# kappa = 2 (the only realizable kappa > 1, I23) and kappa = 3 (every 1/kappa exponent differs from 1/2)
POINTS = [
    {"L_f": 1.2, "L_h": 0.8, "sigma_h": 0.7, "Gncvx2": 1.3, "M": 0.6, "alpha": 0.25, "kappa": 2.0, "gradg_star": 0.9,
     "F0_minus_Fstar": 2.5, "D0": 1.7, "eta_hat": 24 / (5 * 2.718281828459045), "N": 10,
     "T": 400, "K": 3, "S": 4, "gamma_g": 1.5, "lambda": 0.5, "gamma": 0.04},
    {"L_f": 2.0, "L_h": 1.5, "sigma_h": 0.3, "Gncvx2": 0.4, "M": 3.0, "alpha": 1.7, "kappa": 3.0, "gradg_star": 2.2,
     "F0_minus_Fstar": 0.8, "D0": 0.35, "eta_hat": 11.0, "N": 7,
     "T": 5000, "K": 5, "S": 2, "gamma_g": 0.7, "lambda": 2.0, "gamma": 0.3},
]


def _hand(v):
    """Theorem 3 (i-1) as printed, term by term (sigma_f = 0 for the inner problem, I17):

      2 gamma^-1 (F_lam(y^0) - F*_lam)/T
    + C_lam E||x^0 - x^t*||^2 (1 + ln T)/T
    + C_lam A 6/(5 T^(1/6) ln T)
    + C_lam B 3/(2 T^(3/4) ln T)
    + (4M)^(1/k) (24k - 5)/(12k - 5) (ln T)^(1/k) / T^(5/(12k))       [corrected: times C_lam g*/alpha^(1/k), I15]
    + C_lam g*/alpha^(1/k) D0^(1/k) 2 (4)^(1/k) (ln T + 1)^(1/k) / T^(17/(12k))
    + C_lam g*/alpha^(1/k) (2A)^(1/k) 2^(1/k)/(1 - 7/(12k)) / T^(7/(12k))
    + C_lam g*/alpha^(1/k) (2B)^(1/k) / T^(1/k)

    with C_lam = 2/lam^2 + 2 gamma (L_f lam + 2)/lam^3, A = (2 eta_hat^2 sigma_f^2 + 2 sigma_h^2)/(KS)
    + (1 - S/N) 4 G_ncvx^2/S, B = 9(L_h + eta_hat)(2 eta_hat^2 sigma_f^2 + 2 sigma_h^2)/(K gamma_g^2)
    + 18(L_h + eta_hat) G_ncvx^2/gamma_g^2; the printed (2(...)/(KS) + 2(1 - S/N)(4/S)G^2) is 2A and
    (18(...)/(K gamma_g^2) + 36(...)G^2/gamma_g^2) is 2B.
    """
    T, k, lam, gam = v["T"], v["kappa"], v["lambda"], v["gamma"]
    K, S, N, gg, eh, sh2, G = v["K"], v["S"], v["N"], v["gamma_g"], v["eta_hat"], v["sigma_h"] ** 2, v["Gncvx2"]
    C = 2 / lam**2 + 2 * gam * (v["L_f"] * lam + 2) / lam**3
    A = (2 * eh**2 * 0.0 + 2 * sh2) / (K * S) + (1 - S / N) * 4 / S * G
    B = 9 * (v["L_h"] + eh) * (2 * eh**2 * 0.0 + 2 * sh2) / (K * gg**2) + 18 * (v["L_h"] + eh) * G / gg**2
    pre = C * v["gradg_star"] / v["alpha"] ** (1 / k)
    four_m = (4 * v["M"]) ** (1 / k) * (24 * k - 5) / (12 * k - 5) * log(T) ** (1 / k) / T ** (5 / (12 * k))
    rest = (2 * v["F0_minus_Fstar"] / gam / T + C * v["D0"] * (1 + log(T)) / T + C * A * 6 / (5 * T ** (1 / 6) * log(T))
            + C * B * 3 / (2 * T ** (3 / 4) * log(T))
            + pre * v["D0"] ** (1 / k) * 2 * 4 ** (1 / k) * (log(T) + 1) ** (1 / k) / T ** (17 / (12 * k))
            + pre * (2 * A) ** (1 / k) * 2 ** (1 / k) / (1 - 7 / (12 * k)) / T ** (7 / (12 * k))
            + pre * (2 * B) ** (1 / k) / T ** (1 / k))
    return C, {"stated": rest + four_m, "corrected": rest + pre * four_m}


def _step_condition(v):
    """gamma <= lam/(4(L_f lam + 2)): the proof's condition redone (I19; the paper prints 3 lam/(4(L_f lam + 2)))."""
    return {"gamma <= lam/(4(L_f lam + 2)) (corrected, I19)": (v["gamma"], v["lambda"] / (4 * (v["L_f"] * v["lambda"] + 2)))}


@pytest.mark.parametrize("v", POINTS, ids=["kappa2", "kappa3"])
def test_theorem3_goldens(v):
    _, bounds = _hand(v)
    assert_goldens(th.THEOREM_3, v, bounds, _step_condition(v))


def test_theorem3_golden_numbers_at_the_first_point():
    """The first point written out (kappa = 2, T = 400, ln T = 5.99146), so that a change of both sides shows:
    eta_hat = 24/(5e) = 1.765821; C_lam = 2/0.25 + 2 (0.04)(1.2 (0.5) + 2)/0.125 = 8 + 1.664 = 9.664;
    A = 2 (0.49)/12 + (1 - 0.4)(4/4)(1.3) = 0.081667 + 0.78 = 0.861667;
    B = 9 (2.565821)(0.98)/(3 (2.25)) + 18 (2.565821)(1.3)/2.25 = 3.352673 + 26.684542 = 30.037215;
    C_lam g*/alpha^(1/2) = 9.664 (0.9)/0.5 = 17.3952. Terms in the printed order: 2 (2.5)/(0.04 (400)) = 0.3125;
    9.664 (1.7)(6.99146)/400 = 0.287153; 9.664 (0.861667)(6/5)/(400^(1/6) 5.99146) = 0.614423;
    9.664 (30.037215)(3/2)/(400^(3/4) 5.99146) = 0.812512; (2.4)^(1/2)(43/19)(5.99146)^(1/2)/400^(5/24) = 2.46315;
    17.3952 (1.7)^(1/2) 2 (2)(6.99146)^(1/2)/400^(17/24) = 3.44249;
    17.3952 (1.723333)^(1/2) 2^(1/2)/(1 - 7/24)/400^(7/24) = 7.94250; 17.3952 (60.074430)^(1/2)/400^(1/2) = 6.74131.
    Stated: their sum 22.6160; corrected: the (4M) term times 17.3952, 22.6160 + 16.3952 (2.46315) = 62.9999."""
    C, bounds = _hand(POINTS[0])
    assert C == pytest.approx(9.664, rel=1e-15)
    assert bounds["stated"] == pytest.approx(22.6160356, rel=1e-8)
    assert bounds["corrected"] == pytest.approx(22.6160356 + 16.3952 * 2.46315, rel=1e-5)


@pytest.mark.parametrize("v", POINTS, ids=["kappa2", "kappa3"])
def test_theorem3_descent_goldens(v):
    """The summed descent inequality the proof of (i-1) starts from: 2 Delta F/(gamma T) + C_lam E2."""
    C, _ = _hand(v)
    values = {**{k: v[k] for k in ("L_f", "F0_minus_Fstar", "T", "lambda", "gamma")}, "E2_inner": 0.013}
    assert_goldens(th.THEOREM_3_DESCENT, values, {"stated": 2 * v["F0_minus_Fstar"] / (v["gamma"] * v["T"]) + C * 0.013},
                   _step_condition(v))
