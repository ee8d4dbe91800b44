"""Trajectory oracles of FedBiOAcc-Local, MRBO and StocBiO (issue #23 item 2): they pass on the code, and plausible
single bugs (fresh samples at the two STORM points, omega averaged at a sync, b_y = b instead of b M, a cold start of
StocBiO's inner loop, the first batch's size ignored) turn them into a FAIL (monkeypatched)."""

import numpy as np

from ratecheck.algorithms import fedbio as fedbio_alg
from ratecheck.proofs.fedbio import oracles_baselines
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

BY_NAME = kit.by_name(oracles_baselines.CLAIMS)

test_oracles_pass_on_the_code = kit.passes_on_the_code(oracles_baselines.CLAIMS)


def test_the_instance_has_every_factor_non_trivial():
    steps = oracles_baselines.CASES["fedbioacc_local"]["steps"]
    assert steps["I"] > 1 and steps["b"] > 1 and steps["b1"] not in (1, steps["b"]) and steps["c_nu"] != steps["c_om"]
    config = BY_NAME["fedbioacc_local"].configure(45, PROFILE)
    assert config.problem_params["s_H"] > 0 and config.problem_params["s_B"] > 0 and config.problem_params["clients"] > 1
    assert config.problem_params["sigma_f"] not in (0, 1) and config.problem_params["sigma_g"] not in (0, 1)


def _patch(monkeypatch, mutation):
    if mutation == "fresh_pair":  # two independent minibatches at the new and the old point
        def sample_pair(self, problem, noise, shape, batch, **kw):
            return problem.draw(noise, shape, batch, **kw), problem.draw(noise, shape, batch, **kw)
        monkeypatch.setattr(fedbio_alg.StormFields, "sample_pair", sample_pair)
    elif mutation == "omega_averaged":  # the client's lower-level momentum averaged at a sync
        original = fedbio_alg.FedBiOAccLocal.round

        def round_(self, state, problem, t, streams):
            new, costs = original(self, state, problem, t, streams)
            if self.sync(t + 1):
                new.momenta["om"] = fedbio_alg.average(new.momenta["om"])
            return new, costs
        monkeypatch.setattr(fedbio_alg.FedBiOAccLocal, "round", round_)
    elif mutation == "cold_inner_start":  # StocBiO's D inner steps from y = 0 instead of the last y^D
        original = fedbio_alg.StocBiO.round

        def round_(self, state, problem, t, streams):
            return original(self, fedbio_alg.ClientsState(state.x, np.zeros_like(state.y)), problem, t, streams)
        monkeypatch.setattr(fedbio_alg.StocBiO, "round", round_)
    elif mutation == "first_batch_b":  # the first batch drawn with b instead of b1
        original = fedbio_alg.FedBiOAccLocal.init

        def init(self, problem, streams):
            import dataclasses
            return original(dataclasses.replace(self, b1=self.b), problem, streams)
        monkeypatch.setattr(fedbio_alg.FedBiOAccLocal, "init", init)


test_plausible_bugs_fail = kit.bugs_fail(oracles_baselines.CLAIMS, _patch, [
    ("fresh_pair", "fedbioacc_local"), ("omega_averaged", "fedbioacc_local"), ("cold_inner_start", "stocbio"),
    ("first_batch_b", "mrbo_like")])
