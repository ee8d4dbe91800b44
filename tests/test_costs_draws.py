"""The cost kit's replay of the clients drawn (ratecheck.claims.costs), written from the papers' sampling rules and
the seeding contract, not from ratecheck.model.participation: scripted uniforms give hand-written client lists;
fixed seeds give the distributions of the rules (uniform m-subsets, i.i.d. uniform draws, distinct counts); and on
the correct code the replay equals the engine's and the event timeline's draws, while a sampler with a plausible
bug disagrees with it. Fast unit tests: no claim is decided here."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np
import pytest
from scipy import stats

from ratecheck.claims import costs
from ratecheck.claims.costs import distinct_clients, participants, sampled_clients, timeline_selections
from ratecheck.model.asynchrony import SystemModel, simulate, timeline_key
from ratecheck.model.participation import Participation
from ratecheck.seeding import ReplicaStream
from ratecheck.trace import RunConfig

# a chi-square goodness of fit at a fixed seed: the p-value stays above this for the right rule (the draws are
# fixed: the test is deterministic), and a rule off by one client or by a factor in a probability is far below it
P_VALUE = 1e-3


def config(participation: str, clients: int = 5, rounds: int = 4, replicas: int = 2, seed: int = 0) -> RunConfig:
    return RunConfig("fedavg", {"participation": participation, "local_steps": 2}, "quadratic",
                     {"dim": 2, "clients": clients}, rounds, replicas=replicas, seed=seed)


class Scripted:
    """A stand-in Generator serving given uniforms (or integers) in order, to check the rules by hand."""

    def __init__(self, values: list[float]) -> None:
        self.values = list(values)

    def random(self, size: int) -> np.ndarray:
        out, self.values = self.values[:size], self.values[size:]
        return np.array(out)

    def integers(self, low: int, high: int, size: int) -> np.ndarray:
        out, self.values = self.values[:size], self.values[size:]
        return np.array(out, dtype=np.int64)


@pytest.fixture(autouse=True)
def fresh_caches() -> Iterator[None]:
    """The replays are cached by their arguments: scripted generators must neither read nor leave entries."""
    costs._draws.cache_clear()
    costs.timeline_selections.cache_clear()
    yield
    costs._draws.cache_clear()


def scripted(monkeypatch: pytest.MonkeyPatch, by_replica: dict[int, list[float]]) -> None:
    monkeypatch.setattr(costs, "replica_generator", lambda seed, key, r, purpose: Scripted(by_replica[r]))


def test_without_replacement_takes_the_m_smallest_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    # N = 4 keys a round; m = 2: the clients holding the two smallest keys
    scripted(monkeypatch, {0: [0.7, 0.1, 0.5, 0.3, 0.2, 0.9, 0.05, 0.6], 1: [0.4, 0.3, 0.2, 0.1, 0.0, 0.5, 0.6, 0.7]})
    draws = sampled_clients(config("without_replacement:2", clients=4, rounds=2))
    assert draws.shape == (2, 2, 2)
    assert [sorted(draws[t, r].tolist()) for t in range(2) for r in range(2)] == [[1, 3], [2, 3], [0, 2], [0, 1]]


def test_with_replacement_floors_n_u(monkeypatch: pytest.MonkeyPatch) -> None:
    # N = 5, m = 3 uniforms a round: client floor(5 u); duplicates stay
    scripted(monkeypatch, {0: [0.0, 0.19, 0.99, 0.4, 0.41, 0.6]})
    draws = sampled_clients(config("with_replacement:3", rounds=2, replicas=1))
    assert draws[:, 0].tolist() == [[0, 0, 4], [2, 2, 3]]
    assert distinct_clients(draws[:, 0]).tolist() == [2, 2]


def test_full_participation_is_every_client() -> None:
    draws = sampled_clients(config("full", clients=3, rounds=2, replicas=2))
    assert draws.tolist() == [[[0, 1, 2]] * 2] * 2


def test_timeline_selections_one_draw_of_n_a_round(monkeypatch: pytest.MonkeyPatch) -> None:
    scripted(monkeypatch, {0: [4, 4, 1, 0, 2, 3], 1: [1, 1, 1, 2, 0, 2]})
    draws = timeline_selections(0, "key", 2, 2, 5, 3)
    assert draws.tolist() == [[[4, 4, 1], [1, 1, 1]], [[0, 2, 3], [2, 0, 2]]]
    assert distinct_clients(draws).tolist() == [[2, 1], [3, 2]]


def test_distinct_clients_by_hand() -> None:
    assert distinct_clients(np.array([[3, 1, 3], [0, 0, 0], [2, 1, 0], [4, 4, 1]])).tolist() == [2, 1, 3, 2]


def test_participants_from_the_spec_alone() -> None:
    assert participants("full", 7) == 7
    assert participants("without_replacement:3", 7) == 3
    with pytest.raises(ValueError, match="random"):
        participants("with_replacement:3", 7)
    with pytest.raises(ValueError, match="m = 8"):
        participants("without_replacement:8", 7)


def test_without_replacement_is_a_uniform_m_subset() -> None:
    N, m, T = 5, 2, 20000
    draws = sampled_clients(config(f"without_replacement:{m}", clients=N, rounds=T, replicas=2, seed=3))
    rows = np.sort(draws.reshape(-1, m), axis=1)
    assert (np.diff(rows, axis=1) > 0).all()  # m distinct clients in every draw
    subsets = {s: i for i, s in enumerate(itertools.combinations(range(N), m))}
    counts = np.bincount([subsets[tuple(row)] for row in rows.tolist()], minlength=len(subsets))
    assert stats.chisquare(counts).pvalue > P_VALUE  # every one of the C(5, 2) subsets with probability 1/10


def test_with_replacement_is_iid_uniform() -> None:
    N, n, T = 5, 3, 20000
    draws = sampled_clients(config(f"with_replacement:{n}", clients=N, rounds=T, replicas=2, seed=4))
    flat = draws.reshape(-1, n)
    # the n slots jointly uniform on {0..N-1}^n: each of the N^n ordered draws with probability N^-n
    cells = np.bincount((flat * N ** np.arange(n)).sum(axis=1), minlength=N ** n)
    assert stats.chisquare(cells).pvalue > P_VALUE
    # hence the distinct count D: P(D = k) = C(N, k) S(n, k) k! / N^n (S: Stirling numbers of the 2nd kind)
    stirling = {1: 1, 2: 3, 3: 1}  # S(3, k)
    expected = np.array([math.comb(N, k) * stirling[k] * math.factorial(k) / N ** n for k in (1, 2, 3)])
    assert expected.sum() == pytest.approx(1.0)
    got = np.bincount(distinct_clients(flat), minlength=4)[1:]
    assert stats.chisquare(got, expected * len(flat)).pvalue > P_VALUE


def test_timeline_selections_are_iid_uniform() -> None:
    N, n, T = 5, 3, 6000
    draws = timeline_selections(5, timeline_key("niid", SystemModel(), N, n, 2), 1, T, N, n).reshape(-1, n)
    cells = np.bincount((draws * N ** np.arange(n)).sum(axis=1), minlength=N ** n)
    assert stats.chisquare(cells).pvalue > P_VALUE


def engine_draws(participation: Participation, cfg: RunConfig) -> np.ndarray:
    """What the engine's sampler draws on the run's 'sampling' stream, (T, R, m)."""
    stream = ReplicaStream(int(cfg.seed), cfg.run_key(), range(int(cfg.replicas)), "sampling")
    N = int(cfg.problem_params["clients"])
    return np.array([participation.sample(N, stream) for _ in range(int(cfg.rounds))])


@pytest.mark.parametrize("spec", ["full", "without_replacement:1", "without_replacement:3", "without_replacement:5",
                                  "with_replacement:1", "with_replacement:4"])
def test_the_replay_equals_the_engines_draws(spec: str) -> None:
    cfg = config(spec, rounds=30, replicas=3, seed=7)
    mine, engine = sampled_clients(cfg), engine_draws(Participation.parse(spec), cfg)
    if spec.startswith("with_"):  # a multiset in slot order
        assert np.array_equal(mine, engine)
    else:  # a set: the slots' order is the sampler's
        assert np.array_equal(np.sort(mine, axis=-1), np.sort(engine, axis=-1))


def test_the_replay_equals_the_timelines_selections() -> None:
    N, n, K, T = 5, 3, 3, 25
    system = SystemModel()
    key = timeline_key("niid", system, N, n, K)
    mine = timeline_selections(2, key, 2, T, N, n)
    for r in range(2):
        recorded = simulate("niid", system, clients=N, n=n, local_steps=K, rounds=T, seed=2, replica=r).clients
        assert np.array_equal(mine[:, r], recorded)


class WithReplacement(Participation):
    def sample(self, num_clients: int, stream: ReplicaStream) -> np.ndarray:  # the bug: duplicates allowed
        return stream.integers(num_clients, (self.per_round(num_clients),))


class OneFewer(Participation):
    def per_round(self, num_clients: int) -> int:  # the bug: off by one
        return super().per_round(num_clients) - 1


class LowClientsFirst(Participation):
    def sample(self, num_clients: int, stream: ReplicaStream) -> np.ndarray:  # the bug: squared keys, still a set
        return np.argsort(stream.uniform((num_clients,)) ** 2 * np.arange(1, num_clients + 1), axis=1)[:, :2]


@pytest.mark.parametrize("bug", [WithReplacement, OneFewer, LowClientsFirst], ids=lambda c: c.__name__)
def test_a_sampler_bug_disagrees_with_the_replay(bug: type[Participation]) -> None:
    spec = "without_replacement:2"
    cfg = config(spec, rounds=30, replicas=3, seed=7)
    mine, engine = sampled_clients(cfg), engine_draws(bug("without_replacement", 2), cfg)
    assert mine.shape != engine.shape or not np.array_equal(np.sort(mine, axis=-1), np.sort(engine, axis=-1))


def test_a_with_replacement_sampler_without_duplicates_disagrees() -> None:
    class NoDuplicates(Participation):
        def sample(self, num_clients: int, stream: ReplicaStream) -> np.ndarray:
            return Participation("without_replacement", self.clients).sample(num_clients, stream)

    cfg = config("with_replacement:3", rounds=30, replicas=3, seed=7)
    engine = engine_draws(NoDuplicates("with_replacement", 3), cfg)
    assert not np.array_equal(distinct_clients(sampled_clients(cfg)), distinct_clients(engine))


def test_a_counter_that_is_not_finite_fails_the_claim():
    """max(0.0, nan) is 0.0 in Python: a NaN count must not read as no deviation (review of #23)."""
    import numpy as np

    from ratecheck.claims.costs import cost_deviation
    from ratecheck.claims.trajectory import UNBOUNDED
    from ratecheck.trace import RunConfig, Trace

    config = RunConfig("fedavg", {}, "quadratic", {}, 2, replicas=2, checkpoints=2)
    counts = np.array([[0.0, 0.0], [1.0, np.nan], [2.0, 2.0]])
    trace = Trace(config=config, replica_ids=np.arange(2), checkpoints=np.arange(3), measures={}, counters={},
                  final={}, diverged_round=np.full(2, -1), replica_counters={"vectors_up": counts})
    summary = cost_deviation(lambda c, t: {"vectors_up": 1.0}, ["vectors_up"])
    assert np.all(summary(config, trace) == UNBOUNDED)
    trace.replica_counters["vectors_up"][1, 1] = 1.0
    assert np.all(summary(config, trace) == 0.0)
