"""Tests for the job executors (ratecheck.runner.executors).

The job functions live at module level so they pickle by reference into worker processes.
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest

from ratecheck.runner.executors import DaskExecutor, Executor, JobError, ProcessExecutor, SerialExecutor, make_executor, run_all

ITEMS = list(range(10))


def rng_job(item: int) -> np.ndarray:
    """Deterministic in the item: its own explicit generator, no global state."""
    rng = np.random.default_rng(item)
    x = rng.standard_normal((50, 20))
    return np.array([x.sum(), (x**2).sum(), float(item)])


def slow_first_job(item: int) -> int:
    # Item 0 takes longest, so a parallel executor finishes it after later items.
    if item == 0:
        time.sleep(0.3)
    return item * item


def failing_job(item: int) -> int:
    if item == 3:
        raise ValueError(f"bad item {item}")
    return item


def expected() -> list[np.ndarray]:
    return [rng_job(i) for i in ITEMS]


@pytest.fixture(params=["serial", "process", "dask"])
def executor(request: pytest.FixtureRequest) -> Executor:
    if request.param == "serial":
        return SerialExecutor()
    return request.getfixturevalue(f"{request.param}_executor")


def test_identical_results_across_executors(executor: Executor) -> None:
    results = run_all(rng_job, ITEMS, executor, progress=False)
    assert len(results) == len(ITEMS)
    for got, want in zip(results, expected()):
        np.testing.assert_array_equal(got, want)  # bit-identical, not just close


def test_input_order_and_on_result_once_per_item(executor: Executor) -> None:
    calls: list[tuple[int, int]] = []
    results = run_all(
        slow_first_job, ITEMS, executor, on_result=lambda i, r: calls.append((i, r)), progress=False
    )
    assert results == [i * i for i in ITEMS]
    assert Counter(i for i, _ in calls) == Counter(ITEMS)
    assert all(r == i * i for i, r in calls)


def test_map_unordered_yields_every_index(executor: Executor) -> None:
    pairs = list(executor.map_unordered(slow_first_job, ITEMS))
    assert sorted(pairs) == [(i, i * i) for i in ITEMS]


def test_parallel_executor_reports_as_finished(process_executor: ProcessExecutor) -> None:
    list(process_executor.map_unordered(slow_first_job, [5, 6]))  # warm up: both workers running
    order = [i for i, _ in process_executor.map_unordered(slow_first_job, ITEMS)]
    assert order[0] != 0  # the slow item arrives late: results stream as they finish
    assert sorted(order) == ITEMS


def test_job_exception_names_index(executor: Executor) -> None:
    with pytest.raises(RuntimeError, match=r"job 3 failed: ValueError: bad item 3") as info:
        run_all(failing_job, ITEMS, executor, progress=False)
    assert isinstance(info.value, JobError) and info.value.index == 3
    assert isinstance(info.value.__cause__, ValueError)
    # The executor is still usable after a failure.
    assert run_all(slow_first_job, [7, 8], executor, progress=False) == [49, 64]


def test_on_result_exception_propagates_and_keeps_finished(executor: Executor) -> None:
    kept: list[int] = []

    class Interrupted(Exception):
        pass

    def keep(index: int, result: int) -> None:
        if len(kept) == 2:
            raise Interrupted
        kept.append(index)

    with pytest.raises(Interrupted):
        run_all(slow_first_job, ITEMS, executor, on_result=keep, progress=False)
    assert len(kept) == 2
    assert run_all(slow_first_job, [2], executor, progress=False) == [4]


def test_empty_items(executor: Executor) -> None:
    assert run_all(rng_job, [], executor, progress=False) == []


def test_serial_accepts_any_callable() -> None:
    with SerialExecutor() as ex:
        assert run_all(lambda x: x + 1, [1, 2], ex, progress=False) == [2, 3]


def test_process_executor_rejects_unpicklable_fn(process_executor: ProcessExecutor) -> None:
    with pytest.raises(TypeError, match="module-level function"):
        process_executor.map_unordered(lambda x: x, [1])


def test_executors_satisfy_protocol() -> None:
    assert isinstance(SerialExecutor(), Executor)
    assert isinstance(ProcessExecutor(1), Executor)
    assert isinstance(DaskExecutor(), Executor)


def test_job_error_pickles() -> None:
    import pickle

    err = pickle.loads(pickle.dumps(JobError(4, "job 4 failed: boom")))
    assert err.index == 4 and str(err) == "job 4 failed: boom"


class DuplicatingExecutor(SerialExecutor):
    """A broken executor: run_all must notice, not return a wrong list."""

    def map_unordered(self, fn, items):  # type: ignore[no-untyped-def]
        yield 0, fn(items[0])
        yield 0, fn(items[0])


def test_run_all_checks_executor_indices() -> None:
    with pytest.raises(RuntimeError, match="unexpected index 0"):
        run_all(slow_first_job, [5, 6], DuplicatingExecutor(), progress=False)


def test_close_is_idempotent() -> None:
    ex = ProcessExecutor(1)
    assert run_all(slow_first_job, [6], ex, progress=False) == [36]
    ex.close()
    ex.close()
    DaskExecutor().close()  # never started: nothing to do


# -- progress -----------------------------------------------------------------------------------


def test_progress_bar_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    run_all(slow_first_job, [5, 6], SerialExecutor(), progress="always", desc="sweep")
    out, err = capsys.readouterr()
    assert out == "" and "sweep" in err and "2/2" in err


def test_progress_hidden_when_not_tty_or_disabled(capsys: pytest.CaptureFixture[str]) -> None:
    run_all(slow_first_job, [5], SerialExecutor(), progress=True)  # captured stderr is no TTY
    run_all(slow_first_job, [5], SerialExecutor(), progress=False)
    assert capsys.readouterr() == ("", "")


def test_progress_value_validated() -> None:
    with pytest.raises(ValueError, match="progress"):
        run_all(slow_first_job, [5], SerialExecutor(), progress="sometimes")


# -- make_executor ------------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", [0, -1, 1.5, "2", True, None])
def test_make_executor_rejects_bad_jobs(jobs: object) -> None:
    with pytest.raises(ValueError, match="parameter jobs = .* is invalid: must be an integer >= 1"):
        make_executor(jobs)  # type: ignore[arg-type]


def test_make_executor_choices() -> None:
    assert isinstance(make_executor(), SerialExecutor)
    assert isinstance(make_executor(1), SerialExecutor)
    with make_executor(3) as ex:  # the pool starts lazily, so this is cheap
        assert isinstance(ex, ProcessExecutor) and ex.jobs == 3
    remote = make_executor(dask="tcp://127.0.0.1:8786")
    assert isinstance(remote, DaskExecutor) and remote.address == "tcp://127.0.0.1:8786"
    local = make_executor(4, dask_local=True)
    assert isinstance(local, DaskExecutor) and local.address is None and local.local_workers == 4
    assert make_executor(dask_local=True).local_workers == 2
    with pytest.raises(ValueError, match="not both"):
        make_executor(dask="tcp://127.0.0.1:8786", dask_local=True)
    with pytest.raises(ValueError, match="address"):
        make_executor(dask="")


def test_worker_count_validation() -> None:
    with pytest.raises(ValueError, match="parameter jobs = .* is invalid: must be an integer >= 1"):
        ProcessExecutor(0)
    with pytest.raises(ValueError, match="parameter local_workers = 0 is invalid: must be an integer >= 1"):
        DaskExecutor(local_workers=0)


class PluginError(ValueError):
    """An exception class as a plugin might write it: its constructor takes two arguments, so the
    default pickling (which calls PluginError(message)) fails in the process that unpickles it."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"{what}: {why}")


def foreign_failure_job(item: int) -> int:
    if item == 1:
        raise PluginError("eta_local", "must be positive")
    if item == 2:
        from ratecheck.params import ParamError

        raise ParamError("fedavg", "eta_local", -1.0, "must be > 0")
    return item * 10


def test_errors_cross_the_process_boundary_with_type_and_message(executor: Executor) -> None:
    """Straight through map_unordered (no sweep catches anything first): a ratecheck ParamError and a
    plugin's unpicklable exception arrive with their type and message, not as a broken pool, and
    every other job's result is still yielded."""
    items = [0, 1, 2, 3, 4]
    results: dict[int, int] = {}
    with pytest.raises(JobError) as info:
        for index, value in executor.map_unordered(foreign_failure_job, items):
            results[index] = value
    assert results == {0: 0, 3: 30, 4: 40}
    text = str(info.value)
    assert "BrokenProcessPool" not in text and "1 more job(s) failed" in text
    assert ("PluginError: eta_local: must be positive" in text
            or "ParamError: fedavg: parameter eta_local = -1.0 is invalid: must be > 0" in text)


def test_every_ratecheck_exception_survives_pickling() -> None:
    """Every exception class the package defines round-trips through pickle with its message (collected
    by walking the modules, not listed by hand)."""
    import importlib
    import inspect
    import pickle
    import pkgutil

    import ratecheck

    seen = 0
    for module_info in pkgutil.walk_packages(ratecheck.__path__, "ratecheck."):
        if module_info.name in ("ratecheck.__main__", "ratecheck.pytest_plugin"):  # one runs the CLI
            continue
        module = importlib.import_module(module_info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not (issubclass(cls, BaseException) and cls.__module__ == module.__name__):
                continue
            try:
                signature = list(inspect.signature(cls).parameters.values())
            except ValueError:  # the builtin constructor (no Python __init__): built from one message
                signature = []
            params = [p for p in signature
                      if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            try:
                exc = cls(*[f"arg{i}" if i else 1 for i in range(len(params))]) if params else cls("message")
            except (AttributeError, TypeError):  # built from a structured object (a hunt's probe): not raised across
                continue
            back = pickle.loads(pickle.dumps(exc))
            assert type(back) is cls and str(back) == str(exc), cls
            seen += 1
    assert seen >= 10
