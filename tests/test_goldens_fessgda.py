"""Goldens of FESS-GDA's theorem encodings (issue #23 item 3): every bound and condition of Theorem 3.5 (both
branches) and of Proposition 3.1 at a reference point against plain arithmetic on the printed expressions (paper
Appendix I, Lemma B.4, Appendix J, as quoted in spec fessgda §4.3 and §4.7). Theorems 3.1-3.4 and E.1 have no
golden yet."""

from math import sqrt

from goldens import assert_goldens

from ratecheck.proofs.fessgda import theorems as th

V = {"l": 1.3, "mu1": 0.5, "mu2": 0.35, "sigma": 0.8, "sigma_G": 0.6, "W0": 2.5, "W0_swap": 1.7, "PL_xy": 1.0,
     "M": 16, "m": 4, "K": 3, "T": 4000, "eta_x": 2e-4, "eta_y": 0.05, "eta_xl": 1e-3, "eta_yl": 2e-3}


def _theorem_3_5(v, mu1, mu2, eta_x, eta_y, eta_xl, eta_yl, W0):
    """Appendix I (re-derived, spec §4.3): a = eta_x K mu1/16, b = 4 l eta_y^2 K s^2/m + 8 l eta_y^2 K^2 (M-m) s_G^2/(mM)
    + 4 eta_y K l^2 [24 K^2 (eta_xl^2 + eta_yl^2) s_G^2 + 3 K (eta_xl^2 + 2 K eta_yl^2) s^2]; printed: 256 in the
    contraction eta_y K l/(256 kappa1 kappa2^2)."""
    l, K, M, m, T, s, sG = v["l"], v["K"], v["M"], v["m"], v["T"], v["sigma"], v["sigma_G"]
    a = eta_x * K * mu1 / 16
    b = (4 * l * eta_y**2 * K * s**2 / m + 8 * l * eta_y**2 * K**2 * (M - m) * sG**2 / (m * M)
         + 4 * eta_y * K * l**2 * (24 * K**2 * (eta_xl**2 + eta_yl**2) * sG**2 + 3 * K * (eta_xl**2 + 2 * K * eta_yl**2) * s**2))
    k1, k2 = l / mu1, l / mu2
    bounds = {"recursion": (1 - a) ** T * W0 + b / a,
              "printed_contraction": (1 - eta_y * K * l / (256 * k1 * k2**2)) ** T * W0 + b / a, "floor": b / a}
    loc_cap = 1 / (2 * l * sqrt(2 * (2 * K - 1) * (K - 1)))  # Lemma B.4 (K > 1)
    conditions = {
        "Assumption 3.7 (two-sided PL) certified by the problem": (1, v["PL_xy"]),
        "eta_y <= 1/(4lK)": (eta_y, 1 / (4 * l * K)),
        "eta_x <= eta_y mu2^2/(64 l^2)": (eta_x, eta_y * mu2**2 / (64 * l**2)),
        "eta_xl <= drift cap": (eta_xl, loc_cap),
        "eta_xl <= sqrt(eta_x/(1536 eta_y l^2 K^2))": (eta_xl, sqrt(eta_x / (1536 * eta_y * l**2 * K**2))),
        "eta_yl <= drift cap": (eta_yl, loc_cap),
        "eta_yl <= 1/sqrt(1536 l^2 K^2)": (eta_yl, 1 / sqrt(1536 * l**2 * K**2)),
        "mu2 <= mu1 (branch)": (mu2, mu1),
    }
    return bounds, conditions


def test_theorem_3_5_goldens():
    v = V
    bounds, conditions = _theorem_3_5(v, v["mu1"], v["mu2"], v["eta_x"], v["eta_y"], v["eta_xl"], v["eta_yl"], v["W0"])
    values = {k: x for k, x in v.items() if k != "W0_swap"}
    assert_goldens(th.THEOREM_3_5, values, bounds, conditions)


def test_theorem_3_5_swapped_goldens():
    """Spec §2.4(C): the same recipe with the roles of (x, mu1, eta_x, eta_xl) and (y, mu2, eta_y, eta_yl) exchanged."""
    v = V
    bounds, conditions = _theorem_3_5(v, v["mu2"], v["mu1"], v["eta_y"], v["eta_x"], v["eta_yl"], v["eta_xl"],
                                      v["W0_swap"])
    tag = " [roles swapped, spec §2.4(C)]"
    values = {k: x for k, x in v.items() if k != "W0"}
    assert_goldens(th.THEOREM_3_5_SWAPPED, values, bounds, {name + tag: lr for name, lr in conditions.items()})


def test_proposition_3_1_goldens():
    # Appendix J, orders with the O(1) constants set to 1: kappa eps^2 (1 - eta_x K l/(256 * 9 kappa))^T
    # + kappa^2 eta_x sigma^2/m + kappa^2 eta_x K (M - m) sigma_G^2/(mM) + eps^2/kappa^2, kappa = l/mu
    l, mu, s, sG, M, m, K, T, ex, eps = 1.3, 0.4, 0.8, 0.6, 16, 4, 3, 500, 0.01, 0.05
    kappa = l / mu
    order = (kappa * eps**2 * (1 - ex * K * l / (256 * 9 * kappa)) ** T + kappa**2 * ex * s**2 / m
             + kappa**2 * ex * K * (M - m) * sG**2 / (m * M) + eps**2 / kappa**2)
    values = {"l": l, "mu": mu, "sigma": s, "sigma_G": sG, "M": M, "m": m, "K": K, "T": T, "eta_x": ex, "epsilon": eps}
    assert_goldens(th.PROPOSITION_3_1, values, {"order": order}, {"eta_x <= 1/(4 l K)": (ex, 1 / (4 * l * K))})
