"""One registry of papers, algorithms and problem families, each with the place it came from.

Where names come from:

* entry points of installed distributions, in four groups (the fourth: ratecheck.measures):

      [project.entry-points."ratecheck.papers"]       key = "pkg.module:PAPER"   (a Paper, or a module with PAPER)
      [project.entry-points."ratecheck.algorithms"]   name = "pkg.module:Class"  (an Algorithm subclass, or a
                                                      module: every class it registers with @register)
      [project.entry-points."ratecheck.problems"]     family = "pkg.module:make" (a factory of JSON-able keywords)
      [project.entry-points."ratecheck.measures"]     family = "pkg.module:OBJ"  (a paper's Measures of a family)

  ratecheck's own problems/ and proofs/ register exactly this way (see its pyproject.toml). When
  ratecheck runs from a source checkout, its own table is read from that pyproject.toml, since an
  editable install's metadata goes stale the moment a paper is added;
* extra sources, ``--paper MODULE_OR_PATH`` or ``add_source()``: a module name or a .py file that
  defines any of ``PAPER`` (a Paper), ``PROBLEMS`` ({family: factory}), ``ALGORITHMS`` (classes),
  ``MEASURES`` ({family: Measures}) and algorithms registered with ``@register``.

A source that fails (import or syntax error, a name clash, an object of the wrong kind) becomes a
``LoadError`` naming the source and the cause; it registers nothing and the other sources still
load. Groups load lazily: running an algorithm never imports the papers. The engine resolves names
only here; worker processes get the list of extra sources with each job (``with_sources``).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import importlib
import importlib.metadata
import importlib.util
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ratecheck.algorithms.base as base  # the contract only, not the package's make_algorithm

from . import measures as paper_measures
from .model.entry_points import GROUPS, SKIP_ENV, EntryPoint, installed_entry_points, skipped_plugins
from .model.interrupts import describe, is_real_interrupt
from .paper import Paper
from .params import ParamError, check_dense_size, inferred_declarations
from .problem import Measures

if TYPE_CHECKING:
    from .claims import Claim, Profile
    from .problem import Problem
    from .theory import Theorem
    from .trace import RunConfig

__all__ = ["SKIP_ENV", "EntryPoint", "Item", "LoadError", "Registry", "RegistryError", "add_source", "default", "make_algorithm",
           "make_problem", "papers", "plan", "select_claims", "with_sources",
           "installed_entry_points", "skipped_plugins"]

KINDS = ("paper", "algorithm", "problem")
_OWN = ("ratecheck.", "problems.", "proofs.")  # the package's own modules (see Registry._transaction)


class RegistryError(ValueError):
    """A name that cannot be resolved, or a source that cannot be registered."""


@dataclass(frozen=True)
class LoadError:
    """A source that registered nothing, and why."""

    source: str
    cause: str
    entry_point: EntryPoint | None = None  # set for an installed plugin

    def __str__(self) -> str:
        return f"cannot load {self.source}: {self.cause}"


@dataclass(frozen=True)
class Item:
    """One registered paper, algorithm or problem family and where it came from."""

    kind: str
    name: str
    obj: Any
    origin: str


# ---------------------------------------------------------------------------------------------


class Registry:
    """Papers, algorithms and problem families by name, filled from entry points and extra sources.

    Algorithms live in ``ratecheck.algorithms.base`` (``REGISTRY``, where a test can swap one in with
    ``monkeypatch.setitem``, before or after the real one is loaded); their origins in ``base.ORIGINS``.
    """

    def __init__(self, entry_points: Callable[[], Iterable[EntryPoint]] | None = None) -> None:
        self._entry_points = entry_points or installed_entry_points
        self._all_entry_points: list[EntryPoint] | None = None
        self._papers: dict[str, Item] = {}
        self._problems: dict[str, Item] = {}
        self._measures: dict[str, list[Measures]] = {}  # family -> sources' Measures; then the entry points'
        self._measures_loaded: dict[str, tuple[Measures, ...]] = {}
        self._loaded: set[str] = set()
        self._loaded_papers: set[str] = set()  # paper entry points loaded one by one (named_paper)
        self.errors: list[LoadError] = []
        self.sources: list[str] = []  # extra sources, in the order given (shipped to workers)
        self._source_kinds: dict[str, bool] = {}  # source -> loaded with its paper

    # -- loading ------------------------------------------------------------------------------

    def _group(self, kind: str) -> list[EntryPoint]:
        if self._all_entry_points is None:
            self._all_entry_points = list(self._entry_points())
        skipped = skipped_plugins()
        return [ep for ep in self._all_entry_points if ep.group == GROUPS[kind] and not ep.matches(skipped)]

    @property
    def plugin_errors(self) -> list[LoadError]:
        """The installed plugins (entry points) that failed to load: a command stops on them unless
        the user skips them (``--skip-plugin``, RATECHECK_SKIP_PLUGINS)."""
        return [error for error in self.errors if error.entry_point is not None]

    def ensure(self, *kinds: str) -> Registry:
        """Load the entry points of these kinds (all by default) once."""
        for kind in kinds or KINDS:
            if kind in self._loaded:
                continue
            self._loaded.add(kind)
            for ep in [e for e in self._group(kind) if not (kind == "paper" and e.name in self._loaded_papers)]:
                self._transaction(ep.origin, functools.partial(self._load_entry_point, kind, ep), entry_point=ep)
        return self

    def named_paper(self, pattern: str | None) -> str | None:
        """The paper a claim pattern or id starts with (``defedavg.T3*``), loaded alone (importing one costs a second)."""
        head = re.split(r"[.*?\[]", pattern or "", maxsplit=1)[0]
        for ep in [] if "paper" in self._loaded or head in self._loaded_papers else self._group("paper"):
            if ep.name == head:
                self._loaded_papers.add(head)
                self._transaction(ep.origin, functools.partial(self._load_entry_point, "paper", ep), entry_point=ep)
        return head if head in self._papers else None

    def add_source(self, spec: str, *, papers: bool = True) -> None:
        """Register an extra source (module name or .py file); RegistryError if it fails.

        ``papers=False`` (worker processes) registers only its algorithms and problems.
        """
        spec = _normalize_source(spec)
        if spec in self._source_kinds and (self._source_kinds[spec] or not papers):
            return  # already loaded (idempotent: workers call this for every job)
        self.ensure("algorithm", "problem", *(("paper",) if papers else ()))
        origin = f"--paper {spec}"
        error = self._transaction(origin, lambda: self._load_source(spec, origin, papers), record=False)
        if error is not None:
            raise RegistryError(str(error))
        self._source_kinds[spec] = papers
        if spec not in self.sources:
            self.sources.append(spec)

    def _transaction(self, origin: str, load: Callable[[], None], record: bool = True,
                     entry_point: EntryPoint | None = None) -> LoadError | None:
        """Run ``load``; on any failure undo everything it registered and return (and, for entry
        points, record) a LoadError."""
        tables: tuple[dict[str, Any], ...] = (base.REGISTRY, base.DECLARED, base.ORIGINS)
        saved = ([dict(t) for t in tables], {k: list(v) for k, v in base.BY_MODULE.items()},
                 dict(self._papers), dict(self._problems), set(sys.modules))
        try:
            load()
        except BaseException as exc:  # a plugin may fail in any way (sys.exit included): report it
            if is_real_interrupt(exc):
                raise  # the user pressed Ctrl-C while it loaded (or a host program handles it)
            saved_tables, by_module, papers_, problems_, modules = saved
            # the package's own modules imported on the way stay imported, with their registrations;
            # any other module is forgotten so that a retry re-imports (and re-registers) it
            keep = {m: list(names) for m, names in base.BY_MODULE.items()
                    if m.startswith(_OWN) and m in sys.modules and m not in by_module}
            kept = {name: (base.DECLARED[name], base.ORIGINS.get(name, f"module {m}"))
                    for m, names in keep.items() for name in names if name in base.DECLARED}
            for name in set(sys.modules) - modules:
                if not name.startswith(_OWN):
                    sys.modules.pop(name, None)
            for table, value in zip(tables, saved_tables):
                table.clear()
                table.update(value)
            base.BY_MODULE.clear()
            base.BY_MODULE.update(by_module)
            base.BY_MODULE.update(keep)
            for name, (cls, where) in kept.items():
                base.DECLARED[name], base.ORIGINS[name] = cls, where
                base.REGISTRY.setdefault(name, cls)
            self._papers, self._problems = papers_, problems_
            error = LoadError(origin, describe(exc, "while loading"), entry_point)
            if record:  # an extra source's failure is raised to whoever added it instead
                self.errors.append(error)
            return error
        return None

    def _load_entry_point(self, kind: str, ep: EntryPoint) -> None:
        before = set(base.DECLARED)
        obj = ep.load()
        if kind == "paper":
            paper = getattr(obj, "PAPER", obj) if _is_module(obj) else obj
            if not isinstance(paper, Paper):
                raise RegistryError(f"expected a ratecheck.paper.Paper (or a module with PAPER), got {_kind(paper)}")
            if paper.key != ep.name:
                raise RegistryError(f"the entry point is named {ep.name!r} but the paper's key is {paper.key!r}")
            self._add_paper(paper, ep.origin)
        elif kind == "problem":
            self._add_problem(ep.name, obj, ep.origin)
        else:
            names = set(base.DECLARED) - before
            if _is_module(obj):
                names |= set(base.BY_MODULE.get(obj.__name__, ()))
                if not names:
                    raise RegistryError(f"module {obj.__name__} registers no algorithm (use @register)")
            else:
                if not (isinstance(obj, type) and issubclass(obj, base.Algorithm)):
                    raise RegistryError(f"expected an Algorithm subclass or a module, got {_kind(obj)}")
                if obj.name != ep.name:
                    raise RegistryError(f"the entry point is named {ep.name!r} but the class's name is {obj.name!r}")
                if base.DECLARED.get(obj.name) is not obj:
                    base.register(obj)
                names.add(obj.name)
            for name in names:
                base.ORIGINS[name] = ep.origin

    def _load_source(self, spec: str, origin: str, papers: bool) -> None:
        before = set(base.DECLARED)
        module = _import_source(spec)
        found = False
        for cls in getattr(module, "ALGORITHMS", ()):
            if not (isinstance(cls, type) and issubclass(cls, base.Algorithm)):
                raise RegistryError(f"ALGORITHMS holds {_kind(cls)}, not an Algorithm subclass")
            if base.DECLARED.get(cls.name) is not cls:
                base.register(cls)
        names = (set(base.DECLARED) - before) | set(base.BY_MODULE.get(module.__name__, ()))
        for name in names:
            base.ORIGINS[name] = origin
        found |= bool(names)
        problems = getattr(module, "PROBLEMS", {})
        if not isinstance(problems, Mapping):
            raise RegistryError(f"PROBLEMS must map family names to factories, got {_kind(problems)}")
        for name, factory in problems.items():
            self._add_problem(name, factory, origin)
            found = True
        for name, extra in paper_measures.of_source(module).items():  # ratecheck.measures
            self._measures.setdefault(name, []).append(extra)
            self._measures_loaded.pop(name, None)
            found = True
        paper = getattr(module, "PAPER", None)
        if paper is not None:
            if not isinstance(paper, Paper):
                raise RegistryError(f"PAPER must be a ratecheck.paper.Paper, got {_kind(paper)}")
            if papers:
                self._add_paper(paper, origin)
            found = True
        if not found:
            raise RegistryError("defines no PAPER, PROBLEMS or ALGORITHMS (nor MEASURES) and registers no algorithm")

    def _add_paper(self, paper: Paper, origin: str) -> None:
        if paper.key in self._papers and self._papers[paper.key].obj.claims is paper.claims:
            return  # the same paper reached twice (installed, and given with --paper): keep the first
        if paper.key in self._papers:
            raise RegistryError(f"paper {paper.key!r} is already registered by {self._papers[paper.key].origin}")
        owners = {c.id: item for item in self._papers.values() for c in item.obj.claims}
        for claim in paper.claims:
            if claim.id in owners:
                raise RegistryError(f"claim {claim.id!r} is already registered by paper "
                                    f"{owners[claim.id].name!r} ({owners[claim.id].origin})")
        ids = [c.id for c in paper.claims]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise RegistryError(f"paper {paper.key!r} registers claim ids twice: {twice}")
        self._papers[paper.key] = Item("paper", paper.key, dataclasses.replace(paper, origin=origin), origin)

    def _add_problem(self, name: str, factory: Any, origin: str) -> None:
        if not isinstance(name, str) or not name:
            raise RegistryError(f"a problem family needs a non-empty name, got {name!r}")
        if not callable(factory):
            raise RegistryError(f"problem family {name!r}: expected a factory (callable), got {_kind(factory)}")
        if name in self._problems and self._problems[name].obj is factory:
            return  # the same family reached twice: keep the first origin
        if name in self._problems:
            raise RegistryError(f"problem family {name!r} is already registered by {self._problems[name].origin}")
        self._problems[name] = Item("problem", name, factory, origin)

    # -- lookups ------------------------------------------------------------------------------

    def items(self, kind: str) -> list[Item]:
        """Every registered item of a kind, sorted by name, with its origin."""
        self.ensure(kind)
        if kind == "paper":
            return [self._papers[k] for k in sorted(self._papers)]
        if kind == "problem":
            return [self._problems[k] for k in sorted(self._problems)]
        return [Item("algorithm", k, base.lookup(k), base.ORIGINS.get(k, f"module {base.lookup(k).__module__}"))
                for k in base.names()]

    def papers(self) -> dict[str, Paper]:
        return {item.name: item.obj for item in self.items("paper")}

    def algorithm(self, name: str) -> type[base.Algorithm]:
        self.ensure("algorithm")
        cls = base.lookup(name)
        if cls is None:
            raise RegistryError(f"unknown algorithm {name!r}; known: {base.names()}{self._hint()}")
        return cls

    def problem(self, name: str) -> Callable[..., Problem]:
        self.ensure("problem")
        if name not in self._problems:
            raise RegistryError(f"unknown problem family {name!r}; known: {sorted(self._problems)}{self._hint()}")
        return self._problems[name].obj

    def measures(self, family: str) -> tuple[Measures, ...]:
        """The Measures papers registered for ``family``: its entry points' and its sources' (ratecheck.measures)."""
        if family not in self._measures_loaded:
            found = paper_measures.of_entry_points(family, self._group("measures"))
            self._measures_loaded[family] = tuple(found + self._measures.get(family, []))
        return self._measures_loaded[family]

    def _hint(self) -> str:
        return "".join(f"\n  ({error})" for error in self.errors)

    def claims(self) -> list[Claim]:
        return [c for paper in self.papers().values() for c in paper.claims]

    def theorems(self) -> list[Theorem]:
        return [t for paper in self.papers().values() for t in paper.theorems]

    def select_claims(self, pattern: str | None = None) -> list[Claim]:
        """Claims whose id or paper matches a glob pattern (a bare word matches as a substring); a pattern that
        starts with a paper's key (``defedavg``, ``defedavg.T3*``) chooses among its claims, importing no other."""
        if not pattern:
            return self.claims()
        head = self.named_paper(pattern)
        claims = list(self._papers[head].obj.claims) if head else self.claims()
        glob = pattern if any(ch in pattern for ch in "*?[") else f"*{pattern}*"
        chosen = [c for c in claims if fnmatch.fnmatch(c.id, glob) or fnmatch.fnmatch(c.paper, glob)]
        if not chosen:
            raise RegistryError(f"no claim matches {pattern!r}; claims: {[c.id for c in claims]}")
        return chosen

    def paper_of(self, claim: Claim) -> Item | None:
        return self._papers.get(claim.paper) or self.ensure("paper")._papers.get(claim.paper)

    def loaded_claims(self) -> list[Claim]:
        """The claims of the papers loaded so far (none is imported to answer)."""
        return [c for item in self._papers.values() for c in item.obj.claims]

    def plan(self, claims: Sequence[Claim], profile: Profile) -> list[RunConfig]:
        """Every run the claims need in this profile, with their names checked against the registry:
        a claim naming an unknown algorithm or problem is a RegistryError naming the claim, its
        paper's origin and the unknown name (before anything runs)."""
        self.ensure("algorithm", "problem")
        configs: list[RunConfig] = []
        problems: list[str] = []
        for claim in claims:
            for config in (claim.runs(profile) if getattr(claim, "in_profile", lambda _: True)(profile) else ()):
                for kind, name, known in (("algorithm", config.algorithm, base.names()),
                                          ("problem family", config.problem, self._problems)):
                    if name not in known:
                        item = self.paper_of(claim)
                        where = f" (paper {claim.paper!r} from {item.origin})" if item else ""
                        problems.append(f"claim {claim.id}{where} runs unknown {kind} {name!r}; "
                                        f"known: {sorted(known)}")
                configs.append(config)
        if problems:
            raise RegistryError("\n".join(dict.fromkeys(problems)) + self._hint())
        return configs


# ---------------------------------------------------------------------------------------------
# sources


def _normalize_source(spec: str) -> str:
    spec = str(spec).strip()
    if not spec:
        raise RegistryError("--paper needs a module name or a .py file")
    if spec.endswith(".py") or "/" in spec or "\\" in spec:
        return str(Path(spec).expanduser().resolve())
    return spec


def _import_source(spec: str):
    if not spec.endswith(".py"):
        if Path(spec).is_absolute():
            raise RegistryError(f"{spec} is not a .py file or a module name")
        return importlib.import_module(spec)
    path = Path(spec)
    if not path.is_file():
        raise RegistryError(f"no such file: {path}")
    name = path.stem
    existing = sys.modules.get(name)
    if existing is not None:
        if Path(getattr(existing, "__file__", "") or "").resolve() == path:
            return existing
        raise RegistryError(f"module name {name!r} is already taken by {getattr(existing, '__file__', existing)}; "
                            f"rename the file")
    folder = str(path.parent)
    if folder not in sys.path:  # sibling modules of the file import as they would next to it
        sys.path.insert(0, folder)
    spec_ = importlib.util.spec_from_file_location(name, path)
    if spec_ is None or spec_.loader is None:
        raise RegistryError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec_)
    sys.modules[name] = module  # dataclasses look their module up while the file executes
    spec_.loader.exec_module(module)
    return module


def _is_module(obj: Any) -> bool:
    return type(obj).__name__ == "module"


def _kind(obj: Any) -> str:
    return f"{type(obj).__name__} {obj!r}"[:120]


# ---------------------------------------------------------------------------------------------
# the process-wide registry and shortcuts


_DEFAULT: Registry | None = None


def default() -> Registry:
    """The registry of this process (installed entry points, plus the sources added to it)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Registry()
    return _DEFAULT


def reset(registry: Registry | None = None) -> Registry | None:
    """Replace the process-wide registry (tests); returns the previous one."""
    global _DEFAULT
    previous, _DEFAULT = _DEFAULT, registry
    return previous


def add_source(spec: str) -> None:
    default().add_source(spec)


def papers() -> dict[str, Paper]:
    return default().papers()


def select_claims(pattern: str | None = None) -> list[Claim]:
    return default().select_claims(pattern)


def plan(claims: Sequence[Claim], profile: Profile) -> list[RunConfig]:
    return default().plan(claims, profile)


def make_algorithm(name: str, params: Mapping[str, Any] | None = None) -> base.Algorithm:
    """The algorithm registered under ``name``, built from JSON-able parameters."""
    return default().algorithm(name).from_params(dict(params or {}))


def make_problem(name: str, params: Mapping[str, Any] | None = None) -> Problem:
    """Build a registered problem, every parameter checked against its family's declaration.

    A factory declared with ``ratecheck.params.declare`` checks its own keywords. For one not yet
    declared, the annotations of its signature stand in (``bool`` takes only booleans, ``int`` only
    integers, ``float`` only finite numbers, ``str`` only strings, ``| None`` also null), so a string
    'False' or a null seed is refused instead of silently changing the problem.
    """
    if not isinstance(name, str):
        raise ValueError(f"a problem family is named by a string, got {name!r}")
    factory = default().problem(name)
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ValueError(f"problem {name!r}: parameters must be a mapping of name to value, got {params!r}")
    params = dict(params)
    import inspect

    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(factory).parameters.values())
    if not (hasattr(factory, "declared") or getattr(factory, "checks_parameters", False) or open_ended):
        declared = inferred_declarations(factory)
        for key, value in params.items():
            if key not in declared:
                raise ParamError(name, key, value, f"unknown parameter; accepted parameters: {sorted(declared)}")
            param = declared[key]
            if param is not None:
                param.check(key, value, name)  # check only: the factory gets the value as given
        check_dense_size(name, factory, params)
    try:
        problem = factory(**params)
    except ParamError:
        raise
    except (TypeError, ValueError, OverflowError, ZeroDivisionError, IndexError, KeyError, AttributeError) as exc:
        # the factory's own cross-parameter checks (or a failure they missed): name the family and the input
        raise ValueError(f"problem {name!r} with {params!r}: {type(exc).__name__}: {exc}") from None
    except MemoryError:
        raise ValueError(f"problem {name!r} with {params!r} does not fit in memory: use fewer clients or a "
                         "smaller dimension") from None
    return paper_measures.attach(problem, default().measures(name))


@dataclass(frozen=True)
class WithSources:
    """A job function that first registers the parent's extra sources (worker processes, Dask)."""

    fn: Callable[[Any], Any]
    sources: tuple[str, ...]

    def __call__(self, item: Any) -> Any:
        registry = default()
        for spec in self.sources:
            registry.add_source(spec, papers=False)
        return self.fn(item)


def with_sources(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn`` wrapped so that spawned workers resolve the names this process registered."""
    sources = worker_sources()
    return WithSources(fn, sources) if sources else fn


def worker_sources() -> tuple[str, ...]:
    """Extra sources and the importable modules of algorithms registered outside any source
    (``@register`` in a researcher's module), which a fresh process must import to know them."""
    registry = default()
    extra = list(registry.sources)
    for _name, origin in base.ORIGINS.items():
        module = origin.removeprefix("module ")
        if origin.startswith("module ") and module != "__main__" and module not in extra:
            if not module.startswith(_OWN):
                extra.append(module)
    return tuple(extra)
