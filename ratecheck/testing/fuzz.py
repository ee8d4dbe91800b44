"""The fuzzing oracle of ratecheck's own suite (tests/test_fuzz.py), for any plugin's tests.

``plausible(name, value, kind)`` says, independently of ratecheck.params, whether a careful reader
could accept ``value`` for a parameter; ``algorithm_kinds``/``problem_kinds`` list the declared
parameters of a registered algorithm or family; ``fuzz_algorithm``/``fuzz_problem`` feed seeded
odd values to the constructors and require a clear ValueError or a plausible acceptance.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import random
from typing import Any

from ..algorithms.base import _annotated_param, lookup
from ..params import declarations, inferred_declarations
from ..registry import default, make_algorithm, make_problem

# API values: numbers of every kind, odd texts, and types JSON cannot express
API_VALUES: list[Any] = [None, True, False, 0, 1, 2, -1, 2.0, 0.05, -0.5, 1e-300, 1e300, float("nan"), float("inf"),
                         -float("inf"), 10**12, 10**400, "", "abc", "1", "nan", "False", [], [1.0, 2.0], [[1.0]], {},
                         {"a": 1}, (1.0,), b"x", object(), 1 + 2j, "with_replacement:2", "full", "constant:1", "shared"]

POSITIVE = ("eta", "gamma", "step", "lr", "lam", "mu", "omega", "beta", "rho", "R", "L")
COUNT = ("clients", "dim", "local_steps", "rounds", "replicas", "rank", "dim_x", "dim_y", "batch_size")
NONNEGATIVE = ("noise", "sigma", "zeta", "spread", "p", "c0", "reg_eps", "seed")


def plausible(name: str, value: Any, kind: str | None) -> bool:
    """An independent oracle: could a careful reader accept ``value`` for parameter ``name``?

    ``kind`` '~real', '~int', ... is a stand-in taken from an annotation (a parameter nobody has
    declared yet): only its type is held to, not its range."""
    if kind and kind.startswith("~"):
        kind = kind[1:]
        if kind in ("real", "int"):
            return (not isinstance(value, bool) and isinstance(value, numbers.Real) and math.isfinite(float(value))
                    and (kind == "real" or isinstance(value, numbers.Integral)))
    if kind in ("real", "int"):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
            return False
        if kind == "int" and not isinstance(value, numbers.Integral):
            return False
        if any(name == c or name.startswith(c + "_") for c in COUNT) and value < 1:
            return False
        if any(name.startswith(p) for p in POSITIVE) and value <= 0 and not name.endswith("_weight"):
            return name in ("lam", "alpha")  # a few weights may be 0
        if name in NONNEGATIVE and value < 0:
            return False
        return True
    if kind == "vector":
        items = value if isinstance(value, (list, tuple)) else [value]
        return bool(items) and all(plausible(name, v, "real") for v in items)
    if kind == "bool":
        return isinstance(value, bool)
    if kind in ("str", "choice"):
        return isinstance(value, str) and value != ""
    if kind == "option":  # parsed from text or a mapping; a count option (local_steps) takes an int >= 1
        counts = isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 1
        # a number-valued option (a radius, a cap) takes a finite positive real
        real = isinstance(value, float) and math.isfinite(value) and value > 0
        return isinstance(value, str) and value != "" or isinstance(value, dict) or counts or real
    return True  # undeclared: nothing to hold it to


def algorithm_kinds(name: str) -> dict[str, str | None]:
    """Each parameter of algorithm ``name`` and its declared kind ('~kind': an annotation stands in)."""
    cls = lookup(name)
    if cls is None:
        raise KeyError(f"no algorithm {name!r}")
    kinds: dict[str, str | None] = {k: p.kind for k, p in declarations(cls).items()}
    for f in dataclasses.fields(cls):
        if f.name not in kinds:
            stand_in = _annotated_param(cls, f.name)
            kinds[f.name] = "~" + stand_in.kind if stand_in else None
    return kinds


def problem_kinds(family: str, params: dict[str, Any]) -> dict[str, str | None]:
    """Each parameter of family ``family`` (with ``params``: a family whose parameters depend on a
    kind, such as minimax, exposes ``declared_for(kind)`` and ``kinds`` on its factory)."""
    factory = default().problem(family)
    declared_for = getattr(factory, "declared_for", None)
    if declared_for is not None:  # the kind's own declaration
        kinds = getattr(factory, "kinds", ())
        kind = params.get("kind", kinds[0] if kinds else None)
        if not isinstance(kind, str) or kind not in kinds:
            return {"kind": "choice"}
        return {k: p.kind for k, p in declared_for(kind).items()}
    stand_in = "" if hasattr(factory, "declared") else "~"
    return {k: (stand_in + p.kind if p else None) for k, p in inferred_declarations(factory).items()}


def _names(kinds: dict[str, Any]) -> list[str]:
    return sorted(kinds) + ["nope", "", "x" * 60]


def _fuzz(label: str, build: Any, kinds_of: Any, examples: int, seed: int, most: int) -> int:
    """Build from seeded odd parameters: each refused with a ValueError that says something, or
    accepted only when every value is plausible for its declared kind. Returns the accepted count."""
    rng = random.Random(f"{seed}:{label}")
    names = _names(kinds_of({}))
    accepted = 0
    for _ in range(examples):
        params = {rng.choice(names): rng.choice(API_VALUES) for _ in range(rng.randint(1, most))}
        try:
            build(params)
        except ValueError as exc:
            assert str(exc), (label, params)
            continue
        kinds = kinds_of(params)
        for key, value in params.items():
            assert key in kinds and plausible(key, value, kinds[key]), f"{label} accepted {key}={value!r}"
        accepted += 1
    return accepted


def fuzz_algorithm(name: str, examples: int = 40, seed: int = 0) -> int:
    """Fuzz the declared parameters of registered algorithm ``name`` (see ``_fuzz``)."""
    return _fuzz(name, lambda params: make_algorithm(name, params), lambda params: algorithm_kinds(name),
                 examples, seed, most=3)


def fuzz_problem(family: str, examples: int = 40, seed: int = 0) -> int:
    """Fuzz the declared parameters of a registered problem family (see ``_fuzz``)."""
    return _fuzz(family, lambda params: make_problem(family, params), lambda params: problem_kinds(family, params),
                 examples, seed, most=2)
