"""The trajectory oracles of FESS-GDA's variants and baselines (issue #23 item 2): each passes on the code, and a
plausible single bug in the role swap's start, the anchor's gradient, FedGDA-GT's correction or Smoothed-AGDA's
order turns it into a FAIL (monkeypatched)."""

import numpy as np

from ratecheck.algorithms import minimax
from ratecheck.proofs.fessgda import oracles_variants as ov
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

CLAIM = kit.by_name(ov.CLAIMS)

test_oracles_pass_on_the_code = kit.passes_on_the_code(ov.CLAIMS)


def test_the_instances_have_every_factor_non_trivial():
    inst = ov.Instance(CLAIM["fess_gda_two_phase"].configure(ov.ORACLE_T, PROFILE))
    assert inst.s not in (0, 1) and np.ptp(inst.v) > 0 and np.ptp(inst.J[:, 0, 0]) > 0  # noise, offsets, curvature
    assert not np.allclose(inst.v0[inst.X], inst.v0[inst.Y])  # z_0 = x_0 and z_0 = y_0 differ
    two = ov.RUNS["fess_gda_two_phase"]
    assert 0 < two["phase1_rounds"] < ov.ORACLE_T and two["local_steps_2"] != two["local_steps"]
    assert ov.RUNS["fedgda_gt"]["local_steps"] > 1 and ov.RUNS["smoothed_agda"]["p"] > 0


def _patch(monkeypatch, mutation):
    original = minimax.local_gda
    if mutation == "swap_keeps_z0_at_x0":  # the swapped run's z starts at x_0 although it anchors y
        monkeypatch.setattr(minimax.FessGDASwapped, "init", minimax.FessGDA.init)
    elif mutation == "anchor_gradient_halved":  # grad of w ||x - x~||^2 taken as w (x - x~)
        def stochastic_grads(self, batch, x, y, noise):
            gx, gy = self.problem.stochastic_grads(batch, x, y, noise)
            return gx + self.weight * (x - self.anchor[:, None, :]), gy
        monkeypatch.setattr(minimax.Anchored, "stochastic_grads", stochastic_grads)
    elif mutation == "tracking_sign":  # grad f_i(w_t) - grad f(w_t) added instead of subtracted
        def local_gda(*a, correction=None, **kw):
            flipped = None if correction is None else (-correction[0], -correction[1])
            return original(*a, correction=flipped, **kw)
        monkeypatch.setattr(minimax, "local_gda", local_gda)
    elif mutation == "simultaneous":  # Smoothed-AGDA's y-gradient at the old x
        monkeypatch.setattr(minimax, "local_gda", lambda *a, **kw: original(*a[:8], "simultaneous", **kw))


test_plausible_bugs_fail = kit.bugs_fail(ov.CLAIMS, _patch, [
    ("swap_keeps_z0_at_x0", "fess_gda_swapped"), ("anchor_gradient_halved", "fess_gda_two_phase"),
    ("tracking_sign", "fedgda_gt"), ("simultaneous", "smoothed_agda")])
