"""SimFBO / ShroFBO theorems (sympy, sourced): Theorems 1-2 with the constants of Lemmas 1-4, Prop. 1 and
Lemma 8, the step-size conditions of §D.5 and the explicit bound of §D.6 term by term (spec §4.1-§4.6).
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from ratecheck.assumptions import (
    BILEVEL,
    bounded_variance,
    heterogeneity,
    initial_distance,
    initial_gap,
    smooth,
    strongly_convex,
)
from ratecheck.theory import Bound, Condition, Source, Theorem, at_most

KEY = "simfbo"
TITLE = "SimFBO / ShroFBO (arXiv 2023): simple, flexible, communication-efficient federated bilevel learning"
SEED = "000_66e1ccf0a50396e9.txt (SimFBO, arXiv 2023)"


src = Source.of(SEED)  # src("Theorem 2, eq. (14)", note) cites this paper


# --------------------------------------------------------------------------------------------
# Symbols and the constants of Lemmas 1-4, Prop. 1, Lemma 8 (spec §4.1, §4.6)

L_f, L_1, L_2, L_3, mu_g = sp.symbols("L_f L_1 L_2 L_3 mu_g", positive=True)
sigma_f, sigma_g, sigma_gg = sp.symbols("sigma_f sigma_g sigma_gg", nonnegative=True)
beta_gh, sigma_gh = sp.symbols("beta_gh sigma_gh", nonnegative=True)
alpha_min, alpha_max = sp.symbols("alpha_min alpha_max", positive=True)
beta_max, c_a, c_a_p = sp.symbols("beta_max c_a c_a_p", positive=True)
Delta, y0_err, v0_err = sp.symbols("Delta y0_err v0_err", nonnegative=True)
n, P, T, tau_bar, rho_bar, rho_max, rho_min = sp.symbols("n P T tau_bar rho_bar rho_max rho_min", positive=True)
gamma_x, eta_x, eta_y, eta_v = sp.symbols("gamma_x eta_x eta_y eta_v", positive=True)
c_gy, c_gv = sp.symbols("c_gamma_y c_gamma_v", positive=True)
c_x, c_eta, rho_0, kappa = sp.symbols("c_x c_eta rho_0 kappa", positive=True)

r = L_f / mu_g
r_max = (1 + alpha_max / alpha_min) * r
L_R = sp.sqrt(2 * (L_2**2 * r_max**2 + L_1**2))
L_tld = L_1 + L_1**2 / mu_g + L_f * (L_2 / mu_g + L_1 * L_2 / mu_g**2)
L_Phi = L_tld + L_tld * L_1 / mu_g
L_y = L_1 / mu_g
L_v = sp.sqrt(2 * L_1**2 / mu_g**2 + 2 * L_f**2 * L_2**2 / mu_g**4) * sp.sqrt(1 + L_y**2)
L_yx = (L_2 + L_2 * L_y) / mu_g + L_1 * (L_2 + L_2 * L_y) / mu_g**2
L_vx = 2 / mu_g * sp.sqrt((L_2**2 + r**2 * L_3**2 + L_2**2 * L_v**2) * (1 + L_y**2) + L_2**2 * L_v**2)
sM1sq = alpha_max**2 * (sigma_f**2 + r_max**2 * sigma_gg**2) + alpha_max * (L_f**2 + r_max**2 * L_1**2)
sM2sq = alpha_max**2 * sigma_g**2 + sM1sq + 2 * c_a * alpha_max * sigma_gh**2
K_1 = (40 * (L_1**2 + r**2 * L_2**2) / mu_g + 384 * L_R**2 * L_1**2 / mu_g**3) / c_gy
K_2 = 6 * L_1**2 / (mu_g * c_gv)
c_gy_min = sp.sqrt(256 * L_y / mu_g * (40 * (L_1**2 + r**2 * L_2**2) / mu_g + 384 * L_R**2 * L_1**2 / mu_g**3))
c_gv_min = sp.sqrt(256 * L_v / mu_g * 6 * L_1**2 / mu_g)
Q = L_Phi**2 / 2 + K_1 * (L_y**2 + L_yx / 2) + K_2 * (L_v**2 + L_vx / 2) + 2 * K_2 * c_gv**2
M_1 = 2 * Q * beta_max * (L_f**2 + r_max**2 * L_1**2) + K_1 * c_gy**2 * beta_max * sigma_gh**2
M_2 = 2 * Q * (sigma_f**2 + r_max**2 * sigma_gg**2) + K_1 * c_gy**2 * sigma_g**2
M_3 = (3 * (sp.Rational(3, 2) + 24 * K_2 * c_gv + beta_max / P * (sp.Rational(17, 4) + 16 * K_2 * c_gv))
       * (L_1**2 + r**2 * L_2**2)
       + K_1 * (4 * c_gy * L_1**2 / mu_g + 8 * c_gv * (2 * beta_max / P + 3) * L_1**2) + K_2 * c_gv * 4 * L_R**2 / mu_g)
Delta_Psi = Delta + K_1 * y0_err + K_2 * v0_err  # Psi_0 - inf Psi (spec §4.4)

# The step-size cap on rho^(t) gamma_x (eq. (38)-(39), §D.5), term by term; term 9 as printed (§4.8 item 8)
STEP_TERMS = (
    mu_g / (12 * L_1**2 * c_gv),
    mu_g / (36 * L_1**2 * c_gv) / (2 * beta_max / P + 3),
    P * mu_g * c_gv / (36 * L_1**2 * beta_max) / (L_v**2 + L_vx / 2),
    P / (6 * L_Phi**2 * beta_max),
    4 / L_Phi**2,
    4 / c_gy,
    4 / c_gv,
    mu_g / (12 * c_gy) / ((2 * beta_max / P + 3) * L_1**2 + 2 * beta_max * beta_gh**2 / P + 3 * L_1**2),
    P * c_gy * mu_g / (36 * beta_max * (L_1**2 + r**2 * L_2**2)) / (L_v**2 + L_yx / 2),
    c_gy * mu_g / (4 * L_yx * (L_f**2 + r_max**2 * L_1**2)),
    c_gv * mu_g / (4 * L_vx * (L_f**2 + r_max**2 * L_1**2)),
    sp.Rational(1, 8) / (K_1 * (L_y**2 + L_yx / 2) + K_2 * (L_v**2 + L_vx / 2)),
)

# The explicit bound of spec §4.4 (eqs. (46)-(52)), term by term. M_1, M_2, M_3, sigma_M1^2, sigma_M2^2 and
# Delta_Psi enter as symbols whose values ``bindings`` computes from the expressions above (MACROS): this
# keeps the orders fast to derive. M_3 depends on P only through beta_max/P in a term that is O(1/T)
# under the schedule, so treating it as a constant does not change any leading order below.
M1s, M2s, M3s, sM1s, sM2s, DPsi = sp.symbols("M_1 M_2 M_3 sigma_M1_sq sigma_M2_sq Delta_Psi", nonnegative=True)
MACROS = {M1s: M_1, M2s: M_2, M3s: M_3, sM1s: sM1sq, sM2s: sM2sq, DPsi: Delta_Psi}
INIT_TERM = 4 * DPsi / (T * rho_bar * gamma_x)
PARTIAL_TERM = 12 * rho_bar * gamma_x * (n - P) / (P * (n - 1)) * M1s
SYNC_TERM = 6 * alpha_max * beta_max / (c_a_p * alpha_min) * rho_bar * gamma_x * M2s / (P * tau_bar)
DRIFT_TERM = 6 * ((eta_x**2 + eta_v**2) * tau_bar * sM1s + 2 * eta_y**2 * tau_bar * sM2s) * M3s
EXPLICIT = INIT_TERM + PARTIAL_TERM + SYNC_TERM + DRIFT_TERM
# eq. (9): the O-form with its constants dropped; uses (n - P)/n (spec §4.8 item 5)
O_FORM = M1s * (n - P) / n * sp.sqrt(tau_bar / (P * T)) + M2s * sp.sqrt(1 / (P * tau_bar * T)) + M3s / (tau_bar * T)

CONSTANTS = (L_f, L_1, L_2, L_3, mu_g, sigma_f, sigma_g, sigma_gg, beta_gh, sigma_gh, alpha_min, alpha_max,
             beta_max, c_a, c_a_p, Delta, y0_err, v0_err, *MACROS)
PARAMETERS = (n, P, T, tau_bar, rho_bar, rho_max, rho_min, gamma_x, eta_x, eta_y, eta_v, c_gy, c_gv,
              c_x, c_eta, rho_0, kappa)
SCHEDULE = {
    gamma_x: c_x * sp.sqrt(P / (tau_bar * T)),
    eta_x: c_eta / (tau_bar * sp.sqrt(T)),
    eta_y: c_eta / (tau_bar * sp.sqrt(T)),
    eta_v: c_eta / (tau_bar * sp.sqrt(T)),
    rho_bar: rho_0 * tau_bar,
}

CONDITIONS = (
    *(Condition(f"rho gamma_x cap {k + 1}", at_most(rho_max * gamma_x, term), src("eqs. (38)-(39), §D.5", f"term {k + 1}"))
      for k, term in enumerate(STEP_TERMS)),
    Condition("c_gamma_y >= 256 K_1 L_y/mu_g", at_most(c_gy_min, c_gy), src("§D.5", "K_1 ∝ 1/c_gamma_y: closed-form minimum")),
    Condition("c_gamma_v >= 256 K_2 L_v/mu_g", at_most(c_gv_min, c_gv), src("§D.5", "K_2 ∝ 1/c_gamma_v: closed-form minimum")),
    Condition("eta_x^2 tau_bar cap", at_most(eta_x**2 * tau_bar, 1 / (2 * c_a * alpha_max * L_1**2)), src("Prop. 3 / Lemma 8")),
    Condition("eta_y^2 tau_bar cap (a)", at_most(eta_y**2 * tau_bar, 1 / (4 * c_a * alpha_max * L_1**2)), src("Prop. 3 / Lemma 8")),
    Condition("eta_y^2 tau_bar cap (b)", at_most(eta_y**2 * tau_bar, mu_g**2 / (96 * c_a * alpha_max * L_1**4)),
              src("§D.5 local step conditions")),
    Condition("C6: eta_v alpha_max L_1 <= 1", at_most(eta_v * alpha_max * L_1, 1),
              src("proof of Prop. 1 / Lemma 2", "implicit (spec §3.2 C6, §4.8 item 19)")),
    Condition("C4: rho^(t) <= 3 rho_bar/2", at_most(rho_max, 3 * rho_bar / 2), src("Appendix B / eq. (46)", "implicit (C4)")),
    Condition("C4: rho^(t) >= rho_bar/2", at_most(rho_bar / 2, rho_min), src("Appendix B / eq. (46)", "implicit (C4)")),
)


def _bounds(prefix_note: str = "") -> tuple[Bound, ...]:
    return (
        Bound("explicit", EXPLICIT, src("§D.6 eqs. (46)-(52)", "explicit form before the O(.) step (spec §4.4)")),
        Bound("full_participation", EXPLICIT.subs(n, P), src("§D.6, P = n", "the partial-participation term vanishes")),
        Bound("init_term", INIT_TERM, src("eq. (46)", "initialization")),
        Bound("partial_term", PARTIAL_TERM, src("eq. (47)", "exact finite-population factor (n-P)/(n-1) of Lemma 9")),
        Bound("partial_term_per_fpc", 12 * rho_bar * gamma_x / P * M1s,
              src("eq. (47) divided by (n-P)/(n-1)", "what test T4 keeps constant")),
        Bound("sync_term", SYNC_TERM, src("eq. (49)", "full-synchronization noise")),
        Bound("drift_term", DRIFT_TERM, src("eq. (51)", "client drift (Lemma 8)")),
        Bound("eq9_O_form", O_FORM, src("Theorem 1, eq. (9)", "constants dropped: orders only, not a numeric bound")),
    )


ASSUMPTIONS = ("A1 strong convexity of g_i in y, C^2", "A2 Lipschitz L_f, L_1, L_2, L_3",
               "A3 bounded variance", "A4 lower-level heterogeneity (used, not cited: §4.8 item 1)",
               "C1-C6 implicit conditions of Appendix B (spec §3.2)")

# what a family must certify (ratecheck.assumptions): Assumptions 1-5 of the paper, quantified
REQUIRES = BILEVEL.assume(smooth("L_f", "L_1", "L_2", "L_3"), strongly_convex("mu_g"), bounded_variance("sigma_f", "sigma_g", "sigma_gg"),
            heterogeneity("beta_gh", "sigma_gh"), initial_gap("Delta"), initial_distance("y0_err", "v0_err"))

THEOREM_1 = Theorem(
    requires=REQUIRES,
    id="simfbo.theorem1",
    title="Theorem 1: SimFBO, min_t E||grad Phi-tilde(x^t)||^2 (average over t)",
    source=src("Theorem 1, eq. (9); §D.5-D.6"),
    measure="avg:grad_norm_sq",
    constants=CONSTANTS,
    parameters=PARAMETERS,
    assumptions=ASSUMPTIONS,
    schedule=SCHEDULE,
    conditions=CONDITIONS,
    bounds=_bounds(),
)

beta_p_max, beta_min = sp.symbols("beta_p_max beta_min", positive=True)
THM2_FACTOR = 2 * (1 + 2 * ((beta_p_max - beta_min) / beta_min) ** 2)
THEOREM_2 = Theorem(
    requires=REQUIRES,
    id="simfbo.theorem2",
    title="Theorem 2: ShroFBO, min_t E||grad Phi(x^t)||^2 (w = p)",
    source=src("Theorem 2; Appendix E"),
    measure="avg:grad_norm_sq",
    constants=(*CONSTANTS, beta_p_max, beta_min),
    parameters=PARAMETERS,
    assumptions=ASSUMPTIONS,
    schedule=SCHEDULE,
    conditions=CONDITIONS,
    bounds=(
        Bound("explicit", EXPLICIT, src("Appendix E with w = p", "spec §4.5: Theorem 1's explicit bound at w = p")),
        Bound("paper_factor", THM2_FACTOR * EXPLICIT, src("Appendix E, last display",
                                                         "carries 2[1 + 2((b'_max - b_min)/b_min)^2] >= 2 even at w = p")),
        *(b for b in _bounds() if b.version not in ("explicit",)),
    ),
)

# Corollary (Theorem 1, §D.6): full participation with tau_bar = kappa T / n -> O(1/T), i.e. eps^-1 rounds
THEOREM_1_GROWING_TAU = dataclasses.replace(
    THEOREM_1, id="simfbo.theorem1.growing_tau", title="Theorem 1 with tau_bar = kappa T/n (full participation)",
    source=src("Theorem 1 and §D.6", "tau_bar = Theta(T/n) gives T = O(eps^-1)"),
    schedule={**SCHEDULE, tau_bar: kappa * T / P},
)
THEOREMS = (THEOREM_1, THEOREM_2, THEOREM_1_GROWING_TAU)


