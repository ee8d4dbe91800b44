"""FedBiO's trajectory oracle and absolute floor (issue #23 items 2, 6): they pass on the code, and plausible
single bugs in the algorithm or the problem's oracles turn them into a FAIL (the mutations are applied by
monkeypatching, the claims decided on the mutated runs)."""

import numpy as np
import pytest

from ratecheck.algorithms import fedbio as fedbio_alg
from ratecheck.claims import PROFILES, Verdict
from ratecheck.problems.quadratic_bilevel import FedBilevel
from ratecheck.proofs.fedbio import oracles
from ratecheck.runner.sweep import check_claims

PROFILE = PROFILES["quick"]


def _decide(claim):
    return check_claims([claim], PROFILE, progress=False)[0]


def test_oracle_and_floor_pass_on_the_code():
    for claim in oracles.CLAIMS:
        outcome = _decide(claim)
        assert outcome.verdict == Verdict.PASS, outcome.reason
        assert outcome.evidence["exact"] is True


def test_the_instance_has_every_factor_non_trivial():
    config = oracles.oracle_config(oracles.ORACLE_T, PROFILE)
    prob = oracles.problem_of(config)
    assert np.ptp(prob.A, axis=0).max() > 0.1 and np.ptp(prob.B, axis=0).max() > 0.1  # heterogeneous
    p = config.params
    assert p["I"] > 1 and p["bx"] != p["by"] and p["bx"] > 1
    assert config.problem_params["sigma_f"] not in (0, 1) and config.problem_params["sigma_g"] not in (0, 1)


def _unscaled_draw(original):
    def draw(self, noise, shape, batch=1, *a, **kw):  # the minibatch's 1/sqrt(b) dropped
        return original(self, noise, shape, 1, *a, **kw)
    return draw


@pytest.mark.parametrize("mutation", ["batch_scale", "gauss_seidel", "no_u_average", "jacobian_sign"])
def test_plausible_bugs_fail(monkeypatch, mutation):
    if mutation == "batch_scale":
        monkeypatch.setattr(FedBilevel, "draw", _unscaled_draw(FedBilevel.draw))
    elif mutation == "gauss_seidel":  # u's direction read at the NEW y (sequential, not Jacobi: pitfall 1)
        original = fedbio_alg.FedBiO.u_direction

        def u_direction(self, problem, x, y, u, sample):
            return original(self, problem, x, y - self.gamma * problem.grad_y_g(x, y, sample), u, sample)
        monkeypatch.setattr(fedbio_alg.FedBiO, "u_direction", u_direction)
    elif mutation == "no_u_average":  # a sync that averages x and y but forgets u
        calls = {"n": 0}
        original = fedbio_alg.average

        def average(z):
            calls["n"] += 1
            return z.copy() if calls["n"] % 3 == 0 else original(z)
        monkeypatch.setattr(fedbio_alg, "average", average)
    else:  # grad_xy g = +B^T instead of -B^T
        original = FedBilevel.jvp

        def jvp(self, x, y, u, s):
            return -original(self, x, y, u, s)
        monkeypatch.setattr(FedBilevel, "jvp", jvp)
    outcome = _decide(oracles.ORACLE)
    assert outcome.verdict == Verdict.FAIL, (mutation, outcome.reason)
    if mutation == "batch_scale":  # the absolute floor sees a noise-scale bug that keeps every slope
        floor = _decide(oracles.FLOOR)
        assert floor.verdict == Verdict.FAIL, floor.reason


@pytest.mark.parametrize("mutation", ["fresh_second_sample", "weight_linear_in_alpha", "batch_scale"])
def test_fedbioacc_bugs_fail(monkeypatch, mutation):
    if mutation == "fresh_second_sample":  # STORM's old point evaluated on another sample (pitfall 2)
        def sample_pair(self, problem, noise, shape, batch, **kw):
            return problem.draw(noise, shape, batch, **kw), problem.draw(noise, shape, batch, **kw)
        monkeypatch.setattr(fedbio_alg.StormFields, "sample_pair", sample_pair)
    elif mutation == "weight_linear_in_alpha":  # 1 - c alpha_t instead of 1 - c alpha_t^2
        original = fedbio_alg.storm

        def storm(new, old, momentum, weight):
            return original(new, old, momentum, 1 - np.sqrt(1 - weight) * 0.5)
        monkeypatch.setattr(fedbio_alg, "storm", storm)
    else:
        monkeypatch.setattr(FedBilevel, "draw", _unscaled_draw(FedBilevel.draw))
    outcome = _decide(oracles.ACC_ORACLE)
    assert outcome.verdict == Verdict.FAIL, (mutation, outcome.reason)


def test_s14_fails_on_a_noise_scale_bug_that_keeps_the_decrease(monkeypatch):
    """Issue #23: S14 passed on 'strictly decreasing' alone; a noise-scale bug keeps the decrease, the values
    against Algorithm 2's recursion do not."""
    from ratecheck.proofs.fedbio.acceleration import S14

    monkeypatch.setattr(FedBilevel, "draw", _unscaled_draw(FedBilevel.draw))
    outcome = _decide(S14)
    assert outcome.verdict == Verdict.FAIL, outcome.reason
    assert outcome.evidence["monotone"] and "recursion" in outcome.reason


@pytest.mark.parametrize("mutation", ["none", "one_neumann_term_less", "batch_scale"])
def test_fedbio_local_oracle(monkeypatch, mutation):
    if mutation == "one_neumann_term_less":
        original = fedbio_alg.neumann_chain
        monkeypatch.setattr(fedbio_alg, "neumann_chain",
                            lambda seams, problem, x, y, sample, Q: original(seams, problem, x, y, sample, Q - 1))
    elif mutation == "batch_scale":
        monkeypatch.setattr(FedBilevel, "draw", _unscaled_draw(FedBilevel.draw))
    outcome = _decide(oracles.LOCAL_ORACLE)
    assert outcome.verdict == (Verdict.PASS if mutation == "none" else Verdict.FAIL), (mutation, outcome.reason)
