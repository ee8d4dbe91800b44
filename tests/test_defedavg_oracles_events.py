"""The event-timeline oracles (proofs/defedavg/oracles_events.py): round-off on the code as it is, and a
wrong rule of who updates when, from which version or with which weight is seen."""

import math
import types

import numpy as np
import pytest

from ratecheck.claims import Profile
from ratecheck.model import asynchrony
from ratecheck.proofs.defedavg import oracles_events as oe
from ratecheck.simulate.engine import run_config

SMALL = Profile("quick", replicas=3)


def _deviation(name, rounds=20):
    config = oe.event_configure(name)(rounds, SMALL)
    return float(np.max(oe.combined_deviation(config, run_config(config))))


@pytest.mark.parametrize("name", list(oe.EVENT_RUNS))
def test_replay_matches_each_event_algorithm_to_round_off(name):
    assert _deviation(name) < 1e-12


def test_replay_sees_a_client_retraining_from_a_model_it_already_used(monkeypatch):
    monkeypatch.setattr(asynchrony.Simulation, "has_model", lambda self, i: self.latest >= 0)
    assert _deviation("defedavg_iid_events") > 1e-3


TIES = {"speeds": "by_parity", "parity_width": 0.0, "t_up": 0.0, "t_down": 0.0, "t_server": 0.0}


@pytest.mark.parametrize("name", ["defedavg_iid_events", "defedavg_niid_events"])
def test_replay_breaks_ties_as_the_paper_says(monkeypatch, name):
    """Even clients share one slowdown and odd ones another, transfers take no time: jobs end, arrive and
    close rounds at equal times, and the priorities (arrival < broadcast < job done, spec §2.7.3) decide."""
    monkeypatch.setitem(oe.EVENT_RUNS, name, {**oe.EVENT_RUNS[name], **TIES})
    assert _deviation(name) < 1e-12
    monkeypatch.setattr(asynchrony, "JOB_DONE", -1)
    assert _deviation(name) > 1e-3


def test_replay_sees_fedbuff_without_its_staleness_weights(monkeypatch):
    from ratecheck.algorithms.asynchronous import FedBuff
    monkeypatch.setattr(FedBuff, "aggregate", lambda self, updates, clients, delays=None: updates.mean(axis=1))
    assert _deviation("fedbuff") > 1e-3


def test_a_run_that_leaves_the_finite_numbers_is_a_deviation_not_a_divergence(monkeypatch):
    """FedBuff with 1/sqrt(1 - delay) weights (a sign flipped) gives NaN where the replay is finite: the claim
    must FAIL on it, not drop the replicas as diverged."""
    from ratecheck.algorithms.asynchronous import FedBuff

    def flipped(self, updates, clients, delays=None):
        return np.einsum("rm,rmd->rd", 1.0 / np.sqrt(1.0 - delays), updates) / updates.shape[1]
    monkeypatch.setattr(FedBuff, "aggregate", flipped)
    with np.errstate(all="ignore"):
        assert _deviation("fedbuff") == oe.UNBOUNDED


def test_the_registered_claims_decide_on_the_timeline_too():
    # each replay claim reads combined_deviation (measures, wall times, delay histogram), not only the measures
    import dataclasses

    claims = [c for c in oe.CLAIMS if c.id.endswith("_replay")]
    assert claims and all(c.summary is oe.combined_deviation for c in claims)
    claim = claims[0]
    config = claim.own_runs(SMALL)[0]
    off = dataclasses.replace(claim, summary=lambda config, trace: np.full(trace.replica_ids.size, 0.5))
    assert off.points(SMALL, {config.key(): run_config(config)})[0].samples.max() == 0.5


def test_replay_sees_the_options_jitter(monkeypatch):
    """The options run (speed redraws, jitter, carry_over off, tau_cap drop): the simulator without its jitter
    leaves the replay (its drops are mutated in the README's mutation figures)."""
    no_jitter = types.SimpleNamespace(**{**vars(math), "exp": lambda x: 1.0})  # the simulator's math only
    monkeypatch.setattr(asynchrony, "math", no_jitter)
    assert _deviation("defedavg_iid_events_options") > 1e-3
