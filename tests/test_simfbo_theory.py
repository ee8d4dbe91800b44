"""The SimFBO theorem encoding (proofs/simfbo.py) against the spec's reference evaluation (§4.6) and the
rates of §4.7, derived by sympy; the schedule and the bindings of a run."""

import numpy as np
import pytest
import sympy as sp

import ratecheck.proofs.simfbo as m
from ratecheck.claims import PROFILES

REF = {"L_f": 1, "L_1": 1, "L_2": 1, "L_3": 1, "mu_g": 0.5, "sigma_f": 1, "sigma_g": 1, "sigma_gg": 0,
       "beta_gh": 1, "sigma_gh": 1, "alpha_min": 1, "alpha_max": 1, "beta_max": 1, "c_a": 1, "c_a_p": 1,
       "n": 10, "P": 10}


def _num(expr, extra=None):
    values = {**REF, **(extra or {})}
    return float(expr.subs({s: values[s.name] for s in expr.free_symbols}))


def test_reference_evaluation_of_spec_4_6():
    """Every number of the spec's reference table (transcription check of the constants)."""
    cy, cv = _num(m.c_gy_min), _num(m.c_gv_min)
    at = {"c_gamma_y": cy, "c_gamma_v": cv}
    table = {m.r: 2, m.r_max: 4, m.L_R: np.sqrt(34), m.L_tld: 9, m.L_Phi: 27, m.L_y: 2, m.L_v: np.sqrt(200),
             m.L_yx: 18, m.L_vx: 140, m.sM1sq: 18, m.sM2sq: 21, m.K_1: 10.1188, m.K_2: 0.0407097,
             m.M_1: 1.08666e9, m.M_2: 1.08642e9, m.M_3: 923043}
    assert cy == pytest.approx(10361.7, rel=1e-5) and cv == pytest.approx(294.770, rel=1e-5)
    for expr, want in table.items():
        assert _num(expr, at) == pytest.approx(want, rel=1e-5), expr
    caps = [_num(t, at) for t in m.STEP_TERMS]
    assert min(caps) == pytest.approx(6.28317e-7, rel=1e-5)
    assert int(np.argmin(caps)) == 7  # term 8 binds (spec §4.6)


def test_rates_of_section_4_7_are_derived_not_typed():
    assert m.THEOREM_1.order("P", version="full_participation", dominant_in="T") == sp.Rational(-1, 2)
    assert m.THEOREM_1.order("T", version="full_participation") == sp.Rational(-1, 2)
    assert m.THEOREM_1_GROWING_TAU.order("T", version="full_participation") == -1  # eps^-1 rounds
    assert m.THEOREM_1.order("tau_bar", version="partial_term") == sp.Rational(1, 2)
    assert m.THEOREM_1.order("P", version="sync_term", use_schedule=False) == -1
    # §4.8 item 11: under partial participation T = O(eps^-2) even with growing tau: the partial term
    # does not fall like 1/T (it is T^0 once tau ∝ T)
    assert m.THEOREM_1_GROWING_TAU.order("T", version="partial_term") == 0
    # the partial-participation term vanishes at P = n (Lemma 9's factor (n-P)/(n-1))
    assert sp.simplify(m.PARTIAL_TERM.subs(m.n, m.P)) == 0


def test_bindings_and_schedule_of_a_run():
    config = m.t1_config(4, PROFILES["quick"])
    values = m.bindings(config)
    assert values["P"] == values["n"] == 4 and values["tau_bar"] == 1
    assert values["c_gamma_y"] == pytest.approx(m.C_GAMMA)
    sched = m.THEOREM_1.schedule_values({"c_x": m.C_X, "c_eta": m.C_ETA, "rho_0": 1, "P": 4, "T": 1000, "tau_bar": 1})
    assert sched["gamma_x"] == pytest.approx(config.params["gamma_x"])
    assert sched["eta_x"] == pytest.approx(config.params["eta_x"])
    ev = m.THEOREM_1.evaluate(values, use_schedule=False)
    assert not ev.all_hold  # tuned steps break the §4.3 caps (spec pitfall 13)
    steps = m.theory_steps(m.P2_T7 | {"clients": 2}, 2, 200)
    ev = m.THEOREM_1.evaluate(m.bindings(m.t7_theory_config(2, PROFILES["quick"])), use_schedule=False)
    assert ev.all_hold, [c for c in ev.conditions if not c.holds]
    assert steps["gamma_x"] < 1e-5


def test_report_sections_render():
    sections = m.report_sections([])
    assert any("Table 1" in head for head, _ in sections)
    assert all(body.strip() for _, body in sections)


def test_step_past_the_stability_edge_is_an_inconclusive_divergence():
    """Bad input 'step sizes past the stability edge': gamma_y a_max > 2 makes the y-block of the
    linear iteration expand, so every replica blows up; the engine records the round, and the claim
    is INCONCLUSIVE saying that the replicas diverged (not PASS/FAIL on the survivors)."""
    import dataclasses

    from ratecheck.runner.sweep import check_claims
    from ratecheck.simulate.engine import run_config

    def configure(value, profile):  # c_x = 20: gamma_y = 4 gamma_x >= 2.5 while a_max = 2
        return m.scheduled("simfbo", {**m.P1_NOISY, "clients": int(value)}, P_=int(value), T_=200, profile=profile,
                           c_x=20.0)

    claim = dataclasses.replace(m.T1_SPEEDUP, id="simfbo.test.unstable", grid={"quick": (1, 4)}, configure=configure)
    trace = run_config(configure(1, PROFILES["quick"]))
    assert (trace.diverged_round > 0).all() and (trace.diverged_round < 200).all()
    outcome = check_claims([claim], PROFILES["quick"], progress=False)[0]
    assert str(outcome.verdict) == "INCONCLUSIVE"
    assert "diverged" in outcome.reason and "0 left" in outcome.reason
    assert all(p.diverged == PROFILES["quick"].replicas for p in outcome.points)


def test_issue_7_claim_kinds():
    """T5a is decidable (no expected INCONCLUSIVE), the vacuous T7 bounds and the counted communications are
    observations, and every negative control names the claim it controls (on the same grid)."""
    from ratecheck.claims import Verdict

    assert m.T5A_TAU_HURTS.expect == Verdict.PASS and len(m.T5A_TAU_HURTS.grid["quick"]) >= 5
    for obs in (m.T7_BOUND_THEORY, m.T7_BOUND_TUNED, m.COMM_PER_ROUND):
        assert obs.kind == "observation" and obs.expect == Verdict.OBSERVED
    for claim in m.CLAIMS:
        if claim.negative_control:
            assert claim.controls is not None and claim.controls.grid == claim.grid, claim.id
