"""FESS-GDA claims B-D (spec §6.2-6.5): NC-PL kappa-dependence and floors, the point-wise maximum with strict
complementarity, nonconvex-concave and nonconvex-one-point-concave rounds, the WGAN instance."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import sympy as sp

from ratecheck.claims import (
    ExpectedOrder,
    HittingTimeClaim,
    Profile,
    SlopeClaim,
    observe,
    tail_average,
)
from ratecheck.inspection import constants_of
from ratecheck.theory import Derived, exponent
from ratecheck.trace import RunConfig

from .runs import (
    DET_REPLICAS,
    ETA_LOCAL,
    FLOOR_ROUNDS,
    MONTE_CARLO,  # noqa: F401  (re-exported)
    RATIO_TOLERANCE,  # noqa: F401  (re-exported)
    _order,
    _run,
    derived_rounds_exponent,
    exponent_against_cap,
    hx,
    hy,
    run_symbols,  # noqa: F401  (re-exported)
    steps,
)
from .theorems import (
    C31,
    GDA_LIN_2020_ROUNDS,
    KEY,
    N_CON,
    N_UNC,
    THEOREM_3_1,
    K,
    beta,
    complexity_theorem,
    eps,
    eta_x,
    eta_xl,
    eta_y,
    eta_yl,
    kap,
    l,
    m,
    mu,
    p,
    sigma_G,
    src,
)

# ---------------------------------------------------------------------------------------------
# Claims B: NC-PL (spec §6.2 b), deterministic kappa-dependence

B1_LEVEL = 1e-4  # ||grad_x f||^2 + kappa ||grad_y f||^2 <= eps^2
# GDA's grid spans a decade of kappa (2.618 to 26.48) in the quick profile: mu = 0.077 instead of 0.1 (audit of the
# verdicts: 0.89 decades before); local slopes +1.895, +1.939, +2.010, +2.003 (fit +1.971)
B1_GRID = {"quick": (1.0, 0.55, 0.3, 0.17, 0.077), "full": (1.0, 0.55, 0.3, 0.17, 0.1, 0.03)}
# GDA's run length in units of kappa^2: the hits came at 30.2-33.1 kappa^2 (at most 0.83 of the run); a hit the
# run does not reach is INCONCLUSIVE, never a wrong verdict. 40 instead of 45 pays for the wider grid.
B1_GDA_ROUNDS_PER_KAPPA2 = 40.0
# FESS-GDA's run length grows only like kappa: its grid starts at larger kappa, where the hitting rounds are
# past the kappa-independent start-up (from mu = 1 the local slope rose from 0.7 to 1.05 across the grid:
# a regime change, issue #7), and spans a decade
B1_FESS_GRID = {"quick": (0.3, 0.17, 0.1, 0.05, 0.025), "full": (0.3, 0.17, 0.1, 0.05, 0.025, 0.0125)}
FESS_CY, FESS_CB = 2.0, 1.0  # practical eta_y = eta_x / 2, beta = eta_y K mu (spec §6.0 keeps the shape)


def _ncpl(mu_value: float) -> dict[str, Any]:
    return {"kind": "ncpl", "mu": float(mu_value)}


def kappa_of(mu_value: float) -> float:
    return constants_of(_run("fess_gda", {}, _ncpl(mu_value), 1, 1))["kappa"]


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
    return _run("sgda", params, _ncpl(mu_value), math.ceil(B1_GDA_ROUNDS_PER_KAPPA2 * k**2), DET_REPLICAS, 300)


_B1: dict[str, Any] = dict(paper=KEY, vary="kappa", measure="stat_kappa", threshold=lambda v: B1_LEVEL,
           abscissa=kappa_of, min_replicas=DET_REPLICAS, tolerance=0.15)

B1_FESS_KAPPA = HittingTimeClaim(
    id="fessgda.B1.fess_kappa",
    title="NC-PL: FESS-GDA rounds grow like kappa",
    statement="Deterministic, M = m = 1: rounds to ||grad_x f||^2 + kappa ||grad_y f||^2 <= eps^2 grow like kappa^1 "
              "(Theorem 3.1: T = O(kappa eps^-2)).",
    source=src("Theorem 3.1, Table 1", "spec §6.2 test 1"),
    configure=b1_fess_config, grid=B1_FESS_GRID,
    expected=ExpectedOrder(value=derived_rounds_exponent(0, kap),
                           why="kappa-exponent of T derived by sympy from Theorem 3.1's rate (complexity_table)"),
    side="at_most", **_B1,
)

B1_GDA_KAPPA = HittingTimeClaim(
    id="fessgda.B1.gda_kappa",
    title="NC-PL: GDA rounds grow like kappa^2 (the baseline FESS-GDA improves on)",
    statement="Same problem, simultaneous GDA with eta_x = eta_y/kappa^2: rounds grow like kappa^2.",
    source=src("Table 1 and §1.3", "Lin et al. (2020) GDA O(kappa^2 eps^-2); spec §6.2 test 1"),
    configure=b1_gda_config, grid=B1_GRID,
    expected=ExpectedOrder(value=Derived(lambda: exponent(GDA_LIN_2020_ROUNDS, kap)),
                           why="kappa-exponent of Lin et al. (2020) GDA rounds kappa^2/eps^2 (sympy)"),
    **_B1,
)

# B3: Theorem 3.1's step size eta_x = sqrt(m Delta)/(sigma sqrt(K T l)) (times a practical constant),
# noise-dominated: the averaged measure falls like (mKT)^(-1/2) (spec §6.2 test 3).
NCPL_NOISY = {"kind": "ncpl", "mu": 0.5, "noise": 1.0, "clients": 4, "x0": 0.5}
B3_MULTIPLIER = 4.0  # practical constant on the theory branch; 1/(1000 K l) is replaced by 1/(3 l)


def b3_config(rounds: float, profile: Profile) -> RunConfig:
    c = constants_of(_run("fess_gda", {}, NCPL_NOISY, 1, 1))
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
        lip = constants_of(_run("fess_gda", {}, problem, 1, 1))["l"]
        ex = 1 / (3 * lip)
        params = {**steps(ex, ex / 2, 1, ex, ex / 2), "p": 2 * lip, "beta": 0.1}
        return _run("fess_gda", params, problem, 800, DET_REPLICAS, 300)

    return configure


# Theorem 3.4 bounds the AVERAGE of the squared measure, so min_{t<T} <= average: the first round
# where the measure hits eps^2 is at most the T of the theorem, O(eps^-2). Checked: exponent <= 2.
_C1: dict[str, Any] = dict(paper=KEY, vary="1/eps", grid=C1_GRID, measure="stat_sq", threshold=lambda v: v**-2,
           min_replicas=DET_REPLICAS, side="at_most", tolerance=0.1,
           expected=ExpectedOrder(value=derived_rounds_exponent(5, eps, inverse=True),
                                  why="1/eps-exponent of T derived by sympy from Theorem 3.4's rate (complexity_table)"))

C1_PWMAX = observe(
    HittingTimeClaim(
    id="fessgda.C1.pwmax_rounds",
    title="Point-wise max: rounds to eps-stationarity of f grow at most like eps^-2",
    statement="With strict complementarity (c0 = 0.5), the rounds until ||grad_x f||^2 + l^2||P(y + grad_y f/l) - y||^2 <= eps^2 "
              "grow at most like eps^-2.",
    source=src("Theorem 3.4", "spec §6.4 test 1"),
    configure=c1_config({"kind": "pwmax", "c0": 0.5}),
    **_C1,
),
    id='fessgda.C1.pwmax_rounds',
    title='Point-wise max: rounds to eps-stationarity against 1/eps (observed against the eps^-2 cap)',
    quantity='exponent of the rounds to eps-stationarity in 1/eps (Theorem 3.4: at most 2)', compute=exponent_against_cap)

_CONTROL_REASON = ("an instance violating Assumption 3.6 (strict complementarity); the spec says to report, "
                   "not assert, its exponent. Measured on this instance: the deterministic run still converges "
                   "linearly, so the eps^-2 order survives: the assumption is sufficient, not necessary here.")
# c0 = 0 is an observation, NOT a negative control (audit of the verdicts): its hitting rounds equal C1.pwmax_rounds'
# at all five eps. Removing the margin changes the run by about 2% only (stat_sq near round 800: 1.86e-7 at c0 = 0,
# 1.82e-7 at c0 = 0.5; same at c0 = 0.05), less than the spacing of the 300 log-spaced checkpoints (about 2% of the
# round there), so the first checkpoint below each eps^2 is the same. A control that differs would need an instance
# where component 4 becomes active; none is registered.

C1_CONTROL_C0 = observe(
    HittingTimeClaim(
    id="fessgda.C1.control_c0_zero",
    title="c0 = 0 (no strict-complementarity margin), observed",
    statement="Same run with c0 = 0: Assumption 3.6 fails (nu_4 = 0); the exponent is reported. It coincides with "
              "fessgda.C1.pwmax_rounds: c0 changes the measure by about 2%, below the checkpoint spacing, so the "
              "hitting rounds are the same (an observation, not a control that differs).",
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
    title="Duplicated component h_4 = h_1, observed",
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
    return HittingTimeClaim(paper=KEY, vary="1/eps", threshold=lambda v: v**-2, min_replicas=DET_REPLICAS,
                            side="at_most", tolerance=0.1,
                            expected=ExpectedOrder(value=derived_rounds_exponent(row, eps, inverse=True),
                                                   why=f"1/eps-exponent of T derived by sympy from "
                                                       f"{complexity_theorem(row)}'s "
                                                       "rate (complexity_table)"), **fields)


def d2_config(inv_eps: float, profile: Profile) -> RunConfig:
    """FESS-GDA on f~_i = f_i - eps/(4 D(Y)) ||y - y0||^2 (problem parameter reg_eps = eps), Theorem E.1's
    shape at (l~, mu~ = eps/(2 D(Y))) with practical constants; stationarity is measured on the ORIGINAL f."""
    problem = {"kind": "tanh", "x0": 2.0, "reg_eps": 1.0 / inv_eps, "moreau": False}
    c = constants_of(_run("fess_gda", {}, problem, 1, 1))
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
@functools.cache
def floor_31() -> sp.Expr:
    """C31 N_unc at Theorem 3.1's schedule with eta_x K = h_x fixed, sigma part, eta_l -> 0."""
    return (C31 * N_UNC).subs({p: 2 * l, beta: eta_y * K * mu / 80000}).subs(eta_y, eta_x / 256).subs(
        {eta_x: hx / K, sigma_G: 0, eta_xl: 0, eta_yl: 0})


def b2_config(m_clients: int, K_steps: int, profile: Profile) -> RunConfig:
    """FESS-GDA with Theorem 3.1's shape and practical constants, eta_x K = 1/(3l) fixed, tiny local
    steps (global = effective / local, spec §2.6), m of M = 16 homogeneous clients without replacement."""
    c = constants_of(_run("fess_gda", {}, NCPL_FLOOR, 1, 1))
    ex = 1 / (3 * c["l"] * K_steps)
    ey = ex / FESS_CY
    part = "full" if int(m_clients) == int(c["M"]) else f"without_replacement:{int(m_clients)}"
    params = {**steps(ex, ey, K_steps, ETA_LOCAL, ETA_LOCAL), "p": 2 * c["l"],
              "beta": FESS_CB * ey * K_steps * c["mu"], "participation": part}
    return _run("fess_gda", params, NCPL_FLOOR, NONLINEAR_FLOOR_ROUNDS[profile.name], profile.replicas)


# B2, C2 (issue #7 audit): the cosine (ncpl) and point-wise max (pwmax, a projection onto the simplex)
# rounds are not affine-Gaussian, so exact mode refuses them and these floors stay Monte Carlo. Five
# points m (or K) = 1..16 over 1.2 decades, 16 replicas. The tail starts at HALF the run: with the old
# start 0.2 T = 300 rounds (of 1500) the deterministic transient from x0 was still 2.5e-4 (pwmax) and 4e-4
# (ncpl, m = 16), the size of the m = 16 floors (9e-5, 8e-4), and biased the slopes towards 0 (64 replicas,
# 1500 rounds: C2 -0.946 from 0.2 T, -0.995 from 0.5 T; B2 in m -0.989 / -1.009; B2 in K -0.990 / -1.000).
# Quick runs are 1000 rounds (9 + 5 distinct runs of 1000 rounds against the old 5 + 3 of 1500: about 1 s more
# CPU): from 0.5 T (the checkpoint nearest it, round 500) the noiseless tail average is 1.7e-6 (ncpl) and 3.5e-8
# (pwmax), 0.2% and 0.04% of the m = 16 floors, which moves a slope over 1.2 decades by under 0.002 (the test
# in tests/test_fessgda_theory.py pins it below 1%); 64 replicas at 1000 rounds: B2 in m -0.991, in K -0.997,
# C2 -0.993. Tolerance 0.1: the 16-replica CI half-width is about 0.05 and the systematic part left (the
# transient and the nonlinear terms of cos and the max, O(floor) relative) moved the 64-replica slopes by at most
# 0.009 from -1, so a correct floor passes with margin; the bugs these guard against (averaging over M instead
# of m: slope 0; summing the noise instead of averaging: slope 0 or +1; eta K not held fixed: slope -2 in K)
# are 1 away.
NONLINEAR_FLOOR_START = 0.5
NONLINEAR_FLOOR_ROUNDS = {"quick": 1000, "full": 2 * FLOOR_ROUNDS}


def ncpl_floor_slope(id: str, title: str, vary: str, grid: Mapping[str, tuple],
                     configure: Callable[[float, Profile], RunConfig]) -> SlopeClaim:
    return SlopeClaim(id=id, paper=KEY, title=title,
                      statement="At fixed eta_x K, eta_y K and tiny local steps, the stationary mean of "
                                "||grad_x f||^2 + kappa ||grad_y f||^2 is proportional to sigma^2/(mK) (linear speedup).",
                      source=src("Theorem 3.1, Appendix D (sigma^2 term of N_unc)", "spec §6.2 test 2, §6.7 B2"),
                      vary=vary, grid=grid, configure=configure, measure="stat_kappa",
                      summary=tail_average("stat_kappa", NONLINEAR_FLOOR_START),
                      expected=_order(floor_31, sp.Symbol(vary, positive=True, integer=True),
                                      "Theorem 3.1 explicit bound C31 N_unc at fixed eta_x K, sigma part"),
                      tolerance=0.1)


B2_FLOOR_M = ncpl_floor_slope("fessgda.B2.ncpl_floor_m", "NC-PL noise floor falls like 1/m", "m",
                              {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16)},
                              lambda v, prof: b2_config(int(v), 4, prof))
B2_FLOOR_K = ncpl_floor_slope("fessgda.B2.ncpl_floor_K", "NC-PL noise floor falls like 1/K at fixed eta K", "K",
                              {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16)},
                              lambda v, prof: b2_config(4, int(v), prof))

# ---------------------------------------------------------------------------------------------
# B4: the paper's WGAN in closed form (spec §6.3 b'), rounds against kappa = l/(2 lam)

B4_LEVEL = 1e-2  # ||grad_x f||^2 + kappa ||grad_y f||^2 <= eps^2, eps = 0.1
B4_ROUNDS_PER_KAPPA = 65.0  # run length 65 kappa (hits came at 35-50 kappa: at most 0.77 of the run); a level not reached is INCONCLUSIVE


def _wgan(lam_value: float) -> dict[str, Any]:
    return {"kind": "wgan", "lam": float(lam_value)}


def wgan_kappa(lam_value: float) -> float:
    return constants_of(_run("fess_gda", {}, _wgan(lam_value), 1, 1))["kappa"]


def b4_config(lam_value: float, profile: Profile) -> RunConfig:
    """Deterministic FESS-GDA, M = m = 1, Theorem 3.1's shape with the practical constants of B1."""
    c = constants_of(_run("fess_gda", {}, _wgan(lam_value), 1, 1))
    ex = 1 / (3 * c["l"])
    params = {**steps(ex, ex / FESS_CY, 1, ex, ex / FESS_CY), "p": 2 * c["l"], "beta": FESS_CB * ex / FESS_CY * c["mu"]}
    # the run grows like kappa (Theorem 3.1's order) with margin, so the hitting time is never capped by the run
    rounds = math.ceil(B4_ROUNDS_PER_KAPPA * c["kappa"])
    return _run("fess_gda", params, _wgan(lam_value), rounds, DET_REPLICAS, 300)


# B4 stays one-sided (audit of the verdicts asked for a two-sided band): the local slopes of the deterministic hitting
# rounds are flat across the quick grid (+0.831, +0.860, +0.840, +0.839; fit +0.844, R^2 1.0), i.e. no finite-grid
# curvature bending towards Theorem 3.1's +1, and no closed form of this instance's own exponent is at hand (the
# generator's moments are quadratic in x, so the round is not linear and exact mode refuses it). A band around +1
# would fail a correct implementation; one around +0.844 would be read off the runs it judges. What the cap can
# fail for is a GDA-like kappa^2 dependence (B1.gda_kappa measures +1.96 on NC-PL), 0.85 above the cap.
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
    expected=ExpectedOrder(value=derived_rounds_exponent(0, kap),
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
def floor_con() -> sp.Expr:
    """N_con/(eta_x K) at eta_x K = h_x, eta_y K = h_y fixed, sigma part, eta_l -> 0."""
    return (N_CON / (eta_x * K)).subs({eta_x: hx / K, eta_y: hy / K, sigma_G: 0, eta_xl: 0, eta_yl: 0})


def c2_config(m_clients: float, profile: Profile) -> RunConfig:
    c = constants_of(_run("fess_gda", {}, PWMAX_NOISY, 1, 1))
    K_steps = 4
    ex = 1 / (3 * c["l"] * K_steps)
    part = "full" if int(m_clients) == int(c["M"]) else f"without_replacement:{int(m_clients)}"
    params = {**steps(ex, ex / 2, K_steps, ETA_LOCAL, ETA_LOCAL), "p": 2 * c["l"], "beta": 0.1, "participation": part}
    return _run("fess_gda", params, PWMAX_NOISY, NONLINEAR_FLOOR_ROUNDS[profile.name], profile.replicas)


C2_FLOOR_M = SlopeClaim(
    id="fessgda.C2.pwmax_floor_m",
    paper=KEY,
    title="Point-wise max: the sigma^2/(mK) floor falls like 1/m (per-client samples to eps like 1/m)",
    statement="Stochastic FESS-GDA on form (2) at fixed eta K: the stationary mean of ||grad_x f||^2 + "
              "l^2 ||P(y + grad_y f/l) - y||^2 is proportional to 1/m, hence KT to eps^2 proportional to 1/m.",
    source=src("Theorem 3.4, Appendix H, eq. (43) (N_con)", "spec §6.4 test 2, §6.7 C2"),
    vary="m", grid={"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16)}, configure=c2_config, measure="stat_sq",
    summary=tail_average("stat_sq", NONLINEAR_FLOOR_START),
    expected=_order(floor_con, m, "per-round error N_con/(eta_x K) of the compact-Y analysis at fixed eta K, sigma part"),
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
    c = constants_of(_run("fess_gda", {}, ONEPC, 1, 1))
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
