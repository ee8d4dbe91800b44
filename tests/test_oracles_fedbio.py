"""FedBiO's trajectory oracle and absolute floor (issue #23 items 2, 6): they pass on the code, and plausible
single bugs in the algorithm or the problem's oracles turn them into a FAIL (the mutations are applied by
monkeypatching, the claims decided on the mutated runs)."""

import numpy as np

from ratecheck.algorithms import fedbio as fedbio_alg
from ratecheck.problems.quadratic_bilevel import FedBilevel
from ratecheck.proofs.fedbio import oracles
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

test_oracle_and_floor_pass_on_the_code = kit.passes_on_the_code(oracles.CLAIMS)


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


def _patch(monkeypatch, mutation):
    if mutation == "batch_scale":
        monkeypatch.setattr(FedBilevel, "draw", _unscaled_draw(FedBilevel.draw))
    elif mutation == "gauss_seidel":  # u's direction read at the NEW y (sequential, not Jacobi: pitfall 1)
        original = fedbio_alg.FedBiO.u_direction

        def u_direction(self, problem, x, y, u, sample):
            return original(self, problem, x, y - self.gamma * problem.grad_y_g(x, y, sample), u, sample)
        monkeypatch.setattr(fedbio_alg.FedBiO, "u_direction", u_direction)
    elif mutation == "no_u_average":  # a sync that averages x and y but forgets u
        calls = {"n": 0}
        average = fedbio_alg.average

        def forgetful(z):
            calls["n"] += 1
            return z.copy() if calls["n"] % 3 == 0 else average(z)
        monkeypatch.setattr(fedbio_alg, "average", forgetful)
    elif mutation == "jacobian_sign":  # grad_xy g = +B^T instead of -B^T
        jvp = FedBilevel.jvp
        monkeypatch.setattr(FedBilevel, "jvp", lambda self, x, y, u, s: -jvp(self, x, y, u, s))
    elif mutation == "fresh_second_sample":  # STORM's old point evaluated on another sample (pitfall 2)
        def sample_pair(self, problem, noise, shape, batch, **kw):
            return problem.draw(noise, shape, batch, **kw), problem.draw(noise, shape, batch, **kw)
        monkeypatch.setattr(fedbio_alg.StormFields, "sample_pair", sample_pair)
    elif mutation == "weight_linear_in_alpha":  # 1 - c alpha_t instead of 1 - c alpha_t^2
        storm = fedbio_alg.storm
        monkeypatch.setattr(fedbio_alg, "storm", lambda new, old, momentum, weight:
                            storm(new, old, momentum, 1 - np.sqrt(1 - weight) * 0.5))
    elif mutation == "one_neumann_term_less":
        original = fedbio_alg.neumann_chain
        monkeypatch.setattr(fedbio_alg, "neumann_chain",
                            lambda seams, problem, x, y, sample, Q: original(seams, problem, x, y, sample, Q - 1))


# the absolute floor sees a noise-scale bug that keeps every slope
test_plausible_bugs_fail = kit.bugs_fail(oracles.CLAIMS, _patch, [
    *[(mutation, "fedbio") for mutation in ("batch_scale", "gauss_seidel", "no_u_average", "jacobian_sign")],
    ("batch_scale", "noise_floor_value")])
test_fedbioacc_bugs_fail = kit.bugs_fail(oracles.CLAIMS, _patch, [
    (mutation, "fedbioacc") for mutation in ("fresh_second_sample", "weight_linear_in_alpha", "batch_scale")])
test_fedbio_local_oracle = kit.bugs_fail(oracles.CLAIMS, _patch, [
    (mutation, "fedbio_local") for mutation in ("one_neumann_term_less", "batch_scale")])


def test_s14_fails_on_a_noise_scale_bug_that_keeps_the_decrease(monkeypatch):
    """Issue #23: S14 passed on 'strictly decreasing' alone; a noise-scale bug keeps the decrease, the values
    against Algorithm 2's recursion do not."""
    from ratecheck.proofs.fedbio.acceleration import S14

    _patch(monkeypatch, "batch_scale")
    outcome = kit.assert_fails(S14, "batch_scale")
    assert outcome.evidence["monotone"] and "recursion" in outcome.reason
