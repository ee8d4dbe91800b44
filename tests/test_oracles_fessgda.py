"""FESS-GDA's trajectory oracle (issue #23 item 2): it passes on the code, and plausible single bugs in the local
steps' order, their count or the noise scale turn it into a FAIL (monkeypatched)."""

import numpy as np
import pytest

from ratecheck.algorithms import minimax
from ratecheck.claims import PROFILES, Verdict
from ratecheck.problems.minimax.base import MinimaxProblem
from ratecheck.proofs.fessgda import oracles
from ratecheck.runner.sweep import check_claims

PROFILE = PROFILES["quick"]


def _decide(claim):
    return check_claims([claim], PROFILE, progress=False)[0]


@pytest.mark.parametrize("claim", oracles.CLAIMS, ids=lambda c: c.id)
def test_oracles_pass_on_the_code(claim):
    outcome = _decide(claim)
    assert outcome.verdict == Verdict.PASS, outcome.reason
    assert outcome.evidence["exact"] is True


@pytest.mark.parametrize("claim", oracles.CLAIMS[1:], ids=lambda c: c.id)
def test_special_cases_fail_on_a_noise_scale_bug(monkeypatch, claim):
    _patch(monkeypatch, "noise_per_block")
    outcome = _decide(claim)
    assert outcome.verdict == Verdict.FAIL, outcome.reason


def test_the_instance_has_every_factor_non_trivial():
    prob = oracles.problem_of(oracles.oracle_config(oracles.ORACLE_T, PROFILE))
    assert np.any(prob.spread) and np.ptp(prob.offsets) > 0 and prob.noise not in (0, 1)
    steps = oracles.ORACLE_STEPS
    assert steps["local_steps"] > 1 and steps["p"] > 0 and 1.0 not in (steps["eta_x_global"], steps["eta_y_global"])
    assert int(steps["participation"].split(":")[1]) < prob.num_clients


def _patch(monkeypatch, mutation):
    original = minimax.local_gda
    if mutation == "alternating":  # the y-gradient at the new x (Smoothed-AGDA's order, pitfall P2)
        monkeypatch.setattr(minimax, "local_gda", lambda *a, **kw: original(*a, **{**kw, "updates": "alternating"})
                            if len(a) < 9 else original(*a[:8], "alternating", **kw))
    elif mutation == "one_step_less":
        monkeypatch.setattr(minimax, "local_gda", lambda problem, batch, x, y, steps, *a, **kw:
                            original(problem, batch, x, y, steps - 1, *a, **kw))
    elif mutation == "noise_per_block":  # s / sqrt(d1 + d2) per coordinate instead of s
        def stochastic_grads(self, batch, x, y, noise):
            gx, gy = self.local_grads(batch, x, y)
            xi = noise.normal((*x.shape[1:-1], self.dim)) * self.noise / np.sqrt(self.dim)
            return gx + xi[..., : self.dim_x], gy + xi[..., self.dim_x:]
        monkeypatch.setattr(MinimaxProblem, "stochastic_grads", stochastic_grads)


@pytest.mark.parametrize("mutation", ["alternating", "one_step_less", "noise_per_block"])
def test_plausible_bugs_fail(monkeypatch, mutation):
    _patch(monkeypatch, mutation)
    outcome = _decide(oracles.ORACLE)
    assert outcome.verdict == Verdict.FAIL, (mutation, outcome.reason)
