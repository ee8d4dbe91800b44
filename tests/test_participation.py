"""Client samplers: exact inclusion probabilities, multiset semantics, validation, replica independence."""

import numpy as np
import pytest

from ratecheck.model.participation import Participation, first_occurrence
from ratecheck.seeding import ReplicaStream

N, M, ROUNDS, REPLICAS = 10, 3, 4000, 8


def _draws(mode: str) -> np.ndarray:
    part = Participation(mode, M)
    stream = ReplicaStream(1, "ab" * 32, range(REPLICAS), "sampling")
    return np.stack([part.sample(N, stream) for _ in range(ROUNDS)])  # (ROUNDS, R, M)


def _distinct(rows: np.ndarray) -> np.ndarray:
    """How many distinct clients each row holds (len(set(row)), vectorized)."""
    ordered = np.sort(rows, axis=1)
    return 1 + (ordered[:, 1:] != ordered[:, :-1]).sum(axis=1)


def _binomial_tolerance(p: float, trials: int) -> float:
    # 5 standard deviations of a frequency: a false alarm has probability below 1e-6 per check
    return 5 * np.sqrt(p * (1 - p) / trials)


def test_without_replacement_inclusion_is_m_over_n_and_rows_are_distinct():
    draws = _draws("without_replacement")
    assert (_distinct(draws.reshape(-1, M)) == M).all()
    counts = np.zeros(N)
    np.add.at(counts, draws.ravel(), 1)
    freq = counts / (ROUNDS * REPLICAS)
    p = Participation("without_replacement", M).inclusion_probability(N)
    assert p == M / N
    assert np.abs(freq - p).max() < _binomial_tolerance(p, ROUNDS * REPLICAS)


def test_with_replacement_is_a_multiset_with_the_exact_probabilities():
    draws = _draws("with_replacement")
    flat = draws.reshape(-1, M)
    included = (flat[:, :, None] == np.arange(N)).any(axis=1)  # [i in row for i in range(N)] per row
    p_incl = Participation("with_replacement", M).inclusion_probability(N)
    assert p_incl == pytest.approx(1 - (1 - 1 / N) ** M)
    assert np.abs(included.mean(axis=0) - p_incl).max() < _binomial_tolerance(p_incl, flat.shape[0])
    # each draw is uniform: the mean multiplicity of a client per round is M / N
    counts = np.zeros(N)
    np.add.at(counts, flat.ravel(), 1)
    assert np.abs(counts / flat.size - 1 / N).max() < _binomial_tolerance(1 / N, flat.size)
    # duplicates happen (P(no duplicate) = 10*9*8/1000 = 0.72 per row)
    dup = np.mean(_distinct(flat) < M)
    assert dup == pytest.approx(0.28, abs=_binomial_tolerance(0.28, flat.shape[0]))


def test_full_participation_is_every_client():
    stream = ReplicaStream(0, "cd" * 32, range(3), "sampling")
    draws = Participation().sample(5, stream)
    assert draws.shape == (3, 5)
    assert (draws == np.arange(5)).all()


def test_replica_rows_do_not_depend_on_other_replicas():
    part = Participation("without_replacement", 4)
    a = ReplicaStream(7, "ef" * 32, range(6), "sampling")
    b = ReplicaStream(7, "ef" * 32, [2, 5], "sampling")
    for _ in range(50):
        np.testing.assert_array_equal(part.sample(20, a)[[2, 5]], part.sample(20, b))


def test_first_occurrence_points_duplicates_to_their_first_draw():
    clients = np.array([[3, 1, 3, 3], [0, 1, 2, 1]])
    np.testing.assert_array_equal(first_occurrence(clients), [[0, 1, 0, 0], [0, 1, 2, 1]])


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: Participation("without_replacement", 5).validate(4), "m <= N"),
        (lambda: Participation("sometimes", 2), "participation mode must be"),
        (lambda: Participation("with_replacement", 0), "m >= 1"),
        (lambda: Participation("full", 3), "takes no client count"),
        (lambda: Participation.parse(3.5), "participation must be"),
    ],
)
def test_bad_participation_names_the_rule(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_parse_round_trips():
    for text in ("full", "with_replacement:8", "without_replacement:3"):
        assert str(Participation.parse(text)) == text


def test_parse_errors_name_the_option():
    with pytest.raises(ValueError, match="participation: 'x' after ':' must be an integer"):
        Participation.parse("with_replacement:x")
    from ratecheck.algorithms.fedavg import DelaySchedule

    assert str(DelaySchedule.parse("uniform:3")) == "uniform:3"
    assert DelaySchedule.parse("none") == DelaySchedule()
    with pytest.raises(ValueError, match="delay must be a string like 'constant:2'"):
        DelaySchedule.parse(2)


def test_a_replicas_mixed_normal_and_uniform_draws_do_not_depend_on_how_many_replicas_run():
    # normal and uniform buffers refill from one generator per replica: a refill size that depended on the
    # number of replicas would interleave them differently (replica 0 of 1 vs of 300)
    def draws(replicas):
        stream = ReplicaStream(1, "ab" * 32, range(replicas), "noise")
        first = stream.normal((10,))[0].copy(), stream.uniform((3,))[0].copy()
        for _ in range(2000):
            stream.normal((10,))
        return (*first, stream.uniform((3,))[0].copy())

    for one, many in zip(draws(1), draws(300)):
        np.testing.assert_array_equal(one, many)
