"""DeFedAvg's composed-local-steps oracle: its run really takes exact mode's composed path (K local steps
composed from one by squaring, unequal halves), it passes at round-off on the code, and plausible slips in
the composition turn it into a FAIL (monkeypatched); the client_noise_quadratic family it runs on."""

import numpy as np
import pytest

from ratecheck.exact import local_steps
from ratecheck.inspection import problem_of
from ratecheck.problems import make_problem
from ratecheck.proofs.defedavg import oracles_scale
from ratecheck.registry import make_algorithm
from ratecheck.testing import oracles as kit
from ratecheck.testing.oracles import PROFILE

CLAIM = oracles_scale.SCALE


def _run_parts():
    config = CLAIM.configure(oracles_scale.SCALE_T, PROFILE)
    return config, make_algorithm(config.algorithm, config.params), problem_of(config)


def test_the_instance_has_every_factor_non_trivial():
    config, algorithm, prob = _run_parts()
    K, N, d = algorithm.local_steps, prob.num_clients, prob.dim
    assert K & (K - 1) and K > 4  # not a power of two: the squaring composes unequal halves (1 then 2, 3 then 4)
    assert N * d * d * (K * (d + 1) + K * K * d) > local_steps.COMPOSE_WORK  # client_maps' condition to compose
    assert local_steps.local_step_count(algorithm) == K
    assert prob.hessians.ndim == 3 and np.ptp(prob.hessians, axis=0).max() > 0.1  # per-client curvature
    assert np.ptp(prob.noise_levels) > 0.3 and np.ptp(prob.centers) > 0  # per-client noise levels, centres
    assert config.params["eta_global"] != 1 and config.params["participation"] == "full"
    assert config.params["delay"] == "none"  # with full participation a round has one outcome


def test_the_run_takes_the_composed_path(monkeypatch):
    """Spy on composed_client_maps: called by client_maps, and its maps (not None: the check against the
    K-step code held) are the ones the run used."""
    calls = []
    original = local_steps.composed_client_maps

    def spy(*args, **kwargs):
        maps = original(*args, **kwargs)
        calls.append(maps is not None)
        return maps

    monkeypatch.setattr(local_steps, "composed_client_maps", spy)
    outcome = kit.assert_passes(CLAIM)
    assert calls == [True], calls
    assert outcome.evidence["exact"] is True


def test_the_oracle_matches_the_direct_probe_and_the_composition_at_round_off():
    """Both of exact mode's paths against the oracle's client jobs, client by client."""
    _, algorithm, prob = _run_parts()
    direct = local_steps.client_maps(algorithm, prob, compose=False)
    composed = local_steps.composed_client_maps(algorithm, prob)
    assert composed is not None
    d = prob.dim
    for i in range(prob.num_clients):
        A, b, cov = oracles_scale.local_job(prob.hessians[i], prob.centers[i], prob.noise_levels[i],
                                            algorithm.eta_local, algorithm.local_steps)
        for maps in (direct, composed):  # Delta_i = start - end = (I - A) x - b + noise
            assert np.allclose(maps.A[i], np.eye(d) - A, rtol=0, atol=1e-13)
            assert np.allclose(maps.b[i], -b, rtol=0, atol=1e-13)
            assert np.allclose(maps.cov[i], cov, rtol=0, atol=1e-15)


test_oracle_passes_on_the_code = kit.passes_on_the_code(oracles_scale.CLAIMS)


def _then_cov_through_first(first, second):  # T1 S1 T1^T + S2: right only for equal halves (K a power of 2)
    (T1, c1, S1), (T2, c2, S2) = first, second
    return T2 @ T1, (T2 @ c1[..., None])[..., 0] + c2, T1 @ S1 @ T1.transpose(0, 2, 1) + S2


def _then_cov_not_propagated(first, second):  # S1 + S2: the first half's noise not stepped through the second
    (T1, c1, S1), (T2, c2, S2) = first, second
    return T2 @ T1, (T2 @ c1[..., None])[..., 0] + c2, S1 + S2


def _uniform_noise(self, batch, w, noise):  # every client at the largest level sigma (sigma_i dropped)
    return self.local_grad(batch, w) + self.sigma / np.sqrt(self.dim) * noise.normal(w.shape[1:])


@pytest.mark.parametrize("mutation", ["then_cov_through_first", "then_cov_not_propagated", "uniform_noise"])
def test_plausible_bugs_fail(monkeypatch, mutation):
    if mutation == "uniform_noise":
        from ratecheck.problems.client_noise_quadratic import ClientNoiseQuadratic
        monkeypatch.setattr(ClientNoiseQuadratic, "stochastic_grad", _uniform_noise)
    else:
        monkeypatch.setattr(local_steps, "_then", globals()[f"_{mutation}"])
    kit.assert_fails(CLAIM, mutation)


def test_client_noise_family():
    prob = make_problem("client_noise_quadratic", {"dim": 4, "clients": 3, "sigma": 0.8, "noise_spread": 4.0})
    base = make_problem("quadratic", {"dim": 4, "clients": 3, "sigma": 0.8, "mu": 0.5, "L": 1.0, "zeta": 0.5,
                                      "heterogeneity": "random", "curvature": "per_client"})
    assert np.allclose(prob.noise_levels, [0.8, 0.4, 0.2]) and prob.constants()["sigma"].value == 0.8
    assert np.array_equal(prob.hessians, base.hessians) and np.array_equal(prob.centers, base.centers)
    # E||xi||^2 = sigma_i^2 per client, from the oracle's own draws (fixed seed, 3 x 4000 draws: 5% is 4.5 sd)
    from ratecheck.seeding import Streams
    clients = np.tile(np.arange(3), 4000)[None]
    batch = prob.gather(clients)
    w = np.zeros((1, clients.shape[1], 4))
    xi = prob.stochastic_grad(batch, w, Streams(0, "0123456789abcdef" * 4, [0])["noise"]) - prob.local_grad(batch, w)
    assert np.allclose((xi[0]**2).sum(-1).reshape(4000, 3).mean(0), prob.noise_levels**2, rtol=0.05)
    with pytest.raises(ValueError, match="noise_levels"):
        type(prob)(hessians=prob.hessians, centers=prob.centers, sigma=0.8, x0=prob.x0, radius=0.0,
                   spec_params={}, noise_levels=np.array([0.5, 0.4, 0.2]))
