"""FESS-GDA's trajectory oracle (issue #23 item 2): it passes on the code, and plausible single bugs in the local
steps' order, their count or the noise scale turn it into a FAIL (monkeypatched)."""

import numpy as np

from ratecheck.algorithms import minimax
from ratecheck.problems.minimax.base import MinimaxProblem
from ratecheck.proofs.fessgda import oracles
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

test_oracles_pass_on_the_code = kit.passes_on_the_code(oracles.CLAIMS)


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


test_plausible_bugs_fail = kit.bugs_fail(oracles.CLAIMS, _patch, [
    (mutation, kit.short_name(oracles.ORACLE)) for mutation in ("alternating", "one_step_less", "noise_per_block")])
# the special cases (FSGDA, Local SGDA, SGDA) see the noise-scale bug too
test_special_cases_fail_on_a_noise_scale_bug = kit.bugs_fail(oracles.CLAIMS, _patch, [
    ("noise_per_block", kit.short_name(claim)) for claim in oracles.CLAIMS[1:]])
