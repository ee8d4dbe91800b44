"""One place to inspect a run: a RunConfig -> its problem, exact constants, typed algorithm, and the
numbers theorems are bound to (clients per round n, delay lambda, local steps, rounds).

Bindings and configure functions read runs through ``view(config)`` instead of rebuilding the problem
and re-parsing option strings such as "without_replacement:8" in their own copies. Problems,
constants and algorithms are cached by their JSON identity (``functools.lru_cache``), so a sweep
that evaluates a theorem at every grid point builds each problem once.

    run = view(config)
    values = {**run.constants, "n": run.participating, "K": run.local_steps, "T": run.rounds,
              "lam": max(1, run.delay_lambda)}
"""

from __future__ import annotations

import functools
import json
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .algorithms.base import Algorithm
from .problem import Problem
from .registry import make_algorithm, make_problem
from .trace import RunConfig

P = TypeVar("P")

__all__ = ["RunView", "algorithm_of", "constants_of", "problem_of", "view"]


@dataclass(frozen=True)
class RunView:
    """A run configuration with its problem, typed algorithm and exact constants (floats)."""

    config: RunConfig
    problem: Any  # the family the configuration names (its own attributes are read): see problem_of
    algorithm: Any  # likewise the algorithm class it names
    constants: Mapping[str, float]  # read-only; constants_of() gives a copy to extend

    @property
    def rounds(self) -> int:
        """T."""
        return int(self.config.rounds)

    @property
    def num_clients(self) -> int:
        """N, the clients of the problem."""
        return int(self.problem.num_clients)

    @property
    def participating(self) -> int:
        """Clients (slots, with multiplicity) per round: m of 'with/without_replacement:m', N for
        'full' or an algorithm without a participation option."""
        participation = getattr(self.algorithm, "participation", None)
        return self.num_clients if participation is None else int(participation.per_round(self.num_clients))

    @property
    def delay_lambda(self) -> int:
        """The delay schedule's lambda (its largest delay); 0 without one. Bounds that need
        lambda >= 1 take max(1, ...) themselves."""
        delay = getattr(self.algorithm, "delay", None)
        return int(getattr(delay, "lam", 0) or 0)

    @property
    def local_steps(self) -> Any:
        """The algorithm's local steps as typed (an int K, or e.g. a LocalSteps schedule); 1 if none."""
        return getattr(self.algorithm, "local_steps", 1)

    def param(self, name: str) -> Any:
        """A hyper-parameter as the algorithm holds it (parsed and checked)."""
        if not hasattr(self.algorithm, name):
            raise AttributeError(f"{self.algorithm.name} has no parameter {name!r}")
        return getattr(self.algorithm, name)


def view(config: RunConfig) -> RunView:
    """The inspected run (problem, algorithm and constants cached by their identity)."""
    return RunView(config, problem_of(config), algorithm_of(config),
                   types.MappingProxyType(_constants(*_problem_key(config))))


def problem_of(config: RunConfig, family: type[P] | None = None) -> Any:
    """The problem a configuration names, built once per (family, parameters).

    Its static type is the family the configuration names, which only the registry knows at run
    time: pass ``family`` (a class or a protocol of ratecheck.oracles) to have it checked and typed."""
    problem = _problem(*_problem_key(config))
    if family is not None and not isinstance(problem, family):
        raise TypeError(f"run {config.key()[:12]} names problem family {config.problem!r}, not a {family.__name__}")
    return problem


def constants_of(config: RunConfig) -> dict[str, float]:
    """The problem's exact constants as floats (a fresh dict: callers may extend it)."""
    return dict(_constants(*_problem_key(config)))


def algorithm_of(config: RunConfig) -> Any:
    """The typed algorithm a configuration names, built once per (name, parameters) (statically
    Any, as ``problem_of``: the registry resolves the name)."""
    return _algorithm(config.algorithm, _json(config.params))


def _json(params: Mapping[str, Any]) -> str:
    return json.dumps(dict(params), sort_keys=True, default=str)


def _problem_key(config: RunConfig) -> tuple[str, str]:
    return config.problem, _json(config.problem_params)


@functools.lru_cache(maxsize=256)
def _problem(family: str, params_json: str) -> Problem:
    return make_problem(family, json.loads(params_json))


@functools.lru_cache(maxsize=256)
def _constants(family: str, params_json: str) -> dict[str, float]:
    return {name: float(c.value) for name, c in _problem(family, params_json).constants().items()}


@functools.lru_cache(maxsize=1024)
def _algorithm(name: str, params_json: str) -> Algorithm:
    return make_algorithm(name, json.loads(params_json))
