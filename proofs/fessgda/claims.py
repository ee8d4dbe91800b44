"""FESS-GDA claims (spec §6): the theorem symbols bound at each run, the run configurations and what
each claim expects (A: PL-PL, B: NC-PL, C: point-wise max, D: NC-C and NC-1PC)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import sympy as sp

from ratecheck.claims import (
    HittingTimeClaim,
    Profile,
    RateClaim,
    SlopeClaim,
    ValueClaim,
    observe,
    tail_average,
)
from ratecheck.exact.rates import config_log_rate
from ratecheck.inspection import constants_of, problem_of, view
from ratecheck.model.fit import log_rate
from ratecheck.trace import RunConfig

from .claims_nonconvex import (
    _B1,  # noqa: F401  (re-exported)
    _C1,  # noqa: F401  (re-exported)
    _CONTROL_REASON,  # noqa: F401  (re-exported)
    B1_FESS_GRID,  # noqa: F401  (re-exported)
    B1_FESS_KAPPA,
    B1_GDA_KAPPA,
    B1_GDA_ROUNDS_PER_KAPPA2,  # noqa: F401  (re-exported)
    B1_GRID,  # noqa: F401  (re-exported)
    B1_LEVEL,  # noqa: F401  (re-exported)
    B2_FLOOR_K,
    B2_FLOOR_M,
    B3_MULTIPLIER,  # noqa: F401  (re-exported)
    B3_RATE_T,
    B4_LEVEL,  # noqa: F401  (re-exported)
    B4_ROUNDS_PER_KAPPA,  # noqa: F401  (re-exported)
    B4_WGAN_KAPPA,
    C1_CONTROL_C0,
    C1_CONTROL_DUP,
    C1_GRID,  # noqa: F401  (re-exported)
    C1_PWMAX,
    C2_FLOOR_M,
    D1_CB,  # noqa: F401  (re-exported)
    D1_NC1PC_ROUNDS,
    D1_ROUNDS_BETA,  # noqa: F401  (re-exported)
    D2_NCC_REGULARIZED,
    FESS_CB,  # noqa: F401  (re-exported)
    FESS_CY,  # noqa: F401  (re-exported)
    NCPL_FLOOR,  # noqa: F401  (re-exported)
    NCPL_NOISY,  # noqa: F401  (re-exported)
    NONLINEAR_FLOOR_ROUNDS,  # noqa: F401  (re-exported)
    NONLINEAR_FLOOR_START,  # noqa: F401  (re-exported)
    ONEPC,  # noqa: F401  (re-exported)
    PWMAX_NOISY,  # noqa: F401  (re-exported)
    _ncpl,  # noqa: F401  (re-exported)
    _wgan,  # noqa: F401  (re-exported)
    b1_fess_config,  # noqa: F401  (re-exported)
    b1_gda_config,  # noqa: F401  (re-exported)
    b2_config,  # noqa: F401  (re-exported)
    b3_config,  # noqa: F401  (re-exported)
    b4_config,  # noqa: F401  (re-exported)
    c1_config,  # noqa: F401  (re-exported)
    c2_config,  # noqa: F401  (re-exported)
    d1_config,  # noqa: F401  (re-exported)
    d2_config,  # noqa: F401  (re-exported)
    eps_rounds_claim,  # noqa: F401  (re-exported)
    floor_31,  # noqa: F401  (re-exported)
    floor_con,  # noqa: F401  (re-exported)
    kappa_of,  # noqa: F401  (re-exported)
    ncpl_floor_slope,  # noqa: F401  (re-exported)
    wgan_kappa,  # noqa: F401  (re-exported)
)
from .runs import (
    DET_REPLICAS,
    ETA_K,
    ETA_LOCAL,
    EXACT,
    EXACT_DRIFT_TOLERANCE,
    EXACT_RATIO_TOLERANCE,
    EXACT_SLOPE_TOLERANCE,
    FLOOR_ROUNDS,
    FLOOR_START_FRACTION,
    MONTE_CARLO,  # noqa: F401  (re-exported)
    RATIO_TOLERANCE,  # noqa: F401  (re-exported)
    _order,
    _run,
    bindings,
    derived_rounds_exponent,  # noqa: F401  (re-exported)
    exponent_against_cap,
    hx,
    hy,
    monte_carlo_twin,
    run_symbols,  # noqa: F401  (re-exported)
    steps,
)
from .theorems import (
    A35,
    B35,
    KEY,
    ROLE_SWAP,
    THEOREM_3_5,
    THEOREM_3_5_SWAPPED,
    W0,
    K,
    M,
    eta_x,
    eta_xl,
    eta_y,
    eta_yl,
    m,
    sigma,
    sigma_G,
    src,
)

# ---------------------------------------------------------------------------------------------
# Claims A: PL-PL on the SC-SC quadratic (spec §6.1 a1)

QUAD_DET = {"kind": "quadratic", "noise": 0.0, "zeta": 0.0, "clients": 4}


def a1_config(rounds: float, profile: Profile, problem: Mapping[str, Any] = QUAD_DET) -> RunConfig:
    """Theorem 3.5's step sizes exactly (K = 1, full participation, s = 0, sigma_G = 0)."""
    draft = _run("fsgda", {}, problem, 1, 1)
    c = constants_of(draft)
    sched = THEOREM_3_5.schedule_values({**c, "K": 1})
    cap_y = 0.9 / math.sqrt(1536) / c["l"]  # eta_yl <= 1/sqrt(1536 l^2 K^2), with margin
    # shave 1e-9 so that eta_l * (eta / eta_l) rounding cannot break the equality-type conditions
    ex, ey = sched["eta_x"] * (1 - 2e-9), sched["eta_y"] * (1 - 1e-9)
    params = {**steps(ex, ey, 1, ex, cap_y), "participation": "full"}
    return _run("fsgda", params, problem, rounds, DET_REPLICAS, mode=EXACT)


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
    fn = functools.cache(lambda: sp.lambdify(args, a))  # compiled when first used: lambdify imports scipy

    def rate(point: Any) -> float:
        values = point.evaluation.values
        return float(np.log1p(-fn()(*(values[str(v)] for v in args))))

    return rate


# A1 (issue #7): the recursion bound (1 - a)^T W0 with a ~ 1e-5 is about W0 over the run, i.e. "W_T <= W0";
# the exact contraction is much faster. So the rate is checked as a rate: the fitted log-contraction of W
# per round over [T/2, T] against the same fit on the exact recursion F^t w0 (whose limit is 2 log rho(F),
# reported too; over 4000 rounds the slowest modes of the singular (a2) instance do not dominate yet, so the
# window must be the same). The runs are deterministic, so 1% leaves room only for round-off and, for the
# sine problem started at |w| = 0.01, O(|w|^2) terms (~1e-4); the bugs this guards against (a missing global
# step, a wrong sign, K off by one) change the rate by far more. What the verdict tests is the simulator
# against the recursion of Theorem 3.5's round at the theorem's step sizes, NOT the theorem's rate: the
# guaranteed log(1 - a) is 74x (a1), 874x (a2) and 711x (a3, swapped) slower than the exact one (quick
# profile), so "no slower than the theorem" could fail only for a gross bug; it is reported as an
# observation (fessgda.A1.*.theorem_rate, the tightness factor) with no verdict (audit of the verdicts).
_A1: dict[str, Any] = dict(paper=KEY, vary="T", measure="W", theorem=THEOREM_3_5, bindings=bindings, exact=exact_log_rate("W"),
           exact_name="the exact recursion F^t w0 over the window",
           min_replicas=DET_REPLICAS, rel_tolerance=0.01, asymptotic=spectral_log_rate)
# issue #21: the exact asymptotic rate as an eigenvalue of the simulator's own (probed) moment map, held to
# the paper's 2 log rho(F) at round-off (1e-8); not on (a2): its saddle SET gives the moment map modes
# 1 x lambda that W does not see, which a radius over all of {S_cc = 0} would report
SPECTRAL: dict[str, Any] = dict(spectral=config_log_rate)
A1_CHECKPOINTS = 200  # dense enough for a linear-axis fit over [T/2, T]

A1_LINEAR = RateClaim(
    id="fessgda.A1.linear_rate",
    title="PL-PL at Theorem 3.5's step sizes: the simulated W_t contracts at the exact rate of the round's recursion",
    statement="At Theorem 3.5's step sizes (K = 1, s = 0, sigma = sigma_G = 0) the round is linear, s_{t+1} = F s_t: the "
              "simulated W contracts per round at the log-slope of F^t w0 over the same window (within 1%). This checks "
              "the simulator against the exact recursion; Theorem 3.5's guaranteed 1 - eta_x K mu1/16 is far slower and "
              "is reported as an observation (fessgda.A1.linear_rate.theorem_rate), not tested.",
    source=src("Theorem 3.5, Appendix I", "spec §6.1 test 1"),
    grid={"quick": (4000,), "full": (16000,)},
    configure=lambda v, prof: a1_config(v, prof).with_(checkpoints=A1_CHECKPOINTS),
    **_A1, **SPECTRAL,
)

QUAD_PL_DET = {"kind": "quadratic_pl", "noise": 0.0, "zeta": 0.0, "clients": 4}

A1_LINEAR_PL = RateClaim(
    id="fessgda.A1.linear_rate_pl",
    title="PL-PL, not strongly convex in x, at Theorem 3.5's step sizes: the simulated W_t contracts at the exact "
          "rate of the round's recursion",
    statement="Same check on the (a2) quadratic with A = U'U singular (two-sided PL, saddle SET null(U) x {0}): the "
              "simulator against F^t w0; Theorem 3.5's rate is an observation (fessgda.A1.linear_rate_pl.theorem_rate).",
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
    lip = constants_of(_run("fess_gda", {}, QUAD_DET, 1, 1))["l"]
    ex = 1 / (20 * lip)
    params = {**steps(ex, ex, 2, ex / 2, ex / 2), "p": 2 * lip, "beta": A6_SMOOTHING, "participation": "full"}
    return _run("fess_gda", params, QUAD_DET, rounds, DET_REPLICAS, A1_CHECKPOINTS, mode=EXACT)


A6_SMOOTHED_RATE = RateClaim(
    id="fessgda.A6.smoothed_round_rate",
    paper=KEY,
    title="FESS-GDA with smoothing (p = 2l, K = 2): W_t contracts at the exact rate of Algorithm 1's round",
    statement="Algorithm 1 lines 5-15 are linear in (x, y, z) on the quadratic: W contracts at the log-slope of "
              "the exact recursion (server smoothing eta_xl eta_xg K p (x_t - z_t), z_{t+1} = z_t + beta (x_{t+1} - z_t)).",
    source=src("Algorithm 1, lines 13-15", "spec §2.1, pitfalls P1, P3"),
    vary="T", grid={"quick": (400,), "full": (800,)}, configure=a6_config, measure="W",
    exact=exact_log_rate("W"), exact_name="the exact recursion F^t s0 of Algorithm 1 over the window",
    asymptotic=spectral_log_rate, min_replicas=DET_REPLICAS, rel_tolerance=0.01, **SPECTRAL,
)

# (a3): mu1 < mu2, so Theorem 3.5's own branch condition fails (INCONCLUSIVE); with the role swap of
# spec §2.4(C) (algorithm fess_gda_swapped, p = 0) the theorem applies to W' = (Phi* - Psi0) + (f - Psi0)
# started near the saddle (x0 = y0 = 0.01) so that the round is linear from the first round on and the
# exact rate of the linearized recursion applies (issue #7: a rate checked as a rate)
NCNC_DET = {"kind": "ncnc_pl", "noise": 0.0, "zeta": 0.0, "clients": 1, "x0": 0.01, "y0": 0.01}


def a1_swapped_config(rounds: float, profile: Profile) -> RunConfig:
    """The swapped recipe exactly: eta_x = 1/(4lK), eta_y = eta_x mu1^2/(64 l^2), K = 1, s = 0."""
    c = constants_of(_run("fess_gda_swapped", {}, NCNC_DET, 1, 1))
    sched = THEOREM_3_5_SWAPPED.schedule_values({**c, "K": 1})
    cap_x = 0.9 / math.sqrt(1536) / c["l"]  # eta_xl <= 1/sqrt(1536 l^2 K^2) (swapped), with margin
    ex, ey = sched["eta_x"] * (1 - 1e-9), sched["eta_y"] * (1 - 2e-9)
    params = {**steps(ex, ey, 1, cap_x, ey), "p": 0.0, "participation": "full"}
    return _run("fess_gda_swapped", params, NCNC_DET, rounds, DET_REPLICAS)


A1_LINEAR_SWAPPED = RateClaim(
    id="fessgda.A1.linear_rate_ncnc_swapped",
    paper=KEY,
    title="PL-PL, nonconvex-nonconcave (mu1 < mu2), at the swapped Theorem 3.5's step sizes: the simulated W'_t "
          "contracts at the exact rate of the linearized round",
    statement="On x^2 + 3 sin^2 x sin^2 y - 4y^2 - 10 sin^2 y with the step sizes of Theorem 3.5 applied to -f(y, x) "
              "(spec §2.4(C)), started near the saddle where the round is linear: the simulated W' contracts at the "
              "log-slope of the linearized recursion F^t w0 (within 1%). The theorem's (1 - eta_y K mu2/16) is far "
              "slower and is an observation (fessgda.A1.linear_rate_ncnc_swapped.theorem_rate), not tested.",
    source=src("Theorem 3.5, Appendix I, case mu1 < mu2", "spec §2.4(C), §6.1 (a3)"),
    vary="T", grid={"quick": (2000,), "full": (8000,)},
    configure=lambda v, prof: a1_swapped_config(v, prof).with_(checkpoints=A1_CHECKPOINTS),
    measure="W_swap", theorem=THEOREM_3_5_SWAPPED, bindings=bindings, min_replicas=DET_REPLICAS,
    exact=exact_log_rate("W_swap"), exact_name="the linearized recursion F^t w0 over the window",
    rel_tolerance=0.01, asymptotic=spectral_log_rate,
)


def theorem_rate_tightness(points, evidence) -> dict[str, float]:
    """The measured log-contraction per round, the exact recursion's, the theorem's guaranteed log(1 - a)
    and how many times slower the guarantee is (at the last grid point)."""
    rows = evidence.get("rows") or []
    if not rows:
        return {}
    row = rows[-1]
    out = {"measured": row["rate"], "exact recursion": row["exact"], "theorem's log(1-a)": row["guaranteed"],
           "theorem slower by": row["tightness"]}
    if "spectral" in row:  # issue #21: against the exact asymptotic rate (an eigenvalue of the moment map)
        out.update({"exact log rho (eigenvalue)": row["spectral"], "theorem slower than it by": row["spectral_tightness"]})
    return out


def theorem_rate(claim: RateClaim, guaranteed: Callable[[Any], float], name: str) -> Any:
    """Theorem 3.5's guaranteed rate on the runs of an A1 claim, as an observation (no verdict)."""
    return observe(dataclasses.replace(claim, guaranteed=guaranteed, guaranteed_name=name),
                   id=f"{claim.id}.theorem_rate", title=f"{name} against the exact contraction on {claim.id}'s runs (observed)",
                   quantity=f"{name} next to the measured and exact log-contraction per round", compute=theorem_rate_tightness)


A1_THEOREM_RATE = theorem_rate(A1_LINEAR, theorem_log_rate(), "Theorem 3.5's log(1-a)")
A1_THEOREM_RATE_PL = theorem_rate(A1_LINEAR_PL, theorem_log_rate(), "Theorem 3.5's log(1-a)")
A1_THEOREM_RATE_SWAPPED = theorem_rate(A1_LINEAR_SWAPPED, theorem_log_rate(True), "Theorem 3.5's log(1-a) (swapped)")

QUAD_NOISY = {"kind": "quadratic", "noise": 1.0, "zeta": 0.0, "clients": 16}
QUAD_HET = {"kind": "quadratic", "noise": 0.0, "zeta": 1.0, "clients": 16}


def floor_config(problem: Mapping[str, Any], m_clients: float, K_steps: int, profile: Profile) -> RunConfig:
    draft = _run("fsgda", {}, problem, 1, 1)
    lip = constants_of(draft)["l"]
    M_total = int(problem["clients"])
    part = "full" if int(m_clients) == M_total else f"without_replacement:{int(m_clients)}"
    params = {**steps(ETA_K / lip / K_steps, ETA_K / lip / K_steps, K_steps, ETA_LOCAL, ETA_LOCAL), "participation": part}
    return _run("fsgda", params, problem, FLOOR_ROUNDS * (2 if profile.name == "full" else 1), profile.replicas,
                mode=EXACT)


def lyapunov_floor(config: RunConfig) -> float:
    """Exact E W_infinity of the run (ratecheck.problems.minimax.MinimaxQuadratic.stationary_potential)."""
    q = config.params
    return problem_of(config).stationary_potential(
        eta_x_local=q["eta_x_local"], eta_y_local=q["eta_y_local"], eta_x_global=q["eta_x_global"],
        eta_y_global=q["eta_y_global"], local_steps=q["local_steps"], m=view(config).participating)


# Expected floor exponents from Theorem 3.5's steady state b/a at FIXED eta_x K, eta_y K (sympy). The
# floors are functions (built once, when a check first needs them): substituting into the theorems'
# expressions is a good part of a second, which `ratecheck list` should not pay.


@functools.cache
def floor_fixed_etak() -> sp.Expr:
    """Theorem 3.5's b/a with eta_x = h_x/K, eta_y = h_y/K."""
    return (B35 / A35).subs({eta_x: hx / K, eta_y: hy / K})


@functools.cache
def floor_noise() -> sp.Expr:
    """The sigma part of floor_fixed_etak() (sigma_G = 0, eta_l -> 0)."""
    return floor_fixed_etak().subs({sigma_G: 0, eta_xl: 0, eta_yl: 0})


@functools.cache
def floor_het() -> sp.Expr:
    """The heterogeneity part of floor_fixed_etak() (sigma = 0, eta_l -> 0)."""
    return floor_fixed_etak().subs({sigma: 0, eta_xl: 0, eta_yl: 0})


M_GRID = {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16)}
K_GRID = {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16, 32)}


def floor_slope(id: str, title: str, statement: str, test: str, vary: str, grid: Mapping[str, tuple],
                configure: Callable[[float, Profile], RunConfig], floor: Callable[[], sp.Expr],
                why: str) -> SlopeClaim:
    """Slope of the stationary E W (tail mean) against m or K, expected from Theorem 3.5's b/a."""
    return SlopeClaim(id=id, paper=KEY, title=title, statement=statement,
                      source=src("Theorem 3.5, Appendix I (b/a)", f"spec §6.1 test {test}"), vary=vary, grid=grid,
                      configure=configure, measure="W", summary=tail_average("W", FLOOR_START_FRACTION),
                      expected=_order(floor, sp.Symbol(vary, positive=True, integer=True), why),
                      tolerance=EXACT_SLOPE_TOLERANCE)


def floor_ratio(id: str, title: str, statement: str, note: str, grid: Mapping[str, tuple],
                configure: Callable[[float, Profile], RunConfig]) -> ValueClaim:
    """Stationary E W (tail mean) against the exact Lyapunov value of the same run."""
    return ValueClaim(id=id, paper=KEY, title=title, statement=statement, source=src("Appendix I", note),
                      vary="m", grid=grid, configure=configure, measure="W",
                      summary=tail_average("W", FLOOR_START_FRACTION), predict=lyapunov_floor,
                      prediction="exact Lyapunov E W", rel_tolerance=EXACT_RATIO_TOLERANCE)


_NOISE_WHY = "Theorem 3.5 floor b/a at fixed eta K, sigma part, eta_l -> 0"

A2_FLOOR_M = floor_slope(
    "fessgda.A2.floor_m", "PL-PL noise floor falls like 1/m",
    "At fixed eta_x K, eta_y K the stationary E W (sigma_G = 0) is proportional to 1/(mK): slope -1 in m.",
    "2", "m", M_GRID, lambda v, prof: floor_config(QUAD_NOISY, v, 4, prof), floor_noise, _NOISE_WHY)

A2_FLOOR_K = floor_slope(
    "fessgda.A2.floor_K", "PL-PL noise floor falls like 1/K at fixed eta K",
    "Linear speedup in the local steps: stationary E W proportional to 1/K at fixed eta_x K, eta_y K.",
    "2", "K", K_GRID, lambda v, prof: floor_config(QUAD_NOISY, 4, int(v), prof), floor_noise, _NOISE_WHY)

A2_LYAPUNOV = floor_ratio(
    "fessgda.A2.lyapunov_m", "PL-PL noise floor equals the exact Lyapunov value",
    "The stationary E W of FSGDA equals 1/2 tr(Q Sigma), Sigma from the discrete Lyapunov equation.",
    "spec §6.1 'exact floor prediction'", M_GRID, A2_FLOOR_M.configure)

A3_FLOOR_K = floor_slope(
    "fessgda.A3.partial_floor_K", "Partial participation floor does not shrink with K",
    "s = 0, sigma_G > 0, m < M: the stationary E W is independent of K at fixed eta K (no benefit from local steps).",
    "3", "K", {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16)},
    lambda v, prof: floor_config(QUAD_HET, 4, int(v), prof), floor_het,
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
def floor_drift() -> sp.Expr:
    """The drift part of floor_fixed_etak() (sigma = 0, m = M), eta_xl = eta_yl = u_l/K."""
    return floor_fixed_etak().subs({sigma: 0, M: m}).subs({eta_xl: u_l / K, eta_yl: u_l / K})


def a5_config(local_times_k: float, profile: Profile) -> RunConfig:
    lip = constants_of(_run("fsgda", {}, QUAD_DRIFT, 1, 1))["l"]
    K_steps = 4
    el = local_times_k / K_steps
    params = {**steps(ETA_K / lip / K_steps, ETA_K / lip / K_steps, K_steps, el, el), "participation": "full"}
    return _run("fsgda", params, QUAD_DRIFT, 600, DET_REPLICAS, mode=EXACT)


A5_DRIFT = SlopeClaim(
    id="fessgda.A5.drift_bias",
    paper=KEY,
    title="Client drift bias grows like (eta_l K)^2",
    statement="Non-identical client Hessians, s = 0, full participation: at fixed eta K the limit's potential W "
              "grows like (eta_l K)^2, which is why every theorem caps the local steps.",
    source=src("Theorem 3.5, Appendix I (drift term of b/a), Lemma B.4", "spec §6.1 test 5"),
    vary="eta_l K", grid={"quick": (0.005, 0.01, 0.02, 0.04, 0.08), "full": (0.0025, 0.005, 0.01, 0.02, 0.04, 0.08)},
    configure=a5_config, measure="W", min_replicas=DET_REPLICAS,
    expected=_order(floor_drift, u_l, "Theorem 3.5 floor b/a, drift part, eta_xl = eta_yl = u/K at fixed eta K"),
    tolerance=EXACT_DRIFT_TOLERANCE,
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

def rounds_per_log(points, evidence) -> dict[str, float]:
    """exponent_against_cap, and the rounds as an affine function of L = log(1/eps) (linear-axis fit of the
    replica-mean hitting rounds): the form Theorem 3.5's recursion gives, T = (log(W0/(1-f)) + 2L)/a."""
    out = exponent_against_cap(points, evidence)
    hits = [(math.log(p.value), float(np.mean(p.samples))) for p in points if p.samples.size]
    if len(hits) >= 2:
        xs, ys = np.array(hits).T
        slope, intercept = np.polyfit(xs, ys, 1)
        out["rounds per unit log(1/eps)"] = float(slope)
        out["intercept (rounds at log(1/eps) = 0)"] = float(intercept)
    return out


# A4's log-log exponent is not an order: log(1/eps) spans 0.2 decades (2.3 to 3.7), and T is affine in L = log(1/eps),
# so its log-log slope over such a range is 2L/(c + 2L) and exceeds 1 when the intercept c is negative, which it is
# here (quick profile: about 49 rounds per unit L, intercept about -13 rounds). A negative intercept means the deeper
# levels take more rounds per unit L than the first; that the slower modes of the exact multi-mode decay take over
# at the deeper levels is our reading, not checked here. The exceedance of "at most 1" is this log-log artefact, not
# a violation of the O(log(1/eps)) order: the affine form (rounds per unit log(1/eps)) is what the observation reports.
A4_LOG_ROUNDS = observe(
    HittingTimeClaim(
    id="fessgda.A4.log_rounds",
    paper=KEY,
    title="PL-PL communication complexity O(log(1/eps))",
    statement="With K proportional to 1/(m eps^2) the rounds to reach E W <= eps^2 grow no faster than log(1/eps).",
    source=src("Theorem 3.5, Table 2", "spec §6.1 test 4"),
    vary="log(1/eps)", grid={"quick": (10, 20, 40), "full": (10, 20, 40, 80)},
    configure=a4_config, measure="W", threshold=lambda v: v**-2, abscissa=math.log,
    expected=_order(lambda: ROUNDS_35, L_EPS, "rounds solving (1-a)^T W0 = eps^2 (Theorem 3.5 recursion)"),
    side="at_most", tolerance=0.15,
),
    id='fessgda.A4.log_rounds',
    title='PL-PL: rounds to E W <= eps^2 against log(1/eps) with K ∝ 1/(m eps^2) (observed)',
    quantity='rounds to eps^2 against log(1/eps) (Theorem 3.5: at most linear in log(1/eps)); the log-log exponent over '
             '0.2 decades is not an order (T is affine in log(1/eps): see the intercept), the rounds per unit log(1/eps) are',
    compute=rounds_per_log)


# Monte-Carlo twins of the noise-floor claims (drawn in the full profile)
A2_FLOOR_M_MC, A2_FLOOR_K_MC, A2_LYAPUNOV_MC, A3_FLOOR_K_MC, A3_LYAPUNOV_MC = (
    monte_carlo_twin(c) for c in (A2_FLOOR_M, A2_FLOOR_K, A2_LYAPUNOV, A3_FLOOR_K, A3_LYAPUNOV))

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
    A1_THEOREM_RATE,
    A1_THEOREM_RATE_PL,
    A1_THEOREM_RATE_SWAPPED,
    A2_FLOOR_M_MC,
    A2_FLOOR_K_MC,
    A2_LYAPUNOV_MC,
    A3_FLOOR_K_MC,
    A3_LYAPUNOV_MC,
)


