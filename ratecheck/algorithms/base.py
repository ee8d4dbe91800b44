"""The algorithm contract and the registry.

An algorithm is a frozen dataclass of hyper-parameters with pure ``init`` and ``round`` functions
(optax/FedJAX style). Its state is a small dataclass of arrays with a leading replica axis. Every
deviation from a paper's pseudocode is a named field whose default is the paper's choice.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from ..model.diagnostics import Diagnostic
from ..oracles import ProblemContract
from ..params import Param, ParamError, check_fields, declarations
from ..problem import Problem
from ..seeding import Streams

Costs = Mapping[str, "float | np.ndarray"]
# the oracles an algorithm needs (a protocol of ratecheck.oracles): Algorithm[SmoothFederatedOracles]
P = TypeVar("P", bound=ProblemContract)


@dataclass(frozen=True)
class Algorithm(Generic[P]):
    """Base class: subclasses define ``name``, ``source``, fields, and the four methods; the type
    parameter names the oracles (a protocol of ratecheck.oracles) ``init`` and ``round`` call."""

    name: ClassVar[str] = "algorithm"
    source: ClassVar[str] = ""  # paper file and algorithm number
    # field name -> parser turning a JSON/CLI value into the field's type
    parsers: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}
    # -- problem contract (issue #7, reliability): the problem families this algorithm runs on.
    # Empty: the Problem subclass that ``init`` is annotated with decides (``Problem`` itself: any).
    problem_kinds: ClassVar[tuple[str, ...]] = ()
    # rounds that ignore t, named by the function itself (exact mode probes their map once)
    t_free_rounds: ClassVar[tuple[Callable[..., Any], ...]] = ()
    # what ``info`` records in the Trace (ratecheck.model.diagnostics): checked when the Trace is made
    diagnostics: ClassVar[tuple[Diagnostic, ...]] = ()

    def __post_init__(self) -> None:
        # every declared field (ratecheck.params) is checked and coerced, whatever the entry point
        check_fields(self, self.name)

    def check_problem(self, problem: ProblemContract) -> None:
        """Refuse, before running, a problem family this algorithm does not support (naming both)."""
        family = getattr(problem, "family", type(problem).__name__)
        if self.problem_kinds:
            if family not in self.problem_kinds:
                raise ValueError(f"algorithm {self.name!r} does not run on problem family {family!r}: it "
                                 f"supports {', '.join(repr(k) for k in self.problem_kinds)}")
            return
        needed = _annotated_problem(type(self))
        if needed is not None and not isinstance(problem, needed):
            raise ValueError(f"algorithm {self.name!r} does not run on problem family {family!r}: it needs a "
                             f"{needed.__name__} (see `ratecheck list` for the families)")
    # -- end of the problem contract

    def validate(self, problem: P) -> None:
        """Checks that need the problem (e.g. participation count <= clients): raise ParamError."""

    def init(self, problem: P, streams: Streams) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def round(self, state: Any, problem: P, t: int, streams: Streams) -> tuple[Any, Costs]:
        """One communication round: (new state, this round's costs)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def output(self, state: Any) -> np.ndarray | Mapping[str, np.ndarray]:  # pragma: no cover
        """The global point(s) the problem's measures are taken at: an array (R, d), or named
        arrays with a leading replica axis such as {"x": ..., "y": ...} for minimax problems.
        ``problem.measures`` receives exactly this; the Trace keeps it as ``final[name]``."""
        raise NotImplementedError

    def info(self, state: Any) -> dict[str, Any]:
        """Diagnostics recorded at the end of a run (JSON-able)."""
        return {}

    def to_params(self) -> dict[str, Any]:
        """JSON-able hyper-parameters; ``from_params`` inverts it."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            option = f.metadata.get("param") is not None and f.metadata["param"].kind == "option"
            out[f.name] = str(value) if (option or f.name in self.parsers) else value
        return out

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> Algorithm:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(params) - names
        if unknown:
            raise ValueError(
                f"{cls.name} has no parameter(s) {sorted(unknown)}; its parameters are {sorted(names)}"
            )
        declared = declarations(cls)
        parsed = {}
        for k, v in params.items():
            if k in declared:  # the one declaration parses and checks
                parsed[k] = declared[k].check(k, v, cls.name)
            elif k in cls.parsers:
                try:
                    parsed[k] = cls.parsers[k](v)
                except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:  # issue #7
                    raise ParamError(cls.name, k, v, str(exc) or type(exc).__name__) from None
            else:  # a field not yet declared: its annotation stands in (issue #7)
                parsed[k] = _annotated_param(cls, k).check(k, v, cls.name) if _annotated_param(cls, k) else v
        return cls(**parsed)


def _annotated_param(cls: type, name: str) -> Any:
    """A stand-in declaration for an undeclared field annotated float, int, bool or str (else None)."""
    hint = {f.name: f.type for f in dataclasses.fields(cls)}.get(name)
    hint = (hint if isinstance(hint, str) else getattr(hint, "__name__", "")).replace(" ", "")
    kinds = {"float": Param.real, "int": Param.int, "bool": Param.bool, "str": Param.str}
    return kinds[hint](name) if hint in kinds else None


def _annotated_problem(cls: type[Algorithm[Any]]) -> type | None:
    """What ``cls.init`` declares for its problem argument: a Problem subclass or a protocol of
    ratecheck.oracles (None: any problem)."""
    import typing

    try:
        hint = typing.get_type_hints(cls.init).get("problem")
    except Exception:  # an annotation that does not resolve declares nothing
        return None
    if not isinstance(hint, type) or hint in (Problem, ProblemContract):
        return None
    if getattr(hint, "_is_runtime_protocol", False) or issubclass(hint, Problem):
        return hint
    return None


# The algorithm table. ratecheck.registry fills it from entry points and --paper sources and resolves
# names through it; a test may swap a class in with monkeypatch.setitem(REGISTRY, name, Broken).
REGISTRY: dict[str, type[Algorithm]] = {}
DECLARED: dict[str, type[Algorithm]] = {}  # what @register registered (REGISTRY may hold a test double)
ORIGINS: dict[str, str] = {}  # name -> where it was registered (module, entry point, --paper file)
BY_MODULE: dict[str, list[str]] = {}  # module -> names its @register calls registered


def register(cls: type[Algorithm]) -> type[Algorithm]:
    """Class decorator: register ``cls`` under ``cls.name``; a name another class registered is an
    error naming both origins."""
    existing = DECLARED.get(cls.name)
    if existing is not None and existing is not cls:
        first = ORIGINS.get(cls.name, f"module {existing.__module__}")
        raise ValueError(
            f"algorithm name {cls.name!r} registered twice: by {first} ({existing.__qualname__}) "
            f"and by module {cls.__module__} ({cls.__qualname__})"
        )
    DECLARED[cls.name] = cls
    REGISTRY.setdefault(cls.name, cls)  # a test double swapped in before the import keeps its place
    ORIGINS.setdefault(cls.name, f"module {cls.__module__}")
    names = BY_MODULE.setdefault(cls.__module__, [])
    if cls.name not in names:
        names.append(cls.name)
    return cls


@contextlib.contextmanager
def swapped(algorithms: Mapping[str, type[Algorithm[Any]]]) -> Iterator[None]:
    """Run names resolve to ``algorithms`` (e.g. a broken variant) inside the block, in this process;
    a run's cache key includes the class's code, so a variant never reads the original's runs."""
    for name, cls in algorithms.items():
        if not (isinstance(cls, type) and issubclass(cls, Algorithm)):
            raise TypeError(f"algorithms[{name!r}] must be an Algorithm subclass, got {cls!r}")
    saved = {name: REGISTRY.get(name) for name in algorithms}
    REGISTRY.update(algorithms)
    try:
        yield
    finally:
        for name, previous in saved.items():
            if previous is None:
                REGISTRY.pop(name, None)
            else:
                REGISTRY[name] = previous


def lookup(name: str) -> type[Algorithm] | None:
    """The class under ``name``: a swapped-in test double first, else what was registered."""
    return REGISTRY.get(name) or DECLARED.get(name)


def names() -> list[str]:
    return sorted(set(REGISTRY) | set(DECLARED))
