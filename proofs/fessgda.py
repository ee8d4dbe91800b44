"""FESS-GDA: "Stochastic Smoothed Gradient Descent Ascent for Federated Minimax Optimization".

Paper: ../shared/seeds/004_57c332141565532a.txt (arXiv:2311.00944, Shen, Huang, Zhang, Shen; AISTATS 2024).
Spec:  ../shared/spec/fessgda.md (§4 theorems with explicit constants, §4.8 complexity table, §6 test
problems, §8 pitfalls, §9 inconsistencies).

Symbols follow spec §4.0: eta_x = eta_{x,g} eta_{x,l} and eta_y = eta_{y,g} eta_{y,l} are the
EFFECTIVE step sizes every theorem is stated in; eta_xl, eta_yl the local ones (only capped); K local
steps, T rounds, m of M clients per round.

Runs use the practical constants of spec §6.0 wherever the theory constants (1000, 256, 80000, ...)
would make progress invisible; then the theorem is evaluated symbolically only, and claims that
need its conditions (A1) use the theory step sizes exactly.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any, Callable, Mapping

import numpy as np
import sympy as sp

from problems import make_problem
from ratecheck.fit import log_rate
from ratecheck.claims import (
    observe,
    RateClaim,
    BoundClaim,
    ExpectedOrder,
    HittingTimeClaim,
    Profile,
    ValueClaim,
    tail_average,
    SlopeClaim,
    Verdict,
)
from ratecheck.paper import Paper
from ratecheck.theory import Bound, Condition, Source, Theorem, elasticity
from ratecheck.trace import RunConfig, Trace

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

# Lemma B.4 drift cap, +oo at K = 1 (pitfall P20)
LOC_CAP = sp.Piecewise((sp.oo, sp.Eq(K, 1)), (1 / (2 * l * sp.sqrt(2 * (2 * K - 1) * (K - 1))), True))
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
        Condition("p >= 2l", p >= 2 * l, s, "p = 2l"),
        Condition("p <= 2l", p <= 2 * l, s, "p = 2l"),
        Condition("eta_x <= 1/(1000 K l)", eta_x <= 1 / (1000 * K * l), s),
        Condition("eta_y <= eta_x/256", eta_y <= eta_x / 256, s, "the theorem sets equality; Lemma C.6 needs <="),
        Condition("beta <= beta_max", beta <= beta_rhs, s, "the theorem sets equality"),
        Condition("eta_xl <= drift cap", eta_xl <= LOC_CAP, src("Lemma B.4")),
        Condition("eta_xl <= sqrt(beta/(6144 eta_x p l^2 K^3))",
                  eta_xl <= sp.sqrt(beta / (6144 * eta_x * p * l**2 * K**3)), s),
        Condition("eta_yl <= drift cap", eta_yl <= LOC_CAP, src("Lemma B.4")),
        Condition("eta_yl <= sqrt(eta_y/(3072 eta_x l^2 K^2))",
                  eta_yl <= sp.sqrt(eta_y / (3072 * eta_x * l**2 * K**2)), s),
    )


_COMMON_PARAMS = (M, m, K, T, eta_x, eta_y, eta_xl, eta_yl, beta, p)
_ETA_X_FULL = sp.Min(1 / (1000 * K * l), sp.sqrt(m * Delta) / (sigma * sp.sqrt(K * T * l)))
# Theorems 3.1 and E.1 (m = M or sigma_G = 0): p = 2l, eta_y = eta_x/256, beta = eta_y K mu/80000
_SCHEDULE_MU = {p: 2 * l, eta_x: _ETA_X_FULL, eta_y: eta_x / 256, beta: eta_y * K * mu / 80000}

# ---------------------------------------------------------------------------------------------
# Theorem 3.1 (NC-PL), Appendix D, eqs. (11)-(13)

C31 = sp.Max(128 / (eta_x * K), 64 * kappa / (eta_y * K), 32 * p / beta)
THEOREM_3_1 = Theorem(
    id="fessgda.theorem3_1",
    title="Theorem 3.1: NC-PL, (eps, eps/sqrt(kappa))-stationarity of f",
    source=src("Theorem 3.1 and Appendix D, eqs. (11)-(13)"),
    measure="avg:stat_kappa",
    constants=(l, mu, sigma, sigma_G, Delta, pl_y),
    parameters=_COMMON_PARAMS,
    assumptions=("2.1 l-smooth clients", "2.2 variance sigma^2", "2.3 heterogeneity sigma_G^2",
                 "2.4 Phi bounded below", "3.1 mu-PL in y (global f)"),
    schedule=_SCHEDULE_MU,
    conditions=(Condition("Assumption 3.1 (PL in y) certified by the problem", pl_y >= 1, src("Assumption 3.1")),
                *_smoothed_conditions("Theorem 3.1 / Lemma C.7", eta_y * K * mu / 80000)),
    bounds=(
        Bound("explicit", C31 * (Delta / T + N_UNC), src("Appendix D, eqs. (11)-(13)", "re-derived in spec §4.1"),
              "max{128/(eta_x K), 64 kappa/(eta_y K), 32 p/beta} = 1.31e9 kappa/(eta_x K) at the theorem's choices"),
        Bound("rate_full", kappa / sp.sqrt(m * K * T) + kappa / T, src("Theorem 3.1 (i)", "O(.) form, spec §4.1"),
              "m = M or sigma_G = 0; the O(eps^2) drift part is made small by the local caps"),
        Bound("rate_partial", kappa / sp.sqrt(m * T), src("Theorem 3.1 (ii)", "O(.) form, K = O(1)")),
    ),
)

# Theorem E.1 (NC-SC, compact Y) and Theorem 3.3 (NC-C via the regularized run, spec §2.4(A))
THEOREM_E_1 = Theorem(
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
    id="fessgda.theorem3_3",
    title="Theorem 3.3: NC-C, eps-stationarity of f via the regularized run",
    source=src("Theorem 3.3, Appendix G"),
    measure="avg:stat_sq",
    constants=(l, D_Y),
    parameters=(m, K, T, eps),
    conditions=(Condition("eps <= 2 l D(Y)", eps <= 2 * l * D_Y, src("Theorem 3.3")),),
    bounds=(Bound("rate", (2 * l * D_Y / eps) / sp.sqrt(m * K * T) + (2 * l * D_Y / eps) / T,
                  src("Appendix G", "Theorem E.1's rate at kappa~ = 2 l D(Y)/eps (spec §4.5); order only")),),
)

# Theorem 3.2 (NC-1PC), Appendix F: explicit bounds (spec §4.4)
R32 = Delta / T + 192 * beta * D_Y * eps**2 + N_CON
THEOREM_3_2 = Theorem(
    id="fessgda.theorem3_2",
    title="Theorem 3.2: NC-1PC, (eps, eps^2)-stationarity of f and eps-stationarity of Phi_{1/2l}",
    source=src("Theorem 3.2, Appendix F"),
    measure="avg:moreau_sq",
    constants=(l, sigma, sigma_G, Delta, D_Y, G_y),
    parameters=(*_COMMON_PARAMS, eps),
    schedule={p: 2 * l, eta_x: _ETA_X_FULL, eta_y: eta_x / 256, beta: eta_y * K * eps**2 / (80000 * D_Y)},
    conditions=(*_smoothed_conditions("Theorem 3.2 / Lemma F.3", eta_y * K * eps**2 / (80000 * D_Y)),
                Condition("eps^2 <= l D(Y)", eps**2 <= l * D_Y, src("Theorem 3.2"))),
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
        ("Assumption 3.7 (two-sided PL) certified by the problem", pl_xy >= 1, src("Assumptions 3.7, 3.8")),
        ("eta_y <= 1/(4lK)", eta_y <= 1 / (4 * l * K), src("Appendix I")),
        ("eta_x <= eta_y mu2^2/(64 l^2)", eta_x <= eta_y * mu2**2 / (64 * l**2), src("Appendix I")),
        ("eta_xl <= drift cap", eta_xl <= LOC_CAP, src("Lemma B.4")),
        ("eta_xl <= sqrt(eta_x/(1536 eta_y l^2 K^2))", eta_xl <= sp.sqrt(eta_x / (1536 * eta_y * l**2 * K**2)),
         src("Appendix I")),
        ("eta_yl <= drift cap", eta_yl <= LOC_CAP, src("Lemma B.4")),
        ("eta_yl <= 1/sqrt(1536 l^2 K^2)", eta_yl <= 1 / sp.sqrt(1536 * l**2 * K**2),
         src("Appendix I", "printed without the square root (spec §4.7 (2))")),
        ("mu2 <= mu1 (branch)", mu2 <= mu1, src("Appendix I", "else swap roles, spec §2.4(C)")),
    )
    return Theorem(
        id="fessgda.theorem3_5" + ("_swapped" if swapped else ""),
        title="Theorem 3.5: PL-PL, linear convergence of W_t (p = 0, " + ("case mu1 < mu2, roles swapped)" if swapped
                                                                        else "case mu1 >= mu2)"),
        source=src("Theorem 3.5, Appendix I" + (" case mu1 < mu2" if swapped else "")),
        measure="W_swap" if swapped else "W",
        constants=(l, mu1, mu2, sigma, sigma_G, W0s if swapped else W0, pl_xy),
        parameters=(M, m, K, T, eta_x, eta_y, eta_xl, eta_yl),
        schedule={sw(eta_y): 1 / (4 * l * K), sw(eta_x): sw(eta_y * mu2**2 / (64 * l**2))},
        conditions=tuple(Condition(name + tag, sw(rel), s) for name, rel, s in conditions),
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
    id="fessgda.proposition3_1",
    title="Proposition 3.1: from stationarity of f to stationarity of Phi (phase 2, order only)",
    source=src("Proposition 3.1, Appendix J"),
    measure="dist_sq",
    constants=(l, mu, sigma, sigma_G),
    parameters=(M, m, K, T, eta_x, eps),
    conditions=(Condition("eta_x <= 1/(4 l K)", eta_x <= 1 / (4 * l * K), src("Appendix J")),),
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
    measure) at most eps^2: a term in T alone fixes T, a term in KT alone fixes KT (K = N/T).
    With ``k_is_constant`` (K = O(1), partial participation) samples and rounds coincide."""
    expr = rate.subs(K, 1) if k_is_constant else rate.subs(K, N_SAMPLES / T)
    need_t, need_n = [], []
    for term in sp.Add.make_args(sp.expand(expr)):
        syms = term.free_symbols
        target = T if (T in syms and N_SAMPLES not in syms) else N_SAMPLES if N_SAMPLES in syms and T not in syms else None
        if target is None:
            raise ValueError(f"term {term} mixes K and T: cannot read off a complexity")
        sol = [s for s in sp.solve(sp.Eq(term.subs(l, 1), eps**2), target) if s.is_positive is not False]
        (need_t if target is T else need_n).append(sp.simplify(sol[0]))
    rounds = sp.Add(*need_t) if need_t else sp.Integer(1)
    samples = sp.Add(*need_n) if need_n else rounds
    if k_is_constant:
        samples = rounds
    return sp.simplify(samples.subs(mu, 1 / kap).subs(l, 1)), sp.simplify(rounds.subs(mu, 1 / kap).subs(l, 1))


def exponent(expr: sp.Expr, var: sp.Symbol, *, inverse: bool = False) -> float:
    """Exponent of ``expr`` in ``var`` (sympy elasticity); in 1/var when ``inverse`` (as var -> 0)."""
    if inverse:
        return float(-elasticity(expr, var, at="0"))
    return float(elasticity(expr, var, at="oo"))


_RATE_ROWS = (  # (setting, theorem, bound version, K = O(1)?, printed (KT, T))
    ("NC-PL, m = M or sigma_G = 0", THEOREM_3_1, "rate_full", False, (kap**2 / (m * eps**4), kap / eps**2)),
    ("NC-PL, m < M, sigma_G > 0", THEOREM_3_1, "rate_partial", True, (kap**2 / (m * eps**4), kap**2 / (m * eps**4))),
    ("NC-SC, compact Y", THEOREM_E_1, "rate", False, (kap**2 / (m * eps**4), kap / eps**2)),
    ("NC-1PC", THEOREM_3_2, "rate", False, (1 / (m * eps**8), eps**-4)),
    ("NC-C (regularized)", THEOREM_3_3, "rate", False, (1 / (m * eps**6), eps**-3)),
    ("point-wise max (2)", THEOREM_3_4, "rate", False, (1 / (m * eps**4), eps**-2)),
)


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


# ---------------------------------------------------------------------------------------------
# Binding runs to theorem symbols


@functools.lru_cache(maxsize=128)
def _problem(problem: str, params_json: str):
    return make_problem(problem, json.loads(params_json))


def problem_of(config: RunConfig):
    return _problem(config.problem, json.dumps(dict(config.problem_params), sort_keys=True))


@functools.lru_cache(maxsize=128)
def _constants(problem: str, params_json: str) -> dict[str, float]:
    return {k: float(c.value) for k, c in _problem(problem, params_json).constants().items()}


def problem_constants(config: RunConfig) -> dict[str, float]:
    return _constants(config.problem, json.dumps(dict(config.problem_params), sort_keys=True))


def clients_per_round(config: RunConfig) -> int:
    part = str(config.params.get("participation", "full"))
    return int(problem_of(config).num_clients) if part == "full" else int(part.split(":")[1])


def bindings(config: RunConfig, trace: Trace | None = None) -> dict[str, float]:
    """Theorem symbols at a run: exact problem constants and the run's effective step sizes."""
    c, q = problem_constants(config), config.params
    # constants a problem does not certify are NaN, and its PL flags 0 (see pl_y, pl_xy)
    out = {name: math.nan for name in ("mu", "mu1", "mu2", "W0", "W0_swap", "Delta", "sigma_G")}
    out.update(c)
    out["PL_y"] = 1.0 if "mu" in c else 0.0
    out["PL_xy"] = 1.0 if "mu1" in c and "mu2" in c else 0.0
    out.update(M=c["M"], m=float(clients_per_round(config)), K=float(q["local_steps"]), T=float(config.rounds),
               eta_x=q["eta_x_local"] * q["eta_x_global"], eta_y=q["eta_y_local"] * q["eta_y_global"],
               eta_xl=q["eta_x_local"], eta_yl=q["eta_y_local"], beta=q.get("beta", 0.5), p=q.get("p", 0.0))
    return out


def _run(algorithm: str, params: Mapping[str, Any], problem: Mapping[str, Any], rounds: int,
         replicas: int, checkpoints: int = 24) -> RunConfig:
    return RunConfig(algorithm, dict(params), "minimax", dict(problem), rounds=int(rounds), replicas=replicas,
                     checkpoints=checkpoints)


def steps(eta_x_eff: float, eta_y_eff: float, K: int, eta_x_local: float, eta_y_local: float) -> dict[str, Any]:
    """Local steps as given, global steps = effective / local (spec §2.6)."""
    return {"eta_x_local": eta_x_local, "eta_y_local": eta_y_local, "eta_x_global": eta_x_eff / eta_x_local,
            "eta_y_global": eta_y_eff / eta_y_local, "local_steps": int(K)}



def exponent_against_cap(points, evidence) -> dict[str, float]:
    """The fitted exponent next to the theorem's cap, and how close the hits came to the end of the run."""
    out: dict[str, float] = {}
    if "fit" in evidence:
        out["measured exponent"] = evidence["fit"]["slope"]
        out["theorem's cap"] = evidence["expected_exponent"]
        out["decades fitted"] = evidence["fit"]["decades"]
    hits = [float(np.max(p.samples)) / p.stats["rounds_run"] for p in points if p.samples.size and "rounds_run" in p.stats]
    if hits:
        out["largest hit / run length"] = max(hits)
    return out


# Issue #7: rounds-to-eps exponents far below a one-sided cap test nothing (C1 +0.23 against "at most 2", D1 +2.5
# against 4, D2 +1.6 against 3: the deterministic instances converge faster than the worst case the theorems
# bound), and A4's log(1/eps) axis spans 0.2 decades. They are reported as observations, with how close the
# hits came to the end of the run (a ratio near 1 would mean the run caps the hitting time).

# ---------------------------------------------------------------------------------------------
# Claims A: PL-PL on the SC-SC quadratic (spec §6.1 a1)

QUAD_DET = {"kind": "quadratic", "noise": 0.0, "zeta": 0.0, "clients": 4}
DET_REPLICAS = 4  # deterministic runs: replicas are identical, a few suffice


def a1_config(rounds: float, profile: Profile, problem: Mapping[str, Any] = QUAD_DET) -> RunConfig:
    """Theorem 3.5's step sizes exactly (K = 1, full participation, s = 0, sigma_G = 0)."""
    draft = _run("fsgda", {}, problem, 1, 1)
    c = problem_constants(draft)
    sched = THEOREM_3_5.schedule_values({**c, "K": 1})
    cap_y = 0.9 / math.sqrt(1536) / c["l"]  # eta_yl <= 1/sqrt(1536 l^2 K^2), with margin
    # shave 1e-9 so that eta_l * (eta / eta_l) rounding cannot break the equality-type conditions
    ex, ey = sched["eta_x"] * (1 - 2e-9), sched["eta_y"] * (1 - 1e-9)
    params = {**steps(ex, ey, 1, ex, cap_y), "participation": "full"}
    return _run("fsgda", params, problem, rounds, DET_REPLICAS)


def descent_jacobian(problem: Any) -> np.ndarray:
    """Jacobian at the saddle (0, 0) of the descent field w -> (grad_x f, -grad_y f): exact for the
    quadratic (problem.jac), central differences of the exact gradients otherwise (error ~1e-10)."""
    if hasattr(problem, "jac"):
        return np.asarray(problem.jac, dtype=float)
    dx, dy = problem.dim_x, problem.dim_y
    h = 1e-5
    cols = []
    for j in range(dx + dy):
        e = np.zeros(dx + dy)
        e[j] = h
        gp = np.concatenate([g.ravel() for g in problem.grads(e[None, :dx], e[None, dx:])])
        gm = np.concatenate([g.ravel() for g in problem.grads(-e[None, :dx], -e[None, dx:])])
        cols.append((gp - gm) / (2 * h))
    jac = np.array(cols).T
    jac[dx:] *= -1  # descent in x, ascent in y
    return jac


def linear_round(config: RunConfig) -> np.ndarray:
    """F of the deterministic round near the saddle, s_{t+1} = F s_t, s = (x, y, z) (Algorithm 1 lines 5-15
    with no noise and no offsets): local steps G = I - Lam J, K times; server (x, y) <- (I - Gam + Gam G^K)(x, y)
    minus eta_xl eta_xg K p (x - z) in x; z <- z + beta (x_new - z). With p = 0 (FSGDA, Theorem 3.5) z does
    not feed back and only the (x, y) block matters. With the roles swapped the wrapper exchanges the x and y
    step sizes back, so the round is the same map on (x, y)."""
    q = config.params
    prob = problem_of(config)
    jac = descent_jacobian(prob)
    dx, dy = prob.dim_x, prob.dim_y
    d = dx + dy
    lam = np.diag(np.r_[np.full(dx, q["eta_x_local"]), np.full(dy, q["eta_y_local"])])
    gam = np.diag(np.r_[np.full(dx, q["eta_x_global"]), np.full(dy, q["eta_y_global"])])
    G = np.eye(d) - lam @ jac
    K = int(q["local_steps"])
    F = np.zeros((d + dx, d + dx))
    F[:d, :d] = np.eye(d) - gam + gam @ np.linalg.matrix_power(G, K)
    smooth = q["eta_x_local"] * q["eta_x_global"] * K * float(q.get("p", 0.0))
    F[:dx, :dx] -= smooth * np.eye(dx)
    F[:dx, d:] += smooth * np.eye(dx)
    beta = float(q.get("beta", 0.5))
    F[d:, :] = beta * F[:dx, :]
    F[d:, d:] += (1 - beta) * np.eye(dx)
    return F if smooth else F[:d, :d]


def spectral_log_rate(config: RunConfig) -> float:
    """2 log rho(F), the asymptotic per-round log-contraction of a quadratic measure; eigenvalues exactly
    1 (directions of a saddle SET, where W = 0) are left out."""
    eig = np.linalg.eigvals(linear_round(config))
    return float(2 * np.log(np.max(np.abs(eig[np.abs(eig - 1) > 1e-12]))))


def exact_log_rate(measure: str) -> Callable[[RunConfig, np.ndarray], float]:
    """The log-slope of ``measure`` along the exact linear recursion s_t = F^t s_0 (z_0 = x_0) over the given
    rounds (a linear-axis OLS fit, as for the run): exact for the quadratic, and for a nonlinear problem
    started near its saddle up to O(|w|^2) relative terms. It tends to spectral_log_rate far out."""
    def rate(config: RunConfig, rounds: np.ndarray) -> float:
        prob = problem_of(config)
        F = linear_round(config)
        start = prob.initial_point()
        x0 = np.ravel(start["x"]).astype(float)
        s = np.concatenate([x0, np.ravel(start["y"]).astype(float), x0])[: F.shape[0]]
        marks = np.asarray(rounds, dtype=int)
        kept, t = [], 0
        for mark in marks:
            s = np.linalg.matrix_power(F, int(mark) - t) @ s
            t = int(mark)
            kept.append(s.copy())
        pts = np.array(kept)
        dx, dy = prob.dim_x, prob.dim_y
        values = prob.measures({"x": pts[:, :dx], "y": pts[:, dx:dx + dy]})[measure]
        return float(log_rate(marks.astype(float), np.asarray(values, dtype=float)[:, None])[0])

    return rate


def theorem_log_rate(swapped: bool = False) -> Callable[[Any], float]:
    """log(1 - a), a = eta_x K mu1/16 (eta_y K mu2/16 swapped): Theorem 3.5's guaranteed contraction."""
    a = A35.xreplace(ROLE_SWAP) if swapped else A35
    args = sorted(a.free_symbols, key=str)
    fn = sp.lambdify(args, a)

    def rate(point: Any) -> float:
        values = point.evaluation.values
        return float(np.log1p(-fn(*(values[str(v)] for v in args))))

    return rate


# A1 (issue #7): the recursion bound (1 - a)^T W0 with a ~ 1e-5 is about W0 over the run, i.e. "W_T <= W0";
# the exact contraction is much faster. So the rate is checked as a rate: the fitted log-contraction of W
# per round over [T/2, T] against the same fit on the exact recursion F^t w0 (whose limit is 2 log rho(F),
# reported too; over 4000 rounds the slowest modes of the singular (a2) instance do not dominate yet, so the
# window must be the same) and, one-sided, against the theorem's log(1 - a). The runs are deterministic, so
# 1% leaves room only for round-off and, for the sine problem started at |w| = 0.01, O(|w|^2) terms (~1e-4);
# the bugs this guards against (a missing global step, a wrong sign, K off by one) change the rate by far more.
_A1 = dict(paper=KEY, vary="T", measure="W", theorem=THEOREM_3_5, bindings=bindings, exact=exact_log_rate("W"),
           exact_name="the exact recursion F^t w0 over the window", guaranteed=theorem_log_rate(), guaranteed_name="Theorem 3.5's log(1-a)",
           min_replicas=DET_REPLICAS, rel_tolerance=0.01, asymptotic=spectral_log_rate)
A1_CHECKPOINTS = 200  # dense enough for a linear-axis fit over [T/2, T]

A1_LINEAR = RateClaim(
    id="fessgda.A1.linear_rate",
    title="PL-PL: W_t contracts at the exact spectral rate, no slower than Theorem 3.5's 1 - eta_x K mu1/16",
    statement="With Theorem 3.5's step sizes, E W_T <= (1 - eta_x K mu1/16)^T W_0 + b/a (b = 0 here): W contracts "
              "at least at rate 1 - a per round.",
    source=src("Theorem 3.5, Appendix I", "spec §6.1 test 1"),
    grid={"quick": (4000,), "full": (16000,)},
    configure=lambda v, prof: a1_config(v, prof).with_(checkpoints=A1_CHECKPOINTS),
    **_A1,
)

QUAD_PL_DET = {"kind": "quadratic_pl", "noise": 0.0, "zeta": 0.0, "clients": 4}

A1_LINEAR_PL = RateClaim(
    id="fessgda.A1.linear_rate_pl",
    title="PL-PL, not strongly convex in x: W_t contracts at the exact spectral rate (Theorem 3.5)",
    statement="Same check on the (a2) quadratic with A = U'U singular (two-sided PL, saddle SET null(U) x {0}).",
    source=src("Theorem 3.5, Appendix I", "spec §6.1 (a2)"),
    grid={"quick": (4000,), "full": (16000,)},
    configure=lambda v, prof: a1_config(v, prof, QUAD_PL_DET).with_(checkpoints=A1_CHECKPOINTS),
    **_A1,
)

# A6: Algorithm 1's smoothing (p > 0) on the SC-SC quadratic. No theorem states this rate (Theorem 3.5 has
# p = 0), but the round is linear in (x, y, z), so its exact contraction is known: a check of lines 13-15
# (smoothing once at the server with the round-start x_t, z_t; z follows the NEW x), which the NC-*
# order claims are too coarse to see (issue #7: a stale z passed them).
A6_SMOOTHING = 0.2  # beta, large enough that z's lag changes the rate


def a6_config(rounds: float, profile: Profile) -> RunConfig:
    lip = problem_constants(_run("fess_gda", {}, QUAD_DET, 1, 1))["l"]
    ex = 1 / (20 * lip)
    params = {**steps(ex, ex, 2, ex / 2, ex / 2), "p": 2 * lip, "beta": A6_SMOOTHING, "participation": "full"}
    return _run("fess_gda", params, QUAD_DET, rounds, DET_REPLICAS, A1_CHECKPOINTS)


A6_SMOOTHED_RATE = RateClaim(
    id="fessgda.A6.smoothed_round_rate",
    paper=KEY,
    title="FESS-GDA with smoothing (p = 2l, K = 2): W_t contracts at the exact rate of Algorithm 1's round",
    statement="Algorithm 1 lines 5-15 are linear in (x, y, z) on the quadratic: W contracts at the log-slope of "
              "the exact recursion (server smoothing eta_xl eta_xg K p (x_t - z_t), z_{t+1} = z_t + beta (x_{t+1} - z_t)).",
    source=src("Algorithm 1, lines 13-15", "spec §2.1, pitfalls P1, P3"),
    vary="T", grid={"quick": (400,), "full": (800,)}, configure=a6_config, measure="W",
    exact=exact_log_rate("W"), exact_name="the exact recursion F^t s0 of Algorithm 1 over the window",
    asymptotic=spectral_log_rate, min_replicas=DET_REPLICAS, rel_tolerance=0.01,
)

# (a3): mu1 < mu2, so Theorem 3.5's own branch condition fails (INCONCLUSIVE); with the role swap of
# spec §2.4(C) (algorithm fess_gda_swapped, p = 0) the theorem applies to W' = (Phi* - Psi0) + (f - Psi0)
# started near the saddle (x0 = y0 = 0.01) so that the round is linear from the first round on and the
# exact rate of the linearized recursion applies (issue #7: a rate checked as a rate)
NCNC_DET = {"kind": "ncnc_pl", "noise": 0.0, "zeta": 0.0, "clients": 1, "x0": 0.01, "y0": 0.01}


def a1_swapped_config(rounds: float, profile: Profile) -> RunConfig:
    """The swapped recipe exactly: eta_x = 1/(4lK), eta_y = eta_x mu1^2/(64 l^2), K = 1, s = 0."""
    c = problem_constants(_run("fess_gda_swapped", {}, NCNC_DET, 1, 1))
    sched = THEOREM_3_5_SWAPPED.schedule_values({**c, "K": 1})
    cap_x = 0.9 / math.sqrt(1536) / c["l"]  # eta_xl <= 1/sqrt(1536 l^2 K^2) (swapped), with margin
    ex, ey = sched["eta_x"] * (1 - 1e-9), sched["eta_y"] * (1 - 2e-9)
    params = {**steps(ex, ey, 1, cap_x, ey), "p": 0.0, "participation": "full"}
    return _run("fess_gda_swapped", params, NCNC_DET, rounds, DET_REPLICAS)


A1_LINEAR_SWAPPED = RateClaim(
    id="fessgda.A1.linear_rate_ncnc_swapped",
    paper=KEY,
    title="PL-PL, nonconvex-nonconcave (mu1 < mu2): W'_t contracts at the exact local rate, no slower than "
          "Theorem 3.5 with the roles swapped",
    statement="On x^2 + 3 sin^2 x sin^2 y - 4y^2 - 10 sin^2 y, E W'_T <= (1 - eta_y K mu2/16)^T W'_0 (b = 0), "
              "Theorem 3.5 applied to -f(y, x) (spec §2.4(C)). Near the saddle the round is linear, so W' contracts "
              "at 2 log rho of the linearized round.",
    source=src("Theorem 3.5, Appendix I, case mu1 < mu2", "spec §2.4(C), §6.1 (a3)"),
    vary="T", grid={"quick": (2000,), "full": (8000,)},
    configure=lambda v, prof: a1_swapped_config(v, prof).with_(checkpoints=A1_CHECKPOINTS),
    measure="W_swap", theorem=THEOREM_3_5_SWAPPED, bindings=bindings, min_replicas=DET_REPLICAS,
    exact=exact_log_rate("W_swap"), exact_name="the linearized recursion F^t w0 over the window",
    guaranteed=theorem_log_rate(True),
    guaranteed_name="Theorem 3.5's log(1-a) (swapped)", rel_tolerance=0.01, asymptotic=spectral_log_rate,
)

QUAD_NOISY = {"kind": "quadratic", "noise": 1.0, "zeta": 0.0, "clients": 16}
QUAD_HET = {"kind": "quadratic", "noise": 0.0, "zeta": 1.0, "clients": 16}
ETA_K = 0.2  # practical eta_x K = eta_y K = 0.2 / l (spec §6.1 'verified' setting)
ETA_LOCAL = 1e-3  # theory regime: tiny local steps, large global steps (spec §2.6)
# Ratio tolerance 10%: with 16 replicas and 1200-round tails the ratio's standard error is about 1.1%
# (checked on 3 x 64 replicas: ratios 0.992-1.011), so a correct floor passes unless it is ~7 SE
# off, while the errors this guards against (sigma^2 vs s^2, dividing by M instead of m, the paper's
# 4(M-m)/(mM) instead of (M-m)/(m(M-1))) are factors of 2 or more.
RATIO_TOLERANCE = 0.1  # ValueClaim's relative band
FLOOR_ROUNDS, FLOOR_START_FRACTION = 1500, 0.2  # tail average over rounds [0.2 T, T)


def floor_config(problem: Mapping[str, Any], m_clients: int, K_steps: int, profile: Profile) -> RunConfig:
    draft = _run("fsgda", {}, problem, 1, 1)
    lip = problem_constants(draft)["l"]
    M_total = int(problem["clients"])
    part = "full" if int(m_clients) == M_total else f"without_replacement:{int(m_clients)}"
    params = {**steps(ETA_K / lip / K_steps, ETA_K / lip / K_steps, K_steps, ETA_LOCAL, ETA_LOCAL), "participation": part}
    return _run("fsgda", params, problem, FLOOR_ROUNDS * (2 if profile.name == "full" else 1), profile.replicas)


def lyapunov_floor(config: RunConfig) -> float:
    """Exact E W_infinity of the run (problems.minimax.MinimaxQuadratic.stationary_potential)."""
    q = config.params
    return problem_of(config).stationary_potential(
        eta_x_local=q["eta_x_local"], eta_y_local=q["eta_y_local"], eta_x_global=q["eta_x_global"],
        eta_y_global=q["eta_y_global"], local_steps=q["local_steps"], m=clients_per_round(config))


# Expected floor exponents from Theorem 3.5's steady state b/a at FIXED eta_x K, eta_y K (sympy)
hx, hy = sp.symbols("h_x h_y", positive=True)
FLOOR_FIXED_ETAK = (B35 / A35).subs({eta_x: hx / K, eta_y: hy / K})
FLOOR_NOISE = FLOOR_FIXED_ETAK.subs({sigma_G: 0, eta_xl: 0, eta_yl: 0})
FLOOR_HET = FLOOR_FIXED_ETAK.subs({sigma: 0, eta_xl: 0, eta_yl: 0})


def _order(expr: sp.Expr, var: sp.Symbol, why: str) -> ExpectedOrder:
    return ExpectedOrder(value=exponent(expr, var), why=f"{why} (sympy elasticity in {var})")


M_GRID = {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16)}
K_GRID = {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16, 32)}


def floor_slope(id: str, title: str, statement: str, test: str, vary: str, grid: Mapping[str, tuple],
                configure: Callable[[float, Profile], RunConfig], floor: sp.Expr, why: str) -> SlopeClaim:
    """Slope of the stationary E W (tail mean) against m or K, expected from Theorem 3.5's b/a."""
    return SlopeClaim(id=id, paper=KEY, title=title, statement=statement,
                      source=src("Theorem 3.5, Appendix I (b/a)", f"spec §6.1 test {test}"), vary=vary, grid=grid,
                      configure=configure, measure="W", summary=tail_average("W", FLOOR_START_FRACTION),
                      expected=_order(floor, sp.Symbol(vary, positive=True, integer=True), why), tolerance=0.1)


def floor_ratio(id: str, title: str, statement: str, note: str, grid: Mapping[str, tuple],
                configure: Callable[[float, Profile], RunConfig]) -> ValueClaim:
    """Stationary E W (tail mean) against the exact Lyapunov value of the same run."""
    return ValueClaim(id=id, paper=KEY, title=title, statement=statement, source=src("Appendix I", note),
                      vary="m", grid=grid, configure=configure, measure="W",
                      summary=tail_average("W", FLOOR_START_FRACTION), predict=lyapunov_floor,
                      prediction="exact Lyapunov E W", rel_tolerance=RATIO_TOLERANCE)


_NOISE_WHY = "Theorem 3.5 floor b/a at fixed eta K, sigma part, eta_l -> 0"

A2_FLOOR_M = floor_slope(
    "fessgda.A2.floor_m", "PL-PL noise floor falls like 1/m",
    "At fixed eta_x K, eta_y K the stationary E W (sigma_G = 0) is proportional to 1/(mK): slope -1 in m.",
    "2", "m", M_GRID, lambda v, prof: floor_config(QUAD_NOISY, v, 4, prof), FLOOR_NOISE, _NOISE_WHY)

A2_FLOOR_K = floor_slope(
    "fessgda.A2.floor_K", "PL-PL noise floor falls like 1/K at fixed eta K",
    "Linear speedup in the local steps: stationary E W proportional to 1/K at fixed eta_x K, eta_y K.",
    "2", "K", K_GRID, lambda v, prof: floor_config(QUAD_NOISY, 4, int(v), prof), FLOOR_NOISE, _NOISE_WHY)

A2_LYAPUNOV = floor_ratio(
    "fessgda.A2.lyapunov_m", "PL-PL noise floor equals the exact Lyapunov value",
    "The stationary E W of FSGDA equals 1/2 tr(Q Sigma), Sigma from the discrete Lyapunov equation.",
    "spec §6.1 'exact floor prediction'", M_GRID, A2_FLOOR_M.configure)

A3_FLOOR_K = floor_slope(
    "fessgda.A3.partial_floor_K", "Partial participation floor does not shrink with K",
    "s = 0, sigma_G > 0, m < M: the stationary E W is independent of K at fixed eta K (no benefit from local steps).",
    "3", "K", {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16)},
    lambda v, prof: floor_config(QUAD_HET, 4, int(v), prof), FLOOR_HET,
    "Theorem 3.5 floor b/a at fixed eta K, sigma_G part")

A3_LYAPUNOV = floor_ratio(
    "fessgda.A3.partial_lyapunov_m", "Partial participation floor proportional to (M-m)/(m(M-1))",
    "s = 0, sigma_G > 0: the stationary E W equals the Lyapunov value, whose sampling factor is (M-m)/(m(M-1)).",
    "spec §6.1 test 3, pitfall P11", {"quick": (2, 4, 8, 12), "full": (1, 2, 4, 8, 12, 15)},
    lambda v, prof: floor_config(QUAD_HET, int(v), 4, prof))

# A5: client drift. Client Hessians A_i = A +- 0.3 I (zero-sum), s = 0, full participation: the
# limit of FSGDA is biased by O(eta_l K) at fixed eta K, so W_infinity ~ (eta_l K)^2 (spec §6.1 test 5).
QUAD_DRIFT = {"kind": "quadratic", "noise": 0.0, "zeta": 1.0, "spread": 0.3, "clients": 4}
u_l = sp.Symbol("u_l", positive=True)  # eta_l K
FLOOR_DRIFT = FLOOR_FIXED_ETAK.subs({sigma: 0, M: m}).subs({eta_xl: u_l / K, eta_yl: u_l / K})


def a5_config(local_times_k: float, profile: Profile) -> RunConfig:
    lip = problem_constants(_run("fsgda", {}, QUAD_DRIFT, 1, 1))["l"]
    K_steps = 4
    el = local_times_k / K_steps
    params = {**steps(ETA_K / lip / K_steps, ETA_K / lip / K_steps, K_steps, el, el), "participation": "full"}
    return _run("fsgda", params, QUAD_DRIFT, 600, DET_REPLICAS)


A5_DRIFT = SlopeClaim(
    id="fessgda.A5.drift_bias",
    paper=KEY,
    title="Client drift bias grows like (eta_l K)^2",
    statement="Non-identical client Hessians, s = 0, full participation: at fixed eta K the limit's potential W "
              "grows like (eta_l K)^2, which is why every theorem caps the local steps.",
    source=src("Theorem 3.5, Appendix I (drift term of b/a), Lemma B.4", "spec §6.1 test 5"),
    vary="eta_l K", grid={"quick": (0.005, 0.01, 0.02, 0.04, 0.08), "full": (0.0025, 0.005, 0.01, 0.02, 0.04, 0.08)},
    configure=a5_config, measure="W", min_replicas=DET_REPLICAS,
    expected=_order(FLOOR_DRIFT, u_l, "Theorem 3.5 floor b/a, drift part, eta_xl = eta_yl = u/K at fixed eta K"),
    tolerance=0.1,
)

# A4: rounds to E W <= eps^2 with K proportional to 1/(m eps^2): O(log(1/eps)) rounds
QUAD_A4 = {"kind": "quadratic", "noise": 0.25, "zeta": 0.0, "clients": 4}
A4_FLOOR_FRACTION = 0.25  # K chosen so that the floor is eps^2/4


def a4_config(inv_eps: float, profile: Profile) -> RunConfig:
    base = floor_config(QUAD_A4, 4, 1, profile)
    unit = lyapunov_floor(base)  # floor at K = 1; at fixed eta K it scales exactly like 1/K here
    K_steps = max(1, math.ceil(unit * inv_eps**2 / A4_FLOOR_FRACTION))
    return floor_config(QUAD_A4, 4, K_steps, profile).with_(rounds=400, checkpoints=200)


L_EPS = sp.Symbol("L_eps", positive=True)  # log(1/eps)
ROUNDS_35 = (sp.log(W0 / A4_FLOOR_FRACTION) + 2 * L_EPS) / -sp.log(1 - A35)  # (1-a)^T W0 <= (1-f) eps^2 up to O(1)

A4_LOG_ROUNDS = observe(
    HittingTimeClaim(
    id="fessgda.A4.log_rounds",
    paper=KEY,
    title="PL-PL communication complexity O(log(1/eps))",
    statement="With K proportional to 1/(m eps^2) the rounds to reach E W <= eps^2 grow no faster than log(1/eps).",
    source=src("Theorem 3.5, Table 2", "spec §6.1 test 4"),
    vary="log(1/eps)", grid={"quick": (10, 20, 40), "full": (10, 20, 40, 80)},
    configure=a4_config, measure="W", threshold=lambda v: v**-2, abscissa=math.log,
    expected=_order(ROUNDS_35, L_EPS, "rounds solving (1-a)^T W0 = eps^2 (Theorem 3.5 recursion)"),
    side="at_most", tolerance=0.15,
),
    id='fessgda.A4.log_rounds',
    title='PL-PL: rounds to E W <= eps^2 against log(1/eps) with K ∝ 1/(m eps^2) (observed)',
    quantity='rounds to eps^2 against log(1/eps) (Theorem 3.5: at most linear in log(1/eps))', compute=exponent_against_cap)

# ---------------------------------------------------------------------------------------------
# Claims B: NC-PL (spec §6.2 b), deterministic kappa-dependence

B1_LEVEL = 1e-4  # ||grad_x f||^2 + kappa ||grad_y f||^2 <= eps^2
B1_GRID = {"quick": (1.0, 0.55, 0.3, 0.17, 0.1), "full": (1.0, 0.55, 0.3, 0.17, 0.1, 0.03)}
# FESS-GDA's run length grows only like kappa: its grid starts at larger kappa, where the hitting rounds are
# past the kappa-independent start-up (from mu = 1 the local slope rose from 0.7 to 1.05 across the grid:
# a regime change, issue #7), and spans a decade
B1_FESS_GRID = {"quick": (0.3, 0.17, 0.1, 0.05, 0.025), "full": (0.3, 0.17, 0.1, 0.05, 0.025, 0.0125)}
B1_DESIGN = ("five deterministic points over 0.89 decades of kappa: GDA's run length grows like kappa^2 (45 kappa^2 "
             "rounds), so mu below 0.1 leaves the quick budget; the full profile reaches 1.4 decades. Hitting rounds "
             "are exact up to the checkpoint resolution (300 log-spaced), so the slope has no noise to average.")
FESS_CY, FESS_CB = 2.0, 1.0  # practical eta_y = eta_x / 2, beta = eta_y K mu (spec §6.0 keeps the shape)


def _ncpl(mu_value: float) -> dict[str, Any]:
    return {"kind": "ncpl", "mu": float(mu_value)}


def kappa_of(mu_value: float) -> float:
    return problem_constants(_run("fess_gda", {}, _ncpl(mu_value), 1, 1))["kappa"]


def b1_fess_config(mu_value: float, profile: Profile) -> RunConfig:
    """Theorem 3.1's shape (p = 2l, eta_y = eta_x/c_y, beta = c_b eta_y K mu) with practical constants."""
    lip = kappa_of(mu_value) * mu_value
    ex = 1 / (3 * lip)
    params = {**steps(ex, ex / FESS_CY, 1, ex, ex / FESS_CY), "p": 2 * lip, "beta": FESS_CB * ex / FESS_CY * mu_value}
    # 160 kappa rounds: the hits came at 107-118 kappa, so the run never caps them
    return _run("fess_gda", params, _ncpl(mu_value), math.ceil(160 * kappa_of(mu_value)), DET_REPLICAS, 300)


def b1_gda_config(mu_value: float, profile: Profile) -> RunConfig:
    """GDA with its own theory shape eta_x = eta_y / kappa^2 (Lin et al. 2020; spec §7)."""
    k = kappa_of(mu_value)
    ey = 1 / (3 * k * mu_value)
    params = {**steps(ey / k**2, ey, 1, ey / k**2, ey), "participation": "full"}
    return _run("sgda", params, _ncpl(mu_value), math.ceil(45 * k**2), DET_REPLICAS, 300)


_B1 = dict(paper=KEY, vary="kappa", measure="stat_kappa", threshold=lambda v: B1_LEVEL,
           abscissa=kappa_of, min_replicas=DET_REPLICAS, tolerance=0.15)

B1_FESS_KAPPA = HittingTimeClaim(
    id="fessgda.B1.fess_kappa",
    title="NC-PL: FESS-GDA rounds grow like kappa",
    statement="Deterministic, M = m = 1: rounds to ||grad_x f||^2 + kappa ||grad_y f||^2 <= eps^2 grow like kappa^1 (Theorem 3.1: T = O(kappa eps^-2)).",
    source=src("Theorem 3.1, Table 1", "spec §6.2 test 1"),
    configure=b1_fess_config, grid=B1_FESS_GRID,
    expected=ExpectedOrder(value=exponent(complexity_table()[0]["derived"][1], kap),
                           why="kappa-exponent of T derived by sympy from Theorem 3.1's rate (complexity_table)"),
    side="at_most", **_B1,
)

B1_GDA_KAPPA = HittingTimeClaim(
    id="fessgda.B1.gda_kappa",
    title="NC-PL: GDA rounds grow like kappa^2 (the baseline FESS-GDA improves on)",
    statement="Same problem, simultaneous GDA with eta_x = eta_y/kappa^2: rounds grow like kappa^2.",
    source=src("Table 1 and §1.3", "Lin et al. (2020) GDA O(kappa^2 eps^-2); spec §6.2 test 1"),
    configure=b1_gda_config, grid=B1_GRID, design_reason=B1_DESIGN,
    expected=ExpectedOrder(value=exponent(GDA_LIN_2020_ROUNDS, kap),
                           why="kappa-exponent of Lin et al. (2020) GDA rounds kappa^2/eps^2 (sympy)"),
    **_B1,
)

# B3: Theorem 3.1's step size eta_x = sqrt(m Delta)/(sigma sqrt(K T l)) (times a practical constant),
# noise-dominated: the averaged measure falls like (mKT)^(-1/2) (spec §6.2 test 3).
NCPL_NOISY = {"kind": "ncpl", "mu": 0.5, "noise": 1.0, "clients": 4, "x0": 0.5}
B3_MULTIPLIER = 4.0  # practical constant on the theory branch; 1/(1000 K l) is replaced by 1/(3 l)


def b3_config(rounds: float, profile: Profile) -> RunConfig:
    c = problem_constants(_run("fess_gda", {}, NCPL_NOISY, 1, 1))
    m_all, K_steps = int(c["M"]), 1
    theory = math.sqrt(m_all * c["Delta"]) / (c["sigma"] * math.sqrt(K_steps * rounds * c["l"]))
    ex = min(1 / (3 * c["l"]), B3_MULTIPLIER * theory)
    ey = ex / FESS_CY
    params = {**steps(ex, ey, K_steps, ex, ey), "p": 2 * c["l"], "beta": FESS_CB * ey * K_steps * c["mu"],
              "participation": "full"}
    return _run("fess_gda", params, NCPL_NOISY, rounds, profile.replicas)


B3_RATE_T = SlopeClaim(
    id="fessgda.B3.rate_T",
    paper=KEY,
    title="NC-PL: averaged stationarity falls like (mKT)^(-1/2) with the theory step size",
    statement="With eta_x proportional to sqrt(m Delta)/(sigma sqrt(KTl)), (1/T) sum_t E[||grad_x f||^2 + kappa ||grad_y f||^2] "
              "falls like T^(-1/2) (Theorem 3.1 (i), noise-dominated regime).",
    source=src("Theorem 3.1 (i)", "spec §6.2 test 3"),
    vary="T", grid={"quick": (500, 1000, 2000, 4000, 8000), "full": (500, 1000, 2000, 4000, 8000, 16000, 32000)},
    configure=b3_config, measure="avg:stat_kappa",
    expected=ExpectedOrder(THEOREM_3_1, "T", "rate_full"),
    tolerance=0.1,
)

# ---------------------------------------------------------------------------------------------
# Claims C: point-wise maximum with strict complementarity (spec §6.4 c)

C1_GRID = {"quick": (10, 20, 40, 80, 160), "full": (10, 20, 40, 80, 160, 320)}


def c1_config(problem: Mapping[str, Any]) -> Callable[[float, Profile], RunConfig]:
    """Deterministic FESS-GDA, p = 2l, eta_x = 1/(3l), eta_y = eta_x/2, beta = 0.1 (eps-independent,
    as Theorem 3.4 prescribes); one run serves every eps (only the level changes)."""

    def configure(inv_eps: float, profile: Profile) -> RunConfig:
        lip = problem_constants(_run("fess_gda", {}, problem, 1, 1))["l"]
        ex = 1 / (3 * lip)
        params = {**steps(ex, ex / 2, 1, ex, ex / 2), "p": 2 * lip, "beta": 0.1}
        return _run("fess_gda", params, problem, 800, DET_REPLICAS, 300)

    return configure


# Theorem 3.4 bounds the AVERAGE of the squared measure, so min_{t<T} <= average: the first round
# where the measure hits eps^2 is at most the T of the theorem, O(eps^-2). Checked: exponent <= 2.
_C1 = dict(paper=KEY, vary="1/eps", grid=C1_GRID, measure="stat_sq", threshold=lambda v: v**-2,
           min_replicas=DET_REPLICAS, side="at_most", tolerance=0.1,
           expected=ExpectedOrder(value=exponent(complexity_table()[5]["derived"][1], eps, inverse=True),
                                  why="1/eps-exponent of T derived by sympy from Theorem 3.4's rate (complexity_table)"))

C1_PWMAX = observe(
    HittingTimeClaim(
    id="fessgda.C1.pwmax_rounds",
    title="Point-wise max: rounds to eps-stationarity of f grow at most like eps^-2",
    statement="With strict complementarity (c0 = 0.5), the rounds until ||grad_x f||^2 + l^2||P(y + grad_y f/l) - y||^2 <= eps^2 grow at most like eps^-2.",
    source=src("Theorem 3.4", "spec §6.4 test 1"),
    configure=c1_config({"kind": "pwmax", "c0": 0.5}),
    **_C1,
),
    id='fessgda.C1.pwmax_rounds',
    title='Point-wise max: rounds to eps-stationarity against 1/eps (observed against the eps^-2 cap)',
    quantity='exponent of the rounds to eps-stationarity in 1/eps (Theorem 3.4: at most 2)', compute=exponent_against_cap)

_CONTROL_REASON = ("negative control violating Assumption 3.6 (strict complementarity); the spec says to report, "
                   "not assert, its exponent. Measured on this instance: the deterministic run still converges "
                   "linearly, so the eps^-2 order survives: the assumption is sufficient, not necessary here.")

C1_CONTROL_C0 = observe(
    HittingTimeClaim(
    id="fessgda.C1.control_c0_zero",
    title="Negative control: c0 = 0 (no strict-complementarity margin)",
    statement="Same run with c0 = 0: Assumption 3.6 fails (nu_4 = 0); the exponent is reported.",
    source=src("Assumption 3.6, Theorem 3.4", "spec §6.4 test 3"),
    configure=c1_config({"kind": "pwmax", "c0": 0.0}),
    expect_reason=_CONTROL_REASON,
    **_C1,
),
    id='fessgda.C1.control_c0_zero',
    title='Point-wise max with c0 = 0 (no strict complementarity): rounds against 1/eps (observed)',
    quantity="exponent without Assumption 3.6's margin (c0 = 0)", compute=exponent_against_cap)

C1_CONTROL_DUP = observe(
    HittingTimeClaim(
    id="fessgda.C1.control_duplicate",
    title="Negative control: duplicated component h_4 = h_1",
    statement="Same run with h_4 = h_1: y* is not unique and Assumption 3.6 fails; the exponent is reported.",
    source=src("Assumption 3.6, Theorem 3.4", "spec §6.4 test 3"),
    configure=c1_config({"kind": "pwmax", "duplicate": True}),
    expect_reason=_CONTROL_REASON,
    **_C1,
),
    id='fessgda.C1.control_duplicate',
    title='Point-wise max with h_4 = h_1 (y* not unique): rounds against 1/eps (observed)',
    quantity='exponent with a duplicated component (Assumption 3.6 fails)', compute=exponent_against_cap)

# ---------------------------------------------------------------------------------------------
# Claims D: nonconvex-concave (spec §6.5 d), Theorem 3.3's regularized run (spec §2.4(A))


def eps_rounds_claim(row: int, **fields: Any) -> HittingTimeClaim:
    """Deterministic rounds until the measure first reaches eps^2, against 1/eps, at most the 1/eps-exponent
    of T that sympy derives from complexity_table()[row] (min_t <= average: the first hit comes no later
    than the T of a theorem bounding the average)."""
    entry = complexity_table()[row]
    return HittingTimeClaim(paper=KEY, vary="1/eps", threshold=lambda v: v**-2, min_replicas=DET_REPLICAS,
                            side="at_most", tolerance=0.1,
                            expected=ExpectedOrder(value=exponent(entry["derived"][1], eps, inverse=True),
                                                   why=f"1/eps-exponent of T derived by sympy from {entry['theorem']}'s "
                                                       "rate (complexity_table)"), **fields)


def d2_config(inv_eps: float, profile: Profile) -> RunConfig:
    """FESS-GDA on f~_i = f_i - eps/(4 D(Y)) ||y - y0||^2 (problem parameter reg_eps = eps), Theorem E.1's
    shape at (l~, mu~ = eps/(2 D(Y))) with practical constants; stationarity is measured on the ORIGINAL f."""
    problem = {"kind": "tanh", "x0": 2.0, "reg_eps": 1.0 / inv_eps, "moreau": False}
    c = problem_constants(_run("fess_gda", {}, problem, 1, 1))
    mu_reg = (1.0 / inv_eps) / (2 * c["D_Y"])
    ex = 1 / (3 * c["l"])
    params = {**steps(ex, ex / FESS_CY, 1, ex, ex / FESS_CY), "p": 2 * c["l"], "beta": FESS_CB * ex / FESS_CY * mu_reg}
    return _run("fess_gda", params, problem, math.ceil(1200 * inv_eps), DET_REPLICAS, 300)


D2_NCC_REGULARIZED = observe(
    eps_rounds_claim(
    4,
    id="fessgda.D2.ncc_regularized_rounds",
    title="NC-C via the regularized run: rounds to eps-stationarity of f grow at most like eps^-3",
    statement="FESS-GDA on f - eps/(4D(Y)) ||y - y0||^2 reaches ||grad_x f||^2 + l^2 ||P_Y(y + grad_y f/l) - y||^2 <= eps^2 "
              "for the ORIGINAL f within O(eps^-3) rounds (Theorem 3.3).",
    source=src("Theorem 3.3, Appendix G", "spec §2.4(A), §6.5 test 2"),
    grid={"quick": (2.5, 5, 10), "full": (2.5, 5, 10, 20)}, configure=d2_config, measure="stat_sq",
),
    id='fessgda.D2.ncc_regularized_rounds',
    title='NC-C via the regularized run: rounds to eps-stationarity against 1/eps (observed against the eps^-3 cap)',
    quantity='exponent of the rounds in 1/eps (Theorem 3.3: at most 3)', compute=exponent_against_cap)

# ---------------------------------------------------------------------------------------------
# B2: NC-PL noise floor proportional to 1/(mK) at fixed eta_x K (spec §6.2 test 2, §6.7 B2)

NCPL_FLOOR = {"kind": "ncpl", "mu": 0.5, "noise": 0.5, "zeta": 0.0, "clients": 16, "x0": 1.0}
# Theorem 3.1's explicit bound at its schedule (p = 2l, eta_y = eta_x/256, beta = eta_y K mu/80000)
# with eta_x K = h fixed and eta_l -> 0: the steady part C31 N_unc, sigma part (sigma_G = 0)
FLOOR_31 = (C31 * N_UNC).subs({p: 2 * l, beta: eta_y * K * mu / 80000}).subs(eta_y, eta_x / 256).subs(
    {eta_x: hx / K, sigma_G: 0, eta_xl: 0, eta_yl: 0})


def b2_config(m_clients: int, K_steps: int, profile: Profile) -> RunConfig:
    """FESS-GDA with Theorem 3.1's shape and practical constants, eta_x K = 1/(3l) fixed, tiny local
    steps (global = effective / local, spec §2.6), m of M = 16 homogeneous clients without replacement."""
    c = problem_constants(_run("fess_gda", {}, NCPL_FLOOR, 1, 1))
    ex = 1 / (3 * c["l"] * K_steps)
    ey = ex / FESS_CY
    part = "full" if int(m_clients) == int(c["M"]) else f"without_replacement:{int(m_clients)}"
    params = {**steps(ex, ey, K_steps, ETA_LOCAL, ETA_LOCAL), "p": 2 * c["l"],
              "beta": FESS_CB * ey * K_steps * c["mu"], "participation": part}
    return _run("fess_gda", params, NCPL_FLOOR, FLOOR_ROUNDS * (2 if profile.name == "full" else 1), profile.replicas)


B2_C2_DESIGN = ("three points over 1.2 decades (quick budget; the full profile has five): each point is a 1500-round "
                "tail average over 16 replicas, the CI half-width (about 0.035) is a third of the band, and the "
                "1/(mK) law of the same floor is checked exactly on the quadratic (A2, A3: exact Lyapunov values)")


def ncpl_floor_slope(id: str, title: str, vary: str, grid: Mapping[str, tuple],
                     configure: Callable[[float, Profile], RunConfig]) -> SlopeClaim:
    return SlopeClaim(id=id, paper=KEY, title=title,
                      statement="At fixed eta_x K, eta_y K and tiny local steps, the stationary mean of "
                                "||grad_x f||^2 + kappa ||grad_y f||^2 is proportional to sigma^2/(mK) (linear speedup).",
                      source=src("Theorem 3.1, Appendix D (sigma^2 term of N_unc)", "spec §6.2 test 2, §6.7 B2"),
                      vary=vary, grid=grid, configure=configure, measure="stat_kappa",
                      summary=tail_average("stat_kappa", FLOOR_START_FRACTION),
                      expected=_order(FLOOR_31, sp.Symbol(vary, positive=True, integer=True),
                                      "Theorem 3.1 explicit bound C31 N_unc at fixed eta_x K, sigma part"),
                      tolerance=0.1, design_reason=B2_C2_DESIGN)


B2_FLOOR_M = ncpl_floor_slope("fessgda.B2.ncpl_floor_m", "NC-PL noise floor falls like 1/m", "m",
                              {"quick": (1, 4, 16), "full": (1, 2, 4, 8, 16)},
                              lambda v, prof: b2_config(int(v), 4, prof))
B2_FLOOR_K = ncpl_floor_slope("fessgda.B2.ncpl_floor_K", "NC-PL noise floor falls like 1/K at fixed eta K", "K",
                              {"quick": (1, 4, 16), "full": (1, 2, 4, 8, 16)},
                              lambda v, prof: b2_config(4, int(v), prof))

# ---------------------------------------------------------------------------------------------
# B4: the paper's WGAN in closed form (spec §6.3 b'), rounds against kappa = l/(2 lam)

B4_LEVEL = 1e-2  # ||grad_x f||^2 + kappa ||grad_y f||^2 <= eps^2, eps = 0.1
B4_ROUNDS_PER_KAPPA = 65.0  # run length 65 kappa (hits came at 35-50 kappa: at most 0.77 of the run); a level not reached is INCONCLUSIVE


def _wgan(lam_value: float) -> dict[str, Any]:
    return {"kind": "wgan", "lam": float(lam_value)}


def wgan_kappa(lam_value: float) -> float:
    return problem_constants(_run("fess_gda", {}, _wgan(lam_value), 1, 1))["kappa"]


def b4_config(lam_value: float, profile: Profile) -> RunConfig:
    """Deterministic FESS-GDA, M = m = 1, Theorem 3.1's shape with the practical constants of B1."""
    c = problem_constants(_run("fess_gda", {}, _wgan(lam_value), 1, 1))
    ex = 1 / (3 * c["l"])
    params = {**steps(ex, ex / FESS_CY, 1, ex, ex / FESS_CY), "p": 2 * c["l"], "beta": FESS_CB * ex / FESS_CY * c["mu"]}
    # the run grows like kappa (Theorem 3.1's order) with margin, so the hitting time is never capped by the run
    rounds = math.ceil(B4_ROUNDS_PER_KAPPA * c["kappa"])
    return _run("fess_gda", params, _wgan(lam_value), rounds, DET_REPLICAS, 300)


B4_WGAN_KAPPA = HittingTimeClaim(
    id="fessgda.B4.wgan_kappa",
    paper=KEY,
    title="WGAN (closed form): FESS-GDA rounds grow at most like kappa = l/(2 lam)",
    statement="On the population WGAN of §5.1, rounds to ||grad_x f||^2 + kappa ||grad_y f||^2 <= eps^2 grow at most "
              "like kappa as lam decreases (Theorem 3.1: T = O(kappa eps^-2); the paper's Figure 1 claim).",
    source=src("Theorem 3.1, §5.1 Figure 1", "spec §6.3, §6.7 B4"),
    vary="kappa", grid={"quick": (0.1, 0.055, 0.03, 0.017, 0.009), "full": (0.1, 0.055, 0.03, 0.017, 0.009, 0.005)},
    configure=b4_config, measure="stat_kappa", threshold=lambda v: B4_LEVEL, abscissa=wgan_kappa,
    min_replicas=DET_REPLICAS, side="at_most", tolerance=0.15,
    expected=ExpectedOrder(value=exponent(complexity_table()[0]["derived"][1], kap),
                           why="kappa-exponent of T derived by sympy from Theorem 3.1's rate (complexity_table)"),
)

# ---------------------------------------------------------------------------------------------
# C2: point-wise max, linear speedup in m (spec §6.4 test 2, §6.7 C2). Per-client samples to eps
# scale like 1/m because the step-size-free floor of the compact-Y analysis is sigma^2/(mK): at
# fixed eta K and T the samples KT needed to put the floor below eps^2 are proportional to 1/m.
# Measured here as that floor (the quantity the m^-1 comes from), against m.

PWMAX_NOISY = {"kind": "pwmax", "c0": 0.5, "noise": 0.1, "zeta": 0.0, "clients": 16}
# noise 0.1 << c0 = 0.5: the inactive component stays clipped at y_4 = 0 (strict complementarity),
# so the dynamics near the saddle are linear and the floor is exactly proportional to the variance
FLOOR_CON = (N_CON / (eta_x * K)).subs({eta_x: hx / K, eta_y: hy / K, sigma_G: 0, eta_xl: 0, eta_yl: 0})


def c2_config(m_clients: float, profile: Profile) -> RunConfig:
    c = problem_constants(_run("fess_gda", {}, PWMAX_NOISY, 1, 1))
    K_steps = 4
    ex = 1 / (3 * c["l"] * K_steps)
    part = "full" if int(m_clients) == int(c["M"]) else f"without_replacement:{int(m_clients)}"
    params = {**steps(ex, ex / 2, K_steps, ETA_LOCAL, ETA_LOCAL), "p": 2 * c["l"], "beta": 0.1, "participation": part}
    return _run("fess_gda", params, PWMAX_NOISY, FLOOR_ROUNDS * (2 if profile.name == "full" else 1), profile.replicas)


C2_FLOOR_M = SlopeClaim(
    id="fessgda.C2.pwmax_floor_m",
    paper=KEY,
    title="Point-wise max: the sigma^2/(mK) floor falls like 1/m (per-client samples to eps like 1/m)",
    statement="Stochastic FESS-GDA on form (2) at fixed eta K: the stationary mean of ||grad_x f||^2 + "
              "l^2 ||P(y + grad_y f/l) - y||^2 is proportional to 1/m, hence KT to eps^2 proportional to 1/m.",
    source=src("Theorem 3.4, Appendix H, eq. (43) (N_con)", "spec §6.4 test 2, §6.7 C2"),
    vary="m", grid={"quick": (1, 4, 16), "full": (1, 2, 4, 8, 16)}, configure=c2_config, measure="stat_sq",
    design_reason=B2_C2_DESIGN,
    summary=tail_average("stat_sq", FLOOR_START_FRACTION),
    expected=_order(FLOOR_CON, m, "per-round error N_con/(eta_x K) of the compact-Y analysis at fixed eta K, sigma part"),
    tolerance=0.1,
)

# ---------------------------------------------------------------------------------------------
# D1: NC-1PC (spec §6.6 e), Theorem 3.2 with beta proportional to eta_y K eps^2/D(Y)

ONEPC = {"kind": "onepc"}
# Practical constant of Theorem 3.2's beta = eta_y K eps^2/(80000 D(Y)) (spec §6.0 keeps the shape):
# 400 instead of 1/80000 puts beta just below 1/2 at the coarsest eps of the grid.
D1_CB = 400.0
D1_ROUNDS_BETA = 60.0  # run length 60/beta rounds: the z-EMA needs O(1/beta) rounds (budget, not a fit)


def d1_config(inv_eps: float, profile: Profile) -> RunConfig:
    c = problem_constants(_run("fess_gda", {}, ONEPC, 1, 1))
    ex = 1 / (3 * c["l"])
    ey = ex / FESS_CY
    beta_value = D1_CB * ey * (1 / inv_eps) ** 2 / c["D_Y"]
    params = {**steps(ex, ey, 1, ex, ey), "p": 2 * c["l"], "beta": beta_value, "participation": "full"}
    return _run("fess_gda", params, ONEPC, math.ceil(D1_ROUNDS_BETA / beta_value), DET_REPLICAS, 300)


D1_NC1PC_ROUNDS = observe(
    eps_rounds_claim(
    3,
    id="fessgda.D1.nc1pc_rounds",
    title="NC-1PC: rounds to eps-stationarity of Phi_{1/2l} grow at most like eps^-4",
    statement="FESS-GDA with p = 2l and beta proportional to eta_y K eps^2/D(Y) on a one-point-concave, non-concave "
              "problem reaches ||grad Phi_{1/2l}(x)||^2 <= eps^2 within O(eps^-4) rounds (Theorem 3.2).",
    source=src("Theorem 3.2, Appendix F", "spec §6.6, §6.7 D1"),
    grid={"quick": (2, 4, 8), "full": (2, 4, 8, 16)}, configure=d1_config, measure="moreau_sq",
),
    id='fessgda.D1.nc1pc_rounds',
    title='NC-1PC: rounds to eps-stationarity of Phi_1/2l against 1/eps (observed against the eps^-4 cap)',
    quantity='exponent of the rounds in 1/eps (Theorem 3.2: at most 4)', compute=exponent_against_cap)

CLAIMS = (
    A1_LINEAR,
    A1_LINEAR_PL,
    A6_SMOOTHED_RATE,
    A2_FLOOR_M,
    A2_FLOOR_K,
    A2_LYAPUNOV,
    A3_FLOOR_K,
    A3_LYAPUNOV,
    A4_LOG_ROUNDS,
    A5_DRIFT,
    B1_FESS_KAPPA,
    B1_GDA_KAPPA,
    B3_RATE_T,
    C1_PWMAX,
    C1_CONTROL_C0,
    C1_CONTROL_DUP,
    D2_NCC_REGULARIZED,
    B2_FLOOR_M,
    B2_FLOOR_K,
    C2_FLOOR_M,
    D1_NC1PC_ROUNDS,
    B4_WGAN_KAPPA,
    A1_LINEAR_SWAPPED,
)


# ---------------------------------------------------------------------------------------------
# Report sections (complexity tables, Table 1 next to measured exponents, errata)

ERRATA = (
    "Local-step caps printed with the noise scale in the numerator (all theorems): the printed Theorem 3.1 cap "
    "eps sqrt(kappa^-1 (sigma_G^2 + sigma^2))/(Kl) has exponent {printed:+g} in sigma, the proofs need "
    "eps/(Kl sqrt(kappa (sigma_G^2 + sigma^2))) with exponent {corrected:+g} (spec §4.0).",
    "Theorem 3.1 proof: the partial-participation case is headed 'm = M or sigma_G = 0' (spec §4.1).",
    "Lemma C.7/F.3 use beta <= eta_y K l/80000; Theorems 3.1/E.1 need beta = eta_y K mu/80000 (encoded as the condition).",
    "Lemmas E.1-E.3 cite Assumption 3.1 (Y = R^d2) with compact Y; they need strong concavity (E.1).",
    "Constrained-Y proofs use the unprojected aggregate identity, ignoring the local projections (spec §2.2); the code projects literally.",
    "Lemma F.2: constant 6 D(Y) in the statement, 2 in its proof, 4 in eq. (36) (the 'explicit_moreau' bound uses 4).",
    "Appendix G: n^-1 for m^-1 and an inconsistent stationarity tuple.",
    "Appendix H restates Theorem 3.4 as 'Theorem 3.2', cites wrong equations, and its closing claim differs from the theorem.",
    "Appendix I: '-b' for '+b', 126 for 128, contraction printed with 256 where the derivation gives 1024 "
    "(bound 'printed_contraction' vs 'recursion'), a missing square root on the eta_yl cap, eta_y/eta_x swapped once, "
    "the eta_xl cap listed twice, and the distance conversion drops the argmax-Lipschitz factor kappa_2^2.",
    "Theorem 3.5 / Table 2 headline kappa exponents (kappa'^3 kappa''^4 samples, kappa' kappa''^2 rounds) disagree with "
    "the appendix derivation (kappa'^5 kappa''^2, kappa'^2 kappa''): see the PL-PL rows below.",
    "Appendix J uses the wrong PL-PL branch for the phase-2 objective and has a sign typo in Psi~.",
    "Eq. (2)/KKT typos and the f_i name clash between components and clients (spec §1.2).",
    "Phi smoothness 2 kappa l (§2) vs (1 + kappa) l (Lemma I.1).",
    "Theorem E.1 proof states beta = O(kappa^-2 m eps^2), inconsistent with beta = eta_y K mu/80000 and T = mK (O(kappa^-1)).",
    "The explicit Theorem 3.1 prefactor is max{...} = {prefactor} kappa/(eta_x K) at the theorem's choices: every "
    "'empirical <= bound' check against it is vacuous; only exponents are informative (pitfall P23).",
)


def _fmt_expr(expr: sp.Expr) -> str:
    return str(expr).replace("**", "^").replace("epsilon", "eps").replace("kappa_pp", "kappa''").replace("kappa_p", "kappa'")


def _measured(outcomes, claim_id: str) -> str:
    for o in outcomes:
        if o.claim.id == claim_id and "fit" in o.evidence:
            f = o.evidence["fit"]
            return f"{f['slope']:+.2f} [{f['ci_low']:+.2f}, {f['ci_high']:+.2f}] ({o.verdict})"
    return "not run"


def prefactor_31() -> sp.Expr:
    """32 p / beta at p = 2l, beta = eta_y K mu/80000, eta_y = eta_x/256, in units of kappa/(eta_x K)."""
    val = (32 * p / beta).subs({p: 2 * l, beta: eta_y * K * mu / 80000}).subs(eta_y, eta_x / 256)
    return sp.simplify(val / (kappa / (eta_x * K)))


def report_sections(outcomes) -> list[tuple[str, str]]:
    rows = ["| setting | theorem | KT printed | KT derived (sympy) | T printed | T derived (sympy) | agree |",
            "|---|---|---|---|---|---|---|"]
    for r in complexity_table():
        rows.append(f"| {r['setting']} | {r['theorem']} | {_fmt_expr(r['printed'][0])} | {_fmt_expr(r['derived'][0])} | "
                    f"{_fmt_expr(r['printed'][1])} | {_fmt_expr(r['derived'][1])} | {'yes' if r['agree'] else 'NO'} |")
    for name, (samples, rounds) in COMPLEXITY_ORDERS.items():
        rows.append(f"| {name} | (orders as stated) | {_fmt_expr(samples)} | - | {_fmt_expr(rounds)} | - | - |")
    complexity = "\n".join(rows)
    complexity += ("\n\nExponents of the PL-PL rounds in kappa' (max) and kappa'' (min): paper "
                   f"{exponent(COMPLEXITY_ORDERS['Thm 3.5 (paper)'][1] / sp.log(kp / eps), kp):g}, "
                   f"{exponent(COMPLEXITY_ORDERS['Thm 3.5 (paper)'][1] / sp.log(kp / eps), kpp):g}; derived "
                   f"{exponent(COMPLEXITY_ORDERS['Thm 3.5 (derived)'][1] / sp.log(kp / eps), kp):g}, "
                   f"{exponent(COMPLEXITY_ORDERS['Thm 3.5 (derived)'][1] / sp.log(kp / eps), kpp):g}.")

    t1 = ["| class | algorithm | partial participation | samples (FCP) | rounds (FCP) | kappa-exp. of rounds | "
          "1/eps-exp. of rounds |", "|---|---|---|---|---|---|---|"]
    for cls, alg, partial, samples, rounds in TABLE_1:
        t1.append(f"| {cls} | {alg} | {'yes' if partial else 'no'} | {_fmt_expr(samples)} | {_fmt_expr(rounds)} | "
                  f"{exponent(rounds, kap):g} | {exponent(rounds, eps, inverse=True):g} |")
    t1.append("")
    t1.append("| measured (this package) | claim | fitted exponent [95% CI] |")
    t1.append("|---|---|---|")
    t1.append(f"| FESS-GDA rounds vs kappa (NC-PL) | fessgda.B1.fess_kappa | {_measured(outcomes, 'fessgda.B1.fess_kappa')} |")
    t1.append(f"| GDA rounds vs kappa (NC-PL) | fessgda.B1.gda_kappa | {_measured(outcomes, 'fessgda.B1.gda_kappa')} |")
    t1.append(f"| FESS-GDA rounds vs 1/eps (form (2)) | fessgda.C1.pwmax_rounds | {_measured(outcomes, 'fessgda.C1.pwmax_rounds')} |")
    t1.append(f"| control c0 = 0 | fessgda.C1.control_c0_zero | {_measured(outcomes, 'fessgda.C1.control_c0_zero')} |")
    t1.append(f"| control duplicate | fessgda.C1.control_duplicate | {_measured(outcomes, 'fessgda.C1.control_duplicate')} |")
    t1.append(f"| PL-PL rounds vs log(1/eps) | fessgda.A4.log_rounds | {_measured(outcomes, 'fessgda.A4.log_rounds')} |")
    t1.append(f"| NC-PL averaged measure vs T (theory step) | fessgda.B3.rate_T | {_measured(outcomes, 'fessgda.B3.rate_T')} |")
    t1.append(f"| PL-PL floor vs m / vs K | fessgda.A2.floor_m / floor_K | {_measured(outcomes, 'fessgda.A2.floor_m')} / "
              f"{_measured(outcomes, 'fessgda.A2.floor_K')} |")
    t1.append(f"| drift bias vs eta_l K | fessgda.A5.drift_bias | {_measured(outcomes, 'fessgda.A5.drift_bias')} |")
    t1.append(f"| NC-C regularized run, rounds vs 1/eps | fessgda.D2.ncc_regularized_rounds | "
              f"{_measured(outcomes, 'fessgda.D2.ncc_regularized_rounds')} |")
    for label, cid in (("NC-1PC rounds vs 1/eps (Phi_{1/2l}, beta ~ eps^2)", "fessgda.D1.nc1pc_rounds"),
                       ("NC-PL noise floor vs m", "fessgda.B2.ncpl_floor_m"),
                       ("NC-PL noise floor vs K", "fessgda.B2.ncpl_floor_K"),
                       ("WGAN rounds vs kappa", "fessgda.B4.wgan_kappa"),
                       ("point-wise max floor vs m", "fessgda.C2.pwmax_floor_m")):
        t1.append(f"| {label} | {cid} | {_measured(outcomes, cid)} |")

    vacuity = vacuity_note(outcomes)
    printed = exponent(EPS_CAP_PRINTED_31.subs(sigma_G, 0), sigma)
    corrected = exponent(EPS_CAP_CORRECTED_31.subs(sigma_G, 0), sigma)
    errata = [e.replace("{printed:+g}", f"{printed:+g}").replace("{corrected:+g}", f"{corrected:+g}")
              .replace("{prefactor}", f"{float(prefactor_31()):.4g}") for e in ERRATA]
    return [
        ("Complexity table (paper vs derived)", complexity),
        ("Table 1 of the paper and measured exponents", "\n".join(t1)),
        ("Errata (spec §9, evaluated where computable)", "\n".join(f"- {e}" for e in errata)),
        ("Vacuous bounds (pitfall P23)", vacuity),
    ]


def vacuity_note(outcomes) -> str:
    """Theorem 3.1's explicit bound with its own schedule at the B3 instance, next to what B3 measured."""
    T_value = B3_RATE_T.grid["quick"][-1]
    config = b3_config(T_value, Profile("quick", replicas=1))
    c = problem_constants(config)
    values = {**{k: v for k, v in c.items() if k in THEOREM_3_1.symbols}, "PL_y": 1.0, "M": c["M"], "m": c["M"],
              "K": 1.0, "T": float(T_value)}
    sched = THEOREM_3_1.schedule_values(values)
    full = {**values, **sched, "eta_xl": 0.999 * math.sqrt(sched["beta"] / (6144 * sched["eta_x"] * sched["p"] * c["l"] ** 2)),
            "eta_yl": 0.999 * math.sqrt(sched["eta_y"] / (3072 * sched["eta_x"] * c["l"] ** 2))}
    ev = THEOREM_3_1.evaluate(full, use_schedule=False)
    measured = next((r for o in outcomes if o.claim.id == B3_RATE_T.id for r in o.points if r.value == T_value), None)
    text = (f"Theorem 3.1's explicit bound, evaluated with its own schedule (eta_x = {sched['eta_x']:.3g}, beta = "
            f"{sched['beta']:.3g}) on the B3 instance (l = {c['l']:.4g}, kappa = {c['kappa']:.4g}) at T = {T_value}, is "
            f"{ev.bounds['explicit']:.3g} (conditions hold: {ev.all_hold}); its prefactor max{{...}} is "
            f"{float(prefactor_31()):.4g} kappa/(eta_x K). ")
    if measured is not None and measured.samples.size:
        text += (f"The averaged measure B3 measured at T = {T_value} (practical step sizes) is {np.mean(measured.samples):.3g}, "
                 f"{ev.bounds['explicit'] / np.mean(measured.samples):.3g} times smaller. ")
    swapped = bindings(a1_swapped_config(1, Profile("quick", replicas=1)))
    a_swap = A35.xreplace(ROLE_SWAP)
    rate = float(a_swap.subs({s: swapped[s.name] for s in a_swap.free_symbols}))
    text += (f"The role-swapped Theorem 3.5 on the nonconvex-nonconcave (a3) example (mu1 = {swapped['mu1']:.3g} < mu2 = "
             f"{swapped['mu2']:.3g}) contracts W' by a' = eta_y K mu2/16 = {rate:.3g} per round at its own step sizes, so "
             "its recursion bound stays near W'_0 over any affordable T; fessgda.A1.linear_rate_ncnc_swapped therefore "
             "checks the measured contraction against the exact rate of the linearized round and reports how much "
             "faster than the theorem's it is (the tightness factor, in the Observations section). ")
    return text + ("Any 'empirical <= explicit bound' check of Theorems 3.1, E.1 and 3.2 is therefore vacuous; "
                   "this report checks their exponents instead, and the tight constants available: the exact "
                   "Lyapunov floor of the PL-PL quadratic (A2, A3) and the exact contraction rates (A1, A6).")


PAPER = Paper(
    key=KEY,
    title=TITLE,
    seed=SEED,
    theorems=THEOREMS,
    claims=CLAIMS,
    spec="../shared/spec/fessgda.md",
    report_sections=report_sections,
)
