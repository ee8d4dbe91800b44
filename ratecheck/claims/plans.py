"""What a claim runs (the plan pieces of ratecheck.claims.compose) beyond one run per grid value (``Grid``):
two series compared on one grid, a stored recursion beside each run, several runs per grid value. The
adaptive plan of a bisection on the horizon lives with its search (ratecheck.runner.horizon)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..model.tasks import Task
from ..trace import RunConfig
from .compose import Grid, Plan, grid_point
from .model import PointResult, Profile


@dataclass(frozen=True)
class SeriesPair(Plan):
    """Two series on one grid: ``configure`` (series A) and ``configure_other`` (series B), one run each per
    grid value; each point read by the claim's reading and tagged with its series' label (``stats["series"]``,
    the claim's ``labels``), A's points first."""

    reads: ClassVar[tuple[str, ...]] = ("configure_other", "labels")  # the claim fields it reads

    def runs(self, claim: Any, profile: Profile) -> list[RunConfig]:
        values = claim.values(profile)
        return [claim.configure(v, profile) for v in values] + [claim.configure_other(v, profile) for v in values]

    def points(self, claim: Any, profile: Profile, traces: Mapping[str, Any]) -> list[PointResult]:
        values, runs = claim.values(profile), claim.own_runs(profile)
        reading, out = claim._reading(), []
        for label, configs in zip(claim.labels, (runs[: len(values)], runs[len(values):])):
            for value, config in zip(values, configs):
                point = grid_point(claim, value, config, traces[config.key()])
                reading(claim, point)
                point.stats = {**point.stats, "series": label}
                out.append(point)
        return out


@dataclass(frozen=True)
class StoredRecursion(Grid):
    """One run per grid value and, beside each run, a stored computation from the run's configuration and
    checkpoints (a ``Task``: ``claim.oracle_task(config, trace)``, computed by ``claim.compute_recursion(task)``
    on the executor once the run is there, stored under a key covering the claim's modules, issue #19). Each
    point's ``inputs["recursion"]`` holds it for the reading (absent outside a sweep: the reading computes it).
    A claim with its own ``summary`` decides on that and requests no recursion."""

    reads: ClassVar[tuple[str, ...]] = ("compute_recursion", "oracle_task", "summary")  # the claim fields it reads

    def requests(self, claim: Any, profile: Profile, results: Mapping[str, Any]) -> list[Any]:
        """The recursions of the runs already made and not yet in ``results`` (the runs are planned)."""
        if claim.summary is not None:
            return []
        return [task for config in claim.own_runs(profile) if config.key() in results
                for task in [claim.oracle_task(config, results[config.key()])] if task.key() not in results]

    def compute_task(self, claim: Any, task: Task) -> dict[str, Any]:
        return claim.compute_recursion(task)

    def points(self, claim: Any, profile: Profile, traces: Mapping[str, Any]) -> list[PointResult]:
        reading, out = claim._reading(), []
        for value, config in zip(claim.values(profile), claim.own_runs(profile)):
            trace = traces[config.key()]
            point = grid_point(claim, value, config, trace)
            if claim.summary is None:
                stored = traces.get(claim.oracle_task(config, trace).key())
                if stored is not None:
                    point.inputs["recursion"] = stored
            reading(claim, point)
            out.append(point)
        return out


@dataclass(frozen=True)
class RunsPerValue(Plan):
    """Several runs per grid value: ``claim.runs_at(value, profile)`` lists (tags, run) pairs (a step below
    and above a threshold; an algorithm and its baseline). A point per run, its ``stats`` the tags, its
    ``inputs["runs"]`` every run of its grid value by its first tag's value, read by the claim's reading.
    ``exactness``: whether the outcome states the runs' exact state (issue #8; the DeFedAvg claims that run
    this plan on Monte-Carlo runs never did)."""

    reads: ClassVar[tuple[str, ...]] = ("runs_at",)  # the claim fields it reads
    exactness: bool = True

    def runs(self, claim: Any, profile: Profile) -> list[RunConfig]:
        return [config for value in claim.values(profile) for _, config in claim.runs_at(value, profile)]

    def points(self, claim: Any, profile: Profile, traces: Mapping[str, Any]) -> list[PointResult]:
        reading, out = claim._reading(), []
        for value in claim.values(profile):
            group = [(dict(tags), config, traces[config.key()]) for tags, config in claim.runs_at(value, profile)]
            by_tag = {next(iter(tags.values())): trace for tags, _, trace in group}
            points = []
            for tags, config, trace in group:
                point = grid_point(claim, value, config, trace)
                point.stats, point.inputs["runs"] = tags, by_tag
                points.append(point)
            for point in points:  # read once the grid value's runs are all there
                reading(claim, point)
            out += points
        return out

    def evidence(self, claim: Any, points: Sequence[PointResult], decided: bool) -> dict[str, Any]:
        return super().evidence(claim, points, decided) if self.exactness else {}
