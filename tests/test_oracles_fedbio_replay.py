"""FedBiO's noisy replays (proofs/fedbio/oracles_replay.py): every factor non-trivial, round-off on the code as it is,
and plausible bugs that exact mode refuses (Hessian noise) and the Monte-Carlo claims' tolerances absorb, each a FAIL:
every Neumann factor reading the first Hessian draw (held-out bug 24), the b_x copies sharing one Jacobian draw,
STORM's old point evaluated on the previous iteration's batch (a cached old gradient), and a minibatch's Hessian noise
not divided by sqrt(b)."""

import dataclasses

import numpy as np

from ratecheck.algorithms import fedbio
from ratecheck.claims import PROFILES
from ratecheck.inspection import problem_of
from ratecheck.problems.fedbio_problem import FedBilevel
from ratecheck.proofs.fedbio import oracles_replay as rp
from ratecheck.simulate.engine import run_config
from ratecheck.testing import oracles as kit

NAMES = tuple(kit.by_name(rp.CLAIMS))

test_noisy_replays_pass_on_the_code = kit.passes_on_the_code(rp.CLAIMS, inexact=NAMES)


def _deviation(name: str) -> float:
    config = kit.by_name(rp.CLAIMS)[name].configure(rp.REPLAY_T, PROFILES["quick"])
    return float(np.max(rp.replay_deviation(config, run_config(config))))


def test_every_factor_is_non_trivial():
    for name in NAMES:
        config = kit.by_name(rp.CLAIMS)[name].configure(rp.REPLAY_T, PROFILES["quick"])
        prob, k = problem_of(config), config.params
        assert config.mode == "monte_carlo" and config.replicas > 1 and prob.dim_x != prob.dim_y
        if config.algorithm == "stocbio":  # the centralized reference: one client, D inner steps
            assert prob.num_clients == 1 and k["D"] > 1
        else:
            assert k["I"] > 1 and np.ptp(prob.A, axis=0).max() > 0.1 and np.ptp(prob.B, axis=0).max() > 0.1
        assert all(0 < v != 1 for v in rp.NOISES.values()) and all(config.problem_params[n] == v
                                                                     for n, v in rp.NOISES.items())
        if "Q" in k:
            assert k["Q"] >= 3 and 0 < k["tau_N"] < 1 / prob.constants()["L"].value
            assert k.get("bx", k.get("b")) > 1  # several copies of eq. (6), or factors of several samples
        else:
            assert k.get("bx", k.get("b")) > 1 and k["tau"] != 1
        assert _deviation(name) < 1e-3 * rp.REPLAY_RTOL  # measured round-off sits far below the tolerance


def _patch(monkeypatch, mutation):
    if mutation == "shared_hessian_draw":  # benchmarks/heldout/24: every factor reads the draw 0
        def factor(self, problem, x, y, v, sample, k):
            return v - self.tau_N * problem.hvp(x, y, v, sample, 0)
        for cls in (fedbio.NeumannFields, fedbio.StocBiO):  # StocBiO holds the same function (a class attribute)
            monkeypatch.setattr(cls, "neumann_factor", factor)
    elif mutation == "copies_share_jacobian":  # the b_x copies apply copy 0's Jacobian draw
        original = fedbio.NeumannFields.neumann_finish

        def finish(self, problem, x, y, total, sample):
            if sample.J is not None and x.ndim == 4:
                sample = dataclasses.replace(sample, J=np.broadcast_to(sample.J[:, :, :1], sample.J.shape))
            return original(self, problem, x, y, total, sample)
        monkeypatch.setattr(fedbio.NeumannFields, "neumann_finish", finish)
    elif mutation == "hessian_batch_unscaled":  # a minibatch's Hessian noise not averaged: sigma_H, not sigma_H/sqrt(b)
        draw = FedBilevel.draw

        def unscaled(self, noise, shape, batch=1, *args, **kw):
            s = draw(self, noise, shape, batch, *args, **kw)
            return s if s.H is None else dataclasses.replace(s, H=s.H * np.sqrt(batch))
        monkeypatch.setattr(FedBilevel, "draw", unscaled)
    elif mutation == "storm_cached_old_sample":  # STORM's old point on the previous iteration's batch (a stored old
        previous = {}  # gradient), not on the fresh one

        def sample_pair(self, problem, noise, shape, batch, **kw):
            key = (shape, batch, tuple(sorted(kw.items())))
            s = problem.draw(noise, shape, batch, **kw)
            old, previous[key] = previous.get(key, s), s
            return s, old
        monkeypatch.setattr(fedbio.StormFields, "sample_pair", sample_pair)


test_plausible_bugs_fail = kit.bugs_fail(rp.CLAIMS, _patch, [
    ("shared_hessian_draw", "fedbio_local_noisy_replay"), ("shared_hessian_draw", "fedbioacc_local_noisy_replay"),
    ("shared_hessian_draw", "fedbio_local_per_factor_noisy_replay"), ("shared_hessian_draw", "stocbio_noisy_replay"),
    ("copies_share_jacobian", "fedbio_local_noisy_replay"), ("copies_share_jacobian", "fedbioacc_local_noisy_replay"),
    ("storm_cached_old_sample", "fedbioacc_local_noisy_replay"), ("storm_cached_old_sample", "fedbioacc_noisy_replay"),
    ("hessian_batch_unscaled", "fedbio_noisy_replay"), ("hessian_batch_unscaled", "fedbioacc_noisy_replay"),
    ("hessian_batch_unscaled", "fedbio_local_per_factor_noisy_replay"), ("hessian_batch_unscaled", "stocbio_noisy_replay")])


def test_the_shared_hessian_draw_moves_the_run_far_beyond_round_off(monkeypatch):
    _patch(monkeypatch, "shared_hessian_draw")
    assert _deviation("fedbio_local_noisy_replay") > 1e-4  # O(tau_N sigma_H) per factor, not a round-off effect
