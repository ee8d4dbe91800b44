"""Sweeps: run the configurations that claims need, through the cache, on an executor.

Every finished run is written to the store the moment it arrives, so an interrupted sweep resumes
where it stopped; a rerun reuses the cache; duplicate configurations across claims run once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .claims import Claim, Outcome, Profile
from .engine import run_config
from .executors import Executor, SerialExecutor, run_all
from .registry import with_sources
from .store import NullStore, Store
from .trace import RunConfig, Trace


def grid(configure: Callable[..., RunConfig], **axes: Sequence[Any]) -> list[tuple[dict[str, Any], RunConfig]]:
    """The configurations of a grid over one or two named parameters (cartesian product).

    ``configure(**point)`` turns a grid point into a RunConfig; the result pairs each point with it,
    ready for ``run_configs``. More than two axes is refused: such sweeps are rarely read well.
    """
    if not 1 <= len(axes) <= 2:
        raise ValueError(f"a grid varies one or two parameters, got {len(axes)}: {sorted(axes)}")
    for name, values in axes.items():
        if len(values) == 0:
            raise ValueError(f"grid axis {name!r} has no values")
    names = list(axes)
    points = [dict(zip(names, combo)) for combo in itertools.product(*axes.values())]
    return [(point, configure(**point)) for point in points]


def _run_to_arrays(config: RunConfig):
    """Module-level job (picklable): run and return the pickle-free array form."""
    return run_config(config).to_arrays()


def run_configs(
    configs: Iterable[RunConfig],
    *,
    store: Store | None = None,
    executor: Executor | None = None,
    progress: bool | str = True,
    stats: dict[str, int] | None = None,
) -> dict[str, Trace]:
    """Traces by config key for every configuration, computing only what the store lacks.

    ``stats``, if given, receives how many runs were ``reused`` from the store and how many
    ``computed`` (updated as each run is stored, so it is right even after an interrupt)."""
    store = store if store is not None else NullStore("")
    stats = stats if stats is not None else {}
    stats.setdefault("reused", 0)
    stats.setdefault("computed", 0)
    unique: dict[str, RunConfig] = {}
    for config in configs:
        unique.setdefault(config.key(), config)
    traces: dict[str, Trace] = {}
    missing: list[RunConfig] = []
    for key, config in unique.items():
        trace = _cached(store, key)
        if trace is not None:
            traces[key] = trace
            stats["reused"] += 1
        else:
            missing.append(config)
    if missing:
        owned = executor is None
        executor = executor or SerialExecutor()

        def keep(index: int, result) -> None:
            arrays, meta = result
            store.put(missing[index].key(), arrays, meta)
            stats["computed"] += 1

        try:
            results = run_all(
                with_sources(_run_to_arrays), missing, executor, on_result=keep, progress=progress, desc="runs"
            )
        finally:
            if owned:
                executor.close()
        for config, (arrays, meta) in zip(missing, results):
            traces[config.key()] = Trace.from_arrays(arrays, meta)
    return traces


def _cached(store: Store, key: str) -> Trace | None:
    """The stored trace of ``key``, or None if absent or if its metadata does not describe that run
    (a foreign or damaged entry whose checksum happens to hold: recompute rather than trust it)."""
    cached = store.get(key)
    if cached is None:
        return None
    try:
        trace = Trace.from_arrays(*cached)
        if trace.config.key() == key:
            return trace
    except (KeyError, TypeError, ValueError):
        pass
    return None


def check_claims(
    claims: Sequence[Claim],
    profile: Profile,
    *,
    store: Store | None = None,
    executor: Executor | None = None,
    progress: bool | str = True,
    stats: dict[str, int] | None = None,
) -> list[Outcome]:
    """Run every claim's sweep (deduplicated, cached) and decide each claim (``stats``: see run_configs)."""
    configs = [config for claim in claims for config in claim.runs(profile)]
    traces = run_configs(configs, store=store, executor=executor, progress=progress, stats=stats)
    return [claim.decide(profile, traces) for claim in claims]


def traces_for(claim: Claim, profile: Profile, traces: Mapping[str, Trace]) -> list[Trace]:
    return [traces[c.key()] for c in claim.runs(profile)]
