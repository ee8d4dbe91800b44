"""Replay oracles of SimFBO and ShroFBO (issue #23): they pass on the code, replay every option they name, and
plausible single bugs in what exact mode cannot follow (the law of random step counts, ShroFBO's sampled rho,
the projection P_r and that of the start v0, geometric coefficients, the local_v_max monitor) turn them into a FAIL
(monkeypatched)."""

import dataclasses

import numpy as np
import pytest

from ratecheck.algorithms import bilevel
from ratecheck.claims import PROFILES, Verdict
from ratecheck.inspection import problem_of
from ratecheck.proofs.simfbo import oracles_replay
from ratecheck.runner.sweep import check_claims

PROFILE = PROFILES["quick"]
BY_NAME = {c.id.split(".")[2].removesuffix("_replay"): c for c in oracles_replay.CLAIMS}


def _decide(claim):
    return check_claims([claim], PROFILE, progress=False)[0]


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_replays_pass_on_the_code(name):
    outcome = _decide(BY_NAME[name])
    assert outcome.verdict == Verdict.PASS, outcome.reason


def test_step_counts_cover_the_range_and_projection_binds():
    for name, claim in BY_NAME.items():
        config = claim.configure(oracles_replay.REPLAY_T, PROFILE)
        lo, hi = (int(v) for v in config.params["local_steps"].split(":")[1:])
        assert set(oracles_replay.step_counts(config).ravel().tolist()) == set(range(lo, hi + 1)), name
    config = BY_NAME["simfbo"].configure(oracles_replay.REPLAY_T, PROFILE)
    _, diagnostics, _ = oracles_replay.replay(config, np.array([0]))
    assert diagnostics["local_v_max"] > config.params["radius"]  # the server's v is held on the ball
    assert oracles_replay.coefficients("geometric:0.5", 3).tolist() == [1.0, 0.5, 0.25]


def test_solution_start_is_projected_and_binds_later_in_some_rounds():
    """The start v0 = v*(x*) lies outside the ball (even outside the 2r ball, so a doubled radius moves v0 too); P_r
    then binds in most later replica rounds but not all, so both of its branches are replayed."""
    config = BY_NAME["simfbo_solution_start"].configure(oracles_replay.REPLAY_T, PROFILE)
    radius = config.params["radius"]
    x0, y0, v0 = (z[0] for z in oracles_replay.start_point(config, oracles_replay._data(config), 1))
    start = problem_of(config).initial_state()  # the problem's own closed form agrees with the replay's
    for mine, theirs in ((x0, start["x"]), (y0, start["y"]), (v0, start["v"])):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)
    assert np.linalg.norm(v0) > 2 * radius
    _, _, binds = oracles_replay.replay(config, np.array([0]))
    assert binds[0].all() and binds[1:].any() and not binds[1:].all()


def _patch(monkeypatch, mutation):
    if mutation == "tau_never_hi":  # uniform:lo:hi drawing {lo..hi-1}
        def sample(self, num_clients, stream):
            lo, hi = self.values
            return lo + stream.integers(max(hi - lo, 1), (num_clients,))
        monkeypatch.setattr(bilevel.LocalSteps, "sample", sample)
    elif mutation == "rho_over_all":  # 'sampled' rho computed over all n clients
        monkeypatch.setattr(bilevel.ShroFBO, "_factor", lambda self, p, norms_all, norms_c, weights:
                            (norms_all @ p)[:, None] / norms_c)
    elif mutation == "no_projection":
        monkeypatch.setattr(bilevel.SimFBO, "_project", staticmethod(lambda v, radius: v))
    elif mutation in ("v0_unprojected", "v0_radius_doubled"):  # P_r skipped at the start, or on the 2r ball there
        real_init = bilevel.SimFBO.init

        def init(self, problem, streams):
            state = real_init(self, problem, streams)
            v0 = bilevel.initial_points(problem, len(streams.replicas))[2]
            return dataclasses.replace(state, v=v0 if mutation == "v0_unprojected"
                                       else self._project(v0, 2 * state.radius))
        monkeypatch.setattr(bilevel.SimFBO, "init", init)
    elif mutation == "geometric_shift":  # a_k = q^(k+1)
        real = bilevel.coefficient_table
        monkeypatch.setattr(bilevel, "coefficient_table", lambda kind, steps: real(kind, steps + 1)[1:]
                            if kind.startswith("geometric") else real(kind, steps))
    elif mutation == "v_max_at_start":  # the monitor misses the local iterates
        real = bilevel.client_update
        monkeypatch.setattr(bilevel, "client_update", lambda problem, batch, x, y, v, *a:
                            (*real(problem, batch, x, y, v, *a)[:3], float(np.linalg.norm(v, axis=-1).max())))


@pytest.mark.parametrize("mutation, name", [
    ("tau_never_hi", "simfbo"), ("rho_over_all", "shrofbo_sampled_rho"), ("no_projection", "simfbo"),
    ("geometric_shift", "shrofbo"), ("v_max_at_start", "shrofbo"), ("v0_unprojected", "simfbo_solution_start"),
    ("v0_radius_doubled", "simfbo_solution_start")])
def test_plausible_bugs_fail(monkeypatch, mutation, name):
    _patch(monkeypatch, mutation)
    outcome = _decide(BY_NAME[name])
    assert outcome.verdict == Verdict.FAIL, (mutation, outcome.reason)
