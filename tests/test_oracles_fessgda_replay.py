"""FESS-GDA's replay oracles (issue #23 item 2): a noise-free Monte-Carlo run against Algorithm 1 (and its two-phase
and Smoothed-AGDA forms) replayed with the run's own client sets. Each passes on the code; a step that is not affine
in the state (which exact mode refuses: an ERROR of the exact oracles, not a FAIL), a wrong server average, a phase-2
anchor weight off by ten times the tolerance or a client set drawn otherwise turns it into a FAIL (monkeypatched); a
run that left the finite numbers is a FAIL, not a replica dropped as diverged."""

import dataclasses

import numpy as np
import pytest

from ratecheck.algorithms import minimax
from ratecheck.claims import PROFILES, Verdict
from ratecheck.proofs.fessgda import oracles_replay as rp
from ratecheck.runner.sweep import check_claims
from ratecheck.simulate.engine import run_config

PROFILE = PROFILES["quick"]
CLAIM = {c.id.split(".")[-1].removesuffix("_replay"): c for c in rp.CLAIMS}


def _decide(claim):
    return check_claims([claim], PROFILE, progress=False)[0]


@pytest.mark.parametrize("claim", rp.CLAIMS, ids=lambda c: c.id)
def test_replays_pass_on_the_code(claim):
    outcome = _decide(claim)
    assert outcome.verdict == Verdict.PASS, outcome.reason
    assert outcome.evidence["exact"] is False  # the Monte-Carlo path


def test_the_runs_draw_different_client_sets_per_replica():
    config = CLAIM["fess_gda"].configure(rp.REPLAY_T, PROFILE)
    run = rp.Replay(config)
    sets = {tuple(sorted(c)) for _ in range(rp.REPLAY_T) for c in run.clients()}
    assert config.replicas > 1 and len(sets) == 6  # every 2-subset of 4 clients drawn: P < M, sets differ
    assert np.ptp(run.inst.J[:, 0, 0]) > 0 and np.ptp(run.inst.v) > 0  # per-client curvature and offsets
    assert rp.STEPS["fess_gda"]["eta_x_global"] != 1 and rp.STEPS["fess_gda"]["local_steps"] > 1


def _patch(monkeypatch, mutation):
    original = minimax.local_gda
    if mutation == "divided_step":  # x - eta_x / gx: not affine, exact mode refuses it
        def local_gda(problem, batch, x, y, steps, eta_x, eta_y, noise, updates="simultaneous", **kw):
            for _ in range(steps):
                gx, gy = problem.stochastic_grads(batch, x, y, noise)
                x, y = x - eta_x / gx, problem.project_y(y + eta_y * gy)
            return x, y
        monkeypatch.setattr(minimax, "local_gda", local_gda)
    elif mutation == "anchor_weight_off":  # l off by a relative 1e-8, 10x REPLAY_RTOL: the run deviates by 2.8e-8
        def stochastic_grads(self, batch, x, y, noise):
            gx, gy = self.problem.stochastic_grads(batch, x, y, noise)
            return gx + (2 * self.weight * (1 + 10 * rp.REPLAY_RTOL)) * (x - self.anchor[:, None, :]), gy
        monkeypatch.setattr(minimax.Anchored, "stochastic_grads", stochastic_grads)
    elif mutation == "sum_not_mean":  # the local models summed over the m clients, not averaged
        def local_gda(*a, **kw):
            x, y = original(*a, **kw)
            return x * x.shape[1], y * y.shape[1]
        monkeypatch.setattr(minimax, "local_gda", local_gda)
    elif mutation == "alternating_at_old_x":  # Smoothed-AGDA's y-gradient at the old x
        monkeypatch.setattr(minimax, "local_gda", lambda *a, **kw: original(*a[:8], "simultaneous", **kw))


@pytest.mark.parametrize("name, mutation", [
    ("fess_gda", "divided_step"), ("fess_gda_two_phase", "anchor_weight_off"), ("fess_gda", "sum_not_mean"),
    ("smoothed_agda", "alternating_at_old_x")])
def test_plausible_bugs_fail(monkeypatch, name, mutation):
    _patch(monkeypatch, mutation)
    outcome = _decide(CLAIM[name])
    assert outcome.verdict == Verdict.FAIL, outcome.reason


def test_a_run_that_left_the_finite_numbers_deviates_without_bound():
    """A claim drops non-finite samples as diverged replicas (an INCONCLUSIVE); the replay's iterates are finite, so
    a run with an infinite or NaN measure is given the finite stand-in UNBOUNDED, which fails the tolerance."""
    config = CLAIM["fess_gda"].configure(rp.REPLAY_T, PROFILE)
    trace = run_config(config)
    assert np.all(rp.replay_deviation(config, trace) <= rp.REPLAY_RTOL)
    measures = {name: values.copy() for name, values in trace.measures.items()}
    measures["stat_sq"][-1, 1] = np.inf
    deviation = rp.replay_deviation(config, dataclasses.replace(trace, measures=measures))
    assert np.all(deviation == rp.UNBOUNDED) and rp.UNBOUNDED > rp.REPLAY_RTOL
