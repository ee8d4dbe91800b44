"""Run configurations and the record of a run (Trace), with a pickle-free array serialization."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .params import RUN_PARAMS, ParamError, check_run
from .seeding import stable_hash

CONFIG_FIELDS = ("algorithm", "params", "problem", "problem_params", "rounds", "replicas", "seed", "checkpoints",
                 "mode")
RUN_MODES = ("monte_carlo", "exact", "auto")  # issue #8: Monte Carlo, exact expectations, exact where possible


@dataclass(frozen=True)
class RunConfig:
    """Everything that determines a run's numbers: pure, JSON-able data.

    ``identity()`` omits ``replicas``, so replica r has the same numbers whether 4 or 64 replicas
    ran; the cache ``key()`` includes it, since the stored arrays differ.
    """

    algorithm: str
    params: Mapping[str, Any]
    problem: str
    problem_params: Mapping[str, Any]
    rounds: int
    replicas: int = 16
    seed: int = 0
    checkpoints: int = 24
    mode: str = "monte_carlo"  # issue #8: "monte_carlo", "exact" or "auto" (ratecheck.exact)

    def __post_init__(self) -> None:
        # the same rules whether the config comes from a claim, the API or a cache file's metadata
        if self.mode not in RUN_MODES:
            raise ParamError("RunConfig", "mode", self.mode, f"must be one of {RUN_MODES}")
        for name in ("algorithm", "problem"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ParamError("RunConfig", name, value, "must be a non-empty string (a registered name)")
        for name in ("params", "problem_params"):
            value = getattr(self, name)
            if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
                raise ParamError("RunConfig", name, value, "must be a mapping of parameter names to values")
        for name in RUN_PARAMS:  # rounds, replicas, seed, checkpoints: declared in ratecheck.params
            check_run("RunConfig", name, getattr(self, name))

    def identity(self) -> dict[str, Any]:
        out = {
            "algorithm": self.algorithm,
            "params": dict(self.params),
            "problem": self.problem,
            "problem_params": dict(self.problem_params),
            "rounds": int(self.rounds),
            "checkpoints": int(self.checkpoints),
        }
        if self.mode != "monte_carlo":  # issue #8: the default mode leaves existing keys unchanged
            out["mode"] = self.mode
        return out

    def run_key(self) -> str:
        """Identity hash that seeds the random streams (no seed, no replica count; no mode, issue #8:
        an 'auto' run that falls back to Monte Carlo draws the numbers a 'monte_carlo' run draws)."""
        return stable_hash({k: v for k, v in self.identity().items() if k != "mode"})

    def key(self) -> str:
        """The run's key: identity, seed and replica count. The store adds the identity of the code
        that runs it (``ratecheck.runner.identity.stored_key``)."""
        return stable_hash({**self.identity(), "seed": int(self.seed), "replicas": int(self.replicas)})

    def to_dict(self) -> dict[str, Any]:
        return {**self.identity(), "seed": int(self.seed), "replicas": int(self.replicas), "mode": self.mode}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        if not isinstance(data, Mapping):
            raise ParamError("RunConfig", "config", data, "must be a mapping of its fields")
        unknown = sorted(set(data) - set(CONFIG_FIELDS))
        missing = sorted({"algorithm", "params", "problem", "problem_params", "rounds"} - set(data))
        if unknown or missing:
            raise ParamError("RunConfig", "config", dict(data),
                             f"unknown fields {unknown} / missing fields {missing}; fields: {list(CONFIG_FIELDS)}")
        return cls(**data)

    def with_(self, **changes: Any) -> RunConfig:
        data = self.to_dict()
        for name, value in changes.items():
            if name in data:
                data[name] = value
            else:
                raise ValueError(f"RunConfig has no field {name!r}")
        return RunConfig.from_dict(data)


@dataclass
class Trace:
    """What one run produced, with a leading replica axis where it has one.

    measures[name]: (C, R), the exact measure of the global iterate after `checkpoints[c]` rounds;
    ``avg:<name>`` is the running mean over rounds 0..t-1 (so at t = T it is (1/T) sum_{t<T}).
    Entries of a diverged replica are NaN from its divergence on.
    """

    config: RunConfig
    replica_ids: np.ndarray  # (R,)
    checkpoints: np.ndarray  # (C,) rounds completed, starting at 0
    measures: dict[str, np.ndarray]  # (C, R)
    counters: dict[str, np.ndarray]  # (C,) cumulative, replica mean
    final: dict[str, np.ndarray]  # (R, ...) final global point(s)
    diverged_round: np.ndarray  # (R,) round of divergence, -1 if never
    info: dict[str, Any] = field(default_factory=dict)
    # (C, R) cumulative, per replica (Monte Carlo): a cost claim compares them replica by replica, which a mean
    # hides (a permutation, or errors that cancel); empty for an exact run
    replica_counters: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def replicas(self) -> int:
        return int(self.replica_ids.shape[0])

    @property
    def exact(self) -> bool:
        """Issue #8: the measures are exact expectations (one row, no spread), not replica samples."""
        return bool(self.info.get("exact", False))

    @property
    def valid(self) -> np.ndarray:
        return self.diverged_round < 0

    @property
    def diverged_count(self) -> int:
        return int((~self.valid).sum())

    def at_end(self, measure: str) -> np.ndarray:
        """Per-replica value of `measure` after the last round (NaN for diverged replicas)."""
        if measure not in self.measures:
            raise KeyError(f"measure {measure!r} not recorded; have {sorted(self.measures)}")
        return self.measures[measure][-1]

    def to_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        arrays: dict[str, np.ndarray] = {
            "replica_ids": self.replica_ids,
            "checkpoints": self.checkpoints,
            "diverged_round": self.diverged_round,
        }
        arrays.update({f"measure.{k}": v for k, v in self.measures.items()})
        arrays.update({f"counter.{k}": v for k, v in self.counters.items()})
        arrays.update({f"replica_counter.{k}": v for k, v in self.replica_counters.items()})
        arrays.update({f"final.{k}": v for k, v in self.final.items()})
        return arrays, {"config": self.config.to_dict(), "info": _jsonable(self.info)}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> Trace:
        def section(prefix: str) -> dict[str, np.ndarray]:
            return {k[len(prefix) :]: np.asarray(v) for k, v in arrays.items() if k.startswith(prefix)}

        return cls(
            config=RunConfig.from_dict(meta["config"]),
            replica_ids=np.asarray(arrays["replica_ids"]),
            checkpoints=np.asarray(arrays["checkpoints"]),
            measures=section("measure."),
            counters=section("counter."),
            final=section("final."),
            diverged_round=np.asarray(arrays["diverged_round"]),
            info=dict(meta.get("info", {})),
            replica_counters=section("replica_counter."),
        )


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))
