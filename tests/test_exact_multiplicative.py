"""Exact second moments under multiplicative noise (issue #21 item 4): local steps whose oracle samples
rows (P4's least-squares mini-batches) are random affine maps; ratecheck.exact.multiplicative reads
every outcome's map off the code and propagates E[Phi S Phi^T] over the K steps.

Checked against (1) the oracle's steps written from its definition, (2) a dense Kronecker recursion
at d = 8 (round-off), (3) 2000 Monte-Carlo replicas from a fixed seed within 4 standard errors at
every checkpoint, and (4) the registered claim, which must FAIL when the multiplicative term is dropped.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ratecheck import run
from ratecheck.claims import PROFILES, Verdict
from ratecheck.exact import multiplicative
from ratecheck.exact.multiplicative import sampled_steps
from ratecheck.exact.probing import NotExact
from ratecheck.inspection import algorithm_of, problem_of
from ratecheck.problems import make_problem
from ratecheck.proofs.defedavg.interpolation_exact import P4_EXACT_GAP, kronecker_gap, small_p4_config, step_outcomes
from ratecheck.registry import make_algorithm
from ratecheck.runner.sweep import check_claims

SE_BAND = 4.0  # Monte Carlo: 26 comparisons at 4 SE, a false alarm about 0.2% for a fixed seed


def _p4(**overrides):
    params = {"dim": 9, "clients": 4, "rows": 2, "batch": 2, "seed": 1, **overrides}
    return make_problem("least_squares_interpolation", params)


def _drop_multiplicative(monkeypatch) -> None:
    """The plausible bug: only the mean job enters (the row-sampling noise treated as absent)."""
    monkeypatch.setattr(multiplicative.RandomJobs, "covariance", lambda self, S, table=None: np.zeros((self.d, self.d)))


def test_every_outcome_is_the_oracle_step_written_from_its_definition():
    problem = _p4()
    algorithm = make_algorithm("fedavg", {"local_steps": 3, "eta_local": 0.7})
    steps = sampled_steps(algorithm, problem)
    assert steps.K == 3 and steps.T.shape[0] == 4  # B = 2 picks of m = 2 rows: 4 ordered outcomes
    Ta = steps.augmented()
    for i in range(problem.num_clients):
        expected = step_outcomes(problem.A[i], problem.b[i], problem.row_scale, problem.batch_rows, 0.7)
        np.testing.assert_allclose(Ta[:, i], expected, rtol=0, atol=1e-13)


@pytest.mark.parametrize("n, batch", [(1, 1), (3, 1), (2, 2)])
def test_exact_run_equals_the_dense_kronecker_recursion(n, batch):
    config = small_p4_config(n, PROFILES["quick"])
    config = dataclasses.replace(config, problem_params={**config.problem_params, "batch": batch})
    trace = run(algorithm_of(config), problem_of(config), config.rounds, mode="exact")
    assert trace.measures["gap"][-1, 0] == pytest.approx(kronecker_gap(config), rel=1e-11)


@pytest.mark.claims  # a Monte-Carlo sweep of 2,000 replicas against the exact values
def test_exact_run_agrees_with_monte_carlo_and_the_dropped_term_does_not(monkeypatch):
    problem = _p4()
    algorithm = make_algorithm("fedavg", {"local_steps": 3, "eta_local": 1.5,
                                          "participation": "without_replacement:2"})
    exact = run(algorithm, problem, 12, mode="exact")
    mc = run(algorithm, problem, 12, mode="monte_carlo", replicas=2000, seed=3)
    _drop_multiplicative(monkeypatch)
    dropped = run(algorithm, problem, 12, mode="exact")
    for name in ("gap", "grad_norm_sq"):
        values = mc.measures[name][1:]  # checkpoint 0 is the deterministic start
        mean, se = values.mean(axis=1), values.std(axis=1, ddof=1) / np.sqrt(values.shape[1])
        z = (mean - exact.measures[name][1:, 0]) / se
        assert np.all(np.abs(z) <= SE_BAND), (name, z)
        z_dropped = (mean - dropped.measures[name][1:, 0]) / se
        assert np.max(np.abs(z_dropped)) > 3 * SE_BAND, (name, z_dropped)


@pytest.mark.claims  # decides the registered claim with check_claims, on the code and on a broken variant
def test_the_claim_passes_and_fails_without_the_multiplicative_term(monkeypatch):
    good = check_claims([P4_EXACT_GAP], PROFILES["quick"], progress=False)[0]
    assert good.verdict == Verdict.PASS, good.reason
    _drop_multiplicative(monkeypatch)
    broken = check_claims([P4_EXACT_GAP], PROFILES["quick"], progress=False)[0]
    assert broken.verdict == Verdict.FAIL, broken.reason


def test_too_many_outcomes_are_refused_by_name():
    many = _p4(dim=40, rows=4, batch=5)  # 4^5 = 1024 joint outcomes a step
    with pytest.raises(NotExact, match="1024 joint outcomes"):
        run(make_algorithm("fedavg", {"local_steps": 2}), many, 3, mode="exact")


@pytest.mark.parametrize("params", [
    {"delay": "uniform:2", "participation": "with_replacement:3", "duplicates": "shared"},
    {"delay": "constant:1", "participation": "without_replacement:2"},
])
def test_row_sampling_with_delays_agrees_with_monte_carlo(params):
    """Delays: a job starts from w^{t-k} with the schedule's probability, its random part weighted so."""
    problem = _p4()
    algorithm = make_algorithm("fedavg", {"local_steps": 3, "eta_local": 1.2, **params})
    exact = run(algorithm, problem, 10, mode="exact")
    mc = run(algorithm, problem, 10, mode="monte_carlo", replicas=2000, seed=5)
    values = mc.measures["gap"][1:]
    mean, se = values.mean(axis=1), values.std(axis=1, ddof=1) / np.sqrt(values.shape[1])
    z = (mean - exact.measures["gap"][1:, 0]) / se
    assert np.all(np.abs(z) <= SE_BAND), z


def test_probe_rows_in_chunks_read_the_same_maps(monkeypatch):
    problem = _p4()
    algorithm = make_algorithm("fedavg", {"local_steps": 3, "eta_local": 0.7})
    whole = sampled_steps(algorithm, problem)
    monkeypatch.setattr(multiplicative, "PROBE_ELEMENTS", 3 * problem.num_clients * problem.dim ** 2)  # 3 rows
    chunked = sampled_steps(algorithm, problem)
    np.testing.assert_array_equal(chunked.T, whole.T)
    np.testing.assert_array_equal(chunked.c, whole.c)
