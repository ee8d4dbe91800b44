"""The models a run on an event timeline keeps (ratecheck.model.versions): every model a later round reads, and
only as many as there are distinct versions in flight, however old one of them stays."""

import doctest
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from ratecheck import run
from ratecheck.model import versions
from ratecheck.model.asynchrony import LiveTimelines, Simulation, SystemModel, TimelineError, Timelines, live_timelines, simulate
from ratecheck.model.versions import VersionedModels
from ratecheck.problems import make_problem
from ratecheck.proofs.defedavg.presets import p2


def _bench():
    """benchmarks/bench_async.py: its policy plugin (Anchored, AnchoredIID), one definition for the benchmark and here."""
    spec = importlib.util.spec_from_file_location("bench_async", Path(__file__).resolve().parent.parent / "benchmarks"
                                                  / "bench_async.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()
Anchored, AnchoredIID = BENCH.Anchored, BENCH.AnchoredIID

STRAGGLERS = SystemModel(step_time=0.01, speeds="by_parity", speed_high=80.0, parity_width=0.5, t_down=0.02,
                         t_up=0.03, t_server=0.005)  # defedavg.oracle.defedavg_iid_events_straggler_replay's


class Rewinding(Simulation):
    """A policy that starts every tenth job from a model 30 versions back without listing those in
    pending_versions(): the store cannot know it needs them."""

    def start_job(self, i: int, version: int) -> None:
        super().start_job(i, max(0, version - 30) if self.seq % 10 == 0 and version >= 40 else version)


def drive(timelines, rounds: int, dim: int = 2):
    """Run the store as FedAvg.round does, with w^{t+1} = mean of the slots' starts + 1 (every version distinct);
    yields (t, models) after each round."""
    models = VersionedModels(np.zeros((len(timelines.sims), dim)), timelines)
    for t in range(rounds):
        timelines.ensure(t)
        start = models.read(timelines.base[:, t])
        models = models.advance(t, start.mean(axis=1) + 1.0)
        yield t, models


@pytest.mark.parametrize("policy,n", [("iid", 2), ("niid", 2), ("sync", 2)])
def test_what_the_rounds_to_come_read_is_in_flight_at_the_end_of_the_simulated_rounds(policy, n):
    """At every extension, each round after the simulated ones reads a version pending_versions() lists or one
    >= its floor. With stragglers (first updates from w^0 near round 80-100, every earlier delay <= 5) the delays
    seen so far do not say so; the updates in flight do."""
    rounds = 160
    whole = simulate(policy, STRAGGLERS, clients=5, n=n, local_steps=3, rounds=rounds, replica=1)
    live = live_timelines(policy, STRAGGLERS, clients=5, n=n, local_steps=3, seed=0, replicas=(1,))
    for t in range(rounds - 1):
        live.ensure(t)
        have = live.base.shape[1]
        in_flight, floor = live.pending()
        later = set(whole.base[have:].ravel().tolist())
        assert all(v in in_flight or v >= floor for v in later), (t, sorted(later - in_flight), floor)
    if policy == "iid":  # the jump the bookkeeping must see ahead of the rounds simulated
        assert whole.max_delay > 64
    assert np.array_equal(live.upto(rounds).base[0], whole.base)


@pytest.mark.parametrize("policy", ["iid", "niid"])
def test_the_store_keeps_every_model_a_later_round_reads_and_only_those_in_flight(policy):
    """After round t the store holds every version a round after t reads (checked against the whole timeline),
    and nothing else but w^{t+1}, the updates in flight at the simulated horizon and the versions from its floor."""
    rounds = 300
    whole = simulate(policy, STRAGGLERS, clients=5, n=2, local_steps=3, rounds=rounds + 400, replica=1)
    live = live_timelines(policy, STRAGGLERS, clients=5, n=2, local_steps=3, seed=0, replicas=(1,))
    for t, models in drive(live, rounds):
        held = set(models.held())
        needed = {v for v in whole.base[t + 1:].ravel().tolist() if v <= t + 1}
        assert needed <= held, (t, sorted(needed - held))
        in_flight, floor = live.pending()
        assert held <= needed | in_flight | {v for v in held if v >= floor} | {t + 1}, (t, sorted(held))


def test_a_base_that_stays_old_costs_one_model_not_one_per_round():
    """Client 0 trains from w^0 for 3000 rounds (span 3000): the store holds at most the distinct versions in
    flight (the reads of the rounds recorded ahead, the updates in flight at the horizon and the versions from its
    floor: a few dozen with these speeds), where a window from the oldest base to the newest would hold 3001."""
    rounds, system = 3000, SystemModel()
    sims = [Anchored("iid", system, clients=6, n=2, local_steps=2, seed=0, replica=r) for r in (0, 1)]
    live = LiveTimelines(sims, (0, 1))
    most, distinct = 0, 0
    for t, models in drive(live, rounds):
        most = max(most, len(models.held()))
        in_flight, floor = live.pending()
        have = live.base.shape[1]
        ahead = set(live.base[:, t + 1:have].ravel().tolist())
        distinct = max(distinct, len({v for v in ahead | in_flight if v <= t + 1} | {t + 1}) + have - floor)
    assert live.base[:, -1].min() == 0 and live.recorded_delay() >= rounds  # the anchor is read at the end
    assert most <= distinct <= 100, (most, distinct)
    assert models.buffer.shape[1] < 2 * most  # the buffer never grew with the span


def test_numbers_do_not_depend_on_what_the_store_releases():
    """The same run with the store and with a store that keeps every model: the same iterates, bit for bit."""

    class KeepAll(VersionedModels):
        def live(self, version: int) -> bool:
            return True

    def final(store: type[VersionedModels]) -> np.ndarray:
        live = LiveTimelines([Anchored("niid", STRAGGLERS, clients=5, n=3, local_steps=3, seed=2, replica=r)
                              for r in (0, 1, 2)], (0, 1, 2))
        models = store(np.arange(6.0).reshape(3, 2), live)
        for t in range(400):
            live.ensure(t)
            start = models.read(live.base[:, t])
            models = models.advance(t, np.sin(start.sum(axis=1)) + 0.01 * t)
        return models.latest

    assert np.array_equal(final(VersionedModels), final(KeepAll))


def test_a_run_whose_job_stays_on_w0_reads_w0_at_its_end():
    """Through the engine: the anchored client's last aggregated update started from w^0, thousands of rounds
    back, and the run's starts are the models the timeline names (the run equals a replay of its own timeline)."""
    problem = make_problem("quadratic", p2(clients=6))
    algorithm = AnchoredIID(eta_global=0.5, eta_local=0.05, local_steps=2, participation="without_replacement:2")
    trace = run(algorithm, problem, 2000, replicas=2, seed=0)
    assert trace.info["max_delay_used"] >= 1900 and np.isfinite(trace.final["x"]).all()


def test_reading_a_released_version_raises_instead_of_returning_another_model():
    record = Timelines(np.zeros((1, 4, 1), int), np.array([[[0], [1], [2], [0]]]), np.ones((1, 4)), False, (0,))
    models = VersionedModels(np.zeros((1, 3)), record)
    for t in range(3):  # round 3's read of w^0 is counted: w^0 stays
        models = models.advance(t, models.read(record.base[:, t])[:, 0] + 1.0)
    assert 0 in models.held() and 1 not in models.held()
    with pytest.raises(TimelineError, match=r"round 3 reads w\^1, a model no longer kept"):
        models.read(np.array([[1]]))
    with pytest.raises(TimelineError, match="round 2 cannot follow"):
        models.advance(2, np.zeros((1, 3)))


def test_a_policy_reading_versions_it_does_not_declare_stops_with_a_clear_error():
    """A plugin that starts jobs from versions no update in flight holds, without listing them in
    pending_versions(): the run stops naming the version, never computes from another model."""
    live = LiveTimelines([Rewinding("iid", SystemModel(), clients=8, n=2, local_steps=2, seed=0, replica=0)], (0,))
    with pytest.raises(TimelineError, match="Simulation.pending_versions"):
        for _ in drive(live, 2000):
            pass


def test_the_module_example_runs():
    assert doctest.testmod(versions).failed == 0


@pytest.mark.parametrize("policy", ["niid", "iid"])
def test_a_live_timelines_diagnostics_are_those_of_the_rounds_run(policy):
    """However far ahead the live timeline simulated, its first r rounds' diagnostics (virtual lambda, events,
    discards, busy fractions) are those of a simulation stopped at r."""
    live = live_timelines(policy, STRAGGLERS, clients=5, n=2, local_steps=3, seed=0, replicas=(1,))
    live.ensure(150)
    assert live.base.shape[1] > 150
    for rounds in (37, 150):
        whole = simulate(policy, STRAGGLERS, clients=5, n=2, local_steps=3, rounds=rounds, replica=1)
        mine = live.upto(rounds).each[0]
        assert (mine.lambda_virtual, mine.events) == (whole.lambda_virtual, whole.events)
        assert np.array_equal(mine.discarded, whole.discarded) and np.array_equal(mine.busy_fraction,
                                                                                  whole.busy_fraction)


class OnlyFromW0(Simulation):
    """Every job trains from w^0 (a client never takes a newer model)."""

    def start_job(self, i: int, version: int) -> None:
        super().start_job(i, 0)


def test_a_timeline_whose_every_update_is_dropped_stops_as_stalled_not_at_the_wall_budget():
    # tau_cap 2 with 'drop': from round 3 on every update is too stale and none is aggregated; the wall budget
    # (1e7 virtual seconds) would take millions of events to reach
    system = SystemModel(tau_cap=2, tau_cap_mode="drop")
    sim = OnlyFromW0("iid", system, clients=6, n=2, local_steps=2, seed=0, replica=0)
    with pytest.raises(TimelineError, match="stalled: 8000 updates dropped above tau_cap and no round closed, after 3 "
                                           "of 50 rounds"):
        sim.advance(50)
    assert sim.events < 60_000


def test_a_round_that_waits_long_while_clients_keep_training_is_not_a_stall():
    # nIID without consuming the receive buffer: clients retrain and overwrite their buffers while a round waits
    # for a straggler, many events a round and no round lost (review: an event count fired here at round 72)
    sim = Simulation("niid", SystemModel(rx_consume=False, jitter=3.0), clients=8, n=2, local_steps=1, seed=0)
    assert sim.advance(200).t == 200
