"""Goldens of FedBiO's Theorem 5 encoding (issue #23 item 3): every bound and condition of Theorem 1/5 at a reference
point against plain arithmetic on the printed expressions (paper Theorem 5 and its proof, Eqs. (12)-(13), as quoted
in spec fedbio §4.3; L~_1, L~_2 of spec §3.3). Theorems 6-8: test_goldens_fedbio_acc_local.py; Lemma 8 has no golden yet."""

from math import sqrt

from goldens import assert_goldens

from ratecheck.proofs.fedbio import theorems as th

C = {"L": 2.0, "mu": 0.5, "L_xy": 0.3, "L_y2": 0.4, "C_f": 1.5, "sigma": 0.9, "zeta_f": 0.2, "zeta_g": 0.3,
     "zeta_gxy": 0.1, "zeta_gyy": 0.15, "Lbar": 40.0, "Delta": 1.2, "Delta_y": 0.7, "Delta_u": 0.4}
P = {"I": 3, "M": 8, "T": 20000, "b_x": 2, "b_y": 5, "eta": 1e-4, "gamma": 0.01, "tau": 1e-4, "s": 0.01, "c_1": 0.5,
     "b": 4}


def test_theorem5_goldens():
    v = {**C, **P}
    L, mu, Cf, sigma, I, M, T = v["L"], v["mu"], v["C_f"], v["sigma"], v["I"], v["M"], v["T"]
    bx, by, eta, gamma, tau = v["b_x"], v["b_y"], v["eta"], v["gamma"], v["tau"]
    kappa = L / mu
    Lt1 = sqrt(L**2 + 2 * v["L_xy"] ** 2 * Cf**2 / mu**2)  # L~_1 = sqrt(L^2 + 2 L_xy^2 C_f^2/mu^2)
    Lt2 = sqrt(L**2 + 2 * v["L_y2"] ** 2 * Cf**2 / mu**2)  # L~_2 = sqrt(L^2 + 2 L_y2^2 C_f^2/mu^2)
    C1 = (2 * Lt1**2 + 81 / 2 * kappa**2 * Lt1**2 + 45 / 16 * kappa**2 * Lt2**2) * I**2

    def c_eta(bx, by):
        return 2 * C1 * (96 * v["zeta_f"] ** 2 + 16 * v["zeta_g"] ** 2 + 16 * Cf**2 * v["zeta_gyy"] ** 2 / mu**2
                         + 32 * Cf**2 * v["zeta_gxy"] ** 2 / mu**2 + 16 * sigma**2 / by + 20 * sigma**2 / bx)

    def c_gam(bx, by):
        return 2 * C1 * (24 * v["zeta_f"] ** 2 + 8 * v["zeta_g"] ** 2 + 4 * Cf**2 * v["zeta_gyy"] ** 2 / mu**2
                         + 8 * Cf**2 * v["zeta_gxy"] ** 2 / mu**2 + 8 * sigma**2 / by + 5 * sigma**2 / bx)

    Ce, Cg = c_eta(bx, by), c_gam(bx, by)
    noise = sigma**2 / (bx * M) + 72 * Lt1**2 * sigma**2 / (mu**2 * by * M)
    init = 2 * v["Delta"] / (eta * T) + 18 * Lt1**2 * v["Delta_y"] / (mu * gamma * T) + 18 * L**2 * v["Delta_u"] / (mu * tau * T)
    tau5 = min(1 / (128 * I * Lt2), 1 / (144 * kappa * L))
    gbar = min(1 / (8 * I * Lt2), tau5 / (36 * kappa * v["Lbar"]), 1 / (4 * v["Lbar"]), 1 / (8 * I * Lt1))
    Dp = (72 * kappa * Lt1 * v["Delta"] + 18 * Lt1**2 * v["Delta_y"]) / mu  # Eq. (13)
    Cpg = Ce * mu**2 / (36**2 * kappa**2 * Lt1**2) + Cg
    cube = (Cpg * Dp**2 / T**2) ** (1 / 3)
    final = Dp / (gbar * T) + 2 * cube + 18 * L**2 * v["Delta_u"] / (mu * tau5 * T) + noise
    big_o = kappa**8 / T + (kappa**12 / T**2) ** (1 / 3) + kappa**4 * sigma**2 / (by * M) + sigma**2 / (bx * M)
    bounds = {
        "general": init + noise + Ce * eta**2 + Cg * gamma**2,
        "noise_terms": noise,
        "noise_common_b": sigma**2 / (v["b"] * M) + 72 * Lt1**2 * sigma**2 / (mu**2 * v["b"] * M),
        "drift_terms": Ce * eta**2 + Cg * gamma**2,
        "drift_scaled": Ce * (v["c_1"] * v["s"]) ** 2 + Cg * v["s"] ** 2,  # eta = c_1 s, gamma = s
        "drift_in_I": Ce * eta**2 + Cg * gamma**2,
        "final": final, "final_printed": final - cube,  # the paper's coefficient 1 on the cube root
        "big_O": big_o,
        "big_O_deterministic": kappa**8 / T + (kappa**12 / T**2) ** (1 / 3),
        "big_O_main_text": kappa**8 / T + (kappa**12 / T**2) ** (1 / 3) + (kappa**4 / by + sigma**2 / bx) * sigma**2 / M,
    }
    conditions = {
        "tau cap": (tau, tau5),
        "gamma <= 1/(8 I L~_1)": (gamma, 1 / (8 * I * Lt1)),
        "gamma < 1/(2L)": (gamma, 1 / (2 * L)),
        "eta cap": (eta, min(1 / (8 * I * Lt2), mu * gamma / (36 * kappa * Lt1), tau / (36 * kappa * v["Lbar"]),
                             1 / (4 * v["Lbar"]))),
    }
    assert_goldens(th.THEOREM_5, v, bounds, conditions)
