"""The command line's run options (--jobs, --dask, --cache-dir) checked before anything runs, each
through its declaration (params.OPTION_PARAMS) so the CLI, the pytest plugin and the executors
refuse a bad value with the same rule."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["check_run_options", "default_jobs", "option_problem"]


def default_jobs() -> int:
    """All the cores this process may use (issue #8: the default check uses them all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def check_run_options(args: argparse.Namespace, open_store: Callable[[argparse.Namespace], Any],
                      usage_error: type[Exception]) -> str | None:
    """--jobs, --seed-offset, --dask and --cache-dir checked before anything runs: what is wrong, or None.

    --jobs above the cores is capped at them (one interpreter per extra job only competes for the
    same cores), with a note on stderr; --force-jobs keeps the number asked for."""
    if hasattr(args, "jobs"):
        cores = default_jobs()
        if args.jobs is None:
            args.jobs = cores
        elif problem := option_problem("jobs", args.jobs):
            return problem
        if args.jobs > cores and not getattr(args, "force_jobs", False):
            print(f"ratecheck: note: --jobs {args.jobs} is more than the {cores} cores; using {cores} "
                  f"(--force-jobs keeps {args.jobs})", file=sys.stderr)
            args.jobs = cores
    if getattr(args, "seed_offset", 0) and (problem := option_problem("seed_offset", args.seed_offset)):
        return problem
    if getattr(args, "dask", None) is not None:
        from ..runner.executors import check_dask_address  # start-up: the executors load only for --dask

        try:
            check_dask_address(args.dask)
        except ValueError as exc:
            return f"--dask: {exc}"
        if getattr(args, "dask_local", False):
            return "choose either --dask ADDRESS or --dask-local, not both"
    if hasattr(args, "cache_dir") and not getattr(args, "no_cache", False):
        try:
            open_store(args)
        except usage_error as exc:
            return str(exc)
    return None


def option_problem(name: str, value: Any) -> str | None:
    """What is wrong with --NAME VALUE by its declaration (params.OPTION_PARAMS), or None."""
    # start-up: the CLI imports this module for every command, even `--help`
    from ..params import ParamError, check_option

    try:
        check_option(f"--{name.replace('_', '-')}", name, value)
    except ParamError as exc:
        return str(exc)
    return None
