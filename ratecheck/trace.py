"""Run configurations and the record of a run (Trace), with a pickle-free array serialization."""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .params import ParamError
from .seeding import stable_hash

# The engine's own modules: a change to any of them can change every run's numbers.
ENGINE_MODULES = (
    "ratecheck.engine", "ratecheck.seeding", "ratecheck.participation", "ratecheck.options",
    "ratecheck.projections", "ratecheck.problem", "ratecheck.params", "ratecheck.trace",
    "ratecheck.algorithms.base", "ratecheck.algorithms.local",
)
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
        for name, low in (("rounds", 1), ("replicas", 1), ("seed", 0), ("checkpoints", 1)):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < low:
                raise ParamError("RunConfig", name, value, f"must be an integer >= {low}")

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
        """Cache key: identity, seed, replica count and the identity of the code that runs it
        (``code_identity``), so that editing an algorithm, a problem family or the engine
        invalidates exactly the runs it affects."""
        code = code_identity(self.algorithm, self.problem)["digest"]
        if self.mode != "monte_carlo":  # exact values also depend on the moment propagation's code
            code = stable_hash([code, _module_digest("ratecheck.exact")])
        return stable_hash({**self.identity(), "seed": int(self.seed), "replicas": int(self.replicas), "code": code})

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


def _module_digest(name: str) -> str:
    """SHA-256 of a module's source file (of every file of a package); '' if it cannot be read."""
    try:
        module = sys.modules.get(name) or importlib.import_module(name)
    except Exception:
        return ""
    path = getattr(module, "__file__", None)
    if not path:
        return ""
    path = Path(path)
    files = sorted(path.parent.rglob("*.py")) if path.name == "__init__.py" else [path]
    h = hashlib.sha256()
    for file in files:
        h.update(file.name.encode() + b"\0")
        h.update(file.read_bytes())
    return h.hexdigest()


def code_identity(algorithm: str, problem: str) -> dict[str, Any]:
    """Digests of the source that produces a run: the algorithm's modules (its class and every base
    class), the problem family's module (a whole package if it is one) and the engine's modules,
    with ``digest`` combining them and the package version. An unknown algorithm or family
    contributes nothing (its runs fail anyway). The registries are read on every call, so a test
    double swapped into them gets its own identity; the digests are cached per class and factory
    (sources do not change under a running sweep)."""
    from .registry import default  # names resolve through the one registry, never problems/ itself

    registry = default()
    cls: Any
    try:
        cls = registry.algorithm(algorithm)
    except Exception:  # unknown here: the run will fail and say why
        cls = None
    try:
        factory = registry.problem(problem)
    except Exception:
        factory = None
    return _code_identity(cls, factory)


@functools.cache
def _code_identity(cls: type | None, factory: Any) -> dict[str, Any]:
    from . import __version__

    modules: dict[str, str] = {}
    algorithm_modules = sorted({c.__module__ for c in getattr(cls, "__mro__", ())
                                if c.__module__ not in ("builtins", "abc", "typing")})
    for name in algorithm_modules:
        modules[name] = _module_digest(name)
    problem_module = getattr(factory, "__module__", "") or ""
    if problem_module:
        # a family split into a package (problems.minimax.quadratic ...) is identified as a whole
        parts = problem_module.split(".")
        top = ".".join(parts[:2]) if parts[0] == "problems" and len(parts) > 2 else problem_module
        modules[top] = _module_digest(top)
    for name in ENGINE_MODULES:
        modules[name] = _module_digest(name)
    # the classes too: two test doubles defined in one module must not share their runs
    classes = [f"{c.__module__}.{c.__qualname__}" for c in getattr(cls, "__mro__", ()) if c is not object]
    digest = stable_hash({"version": __version__, "modules": modules, "classes": classes})
    return {"digest": digest, "version": __version__, "algorithm": algorithm_modules, "classes": classes,
            "problem": problem_module, "modules": modules}


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
        arrays.update({f"final.{k}": v for k, v in self.final.items()})
        code = code_identity(self.config.algorithm, self.config.problem)
        meta = {"config": self.config.to_dict(), "info": _jsonable(self.info), "code": code["digest"],
                "code_modules": code["modules"]}
        return arrays, meta

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
        )


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))
