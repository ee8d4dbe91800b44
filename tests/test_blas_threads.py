"""One BLAS thread for every run, wherever it is called from (ratecheck.model.blas): a direct
``ratecheck.run``, the serial executor and a pool worker compute with one thread, the caller's setting
comes back afterwards, and the numbers are the same bit for bit whichever way a run is made."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import ratecheck
import ratecheck.runner.sweep as sweep
from ratecheck.problems import make_problem
from ratecheck.registry import make_algorithm
from ratecheck.runner.executors import SerialExecutor
from ratecheck.simulate import engine
from ratecheck.trace import RunConfig

# a shared Hessian: the local gradients are one (R m, d) x (d, d) GEMM, which OpenBLAS threads
CONFIG = RunConfig("fedavg", {"eta_global": 1.0, "eta_local": 0.05, "local_steps": 3, "participation": "without_replacement:8"},
                   "quadratic", {"dim": 24, "clients": 32, "mu": 0.3, "zeta": 1.0, "sigma": 0.5}, rounds=30, replicas=16,
                   seed=7)


def blas_threads(_item: object = None) -> list[int]:
    """The thread count of every loaded BLAS library, here and now (module level: it runs in workers)."""
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@pytest.fixture
def two_blas_threads():
    """The caller's BLAS at two threads (a notebook's default on a 2-core machine), restored afterwards."""
    if not blas_threads():
        pytest.skip("no BLAS library reported by threadpoolctl")
    with threadpool_limits(limits=2, user_api="blas"):
        yield blas_threads()


def test_a_direct_run_uses_one_blas_thread_and_gives_the_caller_its_threads_back(two_blas_threads, monkeypatch):
    seen = []
    real = engine._execute

    def spy(*args, **kwargs):
        seen.append(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "_execute", spy)
    problem = make_problem("quadratic", {"dim": 3, "clients": 4})
    ratecheck.run(make_algorithm("fedavg", {"eta_local": 0.1}), problem, 5, replicas=2)
    ratecheck.run_config(RunConfig("fedavg", {"eta_local": 0.1}, "quadratic", {"dim": 3, "clients": 4}, rounds=5,
                                   replicas=2))
    assert seen and all(set(threads) == {1} for threads in seen)
    assert blas_threads() == two_blas_threads  # the notebook's own numpy work keeps its threads


def test_serial_and_pool_jobs_use_one_blas_thread(two_blas_threads, process_executor):
    assert [set(threads) for _, threads in SerialExecutor().map_unordered(blas_threads, [0, 1])] == [{1}, {1}]
    assert blas_threads() == two_blas_threads
    assert all(set(threads) == {1} for _, threads in process_executor.map_unordered(blas_threads, [0, 1]))


def test_same_seed_same_numbers_direct_serial_pool_and_with_threaded_blas(two_blas_threads, process_executor):
    direct = ratecheck.run_config(CONFIG)
    serial = sweep.run_configs([CONFIG], executor=SerialExecutor(), progress=False)[CONFIG.key()]
    pooled = sweep.run_configs([CONFIG], executor=process_executor, progress=False)[CONFIG.key()]
    # the engine's body without the limit, at the caller's two threads: the limit changes speed, not numbers
    ids = np.arange(CONFIG.replicas)
    threaded = engine._execute(CONFIG, make_algorithm(CONFIG.algorithm, CONFIG.params),
                               make_problem(CONFIG.problem, CONFIG.problem_params), ids, False)
    for other in (serial, pooled, threaded):
        assert other.measures.keys() == direct.measures.keys()
        for name, values in direct.measures.items():
            np.testing.assert_array_equal(other.measures[name], values, err_msg=name)
        np.testing.assert_array_equal(other.final["x"], direct.final["x"])
