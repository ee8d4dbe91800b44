"""Goldens of FedBiO's Theorems 6-8 (issue #23 item 3): every bound and condition of the encodings at a reference
point against plain arithmetic on the paper's printed expressions (../shared/seeds/002_25acef2c58d2293a.txt: Theorem 6
and the last display of its proof, Theorem 7 and Eq. (40), Theorem 8 and the last display of its proof; Prop. 2's G_1,
G_2 and Prop. 4's zeta; as quoted in spec fedbio §1.2, §3.3, §4.4-§4.6). Where the encoding takes a documented
reading instead of the printed text (spec §4.9 items 14, 16, 17) the test computes both and says which is encoded."""

from math import log, sqrt

from goldens import assert_goldens
from goldens_min import assert_min_terms

from ratecheck.proofs.fedbio import theorems as th

# a reference point with L_xy != L_y2 (L~ = max(L~_1, L~_2) matters) and every constant distinct
C = {"L": 2.0, "mu": 0.5, "L_xy": 0.3, "L_y2": 0.45, "C_f": 1.5, "sigma": 0.9, "zeta_f": 0.2, "zeta_g": 0.3,
     "zeta_gxy": 0.1, "zeta_gyy": 0.15, "zeta_gstar": 0.25, "Lbar": 40.0, "Lhat": 9.0, "Delta": 1.2, "Delta_y": 0.7,
     "Delta_u": 0.4}


def _only(theorem, values):
    names = {s.name for s in (*theorem.constants, *theorem.parameters)}
    assert names <= set(values), names - set(values)
    return {k: v for k, v in values.items() if k in names}


def test_theorem6_goldens():
    v = {**C, "I": 3, "M": 8, "T": 20000, "b": 4, "b1": 10, "eta": 1e-5, "gamma": 1e-3, "tau": 2e-3}
    L, mu, Cf, s, I, M, T, b = v["L"], v["mu"], v["C_f"], v["sigma"], v["I"], v["M"], v["T"], v["b"]
    eta, gamma, tau = v["eta"], v["gamma"], v["tau"]
    kappa, bM = L / mu, b * M
    Lt = max(sqrt(L**2 + 2 * v["L_xy"] ** 2 * Cf**2 / mu**2), sqrt(L**2 + 2 * v["L_y2"] ** 2 * Cf**2 / mu**2))
    # Theorem 6: c_nu = 64/(9bM) + 2/(3b^2M^2), c_omega = c_u = 48^2/(bM mu^2) + 2/(3b^2M^2)
    c_nu = 64 / (9 * bM) + 2 / (3 * bM**2)
    c_om = c_u = 48**2 / (bM * mu**2) + 2 / (3 * bM**2)
    ubar = max(2, 16**2 * I**4.5 * Lt**2, c_nu**1.5, c_om**1.5)
    alpha1 = bM ** (2 / 3) / (16 * Lt * (bM**2 * ubar + 1)) ** (1 / 3)  # delta/(u + t)^(1/3) with sigma cancelled
    C1 = 1 / 64 + 81 / 32 * kappa**2 + 9 * Lt**2
    Csz = (4 * c_om**2 * s**2 + 4 * c_u**2 * s**2 + 4 * c_nu**2 * s**2 + 3 * c_u**2 * v["zeta_f"] ** 2
           + 3 * c_nu**2 * v["zeta_f"] ** 2 + 3 * c_om**2 * v["zeta_g"] ** 2
           + 3 * c_nu**2 * Cf**2 * v["zeta_gxy"] ** 2 / mu**2 + 120 * c_u**2 * Cf**2 * v["zeta_gyy"] ** 2 / mu**2)
    first = (2 * v["Delta"] / eta + 27 * b * s**2 / (32 * v["b1"] * alpha1) + 36 * Lt**2 * v["Delta_y"] / (mu * gamma)
             + 36 * L**2 * v["Delta_u"] / (mu * tau) + bM**2 * Csz * log(T + 1) / (8 * Lt))
    second = (16 * Lt * ubar) ** (1 / 3) / T + (16 * Lt) ** (1 / 3) / (bM * T) ** (2 / 3)
    bounds = {"explicit": first * second,
              "big_O": kappa ** (19 / 3) * I**1.5 / T + kappa ** (16 / 3) / (bM * T) ** (2 / 3)}
    caps = [1 / (8 * sqrt(C1)), Lt / (4 * sqrt(C1))]
    terms = {"gamma cap": [*caps, Lt**2 / c_nu, Lt**2 / c_om, Lt**2 / c_u, 1 / (2 * L), 1],
             "eta cap": [mu * gamma / (36 * kappa * Lt), *caps, Lt**2 / c_nu, Lt**2 / c_om, Lt**2 / c_u,
                         1 / (2 * v["Lbar"]), 1],
             "tau cap": [*caps, Lt**2 / c_nu, Lt**2 / c_u, 1 / (2 * L), 1 / 2]}
    conditions = {"gamma cap": (gamma, min(terms["gamma cap"])), "eta cap": (eta, min(terms["eta cap"])),
                  "tau cap": (tau, min(terms["tau cap"]))}
    assert_goldens(th.THEOREM_6, _only(th.THEOREM_6, v), bounds, conditions)
    for name, hand in terms.items():
        assert_min_terms(th.THEOREM_6, name, v, hand)


def _local(v):
    """Prop. 2's G_1, G_2^2 (per sample, §4.9 item 16) and Prop. 4's zeta."""
    L, mu, Cf, s, Q, tN = v["L"], v["mu"], v["C_f"], v["sigma"], v["Q"], v["tau_N"]
    kappa = L / mu
    G1 = kappa * (1 - tN * mu) ** (Q + 1) * Cf
    G2sq = 2 * Cf**2 + 12 * Cf**2 * L**2 * tN**2 * (Q + 1) ** 2 + 4 * Cf**2 * L**2 * (Q + 2) * (Q + 1) ** 2 * tN**4 * s**2
    zeta = ((1 + kappa) * v["zeta_f"] + Cf * v["zeta_gxy"] / mu + kappa * Cf * v["zeta_gyy"] / mu
            + ((1 + kappa) * L + Cf * v["L_xy"] / mu + kappa * Cf * v["L_y2"] / mu) * v["zeta_gstar"])
    return kappa, G1, G2sq, zeta


def test_theorem7_goldens():
    v = {**C, "I": 3, "M": 8, "T": 20000, "b_x": 2, "b_y": 5, "eta": 1e-6, "gamma": 0.2, "Q": 6, "tau_N": 0.3}
    L, mu, Lh, s, I, M, T = v["L"], v["mu"], v["Lhat"], v["sigma"], v["I"], v["M"], v["T"]
    eta, gamma, bx, by = v["eta"], v["gamma"], v["b_x"], v["b_y"]
    kappa, G1, G2sq, zeta = _local(v)
    gamma7 = 1 / (2 * L)  # Theorem 7: gamma = 1/(2L)
    C1 = (360 / (mu**2 * gamma7**2) + 4 * I) * kappa**2 * Lh**2
    C_eta = 36 * C1 * Lh**2 * zeta**2 + 12 * C1 * Lh**2 * G1**2 + 12 * C1 * Lh**2 * G2sq / bx
    # Eq. (40)
    general = (2 * v["Delta"] / (eta * T) + C_eta * eta**2 + 18 * Lh**2 * v["Delta_y"] / (mu * gamma * T)
               + 54 * Lh**2 * gamma * s**2 / (by * mu) + 3 * G2sq / (2 * bx * M) + G1**2)
    bounds = {"general": general, "upper_noise": 3 * G2sq / (2 * bx * M),
              "lower_noise": 54 * Lh**2 * gamma * s**2 / (by * mu), "neumann_bias": G1**2,
              "big_O": kappa**5 / T + (kappa**16 / T**2) ** (1 / 3) + kappa**5 * s**2 / by + G2sq / (bx * M) + G1**2,
              "big_O_corollary2_printed": kappa**5 / T + (kappa**12 / T**2) ** (1 / 3) + G1**2,
              "big_O_corollary2_corrected": kappa**5 / T + (kappa**16 / T**2) ** (1 / 3) + G1**2}
    # Theorem 7 prints eta_bar = min(1/(2 sqrt C_1), mu gamma/(12 kappa Lhat), 1/(2 Lbar), 1/(6 I Lhat)); its proof needs
    # mu gamma/(48 kappa Lhat) and 1/(6 I Lbar) (spec §4.9 item 14): the encoding takes the proof's (safe) reading
    printed = min(1 / (2 * sqrt(C1)), mu * gamma7 / (12 * kappa * Lh), 1 / (2 * v["Lbar"]), 1 / (6 * I * Lh))
    safe = min(1 / (2 * sqrt(C1)), mu * gamma7 / (48 * kappa * Lh), 1 / (2 * v["Lbar"]), 1 / (6 * I * v["Lbar"]))
    assert safe < printed  # at this point the reading binds: the printed cap would admit steps the proof does not
    conditions = {"tau_N L < 1": (v["tau_N"] * L, 1.0), "gamma < 1/L": (gamma, 1 / L),
                  "eta <= eta_bar (safe reading)": (eta, safe)}
    assert_goldens(th.THEOREM_7, _only(th.THEOREM_7, v), bounds, conditions)
    assert_min_terms(th.THEOREM_7, "eta <= eta_bar (safe reading)", v,
                     [1 / (2 * sqrt(C1)), mu * gamma7 / (48 * kappa * Lh), 1 / (2 * v["Lbar"]), 1 / (6 * I * v["Lbar"])])


def test_theorem8_goldens():
    v = {**C, "I": 2, "M": 8, "T": 20000, "b": 3, "b1": 7, "eta": 1e-7, "Q": 6, "tau_N": 0.3}
    L, mu, Lh, s, I, M, T, b = v["L"], v["mu"], v["Lhat"], v["sigma"], v["I"], v["M"], v["T"], v["b"]
    eta = v["eta"]
    kappa, G1, G2sq, zeta = _local(v)
    bM = b * M
    gamma8 = 1 / (2 * L)  # the proof takes gamma = 1/(2L)
    # Theorem 8: c_nu = 32/(9bM) + Lhat/(24 I b^2 M^2), c_omega = 144 L^2/(bM mu^2) + Lhat/(24 I b^2 M^2)
    c_nu = 32 / (9 * bM) + Lh / (24 * I * b**2 * M**2)
    c_om = 144 * L**2 / (bM * mu**2) + Lh / (24 * I * b**2 * M**2)
    ubar = max(2, 16**3 * I**4.5 * Lh, c_nu**1.5, c_om**1.5)

    def alpha(t):  # delta/(u + t)^(1/3) with delta = (bM sigma)^(2/3)/Lhat^(2/3), u = (bM sigma)^2 ubar
        return bM ** (2 / 3) / (Lh ** (2 / 3) * (bM**2 * ubar + t) ** (1 / 3))
    C1 = kappa**2 / 64 + 648 * kappa**2 * Lh**2 / (mu**2 * gamma8**2) + 18 * Lh**2
    Csz = (9 * Lh**2 * c_om**2 * s**2 / (8 * L**2) + 9 * c_nu**2 * G2sq / 8 + c_nu**2 * G1**2 / 8
           + c_nu**2 * G2sq / (8 * b) + c_nu**2 * zeta**2 / 4)
    # last display of the proof; 36 Lhat^2 Delta_y/(mu gamma) where the paper prints /(kappa mu gamma) (§4.9 item 17)
    first = (2 * v["Delta"] / eta + 9 * b * s**2 / (4 * v["b1"] * alpha(1)) + 36 * Lh**2 * v["Delta_y"] / (mu * gamma8)
             + 2 * log(T + 1) * (bM**2 * Csz / Lh**2 + 4 * bM**2 * G1**2 / (Lh**2 * alpha(T) ** 2)))
    second = Lh ** (2 / 3) * ubar ** (1 / 3) / T + Lh ** (2 / 3) / (bM * T) ** (2 / 3)
    bounds = {"explicit": first * second,
              "big_O": kappa ** (19 / 3) * I**1.5 / T + kappa ** (16 / 3) / (bM * T) ** (2 / 3)
              + kappa**3 * b**2 * M**2 * I**4.5 * G1**2}
    # Theorem 8's eta cap as printed, plus 1/(2 Lbar) of Lemma 34 (its descent step needs it)
    terms = [mu * gamma8 / (144 * kappa * Lh), Lh**2 / (sqrt(C1) * c_nu), 1 / sqrt(C1 * I), Lh / sqrt(C1 * I),
             I * Lh**2 / (kappa * c_nu), 1, 1 / (2 * v["Lbar"])]
    conditions = {"tau_N L < 1": (v["tau_N"] * L, 1.0), "eta cap": (eta, min(terms))}
    assert_goldens(th.THEOREM_8, _only(th.THEOREM_8, v), bounds, conditions)
    assert_min_terms(th.THEOREM_8, "eta cap", v, terms)
