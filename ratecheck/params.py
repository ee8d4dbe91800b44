"""One declaration per parameter: its type, its range and its meaning, checked at every entry point.

Algorithms declare their hyper-parameters as dataclass fields built with the helpers below
(``real``, ``integer``, ``flag``, ``choice``, ``text``, ``option``); problem factories declare their
keyword parameters with ``@declare(name=Param.real(...), ...)``. The CLI, the Python API and a
RunConfig read back from the cache all go through ``Param.check``, so a bad value always gets the same
error naming the parameter, the value and the rule. Booleans are never numbers, and integers are
never silently truncated floats::

    @dataclass(frozen=True)
    class MyAlgorithm(Algorithm):
        eta_local: float = real(0.1, "local step size (the paper's eta-bar)", positive=True)
        local_steps: int = integer(1, "local steps K per round", low=1, high=10**6)
        participation: Participation = option(Participation, "client sampling", Participation.parse)
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import inspect
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Param",
    "ParamError",
    "choice",
    "check_fields",
    "declarations",
    "declare",
    "flag",
    "integer",
    "option",
    "real",
    "check_size",
    "check_run",
    "check_option",
    "OPTION_PARAMS",
    "SIZE_PARAMS",
    "replica_ids",
    "RUN_PARAMS",
    "text",
    "vector",
]

KINDS = ("int", "real", "bool", "str", "choice", "option", "vector")

# What one run may cost on the reference machine (24 GiB, 2 cores), see ``check_size``.
MEMORY_BUDGET = 4 * 2**30  # bytes for the largest live (replicas, clients, dim) arrays
WORK_BUDGET = 2e11  # rounds x replicas x clients x dim x local steps: about an hour of numpy
COPIES = 8  # live float64 (R, m, d) arrays in a round (iterates, gradients, noise, updates)
MAX_VECTOR = 10**6


class ParamError(ValueError):
    """A parameter value that breaks its declaration: names the owner, the parameter, value and rule."""

    def __init__(self, owner: str, name: str, value: Any, rule: str):
        self.owner, self.name, self.value, self.rule = owner, name, value, rule
        where = f"{owner}: " if owner else ""
        super().__init__(f"{where}parameter {name} = {_show(value)} is invalid: {rule}")

    def __reduce__(self) -> tuple[Any, ...]:
        # The default would call ParamError(message) and fail in the process that unpickles it (a
        # worker's error would then arrive as a broken pool): rebuild from the four fields.
        return (type(self), (self.owner, self.name, _picklable(self.value), self.rule))


class _Shown(str):
    """The repr of a value that cannot be pickled, shown as the value itself in messages."""

    def __repr__(self) -> str:
        return str(self)


def _picklable(value: Any) -> Any:
    """``value`` itself if it pickles, else its (shortened) repr: an error must cross processes."""
    import pickle

    try:
        pickle.dumps(value)
    except Exception:
        return _Shown(_show(value))
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class Param:
    """How one parameter is checked: kind, range, choices, meaning.

    kind 'int': an integer (numpy integers too; never a bool, never a float, not even 2.0);
    'real': a finite number (ints accepted and turned into float; never a bool, NaN or inf unless
    ``finite=False``); 'bool': True or False only; 'str': a string; 'choice': one of ``choices``;
    'option': a structured value parsed from its string form by ``parse`` (e.g. 'without_replacement:8').
    ``nullable`` lets None through (meaning "not set").
    """

    kind: str
    meaning: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[Any, ...] = ()
    parse: Callable[[Any], Any] | None = None
    nullable: bool = False
    finite: bool = True
    max_length: int = MAX_VECTOR

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Param kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "choice" and not self.choices:
            raise ValueError("a 'choice' Param needs choices")
        if self.kind == "option" and self.parse is None:
            raise ValueError("an 'option' Param needs a parse function")

    # -- constructors, for factory declarations ---------------------------------------------------
    @classmethod
    def real(cls, meaning: str, *, positive: bool = False, low: float | None = None,
             high: float | None = None, low_open: bool = False, high_open: bool = False,
             nullable: bool = False, finite: bool = True) -> Param:
        if positive:
            low, low_open = 0.0, True
        return cls("real", meaning, low, high, low_open, high_open, nullable=nullable, finite=finite)

    @classmethod
    def int(cls, meaning: str, *, low: int | None = None, high: int | None = None,
            nullable: bool = False) -> Param:
        return cls("int", meaning, low, high, nullable=nullable)

    @classmethod
    def vector(cls, meaning: str, *, positive: bool = False, low: float | None = None,
               high: float | None = None, nullable: builtins.bool = False, max_length: builtins.int = MAX_VECTOR) -> Param:
        """A finite real or a non-empty list of finite reals (bounds apply to every entry); the
        factory checks the length it needs (it depends on other parameters, e.g. dim)."""
        low_open = False
        if positive:
            low, low_open = 0.0, True
        return cls("vector", meaning, low, high, low_open, nullable=nullable, max_length=max_length)

    @classmethod
    def bool(cls, meaning: str) -> Param:
        return cls("bool", meaning)

    @classmethod
    def str(cls, meaning: builtins.str, *, nullable: builtins.bool = False) -> Param:
        return cls("str", meaning, nullable=nullable)

    @classmethod
    def choice(cls, meaning: builtins.str, choices: tuple[Any, ...], *, nullable: builtins.bool = False) -> Param:
        return cls("choice", meaning, choices=tuple(choices), nullable=nullable)

    @classmethod
    def option(cls, meaning: builtins.str, parse: Callable[[Any], Any], *, nullable: builtins.bool = False) -> Param:
        return cls("option", meaning, parse=parse, nullable=nullable)

    # -- checking ---------------------------------------------------------------------------------
    def rule(self) -> builtins.str:
        """The declaration in words, as error messages and ``ratecheck list`` show it."""
        if self.kind == "choice":
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind == "option":
            text = "an option string (see its meaning)"
        elif self.kind == "bool":
            text = "true or false"
        elif self.kind == "str":
            text = "a string"
        else:
            noun = {"int": "an integer", "real": "a finite real number",
                    "vector": "a finite real number or a list of them"}[self.kind]
            parts = []
            if self.low is not None:
                parts.append(f"{'>' if self.low_open else '>='} {self.low:g}")
            if self.high is not None:
                parts.append(f"{'<' if self.high_open else '<='} {self.high:g}")
            text = noun + (" " + " and ".join(parts) if parts else "")
        return text + (" (or null)" if self.nullable else "")

    def check(self, name: builtins.str, value: Any, owner: builtins.str = "") -> Any:
        """The value, coerced to the declared kind (int -> float for reals), or a ParamError."""
        if value is None:
            if self.nullable:
                return None
            raise ParamError(owner, name, value, f"must be {self.rule()}")
        fail = functools.partial(ParamError, owner, name, value)
        if self.kind == "bool":
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            raise fail("must be true or false (not a number or a string)")
        if self.kind == "str":
            if isinstance(value, str):
                return value
            raise fail("must be a string")
        if self.kind == "choice":
            # same type and equal: 1 is not 1.0 and True is not 1 (and arrays never compare)
            if not any(type(value) is type(c) and value == c for c in self.choices):
                raise fail(f"must be {self.rule()}")
            return value
        if self.kind == "option" and self.parse is not None:  # an option always has one (__post_init__)
            try:
                return self.parse(value)
            except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
                raise fail(str(exc) or type(exc).__name__) from None
        if self.kind == "vector":
            return self._check_vector(value, fail)
        return self._check_number(value, fail)

    def _check_vector(self, value: Any, fail: Callable[[builtins.str], ParamError]) -> float | list[float]:
        if isinstance(value, (list, tuple, np.ndarray)):
            items = list(np.asarray(value, dtype=object).reshape(-1)) if isinstance(value, np.ndarray) else list(value)
            if isinstance(value, np.ndarray) and value.ndim != 1:
                raise fail(f"must be {self.rule()} (a flat list), got an array of shape {value.shape}")
            if not items:
                raise fail(f"must be {self.rule()}, got an empty list")
            if len(items) > self.max_length:
                raise fail(f"must have at most {self.max_length} entries, got {len(items)}")
            scalar = dataclasses.replace(self, kind="real")
            out = []
            for i, item in enumerate(items):
                try:
                    out.append(scalar._check_number(item, fail))
                except ParamError as exc:
                    raise fail(f"entry {i} = {_show(item)}: {exc.rule}") from None
            return out
        return dataclasses.replace(self, kind="real")._check_number(value, fail)

    def _check_number(self, value: Any, fail: Callable[[builtins.str], ParamError]) -> float | builtins.int:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            got = "a bool" if isinstance(value, (bool, np.bool_)) else f"a {type(value).__name__}"
            raise fail(f"must be {self.rule()}, got {got}")
        if self.kind == "int":
            if not isinstance(value, numbers.Integral):
                whole = isinstance(value, float) and value.is_integer() and abs(value) < 1e15
                hint = f" (write {int(float(value))}, not {value!r})" if whole else ""
                raise fail(f"must be {self.rule()}, got a {type(value).__name__}{hint}")
            value = int(value)
        else:
            try:
                value = float(value)
            except OverflowError:  # an int beyond float range
                raise fail(f"must be {self.rule()} (too large for a float)") from None
            if self.finite and not math.isfinite(value):
                raise fail(f"must be {self.rule()}")
            if math.isnan(value):
                raise fail(f"must be {self.rule()}")
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            raise fail(f"must be {self.rule()}")
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            raise fail(f"must be {self.rule()}")
        return value

    def to_dict(self) -> dict[builtins.str, Any]:
        return {"kind": self.kind, "meaning": self.meaning, "rule": self.rule()}


MAX_REPLICAS = 10**7
MAX_CHECKPOINTS = 10**6
# A run's own parameters (RunConfig, engine.run, --rounds/--replicas/--seed on the command line).
RUN_PARAMS: dict[str, Param] = dict(
    rounds=Param.int("communication rounds T of a run", low=1),
    replicas=Param.int("independent replicas R, run as an array axis", low=1, high=MAX_REPLICAS),
    seed=Param.int("base seed of the run's random streams", low=0),
    checkpoints=Param.int("log-spaced rounds at which measures are recorded (besides round 0; "
                          "at least 2, for round 1 and the last)", low=2, high=MAX_CHECKPOINTS),
)


# The sizes ``check_size`` reads besides the run's own: how many clients, coordinates and local steps.
SIZE_PARAMS: dict[str, Param] = dict(
    RUN_PARAMS,
    clients=Param.int("clients (or client slots) a round touches", low=1),
    dim=Param.int("coordinates of a client's state", low=1),
    local_steps=Param.int("local steps K per round", low=1),
)
# Options of the commands and executors (not of a run): the CLI and the Python API check them here.
OPTION_PARAMS: dict[str, Param] = dict(
    jobs=Param.int("jobs run at once: worker processes, or local Dask workers", low=1),
    examples=Param.int("instances a hunt tries (hypothesis examples)", low=1),
    budget=Param.real("seconds after which a hunt runs no new instance (a reported truncation)", positive=True,
                      nullable=True),
    max_mutants=Param.int("mutants `ratecheck mutate` runs, drawn with --seed (none: every one)", low=1,
                          nullable=True),
    seed_offset=Param.int("added to the seed of every Monte-Carlo run and search a check makes (0: the registered "
                          "verdicts; tools/seed_stability.py checks under several)", low=0),
    mutant_timeout=Param.real("seconds a mutant's check may take before `ratecheck mutate` kills it and reports a "
                              "timeout (none: 5x the unmutated check's compute time + 60 s)", positive=True, nullable=True),
)


def check_run(owner: str, name: str, value: Any) -> Any:
    """``value`` checked against the declaration of the run parameter ``name`` (RUN_PARAMS)."""
    return RUN_PARAMS[name].check(name, value, owner)


def check_option(owner: str, name: str, value: Any, declared: str | None = None) -> Any:
    """``value`` checked against the declaration of the option ``declared`` (default ``name``) in
    OPTION_PARAMS; the error names ``name`` (``local_workers`` is declared as ``jobs``)."""
    return OPTION_PARAMS[declared or name].check(name, value, owner)


def replica_ids(owner: str, replicas: Any) -> np.ndarray:
    """Replica ids from a count (``range(count)``) or an explicit list of distinct ids in [0, 2^63)."""
    if isinstance(replicas, (list, tuple, range)) or (isinstance(replicas, np.ndarray) and replicas.ndim == 1):
        items = list(replicas)
        rule = f"replica ids must be distinct integers in [0, 2^63) (at most {RUN_PARAMS['replicas'].high:g} of them)"
        if not items or len(items) > MAX_REPLICAS:
            raise ParamError(owner, "replicas", replicas, rule)
        for item in items:
            if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Integral) or not 0 <= item < 2**63:  # type: ignore[operator]  # numbers.Integral declares no order
                raise ParamError(owner, "replicas", replicas, rule)
        if len(set(int(i) for i in items)) != len(items):
            raise ParamError(owner, "replicas", replicas, rule)
        return np.asarray([int(i) for i in items], dtype=np.int64)
    if isinstance(replicas, numbers.Integral) and not isinstance(replicas, (bool, np.bool_)):
        return np.arange(check_run(owner, "replicas", replicas), dtype=np.int64)
    raise ParamError(owner, "replicas", replicas, "must be an integer >= 1 or a list of replica ids")


# What a run's extra costs take, measured on the reference machine (issue #24):
TIMELINE_SECONDS_PER_CLIENT = 1.5e-3  # simulating one client's event timeline, per replica (100k clients: 153 s)
RECORDED_ARRAYS = 16  # float64 (checkpoints, replicas) arrays a run records (point and running average per measure)
SECONDS_BUDGET = 3600.0  # what WORK_BUDGET takes: the time one run may take on one core
MOMENT_BYTES_BUDGET = MEMORY_BUDGET  # exact mode: the (state x state) second moment and its propagation
MOMENT_FLOPS_BUDGET = 1e13  # exact mode: rounds x state^3 multiply-adds, about an hour of BLAS on one core


def check_size(owner: str, *, rounds: int, replicas: int, clients: int, dim: int, local_steps: int = 1,
               checkpoints: int = 2, timeline_clients: int = 0, state: int = 0) -> None:
    """Refuse a run that cannot finish on the reference machine (24 GiB, 2 cores), naming the
    parameter and the rule.

    Memory: COPIES live float64 arrays of shape (replicas, clients, dim), plus RECORDED_ARRAYS
    (checkpoints, replicas) records, must fit in MEMORY_BUDGET (4 GiB, leaving room for other runs
    and workers). Time: rounds x replicas x clients x dim x local_steps element updates (WORK_BUDGET
    = 2e11, about SECONDS_BUDGET = an hour of numpy on one core) plus, for an algorithm on the event
    timeline, TIMELINE_SECONDS_PER_CLIENT per client and replica, must fit in an hour; a longer study
    belongs on a cluster, split into several configurations. ``state`` > 0 is exact mode: one
    "replica" whose second moment is a (state x state) float64 matrix, propagated by products that
    cost state^3 per round.
    """
    sizes: dict[str, Any] = {"rounds": rounds, "replicas": replicas, "clients": clients, "dim": dim, "local_steps": local_steps,
             "checkpoints": checkpoints}
    for name, value in sizes.items():
        SIZE_PARAMS[name].check(name, value, owner)
    marks = min(int(checkpoints), int(rounds)) + 1
    if state:
        _check_moments(owner, rounds=rounds, state=state, marks=marks)
        return
    live = 8.0 * COPIES * replicas * clients * dim
    recorded = 8.0 * RECORDED_ARRAYS * marks * replicas
    if live + recorded > MEMORY_BUDGET:
        name, value, fix = (("replicas x clients x dim", f"{replicas} x {clients} x {dim}",
                             "use fewer replicas or clients") if live >= recorded else
                            ("checkpoints x replicas", f"{marks} x {replicas}", "use fewer checkpoints or replicas"))
        raise ParamError(
            owner, name, value,
            f"must fit in {MEMORY_BUDGET / 2**30:g} GiB (rule: 8 bytes x ({COPIES} live arrays x replicas x "
            f"clients x dim + {RECORDED_ARRAYS} records x checkpoints x replicas)), but needs about "
            f"{(live + recorded) / 2**30:.3g} GiB: {fix}")
    work = float(rounds) * replicas * clients * dim * local_steps
    if work > WORK_BUDGET:
        raise ParamError(
            owner, "rounds x replicas x clients x dim x local_steps",
            f"{rounds} x {replicas} x {clients} x {dim} x {local_steps}",
            f"must be at most {WORK_BUDGET:.0e} element updates (about an hour on one core), but is "
            f"{work:.3g}: use fewer rounds or replicas, or split the study")
    seconds = work / WORK_BUDGET * SECONDS_BUDGET + TIMELINE_SECONDS_PER_CLIENT * timeline_clients * replicas
    if seconds > SECONDS_BUDGET:
        raise ParamError(
            owner, "clients x replicas", f"{timeline_clients} x {replicas}",
            f"the event timeline takes about {TIMELINE_SECONDS_PER_CLIENT * 1e3:g} ms per client and replica "
            f"to simulate, so this run needs about {seconds / 60:.0f} minutes, more than the "
            f"{SECONDS_BUDGET / 60:.0f} allowed: use fewer clients or replicas")


def _check_moments(owner: str, *, rounds: int, state: int, marks: int) -> None:
    """Exact mode: the second moment of a ``state``-float state (memory) and its propagation (time)."""
    memory = 8.0 * 3 * state * state + 8.0 * RECORDED_ARRAYS * marks
    if memory > MOMENT_BYTES_BUDGET:
        raise ParamError(
            owner, "clients x dim (exact mode)", state,
            f"exact mode keeps the second moment of the {state}-number state (rule: 8 bytes x 3 x state^2 "
            f"<= {MOMENT_BYTES_BUDGET / 2**30:g} GiB), but needs about {memory / 2**30:.3g} GiB: use fewer "
            "clients or a smaller dimension, or Monte Carlo")
    work = float(rounds) * float(state) ** 3
    if work > MOMENT_FLOPS_BUDGET:
        raise ParamError(
            owner, "rounds x state^3 (exact mode)", f"{rounds} x {state}^3",
            f"must be at most {MOMENT_FLOPS_BUDGET:.0e} operations (about an hour on one core), but is {work:.3g}: "
            "use fewer rounds, clients or a smaller dimension, or Monte Carlo")


# -- dataclass fields (algorithms) -----------------------------------------------------------------

def _field(default: Any, param: Param, *, factory: Callable[[], Any] | None = None) -> Any:
    meta = {"param": param}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def real(default: float | None, meaning: str, **rule: Any) -> Any:
    """A real hyper-parameter: ``eta: float = real(0.1, "global step", positive=True)``."""
    return _field(default, Param.real(meaning, **rule))


def integer(default: int | None, meaning: str, **rule: Any) -> Any:
    return _field(default, Param.int(meaning, **rule))


def flag(default: bool, meaning: str) -> Any:
    return _field(default, Param.bool(meaning))


def choice(default: Any, meaning: str, choices: tuple[Any, ...], **rule: Any) -> Any:
    return _field(default, Param.choice(meaning, choices, **rule))


def vector(default: Any, meaning: str, **rule: Any) -> Any:
    """A number or a list of numbers (e.g. client weights): ``w: Any = vector(1.0, "...", positive=True)``."""
    return _field(default, Param.vector(meaning, **rule))


def text(default: str | None, meaning: str, **rule: Any) -> Any:
    return _field(default, Param.str(meaning, **rule))


def option(default_factory: Callable[[], Any], meaning: str, parse: Callable[[Any], Any], **rule: Any) -> Any:
    """A structured option (participation, delay schedule), parsed from 'kind:N' strings."""
    return _field(None, Param.option(meaning, parse, **rule), factory=default_factory)


def declarations(cls_or_obj: Any) -> dict[str, Param]:
    """The declared parameters of a dataclass (algorithm) or a factory declared with ``@declare``, by name."""
    declared = getattr(cls_or_obj, "declared", None)
    if isinstance(declared, Mapping):
        return dict(declared)
    if dataclasses.is_dataclass(cls_or_obj):
        return {f.name: f.metadata["param"] for f in dataclasses.fields(cls_or_obj) if "param" in f.metadata}
    raise TypeError(f"{cls_or_obj!r} declares no parameters")


def check_fields(obj: Any, owner: str) -> None:
    """Check (and coerce in place) every declared field of a frozen dataclass instance."""
    for name, param in declarations(type(obj)).items():
        value = param.check(name, getattr(obj, name), owner)
        object.__setattr__(obj, name, value)


def declare(**params: Param) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a factory's keyword parameters; calls are checked (unknown names, types, ranges).

    The factory's own signature gives the defaults; every keyword it takes must be declared.
    """

    def wrap(factory: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(factory)
        names = [p for p in signature.parameters if signature.parameters[p].kind is not inspect.Parameter.VAR_KEYWORD]
        missing = set(names) - set(params)
        extra = set(params) - set(names)
        if missing or extra:
            raise TypeError(f"@declare on {factory.__qualname__}: undeclared {sorted(missing)}, unknown {sorted(extra)}")
        owner = getattr(factory, "__module__", "").rsplit(".", 1)[-1]

        @functools.wraps(factory)
        def checked(**kwargs: Any) -> Any:
            unknown = set(kwargs) - set(params)
            if unknown:
                name = sorted(unknown)[0]
                raise ParamError(owner, name, kwargs[name], f"unknown parameter; accepted parameters: {sorted(params)}")
            checked_kwargs = {k: params[k].check(k, v, owner) for k, v in kwargs.items()}
            return factory(**checked_kwargs)

        checked.declared = dict(params)  # type: ignore[attr-defined]  # read off the factory by callers
        return checked

    return wrap


# -- factories not (yet) declared: their annotations stand in ----------------------------------

MAX_DENSE = 10**8  # float64 numbers an undeclared family may build: clients x dim^2 (dense per-client matrices)


def check_dense_size(name: str, factory: Callable[..., Any], params: Mapping[str, Any]) -> None:
    """Refuse sizes an undeclared family cannot build (rule: clients x dim^2 <= 1e8, 800 MB)."""
    defaults = {k: p.default for k, p in inspect.signature(factory).parameters.items()}
    values = {**defaults, **params}
    clients = values.get("clients", 1)
    dim = max((values[k] for k in ("dim", "dim_x", "dim_y") if isinstance(values.get(k), int)), default=1)
    if isinstance(clients, int) and clients * dim * dim > MAX_DENSE:
        raise ParamError(name, "clients x dim^2", f"{clients} x {dim}^2",
                         f"is {clients * dim * dim:.3g} numbers; the limit is {MAX_DENSE:.0e} "
                         f"(rule: clients x dim^2 <= {MAX_DENSE:.0e}, dense per-client matrices)")


def inferred_declarations(factory: Callable[..., Any]) -> dict[str, Param | None]:
    """Stand-in declarations from a factory's annotations (None: any value)."""
    if hasattr(factory, "declared"):
        return dict(factory.declared)
    kinds = {"bool": Param.bool, "int": Param.int, "float": Param.real, "str": Param.str}
    out: dict[str, Param | None] = {}
    for pname, p in inspect.signature(factory).parameters.items():
        if p.kind in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL):
            continue
        # the annotation declares the kind (``from __future__ import annotations``: it is a string)
        hint = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
        hint = hint.replace(" ", "")
        nullable = hint.endswith("|None") or hint.startswith("None|")
        base = hint.replace("|None", "").replace("None|", "")
        if base in kinds:
            param = kinds[base](pname)
            out[pname] = dataclasses.replace(param, nullable=True) if nullable else param
        else:
            out[pname] = None
    return out
