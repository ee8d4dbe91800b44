"""FESS-GDA theorems (proofs/fessgda.py): constants, schedules, conditions, derived complexities,
the paper's errata where sympy can decide them, and the claim kinds added for this paper."""

import dataclasses
import math

import numpy as np
import pytest
import sympy as sp

import ratecheck.proofs as proofs
import ratecheck.proofs.fessgda as fg
from ratecheck.claims import PROFILES, ExpectedOrder, HittingTimeClaim, Verdict, hitting_rounds
from ratecheck.theory import Source
from ratecheck.trace import RunConfig, Trace

PROFILE = PROFILES["quick"]


def test_theorem_3_1_prefactor_is_the_vacuous_1_3e9_kappa():
    # spec §4.1: max{...} = 32 p / beta = 1,310,720,000 kappa/(eta_x K) at the theorem's choices
    assert fg.prefactor_31() == 1310720000
    sched = {fg.p: 2 * fg.l, fg.beta: fg.eta_y * fg.K * fg.mu / 80000}
    c31 = fg.C31.subs(sched).subs(fg.eta_y, fg.eta_x / 256)
    at = {fg.l: 3, fg.mu: 0.5, fg.eta_x: 1e-3, fg.K: 4}
    assert float(c31.subs(at)) == pytest.approx(1310720000 * 6 / (1e-3 * 4))


def test_theorem_3_1_schedule_and_conditions():
    vals = {"l": 2.0, "mu": 0.1, "sigma": 1.0, "sigma_G": 0.0, "Delta": 0.5, "M": 4, "m": 4, "K": 8, "T": 1e6,
            "PL_y": 1.0}
    s = fg.THEOREM_3_1.schedule_values(vals)
    assert s["eta_y"] == pytest.approx(s["eta_x"] / 256)
    assert s["beta"] == pytest.approx(s["eta_y"] * 8 * 0.1 / 80000)
    assert s["p"] == 4.0
    assert s["eta_x"] == pytest.approx(min(1 / 8000 / 2, math.sqrt(4 * 0.5) / math.sqrt(8 * 1e6 * 2)))
    # local steps at the caps satisfy every condition; twice the drift cap violates it
    cap = 1 / (2 * 2 * math.sqrt(2 * 15 * 7))
    ok = {**vals, **s, "eta_xl": 0.999 * min(cap, math.sqrt(s["beta"] / (6144 * s["eta_x"] * 4 * 4 * 512))),
          "eta_yl": 0.999 * min(cap, math.sqrt(s["eta_y"] / (3072 * s["eta_x"] * 4 * 64)))}
    assert fg.THEOREM_3_1.evaluate(ok, use_schedule=False).all_hold
    bad = fg.THEOREM_3_1.evaluate({**ok, "eta_xl": 2 * cap}, use_schedule=False)
    assert "eta_xl <= drift cap" in [c.name for c in bad.conditions if not c.holds]
    # K = 1: the drift cap is +oo (pitfall P20)
    k1 = fg.THEOREM_3_1.evaluate({**ok, "K": 1, "eta_xl": 1e3, "eta_yl": 1e-12}, use_schedule=False)
    assert next(c for c in k1.conditions if c.name == "eta_xl <= drift cap").holds


def test_derived_complexities_match_the_paper_up_to_constants():
    rows = {r["setting"]: r for r in fg.complexity_table()}
    assert all(r["agree"] for r in rows.values())
    kap, eps, m = fg.kap, fg.eps, fg.m
    samples, rounds = rows["NC-PL, m = M or sigma_G = 0"]["derived"]
    assert sp.simplify(samples - kap**2 / (m * eps**4)) == 0 and sp.simplify(rounds - kap / eps**2) == 0
    nc_c = rows["NC-C (regularized)"]["derived"]
    assert fg.exponent(nc_c[0], eps, inverse=True) == 6 and fg.exponent(nc_c[1], eps, inverse=True) == 3
    # the headline improvement over SAGDA / Fed-Norm-SGDA: kappa^2 -> kappa rounds
    table = {alg: rounds for _, alg, _, _, rounds in fg.TABLE_1}
    assert fg.exponent(table["SAGDA (Yang et al. 2022a)"], kap) - fg.exponent(table["FESS-GDA (Corollary 3.1)"], kap) == 1


def test_theorem_3_5_headline_exponents_differ_from_the_derivation():
    paper, derived = fg.COMPLEXITY_ORDERS["Thm 3.5 (paper)"][1], fg.COMPLEXITY_ORDERS["Thm 3.5 (derived)"][1]
    log = sp.log(fg.kp / fg.eps)
    assert (fg.exponent(paper / log, fg.kp), fg.exponent(paper / log, fg.kpp)) == (1, 2)
    assert (fg.exponent(derived / log, fg.kp), fg.exponent(derived / log, fg.kpp)) == (2, 1)
    # the printed contraction (256) is 4x the derived one (1024) under eta_x = eta_y/(64 kappa2^2)
    a_derived = fg.A35.subs(fg.eta_x, fg.eta_y * fg.mu2**2 / (64 * fg.l**2))
    a_printed = fg.eta_y * fg.K * fg.l / (256 * fg.kappa1 * fg.kappa2**2)
    assert sp.simplify(a_printed / a_derived) == 4


def test_printed_local_caps_grow_with_the_noise():
    assert fg.exponent(fg.EPS_CAP_PRINTED_31.subs(fg.sigma_G, 0), fg.sigma) == 1
    assert fg.exponent(fg.EPS_CAP_CORRECTED_31.subs(fg.sigma_G, 0), fg.sigma) == -1


def test_floor_orders_at_fixed_eta_k():
    assert fg.exponent(fg.floor_noise(), fg.m) == -1 and fg.exponent(fg.floor_noise(), fg.K) == -1
    assert fg.exponent(fg.floor_het(), fg.K) == 0


def test_claim_configurations_respect_or_flag_the_theorem():
    """A1 runs at Theorem 3.5's step sizes (all conditions hold); B1 uses practical constants, which
    violate Theorem 3.1's eta_x <= 1/(1000 K l) and beta caps: B1 is a shape check only."""
    for value in fg.A1_LINEAR.values(PROFILE):
        config = fg.A1_LINEAR.configure(value, PROFILE)
        assert fg.THEOREM_3_5.evaluate(fg.bindings(config), use_schedule=False).all_hold
    config = fg.B1_FESS_KAPPA.configure(1.0, PROFILE)
    values = {**fg.bindings(config), "Delta": 1.0, "sigma": 1e-9}
    broken = {c.name for c in fg.THEOREM_3_1.evaluate(values, use_schedule=False).conditions if not c.holds}
    assert "eta_x <= 1/(1000 K l)" in broken


def test_fessgda_is_registered_and_reports():
    assert proofs.papers()["fessgda"] == fg.PAPER  # registered by entry point (issue #9)
    assert {c.id for c in fg.CLAIMS} <= {c.id for c in proofs.all_claims()}
    sections = dict(fg.report_sections([]))
    assert "1.311e+09" in sections["Errata (spec §9, evaluated where computable)"]
    assert "| NC-PL, m = M or sigma_G = 0 |" in sections["Complexity table (paper vs derived)"]
    assert "not run" in sections["Table 1 of the paper and measured exponents"]


# -- the claim kinds added for this paper -------------------------------------------------------

SRC = Source("synthetic", "test")


def _config(value, profile):
    return RunConfig("fsgda", {"v": value}, "minimax", {}, rounds=100, replicas=profile.replicas)


def _trace(config, values):
    marks = np.arange(values.shape[0])
    return Trace(config=config, replica_ids=np.arange(values.shape[1]), checkpoints=marks,
                 measures={"m": values}, counters={}, final={}, diverged_round=np.full(values.shape[1], -1))


def test_hitting_rounds():
    vals = np.array([[5.0, 5.0, 5.0], [0.5, 2.0, np.nan], [0.1, 0.9, 3.0]])
    np.testing.assert_array_equal(hitting_rounds(np.array([0, 10, 20]), vals, 1.0), [10, 20, np.nan])


def test_hitting_time_claim_reads_one_run_at_several_levels():
    # measure 1/t: rounds to reach eps^2 = eps^-2 exactly, so the slope in 1/eps is 2
    marks = np.arange(1, 20001)
    values = np.repeat((1.0 / marks)[:, None], 8, axis=1) * np.linspace(0.9, 1.1, 8)
    config = _config(0, PROFILE)
    trace = _trace(config, values)
    trace.checkpoints = marks
    claim = HittingTimeClaim(id="t.hit", paper="t", title="t", statement="s", source=SRC, vary="1/eps",
                             grid={"quick": (4, 8, 16, 32, 64)}, configure=lambda v, p: config, measure="m",
                             threshold=lambda v: v**-2, expected=ExpectedOrder(value=2, why="test"), tolerance=0.05)
    out = claim.decide(PROFILE, {config.key(): trace})
    assert out.verdict == Verdict.PASS and out.evidence["fit"]["slope"] == pytest.approx(2, abs=0.02)  # integer rounds
    never = dataclasses.replace(claim, grid={"quick": (4, 1000)})
    out = never.decide(PROFILE, {config.key(): trace})
    assert out.verdict == Verdict.INCONCLUSIVE and "not reached" in out.reason


def test_pl_theorem_on_a_non_pl_problem_is_inconclusive_with_the_reason():
    """Bad input from the issue: Theorem 3.1 (PL in y) asked of the point-wise max (simplex, not PL)."""
    from ratecheck.claims import BoundClaim
    from ratecheck.runner.sweep import check_claims

    def configure(rounds, profile):
        params = {**fg.steps(1e-3, 1e-3, 1, 1e-3, 1e-3), "p": 1.0, "beta": 0.5}
        return fg.claims._run("fess_gda", params, {"kind": "pwmax"}, rounds, 4)

    claim = BoundClaim(id="t.nonpl", paper="t", title="t", statement="s", source=SRC, vary="T",
                       grid={"quick": (10, 20)}, configure=configure, measure="avg:stat_sq",
                       theorem=fg.THEOREM_3_1, bindings=fg.bindings, version="explicit", min_replicas=4)
    out = check_claims([claim], PROFILE, progress=False)[0]
    assert out.verdict == Verdict.INCONCLUSIVE
    assert "Assumption 3.1 (PL in y) certified by the problem" in out.reason


def test_role_swap_makes_theorem_3_5_applicable_when_mu1_below_mu2():
    """(a3) has mu1 = 0.176 < mu2 = 1.26: the paper's branch condition fails at the swapped run's step
    sizes (INCONCLUSIVE), while the swapped theorem (spec §2.4(C)) holds all its conditions there."""
    config = fg.A1_LINEAR_SWAPPED.configure(500, PROFILE)
    values = fg.bindings(config)
    assert values["mu1"] < values["mu2"]
    plain = fg.THEOREM_3_5.evaluate(values, use_schedule=False)
    assert "mu2 <= mu1 (branch)" in {c.name for c in plain.conditions if not c.holds}
    assert fg.THEOREM_3_5_SWAPPED.evaluate(values, use_schedule=False).all_hold
    # the swap exchanges the schedule: eta_x = 1/(4lK), eta_y = eta_x mu1^2/(64 l^2)
    consts = {k: v for k, v in values.items() if k not in ("eta_x", "eta_y")}
    sched = fg.THEOREM_3_5_SWAPPED.schedule_values({**consts, "K": 1})
    assert sched["eta_x"] == pytest.approx(1 / (4 * values["l"]))
    assert sched["eta_y"] == pytest.approx(sched["eta_x"] * values["mu1"] ** 2 / (64 * values["l"] ** 2))
    # contraction a' = eta_y K mu2/16 in the swapped recursion
    rec = fg.THEOREM_3_5_SWAPPED.bound_expr("recursion", use_schedule=False)
    assert sp.simplify(rec - ((1 - fg.eta_y * fg.K * fg.mu2 / 16) ** fg.T * fg.W0s
                              + fg.B35.xreplace(fg.ROLE_SWAP) / (fg.eta_y * fg.K * fg.mu2 / 16))) == 0


def test_new_claims_expected_exponents_come_from_the_theorems():
    assert fg.D1_NC1PC_ROUNDS.of.expected.exponent() == 4.0  # Theorem 3.2: T = O(eps^-4) (an observation's cap)
    assert fg.B2_FLOOR_M.expected.exponent() == -1.0 and fg.B2_FLOOR_K.expected.exponent() == -1.0
    assert fg.C2_FLOOR_M.expected.exponent() == -1.0
    assert fg.B4_WGAN_KAPPA.expected.exponent() == 1.0  # Theorem 3.1: T = O(kappa eps^-2)
    # D1's beta keeps Theorem 3.2's eps^2 shape: beta(eps)/beta(2 eps) = 1/4
    b = [fg.d1_config(v, PROFILE).params["beta"] for v in (2, 4)]
    assert b[1] / b[0] == pytest.approx(0.25)


def test_exact_rate_of_the_quadratic_round_tends_to_the_spectral_rate():
    """The exact recursion's log-slope over a window far out equals 2 log rho(F); the theorem's
    guaranteed log(1 - a) is much slower (the tightness factor the A1 claims report)."""
    config = fg.A1_LINEAR.configure(4000, PROFILE)
    spectral = fg.spectral_log_rate(config)
    far = fg.exact_log_rate("W")(config, np.arange(200_000, 200_050, 10))
    assert far == pytest.approx(spectral, rel=1e-3)
    F = fg.linear_round(config)
    assert np.max(np.abs(np.linalg.eigvals(F))) < 1
    point = type("P", (), {"evaluation": fg.THEOREM_3_5.evaluate(fg.bindings(config), use_schedule=False)})()
    guaranteed = fg.theorem_log_rate()(point)
    assert spectral < 10 * guaranteed < 0  # at least 10x faster than the theorem's contraction


def test_linearized_round_of_the_sine_problem_matches_its_hessian():
    """(a3) at the saddle: f_xx = 2, f_yy = -28, f_xy = 0, so F = diag(1 - 2 eta_x, 1 - 28 eta_y)."""
    config = fg.A1_LINEAR_SWAPPED.configure(2000, PROFILE)
    q = config.params
    ex, ey = q["eta_x_local"] * q["eta_x_global"], q["eta_y_local"] * q["eta_y_global"]
    np.testing.assert_allclose(fg.linear_round(config), np.diag([1 - 2 * ex, 1 - 28 * ey]), atol=1e-8)


def test_far_caps_are_observations_not_verdicts():
    for obs in (fg.C1_PWMAX, fg.C1_CONTROL_C0, fg.C1_CONTROL_DUP, fg.D1_NC1PC_ROUNDS, fg.D2_NCC_REGULARIZED,
                fg.A4_LOG_ROUNDS):
        assert obs.kind == "observation" and obs.expect == Verdict.OBSERVED


def test_nonlinear_floors_start_after_the_transient():
    """B2 and C2 average the tail from NONLINEAR_FLOOR_START: there the noiseless run from x0 (the transient the
    floor must not count) is below 1% of the m = 16 floor (the smallest one, measured on 4 replicas): a 1% bias at
    one end moves a slope over 1.2 decades by under 0.004, a 25th of the band (measured: 0.2% ncpl, 0.04% pwmax)."""
    from ratecheck.claims import tail_average
    from ratecheck.proofs.fessgda.claims import NONLINEAR_FLOOR_START, b2_config, c2_config
    from ratecheck.simulate.engine import run_config

    quick = PROFILES["quick"]
    for config, measure in ((b2_config(16, 4, quick), "stat_kappa"), (c2_config(16, quick), "stat_sq")):
        floor = tail_average(measure, NONLINEAR_FLOOR_START)(config, run_config(config.with_(replicas=4))).mean()
        silent = config.with_(problem_params={**config.problem_params, "noise": 0.0}, replicas=1)
        transient = tail_average(measure, NONLINEAR_FLOOR_START)(silent, run_config(silent))[0]
        assert transient < 1e-2 * floor, (measure, transient, floor)
