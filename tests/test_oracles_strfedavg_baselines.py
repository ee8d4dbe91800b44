"""The trajectory oracles of StR-FedAvg's baselines (issue #23 item 2): each passes on the code, and a plausible single
bug in SCAFFOLD's correction, the noise scale, IR-SGD's step index, the outer step or IPIR's inner horizon turns it
into a FAIL (monkeypatched)."""

import numpy as np

from ratecheck.algorithms import strfedavg as alg
from ratecheck.problem import CompositeFederatedProblem
from ratecheck.proofs.strfedavg import oracles_baselines as ob
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

# IPIR-FedAvg's replay is decided on Monte-Carlo replicas, the others on their exact recursions
test_oracles_pass_on_the_code = kit.passes_on_the_code(ob.CLAIMS, inexact={"ipir_fedavg_replay"})


def test_the_instances_have_every_factor_non_trivial():
    config = ob.SCAFFOLD.configure(ob.SCAFFOLD_T, PROFILE)
    prob = ob.problem_of(config)
    assert prob.sigma not in (0, 1) and prob.sigma_f not in (0, 1) and prob.h_star > 0
    steps = ob.RUNS["scaffold"]
    assert steps["local_steps"] > 1 and steps["gamma_g"] > 1 and steps["eta"] != 1
    assert int(steps["participation"].split(":")[1]) < prob.num_clients
    geo = ob.Geometry.of(ob.EXACT_PROJECTION.configure(60, PROFILE))
    assert np.linalg.eigvalsh(geo.P).min() < 0 < np.linalg.eigvalsh(geo.P).max()  # Q_f indefinite (TP3b)
    ipir = ob.IPIR.configure(12, PROFILE)
    assert ipir.mode == "monte_carlo" and ipir.replicas > 1 and ipir.params["local_steps"] > 1


def _patch(monkeypatch, mutation):
    if mutation == "scaffold_without_correction":  # the local steps ignore c - c_i (FedAvg's step)
        original = alg.local_sgd
        eta = ob.RUNS["scaffold"]["eta"]
        monkeypatch.setattr(alg, "local_sgd", lambda problem, batch, start, K, lr, noise, oracle: original(
            problem, batch, start, K, lr, noise, lambda b, w, n: problem.composite_grad(b, w, eta, n)))
    elif mutation == "noise_without_sqrt_d":  # xi ~ N(0, sigma^2 I) instead of N(0, sigma^2/d I)
        def stochastic_grad(self, batch, w, noise):
            return self.local_grad(batch, w) + noise.normal(w.shape[1:]) * self.sigma
        monkeypatch.setattr(CompositeFederatedProblem, "stochastic_grad", stochastic_grad)
    elif mutation == "ir_sgd_index_shift":  # gamma_k = gamma_0 (k+2)^-a: the schedule one step ahead
        original = alg.IRSGD.round
        monkeypatch.setattr(alg.IRSGD, "round", lambda self, state, problem, t, streams:
                            original(self, state, problem, t + 1, streams))
    elif mutation == "outer_step_plus_one":  # gamma = lam/(4(L_f lam + 1)) for lam/(4(L_f lam + 2))
        def resolved_gamma(self, problem):
            lam = self.resolved_lam(problem)
            return lam / (4 * (float(problem.constants()["L_f"].value) * lam + 1))
        monkeypatch.setattr(alg.IPIRFedAvg, "resolved_gamma", resolved_gamma)
    elif mutation == "ipir_one_inner_round_less":  # R_t = t + R0 - 1 inner rounds
        original = alg.IPIRFedAvg.inner_schedule
        monkeypatch.setattr(alg.IPIRFedAvg, "inner_schedule", lambda self, t: original(self, t - 1))


test_plausible_bugs_fail = kit.bugs_fail(ob.CLAIMS, _patch, [
    (mutation, kit.short_name(claim)) for claim, mutation in [
        (ob.SCAFFOLD, "scaffold_without_correction"), (ob.SCAFFOLD, "noise_without_sqrt_d"),
        (ob.IR_SGD, "ir_sgd_index_shift"),
        (ob.EXACT_PROJECTION, "outer_step_plus_one"), (ob.IPIR, "outer_step_plus_one"),
        (ob.IPIR, "ipir_one_inner_round_less")]])
