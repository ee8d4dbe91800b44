"""Run independent jobs serially, in a local process pool, or on a Dask cluster.

Every executor exposes ``map_unordered(fn, items)``, yielding ``(index, result)`` pairs as jobs
finish, so the caller can persist each result immediately (an interrupted sweep keeps its finished
work). ``run_all`` drives an executor, restores input order and shows a progress bar.

For ``ProcessExecutor`` and ``DaskExecutor`` the job function and its items are pickled to other
processes: ``fn`` must be a module-level function (importable by name, not a lambda or closure), and
the module defining it must be importable on the workers.

A failing job is reported as ``JobError`` (a ``RuntimeError``) whose message names the item index and
whose ``__cause__`` is the original exception (of its own type and message, also from another
process: every ratecheck exception pickles). It is raised once the other jobs have finished, so
their results still arrive (and are cached) instead of being cancelled.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from tqdm import tqdm  # plain tqdm: the bar goes to stderr even inside notebooks

from ..model.blas import limit_blas_for_process, one_blas_thread
from ..params import check_option

if TYPE_CHECKING:  # typing.Self is 3.11+, the package supports 3.10
    from typing_extensions import Self

__all__ = [
    "DaskExecutor",
    "Executor",
    "JobError",
    "ProcessExecutor",
    "SerialExecutor",
    "check_dask_address",
    "make_executor",
    "run_all",
]

T = TypeVar("T")
R = TypeVar("R")


class JobError(RuntimeError):
    """A job raised; ``index`` is its position in the items, ``__cause__`` the original exception."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index

    @classmethod
    def wrap(cls, index: int, exc: BaseException) -> JobError:
        name, text = (exc.type_name, exc.message) if isinstance(exc, RemoteError) else (type(exc).__name__, exc)
        return cls(index, f"job {index} failed: {name}: {text}")

    def __reduce__(self) -> tuple[Any, ...]:
        # The default would call JobError(message) and fail: keep it picklable.
        return (type(self), (self.index, str(self)))


class RemoteError(Exception):
    """An exception a job raised in a worker that cannot be pickled back (a plugin's own class, say):
    its type's name and its message, so the parent reports it instead of a broken pool."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name, self.message = type_name, message

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.type_name, self.message))


class _Guarded:
    """``fn`` as sent to a worker: an exception that would not survive the trip back is replaced by a
    RemoteError with its type and message (a real interrupt passes through)."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def __call__(self, item: Any) -> Any:
        try:
            with one_blas_thread():  # a Dask worker's job as a pool worker's (ratecheck.model.blas)
                return self.fn(item)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            try:
                pickle.loads(pickle.dumps(exc))
            except Exception:
                kind = type(exc)
                raise RemoteError(f"{kind.__module__}.{kind.__qualname__}", str(exc)) from None
            raise


class _FirstFailure:
    """The failed jobs of one map: the others still run and yield their results (a caller that
    stores each result as it comes loses none of them); the first failure is raised at the end."""

    def __init__(self) -> None:
        self.indices: set[int] = set()
        self.first: tuple[int, BaseException] | None = None

    def add(self, index: int, exc: BaseException) -> None:
        self.indices.add(index)
        if self.first is None:
            self.first = (index, exc)

    def raise_if_any(self) -> None:
        if self.first is not None:
            index, exc = self.first
            more = f" ({len(self.indices) - 1} more job(s) failed)" if len(self.indices) > 1 else ""
            raise JobError(index, f"{JobError.wrap(index, exc)}{more}") from exc


@runtime_checkable
class Executor(Protocol):
    """Runs ``fn`` over ``items``, yielding ``(index, result)`` as each finishes; a context manager.

    The concrete executors subclass this to inherit ``__enter__`` / ``__exit__`` (which closes).
    """

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]: ...

    def close(self) -> None:
        """Release workers; safe to call more than once."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class SerialExecutor(Executor):
    """Runs jobs one after another in this process (any callable works, pickling is not needed)."""

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Yield ``(index, fn(item))`` in input order; a failure raises ``JobError``."""
        failed = _FirstFailure()
        for index, item in enumerate(items):
            try:
                with one_blas_thread():  # a job here as in a pool worker (ratecheck.model.blas)
                    result = fn(item)
            except (Exception, SystemExit) as exc:  # a plugin's sys.exit() must not end ratecheck
                failed.add(index, exc)
                continue
            yield index, result
        failed.raise_if_any()

    def close(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        return "SerialExecutor()"


def single_threaded_blas() -> None:
    """One BLAS thread per worker: the pool already runs one job per core, and our matrices are
    small, so BLAS threads only oversubscribe the cores (ratecheck.model.blas)."""
    limit_blas_for_process()


PARENT_POLL_SECONDS = 0.5


def worker_initializer(parent: int | None = None, death_signal: bool = False) -> None:
    """Set up a pool worker: one BLAS thread, and an end with the parent process."""
    single_threaded_blas()
    end_with_parent(parent, death_signal=death_signal)


def end_with_parent(parent: int | None = None, poll: float = PARENT_POLL_SECONDS, death_signal: bool = False) -> None:
    """Make this (worker) process exit when its parent dies, however it dies (SIGKILL included).

    A pool worker would otherwise outlive a killed ``ratecheck check``, holding its memory: a daemon
    thread polls the parent id and exits once it differs from ``parent`` (the pid the pool recorded;
    by default the parent at this call), so a parent that died before the worker got here is seen
    too (the worker is then already re-parented). With ``death_signal`` on Linux the kernel also
    sends SIGKILL at once (prctl PR_SET_PDEATHSIG); it fires when the parent's *thread* that started
    the worker ends, so the pool asks for it only when its workers are started by the main thread.
    """
    parent = os.getppid() if parent is None else parent
    if death_signal and sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl: the thread below still ends the worker
    if os.getppid() != parent:  # the parent died before we watched (or before prctl took effect)
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll)
        os._exit(1)  # no cleanup: the parent that would collect anything is gone

    threading.Thread(target=watch, name="ratecheck-parent-watch", daemon=True).start()


class ProcessExecutor(Executor):
    """Runs jobs in a pool of ``jobs`` worker processes on this machine.

    Workers are started with the ``"spawn"`` method by default: a fresh interpreter per worker is
    slower to start than ``fork`` but safe with threads in the parent (BLAS pools, tqdm's monitor,
    Dask) and behaves the same on Linux, macOS and Windows. ``"forkserver"`` is also safe (Unix
    only). Under spawn, scripts that create an executor need an ``if __name__ == "__main__":`` guard.

    ``fn`` must be a module-level function (picklable); the pool is created on first use and reused.
    """

    def __init__(self, jobs: int, *, mp_context: str = "spawn") -> None:
        self.jobs = _check_jobs(jobs)
        self.mp_context = mp_context
        self._context = multiprocessing.get_context(mp_context)  # fails early on an unknown method
        self._pool: ProcessPoolExecutor | None = None

    def __repr__(self) -> str:
        return f"ProcessExecutor(jobs={self.jobs}, mp_context={self.mp_context!r})"

    @property
    def pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # Under spawn and fork this process is the workers' parent (under forkserver the server
            # is: the worker records its own parent). Workers start in the thread that submits, and
            # the death signal is tied to that thread: with it on, all workers start here and now.
            parent = os.getpid() if self.mp_context in ("spawn", "fork") else None
            main = threading.current_thread() is threading.main_thread()
            self._pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=self._context,
                                             initializer=worker_initializer, initargs=(parent, main))
            if main:
                for _ in range(self.jobs):  # one start per submission while no worker is idle
                    self._pool.submit(os.getpid)
        return self._pool

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Yield ``(index, result)`` as jobs finish; a failure raises ``JobError``.

        Raises ``TypeError`` at once if ``fn`` cannot be pickled (lambda, closure, local function).
        """
        _require_picklable(fn)
        return self._run(fn, list(items))

    def _run(self, fn: Callable[[T], R], items: list[T]) -> Iterator[tuple[int, R]]:
        if not items:
            return
        pool = self.pool
        guarded = _Guarded(fn)
        pending = {pool.submit(guarded, item): index for index, item in enumerate(items)}
        failed = _FirstFailure()
        try:
            for future in as_completed(list(pending)):
                index = pending.pop(future)
                try:
                    result = future.result()
                except (Exception, SystemExit) as exc:
                    failed.add(index, exc)
                    continue
                yield index, result
            failed.raise_if_any()
        finally:
            # On failure, interrupt or early stop: drop queued jobs (running ones finish on their own).
            for future in pending:
                future.cancel()

    def close(self) -> None:
        """Shut the pool down, cancelling queued jobs."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def terminate(self) -> None:
        """Stop the workers now, dropping the jobs they are running (after Ctrl-C: finished results
        are already stored, and waiting for running jobs would make the interrupt seem ignored)."""
        if self._pool is not None:
            processes = list(getattr(self._pool, "_processes", {}).values())
            self._pool.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                if process.is_alive():
                    process.terminate()
            for process in processes:
                process.join(timeout=5)
            self._pool = None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
            self.terminate()
        else:
            self.close()


class DaskExecutor(Executor):
    """Runs jobs on a Dask cluster: an existing one at ``address``, or a local one if it is ``None``.

    The local cluster has ``local_workers`` single-threaded worker processes and no dashboard. The
    client (and local cluster) start on first use, so an executor that ends up with nothing to run
    (everything cached) costs nothing. ``close`` shuts down a local cluster but only disconnects
    from a remote one.

    ``fn`` must be a module-level function and ``ratecheck`` (and the module defining ``fn``) must be
    importable on the workers. Requires ``dask[distributed]``.
    """

    def __init__(self, address: str | None = None, local_workers: int = 2, connect_timeout: float = 5.0) -> None:
        if address is None:
            local_workers = _check_jobs(local_workers, what="local_workers")
        else:
            address = check_dask_address(address)
        self.connect_timeout = float(connect_timeout)
        self.address = address
        self.local_workers = local_workers
        self._client: Any = None
        self._cluster: Any = None

    def __repr__(self) -> str:
        if self.address is None:
            return f"DaskExecutor(local_workers={self.local_workers})"
        return f"DaskExecutor(address={self.address!r})"

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (started on first access)."""
        if self._client is None:
            try:
                from distributed import Client, LocalCluster
            except ImportError as exc:  # optional dependency
                raise ImportError(
                    "the Dask executor needs dask[distributed]: pip install 'ratecheck[dask]'"
                ) from exc
            if self.address is None:
                cluster = LocalCluster(
                    n_workers=self.local_workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                )
                try:
                    # set_as_default=False: do not hijack dask.compute elsewhere in the process.
                    self._client = Client(cluster, set_as_default=False)
                except BaseException:
                    cluster.close()
                    raise
                self._cluster = cluster
            else:
                # a scheduler that does not answer fails in seconds, not after distributed's 30 s
                self._client = Client(self.address, set_as_default=False, timeout=f"{self.connect_timeout}s")
        return self._client

    def map_unordered(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        """Yield ``(index, result)`` as jobs finish; a failure raises ``JobError``."""
        return self._run(fn, list(items))

    def _run(self, fn: Callable[[T], R], items: list[T]) -> Iterator[tuple[int, R]]:
        if not items:
            return
        from distributed import as_completed as dask_as_completed

        client = self.client
        # pure=False: every item is its own task even if two items are equal.
        futures = client.map(_Guarded(fn), items, pure=False)
        index_of = {future.key: index for index, future in enumerate(futures)}
        pending = {future.key: future for future in futures}
        failed = _FirstFailure()
        try:
            for future in dask_as_completed(futures, loop=client.loop):  # no default client is set
                index = index_of[future.key]
                try:
                    result = future.result()
                except (Exception, SystemExit, asyncio.CancelledError) as exc:
                    failed.add(index, exc)
                    result = None
                # Drop our reference so the cluster can free the result's memory.
                del pending[future.key]
                future.release()
                if index not in failed.indices:
                    yield index, result
            failed.raise_if_any()
        finally:
            if pending:
                try:
                    client.cancel(list(pending.values()))
                except Exception:
                    pass  # client already closing: nothing left to cancel

    def close(self) -> None:
        """Disconnect; shut down the local cluster if this executor started one."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


def make_executor(jobs: int = 1, dask: str | None = None, dask_local: bool = False) -> Executor:
    """The executor for the command-line options ``--jobs``, ``--dask ADDRESS`` and ``--dask-local``.

    * ``dask`` set: connect to that scheduler (``jobs`` is ignored: the cluster has its own workers);
    * ``dask_local``: a local Dask cluster with ``jobs`` workers (2 if ``jobs`` is 1);
    * otherwise ``jobs == 1`` runs serially and ``jobs > 1`` uses a process pool.
    """
    jobs = _check_jobs(jobs)
    if dask is not None and dask_local:
        raise ValueError("choose either a Dask scheduler address or a local Dask cluster, not both")
    if dask is not None:
        return DaskExecutor(address=dask)
    if dask_local:
        return DaskExecutor(local_workers=jobs if jobs > 1 else 2)
    if jobs == 1:
        return SerialExecutor()
    return ProcessExecutor(jobs)


def run_all(
    fn: Callable[[T], R],
    items: Sequence[T],
    executor: Executor,
    *,
    on_result: Callable[[int, R], None] | None = None,
    progress: bool | str = True,
    desc: str = "runs",
) -> list[R]:
    """Run ``fn`` over ``items`` on ``executor``; return the results in input order.

    ``on_result(index, result)`` is called in this process as each job finishes (e.g. to write the
    cache at once). ``progress``: ``True`` shows a bar on stderr if it is a terminal, ``"always"``
    shows it regardless, ``False`` hides it. A failing job raises ``JobError`` naming its index once
    the other jobs have finished (each passed to ``on_result``); an exception from ``on_result``
    propagates at once, unchanged, and cancels the queued jobs.
    For process and Dask executors ``fn`` must be a module-level (picklable) function.
    """
    show = _show_progress(progress)
    items = list(items)
    if not items:
        return []
    results: list[Any] = [None] * len(items)
    done = [False] * len(items)
    stream = executor.map_unordered(fn, items)
    try:
        with tqdm(total=len(items), desc=desc, file=sys.stderr, disable=not show, dynamic_ncols=True) as bar:
            for index, result in stream:
                if not 0 <= index < len(items) or done[index]:
                    raise RuntimeError(f"executor yielded an unexpected index {index!r}")
                results[index] = result
                done[index] = True
                if on_result is not None:
                    on_result(index, result)
                bar.update(1)
    finally:
        # Close the generator now (not at garbage collection) so pending jobs are cancelled promptly.
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    missing = [index for index, finished in enumerate(done) if not finished]
    if missing:
        raise RuntimeError(f"executor finished without results for {len(missing)} job(s), first {missing[0]}")
    return results


# -- helpers ------------------------------------------------------------------------------------


def _check_jobs(jobs: int, what: str = "jobs") -> int:

    return int(check_option("", what, jobs, declared="jobs"))


DASK_SCHEMES = ("tcp", "tls", "ucx", "inproc", "ws", "wss")
_HOST_PORT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(?P<port>[0-9]{1,5}))?")


def check_dask_address(address: object) -> str:
    """A Dask scheduler address ``[scheme://]host[:port]``, or a ValueError saying what is wrong
    (before anything connects: a malformed address would otherwise time out, then print a traceback
    from the half-built client)."""
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"Dask scheduler address must be a non-empty string, got {address!r}")
    text = address.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    form = f"expected [SCHEME://]HOST[:PORT] with SCHEME one of {', '.join(DASK_SCHEMES)}, e.g. tcp://127.0.0.1:8786"
    if scheme not in DASK_SCHEMES:
        raise ValueError(f"Dask scheduler address {address!r} has an unknown scheme {scheme!r}: {form}")
    if scheme == "inproc":
        if not rest or any(ch.isspace() for ch in rest):
            raise ValueError(f"Dask scheduler address {address!r} is malformed: {form}")
        return text
    match = _HOST_PORT.fullmatch(rest)
    if match is None:
        raise ValueError(f"Dask scheduler address {address!r} is malformed: {form}")
    port = match.group("port")
    if port is not None and not 1 <= int(port) <= 65535:
        raise ValueError(f"Dask scheduler address {address!r}: port {port} is not in 1..65535")
    return text


def _show_progress(progress: bool | str) -> bool:
    if progress == "always":
        return True
    if isinstance(progress, bool):
        if not progress:
            return False
        isatty = getattr(sys.stderr, "isatty", None)
        try:
            return bool(isatty and isatty())
        except ValueError:  # closed stream
            return False
    raise ValueError(f"progress must be True, False or 'always', got {progress!r}")


def _require_picklable(fn: Callable[..., Any]) -> None:
    try:
        pickle.dumps(fn)
    except Exception as exc:
        raise TypeError(
            f"{fn!r} cannot be sent to worker processes: use a module-level function "
            f"(not a lambda, closure or local function) ({type(exc).__name__}: {exc})"
        ) from exc
