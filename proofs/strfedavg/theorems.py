"""Theorems 1-3 of the StR-FedAvg paper in sympy, as stated and as corrected (spec strfedavg §4.11).

Every bound is the explicit expression before the O(.) step, assembled in the spec from the proofs.
Versions: 'stated' keeps the paper's constants, 'corrected' applies the errata the spec derives
(Prop. 1 factor 3: I7; the (4M)^(1/kappa) prefactor: I15; alpha inside the root: I16). Table 1's
exponents are derived from these bounds by ``table1()``.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from ratecheck.assumptions import (
    SELECTION,
    bounded_variance,
    heterogeneity,
    initial_gap,
    sharpness,
    smooth,
    strongly_convex,
    structure,
)
from ratecheck.theory import Bound, Condition, Source, Theorem

SEED = "001_511a8e816d499631.txt (arXiv 2503.08634v2)"
src = Source.of(SEED)

R, K, S, N, gg = sp.symbols("R K S N gamma_g", positive=True)
muf, Lf, Lh, sf, sh, G2, B2 = sp.symbols("mu_f L_f L_h sigma_f sigma_h G2 B2", positive=True)
a, b, p, Q, Qt2, M, alpha, kappa, gfs = sp.symbols("a b p Q Qt2 M alpha kappa gradf_star", positive=True)
eta = sp.Symbol("eta", positive=True)


def W(eh: sp.Expr) -> sp.Expr:
    """Drift constant W = 9(L_h + eta_hat L_f)(2 eta_hat^2 sigma_f^2 + 2 sigma_h^2)/K + 18(L_h + eta_hat L_f) G^2."""
    return 9 * (Lh + eh * Lf) * (2 * eh**2 * sf**2 + 2 * sh**2) / K + 18 * (Lh + eh * Lf) * G2


def Y(eh: sp.Expr) -> sp.Expr:
    """Noise + sampling constant Y = (2 eta_hat^2 sigma_f^2 + 2 sigma_h^2)/K + 4(1 - S/N) G^2."""
    return (2 * eh**2 * sf**2 + 2 * sh**2) / K + 4 * (1 - S / N) * G2


# ---------------------------------------------------------------------------------------------
# Theorem 1 (strongly convex outer level), cases i and ii (kappa > 1)

ETA_HAT_SC = p / (sp.E * b * muf**b)
W1, Y1 = W(ETA_HAT_SC), Y(ETA_HAT_SC)


def _sc(c3: int) -> tuple[sp.Expr, sp.Expr]:
    f_up = c3 * (muf * Q**2 / (2 * (R ** (p / 2) - 1))
                 + (Y1 / S + W1 / (gg**2 * muf**a * R**a)) / (p * sp.log(R) * muf ** (a - b) * R ** (a - b)))
    h_up = c3 * (p * sp.log(R) * muf ** (1 - b) * Q**2 / (2 * R**b * (R ** (p / 2) - 1)) + Y1 / (S * muf**a * R**a)
                 + W1 / (gg**2 * muf ** (2 * a) * R ** (2 * a))) + 2 * p * sp.log(R) * M / (muf**b * R**b)
    return f_up, h_up


F_UP_SC, H_UP_SC = _sc(1)
F_UP_SC_CORR, H_UP_SC_CORR = _sc(3)

_PRINTED_CONDITIONS = (  # Theorem 1's hypotheses, with the two its proof uses unstated (I6)
    Condition("gamma_tilde <= 1/(16 (L_h + eta_hat L_f)^2 (1 + B^2))",
              1 / (muf**a * R**a) <= 1 / (16 * (Lh + ETA_HAT_SC * Lf) ** 2 * (1 + B2)), src("Theorem 1, hypotheses")),
    Condition("R >= (64(1+B^2) L_h^2)^(1/a) / mu_f", (64 * (1 + B2) * Lh**2) ** (1 / a) / muf <= R,
              src("Theorem 1 (i)")),
    Condition("R >= (32 sqrt(1+B^2) p L_f / (e (a+2b) mu_f^((a+2b)/2)))^(4/(a+2b))",
              (32 * sp.sqrt(1 + B2) * p * Lf / (sp.E * (a + 2 * b) * muf ** ((a + 2 * b) / 2))) ** (4 / (a + 2 * b)) <= R,
              src("Theorem 1 (i)", "from ln R <= 4 R^((a+2b)/4)/(e(a+2b))")),
    Condition("Lemma 6: gamma_tilde <= gamma_g/(27 B^2 (L_h + eta_hat L_f))",
              1 / (muf**a * R**a) <= gg / (27 * B2 * (Lh + ETA_HAT_SC * Lf)),
              src("Lemma 6", "omitted from Theorem 1 but used by its proof (I6)")),
    Condition("Prop. 3: R >= 16 (L_h + eta_hat L_f)^2 (1+B^2)/mu_f",
              16 * (Lh + ETA_HAT_SC * Lf) ** 2 * (1 + B2) / muf <= R, src("Proposition 3", "omitted from Theorem 1 (I6)")),
)
_I10_CONDITIONS = (  # what the proof needs beyond the printed range 0 < b < a <= 1 (I10)
    Condition("a + b <= 1", a + b <= 1, src("proof of Theorem 1", "needed, not stated (I10)")),
    # (1 - mu_f R)(1 - a - b) <= 0 written so that a + b = 1 in floating point counts as a + b = 1
    Condition("mu_f R >= 1 if a + b < 1", 1 <= sp.Max(muf * R, a + b),
              src("proof of Theorem 1", "bounds (1 - eta mu_f gamma_tilde/2)^R by R^(-p/2): needed, not stated (I10)")),
)
_SC_CONDITIONS = _PRINTED_CONDITIONS + _I10_CONDITIONS

THEOREM_1 = Theorem(
    requires=SELECTION.assume(strongly_convex("mu_f"), smooth("L_f", "L_h"), bounded_variance("sigma_f", "sigma_h"),
              initial_gap("M"), sharpness("alpha", "kappa"), heterogeneity("gradf_star"), structure("N")),
    id="strfedavg.theorem1",
    title="Theorem 1: StR-FedAvg, strongly convex f, convex h (cases i-ii, kappa > 1)",
    source=src("Theorem 1 and its proof; spec §4.4"),
    measure="f_gap",
    constants=(muf, Lf, Lh, sf, sh, G2, B2, Q, M, alpha, kappa, gfs, N),
    parameters=(R, K, S, gg, a, b, p),
    assumptions=("A1 f_i mu_f-strongly convex and L_f-smooth, h_i convex L_h-smooth", "A2 unbiased, bounded variance",
                 "weak sharpness h - h* >= alpha dist^kappa (case ii)"),
    conditions=_SC_CONDITIONS,
    bounds=(
        Bound("f_up_stated", F_UP_SC, src("Theorem 1 (i-1), explicit form", "Prop. 1 as stated")),
        Bound("f_up_corrected", F_UP_SC_CORR, src("Theorem 1 (i-1)", "Prop. 1 with its factor 3 (I7)")),
        Bound("h_up_stated", H_UP_SC, src("Theorem 1 (i-2), Prop. 3 with 2 eta M")),
        Bound("h_up_corrected", H_UP_SC_CORR, src("Theorem 1 (i-2)", "Prop. 1 factor 3 (I7)")),
        Bound("f_lo_stated", -gfs * (H_UP_SC / alpha) ** (1 / kappa), src("Theorem 1 (ii-1), Prop. 2 (ii)")),
        Bound("f_lo_corrected", -gfs * (H_UP_SC_CORR / alpha) ** (1 / kappa), src("Theorem 1 (ii-1)", "I7")),
        Bound("d2_up_corrected", (2 / muf) * (gfs * (H_UP_SC_CORR / alpha) ** (1 / kappa) + F_UP_SC_CORR),
              src("Theorem 1 (ii-3)", "I7")),
    ),
)

# ---------------------------------------------------------------------------------------------
# Theorem 2 (convex outer level), eta_hat := 1 (I13)

W0, Y0 = W(sp.Integer(1)), Y(sp.Integer(1))
F_UP_CVX = 3 * Qt2 * R ** (a + b - 1) + 3 * R ** (b - a) * Y0 / S + 3 * R ** (b - 2 * a) * W0 / gg**2
H_UP_CVX = 3 * Qt2 * R ** (a - 1) + 3 * R ** (-a) * Y0 / S + 3 * R ** (-2 * a) * W0 / gg**2 + 2 * M * R ** (-b)

THEOREM_2 = Theorem(
    requires=SELECTION.assume(smooth("L_f", "L_h"), bounded_variance("sigma_f", "sigma_h"), initial_gap("M"),
              sharpness("alpha", "kappa"), heterogeneity("gradf_star"), structure("N")),
    id="strfedavg.theorem2",
    title="Theorem 2: StR-FedAvg, convex f, convex h (cases i-ii)",
    source=src("Theorem 2 and Propositions 4-6; spec §4.5"),
    measure="f_gap",
    constants=(Lf, Lh, sf, sh, G2, B2, Qt2, M, alpha, kappa, gfs, N),
    parameters=(R, K, S, gg, a, b),
    assumptions=("A1 with mu_f = 0", "A2", "weak sharpness (case ii)"),
    conditions=(
        Condition("R >= (64(1+B^2) L_h^2)^(1/a)", (64 * (1 + B2) * Lh**2) ** (1 / a) <= R, src("Theorem 2 (i)")),
        Condition("R >= (64(1+B^2) L_f^2)^(1/(a+2b))", (64 * (1 + B2) * Lf**2) ** (1 / (a + 2 * b)) <= R,
                  src("Theorem 2 (i)")),
        Condition("Lemma 6: R^-a <= gamma_g/(27 B^2 (L_h + L_f))", R ** (-a) <= gg / (27 * B2 * (Lh + Lf)),
                  src("Lemma 6", "omitted from Theorem 2 (I6)")),
        Condition("a + b < 1", a + b < 1, src("Theorem 2 (i)", "for the f-bound to vanish")),
    ),
    bounds=(
        Bound("f_up", F_UP_CVX, src("Theorem 2 (i-1), explicit form (Prop. 6)")),
        Bound("h_up", H_UP_CVX, src("Theorem 2 (i-2), explicit form (Prop. 6, 2 eta M)")),
        Bound("f_lo", -gfs * (H_UP_CVX / alpha) ** (1 / kappa), src("Theorem 2 (ii)")),
    ),
)

# ---------------------------------------------------------------------------------------------
# Theorem 3 (nonconvex outer level; IPIR-FedAvg), case i (kappa > 1)

T, t, lam, gam, dF, D0, Gn2, gs, etah = sp.symbols(
    "T t lambda gamma F0_minus_Fstar D0 Gncvx2 gradg_star eta_hat", positive=True)
C_LAM = 2 / lam**2 + 2 * gam * (Lf * lam + 2) / lam**3
A_NC = 2 * sh**2 / (K * S) + (1 - S / N) * 4 * Gn2 / S  # sigma_f = 0: grad g is exact (I17)
B_NC = 9 * (Lh + etah) * 2 * sh**2 / (K * gg**2) + 18 * (Lh + etah) * Gn2 / gg**2


def _stat(pref: sp.Expr) -> sp.Expr:
    return (2 * dF / (gam * T) + C_LAM * D0 * (1 + sp.log(T)) / T
            + C_LAM * A_NC * 6 / (5 * T ** sp.Rational(1, 6) * sp.log(T))
            + C_LAM * B_NC * 3 / (2 * T ** sp.Rational(3, 4) * sp.log(T))
            + pref * (4 * M) ** (1 / kappa) * (24 * kappa - 5) / (12 * kappa - 5) * sp.log(T) ** (1 / kappa)
            / T ** (5 / (12 * kappa))
            + C_LAM * gs / alpha ** (1 / kappa) * (
                D0 ** (1 / kappa) * 2 * 4 ** (1 / kappa) * (sp.log(T) + 1) ** (1 / kappa) / T ** (17 / (12 * kappa))
                + (2 * A_NC) ** (1 / kappa) * 2 ** (1 / kappa) / (1 - sp.Rational(7, 12) / kappa) / T ** (7 / (12 * kappa))
                + (2 * B_NC) ** (1 / kappa) / T ** (1 / kappa)))


STAT_STATED = _stat(sp.Integer(1))
STAT_CORRECTED = _stat(C_LAM * gs / alpha ** (1 / kappa))
ETA_HAT_NCVX = sp.Rational(24, 5) / sp.E  # the paper says 11: the argmax t, not the max (I14)
GAMMA_MAX_STATED = 3 * lam / (4 * (Lf * lam + 2))
GAMMA_MAX_CORRECTED = lam / (4 * (Lf * lam + 2))

THEOREM_3 = Theorem(
    requires=SELECTION.assume(smooth("L_f", "L_h"), bounded_variance("sigma_h"), initial_gap("M"), sharpness("alpha", "kappa"),
              structure("N")),
    id="strfedavg.theorem3",
    title="Theorem 3: IPIR-FedAvg, nonconvex f, convex h (case i, kappa > 1)",
    source=src("Theorem 3 (i-1) and its proof; spec §4.8"),
    measure="avg:stat_sq",
    constants=(Lf, Lh, sh, Gn2, M, alpha, kappa, gs, dF, D0, etah, N),
    parameters=(T, K, S, gg, lam, gam),
    assumptions=("A3: f L_f-smooth (nonconvex), h_i convex L_h-smooth", "weak sharpness kappa > 1"),
    conditions=(
        Condition("gamma <= lam/(4(L_f lam + 2)) (corrected, I19)", gam <= GAMMA_MAX_CORRECTED,
                  src("proof of Theorem 3", "the paper states 3 lam/(4(L_f lam + 2)) (I19)")),
    ),
    bounds=(
        Bound("stated", STAT_STATED, src("Theorem 3 (i-1)"), "(4M)^(1/kappa) term without prefactor (I15)"),
        Bound("corrected", STAT_CORRECTED, src("Theorem 3 (i-1)", "prefactor C_lam g*/alpha^(1/kappa) (I15)")),
    ),
)

# The step Theorem 3 (i-1) rests on (spec §4.8): summing the one-step descent of F_lambda along
# Algorithm 2's inexact steps, (1/T) sum_t ||grad F_lambda(y^t)||^2 <= 2 Delta F/(gamma T) + C_lam E2
# with E2 = (1/T) sum_t ||x^t - Pi(y^t)||^2 the inner errors; Prop. 7 then bounds E2. With E2 measured
# on the run, this is the outer half of the proof checked on IPIR-FedAvg itself.
E2 = sp.Symbol("E2_inner", positive=True)
DESCENT = 2 * dF / (gam * T) + C_LAM * E2

THEOREM_3_DESCENT = Theorem(
    requires=SELECTION.assume(smooth("L_f"),),
    id="strfedavg.theorem3_descent",
    title="Theorem 3, descent step: stationarity of IPIR-FedAvg from its inner errors",
    source=src("proof of Theorem 3 (i-1), the summed descent inequality; spec §4.8"),
    measure="avg:stat_sq",
    constants=(Lf, dF, E2),
    parameters=(T, lam, gam),
    assumptions=("A3: f L_f-smooth", "F_lambda = f + dist^2/(2 lam), the function Algorithm 2 descends (I18)"),
    conditions=(
        Condition("gamma <= lam/(4(L_f lam + 2)) (corrected, I19)", gam <= GAMMA_MAX_CORRECTED,
                  src("proof of Theorem 3", "the paper states 3 lam/(4(L_f lam + 2)) (I19)")),
    ),
    bounds=(Bound("stated", DESCENT, src("proof of Theorem 3 (i-1)", "before Prop. 7 bounds E2")),),
)

# Theorem 1 over the exponent range it prints (0 < b < a <= 1): every condition of THEOREM_1 but the
# two I10 adds. The hunts (hunts.py) search both: this one breaks where a + b > 1 (the initialization
# term then decays like exp(-(p/2) ln R (mu_f R)^(1 - a - b)), not R^(-p/2)), THEOREM_1 must not.
THEOREM_1_PRINTED = dataclasses.replace(
    THEOREM_1, id="strfedavg.theorem1_printed_range",
    title="Theorem 1 over its printed range 0 < b < a <= 1 (without I10's a + b <= 1)",
    source=src("Theorem 1 as printed (0 < b < a <= 1)", "spec §4.4, I10"),
    conditions=_PRINTED_CONDITIONS)

THEOREMS = (THEOREM_1, THEOREM_2, THEOREM_3, THEOREM_3_DESCENT, THEOREM_1_PRINTED)

# ---------------------------------------------------------------------------------------------
# Table 1: rounds to accuracy eps, printed and derived (exponent e of eps^-e = 1/(decay rate in R))

SC_AB = {a: sp.Rational(2, 3), b: sp.Rational(1, 3)}  # Remark 2
CVX_AB = {a: sp.Rational(1, 2), b: sp.Rational(1, 4)}


def _rate(expr: sp.Expr, var: sp.Symbol, subs: dict) -> sp.Expr:
    """-lim var d/dvar log(expr) as var -> oo: the polynomial decay rate (logs do not count)."""
    ln = sp.Symbol("ln_" + var.name, positive=True)  # log factors do not change a polynomial rate
    e = expr.subs(subs).subs(sp.log(var), ln)
    # c R^x - c ~ c R^x as R -> oo (the initialization terms (R^(p/2) - 1) of Theorem 1)
    e = e.replace(lambda x: x.is_Add and x.has(var) and any(arg.is_Number for arg in x.args),
                  lambda x: sp.Add(*[arg for arg in x.args if not arg.is_Number]))
    rates = []
    for term in sp.Add.make_args(sp.expand(e)):
        el = sp.simplify(var * sp.diff(sp.expand_log(sp.log(term), force=True), var))
        if el.has(var):
            raise ValueError(f"term {term} is not a power of {var}")
        rates.append(-el)
    return sp.Min(*rates)


def table1() -> list[dict]:
    """Each row: method, quantity, printed exponent, derived exponent (sympy), and a note."""
    const = {p: 1, Q: 1, Qt2: 1}
    sc = {**SC_AB, **const}
    cv = {**CVX_AB, **const}
    k = kappa
    rows = []

    def row(method, quantity, printed, rate, note=""):
        derived = sp.simplify(1 / rate)
        rows.append({"method": method, "quantity": quantity, "printed": printed, "derived": str(derived),
                     "agrees": sp.simplify(derived - sp.sympify(printed, locals={"kappa": kappa})) == 0,
                     "note": note})

    row("StR-FedAvg, str. cvx f", "E f - f* (U.B.)", "3", _rate(F_UP_SC, R, sc))
    row("StR-FedAvg, str. cvx f", "E h - h* (U.B.)", "3", _rate(H_UP_SC, R, sc))
    row("StR-FedAvg, str. cvx f, kappa > 1", "E f - f* (L.B.)", "3*kappa", _rate(H_UP_SC, R, sc) / k,
        "f_lo = -(norm of grad f(x*)) (h_up/alpha)^(1/kappa)")
    row("StR-FedAvg, cvx f", "E f - f* (U.B.)", "4", _rate(F_UP_CVX, R, cv))
    row("StR-FedAvg, cvx f", "E h - h* (U.B.)", "4", _rate(H_UP_CVX, R, cv))
    row("StR-FedAvg, cvx f, kappa > 1", "E f - f* (L.B.)", "4*kappa", _rate(H_UP_CVX, R, cv) / k)
    # IPIR: T_eps from the stationarity bound at kappa = 2 (the only realizable kappa > 1), rounds ~ T^2
    stat_rate = _rate(STAT_CORRECTED.subs(kappa, 2), T, {})
    row("IPIR-FedAvg, kappa = 2", "stationarity (rounds = sum_t R_t ~ T^2)", "48/5", stat_rate / 2,
        "Table 1 keeps only the T^(-5/(12 kappa)) term; T^(-1/6)/ln T dominates for kappa < 5/2 (I21)")
    return rows


KAPPA1_NOTE = ("kappa = 1 rows (Thm 1 iii, Thm 2 iii, Thm 3 ii) are vacuous for smooth h: an L_h-smooth h with "
               "X*_h != R^n has h - h* <= L_h/2 dist^2 near X*_h, so weak sharpness forces kappa >= 2 (I23).")
