"""One BLAS thread for every computation ratecheck runs, wherever it runs: a pool worker, the serial
executor, a Dask job, or a direct ``ratecheck.run`` in a notebook.

The matrices are small (a replica batch times a dimension of at most a few hundred) and the cores are
usually busy with other runs, so a BLAS thread pool only oversubscribes them: a FedAvg run measured 4x
slower with OpenBLAS's two threads on a loaded 2-core machine, an exact run 9x. One thread everywhere
also keeps one code path per run, whatever executes it (same seed, same numbers: tests/test_blas_threads.py).

``one_blas_thread()`` limits BLAS for the duration of a ``with`` block and restores the caller's setting
after it (a notebook's own numpy work keeps its threads); a pool worker sets the limit once for its life.
The limit is process-wide (BLAS libraries have no per-thread setting): a Dask worker running several
threads should be started with one thread per worker, as DaskExecutor's local cluster is.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from threadpoolctl import threadpool_limits


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context in which the loaded BLAS libraries use one thread (the previous limits restored on exit)."""
    return threadpool_limits(limits=1, user_api="blas")


def limit_blas_for_process() -> None:
    """One BLAS thread for the rest of this process (a pool worker: every job it runs)."""
    threadpool_limits(limits=1, user_api="blas")
