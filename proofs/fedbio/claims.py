"""Claims S1-S15 of spec ../shared/spec/fedbio.md §6.5 (what to run, what to expect, why).

All runs use the fedbio_bilevel problems (problems/quadratic_bilevel.py) with d = p = 2 (the spec's
worked instance A_bar = diag(1, 4), B_bar = I) so that a quick claim costs a few seconds. One engine
round is one iteration t; the measure is taken at the virtual averages every iteration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ratecheck.claims import (
    ExpectedOrder,
    LimitClaim,
    Profile,
    SlopeClaim,
    ThresholdClaim,
    ValueClaim,
    Verdict,
    final_value,
    monte_carlo_twin,
    negative_control,
    observe,
    tail_average,
)
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig, Trace

from .theorems import THEOREM_5, THEOREM_7, src

KEY = "fedbio"
FAMILY = "fedbio_bilevel"


def fedbio_config(algorithm: str, params: Mapping[str, Any], problem: Mapping[str, Any], T: int, profile: Profile,
               checkpoints: int = 24) -> RunConfig:
    return RunConfig(algorithm, dict(params), FAMILY, dict(problem), int(T), replicas=profile.replicas,
                     checkpoints=checkpoints)



# ---------------------------------------------------------------------------------------------
# S1, S2: FedBiO's noise floor falls like 1/M and like 1/b (Test A, drift-free, started at the solution)

S1_STEPS = {"I": 5, "eta": 0.02, "gamma": 0.05, "tau": 0.05}
S1_T = 800
NOISY_A = {"test": "A", "sigma_f": 1.0, "sigma_g": 1.0, "start": "solution"}
M_GRID = {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16, 32)}
B_GRID = {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16, 32)}
FLOOR = tail_average("grad_norm_sq", 0.25)


def s1_config(value: float, profile: Profile) -> RunConfig:
    return fedbio_config("fedbio", S1_STEPS, {**NOISY_A, "clients": int(value)}, S1_T * int(profile.scale), profile)


def s2_config(value: float, profile: Profile) -> RunConfig:
    b = int(value)
    return fedbio_config("fedbio", {**S1_STEPS, "bx": b, "by": b}, {**NOISY_A, "clients": 2}, S1_T * int(profile.scale),
                      profile)


S1 = SlopeClaim(
    id="fedbio.S1.floor_speedup_M", paper=KEY, title="FedBiO: noise floor ∝ 1/M (Test A)",
    statement="At fixed steps the stationary floor of ||grad h(x_bar)||^2 comes from the noise terms "
              "sigma^2/(b_x M) + 72 L~^2 sigma^2/(mu^2 b_y M) of Eq. (12): slope -1 in M.",
    source=src("Theorem 5, Eq. (12) noise terms; Lemma 1 (1/M)", "spec §6.5 S1"),
    vary="M", grid=M_GRID, configure=s1_config, measure="avg:grad_norm_sq", summary=FLOOR,
    expected=ExpectedOrder(THEOREM_5, "M", "noise_terms"), tolerance=0.15)

S2 = SlopeClaim(
    id="fedbio.S2.floor_batch_b", paper=KEY, title="FedBiO: noise floor ∝ 1/b (b_x = b_y = b, Test A)",
    statement="The same floor falls like 1/b when every oracle averages b samples.",
    source=src("Theorem 5, Eq. (12) noise terms", "spec §6.5 S2"),
    vary="b", grid=B_GRID, configure=s2_config, measure="avg:grad_norm_sq", summary=FLOOR,
    expected=ExpectedOrder(THEOREM_5, "b", "noise_common_b"), tolerance=0.15)

# ---------------------------------------------------------------------------------------------
# S2 under N2 (spec §6.0 noise model N2): finite sums of K rows per client, minibatches drawn WITHOUT
# replacement. The minibatch mean then has variance sigma^2/b (K - b)/(K - 1) (the finite-population
# correction, tests/test_fedbio_problems.py), so the floor is Theorem 5's sigma^2/b term with b replaced by
# the effective batch b_eff = b (K - 1)/(K - b), and it vanishes at the full batch b = K (exactly: Test A is
# drift-free and the run starts at the solution). Monte Carlo (exact mode refuses uniform row picks).

N2_K = 16
N2_B = {"quick": (1, 2, 4, 8, 12), "full": (1, 2, 3, 4, 6, 8, 10, 12, 14)}  # minibatch sizes b < K


def b_eff(b: int, K: int = N2_K) -> float:
    return b * (K - 1) / (K - b)


N2_T = 400  # half of S1's horizon: the floor's transient from the solution is ~1/(eta mu_h) = 50 iterations


def n2_config(b: int, profile: Profile, T: int = N2_T) -> RunConfig:
    return fedbio_config("fedbio", {**S1_STEPS, "bx": b, "by": b},
                      {"test": "A", "sigma_f": 1.0, "sigma_g": 1.0, "start": "solution", "clients": 2,
                       "finite_sum": N2_K}, T * int(profile.scale), profile)


def s2_n2_config(value: float, profile: Profile) -> RunConfig:
    return n2_config(int(round(N2_K * value / (N2_K - 1 + value))), profile)  # the b whose b_eff is the grid value


S2_N2 = SlopeClaim(
    id="fedbio.S2.floor_batch_finite_sum", paper=KEY,
    title="FedBiO under finite sums (N2): noise floor ∝ 1/b_eff, b_eff = b(K-1)/(K-b) (Test A, K = 16)",
    statement="With K samples per client and minibatches without replacement the oracle variance is "
              "sigma^2 (K - b)/(b (K - 1)): Theorem 5's sigma^2/b noise terms with b -> b_eff, so the floor falls "
              "like 1/b_eff and vanishes at b = K. Drawing with replacement would leave sigma^2/b (slope about "
              "-0.65 against b_eff on this grid).",
    source=src("Theorem 5, Eq. (12) noise terms, with the finite-population variance of N2", "spec §6.0 N2, §6.5 S2"),
    vary="b_eff", grid={k: tuple(b_eff(b) for b in v) for k, v in N2_B.items()}, configure=s2_n2_config,
    measure="avg:grad_norm_sq", summary=FLOOR, expected=ExpectedOrder(THEOREM_5, "b", "noise_common_b"),
    tolerance=0.15)


S2_N2_FULL = ThresholdClaim(
    id="fedbio.S2.finite_sum_full_batch", paper=KEY,
    title="FedBiO under finite sums (N2): at the full batch b = K the noise floor vanishes",
    statement="A minibatch of all K rows drawn without replacement is the client's exact gradient "
              "((K - b)/(K - 1) = 0): started at the solution on drift-free Test A, E||grad h(x_bar)||^2 stays 0 "
              "up to round-off (with replacement it would stay sigma^2/K).",
    source=src("Theorem 5, Eq. (12) noise terms (sigma = 0)", "spec §6.0 N2, §6.5 S2"),
    # 1e-24: the rows are centred in float64 (their mean ~1e-17, squared ~1e-33), any sampled floor is ~1e-3
    vary="b", grid={"quick": (N2_K,), "full": (N2_K,)}, measure="avg:grad_norm_sq", summary=FLOOR, threshold=1e-24,
    configure=lambda value, profile: n2_config(int(value), profile, T=100))  # zero at every t: no need to wait


# N2 as the spec states it: the samples carry their own matrices (A_m,i, B_m,i, c_m,i, d_m,i), so the Jacobian and
# the Hessian oracles are row draws and grad_y g's noise depends on the point. With the per-factor Neumann minibatch
# (spec §2.6 item 5's option) of all K rows, every oracle and every factor of eq. (6) is the client's exact one, so
# FedBiO-Local on drift-free Test C1 reaches the Neumann fixed point x_Q as the noise-free run does. Quick runs
# (16 replicas, T = 150) measured max ||x_bar - x_Q||^2 = 1e-32; any sampled noise left keeps a floor near 1e-3:
# b = K - 1 (2e-3), b_x copies of one row each (5e-3), rows drawn with replacement (9e-3). The threshold 1e-20 sits
# twelve decades above round-off and seventeen below those floors. Monte Carlo (exact mode refuses row draws).

N2_ROWS_K = 8
N2_ROWS_PROBLEM = {"test": "C1", "clients": 2, "sigma_f": 1.0, "sigma_g": 1.0, "sigma_J": 0.5, "sigma_H": 0.3,
                   "start": "solution", "finite_sum": N2_ROWS_K}  # rows' eigenvalues in [0.65, 4.22]: tau_N max < 1
N2_ROWS_STEPS = {"I": 5, "eta": 0.3, "gamma": 0.3, "Q": 4, "tau_N": 0.2, "neumann_batch": "per_factor"}


def n2_rows_config(value: float, profile: Profile) -> RunConfig:
    b = int(value)
    return fedbio_config("fedbio_local", {**N2_ROWS_STEPS, "bx": b, "by": b}, N2_ROWS_PROBLEM, 150, profile)


S2_N2_ROWS_FULL = ThresholdClaim(
    id="fedbio.S2.finite_sum_matrix_rows_full_batch", paper=KEY,
    title="FedBiO-Local under N2 with matrix rows: per-factor minibatches of all K rows reach x_Q exactly",
    statement="Every sample i of client m is (A_m,i, B_m,i, c_m,i, d_m,i) with the client's data as their mean; a "
              "minibatch of all K rows without replacement is then the exact oracle for grad f, grad_y g (whose "
              "noise depends on (x, y)), the Jacobian and each of the Q Hessian factors of eq. (6) when each factor "
              "is its own b_x-minibatch: on drift-free Test C1 x_bar converges to x_Q as without noise (with b_x "
              "copies of single samples, or rows drawn with replacement, a floor of order eta sigma^2/b stays).",
    source=src("Eq. (6); Prop. 2 (sigma = 0); Theorem 7's noise terms", "spec §6.0 N2, §1.2 'minibatch per factor'"),
    vary="b", grid={"quick": (N2_ROWS_K,), "full": (N2_ROWS_K,)}, measure="dist_sq", threshold=1e-20,
    summary=lambda config, trace: _dist_to_xq(config, trace), configure=n2_rows_config)


# ---------------------------------------------------------------------------------------------
# S3, S5, S15: FedBiO's drift floor on Test B (heterogeneous A_m, B_m), no noise (deterministic runs)
#
# Regime. The drift floor is a power series in the displacement over one period, e = s (I - 1): the first-
# order client deviations grow linearly over the I local steps, their period average is s (I - 1)/2, so the
# floor is a e^2 (1 + O(e)) (exactly (I - 1)^2 at leading order) and its local log-log slope is 2 + O(e).
# Deterministic quick runs (one replica, the grids below) measured the next-order term: at I = 3 the local
# slope in s goes from 1.988 to 1.942 over s in [0.005, 0.05] (e <= 0.1); at s = 0.01 the local slope in
# I - 1 goes from 1.975 to 1.85 over I - 1 in [1, 10] (e <= 0.1) and to 1.79 at I - 1 = 16. The former grids
# (I = 5 and s up to 0.08, e = 0.32; s = 0.04 and I - 1 up to 16, e = 0.64) left that regime: local slopes
# changed by -0.32 and -0.66 across them.

HET_B = {"test": "B", "clients": 4, "s_H": 0.5, "s_B": 0.3, "start": "solution"}
DRIFT_I = 3
S3_GRID = {"quick": (0.005, 0.00889, 0.0158, 0.0281, 0.05),
           "full": (0.005, 0.00667, 0.00889, 0.0119, 0.0158, 0.0211, 0.0281, 0.0375, 0.05)}
S3_CONVERGED = 12.0  # iterations x step: the slowest mode (eta mu_h >= s/2) has contracted by e^-6 from the
# start at x* to the biased fixed point, i.e. the floor is within ~0.5% of its limit


def drift_config(s: float, tau: float, I: int, profile: Profile) -> RunConfig:
    """FedBiO on Test B with gamma = s, eta = s/2 (spec §6.7) and the given tau and I; T about S3_CONVERGED/s,
    a multiple of I (the measure is read at a synchronization)."""
    T = int(max(250, S3_CONVERGED / s))
    T = (T - T % I) * int(profile.scale)
    return fedbio_config("fedbio", {"I": I, "eta": s / 2, "gamma": s, "tau": tau}, HET_B, T, profile)


def s3_config(value: float, profile: Profile) -> RunConfig:
    """All steps scaled together: gamma = tau = s, eta = s/2 (spec §6.7), I = 3."""
    return drift_config(float(value), float(value), DRIFT_I, profile)


S3 = SlopeClaim(
    id="fedbio.S3.drift_floor_step2", paper=KEY, title="FedBiO: client-drift floor ∝ (step)^2 (Test B, sigma = 0)",
    statement="With heterogeneous Hessians and Jacobians, I = 3 and all steps scaled by s, the floor "
              "C_eta eta^2 + C_gamma gamma^2 of Eq. (12) grows like s^2.",
    source=src("Theorem 5, Eq. (12); Lemma 7", "spec §6.5 S3"),
    vary="s", grid=S3_GRID, configure=s3_config, measure="grad_norm_sq", summary=final_value("grad_norm_sq"),
    expected=ExpectedOrder(THEOREM_5, "s", "drift_scaled"), tolerance=0.1,
    expect_reason="s (I - 1) <= 0.1 on the grid: the next-order term moves the local slope by at most 0.06 (measured "
                  "when the grid was chosen: 1.988 -> 1.942), inside +-0.1 with margin; a leading exponent off by 0.15 "
                  "fails")

S5_TAU = 0.05  # = the largest s of S3: the two sweeps share that run
S5_GRID = {"quick": (S5_TAU / 10, S5_TAU), "full": (S5_TAU / 10, S5_TAU)}


def s5_config(value: float, profile: Profile) -> RunConfig:
    """tau fixed (Theorem 5 fixes tau independently of T); gamma = s, eta = s/2 shrink."""
    return drift_config(float(value), S5_TAU, DRIFT_I, profile)


S5_SLOPE = SlopeClaim(
    id="fedbio.S5.tau_floor", paper=KEY, title="FedBiO with tau fixed: shrinking eta, gamma 10x does not divide the "
                                               "floor by 100 (u-dispersion plateau)",
    statement="Eq. (12) predicts a floor C_eta eta^2 + C_gamma gamma^2 at any admissible tau (no tau in it): from "
              "s = tau (where this run is S3's) to s = tau/10 with tau fixed, the floor would fall 100x (exponent 2, "
              "as S3 measures with tau ∝ s on the same decade); with heterogeneous Hessians/Jacobians it plateaus at "
              "O(tau^2).",
    source=src("Theorem 5, Eq. (12); Lemmas 2, 8 and 14 (dropped cross terms)", "spec §4.1 [PROOF GAP], §6.5 S5"),
    vary="s", grid=S5_GRID, configure=s5_config, measure="grad_norm_sq", summary=final_value("grad_norm_sq"),
    expected=ExpectedOrder(THEOREM_5, "s", "drift_scaled"), tolerance=0.1, expect=Verdict.FAIL,
    design_reason="a two-point exponent, not a power-law fit: the floor at s = tau/10 against the paper's s^2 "
                  "prediction from s = tau. Between the ends the curve is a plateau O(tau^2) plus the s^2 drift by "
                  "design, so a five-point fit could only report that regime change; the band is S3's, whose tau ∝ s "
                  "runs give exponent 1.97 over the same decade",
    expect_reason="with tau fixed the u-dispersion (1/M) sum_m (H_m - H_bar)(u_m - u_bar), which Lemmas 2 and 8 drop, "
                  "keeps the floor O(tau^2)")


def _two_point_exponent(points, evidence) -> dict[str, float]:
    ordered = sorted(points, key=lambda p: p.value)
    lo, hi = (float(np.mean(p.samples)) for p in (ordered[0], ordered[-1]))
    exponent = float(np.log(hi / lo) / np.log(ordered[-1].value / ordered[0].value))
    return {"exponent": exponent, "floor_ratio": hi / lo, "s2_prediction_ratio": (ordered[-1].value / ordered[0].value) ** 2}


# An observation, not an erratum (issue #23): the runs use tau = 0.05, about 250x Theorem 5's cap on tau, so
# Eq. (12) is not promised there, and a two-point slope cannot show an upper bound violated. What it shows is the
# mechanism: with tau fixed the floor plateaus at O(tau^2) (the u-dispersion). The erratum's evidence is the
# Lemma 8 hunt (fedbio.hunt.lemma8_stated), which finds the bias above Lemma 8's bound under Theorem 5's conditions.
S5 = observe(
    S5_SLOPE, id="fedbio.S5.tau_floor",
    title="FedBiO with tau fixed (250x Theorem 5's cap): the floor plateaus at O(tau^2) as eta, gamma shrink "
          "(u-dispersion; observation, the Lemma 8 hunt is the erratum's evidence)",
    quantity="two-point exponent of the floor in s with tau fixed (S3's tau ∝ s gives 1.97), the floor ratio and "
             "the s^2 prediction's ratio over the decade",
    compute=_two_point_exponent)

S15_S = 0.01  # s (I - 1) <= 0.1 over the grid
S15_GRID = {"quick": (1, 2, 3, 6, 10), "full": (1, 2, 3, 4, 6, 8, 10)}  # I - 1


def s15_config(value: float, profile: Profile) -> RunConfig:
    return drift_config(S15_S, S15_S, int(value) + 1, profile)


S15 = SlopeClaim(
    id="fedbio.S15.drift_in_I", paper=KEY, title="FedBiO: drift floor ∝ (I-1)^2 at small steps (C_1 ∝ I^2)",
    statement="C_1 ∝ I^2 in Eq. (12): where the I^2 term dominates (small s (I - 1)) the drift floor grows like the "
              "square of the period; the first-order drift vanishes at I = 1, so the law is (I - 1)^2.",
    source=src("Theorem 5, C_1 = (...) I^2", "spec §6.5 S15"),
    vary="I-1", grid=S15_GRID, configure=s15_config, measure="grad_norm_sq",
    summary=final_value("grad_norm_sq"),
    expected=ExpectedOrder(THEOREM_5, "I", "drift_in_I"), tolerance=0.2,
    expect_reason="at s = 0.01 the next-order term O(s (I - 1)) moves the local slope from 1.975 to 1.85 across the "
                  "grid (measured when the grid was chosen): fitted ~1.93 and a local-slope change ~0.13, inside "
                  "+-0.2 (spec §6.5's tolerance); an exponent of 1 (drift linear in I) or 3 fails")

# ---------------------------------------------------------------------------------------------
# S4: horizon-tuned steps, eps_T ∝ T^(-2/3) (Corollary 1), each T a separate run

S4_GRID = {"quick": (125, 250, 500, 1000, 2000), "full": (125, 250, 500, 1000, 2000, 4000, 8000, 16000)}
S4_PROBLEM = {**HET_B, "start": "zero"}


def s4_config(value: float, profile: Profile) -> RunConfig:
    """gamma_T = tau_T = 0.4 T^(-1/3), eta_T = gamma_T/2 (Theorem 5's gamma = (Delta'/(C' T))^(1/3))."""
    T = int(value)
    g = 0.4 * T ** (-1 / 3)
    return fedbio_config("fedbio", {"I": 5, "eta": g / 2, "gamma": g, "tau": g}, S4_PROBLEM, T, profile)


S4 = SlopeClaim(
    id="fedbio.S4.rate_T_horizon", paper=KEY, title="FedBiO: eps_T ∝ T^(-2/3) with horizon-tuned steps (Cor. 1)",
    statement="With gamma ∝ T^(-1/3) (and tau ∝ gamma, spec §4.1), (1/T) sum ||grad h(x_bar_t)||^2 falls like "
              "T^(-2/3), i.e. T_eps ∝ eps^(-1.5).",
    source=src("Theorem 5 / Corollary 1", "spec §6.5 S4"),
    vary="T", grid=S4_GRID, configure=s4_config, measure="avg:grad_norm_sq",
    expected=ExpectedOrder(THEOREM_5, "T", "big_O_deterministic"), tolerance=0.1,
    expect_reason="deterministic runs (sigma = 0, one replica's value): the local slope changes by 0.002 across the "
                  "quick grid (measured), so half the spec's +-0.2 decides with room; a T^(-1/2) rate (steps not "
                  "tuned to the horizon) fails")

# ---------------------------------------------------------------------------------------------
# S6: the naive local-hypergradient average converges to x_naive != x*; FedBiO to x*

S6_PROBLEM = {"test": "B", "clients": 8, "s_H": 0.5, "s_B": 0.3}
ONE = {"quick": (600,), "full": (1200,)}


def s6_config(algorithm: str, params: Mapping[str, Any]):
    def configure(value: float, profile: Profile) -> RunConfig:
        return fedbio_config(algorithm, params, S6_PROBLEM, int(value), profile)

    return configure


def x_star(config: RunConfig) -> np.ndarray:
    return problem_of(config).x_star


def x_naive(config: RunConfig) -> np.ndarray:
    return problem_of(config).x_naive


_S6: dict[str, Any] = dict(paper=KEY, vary="T", grid=ONE, measure="dist_sq", tolerance=1e-6,
           source=src("§3 (Eq. (3): averaging local hypergradients is biased)", "spec §1.1, §6.2 x_naive, §6.5 S6"))
NAIVE = {"gamma_x": 0.3}
S6_NAIVE = LimitClaim(
    id="fedbio.S6.naive_to_x_naive", title="Naive local-hypergradient average converges to x_naive (closed form)",
    statement="Averaging Phi_m(x, y_x) with each client's own inverse Hessian has the fixed point x_naive of "
              "spec §6.2.", configure=s6_config("naive_hypergrad", NAIVE), target=x_naive, target_name="x_naive",
    **_S6)
S6_FEDBIO = LimitClaim(
    id="fedbio.S6.fedbio_to_x_star", title="FedBiO (I = 1) converges to x* on the same problem",
    statement="The federated quadratic (4) for u is linear in client data: no bias without local steps.",
    configure=s6_config("fedbio", {"I": 1, "eta": 0.2, "gamma": 0.2, "tau": 0.2}), target=x_star, target_name="x*",
    **_S6)
S6_NAIVE_NOT_X = negative_control(
    S6_FEDBIO,
    id="fedbio.S6.naive_not_x_star", title="Negative control: the naive average misses x*",
    statement="The same run is far from x* (‖x_naive - x*‖ ≈ 0.07 on this instance).",
    configure=s6_config("naive_hypergrad", NAIVE),
    expect_reason="the inverse of an average Hessian is not the average of inverses: the bias the paper's federated u "
                  "of Eq. (4) removes")

# ---------------------------------------------------------------------------------------------
# S10, S11: FedBiO-Local's floor in M: speedup on upper-level noise; lower-level noise per client

# Q = 20, tau_N = 0.3 on A = diag(1, 2): Neumann bias (1 - tau_N mu)^(Q+1) ~ 6e-4, its square far below the
# noise floors; tau_N (L + sigma_H) < 1 keeps every sampled I - tau_N H(xi) contractive
LOCAL_STEPS = {"I": 5, "eta": 0.02, "gamma": 0.1, "Q": 20, "tau_N": 0.3}
S10_GRID = {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16, 32)}


def s10_config(noise: Mapping[str, float], mode: str = "monte_carlo"):
    def configure(value: float, profile: Profile) -> RunConfig:
        prob = {"test": "C1", "clients": int(value), "a_max": 2.0, "start": "solution", **noise}
        config = fedbio_config("fedbio_local", LOCAL_STEPS, prob, int(600 * profile.scale), profile)
        return config.with_(mode="exact", replicas=1) if mode == "exact" else config

    return configure


S10 = SlopeClaim(
    id="fedbio.S10.local_upper_noise_M", paper=KEY, title="FedBiO-Local: upper-level noise floor ∝ 1/M (Test C1)",
    statement="Noise on the f, Jacobian and Hessian oracles only (sigma_g = 0): the floor term G_2^2/(b_x M) of "
              "Eq. (40) falls like 1/M.",
    source=src("Theorem 7, Eq. (40): 3 G_2^2/(2 b_x M)", "spec §6.5 S10"),
    vary="M", grid=S10_GRID, configure=s10_config({"sigma_f": 1.0, "sigma_J": 0.5, "sigma_H": 0.2}, "exact"),
    measure="avg:grad_norm_sq", summary=FLOOR, expected=ExpectedOrder(THEOREM_7, "M", "upper_noise"), tolerance=0.15)
# exact (issue #21): the Q = 20 sampled Hessians propagate factor by factor (ratecheck.exact.neumann); its
# Monte-Carlo twin draws the profile's replicas in the full profile
S10_MONTE_CARLO = monte_carlo_twin(S10)

S11 = negative_control(
    S10,
    configure=s10_config({"sigma_g": 1.0}),
    id="fedbio.S11.local_lower_noise_M",
    title="FedBiO-Local: the lower-level noise term has no 1/M in Eq. (40), yet the floor falls like 1/M",
    statement="Noise on grad_y g only (sigma_f = 0): the bound's term 54 Lhat^2 gamma sigma^2/(b_y mu) does not "
              "depend on M (exponent 0, 'no speedup').",
    source=src("Theorem 7, Eq. (40); Lemma 22 (noise 3 gamma^2 sigma^2/b_y without 1/M)", "spec §6.5 S11"),
    expected=ExpectedOrder(THEOREM_7, "M", "lower_noise"),
    expect_reason="the bound is loose, not wrong: each client's y-error is independent and enters x_bar only "
                  "through the average (1/M) sum_m Phi-hat_m, so its variance falls like 1/M; Eq. (40) bounds it "
                  "per client (Lemma 22) and keeps an M-free term")

# ---------------------------------------------------------------------------------------------
# S12: the Neumann bias: FedBiO-Local converges to x_Q, ||x_Q - x*|| ~ (1 - tau_N mu)^(Q+1)

Q_GRID = {"quick": (0, 1, 2, 4, 8), "full": (0, 1, 2, 3, 4, 6, 8, 12)}
S12_PROBLEM = {"test": "C1", "clients": 4}


def s12_config(value: float, profile: Profile) -> RunConfig:
    params = {"I": 5, "eta": 0.3, "gamma": 0.2, "Q": int(value), "tau_N": 0.2}
    return fedbio_config("fedbio_local", params, S12_PROBLEM, int(400 * profile.scale), profile)


def x_neumann(config: RunConfig) -> np.ndarray:
    return problem_of(config).x_neumann(int(config.params["Q"]), float(config.params["tau_N"]))


S12 = LimitClaim(
    id="fedbio.S12.neumann_fixed_point", paper=KEY, title="FedBiO-Local converges to the Neumann fixed point x_Q",
    statement="With exact oracles the truncated series tau_N sum_{k<=Q} (I - tau_N A)^k = N_Q A^-1 moves the fixed "
              "point to x_Q (spec §6.3, closed form), at every Q.",
    source=src("Eq. (6), Prop. 2 (bias G_1 = kappa (1 - tau_N mu)^(Q+1) C_f)", "spec §6.3, §6.5 S12"),
    vary="Q", grid=Q_GRID, configure=s12_config, measure="dist_sq", target=x_neumann, target_name="x_Q",
    tolerance=1e-8)


# StocBiO (spec §7), the centralized reference (M = 1): the same Neumann estimator after D warm-started inner
# steps; with exact oracles its fixed point is x_Q of the one-client problem (y_k^D -> y*(x), the series truncated)
STOCBIO = {"eta": 0.3, "gamma": 0.2, "D": 5, "Q": 2, "tau_N": 0.2}
STOCBIO_PROBLEM = {"test": "C1", "clients": 1}


def stocbio_config(value: float, profile: Profile) -> RunConfig:
    return fedbio_config("stocbio", {**STOCBIO, "Q": int(value)}, STOCBIO_PROBLEM, int(300 * profile.scale), profile)


STOCBIO_XQ = LimitClaim(
    id="fedbio.baseline.stocbio_to_x_Q", paper=KEY, title="StocBiO (M = 1, centralized reference) converges to x_Q",
    statement="StocBiO's Neumann hypergradient with Q+1 terms (Q = 2: x_Q visibly away from x*) has the fixed point "
              "x_Q of spec §6.3 for one client: the reference FedBiO-Local (S12) must match at M = 1.",
    source=src("Table 1 (StocBiO [20]); Eq. (6)", "spec §7 StocBiO, §6.3 x_Q"),
    vary="Q", grid={"quick": (2,), "full": (2, 4)}, configure=stocbio_config, measure="dist_sq", target=x_neumann,
    target_name="x_Q", tolerance=1e-8)


S12_C2_PROBLEM = {"test": "C2", "clients": 4, "s_H": 0.5, "s_B": 0.3}
S12_C2_GRID = {"quick": (0, 4), "full": (0, 2, 4, 8)}


def s12_c2_config(value: float, profile: Profile) -> RunConfig:
    """I = 1 (no drift): with client-specific A_m, B_m each client's own y_m and Neumann series matter."""
    params = {"I": 1, "eta": 0.3, "gamma": 0.2, "Q": int(value), "tau_N": 0.2}
    return fedbio_config("fedbio_local", params, S12_C2_PROBLEM, int(400 * profile.scale), profile)


S12_C2 = LimitClaim(
    id="fedbio.S12.neumann_fixed_point_heterogeneous", paper=KEY,
    title="FedBiO-Local reaches x_Q with heterogeneous A_m, B_m (Test C2, I = 1)",
    statement="Each client tracks its own y_m*(x) and applies its own truncated series N_Q,m A_m^-1: the fixed "
              "point is x_Q of spec §6.3 with client matrices (I = 1 removes the drift).",
    source=src("Algorithm 3 (y never averaged), Eq. (6)", "spec §2.3, §6.3"),
    vary="Q", grid=S12_C2_GRID, configure=s12_c2_config, measure="dist_sq", target=x_neumann, target_name="x_Q",
    tolerance=1e-8)


def neumann_bias(config: RunConfig, trace: Trace) -> np.ndarray:
    return np.sqrt(trace.at_end("dist_sq"))


def neumann_bias_predicted(config: RunConfig) -> float:
    prob = problem_of(config)
    return float(np.linalg.norm(x_neumann(config) - prob.x_star))


S12_BIAS = ValueClaim(
    id="fedbio.S12.neumann_bias_Q", paper=KEY, title="Neumann bias ||x_inf - x*|| equals ||x_Q - x*|| (log-linear in Q)",
    statement="The distance to x* decays geometrically in Q at rate (1 - tau_N mu) per term (Prop. 2's G_1).",
    source=src("Prop. 2", "spec §6.5 S12"), vary="Q", grid=Q_GRID, configure=s12_config, measure="dist_sq",
    summary=neumann_bias, predict=neumann_bias_predicted, prediction="||x_Q - x*|| from the closed form",
    rel_tolerance=1e-4)

# ---------------------------------------------------------------------------------------------
# STORM: one minibatch at both points (Algorithms 2 and 4). With additive noise the difference
# G(z_new; B) - G(z_old; B) is noise-free; with c = 0 and exact first estimates the momentum error stays
# at its initial value, so the runs converge to x* as if noise-free (spec §6.1 'important property').

STORM_T = {"quick": (400,), "full": (800,)}
STORM_ACC = {"I": 5, "eta": 0.3, "gamma": 0.3, "tau": 0.15, "alpha_gain": 0.5, "u_bar": 1.0, "c_nu": 0.0,
             "c_om": 0.0, "c_u": 0.0, "first_batch": "exact"}
STORM_LOCAL = {"I": 5, "eta": 0.3, "gamma": 0.3, "Q": 4, "tau_N": 0.2, "alpha_gain": 0.5, "u_bar": 1.0,
               "c_nu": 0.0, "c_om": 0.0, "first_batch": "exact"}


def storm_config(algorithm: str, params: Mapping[str, Any], problem: Mapping[str, Any]):
    def configure(value: float, profile: Profile) -> RunConfig:
        return fedbio_config(algorithm, params, problem, int(value), profile)

    return configure


STORM_GLOBAL = ThresholdClaim(
    id="fedbio.storm.same_batch_global", paper=KEY,
    title="FedBiOAcc (c = 0): one minibatch at both points cancels additive noise exactly",
    statement="With sigma_f = sigma_g = 1 (additive), c = 0 and exact first estimates (b1 -> oo), the iterates converge to "
              "x* as in the noise-free recursion.",
    source=src("Algorithm 2 lines 9-11 (same xi_t at x_t and x_{t+1})", "spec §2.2, §6.1, pitfall 2"),
    # 1e-10: the noise-free recursion's own distance at T = 400 is ~1e-11 (its slowest mode still contracting,
    # measured); a fresh batch at the old point, or c > 0 with noise, leaves a floor of order 1e-3
    vary="T", grid=STORM_T, measure="dist_sq", threshold=1e-10,
    configure=storm_config("fedbioacc", STORM_ACC, {"test": "A", "clients": 4, "sigma_f": 1.0, "sigma_g": 1.0}))

STORM_LOCAL_CLAIM = ThresholdClaim(
    id="fedbio.storm.same_batch_local", paper=KEY,
    title="FedBiOAcc-Local (c = 0): the same Neumann sample at both points cancels additive noise",
    statement="With noise on grad f and grad_y g only, the Neumann estimator is affine in its noise with fixed "
              "coefficients: the same sample at both points leaves the momentum exact, so x_bar -> x_Q.",
    source=src("Algorithm 4 lines 8-9; Eq. (6)", "spec §2.4 'same batch ... includes the Neumann samples'"),
    vary="T", grid=STORM_T, measure="dist_sq", threshold=1e-10,
    summary=lambda config, trace: _dist_to_xq(config, trace),
    configure=storm_config("fedbioacc_local", STORM_LOCAL, {"test": "C1", "clients": 4, "sigma_f": 1.0,
                                                             "sigma_g": 1.0}))


def _dist_to_xq(config: RunConfig, trace: Trace) -> np.ndarray:
    target = x_neumann(config)
    return ((trace.final["x"] - target) ** 2).sum(-1)


from .acceleration import ACCELERATION_CLAIMS  # noqa: E402  (S7-S9: below the claims they share helpers with)
from .ball import ball_checked  # noqa: E402

# every claim decides with the after-run C_f ball check (proofs/fedbio/ball.py)
CLAIMS = tuple(ball_checked(c) for c in (S1, S2, S2_N2, S2_N2_FULL, S2_N2_ROWS_FULL, S3, S4, S5, S6_NAIVE, S6_NAIVE_NOT_X,
                                         S6_FEDBIO, S10, S10_MONTE_CARLO, S11, S12,
                                         S12_BIAS, S12_C2, STOCBIO_XQ, S15, STORM_GLOBAL, STORM_LOCAL_CLAIM,
                                         *ACCELERATION_CLAIMS))
