"""Goldens of StR-FedAvg's theorem encodings (issue #23 item 3): every bound and condition of Theorems 1 and 2 at a
reference point against plain arithmetic on the explicit forms of spec strfedavg §4.4-4.5 (the proofs of Theorems
1-2 and Propositions 1-6; W and Y of spec §3, the corrections I6, I7, I10 as the spec states them)."""

from math import e, log, sqrt

from goldens import assert_goldens

from ratecheck.proofs.strfedavg import theorems as th

C = {"mu_f": 0.3, "L_f": 1.2, "L_h": 0.8, "sigma_f": 0.5, "sigma_h": 0.7, "G2": 1.1, "B2": 0.4, "Q": 2.0, "Qt2": 3.5,
     "M": 0.6, "alpha": 0.2, "kappa": 2.0, "gradf_star": 0.9, "N": 10}
P = {"R": 50000, "K": 4, "S": 3, "gamma_g": 1.5, "a": 0.6, "b": 0.3, "p": 2.0}
V = {**C, **P}


def _W_Y(eh):
    """W = 9(L_h + eh L_f)(2 eh^2 s_f^2 + 2 s_h^2)/K + 18(L_h + eh L_f) G^2; Y = (2 eh^2 s_f^2 + 2 s_h^2)/K + 4(1 - S/N) G^2."""
    Lsum = V["L_h"] + eh * V["L_f"]
    noise = 2 * eh**2 * V["sigma_f"] ** 2 + 2 * V["sigma_h"] ** 2
    return 9 * Lsum * noise / V["K"] + 18 * Lsum * V["G2"], noise / V["K"] + 4 * (1 - V["S"] / V["N"]) * V["G2"]


def test_theorem1_goldens():
    mu, R, a, b, p, S, gg, Q = V["mu_f"], V["R"], V["a"], V["b"], V["p"], V["S"], V["gamma_g"], V["Q"]
    eh = p / (e * b * mu**b)  # eta_hat = p/(e b mu_f^b)
    W, Y = _W_Y(eh)
    f_up = mu * Q**2 / (2 * (R ** (p / 2) - 1)) + (Y / S + W / (gg**2 * mu**a * R**a)) / (p * log(R) * mu ** (a - b) * R ** (a - b))
    err_h = p * log(R) * mu ** (1 - b) * Q**2 / (2 * R**b * (R ** (p / 2) - 1)) + Y / (S * mu**a * R**a) \
        + W / (gg**2 * mu ** (2 * a) * R ** (2 * a))
    tail = 2 * p * V["M"] * log(R) / (mu**b * R**b)
    h_up, h_up_c = err_h + tail, 3 * err_h + tail  # Prop. 1's factor 3 on every Err term, not on 2pM ln R/(mu^b R^b)
    g, al, ka = V["gradf_star"], V["alpha"], V["kappa"]
    bounds = {"f_up_stated": f_up, "f_up_corrected": 3 * f_up, "h_up_stated": h_up, "h_up_corrected": h_up_c,
              "f_lo_stated": -g * (h_up / al) ** (1 / ka), "f_lo_corrected": -g * (h_up_c / al) ** (1 / ka),
              "d2_up_corrected": 2 / mu * (g * (h_up_c / al) ** (1 / ka) + 3 * f_up)}
    Lsum, B2 = V["L_h"] + eh * V["L_f"], V["B2"]
    gt = 1 / (mu**a * R**a)
    conditions = {
        "gamma_tilde <= 1/(16 (L_h + eta_hat L_f)^2 (1 + B^2))": (gt, 1 / (16 * Lsum**2 * (1 + B2))),
        "R >= (64(1+B^2) L_h^2)^(1/a) / mu_f": ((64 * (1 + B2) * V["L_h"] ** 2) ** (1 / a) / mu, R),
        "R >= (32 sqrt(1+B^2) p L_f / (e (a+2b) mu_f^((a+2b)/2)))^(4/(a+2b))":
            ((32 * sqrt(1 + B2) * p * V["L_f"] / (e * (a + 2 * b) * mu ** ((a + 2 * b) / 2))) ** (4 / (a + 2 * b)), R),
        "Lemma 6: gamma_tilde <= gamma_g/(27 B^2 (L_h + eta_hat L_f))": (gt, gg / (27 * B2 * Lsum)),
        "Prop. 3: R >= 16 (L_h + eta_hat L_f)^2 (1+B^2)/mu_f": (16 * Lsum**2 * (1 + B2) / mu, R),
        "a + b <= 1": (a + b, 1),
        "mu_f R >= 1 if a + b < 1": (1, max(mu * R, a + b)),
    }
    assert_goldens(th.THEOREM_1, V, bounds, conditions)


def test_theorem2_goldens():
    R, a, b, S, gg = V["R"], V["a"], V["b"], V["S"], V["gamma_g"]
    W, Y = _W_Y(1.0)  # eta_hat = 1 in the convex case (I13)
    # Prop. 6: f_up = 3 Qt^2 R^(a+b-1) + 3 R^(b-a) Y/S + 3 R^(b-2a) W/gamma_g^2; h_up = 3 Qt^2 R^(a-1) + 3 R^-a Y/S
    # + 3 R^-2a W/gamma_g^2 + 2 M R^-b
    f_up = 3 * V["Qt2"] * R ** (a + b - 1) + 3 * R ** (b - a) * Y / S + 3 * R ** (b - 2 * a) * W / gg**2
    h_up = 3 * V["Qt2"] * R ** (a - 1) + 3 * R ** (-a) * Y / S + 3 * R ** (-2 * a) * W / gg**2 + 2 * V["M"] * R ** (-b)
    bounds = {"f_up": f_up, "h_up": h_up, "f_lo": -V["gradf_star"] * (h_up / V["alpha"]) ** (1 / V["kappa"])}
    B2 = V["B2"]
    conditions = {
        "R >= (64(1+B^2) L_h^2)^(1/a)": ((64 * (1 + B2) * V["L_h"] ** 2) ** (1 / a), R),
        "R >= (64(1+B^2) L_f^2)^(1/(a+2b))": ((64 * (1 + B2) * V["L_f"] ** 2) ** (1 / (a + 2 * b)), R),
        "Lemma 6: R^-a <= gamma_g/(27 B^2 (L_h + L_f))": (R ** (-a), gg / (27 * B2 * (V["L_h"] + V["L_f"]))),
        "a + b < 1": (a + b, 1),
    }
    values = {k: v for k, v in V.items() if k not in ("mu_f", "Q", "p")}
    assert_goldens(th.THEOREM_2, values, bounds, conditions)
