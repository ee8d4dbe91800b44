"""Goldens of FESS-GDA's theorem encodings (issue #23 item 3): every bound and condition of Theorem 3.5 (both
branches) and of Proposition 3.1 at a reference point against plain arithmetic on the printed expressions (paper
Appendix I, Lemma B.4, Appendix J, as quoted in spec fessgda §4.3 and §4.7), and of Theorems 3.1, E.1, 3.2, 3.3, 3.4
(Appendices D-H)."""

from math import sqrt

import pytest
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


# ---------------------------------------------------------------------------------------------
# Theorems 3.1, E.1, 3.2, 3.3, 3.4 (issue #23 item 3): every bound and condition against plain arithmetic on the
# printed expressions of Appendices D-H. The explicit bounds are the per-round inequalities the paper prints,
# telescoped (sum_t E V_t - E V_{t+1} <= Delta), each squared norm divided by its printed coefficient.

# a point off the schedule where every term is visible: p = 2l (Lemma B.3 and (36) hold only there), kappa = 3.25
W = {"l": 1.3, "mu": 0.4, "sigma": 0.8, "sigma_G": 0.6, "Delta": 2.0, "G_y": 0.7, "D_Y": 1.5, "epsilon": 0.05,
     "M": 16, "m": 4, "K": 3, "T": 500, "eta_x": 0.01, "eta_y": 0.03, "eta_xl": 1e-3, "eta_yl": 2e-3,
     "beta": 0.5, "p": 2.6}


def _noise(v, compact: bool) -> float:
    """The per-round error: Lemma C.7's terms as printed in (11) (unconstrained Y) and, with compact Y, in the proof of
    Theorem E.1 and Lemma F.3 (8 eta_y K (M-m) sG^2/(mM) + 4 eta_y s^2/m more, G_y^2 added to sG^2 in the drift)."""
    l, K, M, m, s, sG, ex, ey, exl, eyl = (v[k] for k in ("l", "K", "M", "m", "sigma", "sigma_G", "eta_x", "eta_y",
                                                          "eta_xl", "eta_yl"))
    het = sG**2 + (v["G_y"] ** 2 if compact else 0.0)
    n = (25 * l * ex**2 * K**2 * (M - m) * sG**2 / (m * M) + 15 * l * ex**2 * K * s**2 / m
         + 4 * ex * K * l**2 * (24 * K**2 * (exl**2 + eyl**2) * het + 3 * K * (exl**2 + 2 * K * eyl**2) * s**2))
    if compact:
        n += 8 * ey * K * (M - m) * sG**2 / (m * M) + 4 * ey * s**2 / m
    return n


def _smoothed_conditions(v, beta_rhs: float) -> dict[str, tuple[float, float]]:
    """The step-size conditions printed in Theorems 3.1, E.1, 3.2 (Appendix D, E, F) and Lemma B.4's drift cap."""
    l, K, ex, ey, p, beta = (v[k] for k in ("l", "K", "eta_x", "eta_y", "p", "beta"))
    cap = 1 / (2 * l * sqrt(2 * (2 * K - 1) * (K - 1)))
    return {
        "p >= 2l": (p, 2 * l), "p <= 2l": (p, 2 * l),
        "eta_x <= 1/(1000 K l)": (ex, 1 / (1000 * K * l)),
        "eta_y <= eta_x/256": (ey, ex / 256),
        "beta <= beta_max": (beta, beta_rhs),
        "eta_xl <= drift cap": (v["eta_xl"], cap),
        "eta_xl <= sqrt(beta/(6144 eta_x p l^2 K^3))": (v["eta_xl"], sqrt(beta / (6144 * ex * p * l**2 * K**3))),
        "eta_yl <= drift cap": (v["eta_yl"], cap),
        "eta_yl <= sqrt(eta_y/(3072 eta_x l^2 K^2))": (v["eta_yl"], sqrt(ey / (3072 * ex * l**2 * K**2))),
    }


def _schedule(v, beta_of_eta_y) -> dict[str, float]:
    """p = 2l, eta_x = min{1/(1000Kl), sqrt(m Delta)/(sigma sqrt(KTl))}, eta_y = eta_x/256 and the theorem's beta."""
    l, K, m, T = v["l"], v["K"], v["m"], v["T"]
    ex = min(1 / (1000 * K * l), sqrt(m * v["Delta"]) / (v["sigma"] * sqrt(K * T * l)))
    return {"p": 2 * l, "eta_x": ex, "eta_y": ex / 256, "beta": beta_of_eta_y(ex / 256)}


def test_theorem_3_1_goldens():
    """Appendix D. (11): E V_t - E V_t+1 >= eta_x K/64 ||grad_x f^||^2 + eta_y K/64 ||grad_y f||^2 + p beta/16 ||x - z||^2
    - N; (12): ||grad_x f||^2 <= 2 ||grad_x f^||^2 + 2 p^2 ||x - z||^2. So ||grad_x f||^2 + kappa ||grad_y f||^2 <=
    max{128/(eta_x K), 64 kappa/(eta_y K), 32 p/beta} (Delta/T + N). Rates: (i) and (ii) of the proof, O(1) = 1,
    without the O(eps^2) the local caps control."""
    v = {**W, "PL_y": 1.0}
    l, mu, K, m, T, ex, ey, p, beta = (v[k] for k in ("l", "mu", "K", "m", "T", "eta_x", "eta_y", "p", "beta"))
    kappa = l / mu
    derived = max(128 / (ex * K), 64 * kappa / (ey * K), 32 * p / beta) * (v["Delta"] / T + _noise(v, False))
    bounds = {"explicit": derived, "rate_full": kappa / sqrt(m * K * T) + kappa / T, "rate_partial": kappa / sqrt(m * T)}
    conditions = {"Assumption 3.1 (PL in y) certified by the problem": (1, 1.0),
                  **_smoothed_conditions(v, ey * K * mu / 80000)}
    values = {k: x for k, x in v.items() if k not in ("G_y", "D_Y", "epsilon")}
    assert_goldens(th.THEOREM_3_1, values, bounds, conditions,
                   schedule=_schedule(v, lambda e: e * K * mu / 80000))
    # Finding: (13) prints the first entry of the max as 128 kappa/(eta_x K); (11) and (12) give 128/(eta_x K). The
    # printed one is looser by kappa >= 1, so (13) is not wrong, only loose; the encoding keeps the derived constant.
    # At this point the first entry is the max, so the printed bound is exactly kappa times the encoded one.
    printed = max(128 * kappa / (ex * K), 64 * kappa / (ey * K), 32 * p / beta) * (v["Delta"] / T + _noise(v, False))
    assert th.THEOREM_3_1.evaluate(values, use_schedule=False).bounds["explicit"] * kappa == pytest.approx(printed, rel=1e-12)
    # on the theorem's schedule the max is 32 p/beta = 1.31e9 kappa/(eta_x K) (spec §4.1) and the two agree
    on = {**values, **_schedule(v, lambda e: e * K * mu / 80000)}
    exs = on["eta_x"]
    printed_on = max(128 * kappa / (exs * K), 64 * kappa / (on["eta_y"] * K), 32 * on["p"] / on["beta"]) * (
        v["Delta"] / T + _noise(on, False))
    assert 32 * on["p"] / on["beta"] == pytest.approx(1310720000 * kappa / (exs * K), rel=1e-12)
    assert th.THEOREM_3_1.evaluate(on, use_schedule=False).bounds["explicit"] == pytest.approx(printed_on, rel=1e-12)


def test_theorem_E_1_goldens():
    """Appendix E, proof of Theorem E.1: E V_t - E V_t+1 >= eta_x K/64 ||grad_x f^||^2 + 1/(32 eta_y K) ||y_bar - y||^2
    + p beta/16 ||x - z||^2 - N_con; with (12) (as (27)) and l^2||P_Y(y + grad_y f/l) - y||^2 <= ||y_bar - y||^2/(eta_y K)^2
    (eta_y K <= 1/l): x-part (128/(eta_x K) + 32 p/beta)(Delta/T + N_con), y-part 32/(eta_y K)(Delta/T + N_con)."""
    v = W
    l, mu, K, m, T, ex, ey, p, beta = (v[k] for k in ("l", "mu", "K", "m", "T", "eta_x", "eta_y", "p", "beta"))
    R = v["Delta"] / T + _noise(v, True)
    kappa = l / mu
    bounds = {"explicit_x": (128 / (ex * K) + 32 * p / beta) * R, "explicit_y": 32 / (ey * K) * R,
              "rate": kappa / sqrt(m * K * T) + kappa / T}
    values = {k: x for k, x in v.items() if k not in ("D_Y", "epsilon")}
    assert_goldens(th.THEOREM_E_1, values, bounds, _smoothed_conditions(v, ey * K * mu / 80000),
                   schedule=_schedule(v, lambda e: e * K * mu / 80000))


def test_theorem_3_2_goldens():
    """Appendix F, proof of Theorem 3.2: E V_t - E V_t+1 >= eta_x K/64 ||grad_x f^||^2 + 1/(128 eta_y K) ||y+ - y||^2
    + p beta/16 ||x - z||^2 - 192 beta D eps^2 - N_con. x-part by (33); Moreau part by (36) with Lemma B.1's gamma_1 =
    p/(p - l), gamma_2 = (l + p)/(p - l) and (36)'s 4 D(Y): 4p^2/(p-l)^2 ||grad_x f^||^2 + 4 p^2 gamma_2^2 ||y - y+||^2
    + 4 p^2 (4D/(l eta_y^2 K^2 eps^2) ||y+ - y||^2 + 2 D eps^2/l) + 4 p^2 gamma_1^2 ||z - x||^2."""
    v = W
    l, K, m, T, ex, ey, p, beta, D, eps = (v[k] for k in ("l", "K", "m", "T", "eta_x", "eta_y", "p", "beta", "D_Y",
                                                           "epsilon"))
    R = v["Delta"] / T + 192 * beta * D * eps**2 + _noise(v, True)
    g1, g2 = p / (p - l), (l + p) / (p - l)
    a, b, c = 64 / (ex * K), 128 * ey * K, 16 / (p * beta)  # ||grad_x f^||^2, ||y+ - y||^2, ||x - z||^2 per unit of R
    moreau = ((4 * p**2 / (p - l) ** 2) * a + 4 * p**2 * g2**2 * b + 4 * p**2 * 4 * D / (l * ey**2 * K**2 * eps**2) * b
              + 4 * p**2 * g1**2 * c) * R + 4 * p**2 * 2 * D * eps**2 / l
    bounds = {"explicit_x": (2 * a + 2 * p**2 * c) * R, "explicit_moreau": moreau,
              "rate": 1 / (eps**2 * T) + 1 / (eps**2 * sqrt(m * K * T))}
    conditions = {**_smoothed_conditions(v, ey * K * eps**2 / (80000 * D)), "eps^2 <= l D(Y)": (eps**2, l * D)}
    values = {k: x for k, x in v.items() if k != "mu"}
    assert_goldens(th.THEOREM_3_2, values, bounds, conditions,
                   schedule=_schedule(v, lambda e: e * K * eps**2 / (80000 * D)))


def test_theorem_3_3_goldens():
    """Appendix G: f~ = f - eps/(4 D) ||y - y0||^2 is 2l-smooth when eps <= 2 l D(Y), kappa' = 2 l D(Y)/eps, and Theorem
    E.1's rate kappa/sqrt(mKT) + kappa/T at kappa'."""
    l, D, eps, m, K, T = 1.3, 1.5, 0.05, 4, 3, 500
    kp = 2 * l * D / eps
    values = {"l": l, "D_Y": D, "epsilon": eps, "m": m, "K": K, "T": T}
    assert_goldens(th.THEOREM_3_3, values, {"rate": kp / sqrt(m * K * T) + kp / T},
                   {"eps <= 2 l D(Y)": (eps, 2 * l * D)})


def test_theorem_3_4_goldens():
    """Appendix H: T = mK = O(eps^-2) and KT = O(m^-1 eps^-4), i.e. the rate 1/T + 1/sqrt(mKT) with O(1) = 1; beta's
    cap (delta, gamma_3, lambda_1..3 of Lemma H.1) is not computable, so the theorem encodes no condition."""
    m, K, T = 4, 3, 500
    assert_goldens(th.THEOREM_3_4, {"l": 1.3, "m": m, "K": K, "T": T}, {"rate": 1 / T + 1 / sqrt(m * K * T)}, {})
