"""S7, S8, S9, S14 and S13 of spec §6.5: FedBiOAcc's (and FedBiOAcc-Local's, S13) iterations to eps, the
communication headline and the fixed-T speedup, on exact expectations.

The measure is the spec's "smoothed eps_t": the mean of E||grad h(x_bar_s)||^2 over the window between two
consecutive log-spaced checkpoints (s in (t_{i-1}, t_i], a constant fraction of t), read from the recorded
running averages. On an exact run (ratecheck.exact) it is an exact expectation, so the hitting time
T_eps (the last downward crossing of eps, log-log interpolated between window midpoints) carries no
Monte-Carlo error (why S7/S8 have no Monte-Carlo twin: see ACCELERATION_CLAIMS; S9 has one).

Instance: Test A with p = d = 1 (drift-free, sigma_f = sigma_g = 1 on every oracle), started at the solution
(x*, y*, u*) with exact first momenta (the b1 -> oo limit, spec pitfall 19, §6.5 S14): no deterministic
transient, so the curve is Theorem 6's noise term alone (from zero the under-damped transient hides it until
bM t ~ 3000). FedBiOAcc's schedule is the theorem's shape with practical constants (spec §6.6):
alpha_t = g (bM)^(2/3)/((bM)^2 u_bar + t)^(1/3), c = c_0/(bM) for the three momenta (Theorem 6: c_nu =
64/(9bM) + ..., c_omega = c_u = 48^2/(bM mu^2) + ...; c_0 = 10 between them), c alpha_1^2 < 1 on every grid.

Why the regime is reached (measured when the constants were chosen, exact runs): the STORM momentum error
equilibrates once sum_s c alpha_s^2 >> 1, i.e. c_0 g^2 (bMt)^(1/3) >> 1; from bM t ~ 900 the windowed curve's
local slope in t is -0.75 .. -0.67 (Theorem 6's (bMT)^(-2/3)), and the curves of different M nearly coincide
against bM t (T_eps ∝ 1/(bM)); the (bM)^2 u_bar offset bends the largest M by about 0.1 in local slope.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from ratecheck.claims import (
    EXACT_BAND,
    Claim,
    ExactSlopeClaim,
    ExpectedOrder,
    ExponentComparisonClaim,
    HittingTime,
    PointResult,
    Profile,
    Reading,
    Rule,
    StrictlyDecreasing,
    Verdict,
    monte_carlo_twin,
    negative_control,
    summaries,
)
from ratecheck.claims.summaries import last_crossing, settled_crossing  # noqa: F401  (the tests read them here)
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig, Trace

from .oracles import FedBiOAccRecursion
from .theorems import THEOREM_8, complexity, eps, exponent, src
from .theorems import M as M_SYM
from .theorems import T as T_SYM
from .theorems import b as b_SYM

KEY = "fedbio"
FAMILY = "fedbio_bilevel"
EXACT, MONTE_CARLO = "exact", "monte_carlo"

NOISY_A1 = {"test": "A", "dim_x": 1, "dim_y": 1, "sigma_f": 1.0, "sigma_g": 1.0, "start": "solution"}
ACC_GAIN, ACC_UBAR, ACC_C0, ACC_STEP = 0.2, 0.0005, 10.0, 0.12


# ---------------------------------------------------------------------------------------------
# the smoothed measure and the hitting time


def windowed(trace: Trace, measure: str = "grad_norm_sq") -> tuple[np.ndarray, np.ndarray]:
    """The smoothed E||grad h(x_bar_t)||^2 (ratecheck.claims.summaries.windowed)."""
    return summaries.windowed(trace, measure)


def hitting_samples(trace: Trace, level: float) -> np.ndarray:
    """Iterations until the smoothed E||grad h(x_bar_t)||^2 stays <= level (ratecheck.claims.settled_crossing)."""
    return settled_crossing(trace, "grad_norm_sq", level)


def _settled(level: Callable[[float], float]) -> HittingTime:
    """What S7/S8/S13 read from a run: iterations until the smoothed measure stays <= the grid value's level."""
    return HittingTime(level, settled_crossing)


# ---------------------------------------------------------------------------------------------
# exact claims with a Monte-Carlo tolerance, and their twins


@dataclass(frozen=True)
class DerivedOrder(ExpectedOrder):
    """An exponent derived by sympy from the complexity table (spec §4.7), when the claim is decided."""

    derive: Callable[[], float] | None = None

    def exponent(self) -> float:
        assert self.derive is not None, "a DerivedOrder derives its exponent"
        return float(self.derive())


def storm_schedule(M: int, b: int, I: int) -> dict[str, Any]:
    """The schedule shape shared by FedBiOAcc and FedBiOAcc-Local: steps ACC_STEP, alpha_t's gain and offset,
    c_nu = c_om = ACC_C0/(bM), exact first momenta."""
    c = ACC_C0 / (b * M)
    return {"I": I, "eta": ACC_STEP, "gamma": ACC_STEP, "b": b, "alpha_gain": ACC_GAIN, "u_bar": ACC_UBAR,
            "c_nu": c, "c_om": c, "first_batch": "exact"}


def acc_params(M: int, b: int, I: int) -> dict[str, Any]:
    schedule = storm_schedule(M, b, I)
    return {**schedule, "tau": ACC_STEP, "c_u": schedule["c_nu"]}


def acc_config(M: int, b: int, I: int, rounds: int, profile: Profile, checkpoints: int = 48) -> RunConfig:
    return RunConfig("fedbioacc", acc_params(M, b, I), FAMILY, {**NOISY_A1, "clients": int(M)}, int(rounds),
                     replicas=1, checkpoints=checkpoints, mode=EXACT)


def _acc_order(var):
    return DerivedOrder(why=f"elasticity in {var} of FedBiOAcc's T(eps) = kappa^8 (bM)^-1 eps^-1.5 (spec §4.7, "
                            "solved from Theorem 6's O-form by sympy)",
                        derive=lambda: exponent(complexity()["FedBiOAcc T"], var))


# ---------------------------------------------------------------------------------------------
# S7: T_eps ∝ 1/M (b = 4, so bM spans 4..64); S8: T_eps ∝ eps^-1.5 (M = 2, b = 8: bM = 16)

S7_B, S7_I = 4, 5
S7_BMT = 2700.0  # the level is crossed near bM t = 2700 (measured), inside the (bMT)^(-2/3) regime
S7_EPS = 2.5e-3
S7_GRID = {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 3, 4, 6, 8, 12, 16)}  # M = 32 leaves the regime: (bM)^2 u_bar ~ T_eps


def s7_config(value: float, profile: Profile) -> RunConfig:
    M = int(value)
    return acc_config(M, S7_B, S7_I, math.ceil(1.3 * S7_BMT / (S7_B * M)), profile)


S7 = ExactSlopeClaim(
    id="fedbio.S7.acc_rounds_M", paper=KEY, title="FedBiOAcc: iterations to eps ∝ 1/M (Test A, exact)",
    statement="With Theorem 6's schedule shape (alpha_t ∝ (bM)^(2/3)/((bM)^2 u_bar + t)^(1/3), c ∝ 1/(bM)) the "
              "noise term (bMT)^(-2/3) dominates: T_eps = O(kappa^8 (bM)^-1 eps^-1.5), slope -1 in M.",
    source=src("Theorem 2/6 (T = O(kappa^8 (bM)^-1 eps^-1.5))", "spec §6.5 S7"),
    vary="M", grid=S7_GRID, configure=s7_config, measure="grad_norm_sq",
    hitting=_settled(lambda value: S7_EPS), expected=_acc_order(M_SYM), tolerance=0.15,
    max_curvature=0.15,
    tolerance_reason="exact expectations: no Monte-Carlo error; the band is the law's finite-grid curvature (the "
                     "(bM)^2 u_bar offset of alpha_t grows like M^2 and the windowed curve approaches its -2/3 from "
                     "-0.75): measured local slopes -1.00 .. -0.88 across the grid (fit -0.94, change +0.12), so the "
                     "spec's +-0.15 and a local-slope change up to 0.15; STORM without the same batch at both points "
                     "or c not scaled by 1/(bM) moves the exponent by more")

S8_M, S8_B = 2, 32
S8_GRID = {"quick": (3.3e-3, 2.2e-3, 1.5e-3, 1.0e-3, 6.6e-4, 4.4e-4, 3.0e-4),
           "full": (3.3e-3, 2.2e-3, 1.5e-3, 1.0e-3, 6.6e-4, 4.4e-4, 3.0e-4)}
S8_ROUNDS = 1000


def s8_config(value: float, profile: Profile) -> RunConfig:
    """One run for every eps (the schedule does not depend on the horizon): the grid only moves the level."""
    return acc_config(S8_M, S8_B, S7_I, S8_ROUNDS, profile, checkpoints=64)


S8 = ExactSlopeClaim(
    id="fedbio.S8.acc_rounds_eps", paper=KEY, title="FedBiOAcc: iterations to eps ∝ eps^-1.5 (Test A, exact)",
    statement="At fixed M and b, T_eps = O(eps^-1.5): the (bMT)^(-2/3) term of Theorem 6.",
    source=src("Theorem 2/6", "spec §6.5 S8"), vary="eps", grid=S8_GRID, configure=s8_config,
    measure="grad_norm_sq", hitting=_settled(lambda value: value), expected=_acc_order(eps), tolerance=0.15,
    max_curvature=0.15,
    tolerance_reason="exact expectations; the band is the finite-grid curvature: the local exponent of the smoothed "
                     "curve in t goes -0.67 .. -0.75 .. -0.68 over the window (Theorem 6's -2/3 approached after the "
                     "(bM)^2 u_bar offset), i.e. T_eps local exponents -1.33 .. -1.5 in eps (fit -1.43, change +0.11): "
                     "the spec's +-0.15; plain momentum (independent batches at the two points: O(sigma^2/b) per step, "
                     "pitfall 2) gives t^(-1/3), an exponent near -3")



# ---------------------------------------------------------------------------------------------
# S9, the headline: communication rounds to eps, FedBiO against FedBiOAcc, each with its theorem's
# prescriptions, from x_1 = y_1 = u_1 = 0 (the Delta terms the prescriptions balance). Both horizon-tuned
# runs are read as the theorems state them: eps_R = (1/T) sum_t E||grad h(x_bar_t)||^2 after R = T/I rounds,
# one run per horizon (FedBiO's gamma depends on T: no prefix of a longer run), exactly. R ∝ eps^-e is
# eps_R ∝ R^(-1/e): Table 1's e = 1.5 (FedBiO) and 1 (FedBiOAcc, b = eps^-1/2) are slopes -2/3 and -1.
#
# Prescriptions, with eps ∝ the horizon's own level: FedBiO (Theorem 5, Cor. 1): I = O(1), gamma ∝ T^-1/3
# (eta = gamma/2, tau = gamma, spec §4.1), b_x = b_y ∝ 1/(M eps) ∝ T^(2/3); FedBiOAcc (Theorem 6): b ∝ eps^-1/2
# ∝ T^(1/2), I = I_0 M^(-2/3) rounded and clamped to >= 1 (spec pitfall 20), alpha_t and c as in S7/S8.
# Batches are rounded to integers (both the rounded and the formula values are in the run's params note).

S9_M = 2
S9_I_FEDBIO = 5
S9_I0 = 8.0
S9_T0 = 50
S9_GRID = {"quick": (10, 17.8, 31.6, 56.2, 100), "full": (10, 17.8, 31.6, 56.2, 100, 178, 316)}  # rounds R
S9_STEP = 0.3  # FedBiOAcc gamma = tau = 0.3, eta = 0.15: well damped from zero (S7/S8's 0.12 oscillates)


def s9_acc_I(M: int) -> tuple[int, float]:
    """Theorem 6 with b = eps^-1/2: I = O(kappa^(10/9) M^(-2/3)); I_0 M^(-2/3) rounded, clamped to >= 1."""
    raw = S9_I0 * M ** (-2.0 / 3.0)
    return max(1, int(round(raw))), raw


def _iterations(rounds: float, I: int) -> int:
    return int(round(rounds)) * I


def s9_fedbio_config(value: float, profile: Profile) -> RunConfig:
    T = _iterations(value, S9_I_FEDBIO)
    g = 0.4 * T ** (-1.0 / 3.0)
    bx = max(1, int(round(4 * (T / S9_T0) ** (2.0 / 3.0))))
    params = {"I": S9_I_FEDBIO, "eta": g / 2, "gamma": g, "tau": g, "bx": bx, "by": bx}
    return RunConfig("fedbio", params, FAMILY, {**NOISY_A1, "clients": S9_M, "start": "zero"}, T, replicas=1,
                     checkpoints=8, mode=EXACT)


def s9_acc_config(value: float, profile: Profile) -> RunConfig:
    I, _ = s9_acc_I(S9_M)
    T = _iterations(value, I)
    b = max(1, int(round(2 * math.sqrt(T / S9_T0))))
    params = {**acc_params(S9_M, b, I), "eta": S9_STEP / 2, "gamma": S9_STEP, "tau": S9_STEP}
    return RunConfig("fedbioacc", params, FAMILY, {**NOISY_A1, "clients": S9_M, "start": "zero"}, T, replicas=1,
                     checkpoints=8, mode=EXACT)


def s9_prescriptions(value: float) -> dict[str, dict[str, float]]:
    """Each algorithm's theory formulas at horizon R and what the run used (rounded, clamped to >= 1)."""
    I_acc, I_raw = s9_acc_I(S9_M)
    T_acc, T_fed = _iterations(value, I_acc), _iterations(value, S9_I_FEDBIO)
    b_acc = 2 * math.sqrt(T_acc / S9_T0)
    b_fed = 4 * (T_fed / S9_T0) ** (2.0 / 3.0)
    return {"FedBiOAcc": {"R": value, "I_formula": I_raw, "I": I_acc, "b_formula": b_acc, "b": max(1, round(b_acc))},
            "FedBiO": {"R": value, "I": S9_I_FEDBIO, "b_formula": b_fed, "b": max(1, round(b_fed))}}


@dataclass(frozen=True)
class Prescribed:
    """A gate (ratecheck.claims.with_gates) for runs that follow theory formulas: the evidence lists, per grid
    value, each formula's value and what the run used (``prescriptions(value)``), and the reason says when a
    clamp to >= 1 was active. The verdict is the claim's own."""

    prescriptions: Callable[[float], Mapping[str, Mapping[str, float]]]

    def __call__(self, claim: Claim, points: Sequence[PointResult], verdict: Verdict, reason: str,
                 evidence: dict[str, Any]) -> tuple[Verdict, str, dict[str, Any]]:
        values = sorted({p.value for p in points})
        table = [self.prescriptions(v) for v in values]
        clamps = sorted({f"{alg} {name[:-8]} {row[name]:.3g} -> {row[name[:-8]]:g}" for entry in table
                         for alg, row in entry.items() for name in row
                         if name.endswith("_formula") and row[name] < 1})
        evidence = {**evidence, "prescriptions": table, "clamped": clamps}
        if clamps:
            reason = f"{reason}; clamped to >= 1: {', '.join(clamps)}"
        return verdict, reason, evidence


def _eps_in_rounds(key: str, label: str) -> DerivedOrder:
    return DerivedOrder(why=f"-1/(elasticity in eps of {label}'s rounds), Table 1 / spec §4.7 by sympy: "
                            "eps_R ∝ R^(-1/e) when R ∝ eps^-e",
                        derive=lambda: 1.0 / exponent(complexity()[key], eps))


S9 = ExponentComparisonClaim(
    id="fedbio.S9.communication_exponent", paper=KEY,
    title="Headline: FedBiOAcc's communication exponent below FedBiO's (eps_R ∝ R^-1 vs R^-2/3, Test A, exact)",
    statement="With each theorem's prescriptions (FedBiO: I = O(1), b_x, b_y ∝ 1/(M eps), gamma ∝ T^-1/3; "
              "FedBiOAcc: b ∝ eps^-1/2, I ∝ M^-2/3 clamped to >= 1, the sigma-free alpha_t) FedBiOAcc reaches eps in "
              "O(eps^-1) rounds and FedBiO in O(eps^-1.5) (Table 1): after R rounds eps_R falls like R^-1 and R^-2/3.",
    source=src("Table 1; Theorems 1/5 (Corollary 1) and 2/6", "spec §6.5 S9, §4.7"),
    vary="R (rounds)", grid=S9_GRID, configure=s9_acc_config, configure_other=s9_fedbio_config,
    measure="avg:grad_norm_sq", labels=("FedBiOAcc", "FedBiO"), margin=0.15, gates=(Prescribed(s9_prescriptions),),
    expected=(_eps_in_rounds("FedBiOAcc rounds, b = eps^-1/2", "FedBiOAcc"),
              _eps_in_rounds("FedBiO rounds (I = O(1))", "FedBiO")), tolerance=0.15,
    expect_reason="exact expectations (no CI): the bands are the finite-horizon curvature, not noise. Measured when "
                  "the grid was chosen: FedBiO's local slopes -0.73 .. -0.75 (the T^-2/3 of its gamma ∝ T^-1/3 "
                  "transient, not yet complete at R = 10), FedBiOAcc's -0.73 .. -1.08 (its first interval before "
                  "the transient is summed); fits -0.74 and -0.98, difference -0.24 against Table 1's -1/3: margin "
                  "0.15 and bands +-0.15 (Table 1's +-0.3 in the rounds exponent is +-0.13 .. +-0.3 here). On Test A "
                  "both exponents come from the prescriptions' deterministic terms (drift-free, sigma-terms made "
                  "negligible by the batches), which is what Table 1's rounds count")

# ---------------------------------------------------------------------------------------------
# S14: eps_T = (1/T) sum_t E||grad h(x_bar_t)||^2 at a FIXED horizon against M (Test A, from the solution,
# exact first momenta: Theorem 6's second term (bMT)^(-2/3) alone). On Test A the virtual averages follow a
# centralized STORM with batch bM (shared A, B: averaging commutes with the affine round), and with alpha_t,
# c of S7 the dynamics in s = bM t is scale-free up to the (bM)^2 u_bar offset, so eps_T(M) = G(bMT): the
# speedup in M at fixed T is the time-average's exponent in s, -2/3 as bMT -> oo.
#
# What the exact runs showed when the grid was chosen (b = 4, T = 300, bMT = 1200 .. 19200): local slopes
# -0.44, -0.51, -0.55, -0.60 (fit -0.53), i.e. SHALLOWER than -2/3 and approaching it from above, not the
# spec's "between -2/3 and steeper": started at the solution, E||grad h||^2 first rises from 0, so the time
# average misses the early part of the power law (int_0^s F = 3K s^(1/3) - A: a correction of order
# (bMT)^(-1/3)); at T = 2000 the local slopes were -0.59 .. -0.63. The one-sided reading (slope <= -2/3 + tol)
# would therefore fail for a correct implementation or pass anything steeper, so the tight check is two-sided
# around the exact asymptotic -2/3 with the measured finite-grid curvature as the band; larger b or M bends
# the other way (the (bM)^2 u_bar offset: b = 16, T = 200 gave local slopes down to -0.95), hence b = 4.

S14_B, S14_T = 4, 300
S14_GRID = {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 3, 4, 6, 8, 12, 16)}


def s14_config(value: float, profile: Profile) -> RunConfig:
    return acc_config(int(value), S14_B, S7_I, S14_T, profile, checkpoints=4)


S14_RTOL = 1e-9  # exact against exact: float64 round-off over 300 iterations (measured < 1e-15)


def s14_values(claim, points, verdict, reason, evidence):
    """Issue #23: the decrease alone is not the claim. Each eps_T (every M) must equal Algorithm 2's mean and
    covariance recursion (proofs/fedbio/oracles.py, written from the paper's box) within S14_RTOL, so a
    noise scale, a momentum weight or a missed 1/M that keeps the decrease still FAILs."""
    rows = []
    for p in points:
        want = float(FedBiOAccRecursion(p.config).trajectory(np.array([0, p.config.rounds]))["avg:grad_norm_sq"][-1])
        got = float(np.mean(p.samples))
        rows.append({"value": p.value, "eps_T": got, "recursion": want, "deviation": abs(got / want - 1)})
    worst = max(rows, key=lambda r: r["deviation"])
    evidence = {**evidence, "values": rows, "values_rtol": S14_RTOL}
    text = (f"eps_T against Algorithm 2's exact recursion: largest relative deviation {worst['deviation']:.2g} at "
            f"M={worst['value']:g} (tolerance {S14_RTOL:g})")
    if worst["deviation"] > S14_RTOL:
        return Verdict.FAIL, f"{text}; {reason}", evidence
    return verdict, f"{reason}; {text}", evidence


S14 = ExactSlopeClaim(
    id="fedbio.S14.acc_fixed_T_speedup", paper=KEY,
    title="FedBiOAcc: eps_T at fixed T falls strictly with M, each value equal to Algorithm 2's exact recursion "
          "(slope against (bMT)^-2/3 reported; Test A, exact)",
    statement="At a fixed horizon T, started at (x*, y*, u*) with exact first momenta (b1 -> oo), eps_T is "
              "Theorem 6's noise term (bMT)^(-2/3): a monotone decrease in M with exponent -2/3 as bMT grows.",
    source=src("Theorem 2/6, second term of the bound ((bMT)^(-2/3))", "spec §6.5 S14"),
    vary="M", grid=S14_GRID, configure=s14_config, measure="avg:grad_norm_sq",
    expected=DerivedOrder(why="elasticity in M of eps at fixed T, inverted from FedBiOAcc's T(eps) = kappa^8 "
                              "(bM)^-1 eps^-1.5 (Theorem 6's (bMT)^(-2/3) term; spec §4.7, sympy): "
                              "e_M(T) / (-e_eps(T))",
                          derive=lambda: exponent(complexity()["FedBiOAcc T"], M_SYM)
                          / -exponent(complexity()["FedBiOAcc T"], eps)),
    tolerance=0.2,
    # Only the decrease is judged. The slope is not: from the solution the time average approaches -2/3 from
    # above by O((bMT)^(-1/3)) (local slopes -0.44 .. -0.60 at bMT = 1200 .. 19200, fit -0.53, local-slope change
    # 0.21 > the regime rule's 0.2), so this grid is not in the asymptotic regime, and T = 2000 (local slopes
    # -0.59 .. -0.63) costs ~20 s of exact FedBiOAcc rounds. Widening the curvature cap to fit the measured 0.207 would be
    # tuning, so the slope is a reported number. Noise shared by the
    # clients (no averaging) measured +0.47: not decreasing, FAIL.
    tolerance_reason="exact expectations; the verdict is the strict decrease in M (noise shared by the clients: "
                     "+0.47, increasing); the slope against -2/3 is reported: the grid is short of its asymptotic "
                     "regime (local slopes -0.44 .. -0.60)",
    rule=StrictlyDecreasing(reported=EXACT_BAND), gates=(s14_values,))

# ---------------------------------------------------------------------------------------------
# S13: FedBiOAcc-Local's iterations to eps against M (Theorem 8: T = O(kappa^8 (bM)^-1 eps^-1.5) with b_x = b,
# b_y = bM), on Test C1 (local lower levels, shared A, B: drift-free) with p = d = 1, exact runs.
#
# Why the spec's row is narrowed. On C1 every client update is affine with a common linear part, so the
# virtual averages (x_bar, y_bar, nu_bar, omega_bar) follow a centralized MRBO-type recursion whatever the
# syncs do, with the clients' noises averaged: the upper-level oracles' noise enters nu_bar with variance
# sigma_f^2/(bM), the lower-level noise enters omega_bar with sigma_g^2/(b_y M). With alpha_t and c of S7
# (shapes in bM) the dynamics in s = bM t is then scale-free up to the (bM)^2 u_bar offset (as on Test A,
# S7), for the upper-level noise AND for the lower-level noise at b_y = b: T_eps ∝ 1/(bM). At Theorem 8's
# b_y = bM the lower-level part carries an extra 1/M at every s (the per-client lower-level errors average
# over the clients, as S11 finds for FedBiO-Local): alone it would give T_eps ∝ M^(-5/2) in the -2/3 regime,
# mixed with the upper-level part no single power law over a decade, and its hitting times at M = 1 need
# ~M^(3/2) = 64 times S7's horizon to stay in regime at M = 16. So the row is decided as two claims:
#   S13 (upper-level noise only, sigma_g = 0; b_y = bM as in Theorem 8, immaterial here): slope -1, the
#       speedup exponent of Theorem 8, which must match (spec §6.5 tolerances: +-0.15);
#   S13 lower (lower-level noise only, b_y = b unscaled): the spec's prediction "the lower-level noise does
#       not shrink with M (slope -> 0)", from Theorem 8's per-client bound (Lemmas 29, 30): an expected FAIL,
#       a negative control of S13 on the same grid: the runs' lower-level errors average over the clients.
#
# Instance: Test C1, p = d = 1 (A = mu = 1, B = 1, L = 1.618), started at (x*, mean_m y_m*(x*)) with exact
# first momenta (b1 -> oo); Q = 8, tau_N = 0.6 (tau_N L = 0.97 < 1): the Neumann fixed point x_Q has
# ||grad h(x_Q)||^2 ~ 1e-8, checked against the eps levels at decision time (below 1%). Measured when the
# constants were chosen (exact runs, b = 4, M = 1..16): the windowed E||grad h||^2 peaks near bM t ~ 100-200
# (upper) and ~ 250 (lower, whose y-error transient overshoots to a local slope -0.97 near bM t ~ 700), then
# falls with local slopes -0.64 .. -0.75; the levels below are crossed near bM t = 1300 .. 1600 with local
# slopes -0.70 .. -0.75 at every M (the regime check: -2/3 +- 0.15). Cost: ~2 s of exact rounds per claim
# (`check fedbio.S13 --no-cache --jobs 1`: 4.2 s for both; ratecheck.exact re-probes each round: alpha_t
# changes). The upper level's noise is grad f's only (sigma_J = sigma_H = 0, unlike S10): Jacobian and
# Hessian noise multiply the state, which exact mode cannot propagate, and Monte-Carlo hitting times are
# too noisy here (see S7/S8 below).

S13_B, S13_Q, S13_TAU_N = 4, 8, 0.6
S13_BMT = 1300.0  # the levels are crossed near bM t = 1300 (measured), inside the (bMT)^(-2/3) regime
S13_EPS = {"upper": 1.9e-3, "lower": 1.15e-3}
S13_GRID = {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 3, 4, 6, 8, 12, 16)}
S13_NOISE = {"upper": {"sigma_f": 1.0}, "lower": {"sigma_g": 1.0}}
REGIME_SLOPE = -2.0 / 3.0  # Theorem 8's (bMT)^(-2/3): the windowed curve's local exponent in t at the crossing
REGIME_BAND = 0.15
NEUMANN_FLOOR_FRACTION = 0.01  # ||grad h(x_Q)||^2 (the Neumann bias) must stay below 1% of eps


def acc_local_params(M: int, b: int, I: int, Q: int, tau_N: float, by: int | None = None) -> dict[str, Any]:
    """FedBiOAcc-Local with S7's schedule shape (alpha_t and c in bM, exact first momenta); b_y = bM unless set."""
    params = {**storm_schedule(M, b, I), "Q": Q, "tau_N": tau_N}
    return params if by is None else {**params, "by": by}


def s13_config(noise: str, unscaled_by: bool = False) -> Callable[[float, Profile], RunConfig]:
    def configure(value: float, profile: Profile) -> RunConfig:
        M = int(value)
        params = acc_local_params(M, S13_B, S7_I, S13_Q, S13_TAU_N, by=S13_B if unscaled_by else None)
        problem = {"test": "C1", "dim_x": 1, "dim_y": 1, "start": "solution", "clients": M, **S13_NOISE[noise]}
        return RunConfig("fedbioacc_local", params, FAMILY, problem, math.ceil(1.3 * S13_BMT / (S13_B * M)),
                         replicas=1, checkpoints=48, mode=EXACT)

    return configure


def crossing_slopes(points) -> list[tuple[float, float]]:
    """Per point (M, local log-log slope in t of the replica-mean windowed E||grad h||^2 between the two
    windows that bracket its hitting time); NaN where the level is not crossed inside the run."""
    out = []
    for p in points:
        t, w = windowed(p.trace)
        mean = w.mean(axis=1)
        hit = float(np.mean(p.samples)) if p.samples.size else math.nan
        j = int(np.searchsorted(t, hit)) if math.isfinite(hit) else 0
        local = math.log(mean[j] / mean[j - 1]) / math.log(t[j] / t[j - 1]) if 0 < j < t.size else math.nan
        out.append((p.value, local))
    return out


def neumann_floor(config: RunConfig) -> float:
    """||grad h(x_Q)||^2: where FedBiO(Acc)-Local stalls with exact oracles (spec §6.3 x_Q)."""
    prob = problem_of(config)
    g = prob.hypergrad(prob.x_neumann(int(config.params["Q"]), float(config.params["tau_N"]))[None])
    return float(np.sum(g**2))


@dataclass(frozen=True)
class EpsReached(Reading):
    """The hitting time ``inner``, and INCONCLUSIVE ("eps not reached inside the run") when a point has no
    crossing and no diverged replica, before the shared prechecks (which would say "too few replicas")."""

    inner: HittingTime

    def __call__(self, claim: Any, point: PointResult) -> None:
        self.inner(claim, point)

    def precheck(self, claim: Any, points: Sequence[PointResult]) -> str:
        missed = [p for p in points if p.samples.size == 0 and p.diverged == 0]
        if not missed:
            return ""
        return "eps not reached inside the run: " + ", ".join(
            f"{claim.vary}={p.value:g} (eps {p.stats['level']:.3g}, {p.config.rounds} iterations)" for p in missed)


@dataclass(frozen=True)
class CrossingRegime(Rule):
    """Iterations to eps decided by ``inner`` only where every crossing lies in the noise term's regime: the
    windowed curve's local exponent at the crossing within ``band`` of ``slope`` and the Neumann floor
    ||grad h(x_Q)||^2 below ``floor_fraction`` of eps; otherwise INCONCLUSIVE naming the points. The local
    exponents are in the evidence and the reason."""

    inner: Rule
    slope: float
    band: float
    floor_fraction: float = NEUMANN_FLOOR_FRACTION

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> tuple[Verdict, str, dict[str, Any]]:
        slopes = crossing_slopes(points)
        off = [f"{claim.vary}={v:g}: " + (f"{s:+.3f}" if math.isfinite(s) else "no crossing (below eps from the first "
                                                                           "window on)")
               for v, s in slopes if not abs(s - self.slope) <= self.band]
        floors = [(p.value, neumann_floor(p.config), p.stats["level"]) for p in points]
        high = [f"{claim.vary}={v:g}: {f:.3g} vs eps {lev:.3g}" for v, f, lev in floors if f > self.floor_fraction * lev]
        evidence = {"crossing_local_slopes": {f"{v:g}": s for v, s in slopes},
                    "neumann_floor": {f"{v:g}": f for v, f, _ in floors}}
        if off or high:
            why = "; ".join(([f"crossing outside the (bMT)^(-2/3) regime ({self.slope:+.3f} +- "
                              f"{self.band:g}): {', '.join(off)}"] if off else [])
                            + ([f"Neumann floor above {self.floor_fraction:g} x eps: {', '.join(high)}"]
                               if high else []))
            return Verdict.INCONCLUSIVE, f"regime not reached: {why}", evidence
        verdict, reason, more = self.inner(claim, points, estimate)
        text = ", ".join(f"{s:+.2f}" for _, s in slopes)
        return verdict, f"{reason}; crossings in regime (local exponents in t: {text})", {**more, **evidence}


def _acc_local_order() -> DerivedOrder:
    return DerivedOrder(why="elasticity in M of FedBiOAcc-Local's T(eps), solved by sympy from Theorem 8's O-form "
                            "term kappa^(16/3)/(bMT)^(2/3) (b_x = b, b_y = bM): (bM)^-1",
                        derive=lambda: exponent(theorem8_T_eps(), M_SYM))


def theorem8_T_eps(factor: sp.Expr = sp.Integer(1)) -> sp.Expr:
    """T(eps) from the (bMT)^(-2/3) term of Theorem 8's O-form (the noise term; Q large: G_1 -> 0), the term
    multiplied by ``factor`` (e.g. 1/M: the lower-level part on C1 at b_y = bM, averaged over the clients)."""
    term = next(a for a in THEOREM_8.bound("big_O").expr.args if a.has(T_SYM) and a.has(b_SYM))
    return sp.solve(sp.Eq(factor * term, eps), T_SYM)[0]


# shared by S13 and its negative control (a negative control runs on the grid of the claim it controls)
_S13: dict[str, Any] = dict(paper=KEY, vary="M", grid=S13_GRID, measure="grad_norm_sq", tolerance=0.15, max_curvature=0.15,
                            rule=CrossingRegime(EXACT_BAND, REGIME_SLOPE, REGIME_BAND))

S13 = ExactSlopeClaim(
    id="fedbio.S13.acc_local_rounds_M",
    title="FedBiOAcc-Local: iterations to eps ∝ 1/M, upper-level noise (Test C1, exact)",
    statement="With b_x = b, b_y = bM and Theorem 8's schedule shape (alpha_t ∝ (bM)^(2/3)/((bM)^2 u_bar + "
              "t)^(1/3), c ∝ 1/(bM)), noise on the upper-level oracles (grad f, sigma_f = 1; sigma_g = 0) reaches "
              "eps in T_eps = O(kappa^8 (bM)^-1 eps^-1.5) iterations: slope -1 in M (the linear speedup).",
    source=src("Theorem 4/8 (T = O(kappa^8 (bM)^-1 eps^-1.5), b_x = b, b_y = bM)", "spec §4.6, §6.5 S13"),
    configure=s13_config("upper"), reading=EpsReached(_settled(lambda value: S13_EPS["upper"])), expected=_acc_local_order(),
    tolerance_reason="exact expectations: no Monte-Carlo error; the band is the law's finite-grid curvature (the "
                     "(bM)^2 u_bar offset of alpha_t grows like M^2, as in S7): measured local slopes -0.97 .. -0.88 "
                     "across the grid (fit -0.93, change +0.09), so the spec's +-0.15 and a local-slope change up to "
                     "0.15; STORM with a fresh batch at the old point, or the clients drawing one shared minibatch, "
                     "moves the exponent by more (tests/test_sensitivity_fedbio.py)",
    **_S13)

S13_LOWER = negative_control(
    S13,
    id="fedbio.S13.acc_local_lower_noise_unscaled_by",
    title="FedBiOAcc-Local with b_y = b (not bM): the lower-level noise is predicted not to shrink with M, "
          "yet T_eps ∝ 1/M (Test C1, exact)",
    statement="Theorem 8 needs b_y = bM: each client's lower-level error is bounded per client (Lemmas 29, 30: "
              "injection 2 (c_omega alpha_t^2)^2 sigma^2/b_y, no average over clients), so with b_y = b the "
              "lower-level noise (sigma_g = 1, sigma_f = 0) does not shrink with M and T_eps is predicted flat in M "
              "(spec §6.5 S13: slope -> 0).",
    source=src("Theorem 4/8 (b_y = bM); Lemmas 29-30 (per-client omega and y errors)", "spec §4.2b, §6.5 S13"),
    configure=s13_config("lower", unscaled_by=True), reading=EpsReached(_settled(lambda value: S13_EPS["lower"])),
    expected=ExpectedOrder(value=0.0, why="spec §6.5 S13: with b_y = b the lower-level noise term of Theorem 8's "
                                          "per-client analysis has no 1/M, so T_eps does not fall with M"),
    expect_reason="the bound is loose, not the algorithm wrong: the clients' lower-level errors are independent and "
                  "reach x_bar only through nu_bar = (1/M) sum_m nu_m, so omega_bar's noise is sigma^2/(bM) at "
                  "b_y = b and, with the schedule in bM, T_eps ∝ 1/(bM) as for the upper level (measured when the "
                  "grid was chosen: fit -0.94, local slopes -0.98 .. -0.91); Theorem 8 (like Theorem 7, S11) "
                  "bounds each client's error without that average",
    tolerance_reason="exact expectations; the band is the spec's +-0.15 around 0, the measured curvature that of S13 "
                     "(the same schedule): -0.94 is 6 bands away")

# No Monte-Carlo twin for S7/S8: their hitting time is read where the mean curve is a slow power law, so it
# needs the mean to a few percent per window; the STORM momentum error is correlated over 1/(c alpha_t^2) ~ t
# iterations, so a window holds about one independent draw per replica, and the full profile's 48 (or 192)
# replicas gave hitting times off by factors (measured: R^2 0.47 on S8's grid). S9 reads the theorems' time
# average at the end of each run, which Monte Carlo estimates well: its twin runs in the full profile.
S9_MC = monte_carlo_twin(S9)  # Monte Carlo in the full profile, the exact runs in quick
ACCELERATION_CLAIMS = (S7, S8, S9, S9_MC, S14, S13, S13_LOWER)
