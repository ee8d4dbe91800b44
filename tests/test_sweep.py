"""Sweeps: identical numbers on every executor, cache reuse, resume after an interruption, repair."""

import numpy as np
import pytest

import ratecheck.runner.sweep as sweep
from ratecheck.model.store import Store
from ratecheck.proofs.defedavg.presets import p2
from ratecheck.runner.executors import SerialExecutor
from ratecheck.runner.identity import stored_key
from ratecheck.trace import RunConfig


def _configs(count=4):
    return [
        RunConfig("defedavg_niid", {"eta_global": 1.0, "eta_local": 0.05, "local_steps": 2,
                                    "participation": f"with_replacement:{n}", "delay": "uniform:2"},
                  "quadratic", p2(clients=8), rounds=40, replicas=3, seed=5)
        for n in range(1, count + 1)
    ]


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        for name in a[key].measures:
            np.testing.assert_array_equal(a[key].measures[name], b[key].measures[name])
        np.testing.assert_array_equal(a[key].final["x"], b[key].final["x"])


def test_serial_process_pool_and_dask_give_identical_arrays(process_executor, dask_executor):
    serial = sweep.run_configs(_configs(), executor=SerialExecutor(), progress=False)
    pooled = sweep.run_configs(_configs(), executor=process_executor, progress=False)
    _assert_same(serial, pooled)
    distributed = sweep.run_configs(_configs(), executor=dask_executor, progress=False)
    _assert_same(serial, distributed)


@pytest.fixture
def counted(monkeypatch):
    """Count the runs actually computed (serial executor: the job runs in this process)."""
    calls = []
    real = sweep._run_to_arrays

    def job(config):
        calls.append(config.key())
        return real(config)

    monkeypatch.setattr(sweep, "_run_to_arrays", job)
    return calls


def test_rerun_reuses_the_cache(tmp_path, counted):
    store = Store(tmp_path)
    first = sweep.run_configs(_configs(), store=store, progress=False)
    assert len(counted) == 4
    second = sweep.run_configs(_configs() + _configs(2), store=store, progress=False)  # duplicates too
    assert len(counted) == 4
    _assert_same(first, second)


def test_interrupted_sweep_resumes_where_it_stopped(tmp_path, monkeypatch):
    store = Store(tmp_path)
    configs = _configs()
    real = sweep._run_to_arrays
    done = []

    def flaky(config):
        if len(done) == 2:
            raise KeyboardInterrupt  # the user pressed Ctrl-C during the third run
        done.append(stored_key(config))
        return real(config)

    monkeypatch.setattr(sweep, "_run_to_arrays", flaky)
    with pytest.raises(KeyboardInterrupt):
        sweep.run_configs(configs, store=store, progress=False)
    assert sorted(store.keys()) == sorted(done)  # finished work was kept

    recomputed = []
    monkeypatch.setattr(sweep, "_run_to_arrays", lambda c: recomputed.append(stored_key(c)) or real(c))
    traces = sweep.run_configs(configs, store=store, progress=False)
    assert sorted(recomputed) == sorted(set(stored_key(c) for c in configs) - set(done))
    _assert_same(traces, sweep.run_configs(configs, progress=False))


def test_a_corrupt_entry_is_detected_and_recomputed(tmp_path, counted):
    store = Store(tmp_path)
    configs = _configs(2)
    sweep.run_configs(configs, store=store, progress=False)
    path = store.path(stored_key(configs[0]))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    counted.clear()
    traces = sweep.run_configs(configs, store=store, progress=False)
    assert counted == [configs[0].key()]
    _assert_same(traces, sweep.run_configs(configs, progress=False))


def test_two_parameter_grid_runs_every_combination(tmp_path):
    def configure(n, local_steps):
        base = _configs(1)[0]
        params = {**base.params, "participation": f"with_replacement:{n}", "local_steps": local_steps}
        return base.with_(params=params)

    points = sweep.grid(configure, n=[1, 4], local_steps=[1, 2, 3])
    assert [p for p, _ in points] == [{"n": n, "local_steps": k} for n in (1, 4) for k in (1, 2, 3)]
    traces = sweep.run_configs([c for _, c in points], store=Store(tmp_path), progress=False)
    assert len(traces) == 6
    calls = {k: t.counters["oracle_calls"][-1] for k, t in traces.items()}
    assert len(set(calls.values())) > 1  # K changes the oracle count
    with pytest.raises(ValueError, match="one or two parameters"):
        sweep.grid(configure, a=[1], b=[2], c=[3])


def test_a_log_fit_of_a_zero_mean_is_a_reasoned_inconclusive():
    """Issue #23 item 5: a measure at its exact 0 (mean 0 or round-off below) is no crash of the check."""
    from dataclasses import dataclass

    from ratecheck.claims import PROFILES, Outcome, Verdict
    from ratecheck.model.fit import fit_slope

    @dataclass(frozen=True)
    class Zero:
        id: str = "toy.zero"

        def runs(self, profile):
            return []

        def decide(self, profile, traces) -> Outcome:
            fit_slope([1.0, 10.0], [np.zeros(4), np.full(4, -1e-18)])
            raise AssertionError("unreachable")

    (outcome,) = sweep.check_claims([Zero()], PROFILES["quick"], progress=False)
    assert outcome.verdict == Verdict.INCONCLUSIVE and "<= 0" in outcome.reason


@pytest.mark.claims  # check_claims on registered claim defedavg.fedavg.drift_limit, twice
def test_a_cached_check_plans_nothing(tmp_path):
    """Issue #19: a claim's planned runs (theory step sizes, ...) are stored like a task."""
    import dataclasses

    import ratecheck.proofs as proofs
    from ratecheck.claims import PROFILES

    original = next(c for c in proofs.all_claims() if c.id == "defedavg.fedavg.drift_limit")
    calls = []

    def configure(value, profile):
        calls.append(value)
        return original.configure(value, profile)

    store, profile = Store(tmp_path), PROFILES["quick"]
    first = sweep.check_claims([dataclasses.replace(original, configure=configure)], profile, store=store,
                               progress=False)
    planned = len(calls)
    again = sweep.check_claims([dataclasses.replace(original, configure=configure)], profile, store=store,
                               progress=False)
    assert planned > 0 and len(calls) == planned  # the second check read its plan from the store
    assert again[0].to_dict()["evidence"] == first[0].to_dict()["evidence"]
