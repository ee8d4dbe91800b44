"""Trajectory oracles of the bilevel baselines (issue #23 item 2): they pass on the code, and plausible single
bugs (fresh samples in FedNest's SVRG difference, a rescaled model average, a renormalized weight, FedNova's
tau_eff over the sampled clients, Algorithm 3's N' or scale N/l off, the series where N' is random) turn them into a
FAIL (monkeypatched)."""

import numpy as np

from ratecheck.algorithms import bilevel, bilevel_baselines
from ratecheck.proofs.simfbo import oracles_baselines
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

BY_NAME = kit.by_name(oracles_baselines.CLAIMS)

test_oracles_pass_on_the_code = kit.passes_on_the_code(oracles_baselines.CLAIMS,
                                                     inexact=oracles_baselines.REPLAYS)  # replays: noise-free MC


def test_replays_draw_every_truncation():
    for name in oracles_baselines.REPLAYS:
        config = BY_NAME[name].configure(oracles_baselines.REPLAY_T, PROFILE)
        depths = oracles_baselines.truncation_depths(config)
        assert set(depths.ravel().tolist()) == set(range(int(config.params["neumann_terms"])))


def test_client_sets_enumerate_the_samplers():
    sets, probs = oracles_baselines.client_sets("with_replacement:3", 4)
    assert len(sets) == 64 and (0, 0, 1) in sets and np.isclose(probs.sum(), 1)
    sets, probs = oracles_baselines.client_sets("without_replacement:2", 4)
    assert len(sets) == 6 and np.isclose(probs.sum(), 1)


def _patch(monkeypatch, mutation):
    if mutation == "fresh_sample":  # two independent samples in FedNest's SVRG difference
        monkeypatch.setattr(bilevel_baselines._Replay, "replay", lambda self: None)
    elif mutation == "weighted_model_sum":  # sum_C pt_i y_i: rescales the model when sum_C pt_i != 1
        monkeypatch.setattr(bilevel_baselines, "_averaged", lambda w, start, local: bilevel.weighted_sum(w, local))
    elif mutation == "renormalized_weights":  # p_i / sum_C p_j instead of (n/P) p_i
        def sampled_weights(problem, clients):
            w = problem.p[clients]
            return w / w.sum(axis=1, keepdims=True)
        monkeypatch.setattr(bilevel_baselines, "sampled_weights", sampled_weights)
    elif mutation == "truncation_from_one":  # N' uniform on {1..N} instead of {0..N-1}
        real = bilevel_baselines.FedNest._random
        monkeypatch.setattr(bilevel_baselines.FedNest, "_random", lambda self, *a: real(self, *a[:-1], a[-1] + 1))
    elif mutation == "unscaled_estimate":  # p_N' without Algorithm 3's factor N/l
        real = bilevel_baselines.FedNest._random
        monkeypatch.setattr(bilevel_baselines.FedNest, "_random",
                            lambda self, *a: real(self, *a) / (self.neumann_terms * self.neumann_step))
    elif mutation == "series_default":  # the deterministic series where Algorithm 3 truncates at random
        monkeypatch.setattr(bilevel_baselines.FedNest, "_random", lambda self, *a: self._series(*a[:-1]))
    elif mutation == "anchor_without_correction":  # 'anchor' forgetting the aggregate (plain local SGD)
        real = bilevel_baselines.FedNest._corrected
        monkeypatch.setattr(bilevel_baselines.FedNest, "_corrected", lambda self, grad, local, point, correction,
                            anchor, noise: real(self, grad, local, point, 0.0, anchor, noise))
    elif mutation == "tau_eff_sampled":  # FedNova's tau_eff over C instead of all n clients
        monkeypatch.setattr(bilevel.ShroFBO, "_factor", lambda self, p, norms_all, norms_c, weights:
                            (weights * norms_c).sum(axis=1)[:, None] / norms_c)


test_plausible_bugs_fail = kit.bugs_fail(oracles_baselines.CLAIMS, _patch, [
    ("fresh_sample", "fednest"), ("weighted_model_sum", "lfednest"), ("renormalized_weights", "naive_hypergrad"),
    ("tau_eff_sampled", "fednova"), ("truncation_from_one", "fednest_random"),
    ("unscaled_estimate", "lfednest_random"), ("series_default", "fednest_random"),
    ("series_default", "lfednest_random"), ("anchor_without_correction", "fednest_anchor")])


def test_svrg_sample_anchor_is_the_named_deviation():
    """'anchor' (the earlier reading) matches 'shared' without noise and departs from the oracle with it."""
    from dataclasses import replace

    from ratecheck.simulate.engine import run_config

    claim = BY_NAME["fednest"]
    config = claim.configure(4, PROFILE)
    noise_free = {**config.problem_params, "sigma_f": 0.0, "sigma_g": 0.0}
    runs = {mode: run_config(replace(config, params={**config.params, "svrg_sample": mode}, problem_params=noise_free))
            for mode in ("shared", "anchor")}
    assert np.allclose(runs["shared"].measures["dist_sq"], runs["anchor"].measures["dist_sq"], rtol=1e-12)
    noisy = run_config(replace(config, params={**config.params, "svrg_sample": "anchor"}))
    want = oracles_baselines._oracle(config, np.asarray(noisy.checkpoints))["dist_sq"]
    assert np.max(np.abs(noisy.measures["dist_sq"][:, 0] - want) / want) > 1e-3
