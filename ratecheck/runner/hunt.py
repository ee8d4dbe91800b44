"""ratecheck hunt: search for an instance, satisfying every condition of a theorem, on which its bound breaks.

A grid of hand-picked instances checks a theorem where its authors' intuition points; a hunt looks
where it does not. hypothesis draws instances from a ``HuntSpace`` (a problem family's strategy
composed with the algorithm's parameters), keeps those where every condition of the theorem holds,
runs each, and steers towards large ``measure / bound`` with its targeting. An instance is a
counterexample when the run decides it, by the one-sided rule of a BoundClaim: the lower confidence
bound of the mean measure exceeds the bound. hypothesis then shrinks it to a smallest such instance.

Determinism: for a given seed and ``examples`` count the search is the same everywhere. A seconds
budget (``ratecheck hunt --budget``) only truncates it, and says so: registered claims use counts
only, and their results are stored in the run store (``HuntClaim``, a stored task). The
``ratecheck hunt`` command also keeps found counterexamples in a hypothesis example database beside
the run cache, so a rerun replays them first.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..assumptions import certified, declared_by, missing
from ..claims import Claim, Outcome, PointResult, Profile, Verdict
from ..claims.compose import Plan
from ..inspection import view
from ..model.fit import mean_ci
from ..model.strategies import finite_floats, fixed_draws
from ..params import check_option
from ..seeding import restart_seed
from ..simulate.engine import run_config
from ..theory import Evaluation, Source, Theorem
from ..trace import RunConfig, Trace
from .hunt_view import SearchHistory
from .tasks import Task, complete, task_runner

__all__ = ["Counterexample", "HuntClaim", "HuntResult", "HuntSpace", "NoCounterexample", "finite_floats",
           "fixed_draws", "hunt", "reproduce_command", "smallest_admissible", "trajectory"]


@dataclass(frozen=True)
class HuntSpace:
    """Where a hunt searches, for one theorem.

    ``strategy()`` returns a hypothesis strategy of JSON-able instance dicts (compose the problem
    family's ``strategy()`` with the algorithm's parameters); ``configure(instance, replicas)`` turns
    an instance into the run whose measure the theorem bounds (with the theorem's schedule where it
    prescribes one), or None when the instance cannot be run within the space's limits;
    ``bindings(config, trace)`` gives the theorem's symbols at that run, and must also work with
    ``trace=None`` (from the configuration alone), so inadmissible instances are skipped unrun.
    """

    theorem: Theorem
    strategy: Callable[[], Any]
    configure: Callable[[Mapping[str, Any], int], RunConfig | None]  # None: no run for this instance
    bindings: Callable[[RunConfig, Trace | None], Mapping[str, float]]  # None: the configuration alone
    source: Source
    measure: str | None = None  # default: the theorem's measure
    note: str = ""
    # a bound on the run's state at a round (a lemma), not on a horizon: the state's symbols read at
    # checkpoint i, so that the trajectory evaluates the bound with each checkpoint's state
    state_bindings: Callable[[RunConfig, Trace, int], Mapping[str, float]] | None = None
    # exact runs compute in float64: a measure this small is an exact 0 plus round-off, and a bound is
    # broken only by more than it (else an instance sitting at its solution "breaks" a bound of 0)
    roundoff: float = 0.0

    @property
    def id(self) -> str:
        return self.theorem.id

    @property
    def measured(self) -> str:
        return self.measure or self.theorem.measure


@dataclass
class Probe:
    """One instance tried: its run, the theorem there, and how the measurement compares."""

    instance: dict[str, Any]
    config: RunConfig
    evaluation: Evaluation
    mean: float
    lcb: float
    ucb: float
    bound: float
    diverged: int
    trace: Trace | None = field(default=None, repr=False)
    roundoff: float = 0.0  # the space's: measures up to it count as 0

    @property
    def ratio(self) -> float:
        """measure / bound; a zero bound is broken by any positive measure (inf) and met by a zero one."""
        if self.mean <= self.roundoff:
            return 0.0
        if self.bound > 0:
            return self.mean / self.bound
        return math.inf if self.mean > self.bound else 0.0

    @property
    def breaks(self) -> bool:
        return self.lcb > self.bound + self.roundoff

    def to_dict(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "ratio": _num(self.ratio),
            "mean": _num(self.mean),
            "lcb": _num(self.lcb),
            "ucb": _num(self.ucb),
            "bound": _num(self.bound),
            "diverged": self.diverged,
            "conditions": [c.to_dict() for c in self.evaluation.conditions],
            "config": self.config.to_dict(),
        }


@dataclass
class HuntResult:
    """What a hunt found: the counterexample (shrunk) if any, else the largest ratio seen and where."""

    theorem: str
    version: str
    found: bool
    best: Probe | None  # the counterexample when found, else the probe with the largest ratio
    examples: int  # instances run (conditions held)
    rejected: int  # instances drawn whose conditions failed
    seconds: float
    truncated: bool  # the seconds budget ended the search before its example count
    seed: int
    history: list[float] = field(default_factory=list)  # ratio of each probe, in order
    # the best instance's run checkpoint by checkpoint: the measure and the bound at each T (issue #13)
    trajectory: dict[str, Any] | None = None
    requested: int = 0  # the example count asked for
    draws: int = 0  # admissible draws, repeated instances included (hypothesis counts these)
    runs: list[RunConfig] = field(default_factory=list)  # one run per algorithm, family and mode it ran

    @property
    def stopped(self) -> str:
        """Why the search ended, in words."""
        if self.found:
            return "counterexample found, then shrunk"
        if self.truncated:
            return "time budget reached"
        if self.draws >= self.requested:
            return "example count reached" + (f" ({self.requested - self.examples} draws repeated an instance)"
                                              if self.examples < self.requested else "")
        return "hypothesis ended the search before the example count (it drew too few admissible instances)"

    @property
    def ratio(self) -> float:
        return self.best.ratio if self.best is not None else math.nan

    @property
    def command(self) -> str:
        return reproduce_command(self.best.config) if self.best is not None else ""

    def to_dict(self) -> dict[str, Any]:
        best = self.best.to_dict() if self.best is not None else None
        return {
            "theorem": self.theorem,
            "version": self.version,
            "found": self.found,
            "ratio": _num(self.ratio),
            "instance": best["instance"] if best else None,
            "conditions": best["conditions"] if best else [],
            "command": self.command,
            "best": best,
            "examples": self.examples,
            "rejected": self.rejected,
            "seconds": round(self.seconds, 2),
            "truncated": self.truncated,
            "seed": self.seed,
            "trajectory": self.trajectory,
            "requested": self.requested,
            "draws": self.draws,
            "stopped": self.stopped,
        }


class _Breaks(Exception):
    """Raised inside the hypothesis test on a counterexample, so that hypothesis shrinks it."""

    def __init__(self, probe: Probe):
        super().__init__(f"measure/bound = {probe.ratio:.3g}")
        self.probe = probe


def certifies(config: RunConfig, theorem: Theorem) -> bool:
    """The configuration's family certifies what ``theorem`` requires (ratecheck.assumptions): only
    such instances are admissible draws."""
    run = view(config)  # builds the problem through the registry (cached)
    return not missing(theorem.requires, certified(declared_by(run.problem), run.constants))


def hunt(
    space: HuntSpace,
    version: str,
    *,
    examples: int = 50,
    budget: float | None = None,
    seed: int = 0,
    replicas: int = 16,
    level: float = 0.95,
    run: Callable[[RunConfig], Trace] | None = None,
    database: str | Path | None = None,
    progress: Callable[[Probe], None] | None = None,
) -> HuntResult:
    """Search ``space`` for an instance on which bound ``version`` breaks.

    ``examples``: instances to run (conditions holding); ``budget``: seconds after which no new
    instance is run (shrinking included); ``run``: how a configuration becomes a Trace (pass a
    cached runner; default: run in this process); ``database``: a folder for hypothesis's example
    database, so a rerun starts from what earlier hunts found.
    """
    from hypothesis import HealthCheck, Phase, given, reject, settings, target
    from hypothesis import seed as hypothesis_seed
    from hypothesis.database import DirectoryBasedExampleDatabase
    from hypothesis.errors import Flaky

    theorem = space.theorem
    theorem.bound(version)  # an unknown version fails here, naming the known ones
    check_option("hunt", "examples", examples)
    check_option("hunt", "budget", budget)
    if run is None:
        run = run_config
    started = time.perf_counter()
    memo: dict[str, Probe | None] = {}  # instance -> probe (None: conditions fail), so replays agree
    state: dict[str, Any] = {"examples": 0, "rejected": 0, "truncated": False, "best": None, "found": None, "draws": 0}
    history: list[float] = []
    kinds: dict[tuple[str, str, str], RunConfig] = {}  # what code the search ran

    def probe(instance: dict[str, Any]) -> Probe | None:
        key = json.dumps(instance, sort_keys=True, default=str)
        if key in memo:
            return memo[key]
        if budget is not None and time.perf_counter() - started > budget:
            state["truncated"] = True
            return None  # past the budget: nothing new is run (not memoized: it was not tried)
        config = space.configure(instance, replicas)
        # conditions first, from the configuration alone: an inadmissible instance costs no run
        admissible = (config is not None and certifies(config, theorem)
                      and theorem.evaluate(space.bindings(config, None), use_schedule=False).all_hold)
        if admissible:
            assert config is not None
            kinds.setdefault((config.algorithm, config.problem, config.mode), config)
            trace = run(config)
            evaluation = theorem.evaluate(space.bindings(config, trace), use_schedule=False)
        if not admissible or not evaluation.all_hold:
            memo[key] = None
            state["rejected"] += 1
            return None
        assert config is not None  # admissible
        values = trace.at_end(space.measured)
        values = values[np.isfinite(values)]
        if getattr(trace, "exact", False) and values.size == 1:  # an exact expectation: no CI to take
            mean = lcb = ucb = float(values[0])
        elif values.size < 2:  # diverged under the theorem's conditions: the measure is unbounded
            mean = lcb = ucb = math.inf
        else:
            mean = float(values.mean())
            lcb = mean_ci(values, level=level, side="lower").low
            ucb = mean_ci(values, level=level, side="upper").high
        result = Probe(dict(instance), config, evaluation, mean, lcb, ucb,
                       float(evaluation.bounds[version]), trace.diverged_count, trace, space.roundoff)
        memo[key] = result
        state["examples"] += 1
        history.append(result.ratio)
        best = state["best"]
        if best is None or result.ratio > best.ratio:
            state["best"] = result
        if result.breaks and (state["found"] is None or _smaller(result.instance, state["found"].instance)):
            state["found"] = result
        if progress is not None:
            progress(result)
        return result

    # one database folder per theorem and version: hypothesis keys examples on the test function
    db = DirectoryBasedExampleDatabase(str(Path(database) / f"{theorem.id}-{version}")) if database else None

    @settings(
        max_examples=examples,
        deadline=None,
        database=db,
        derandomize=False,
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )
    @hypothesis_seed(seed)
    @given(space.strategy())
    def search(instance: dict[str, Any]) -> None:
        result = probe(instance)
        if result is None:
            reject()
        state["draws"] += 1  # admissible draws, repeats included: what hypothesis counts to max_examples
        target(min(result.ratio, 1e12), label="measure/bound")
        if result.breaks:
            raise _Breaks(result)

    try:
        with _without_local_constants():
            search()
    except _Breaks as exc:  # the shrunk counterexample
        if state["found"] is None or not _smaller(state["found"].instance, exc.probe.instance):
            state["found"] = exc.probe
    except Flaky:  # a replay past the budget: what was found stands
        pass
    except Exception as exc:  # hypothesis gives up when nearly every draw is rejected
        # every draw refused because the budget ran out is not the space's fault (issue #24)
        if state["examples"] == 0 and type(exc).__name__ == "Unsatisfiable" and not state["truncated"]:
            raise ValueError(
                f"hunt {theorem.id}: no drawn instance satisfies the theorem's conditions "
                f"({state['rejected']} rejected); the space's strategy must aim at the admissible region"
            ) from None
        if type(exc).__name__ != "Unsatisfiable":
            raise
    found = state["found"]
    best = found if found is not None else state["best"]
    return HuntResult(
        theorem=theorem.id, version=version, found=found is not None, best=best,
        examples=state["examples"], rejected=state["rejected"], seconds=time.perf_counter() - started,
        truncated=state["truncated"], seed=seed, history=history,
        trajectory=trajectory(space, best, version, level=level) if best is not None else None,
        requested=examples, draws=state["draws"], runs=list(kinds.values()),
    )


@contextlib.contextmanager
def _without_local_constants():
    """A search that depends on nothing but its seed and counts. hypothesis (>= 6.131) mixes into its
    draws constants read from every loaded local module, so a search would depend on which modules
    happen to be imported (another paper, a plugin): the SimFBO
    hunt found its counterexample alone and missed it with every paper loaded. A hunt must be the same
    for a given seed, so it runs without them. (hypothesis internals: if they move, nothing is patched.)"""
    try:
        from hypothesis.internal.conjecture import providers

        original, empty = providers._get_local_constants, providers.Constants()
        cache = providers.CONSTANTS_CACHE.cache
    except (ImportError, AttributeError):  # pragma: no cover - another hypothesis layout
        yield
        return
    providers._get_local_constants = lambda: empty
    cache.clear()  # permitted constants cached per choice type would still carry the local ones
    # hypothesis ends shrinking after MAX_SHRINKING_SECONDS (300 s): on a slow or loaded machine that
    # would cut a search short, so a hunt's shrinking ends on hypothesis's count (MAX_SHRINKS) only
    from hypothesis.internal.conjecture import engine

    deadline = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if deadline is not None:
        engine.MAX_SHRINKING_SECONDS = 10**9
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.clear()
        if deadline is not None:
            engine.MAX_SHRINKING_SECONDS = deadline


def trajectory(space: HuntSpace, probe: Probe, version: str, *, level: float = 0.95) -> dict[str, Any] | None:
    """The measure along ``probe``'s run against the bound evaluated at each checkpoint's T (and, for a
    bound on the state, that checkpoint's state), with the instance's constants and step sizes (the
    run's own, as the search judged it): the evidence behind
    the report's plot of a hunt. None when the probe kept no trace. Checkpoint 0 (no round yet) has
    no bound and is left out."""
    trace = probe.trace
    if trace is None:
        return None
    values = space.bindings(probe.config, trace)
    measures = np.asarray(trace.measures[space.measured], dtype=float)
    rounds, mean, low, high, bound = [], [], [], [], []
    for i, (t, row) in enumerate(zip(np.asarray(trace.checkpoints), measures)):
        finite = row[np.isfinite(row)]
        if t < 1 or finite.size == 0:
            continue
        if finite.size > 1 and not getattr(trace, "exact", False):
            ci = mean_ci(finite, level=level)
            m, lo, hi = ci.mean, ci.low, ci.high
        else:
            m = lo = hi = float(finite.mean())
        state = space.state_bindings(probe.config, trace, i) if space.state_bindings else {}
        evaluation = space.theorem.evaluate({**values, **state, "T": float(t)}, use_schedule=False)
        rounds.append(int(t))
        mean.append(_num(m))
        low.append(_num(lo))
        high.append(_num(hi))
        bound.append(_num(evaluation.bounds[version]))
    return {"measure": space.measured, "version": version, "rounds": rounds, "mean": mean, "low": low,
            "high": high, "bound": bound, "exact": bool(getattr(trace, "exact", False)),
            "horizon": int(probe.config.rounds), "found": bool(probe.breaks),
            "bound_at": "state" if space.state_bindings else "horizon", "level": level}


def _smaller(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """A simpler instance: fewer rounds, clients, dimensions (the sum of its integer sizes)."""
    size = lambda inst: sum(abs(v) for v in inst.values() if isinstance(v, int) and not isinstance(v, bool))  # noqa: E731
    return size(a) < size(b)


def reproduce_command(config: RunConfig) -> str:
    """The `ratecheck run` command line that reproduces a configuration's run."""
    parts = ["ratecheck run", config.algorithm, "--problem", config.problem]
    parts += [f"--set {k}={_cli_value(v)}" for k, v in config.params.items()]
    parts += [f"--problem-set {k}={_cli_value(v)}" for k, v in config.problem_params.items()]
    parts += [f"--rounds {int(config.rounds)}", f"--replicas {int(config.replicas)}", f"--seed {int(config.seed)}"]
    if config.mode != "monte_carlo":
        parts.append(f"--{config.mode}")  # --exact / --auto
    return " ".join(parts)


def _cli_value(value: Any) -> str:
    if isinstance(value, str):
        return value if value and all(ch.isalnum() or ch in "_:.-" for ch in value) else json.dumps(value)
    return json.dumps(value)


def _num(x: float) -> float | str:
    x = float(x)
    return x if math.isfinite(x) else str(x)


def smallest_admissible(
    theorem: Theorem, values: Mapping[str, float], var: str, *, low: int = 1, high: int = 10**9,
    use_schedule: bool = True,
) -> int | None:
    """The smallest integer ``var`` (e.g. the horizon T) at which every condition of the theorem holds,
    the others fixed at ``values``; None when none up to ``high`` does. Conditions are assumed to
    hold for every larger value once they hold (true of horizon conditions under a schedule in T)."""

    def holds(v: int) -> bool:
        return theorem.evaluate({**values, var: v}, use_schedule=use_schedule).all_hold

    if holds(low):
        return low
    hi = low
    while not holds(hi):
        if hi >= high:
            return None
        hi = min(high, hi * 2)
    lo = hi // 2 if hi > low else low
    while hi - lo > 1:  # holds(hi), not holds(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if holds(mid) else (mid, hi)
    return hi


# ---------------------------------------------------------------------------------------------
# Registered hunts: claims whose evidence is a search, not a grid.


def _no_grid_runs(value: float, profile: Profile) -> RunConfig:
    raise ValueError("a hunt claim plans no grid runs: its searches are stored tasks")


@dataclass(frozen=True)
class Searches(Plan):
    """A hunt's plan: no grid runs; its restarts (``HuntClaim.searches``) are stored tasks, asked for in turn
    until one finds a counterexample, each computed on the executor."""

    reads: ClassVar[tuple[str, ...]] = ("searches", "space")  # the claim fields it reads
    adaptive: ClassVar[bool] = True
    view: ClassVar[Any] = SearchHistory()  # measure/bound of every instance tried, against 1

    def runs(self, claim: Any, profile: Profile) -> list[RunConfig]:
        return []  # the search decides what to run as it goes

    def requests(self, claim: Any, profile: Profile, results: Mapping[str, Any]) -> list[Any]:
        """The next restart not yet in ``results``, unless an earlier one found a counterexample."""
        for task in claim.searches(profile):
            if task.key() not in results:
                return [task]
            if results[task.key()]["found"]:
                return []
        return []

    def compute_task(self, claim: Any, task: Task) -> dict[str, Any]:
        spec = task.spec
        result = hunt(claim.space, spec["version"], examples=int(spec["examples"]), seed=int(spec["seed"]),
                      replicas=int(spec["replicas"]), level=float(spec["level"]), run=task_runner())
        return {**result.to_dict(), "history": [_num(r) for r in result.history],
                "runs": [c.to_dict() for c in result.runs]}


@dataclass(frozen=True, kw_only=True)
class HuntClaim(Claim):
    """A hunt registered as a claim: it plans no grid runs; its searches are stored tasks.

    ``NoCounterexample`` states what a theorem states, "the bound holds on every admissible
    instance": PASS when the search finds no counterexample within its examples, FAIL when it finds
    one (a printed bound that is wrong is then an expected FAIL, a confirmed erratum, with the
    counterexample as evidence). ``Counterexample`` states the opposite and decides the other way.
    The grid is the number of instances searched per profile (``vary="examples"``): a search stops
    on that count, never on seconds, so its verdict is the same on every machine and load.
    ``restarts`` independent searches (seeds seed, seed + 1, ...; under a check's seed offset see
    ``restart_seed``) run in turn until one finds a counterexample: hypothesis's targeting follows the
    largest ratio, which can pull a search away from a region where the bound breaks by divergence rather
    than by degrees; restarts are how a registered hunt keeps its power without trusting one lucky seed.

    Each search is a ``Task`` (ratecheck.runner.tasks): ``requests`` asks for the next restart until one
    finds a counterexample, the sweep runs it on the executor and stores its result, and
    ``decide`` reads the stored results.
    """

    space: HuntSpace
    version: str
    seed: int = 0
    restarts: int = 1
    replicas: int = 16  # per probe, for Monte-Carlo runs (exact runs have one row)
    vary: str = "examples"
    configure: Callable[[float, Profile], RunConfig] = field(default=_no_grid_runs)
    measure: str = ""
    expects_counterexample: bool = False
    plan: Plan = Searches()

    def __post_init__(self) -> None:
        super().__post_init__()
        self.space.theorem.bound(self.version)  # an unknown version fails at registration

    def searches(self, profile: Profile) -> list[Task]:
        """One task per restart: the space, the bound version, the seed and the example count."""
        examples = int(self.values(profile)[0])
        return [Task("hunt", self.id, {"theorem": self.space.id, "version": self.version,
                                       "seed": restart_seed(self.seed, r, profile.seed_offset),
                                       "examples": examples, "replicas": self.replicas, "level": self.level,
                                       "roundoff": self.space.roundoff})
                for r in range(max(1, int(self.restarts)))]

    def decide(self, profile: Profile, traces: Mapping[str, Any]) -> Outcome:
        if self.requests(profile, traces):  # asked outside a sweep: search here, uncached
            traces = complete(self, profile, traces)
        result: dict[str, Any] | None = None
        restarts = 0
        for task in self.searches(profile):
            attempt = traces[task.key()]
            result = attempt if result is None else _merged(result, attempt)
            restarts += 1
            if result["found"]:
                break
        assert result is not None
        history = [float(r) for r in result["history"]]
        best = result["best"]
        config = RunConfig.from_dict(best["config"]) if best else None
        # issue #13 (hunts helper): a diverged probe has ratio inf; PointResult samples must be finite (the
        # report's CI and the --json output refuse inf), so it is a diverged point with no sample
        points = [PointResult(float(i + 1), config, np.array([ratio]) if math.isfinite(ratio) else np.empty(0),  # type: ignore[arg-type]  # only if best: config set
                              int(not math.isfinite(ratio)))
                  for i, ratio in enumerate(history)] if best else []
        hunt_evidence = {**{k: v for k, v in result.items() if k not in ("history", "runs")}, "restarts": restarts}
        evidence = {"hunt": hunt_evidence, "history": result["history"], "trajectory": result["trajectory"]}
        searched = (f"{result['examples']} admissible instances searched ({result['rejected']} drawn outside the "
                    f"theorem's conditions)")
        ratio = float(result["ratio"])
        if result["found"]:
            found = (f"counterexample to bound '{self.version}' of {self.space.id}: measure/bound = "
                     f"{ratio:.3g} at {json.dumps(best['instance'], sort_keys=True, default=str)}; "
                     f"{searched}; reproduce: {result['command']}")
            verdict = Verdict.PASS if self.expects_counterexample else Verdict.FAIL
            return Outcome(self, verdict, found, evidence, points)
        best_text = f"largest measure/bound {ratio:.3g}" if best else "no admissible instance"
        reason = f"no counterexample to bound '{self.version}' of {self.space.id}: {best_text}; {searched}"
        verdict = Verdict.FAIL if self.expects_counterexample else Verdict.PASS
        return Outcome(self, verdict, reason, evidence, points)


def _merged(first: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """Two searches (stored results) as one: the counterexample or best instance of either, counts
    and history summed, the stopping reason of the last."""
    better = float(then["ratio"]) > float(first["ratio"]) if first["best"] and then["best"] else bool(then["best"])
    pick = then if then["found"] or (not first["found"] and better) else first
    return {**pick, "examples": first["examples"] + then["examples"], "rejected": first["rejected"] + then["rejected"],
            "seconds": round(first["seconds"] + then["seconds"], 2), "truncated": first["truncated"] or then["truncated"],
            "requested": first.get("requested", 0) + then.get("requested", 0),
            "draws": first.get("draws", 0) + then.get("draws", 0), "stopped": then.get("stopped"),
            "history": first["history"] + then["history"]}


def NoCounterexample(**kwargs: Any) -> HuntClaim:
    """The theorem's bound holds on every instance the search tries (kind 'no_counterexample')."""
    return HuntClaim(kind="no_counterexample", expects_counterexample=False, **kwargs)


def Counterexample(**kwargs: Any) -> HuntClaim:
    """The search finds an admissible instance on which the bound breaks (kind 'counterexample')."""
    return HuntClaim(kind="counterexample", expects_counterexample=True, **kwargs)
