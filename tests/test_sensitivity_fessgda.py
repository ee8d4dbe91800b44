"""Sensitivity of the FESS-GDA claims: deliberately broken FSGDA / FESS-GDA variants must be caught.

Each variant is a test double: a subclass that overrides one piece of the algorithm, swapped into
the algorithm registry for the claim's runs (serial executor, no cache). The test runs only the
claims that should catch the bug and asserts that at least one of them turns unexpected (issue #7).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ratecheck.proofs.fessgda as fg
from ratecheck.algorithms import minimax
from ratecheck.algorithms.base import REGISTRY
from ratecheck.claims import PROFILES
from ratecheck.model.participation import Participation
from ratecheck.runner.executors import SerialExecutor
from ratecheck.runner.sweep import check_claims

PROFILE = PROFILES["quick"]
KEY = "5e" * 16  # a run key (hex) for hand-made streams


def _base(algorithm, **changes) -> minimax.FessGDA:
    """The correct FESS-GDA round with the same hyper-parameters (and ``changes``)."""
    values = {f.name: getattr(algorithm, f.name) for f in dataclasses.fields(minimax.FessGDA)}
    return minimax.FessGDA(**{**values, **changes})


class _FlipY:
    """The problem as a buggy client sees it: the y-gradient with the wrong sign."""

    def __init__(self, problem) -> None:
        self._problem = problem

    def __getattr__(self, name):
        return getattr(self._problem, name)

    def stochastic_grads(self, batch, x, y, noise):
        gx, gy = self._problem.stochastic_grads(batch, x, y, noise)
        return gx, -gy


class DescentInY(minimax.FSGDA):
    """Wrong sign in the local y-ascent (y - eta_y grad_y f)."""

    def round(self, state, problem, t, streams):
        return _base(self).round(state, _FlipY(problem), t, streams)


class NoServerStep(minimax.FSGDA):
    """The server step is missing: the new model is the clients' average (eta_g taken as 1)."""

    def round(self, state, problem, t, streams):
        return _base(self, eta_x_global=1.0, eta_y_global=1.0).round(state, problem, t, streams)


class ExtraLocalStep(minimax.FSGDA):
    """Off by one in the local loop: K + 1 local steps."""

    def round(self, state, problem, t, streams):
        return _base(self, local_steps=self.local_steps + 1).round(state, problem, t, streams)


class WithReplacement(minimax.FSGDA):
    """Samples the m clients with replacement where Algorithm 1 samples without."""

    def round(self, state, problem, t, streams):
        wrong = Participation("with_replacement", self.participation.per_round(problem.num_clients))
        return _base(self, participation=wrong).round(state, problem, t, streams)


class DividesByM(minimax.FSGDA):
    """Averages the m sampled updates over all M clients (sum/M instead of sum/m, pitfall P11)."""

    def round(self, state, problem, t, streams):
        share = self.participation.per_round(problem.num_clients) / problem.num_clients
        return _base(self, eta_x_global=self.eta_x_global * share,
                     eta_y_global=self.eta_y_global * share).round(state, problem, t, streams)


class DividesByMFess(minimax.FessGDA):
    """FESS-GDA averaging the m sampled updates over all M clients (the NC-PL floor B2 sees it: slope 0, not -1)."""

    round = DividesByM.round


class StaleSmoothing(minimax.FessGDA):
    """z follows the OLD x (z + beta (x_t - z)) where Algorithm 1 uses the new one (pitfall P3)."""

    def round(self, state, problem, t, streams):
        new, costs = _base(self).round(state, problem, t, streams)
        return dataclasses.replace(new, z=state.z + self.beta * (state.x - state.z)), costs


def _caught(monkeypatch, name: str, broken: type, claims) -> list[str]:
    monkeypatch.setitem(REGISTRY, name, broken)
    outcomes = check_claims(list(claims), PROFILE, store=None, executor=SerialExecutor(), progress=False)
    return [o.claim.id for o in outcomes if not o.ok]


VARIANTS = [
    ("descent_in_y", "fsgda", DescentInY, (fg.A1_LINEAR,)),
    ("no_server_step", "fsgda", NoServerStep, (fg.A1_LINEAR,)),
    ("extra_local_step", "fsgda", ExtraLocalStep, (fg.A1_LINEAR,)),
    ("with_replacement", "fsgda", WithReplacement, (fg.A3_LYAPUNOV,)),
    ("divides_by_M", "fsgda", DividesByM, (fg.A2_LYAPUNOV,)),
    ("divides_by_M_ncpl_floor", "fess_gda", DividesByMFess, (fg.B2_FLOOR_M,)),
]


@pytest.mark.parametrize(("label", "name", "broken", "claims"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_broken_variant_is_caught(monkeypatch, label, name, broken, claims):
    caught = _caught(monkeypatch, name, broken, claims)
    assert caught, f"{label}: no claim among {[c.id for c in claims]} noticed the bug"


def test_stale_smoothing_is_caught(monkeypatch):
    """z following the old x slipped through the NC-PL order claims (B1, B3: measured, they stayed PASS);
    the exact rate of Algorithm 1's linear round (A6) was added for it."""
    assert _caught(monkeypatch, "fess_gda", StaleSmoothing, (fg.A6_SMOOTHED_RATE,))


def test_doubles_change_what_they_say():
    """Each double differs from the correct round (guards against a no-op double)."""
    from ratecheck.problems import make_problem
    from ratecheck.seeding import Streams

    problem = make_problem("minimax", {"kind": "quadratic", "noise": 0.0, "zeta": 1.0, "clients": 8})
    params = {"eta_x_local": 0.01, "eta_y_local": 0.01, "eta_x_global": 2.0, "eta_y_global": 2.0,
              "local_steps": 2, "participation": "without_replacement:4"}
    good = minimax.FSGDA.from_params(params)
    state = good.init(problem, Streams(0, KEY, np.arange(2)))
    reference = good.round(state, problem, 0, Streams(0, KEY, np.arange(2)))[0]
    for broken in (DescentInY, NoServerStep, ExtraLocalStep, WithReplacement, DividesByM):
        new = broken.from_params(params).round(state, problem, 0, Streams(0, KEY, np.arange(2)))[0]
        assert not (np.allclose(new.x, reference.x) and np.allclose(new.y, reference.y)), broken.__name__
