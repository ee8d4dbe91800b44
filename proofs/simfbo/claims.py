"""SimFBO / ShroFBO claims (spec §6.4 tests T1-T8, §7.2 baselines): the theorem symbols bound at each
run, the run configurations and what each claim expects."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ratecheck.claims import (
    BoundClaim,
    ExpectedOrder,
    LimitClaim,
    Observation,
    Profile,
    SlopeClaim,
    ThresholdClaim,
    final_value,
    negative_control,
    observe,
)
from ratecheck.theory import Derived
from ratecheck.trace import RunConfig, Trace

from .presets import p1
from .runs import (
    AUTO,
    C_ETA,  # noqa: F401  (re-exported)
    C_GAMMA,  # noqa: F401  (re-exported)
    C_X,  # noqa: F401  (re-exported)
    C_X_T5,  # noqa: F401  (re-exported)
    DET_REPLICAS,
    ETA_GRID,
    EXACT,
    EXACT_TOLERANCE,
    EXACT_TOLERANCE_ONE_TERM,
    MC_TOLERANCE,  # noqa: F401  (re-exported)
    MONTE_CARLO,
    P1_HET,  # noqa: F401  (re-exported)
    P1_NOISY,  # noqa: F401  (re-exported)
    P1_T6,  # noqa: F401  (re-exported)
    P2_T7,  # noqa: F401  (re-exported)
    P_GRID,
    RESIDUAL_ETA_GRID,
    T3_GRID,
    T4_GRID,
    T4_N,
    T5_GRID,
    T5A_GRID,
    T5A_ROUNDS,  # noqa: F401  (re-exported)
    T5B_ROUNDS,  # noqa: F401  (re-exported)
    T6_TAU,
    T7_GRID,
    T_GRID,
    _macro_functions,  # noqa: F401  (re-exported)
    _scaled,  # noqa: F401  (re-exported)
    bindings,
    fpc_normalized,
    implicit_constants,  # noqa: F401  (re-exported)
    macro_values,  # noqa: F401  (re-exported)
    monte_carlo_twin,
    scheduled,  # noqa: F401  (re-exported)
    t1_config,
    t1b_config,
    t2_config,
    t3_config,
    t4_config,
    t5a_config,
    t5b_config,
    t6_config,
    t7_theory_config,
    t8_config,
    theory_steps,  # noqa: F401  (re-exported)
    x_star,
    x_tilde_star,
)
from .theorems import (
    KEY,
    THEOREM_1,
    THEOREM_1_GROWING_TAU,
    THEOREM_2,
    src,
)

# --------------------------------------------------------------------------------------------
# Claims (spec §6.4)

_AVG: dict[str, Any] = dict(paper=KEY, measure="avg:grad_norm_sq")

T1_SPEEDUP = SlopeClaim(
    id="simfbo.T1.speedup_P",
    title="Linear speedup in P = n (full participation)",
    statement="With gamma_x ∝ sqrt(P/(tau T)), (1/T) sum ||grad Phi||^2 falls like P^(-1/2).",
    source=src("Theorem 1, eq. (9); §D.6 'linear speedup'"),
    vary="P", grid=P_GRID, configure=t1_config,
    expected=ExpectedOrder(THEOREM_1, "P", "full_participation", dominant_in="T"),
    tolerance=EXACT_TOLERANCE, **_AVG)

T1B_NOISE_FLOOR = SlopeClaim(
    id="simfbo.T1b.noise_floor_P",
    title="Variance mechanism: noise floor ∝ 1/P at a fixed step",
    statement="Started at the solution with a step independent of P, the floor gamma sigma^2/P falls like P^-1.",
    source=src("eq. (49) (full-synchronization term) at fixed steps", "spec §6.4 T1b"),
    vary="P", grid=P_GRID, configure=t1b_config,
    expected=ExpectedOrder(value=Derived(lambda: THEOREM_1.order("P", version="sync_term", use_schedule=False)),
                           why="order in P of the eq. (49) term at fixed step sizes (sympy, THEOREM_1.order)"),
    tolerance=EXACT_TOLERANCE_ONE_TERM, **_AVG)

T2_RATE = SlopeClaim(
    id="simfbo.T2.rate_T",
    title="Rate in T: T^(-1/2) with the Theorem 1 schedule",
    statement="With step sizes re-tuned per T, (1/T) sum ||grad Phi||^2 falls like T^(-1/2).",
    source=src("Theorem 1, eq. (9)"),
    vary="T", grid=T_GRID, configure=t2_config,
    expected=ExpectedOrder(THEOREM_1, "T", "full_participation"),
    tolerance=EXACT_TOLERANCE, **_AVG)

T3_COMM = SlopeClaim(
    id="simfbo.T3.growing_tau_rate_T",
    title="eps^-1 communication: slope -1 in T when tau grows like T (full participation)",
    statement="With tau_bar = Theta(T/n) the bound is O(1/T), so T = O(eps^-1) rounds (§D.6, Table 1).",
    source=src("Theorem 1 and §D.6; Table 1"),
    vary="T", grid=T3_GRID, configure=t3_config,
    expected=ExpectedOrder(THEOREM_1_GROWING_TAU, "T", "full_participation"),
    tolerance=EXACT_TOLERANCE, **_AVG)

T4_FPC = SlopeClaim(
    id="simfbo.T4.fpc_without_replacement",
    title="Finite-population factor: G (n-1)/(n-P) ∝ P^(-1/2) under sampling without replacement",
    statement="Noise-free, started at the solution: G ∝ ((n-P)/(n-1)) sqrt(tau/(PT)) (Lemma 9, eq. (47)).",
    source=src("Lemma 9, eq. (24); eq. (47)"),
    vary="P", grid=T4_GRID, configure=t4_config, summary=fpc_normalized,
    expected=ExpectedOrder(THEOREM_1, "P", "partial_term_per_fpc"),
    tolerance=EXACT_TOLERANCE, **_AVG)

T4_WR = negative_control(
    T4_FPC,
    id="simfbo.T4.fpc_with_replacement",
    title="Negative control: with-replacement sampling has no finite-population factor",
    statement="The same normalization G (n-1)/(n-P) for the naive with-replacement sampler.",
    source=src("Lemma 9 (which needs sampling without replacement)", "spec §6.4 T4"),
    configure=lambda v, prof: t4_config(v, prof, "with_replacement"),
    expect_reason="with replacement G ∝ P^(-1/2) without the (n-P)/(n-1) drop, so G (n-1)/(n-P) rises near P = n: "
                  "a property of the sampler, not an error of the paper",
    # the control's curve is expected NOT to be the P^-1/2 law: a bend is what it shows, not a regime to wait for
    r2_floor=0.0, max_curvature=math.inf)

T4_ZERO = ThresholdClaim(
    id="simfbo.T4.zero_at_full",
    title="At P = n the sampling term is exactly 0 (without replacement)",
    statement="Lemma 9's factor (n-P)/(n-1) vanishes: noise-free at the solution, G = 0 to machine precision.",
    source=src("Lemma 9, eq. (24)"),
    vary="P", grid={"quick": (T4_N,), "full": (T4_N,)}, configure=lambda v, prof: t4_config(v, prof, mode=MONTE_CARLO),
    threshold=1e-20, **_AVG)

T4_ZERO_WR = negative_control(
    T4_ZERO,
    id="simfbo.T4.zero_at_full_with_replacement",
    title="Negative control: with replacement, P = n draws still move the iterate",
    statement="The same threshold for the with-replacement sampler.",
    source=src("Lemma 9", "spec §6.4 T4"),
    configure=lambda v, prof: t4_config(v, prof, "with_replacement", mode=MONTE_CARLO),
    expect_reason="n draws with replacement repeat clients, so the aggregate is random even at P = n")

T5A_TAU_HURTS = SlopeClaim(
    id="simfbo.T5a.tau_partial",
    title="Local steps hurt under partial participation: slope +1/2 in tau",
    statement="The partial-participation term grows like sqrt(tau_bar) (eq. (9)).",
    source=src("Theorem 1, eq. (9); §D.6"),
    vary="tau", grid=T5A_GRID, configure=t5a_config,
    expected=ExpectedOrder(THEOREM_1, "tau_bar", "partial_term"),
    tolerance=EXACT_TOLERANCE, **_AVG)

# T5b's band. The bound's tau terms under the schedule are tau^(-1/2) (init and sync terms) and tau^(-1)
# (drift), so its slope is -1/2 or steeper: the cap. The exact curve instead sits slightly ABOVE -1/2, not
# by grid curvature toward -1/2 (its local slopes -0.4936, -0.4938, -0.4933, -0.4917 over tau = 1..10 move by
# 0.002, away from -1/2) but by the O(gamma_x) finite-step correction the bound drops, which grows with the
# effective step rho_bar gamma_x ∝ sqrt(tau/T): measured, the fitted slope is -0.4931 at T = 1000, -0.4965 at
# 4000, -0.4983 at 16000 (the excess halves per 4x in T, like gamma_x ∝ T^(-1/2): the asymptotic -1/2 is
# reached as T grows). 0.02 holds that 0.007 excess with a 3x margin (plus the 0.002 bend) and is tighter
# than the shared 0.05; a missing tau factor (slope off by 1/4 or more) fails it. Quick keeps T = 1000 (at
# 16000 the five exact runs cost 4.3 s instead of 1.0 s).
T5B_TOLERANCE = 0.02

T5B_TAU_HELPS = SlopeClaim(
    id="simfbo.T5b.tau_full",
    title="Local steps help under full participation (slope at most -1/2 in tau, up to the O(gamma_x) finite-T "
          "excess: +0.02)",
    statement="Full participation with noise: the bound falls like tau^(-1/2) (M_2 term) or faster (M_3 term).",
    source=src("Theorem 1, eq. (9); §D.6"),
    vary="tau", grid=T5_GRID, configure=t5b_config,
    expected=ExpectedOrder(THEOREM_1, "tau_bar", "full_participation", dominant_in="T"),
    tolerance=T5B_TOLERANCE, side="at_most", **_AVG)

_T6: dict[str, Any] = dict(paper=KEY, vary="eta", grid=ETA_GRID, source=src("Theorems 1-2; §1.5 eq. (6)"), tolerance=0.01,
           min_replicas=DET_REPLICAS)

T6_SIMFBO_TILDE = LimitClaim(
    id="simfbo.T6.simfbo_to_x_tilde",
    title="SimFBO converges to the stationary point of the reweighted objective",
    statement="Under uneven tau_i, SimFBO reaches x-tilde* (weights w_i ∝ p_i tau_i), not x*.",
    configure=t6_config("simfbo"), measure="dist_sq_tilde", target=x_tilde_star, target_name="x-tilde*", **_T6)

T6_SHROFBO_X = LimitClaim(
    id="simfbo.T6.shrofbo_to_x_star",
    title="ShroFBO converges to x* under uneven tau",
    statement="ShroFBO's normalized aggregation with rho restores the original objective Phi.",
    configure=t6_config("shrofbo"), measure="dist_sq", target=x_star, target_name="x*", **_T6)


T6_SIMFBO_NOT_X = negative_control(
    T6_SHROFBO_X,
    id="simfbo.T6.simfbo_not_x_star",
    title="Negative control: SimFBO does not reach x* under uneven tau",
    statement="The same SimFBO runs end farther than the tolerance from x*.",
    configure=t6_config("simfbo"),
    expect_reason="objective inconsistency of SimFBO: it optimizes Phi-tilde (the paper's own Theorem 1)")


T6_SIMFBO_RESIDUAL = SlopeClaim(
    id="simfbo.T6.simfbo_residual_eta",
    title="SimFBO's residual ||x - x-tilde*||^2 ∝ eta^2 (client drift)",
    statement="The remaining distance comes from the drift term, O(eta^2 tau) in the squared norm (Lemma 8).",
    source=src("eq. (51), Lemma 8"), vary="eta", grid=RESIDUAL_ETA_GRID, configure=t6_config("simfbo"),
    measure="dist_sq_tilde", summary=final_value("dist_sq_tilde"), paper=KEY, min_replicas=DET_REPLICAS,
    expected=ExpectedOrder(THEOREM_1, "c_eta", "drift_term"), tolerance=EXACT_TOLERANCE)

T6_SHROFBO_RESIDUAL = SlopeClaim(
    id="simfbo.T6.shrofbo_residual_eta",
    title="ShroFBO's residual ||x - x*||^2 ∝ eta^2 (client drift)",
    statement="The remaining distance comes from the drift term, O(eta^2 tau) in the squared norm (Lemma 8).",
    source=src("eq. (51), Lemma 8; Theorem 2"), vary="eta", grid=RESIDUAL_ETA_GRID, configure=t6_config("shrofbo"),
    measure="dist_sq", summary=final_value("dist_sq"), paper=KEY, min_replicas=DET_REPLICAS,
    expected=ExpectedOrder(THEOREM_2, "c_eta", "drift_term"), tolerance=EXACT_TOLERANCE)

def vacuity(points, evidence) -> dict[str, float]:
    """How far the bound is above the measurement: the largest and smallest mean/bound over the grid."""
    ratios = [row["ratio"] for row in evidence.get("rows", [])]
    if not ratios:
        return {}
    largest = max(ratios)  # 0 when the bound is infinite (e.g. a rho_bar of 0): the bound is then far above
    return {"largest mean/bound": largest, "bound/mean at least": 1 / largest if largest > 0 else float("inf"),
            "conditions violated (largest count)": max(
                (sum(not c.holds for c in p.evaluation.conditions) for p in points if p.evaluation), default=0)}


# T7: the explicit bound is 10^6-10^9 times the measurement on these instances (spec §4.4 constants such as
# 384 L_R^2 L_1^2/mu^3 and c_gamma_min): a check against it tests nothing (issue #7), so the ratio is
# reported as an observation (a finding about the theorem's tightness), not as a PASS.
T7_BOUND_THEORY = observe(BoundClaim(
    id="simfbo.T7.bound_theory_steps",
    title="Explicit bound of Theorem 1 at theory-compliant step sizes (P2)",
    statement="All conditions of §4.3 hold and (1/T) sum ||grad Phi||^2 <= the explicit bound of §4.4.",
    source=src("Theorem 1; §D.5-D.6"), vary="P", grid=T7_GRID, configure=t7_theory_config,
    theorem=THEOREM_1, bindings=bindings, version="explicit", **_AVG),
    id="simfbo.T7.bound_theory_steps", title="Vacuity of Theorem 1's explicit bound at theory-compliant steps (P2)",
    quantity="mean/bound of the explicit bound (every condition of §4.3 holds)", compute=vacuity)

T7_BOUND_TUNED = observe(BoundClaim(
    id="simfbo.T7.bound_tuned_steps",
    title="Explicit bound at the tuned step sizes of T1 (conditions violated, reported)",
    statement="The explicit bound evaluated at the T1 runs, whose tuned steps break the §4.3 caps.",
    source=src("Theorem 1; §D.5-D.6"), vary="P", grid=P_GRID, configure=t1_config,
    theorem=THEOREM_1, bindings=bindings, version="full_participation", require_conditions=False, **_AVG),
    id="simfbo.T7.bound_tuned_steps", title="Vacuity of the explicit bound at the tuned steps of T1 (conditions off)",
    quantity="mean/bound of the full-participation bound at steps that break the §4.3 caps", compute=vacuity)

T8_NONCONVEX = SlopeClaim(
    id="simfbo.T8.nonconvex_speedup_P",
    title="Nonconvex P3: linear speedup in P from x0 = 1.5 (nonconvex region)",
    statement="Same prediction as T1 on the nonconvex upper level with unique stationary point x* = 0.",
    source=src("Theorem 1 (nonconvex Phi)"), vary="P", grid=P_GRID, configure=t8_config,
    expected=ExpectedOrder(THEOREM_1, "P", "full_participation", dominant_in="T"),
    tolerance=0.1, **_AVG)

# --------------------------------------------------------------------------------------------
# Baselines (spec §7.2): the naive local-hypergradient average and FedNest / LFedNest's communication

# heterogeneous A_i (the naive average's bias needs them, spec §7.2), noise-free, full participation, tau = 1
P1_HET_A = p1(clients=10, hessian_spread=0.5, sigma_f=0.0, sigma_g=0.0)
BASELINE_ROUNDS = {"quick": (400,), "full": (800,)}
BASELINE_STEPS: dict[str, dict[str, Any]] = {
                  "simfbo": {"gamma_x": 0.1, "gamma_y": 0.4, "gamma_v": 0.4, "participation": "full", "radius": "off"},
                  "shrofbo": {"gamma_x": 0.1, "gamma_y": 0.4, "gamma_v": 0.4, "participation": "full", "radius": "off"},
                  "naive_hypergrad": {"gamma_x": 0.2},
                  # FedIHGP as the series (a named deviation): the observation counts Table 1's N per outer
                  # iteration; Algorithm 3's default draws N' + 1 of them at random
                  "fednest": {"inner_rounds": 5, "neumann_terms": 10, "neumann": "series"},
                  "lfednest": {"inner_rounds": 5, "neumann_terms": 10, "neumann": "series"}}


def baseline_config(algorithm: str):
    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(algorithm, dict(BASELINE_STEPS[algorithm]), "quadratic_bilevel", dict(P1_HET_A), int(value),
                         replicas=DET_REPLICAS, mode=AUTO)

    return configure


_BASE: dict[str, Any] = dict(paper=KEY, vary="T", grid=BASELINE_ROUNDS, measure="dist_sq", target=x_star, target_name="x*",
             tolerance=0.01, min_replicas=DET_REPLICAS, source=src("§2.1 (client drift of local Hessian inverses)", "spec §1.2, §7.2"))

SIMFBO_UNBIASED = LimitClaim(
    id="simfbo.baseline.simfbo_unbiased",
    title="SimFBO reaches x* on the same heterogeneous-Hessian problem",
    statement="The aggregated LS surrogate (eqs. (3)-(5)) is linear in the client data: no client-drift bias at tau = 1.",
    configure=baseline_config("simfbo"), **_BASE)

NAIVE_BIASED = negative_control(
    SIMFBO_UNBIASED,
    id="simfbo.baseline.naive_biased",
    title="Negative control: averaging local hypergradients converges away from x*",
    statement="With heterogeneous A_i, sum_i p_i grad Phi_i(x) (each at its own y_i*, v_i*) vanishes away from x*.",
    configure=baseline_config("naive_hypergrad"),
    expect_reason="[grad_yy G]^-1 is not the average of the clients' inverses: the naive aggregate is biased "
                  "(the motivation of the paper's LS surrogate, §2.1), not an error of the paper")

# ShroFBO at equal tau is SimFBO (Theorem 2: rho = 1), so its baseline runs at T6's uneven tau_i (five
# clients at 1 step, five at 10) and T6's constant steps (gamma_x = 0.02, gamma_y = gamma_v = 0.1, eta = 0.004;
# the baseline's gamma_y = 0.4 diverges with 10 local steps) on the same heterogeneous-Hessian problem.
# Measured (exact, converged by T = 200): ShroFBO ends 3.4e-3 from x* (its O(eta^2) local-step residual,
# T6's slope +2), SimFBO at the same tau_i 0.57 (x-tilde*): the tolerance 0.01 sits 3x above the one and
# 57x below the other, so a ShroFBO without its rho correction fails the claim.
UNEVEN_STEPS = {"gamma_x": 0.02, "gamma_y": 0.1, "gamma_v": 0.1, "eta_x": 0.004, "eta_y": 0.004, "eta_v": 0.004,
                "local_steps": T6_TAU, "participation": "full", "radius": "off"}


def uneven_baseline_config(algorithm: str):
    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(algorithm, dict(UNEVEN_STEPS), "quadratic_bilevel", dict(P1_HET_A), int(value),
                         replicas=DET_REPLICAS, mode=EXACT)

    return configure


SHROFBO_UNBIASED = LimitClaim(
    id="simfbo.baseline.shrofbo_unbiased",
    title="ShroFBO reaches x* on the heterogeneous-Hessian problem under uneven tau_i",
    statement="With heterogeneous A_i and tau_i in {1, 10}, ShroFBO's rho-normalized aggregation (Theorem 2) "
              "still reaches x* (up to its O(eta^2) local-step residual), where SimFBO does not.",
    configure=uneven_baseline_config("shrofbo"),
    **{**_BASE, "source": src("§2.1; Theorem 2 (ShroFBO)", "spec §1.2, §6.4 T6, §7.2")})

SIMFBO_UNEVEN_BIASED = negative_control(
    SHROFBO_UNBIASED,
    id="simfbo.baseline.simfbo_uneven_biased",
    title="Negative control: SimFBO at the same uneven tau_i converges away from x*",
    statement="Same instance as simfbo.baseline.shrofbo_unbiased with SimFBO: without rho it reaches x-tilde*, "
              "not x* (so ShroFBO's correction is what the claim tests).",
    configure=uneven_baseline_config("simfbo"),
    source=src("§1.5 eq. (6); Theorem 2", "spec §6.4 T6, §7.2"),
    expect_reason="uneven tau_i reweight SimFBO's objective to w_i ∝ p_i tau_i (§1.5 eq. (6)): the behaviour the "
                  "paper describes and ShroFBO corrects, not an error of the paper")

COMM_ALGORITHMS = ("simfbo", "fednest", "lfednest")


def comm_config(value: float, profile: Profile) -> RunConfig:
    return baseline_config(COMM_ALGORITHMS[int(value)])(BASELINE_ROUNDS["quick"][0] // 4, profile)


def comm_per_round(config: RunConfig, trace: Trace) -> np.ndarray:
    """Communication rounds per outer iteration counted from the run's costs (one per round when an
    algorithm reports none: SimFBO/ShroFBO, Algorithm 1)."""
    total = trace.counters.get("communication_rounds", trace.counters["rounds"])[-1]
    return np.full(trace.replica_ids.size, total / trace.counters["rounds"][-1])


def comm_predicted(config: RunConfig) -> float:
    """From the algorithms' structure: SimFBO one round per iteration (Algorithm 1); FedNest 2 per FedInn
    round (SVRG gradient + model average), one per Neumann term, 2 in FedOut; LFedNest one per FedInn round
    and one in FedOut (Tarzanagh et al. 2022, Algorithms 2-4 and §4)."""
    p = config.params
    if config.algorithm == "fednest":
        return 2 * p["inner_rounds"] + p["neumann_terms"] + 2
    if config.algorithm == "lfednest":
        return p["inner_rounds"] + 1
    return 1.0


def comm_observed(points, evidence) -> dict[str, float]:
    return {f"{COMM_ALGORITHMS[int(p.value)]} (Table 1 structure: {comm_predicted(p.config):g})": float(np.mean(p.samples))
            for p in points}


# The counter is produced by the algorithms from their own loop structure, so comparing it with the same
# formula cannot fail (issue #7): the counts are reported as an observation next to the structural count.
COMM_PER_ROUND = Observation(
    id="simfbo.baseline.comm_per_round",
    title="Communication per iteration: SimFBO 1, FedNest and LFedNest their sub-loop rounds (Table 1)",
    statement="SimFBO communicates once per iteration; FedNest's FedInn/FedIHGP/FedOut sub-loops each communicate.",
    source=src("Table 1; §1 'one communication round per iteration'", "spec §7.2: count all sub-loop rounds"),
    paper=KEY, vary="algorithm", grid={"quick": (0, 1, 2), "full": (0, 1, 2)}, configure=comm_config,
    measure="grad_norm_sq", summary=comm_per_round,
    quantity="communication rounds per iteration counted by each algorithm", compute=comm_observed)

# Monte-Carlo twins of the headline slopes (drawn in the full profile). Their band is MC_TOLERANCE = 0.1, for
# the noise of the full profile's 16-replica draws; in the quick profile a twin reads its claim's exact runs
# (same number, looser band), so there it adds nothing to the exact claim's check: it is the full profile's
# Monte-Carlo counterpart shown in the quick report at no cost (e.g. T5b: -0.4931 against -0.5 + 0.02 exact,
# -0.5 + 0.1 twin).
T1_SPEEDUP_MC, T1B_NOISE_FLOOR_MC, T2_RATE_MC, T3_COMM_MC, T4_FPC_MC, T5A_TAU_HURTS_MC, T5B_TAU_HELPS_MC = (
    monte_carlo_twin(c) for c in (T1_SPEEDUP, T1B_NOISE_FLOOR, T2_RATE, T3_COMM, T4_FPC, T5A_TAU_HURTS, T5B_TAU_HELPS))

CLAIMS = (
    T1_SPEEDUP, T1B_NOISE_FLOOR, T2_RATE, T3_COMM, T4_FPC, T4_WR, T4_ZERO, T4_ZERO_WR, T5A_TAU_HURTS,
    T5B_TAU_HELPS, T6_SIMFBO_TILDE, T6_SIMFBO_NOT_X, T6_SHROFBO_X, T6_SIMFBO_RESIDUAL, T6_SHROFBO_RESIDUAL,
    T7_BOUND_THEORY, T7_BOUND_TUNED, T8_NONCONVEX, NAIVE_BIASED, SIMFBO_UNBIASED, SHROFBO_UNBIASED, SIMFBO_UNEVEN_BIASED,
    COMM_PER_ROUND,
    T1_SPEEDUP_MC, T1B_NOISE_FLOOR_MC, T2_RATE_MC, T3_COMM_MC, T4_FPC_MC, T5A_TAU_HURTS_MC, T5B_TAU_HELPS_MC,
)


