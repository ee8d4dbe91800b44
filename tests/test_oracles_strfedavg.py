"""StR-FedAvg's trajectory oracle (issue #23 item 2): it passes on the code, and plausible single bugs in the output
weights, Theorem 1's schedule or the server step turn it into a FAIL (monkeypatched)."""

import math

import numpy as np

from ratecheck.algorithms import strfedavg as alg
from ratecheck.claims import Verdict
from ratecheck.proofs.strfedavg import oracles
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

test_oracles_pass_on_the_code = kit.passes_on_the_code([oracles.ORACLE, oracles.TIKHONOV])


def test_selection_margin_is_observed_with_its_numbers():
    outcome = kit.decide(oracles.SELECTION_MARGIN)
    assert outcome.verdict == Verdict.OBSERVED
    observed = outcome.evidence["observed"]
    assert 0 < observed["distance_over_gap"] < observed["allowance"] / observed["gap_Pi_x0_to_x_star"]


def test_tikhonov_fails_on_uniform_output_weights(monkeypatch):
    _patch(monkeypatch, "uniform_output")
    kit.assert_fails(oracles.TIKHONOV, "uniform_output")


def test_the_instance_has_every_factor_non_trivial():
    config = oracles.oracle_config(oracles.ORACLE_T, PROFILE)
    prob = oracles.problem_of(config)
    assert prob.sigma not in (0, 1) and prob.sigma_f not in (0, 1) and prob.h_star > 0  # inconsistent system
    steps = oracles.ORACLE_STEPS
    assert steps["local_steps"] > 1 and steps["gamma_g"] > 1 and steps["p"] > 1
    assert int(steps["participation"].split(":")[1]) < prob.num_clients
    assert np.ptp(np.asarray(prob.outer.q), axis=0).max() > 0  # heterogeneous centres


def _patch(monkeypatch, mutation):
    if mutation == "uniform_output":  # the plain average of x^0..x^{R-1} instead of the theta weights
        monkeypatch.setattr(alg.StRFedAvg, "output_weight", lambda self, theta, r: 1.0)
    elif mutation == "eta_without_log":  # eta = p/(mu_f R)^b: the ln R of Theorem 1 dropped
        original = alg.StRFedAvg.parameters

        def parameters(self, problem):
            out = dict(original(self, problem))
            out["eta"] /= math.log(self.horizon)
            return out
        monkeypatch.setattr(alg.StRFedAvg, "parameters", parameters)
    elif mutation == "no_server_step":  # gamma_g dropped from the server update (but kept in gamma_l)
        original = alg.federated_round
        monkeypatch.setattr(alg, "federated_round", lambda *a, **kw: original(*a, **{**kw, "gamma_global": 1.0}))


test_plausible_bugs_fail = kit.bugs_fail(oracles.CLAIMS, _patch, [
    (mutation, kit.short_name(oracles.ORACLE)) for mutation in ("uniform_output", "eta_without_log", "no_server_step")])
