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

from ratecheck.assumptions import pl, two_sided_pl
from ratecheck.binding import Binder
from ratecheck.claims import (
    ExpectedOrder,
    HittingTimeClaim,
    Profile,
    RateClaim,
    SlopeClaim,
    ValueClaim,
    observe,
    tail_average,
)
from ratecheck.claims import monte_carlo_twin as shared_monte_carlo_twin
from ratecheck.exact.rates import config_log_rate
from ratecheck.fit import log_rate
from ratecheck.inspection import RunView, constants_of, problem_of, view
from ratecheck.theory import Derived, exponent
from ratecheck.trace import RunConfig, Trace

from .theorems import (
    A35,
    B35,
    C31,
    GDA_LIN_2020_ROUNDS,
    KEY,
    N_CON,
    N_UNC,
    ROLE_SWAP,
    THEOREM_3_1,
    THEOREM_3_5,
    THEOREM_3_5_SWAPPED,
    W0,
    K,
    M,
    beta,
    complexity_table,
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
    sigma,
    sigma_G,
    src,
)

# ---------------------------------------------------------------------------------------------
# Binding runs to theorem symbols


def run_symbols(run: RunView, trace: Trace | None, bound: Mapping[str, float]) -> dict[str, float]:
    """The PL flags (1 where the family certifies PL, see pl_y, pl_xy) and the run's effective step sizes."""
    q = run.config.params
    return dict(PL_y=1.0 if bindings.certifies(run, pl("mu")) else 0.0,
                PL_xy=1.0 if bindings.certifies(run, two_sided_pl("mu1", "mu2")) else 0.0,
                M=run.constants["M"], m=float(run.participating), K=float(q["local_steps"]), T=float(run.rounds),
                eta_x=q["eta_x_local"] * q["eta_x_global"], eta_y=q["eta_y_local"] * q["eta_y_global"],
                eta_xl=q["eta_x_local"], eta_yl=q["eta_y_local"], beta=q.get("beta", 0.5), p=q.get("p", 0.0))


# Theorem symbols at a run: the constants the family certifies (ratecheck.assumptions), NaN for those of an
# assumption it does not certify (the theorems' PL flags then fail their conditions), and the run's steps
bindings = Binder(THEOREM_3_1, THEOREM_3_5, THEOREM_3_5_SWAPPED, uncertified="nan", derived=run_symbols)


def _run(algorithm: str, params: Mapping[str, Any], problem: Mapping[str, Any], rounds: float,
         replicas: int, checkpoints: int = 24, mode: str = "monte_carlo") -> RunConfig:
    return RunConfig(algorithm, dict(params), "minimax", dict(problem), rounds=int(rounds), replicas=replicas,
                     checkpoints=checkpoints, mode=mode)


# Run modes (issue #8). On the quadratic kinds (a1, a2) every FSGDA / FESS-GDA round is an affine map of
# (x, y, z) and the Gaussian noise given the clients drawn, so ``mode="exact"`` computes the expectations
# exactly, client sampling without replacement averaged over its outcomes (ratecheck/exact.py). The A
# claims run exact in every profile; the noise-floor claims keep Monte-Carlo twins (``<id>.monte_carlo``,
# the old noise tolerances) that draw 16 replicas in the full profile and read the exact runs in the quick
# one (same runs, no extra cost). The B, C and D kinds (cosines, tanh, point-wise max, projections that
# bind) are not linear-Gaussian and stay Monte Carlo.
EXACT, MONTE_CARLO = "exact", "monte_carlo"
# Tolerances on exact values. Exact numbers carry no noise, only the theory's finite-grid terms:
# * floors' slopes in m and K: at eta_l = 1e-3 the Lyapunov floor is one power law up to O(eta_l K)
#   relative terms (at most 0.016 on the K grid), so 0.02 (exact slopes measured within 0.004);
# * the drift slope (eta_l K)^2 has (eta_l K)^3 corrections of relative size up to eta_l K l ~ 0.08 at the
#   top of the grid, bending the curve by about 0.01: 0.05 (half the old band);
# * the stationary E W against the exact Lyapunov value: the tail average starts at 0.2 T = 300 rounds,
#   where the transient is below 1e-12 relative (the ratios are 1 to 1e-12), so 1e-6 holds rounding with
#   a wide margin and any wrong factor (2 or more, RATIO_TOLERANCE's comment) fails by orders of magnitude.
# The Monte-Carlo twins keep the old noise tolerances (0.1).
EXACT_SLOPE_TOLERANCE, EXACT_DRIFT_TOLERANCE, EXACT_RATIO_TOLERANCE = 0.02, 0.05, 1e-6


def monte_carlo_twin(claim: Any) -> Any:
    """The shared Monte-Carlo twin (ratecheck.claims) with the old noise tolerances."""
    loose: dict[str, Any] = {"rel_tolerance": RATIO_TOLERANCE} if isinstance(claim, ValueClaim) else {"tolerance": 0.1}
    return shared_monte_carlo_twin(claim, **loose)


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
ETA_K = 0.2  # practical eta_x K = eta_y K = 0.2 / l (spec §6.1 'verified' setting)
ETA_LOCAL = 1e-3  # theory regime: tiny local steps, large global steps (spec §2.6)
# Ratio tolerance 10%: with 16 replicas and 1200-round tails the ratio's standard error is about 1.1%
# (checked on 3 x 64 replicas: ratios 0.992-1.011), so a correct floor passes unless it is ~7 SE
# off, while the errors this guards against (sigma^2 vs s^2, dividing by M instead of m, the paper's
# 4(M-m)/(mM) instead of (M-m)/(m(M-1))) are factors of 2 or more.
RATIO_TOLERANCE = 0.1  # ValueClaim's relative band
FLOOR_ROUNDS, FLOOR_START_FRACTION = 1500, 0.2  # tail average over rounds [0.2 T, T)


def floor_config(problem: Mapping[str, Any], m_clients: float, K_steps: int, profile: Profile) -> RunConfig:
    draft = _run("fsgda", {}, problem, 1, 1)
    lip = constants_of(draft)["l"]
    M_total = int(problem["clients"])
    part = "full" if int(m_clients) == M_total else f"without_replacement:{int(m_clients)}"
    params = {**steps(ETA_K / lip / K_steps, ETA_K / lip / K_steps, K_steps, ETA_LOCAL, ETA_LOCAL), "participation": part}
    return _run("fsgda", params, problem, FLOOR_ROUNDS * (2 if profile.name == "full" else 1), profile.replicas,
                mode=EXACT)


def lyapunov_floor(config: RunConfig) -> float:
    """Exact E W_infinity of the run (problems.minimax.MinimaxQuadratic.stationary_potential)."""
    q = config.params
    return problem_of(config).stationary_potential(
        eta_x_local=q["eta_x_local"], eta_y_local=q["eta_y_local"], eta_x_global=q["eta_x_global"],
        eta_y_global=q["eta_y_global"], local_steps=q["local_steps"], m=view(config).participating)


# Expected floor exponents from Theorem 3.5's steady state b/a at FIXED eta_x K, eta_y K (sympy). The
# floors are functions (built once, when a check first needs them): substituting into the theorems'
# expressions is a good part of a second, which `ratecheck list` should not pay.
hx, hy = sp.symbols("h_x h_y", positive=True)


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


def _order(expr: Callable[[], sp.Expr], var: sp.Symbol, why: str) -> ExpectedOrder:
    """The exponent in ``var`` of the expression ``expr()`` builds, derived when first checked."""
    return ExpectedOrder(value=Derived(lambda: exponent(expr(), var)), why=f"{why} (sympy elasticity in {var})")


def derived_rounds_exponent(row: int, var: sp.Symbol, *, inverse: bool = False) -> Derived:
    """Exponent in ``var`` (in 1/var with ``inverse``) of the rounds T that sympy derives for
    complexity_table()[row], derived when a check first needs it."""
    return Derived(lambda: exponent(complexity_table()[row]["derived"][1], var, inverse=inverse))


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


