"""FESS-GDA's replay on a simplex Y (issue #23, held-out bug): a noise-free run against Algorithm 1 replayed with the
run's own client sets on spec §6.4's point-wise maximum. It passes on the code; the projection of y is active at
the local steps of its instance; a client that skips the projection of y after a local step (only the server
projecting, invisible on Y = R^d2) or a server that skips its own makes it FAIL (monkeypatched)."""

import numpy as np

from ratecheck.algorithms import minimax
from ratecheck.claims import PROFILES
from ratecheck.model import projections
from ratecheck.proofs.fessgda import oracles_projected as op
from ratecheck.simulate.engine import run_config
from ratecheck.testing import oracles as kit

test_replay_passes_on_the_code = kit.passes_on_the_code(op.CLAIMS, exact=False)


def test_the_projection_from_its_definition_is_the_euclidean_one():
    v = np.random.default_rng(0).normal(scale=2.0, size=(500, 4))
    y = op.project_simplex(v)
    assert np.allclose(y.sum(-1), 1.0) and y.min() >= 0
    # the projection's variational inequality: <v - P(v), w - P(v)> <= 0 at every vertex w of the simplex
    assert np.max(np.einsum("ni,nji->nj", v - y, np.eye(4)[None] - y[:, None])) < 1e-12
    assert np.allclose(y, projections.project_simplex(v))


def test_the_projection_is_active_at_the_local_steps_and_the_instance_is_not_trivial():
    config = op.configure(op.PROJECTED_T, PROFILES["quick"])
    trace = run_config(config)
    _, run = op.run_replay(config, np.asarray(trace.checkpoints))
    assert run.steps == op.PROJECTED_T * config.replicas * 2 * op.STEPS["local_steps"]
    assert run.left / run.steps > 0.9 and run.clipped / run.steps > 0.5  # off Y, and off the orthant
    assert op.STEPS["local_steps"] > 1 and op.PROBLEM["zeta"] > 0  # K > 1, heterogeneous clients
    assert len({tuple(row) for row in trace.measures["dist_x_sq"].T}) == config.replicas  # client sets differ


def _patch(monkeypatch, mutation):
    if mutation == "local_projection_dropped":  # issue #23's held-out bug: only the server projects y
        def local_gda(problem, batch, x, y, steps, eta_x, eta_y, noise, updates="simultaneous", **kw):
            for _ in range(steps):
                gx, gy = problem.stochastic_grads(batch, x, y, noise)
                x, y = x - eta_x * gx, y + eta_y * gy
            return x, y
        monkeypatch.setattr(minimax, "local_gda", local_gda)
    elif mutation == "server_projection_dropped":  # the clients project, the server's step (line 14) does not
        round_, local = minimax.FessGDA.round, minimax.local_gda

        class ServerView:  # the problem as the server sees it: P_Y the identity
            def __init__(self, problem):
                self.problem = problem

            def __getattr__(self, name):
                return getattr(self.problem, name)

            def project_y(self, y):
                return y

        monkeypatch.setattr(minimax.FessGDA, "round", lambda self, state, problem, t, streams: round_(
            self, state, ServerView(problem), t, streams))
        monkeypatch.setattr(minimax, "local_gda", lambda problem, *a, **kw: local(problem.problem, *a, **kw))

test_plausible_bugs_fail = kit.bugs_fail(op.CLAIMS, _patch, [
    ("local_projection_dropped", "fess_gda_projected_replay"), ("server_projection_dropped", "fess_gda_projected_replay")])
