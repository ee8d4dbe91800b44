"""Sweeps: run the configurations that claims need, through the cache, on an executor.

Every finished run is written to the store the moment it arrives, so an interrupted sweep resumes
where it stopped; a rerun reuses the cache; duplicate configurations across claims run once.
"""

from __future__ import annotations

import itertools
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import registry
from ..claims import Claim, Outcome, Profile, Verdict
from ..model.fit import NonPositiveMean
from ..model.interrupts import describe, is_foreign_exit, raised_in
from ..model.store import NullStore, Store
from ..registry import with_sources
from ..simulate.engine import run_config
from ..trace import RunConfig, Trace
from .executors import Executor, JobError, SerialExecutor, run_all
from .identity import code_identity, keep_parsed_imports, runs_code, runs_code_current, stored_key, stored_task_key
from .tasks import Task, jsonable, running_with

_PACKAGE = Path(__file__).resolve().parents[1]  # ratecheck/, wherever it is installed


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


@dataclass(frozen=True)
class _TaskJob:
    """A task as sent to a worker: its claim itself (this process, or picklable) or, for a
    registered claim, its id and the extra sources to find it by."""

    task: Task
    claim: Any = None
    sources: tuple[str, ...] = ()
    store: Store | None = None  # where the task's own runs are kept (a hunt's probes)


def _job(item: RunConfig | _TaskJob) -> tuple[str, Any]:
    """Module-level job: ("run", arrays and meta), ("task", result), or ("error", reason) for an item
    that failed, so that one failure costs only the claims that need that item."""
    try:
        if isinstance(item, RunConfig):
            return "run", _run_to_arrays(item)
        claim = item.claim if item.claim is not None else _registered_claim(item.task.claim, item.sources)
        with running_with(_StoredRuns(item.store) if item.store is not None else None):
            return "task", jsonable(claim.compute_task(item.task))
    except Exception as exc:  # a run or search refused or failed: reported, not raised
        return "error", f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class _StoredRuns:
    """A task's runner through the store: a run already stored is read, a new one stored as soon as
    it is made, so a search interrupted after k runs redoes none of them (each is the run of its
    configuration, whether read or made: the resumed search draws and decides the same)."""

    store: Store

    def __call__(self, config: RunConfig) -> Trace:
        found = _cached(self.store, config)
        if found is not None:
            return found
        arrays = _run_to_arrays(config)
        put_trace(self.store, config, *arrays)
        return Trace.from_arrays(*arrays)


def _registered_claim(claim_id: str, sources: tuple[str, ...]) -> Claim:
    loaded = registry.default()
    for spec in sources:
        loaded.add_source(spec)
    loaded.named_paper(claim_id)  # the paper the id names: a worker imports only that one
    for claims in (loaded.loaded_claims, loaded.claims):
        found = next((claim for claim in claims() if claim.id == claim_id), None)
        if found is not None:
            return found
    raise LookupError(f"claim {claim_id} is not registered in this worker")


def _task_job(claim: Claim | None, task: Task, executor: Executor, store: Store) -> _TaskJob:
    """A task for ``executor``: a registered claim travels by id (its closures need not pickle)."""
    if isinstance(executor, SerialExecutor):
        return _TaskJob(task, claim, store=store)
    if any(c is claim for c in registry.default().loaded_claims()):
        return _TaskJob(task, None, tuple(registry.default().sources), store)
    return _TaskJob(task, claim, store=store)  # a claim made outside any paper must pickle (module-level functions)


class Results(dict):
    """What a sweep computed, by key (``RunConfig.key()`` -> Trace, ``Task.key()`` -> its result),
    with where each came from (``origin``: "reused" or "computed") and what failed (``errors``)."""

    def __init__(self) -> None:
        super().__init__()
        self.origin: dict[str, str] = {}
        self.errors: dict[str, str] = {}


def compute(
    items: Iterable[tuple[Claim | None, RunConfig | Task]],
    results: Results,
    *,
    store: Store,
    executor: Executor | None = None,
    progress: bool | str = True,
    stats: dict[str, int] | None = None,
    seed_offset: int = 0,
) -> None:
    """Add to ``results`` every item's result (``(claim, Task)`` or ``(None, RunConfig)``): from the
    store when it holds it, else computed on the executor and stored the moment it arrives.

    ``seed_offset`` (``Profile.seed_offset``): each Monte-Carlo run is made and stored as the run of its
    configuration with the seed shifted, and kept in ``results`` under the configuration the claim asked
    for, so claims decide on other draws unchanged. Exact runs are expectations: no seed enters them."""
    stats = stats if stats is not None else {}
    stats.setdefault("reused", 0)
    stats.setdefault("computed", 0)
    missing: list[tuple[Claim | None, RunConfig | Task]] = []
    asked: list[str] = []  # the key each missing item is kept under: that of the configuration asked for
    for claim, item in {item.key(): (claim, item) for claim, item in items}.values():
        key = item.key()
        if key in results or key in results.errors:
            continue
        if isinstance(item, RunConfig):
            item = seeded(item, seed_offset)
        found = _cached(store, item) if isinstance(item, RunConfig) else _cached_task(store, claim, item)
        if found is not None:
            results[key], results.origin[key] = found, "reused"
            stats["reused"] += 1
        else:
            missing.append((claim, item))
            asked.append(key)
    if not missing:
        return
    owned = executor is None
    executor = executor or SerialExecutor()
    jobs = [item if isinstance(item, RunConfig) else _task_job(claim, item, executor, store) for claim, item in missing]

    def keep(index: int, result: tuple[str, Any]) -> None:
        claim, item = missing[index]
        kind, value = result
        key = asked[index]
        if kind == "error":
            results.errors[key] = value
            return
        if kind == "run":
            assert isinstance(item, RunConfig)  # only runs come back as "run"
            put_trace(store, item, *value)
            results[key] = Trace.from_arrays(*value)
        else:
            assert isinstance(item, Task)  # the rest are tasks
            store.put(stored_task_key(claim, item), {}, {"task": _task_meta(item), "result": value,
                                                        "runs_code": runs_code(_task_runs(value))})
            results[key] = value
        results.origin[key] = "computed"
        stats["computed"] += 1

    try:
        run_all(with_sources(_job), jobs, executor, on_result=keep, progress=progress, desc="runs")
    finally:
        if owned:
            executor.close()


def seeded(config: RunConfig, seed_offset: int) -> RunConfig:
    """The run a check under ``seed_offset`` makes for ``config``: its seed shifted (an exact run: itself)."""
    if not seed_offset or config.mode == "exact":
        return config
    return config.with_(seed=int(config.seed) + int(seed_offset))


def _task_runs(result: Any) -> list[RunConfig]:
    """The runs a task's result says it made (``result["runs"]``: their configurations)."""
    return [RunConfig.from_dict(c) for c in (result.get("runs", []) if isinstance(result, dict) else [])]


def _task_meta(task: Task) -> dict[str, Any]:
    return {"kind": task.kind, "claim": task.claim, "spec": jsonable(dict(task.spec))}


def task_is_current(key: str, meta: Mapping[str, Any], claims: Mapping[str, Claim]) -> bool:
    """Whether a stored task or plan (``ratecheck cache``) would be read by the code now installed:
    its claim is registered, its key follows from the claim's current code, and the runs it made
    would be made by the same code."""
    task = meta.get("task")
    if not isinstance(task, dict) or task.get("claim") not in claims:
        return False
    try:
        again = Task(task["kind"], task["claim"], task["spec"])
    except (KeyError, TypeError):
        return False
    current = stored_task_key(claims[task["claim"]], again) == key
    return current and ("runs_code" not in meta or runs_code_current(meta["runs_code"]))


def _cached_task(store: Store, claim: Any, task: Task) -> Any:
    cached = store.get(stored_task_key(claim, task))
    if cached is None:
        return None
    meta = cached[1]
    if meta.get("task") != _task_meta(task) or not runs_code_current(meta.get("runs_code")):
        return None
    return meta.get("result")


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
    ``computed`` (updated as each run is stored, so it is right even after an interrupt). A run
    that fails raises JobError (``check_claims`` instead gives its claims an ERROR verdict)."""
    results = Results()
    configs = list(configs)
    compute([(None, c) for c in configs], results, store=store if store is not None else NullStore(""),
            executor=executor, progress=progress, stats=stats)
    if results.errors:
        index, reason = next((i, results.errors[c.key()]) for i, c in enumerate(configs) if c.key() in results.errors)
        raise JobError(index, f"job {index} failed: {reason}")
    return {c.key(): results[c.key()] for c in configs}


def put_trace(store: Store, config: RunConfig, arrays: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
    """Store a run's arrays under its stored key, with the identity of the code that produced it."""
    code = code_identity(config)
    store.put(stored_key(config), arrays, {**meta, "code": code["digest"], "code_modules": code["modules"]})


def _cached(store: Store, config: RunConfig) -> Trace | None:
    """The stored trace of ``config``'s run by the current code, or None if absent or if its metadata
    does not describe that run (a foreign or damaged entry whose checksum happens to hold: recompute
    rather than trust it)."""
    cached = store.get(stored_key(config))
    if cached is None:
        return None
    try:
        trace = Trace.from_arrays(*cached)
        if trace.config.key() == config.key() and cached[1].get("code") == code_identity(config)["digest"]:
            return trace
    except (KeyError, TypeError, ValueError):
        pass
    return None


def _plan_task(claim: Claim, profile: Profile) -> Task:
    return Task("plan", claim.id, {"profile": profile.name, "replicas": profile.replicas, "scale": profile.scale})


def _planners(claims: Sequence[Claim]) -> list[Claim]:
    """The claims whose ``own_runs`` a check plans: each claim and those it reads the runs of (an
    observation's ``of``, a negative control's ``controls``), once each; adaptive claims plan none,
    except those whose requests only follow their planned runs (``plans_runs``: a trajectory oracle)."""
    out: dict[int, Claim] = {}
    todo = list(claims)
    while todo:
        claim = todo.pop()
        adaptive = hasattr(claim, "requests") and not getattr(claim, "plans_runs", False)
        if id(claim) in out or adaptive or not isinstance(claim, Claim):
            continue
        out[id(claim)] = claim
        todo += [value for value in (getattr(claim, "of", None), getattr(claim, "controls", None))
                 if isinstance(value, Claim)]
    return list(out.values())


def load_plans(claims: Sequence[Claim], profile: Profile, store: Store) -> None:
    """Each claim's planned runs from the store where it holds them: planning is a derivation too
    (theory step sizes solved from a theorem's conditions, constants of an instance), keyed like a
    task on the import closure of the claim's modules, so a cached check plans nothing. The plan
    fills the claim's own memo of ``own_runs`` (ratecheck.claims.Claim)."""
    keep_parsed_imports(store)  # before any key is computed: a cached check parses no module
    for claim in _planners(claims):
        memo = claim.__dict__.setdefault("_planned", {})
        if profile in memo:
            continue
        cached = store.get(stored_task_key(claim, _plan_task(claim, profile)))
        if cached is not None and isinstance(cached[1].get("plan"), list):
            try:
                memo[profile] = [RunConfig.from_dict(c) for c in cached[1]["plan"]]
            except (TypeError, ValueError):
                pass  # a foreign entry: plan again


def _save_plans(claims: Sequence[Claim], profile: Profile, store: Store) -> None:
    for claim in _planners(claims):
        task = _plan_task(claim, profile)
        key = stored_task_key(claim, task)
        if not store.path(key).exists():
            store.put(key, {}, {"task": _task_meta(task), "plan": [c.to_dict() for c in claim.own_runs(profile)]})


def gather(
    claims: Sequence[Claim],
    profile: Profile,
    *,
    store: Store | None = None,
    executor: Executor | None = None,
    progress: bool | str = True,
    stats: dict[str, int] | None = None,
) -> tuple[Results, list[set[str]]]:
    """Every result the claims need: their planned runs, then what adaptive claims (``requests``,
    see ratecheck.runner.tasks) still ask for, round by round, all through the store and the executor.
    Returns the results and, per claim, the keys it read."""
    store = store if store is not None else NullStore("")
    results = Results()
    load_plans(claims, profile, store)
    planned: list[list[RunConfig]] = []
    needs: list[set[str]] = []
    for claim in claims:  # a claim that cannot plan its runs gets an ERROR; the others still run
        try:
            planned.append(list(claim.runs(profile)))
            needs.append({c.key() for c in planned[-1]})
        except Exception as exc:
            planned.append([])
            needs.append({_failed(results, f"plan:{claim.id}", "planning its runs", exc)})
    _save_plans([c for c, n in zip(claims, needs) if not any(k in results.errors for k in n)], profile, store)
    items: list[tuple[Claim | None, RunConfig | Task]] = [(None, c) for runs in planned for c in runs]
    adaptive = [i for i, claim in enumerate(claims) if hasattr(claim, "requests")]
    while True:
        for i in adaptive:
            asked = _requests(claims[i], profile, results, needs[i])
            needs[i].update(item.key() for item in asked)
            items += [(claims[i], item) for item in asked]
        if not items:
            keep_parsed_imports(store, save=True)
            return results, needs
        compute(items, results, store=store, executor=executor, progress=progress, stats=stats,
                seed_offset=profile.seed_offset)
        items = []


def _requests(claim: Any, profile: Profile, results: Results, needs: set[str]) -> list[RunConfig | Task]:
    if any(key in results.errors for key in needs):
        return []  # a request failed: the claim's verdict is an ERROR, nothing more to ask
    try:
        return list(claim.requests(profile, results))
    except Exception as exc:
        needs.add(_failed(results, f"requests:{claim.id}", "asking for its next runs", exc))
        return []


def _failed(results: Results, key: str, doing: str, exc: Exception) -> str:
    """Record that a claim's own step (planning, asking) raised, under ``key``, so its verdict is an ERROR
    naming it (issue #23 item 5: one claim's failure never loses the other verdicts)."""
    results.errors[key] = f"{doing} raised {describe(exc)}{_where(exc)}"
    return key


def _where(exc: BaseException) -> str:
    """' at FILE, line N' of the innermost frame, FILE relative to the package inside ratecheck (the same
    reason on every machine), else as the plugin's file was loaded."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    path = Path(frames[-1].filename)
    inside = path.resolve().is_relative_to(_PACKAGE)
    return f" at {path.resolve().relative_to(_PACKAGE.parent) if inside else path}, line {frames[-1].lineno}"


def check_claims(
    claims: Sequence[Claim],
    profile: Profile,
    *,
    store: Store | None = None,
    executor: Executor | None = None,
    progress: bool | str = True,
    stats: dict[str, int] | None = None,
) -> list[Outcome]:
    """Gather every claim's results (deduplicated, cached) and decide each claim from them
    (``stats``: see run_configs). A claim whose run or search failed gets an ERROR verdict naming
    the reason; every other claim is still decided. Each outcome's ``runs`` says how many of the
    results it read were reused from the store and how many computed. Claims of another profile only
    (``Claim.in_profile``) are left out."""
    claims = [claim for claim in claims if in_profile(claim, profile)]
    results, needs = gather(claims, profile, store=store, executor=executor, progress=progress, stats=stats)
    outcomes = []
    for claim, keys in zip(claims, needs):
        failed = sorted({results.errors[k] for k in keys if k in results.errors})
        outcome = _error(claim, "; ".join(failed)) if failed else _decide(claim, profile, results)
        outcome.runs = {"reused": sum(results.origin.get(k) == "reused" for k in keys),
                        "computed": sum(results.origin.get(k) == "computed" for k in keys)}
        outcomes.append(outcome)
    return outcomes


def in_profile(claim: Any, profile: Profile) -> bool:
    """A claim of this profile (``Claim.in_profile``); an object that only speaks the claim protocol (runs,
    decide) belongs to every profile."""
    check = getattr(claim, "in_profile", None)
    return True if check is None else bool(check(profile))


def _decide(claim: Claim, profile: Profile, results: Results) -> Outcome:
    try:
        return claim.decide(profile, results)
    except NonPositiveMean as exc:  # issue #23: a log fit of a zero mean has no answer, it is not a crash
        return Outcome(claim, Verdict.INCONCLUSIVE, f"no log fit: {exc}", {}, [])
    except Exception as exc:  # a broken decide is this claim's ERROR, the other claims are still decided
        return Outcome(claim, Verdict.ERROR, f"broken claim: its decide raised {describe(exc)}{_where(exc)}", {}, [])
    except BaseException as exc:  # sys.exit or a KeyboardInterrupt of its own must not fake success
        if not is_foreign_exit(exc):
            raise
        where = raised_in(exc)
        return Outcome(claim, Verdict.ERROR, f"broken claim: its decide {describe(exc)}"
                       + (f" at {where}" if where else ""), {}, [])


def _error(claim: Claim, reason: str) -> Outcome:
    return Outcome(claim, Verdict.ERROR, f"a run or search this claim needs failed: {reason}", {}, [])


def traces_for(claim: Claim, profile: Profile, traces: Mapping[str, Trace]) -> list[Trace]:
    return [traces[c.key()] for c in claim.runs(profile)]
