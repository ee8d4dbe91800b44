"""SimFBO's and ShroFBO's trajectory oracles (issue #23 item 2): they pass on the code, and plausible single bugs
in the weights, rho, the local coefficients or the Jacobi steps turn them into a FAIL (monkeypatched)."""

import numpy as np

from ratecheck.algorithms import bilevel
from ratecheck.proofs.simfbo import oracles
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

BY_NAME = kit.by_name(oracles.CLAIMS)

test_oracles_pass_on_the_code = kit.passes_on_the_code(oracles.CLAIMS)


def test_the_instance_has_every_factor_non_trivial():
    prob = oracles.problem_of(BY_NAME["simfbo"].configure(oracles.ORACLE_T, PROFILE))
    assert np.ptp(prob.p) > 0 and prob.A.ndim == 3 and np.ptp(prob.A, axis=0).max() > 0.05
    assert prob.sigma_f not in (0, 1) and prob.sigma_g not in (0, 1)
    steps = oracles.ORACLE_STEPS
    assert len(set(steps["local_steps"].split(":")[1].split(","))) > 1 and steps["coefficients"] != "constant"
    assert int(steps["participation"].split(":")[1]) < prob.num_clients


def _patch(monkeypatch, mutation):
    if mutation == "renormalized_weights":  # pt_i = p_i / sum_C p_j instead of (n/P) p_i (spec pitfall 4)
        def sampled_weights(problem, clients):
            w = problem.p[clients]
            return w / w.sum(axis=1, keepdims=True)
        monkeypatch.setattr(bilevel, "sampled_weights", sampled_weights)
    elif mutation == "rho_over_sampled":  # ShroFBO's rho over C instead of all n clients (pitfall 5)
        monkeypatch.setattr(bilevel.ShroFBO, "_factor", lambda self, p, norms_all, norms_c, weights:
                            (weights * norms_c).sum(axis=1)[:, None] / norms_c)
    elif mutation == "harmonic_off_by_one":
        original = bilevel.coefficient_table
        monkeypatch.setattr(bilevel, "coefficient_table", lambda kind, steps: original(kind, steps + 1)[1:])
    elif mutation == "one_local_step_less":
        original = bilevel.LocalSteps.sample
        monkeypatch.setattr(bilevel.LocalSteps, "sample", lambda self, n, s: np.maximum(original(self, n, s) - 1, 1))


test_plausible_bugs_fail = kit.bugs_fail(oracles.CLAIMS, _patch, [
    ("renormalized_weights", "simfbo"), ("rho_over_sampled", "shrofbo"), ("harmonic_off_by_one", "shrofbo"),
    ("one_local_step_less", "simfbo")])
