"""FESS-GDA theorems (sympy, sourced): Theorems 3.1-3.5, E.1 and Proposition 3.1 with their explicit
constants (spec §4), and the complexities sympy derives from their rate forms (spec §4.8).

Symbols follow spec §4.0: eta_x, eta_y are the EFFECTIVE step sizes, eta_xl, eta_yl the local ones.
"""

from __future__ import annotations

import functools
from typing import Any

import sympy as sp

from ratecheck.assumptions import (
    MINIMAX,
    bounded_domain,
    bounded_gradient,
    bounded_variance,
    heterogeneity,
    initial_gap,
    pl,
    smooth,
    two_sided_pl,
)
from ratecheck.theory import Bound, Condition, Source, Theorem, at_least, at_most
from ratecheck.theory import derive_complexity as _derive_complexity

KEY = "fessgda"
TITLE = "FESS-GDA (arXiv:2311.00944): federated stochastic smoothed GDA for minimax"
SEED = "004_57c332141565532a.txt (arXiv:2311.00944)"


src = Source.of(SEED)  # src("Theorem 2, eq. (14)", note) cites this paper

# ---------------------------------------------------------------------------------------------
# Symbols (spec §4.0)

l, mu, mu1, mu2, sigma, sigma_G, Delta, eps, D_Y, G_y, W0 = sp.symbols(
    "l mu mu1 mu2 sigma sigma_G Delta epsilon D_Y G_y W0", positive=True)
M, m, K, T = sp.symbols("M m K T", positive=True, integer=True)
eta_x, eta_y, eta_xl, eta_yl, beta, p = sp.symbols("eta_x eta_y eta_xl eta_yl beta p", positive=True)
kappa = l / mu
kappa1, kappa2 = l / mu1, l / mu2
# 1 when the problem certifies the curvature assumption (its constants include mu, resp. mu1 and mu2),
# else 0: a PL theorem asked of a non-PL problem then fails a condition, so the claim is
# INCONCLUSIVE with that reason instead of a silent PASS
pl_y, pl_xy = sp.symbols("PL_y PL_xy", positive=True)

# Eq, Min and Max here are built with evaluate=False: the same expressions (sympy drops no argument of
# them), without the symbolic comparisons that cost a fifth of a second at every import
# Lemma B.4 drift cap, +oo at K = 1 (pitfall P20)
LOC_CAP = sp.Piecewise((sp.oo, sp.Eq(K, 1, evaluate=False)), (1 / (2 * l * sp.sqrt(2 * (2 * K - 1) * (K - 1))), True))
# per-round error terms, Lemma C.7 (unconstrained Y) and its compact-Y version (spec §4.0)
DRIFT = 4 * eta_x * K * l**2 * (24 * K**2 * (eta_xl**2 + eta_yl**2) * sigma_G**2
                                + 3 * K * (eta_xl**2 + 2 * K * eta_yl**2) * sigma**2)
N_UNC = (25 * l * eta_x**2 * K**2 * (M - m) * sigma_G**2 / (m * M) + 15 * l * eta_x**2 * K * sigma**2 / m + DRIFT)
N_CON = (25 * l * eta_x**2 * K**2 * (M - m) * sigma_G**2 / (m * M) + 15 * l * eta_x**2 * K * sigma**2 / m
         + 8 * eta_y * K * (M - m) * sigma_G**2 / (m * M) + 4 * eta_y * sigma**2 / m
         + 4 * eta_x * K * l**2 * (24 * K**2 * (eta_xl**2 + eta_yl**2) * (sigma_G**2 + G_y**2)
                                   + 3 * K * (eta_xl**2 + 2 * K * eta_yl**2) * sigma**2))

# The epsilon local-step caps as printed (noise in the NUMERATOR) and as the proofs need them
# (spec §4.0, inconsistency 1): an O(.) with an unknown constant, so they are compared by their
# dependence on sigma (sympy elasticity), not evaluated.
EPS_CAP_PRINTED_31 = eps * sp.sqrt((sigma_G**2 + sigma**2) / kappa) / (K * l)
EPS_CAP_CORRECTED_31 = eps / (K * l * sp.sqrt(kappa * (sigma_G**2 + sigma**2)))


def _smoothed_conditions(where: str, beta_rhs: sp.Expr) -> tuple[Condition, ...]:
    """Common conditions of the p = 2l analysis (Lemma C.7 / F.3; spec §4.0)."""
    s = src(where)
    return (
        Condition("p >= 2l", at_least(p, 2 * l), s, "p = 2l"),
        Condition("p <= 2l", at_most(p, 2 * l), s, "p = 2l"),
        Condition("eta_x <= 1/(1000 K l)", at_most(eta_x, 1 / (1000 * K * l)), s),
        Condition("eta_y <= eta_x/256", at_most(eta_y, eta_x / 256), s, "the theorem sets equality; Lemma C.6 needs <="),
        Condition("beta <= beta_max", at_most(beta, beta_rhs), s, "the theorem sets equality"),
        Condition("eta_xl <= drift cap", at_most(eta_xl, LOC_CAP), src("Lemma B.4")),
        Condition("eta_xl <= sqrt(beta/(6144 eta_x p l^2 K^3))",
                  at_most(eta_xl, sp.sqrt(beta / (6144 * eta_x * p * l**2 * K**3))), s),
        Condition("eta_yl <= drift cap", at_most(eta_yl, LOC_CAP), src("Lemma B.4")),
        Condition("eta_yl <= sqrt(eta_y/(3072 eta_x l^2 K^2))",
                  at_most(eta_yl, sp.sqrt(eta_y / (3072 * eta_x * l**2 * K**2))), s),
    )


_COMMON_PARAMS = (M, m, K, T, eta_x, eta_y, eta_xl, eta_yl, beta, p)
_ETA_X_FULL = sp.Min(1 / (1000 * K * l), sp.sqrt(m * Delta) / (sigma * sp.sqrt(K * T * l)), evaluate=False)
# Theorems 3.1 and E.1 (m = M or sigma_G = 0): p = 2l, eta_y = eta_x/256, beta = eta_y K mu/80000
_SCHEDULE_MU = {p: 2 * l, eta_x: _ETA_X_FULL, eta_y: eta_x / 256, beta: eta_y * K * mu / 80000}

# ---------------------------------------------------------------------------------------------
# Theorem 3.1 (NC-PL), Appendix D, eqs. (11)-(13)

C31 = sp.Max(128 / (eta_x * K), 64 * kappa / (eta_y * K), 32 * p / beta, evaluate=False)
THEOREM_3_1 = Theorem(
    requires=MINIMAX.assume(smooth("l"), pl("mu"), bounded_variance("sigma"), heterogeneity("sigma_G"), initial_gap("Delta")),
    id="fessgda.theorem3_1",
    title="Theorem 3.1: NC-PL, (eps, eps/sqrt(kappa))-stationarity of f",
    source=src("Theorem 3.1 and Appendix D, eqs. (11)-(13)"),
    measure="avg:stat_kappa",
    constants=(l, mu, sigma, sigma_G, Delta, pl_y),
    parameters=_COMMON_PARAMS,
    assumptions=("2.1 l-smooth clients", "2.2 variance sigma^2", "2.3 heterogeneity sigma_G^2",
                 "2.4 Phi bounded below", "3.1 mu-PL in y (global f)"),
    schedule=_SCHEDULE_MU,
    conditions=(Condition("Assumption 3.1 (PL in y) certified by the problem", at_least(pl_y, 1), src("Assumption 3.1")),
                *_smoothed_conditions("Theorem 3.1 / Lemma C.7", eta_y * K * mu / 80000)),
    bounds=(
        Bound("explicit", C31 * (Delta / T + N_UNC),
              src("Appendix D, eqs. (11)-(13)", "re-derived in spec §4.1: (11)-(12) give 128/(eta_x K) where (13) "
                  "prints 128 kappa/(eta_x K), looser by kappa >= 1 (tests/test_goldens_fessgda.py)"),
              "max{128/(eta_x K), 64 kappa/(eta_y K), 32 p/beta} = 1.31e9 kappa/(eta_x K) at the theorem's choices"),
        Bound("rate_full", kappa / sp.sqrt(m * K * T) + kappa / T, src("Theorem 3.1 (i)", "O(.) form, spec §4.1"),
              "m = M or sigma_G = 0; the O(eps^2) drift part is made small by the local caps"),
        Bound("rate_partial", kappa / sp.sqrt(m * T), src("Theorem 3.1 (ii)", "O(.) form, K = O(1)")),
    ),
)

# Theorem E.1 (NC-SC, compact Y) and Theorem 3.3 (NC-C via the regularized run, spec §2.4(A))
THEOREM_E_1 = Theorem(
    requires=MINIMAX.assume(smooth("l"), pl("mu"), bounded_variance("sigma"), heterogeneity("sigma_G"), initial_gap("Delta"),
              bounded_gradient("G_y")),
    id="fessgda.theoremE_1",
    title="Theorem E.1: NC-SC with compact Y",
    source=src("Appendix E, Theorem E.1"),
    measure="avg:stat_sq",
    constants=(l, mu, sigma, sigma_G, Delta, G_y),
    parameters=_COMMON_PARAMS,
    schedule=_SCHEDULE_MU,
    conditions=_smoothed_conditions("Theorem E.1 / Lemma C.7", eta_y * K * mu / 80000),
    bounds=(
        Bound("explicit_x", (128 / (eta_x * K) + 32 * p / beta) * (Delta / T + N_CON), src("Appendix E", "spec §4.2")),
        Bound("explicit_y", 32 / (eta_y * K) * (Delta / T + N_CON), src("Appendix E", "spec §4.2; needs eta_y K <= 1/l")),
        Bound("rate", kappa / sp.sqrt(m * K * T) + kappa / T, src("Theorem E.1", "O(.) form with T = mK")),
    ),
)

THEOREM_3_3 = Theorem(
    requires=MINIMAX.assume(smooth("l"), bounded_domain("D_Y")),
    id="fessgda.theorem3_3",
    title="Theorem 3.3: NC-C, eps-stationarity of f via the regularized run",
    source=src("Theorem 3.3, Appendix G"),
    measure="avg:stat_sq",
    constants=(l, D_Y),
    parameters=(m, K, T, eps),
    conditions=(Condition("eps <= 2 l D(Y)", at_most(eps, 2 * l * D_Y), src("Theorem 3.3")),),
    bounds=(Bound("rate", (2 * l * D_Y / eps) / sp.sqrt(m * K * T) + (2 * l * D_Y / eps) / T,
                  src("Appendix G", "Theorem E.1's rate at kappa~ = 2 l D(Y)/eps (spec §4.5); order only")),),
)

# Theorem 3.2 (NC-1PC), Appendix F: explicit bounds (spec §4.4)
R32 = Delta / T + 192 * beta * D_Y * eps**2 + N_CON
THEOREM_3_2 = Theorem(
    requires=MINIMAX.assume(smooth("l"), bounded_variance("sigma"), heterogeneity("sigma_G"), initial_gap("Delta"),
              bounded_domain("D_Y"), bounded_gradient("G_y")),
    id="fessgda.theorem3_2",
    title="Theorem 3.2: NC-1PC, (eps, eps^2)-stationarity of f and eps-stationarity of Phi_{1/2l}",
    source=src("Theorem 3.2, Appendix F"),
    measure="avg:moreau_sq",
    constants=(l, sigma, sigma_G, Delta, D_Y, G_y),
    parameters=(*_COMMON_PARAMS, eps),
    schedule={p: 2 * l, eta_x: _ETA_X_FULL, eta_y: eta_x / 256, beta: eta_y * K * eps**2 / (80000 * D_Y)},
    conditions=(*_smoothed_conditions("Theorem 3.2 / Lemma F.3", eta_y * K * eps**2 / (80000 * D_Y)),
                Condition("eps^2 <= l D(Y)", at_most(eps**2, l * D_Y), src("Theorem 3.2"))),
    bounds=(
        Bound("explicit_x", (128 / (eta_x * K) + 32 * p / beta) * R32, src("Appendix F", "spec §4.4")),
        Bound("explicit_moreau", (1024 / (eta_x * K) + 18432 * l**2 * eta_y * K + 8192 * l * D_Y / (eta_y * K * eps**2)
                                  + 256 * p / beta) * R32 + 32 * l * D_Y * eps**2,
              src("Appendix F, eq. (36)", "constant 4D(Y) of (36); Lemma F.2 states 6, its proof 2 (spec §4.10)")),
        Bound("rate", 1 / (eps**2 * T) + 1 / (eps**2 * sp.sqrt(m * K * T)),
              src("Theorem 3.2", "O(.) form: p/beta ~ 1/(eta_x K eps^2), spec §4.4")),
    ),
)

# Theorem 3.4 (point-wise max, strict complementarity), Appendix H: delta, gamma_3, lambda_1..3 of
# Lemma H.1 are not computable, so beta's cap and the explicit bound are not evaluable: ORDER ONLY.
THEOREM_3_4 = Theorem(
    requires=MINIMAX.assume(smooth("l"),),
    id="fessgda.theorem3_4",
    title="Theorem 3.4: point-wise maximum with strict complementarity (order only)",
    source=src("Theorem 3.4, Appendix H, eq. (43)"),
    measure="stat_sq",
    constants=(l,),
    parameters=(m, K, T),
    conditions=(),
    bounds=(Bound("rate", 1 / T + 1 / sp.sqrt(m * K * T),
                  src("Theorem 3.4", "O(.) form with an eps-independent beta; constants delta, gamma_3 of Lemma H.1 "
                      "are not computable, so only the order is checked")),),
)

# Theorem 3.5 (PL-PL), Appendix I; recursion re-derived with the sign and constants corrected
A35 = eta_x * K * mu1 / 16
B35_NOISE = 4 * l * eta_y**2 * K * sigma**2 / m
B35_HET = 8 * l * eta_y**2 * K**2 * (M - m) * sigma_G**2 / (m * M)
B35_DRIFT = 4 * eta_y * K * l**2 * (24 * K**2 * (eta_xl**2 + eta_yl**2) * sigma_G**2
                                    + 3 * K * (eta_xl**2 + 2 * K * eta_yl**2) * sigma**2)
B35 = B35_NOISE + B35_HET + B35_DRIFT
W0s = sp.Symbol("W0_swap", positive=True)  # W'(x0, y0) of the swapped roles (spec §2.4(C))
# spec §2.4(C): the mu1 < mu2 branch is the mu1 >= mu2 recipe applied to g(y, x) = -f(x, y); every
# x/y quantity of the theorem is exchanged (simultaneously, xreplace)
ROLE_SWAP = {mu1: mu2, mu2: mu1, eta_x: eta_y, eta_y: eta_x, eta_xl: eta_yl, eta_yl: eta_xl, W0: W0s}


def theorem_3_5(swapped: bool = False) -> Theorem:
    """Theorem 3.5 (Appendix I) in the paper's branch mu1 >= mu2, or with the roles swapped (mu1 < mu2,
    algorithm fess_gda_swapped, potential W' = (Phi* - Psi0(y)) + (f - Psi0(y)), measure 'W_swap')."""
    sw = (lambda e: e.xreplace(ROLE_SWAP)) if swapped else (lambda e: e)
    tag = " [roles swapped, spec §2.4(C)]" if swapped else ""
    conditions = (
        ("Assumption 3.7 (two-sided PL) certified by the problem", at_least(pl_xy, 1), src("Assumptions 3.7, 3.8")),
        ("eta_y <= 1/(4lK)", at_most(eta_y, 1 / (4 * l * K)), src("Appendix I")),
        ("eta_x <= eta_y mu2^2/(64 l^2)", at_most(eta_x, eta_y * mu2**2 / (64 * l**2)), src("Appendix I")),
        ("eta_xl <= drift cap", at_most(eta_xl, LOC_CAP), src("Lemma B.4")),
        ("eta_xl <= sqrt(eta_x/(1536 eta_y l^2 K^2))", at_most(eta_xl, sp.sqrt(eta_x / (1536 * eta_y * l**2 * K**2))),
         src("Appendix I")),
        ("eta_yl <= drift cap", at_most(eta_yl, LOC_CAP), src("Lemma B.4")),
        ("eta_yl <= 1/sqrt(1536 l^2 K^2)", at_most(eta_yl, 1 / sp.sqrt(1536 * l**2 * K**2)),
         src("Appendix I", "printed without the square root (spec §4.7 (2))")),
        ("mu2 <= mu1 (branch)", at_most(mu2, mu1), src("Appendix I", "else swap roles, spec §2.4(C)")),
    )
    return Theorem(
        requires=MINIMAX.assume(smooth("l"), two_sided_pl("mu1", "mu2"), bounded_variance("sigma"), heterogeneity("sigma_G"),
                  initial_gap("W0_swap" if swapped else "W0")),
        id="fessgda.theorem3_5" + ("_swapped" if swapped else ""),
        title="Theorem 3.5: PL-PL, linear convergence of W_t (p = 0, " + ("case mu1 < mu2, roles swapped)" if swapped
                                                                        else "case mu1 >= mu2)"),
        source=src("Theorem 3.5, Appendix I" + (" case mu1 < mu2" if swapped else "")),
        measure="W_swap" if swapped else "W",
        constants=(l, mu1, mu2, sigma, sigma_G, W0s if swapped else W0, pl_xy),
        parameters=(M, m, K, T, eta_x, eta_y, eta_xl, eta_yl),
        schedule={sw(eta_y): 1 / (4 * l * K), sw(eta_x): sw(eta_y * mu2**2 / (64 * l**2))},
        # each side swapped, the relation left undecided like at_most's (xreplace would re-decide it)
        conditions=tuple(Condition(name + tag, type(rel)(sw(rel.lhs), sw(rel.rhs), evaluate=False), s)
                         for name, rel, s in conditions),
        bounds=(
            Bound("recursion", sw((1 - A35)**T * W0 + B35 / A35),
                  src("Appendix I", "re-derived: +b, 128, contraction a = eta_x K mu1/16 (spec §4.7)" + tag)),
            Bound("printed_contraction", sw((1 - eta_y * K * l / (256 * kappa1 * kappa2**2))**T * W0 + B35 / A35),
                  src("Appendix I", "as printed: 256 where the derivation gives 1024 (4x faster)" + tag)),
            Bound("floor", sw(B35 / A35), src("Appendix I", "steady state b/a" + tag)),
        ),
    )


THEOREM_3_5 = theorem_3_5()
THEOREM_3_5_SWAPPED = theorem_3_5(swapped=True)

# Proposition 3.1, phase 2 (Appendix J): FESS-GDA with p = 0 on f_i + l ||x - x~||^2 from an
# (eps, eps/sqrt(kappa))-stationary point; O(1) constants are not given, so ORDER ONLY (set to 1).
PROPOSITION_3_1 = Theorem(
    requires=MINIMAX.assume(smooth("l"), pl("mu"), bounded_variance("sigma"), heterogeneity("sigma_G")),
    id="fessgda.proposition3_1",
    title="Proposition 3.1: from stationarity of f to stationarity of Phi (phase 2, order only)",
    source=src("Proposition 3.1, Appendix J"),
    measure="dist_sq",
    constants=(l, mu, sigma, sigma_G),
    parameters=(M, m, K, T, eta_x, eps),
    conditions=(Condition("eta_x <= 1/(4 l K)", at_most(eta_x, 1 / (4 * l * K)), src("Appendix J")),),
    bounds=(Bound("order", kappa * eps**2 * (1 - eta_x * K * l / (256 * 9 * kappa))**T + kappa**2 * eta_x * sigma**2 / m
                  + kappa**2 * eta_x * K * (M - m) * sigma_G**2 / (m * M) + eps**2 / kappa**2,
                  src("Appendix J", "O(1) constants set to 1; the factor 9 comes from f~ being 3l-smooth (spec §4.3)")),),
)

# Corollary 3.1 (Phi-stationarity) and the Theorem 3.5 headline: orders only
kp, kpp = sp.symbols("kappa_p kappa_pp", positive=True)  # kappa' = max, kappa'' = min of kappa1, kappa2
kap = sp.Symbol("kappa", positive=True)
COMPLEXITY_ORDERS = {  # (per-client samples KT, rounds T) as printed (spec §4.3, §4.7, §4.8)
    "Cor 3.1 (full)": (kap**2 / (m * eps**4) + kap**5 * sp.log(kap) / (m * eps**2), kap / eps**2 + kap * sp.log(kap)),
    "Thm 3.5 (paper)": (kp**3 * kpp**4 * sp.log(kp / eps) / (m * eps**2), kp * kpp**2 * sp.log(kp / eps)),
    "Thm 3.5 (derived)": (kp**5 * kpp**2 * sp.log(kp / eps) / (m * eps**2), kp**2 * kpp * sp.log(kp / eps)),
}

THEOREMS = (THEOREM_3_1, THEOREM_E_1, THEOREM_3_2, THEOREM_3_3, THEOREM_3_4, THEOREM_3_5, THEOREM_3_5_SWAPPED,
            PROPOSITION_3_1)


# ---------------------------------------------------------------------------------------------
# Complexities derived with sympy from each theorem's rate form (spec §4.8)

N_SAMPLES = sp.Symbol("N", positive=True)  # per-client samples K T


def derive_complexity(rate: sp.Expr, *, k_is_constant: bool = False) -> tuple[sp.Expr, sp.Expr]:
    """(per-client samples KT, rounds T) that make every term of ``rate`` (a bound on a SQUARED
    measure) at most eps^2, in units l = 1 and with mu = 1/kappa (ratecheck.theory.derive_complexity).
    With ``k_is_constant`` (K = O(1), partial participation) samples and rounds coincide."""
    return _derive_complexity(rate, eps=eps, rounds=T, local_steps=K, samples=N_SAMPLES,
                              k_is_constant=k_is_constant, before={l: 1}, after={mu: 1 / kap})


_RATE_ROWS = (  # (setting, theorem, bound version, K = O(1)?, printed (KT, T))
    ("NC-PL, m = M or sigma_G = 0", THEOREM_3_1, "rate_full", False, (kap**2 / (m * eps**4), kap / eps**2)),
    ("NC-PL, m < M, sigma_G > 0", THEOREM_3_1, "rate_partial", True, (kap**2 / (m * eps**4), kap**2 / (m * eps**4))),
    ("NC-SC, compact Y", THEOREM_E_1, "rate", False, (kap**2 / (m * eps**4), kap / eps**2)),
    ("NC-1PC", THEOREM_3_2, "rate", False, (1 / (m * eps**8), eps**-4)),
    ("NC-C (regularized)", THEOREM_3_3, "rate", False, (1 / (m * eps**6), eps**-3)),
    ("point-wise max (2)", THEOREM_3_4, "rate", False, (1 / (m * eps**4), eps**-2)),
)


def complexity_theorem(row: int) -> str:
    """The id of the theorem behind complexity_table()[row] (known without deriving anything)."""
    return _RATE_ROWS[row][1].id


@functools.lru_cache(maxsize=1)
def complexity_table() -> list[dict[str, Any]]:
    """Each setting: the paper's (KT, T) and the ones sympy derives from the theorem's rate form;
    'agree' compares orders (their ratio is a constant)."""
    rows = []
    for setting, theorem, version, k_const, printed in _RATE_ROWS:
        rate = theorem.bound_expr(version, use_schedule=False)
        if theorem is THEOREM_3_3:
            rate = rate.subs(D_Y, 1)
        derived = derive_complexity(rate, k_is_constant=k_const)
        rows.append({"setting": setting, "theorem": theorem.id, "printed": printed, "derived": derived,
                     "agree": all(not sp.simplify(a / b).free_symbols for a, b in zip(printed, derived))})
    return rows


# Table 1 of the paper (communication complexity, full participation), spec §4.9; Lin et al. (2020)
# GDA (NC-SC, deterministic, eta_x = Theta(1/(kappa^2 l))) for the B1 baseline.
TABLE_1 = (  # (class, algorithm, partial participation covered, samples, rounds)
    ("NC-PL", "Local SGDA (Sharma et al. 2022)", False, kap**4 / (m * eps**4), kap**3 / eps**3),
    ("NC-PL", "SAGDA (Yang et al. 2022a)", True, kap**4 / (m * eps**4), kap**2 / eps**2),
    ("NC-PL", "Fed-Norm-SGDA (Sharma et al. 2023)", True, kap**4 / (m * eps**4), kap**2 / eps**2),
    ("NC-PL", "FedSGDA-M (Wu et al. 2023)", False, kap**3 / (m * eps**3), kap**2 / eps**2),
    ("NC-PL", "FESS-GDA (Corollary 3.1)", True, kap**2 / (m * eps**4), kap / eps**2),
    ("NC-1PC", "Local SGDA+ (Sharma et al. 2022)", False, eps**-8, eps**-7),
    ("NC-1PC", "Fed-Norm-SGDA+ (Sharma et al. 2023)", True, 1 / (m * eps**8), eps**-4),
    ("NC-1PC", "FESS-GDA (Theorem 3.2)", True, 1 / (m * eps**8), eps**-4),
    ("NC-C", "Local SGDA+ (Sharma et al. 2022)", False, 1 / (m * eps**8), eps**-7),
    ("NC-C", "Fed-Norm-SGDA+ (Sharma et al. 2023)", True, 1 / (m * eps**8), eps**-4),
    ("NC-C", "FedSGDA+ (Wu et al. 2023)", False, 1 / (m * eps**8), eps**-6),
    ("NC-C", "FESS-GDA (Theorem 3.2)", True, 1 / (m * eps**8), eps**-4),
    ("form (2)", "FESS-GDA (Theorem 3.4)", True, 1 / (m * eps**4), eps**-2),
)
GDA_LIN_2020_ROUNDS = kap**2 / eps**2  # Lin et al. (2020), Thm 4.4: O(kappa^2 l Delta eps^-2) iterations


