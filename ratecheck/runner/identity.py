"""The identity of the code behind a run, read from the import graph.

A run's numbers depend on its algorithm's class (and every base class), on its problem family's
factory and the measures papers registered for the family (ratecheck.problem.Measures), on the
engine, and on every project module these import, directly or through helpers
(an event timeline, a STORM estimator, a Neumann hypergradient). ``code_identity`` digests the
source of every module in that import closure, found by parsing each module's imports with ``ast``
(module level and inside functions, since a function may run during the run; never the imports
under ``if TYPE_CHECKING:``, which do not execute). Only project modules count: those of
ratecheck's own packages and of the top-level package of a plugin's algorithm or family. Third-party
libraries count through their versions (numpy). A package's ``__init__`` counts when it is imported
by name, not merely because a submodule of it is.

``stored_key(config)`` is the store's key of a run: its configuration key and this digest, so an
edit anywhere in the closure recomputes exactly the runs it can change, and an edit elsewhere (an
unrelated paper) does not.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__, registry
from ..seeding import stable_hash
from ..trace import RunConfig
from .tasks import object_modules

__all__ = ["code_identity", "import_closure", "module_digest", "stored_key"]

PROJECT = ("ratecheck", "problems", "proofs")  # the package's own top-level packages
ENGINE = ("ratecheck.simulate.engine",)  # what runs every algorithm; its closure brings the rest
EXACT = ("ratecheck.exact",)  # exact-mode runs also depend on the moment propagation
STORAGE = ("ratecheck.model.store",)  # the entry's format: an entry is read only by the code that wrote it


def stored_key(config: RunConfig) -> str:
    """The store's key of a run: the configuration's key and the digest of the code that runs it."""
    return stable_hash({"run": config.key(), "code": code_identity(config)["digest"]})


def code_identity(config: RunConfig) -> dict[str, Any]:
    """Digests of the source that produces ``config``'s run (see the module's docstring): ``digest``
    combines them with the package's and numpy's versions; ``modules`` maps each module of the
    closure to its digest. The registry is read on every call, so a test double swapped into it
    gets its own identity; an unknown name contributes nothing (its run fails and says why)."""
    names = registry.default()
    try:
        cls = names.algorithm(config.algorithm)
    except Exception:
        cls = None
    try:
        factory = names.problem(config.problem)
    except Exception:
        factory = None
    try:  # the measures papers registered for the family are recorded by the run too
        extra = tuple(sorted({m.compute.__module__ for m in names.measures(config.problem)}))
    except Exception:  # as for an unknown name: make_problem fails the same way, so no run is stored under this key
        extra = ()
    return _identity(cls, factory, config.mode != "monte_carlo", extra)  # type: ignore[arg-type]  # a class hashes by id; mypy reads its instances' __hash__


@functools.cache
def _identity(cls: type | None, factory: Any, exact: bool, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    classes = [c for c in getattr(cls, "__mro__", ()) if c.__module__ not in ("builtins", "abc", "typing")]
    roots = [c.__module__ for c in classes]
    if factory is not None and getattr(factory, "__module__", None):
        roots.append(factory.__module__)
    roots += extra
    roots += ENGINE + STORAGE + (EXACT if exact else ())
    modules = {name: module_digest(name) for name in import_closure(roots)}
    # the classes too: two test doubles defined in one module must not share their runs
    qualnames = [f"{c.__module__}.{c.__qualname__}" for c in classes]
    digest = stable_hash({"version": __version__, "numpy": np.__version__, "modules": modules, "classes": qualnames})
    return {"digest": digest, "version": __version__, "classes": qualnames, "modules": modules}


def import_closure(roots: Iterable[str]) -> list[str]:
    """Every project module reachable from ``roots`` by imports (sorted, roots included)."""
    return list(_closure(tuple(dict.fromkeys(roots))))


@functools.cache
def _closure(roots: tuple[str, ...]) -> tuple[str, ...]:
    project = set(PROJECT) | {name.split(".")[0] for name in roots}
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name.split(".")[0] not in project or _source(name) is None:
            continue
        seen.add(name)
        todo += [target for target in _imports(name) if target not in seen]
    return tuple(sorted(seen))


def module_digest(name: str) -> str:
    """SHA-256 of a module's source file ('' if it has none)."""
    path = _source(name)
    return _file_digest(path) if path is not None else ""


@functools.cache
def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@functools.cache
def _source(name: str) -> Path | None:
    """The .py file of module ``name``, or None (not a module, or no source). Found on disk from its
    top-level package's folder, so that nothing is imported on the way (find_spec of a submodule
    would import its parents)."""
    for finder in sys.meta_path:  # a finder serving the module from another file (ratecheck.mutate.hook)
        override = getattr(finder, "source_override", None)
        served = override(name) if callable(override) else None
        if served is not None:
            return Path(served)
    parts = name.split(".")
    for depth in range(len(parts) - 1, 0, -1):  # the nearest imported package: its __path__ may lie elsewhere
        package = sys.modules.get(".".join(parts[:depth]))  # (a package-dir mapping: ratecheck.problems)
        if package is not None and getattr(package, "__path__", None):
            for base in map(Path, package.__path__):
                where = base.joinpath(*parts[depth:])
                for candidate in (where.with_suffix(".py"), where / "__init__.py"):
                    if candidate.is_file():
                        return candidate
            return None
    top, _, rest = name.partition(".")
    module = sys.modules.get(top)
    origin = getattr(module, "__file__", None) if module is not None else None
    if origin is None:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            return None
        origin = spec.origin if spec is not None else None
    if not origin or not str(origin).endswith(".py"):
        return None
    path = Path(origin)
    if not rest:
        return path
    if path.name != "__init__.py":
        return None  # a plain module has no submodules
    where = path.parent.joinpath(*rest.split("."))
    for candidate in (where.with_suffix(".py"), where / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def direct_imports(name: str) -> tuple[str, ...]:
    """The project modules ``name`` imports itself (one level of the import graph)."""
    return _imports(name)


@functools.cache
def _imports(name: str) -> tuple[str, ...]:
    """The modules ``name`` imports, absolute (``from m import x``: ``m.x`` if it is a module, and
    ``m`` if some imported name is not), skipping ``if TYPE_CHECKING:`` blocks."""
    path = _source(name)
    if path is None:
        return ()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[str] = []
    for module, level, names in _statements(path):
        if level < 0:  # import a, b
            found += names
            continue
        base = _absolute(module, level, package)
        if base is None:
            continue
        submodules = [f"{base}.{alias}" for alias in names if alias != "*" and _source(f"{base}.{alias}") is not None]
        # names read from ``base`` itself make it a dependency; submodules only run it as a parent
        found += submodules if len(submodules) == len(names) else [base, *submodules]
    return tuple(dict.fromkeys(found))


# The executed import statements of each source file by its SHA-256, [module, level (-1: ``import``), names]:
# kept in the run cache (``keep_parsed_imports``), since parsing ~150 modules is half a second of every check.
PARSED: dict[str, list[Any]] = {}
_HELD: dict[str, set[str]] = {}  # store root -> the digests its record holds (as read or written)
# keyed on the parser too (this file): a change of what counts as executed never reads old import lists
PARSED_KEY = hashlib.sha256(f"ratecheck parsed imports, Python {sys.version_info[:2]}, "
                            f"{_file_digest(Path(__file__).resolve())}".encode()).hexdigest()


def _statements(path: Path) -> list[Any]:
    digest = _file_digest(path)
    if digest not in PARSED:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        PARSED[digest] = [[None, -1, [a.name for a in node.names]] if isinstance(node, ast.Import)
                          else [node.module, node.level, [a.name for a in node.names]]
                          for node in _executed(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    return PARSED[digest]


def _statement(item: Any) -> bool:
    return (isinstance(item, list) and len(item) == 3 and isinstance(item[0], (str, type(None)))
            and isinstance(item[1], int) and isinstance(item[2], list) and all(isinstance(n, str) for n in item[2]))


def keep_parsed_imports(store: Any, save: bool = False) -> None:
    """Read the parsed imports stored in ``store`` (a Store; the record is content-addressed, so never
    stale), or with ``save`` store them if the record lacks some (one record, rewritten when it grew)."""
    root = str(store.root)
    if not save:
        entry = store.get(PARSED_KEY)
        parsed = entry[1].get("parsed_imports") if entry is not None else None
        held = _HELD.setdefault(root, set())
        for digest, statements in (parsed.items() if isinstance(parsed, dict) else ()):
            if isinstance(statements, list) and all(_statement(s) for s in statements):
                PARSED.setdefault(digest, statements)
                held.add(digest)
    elif set(PARSED) - _HELD.get(root, set()):
        try:
            store.put(PARSED_KEY, {}, {"parsed_imports": PARSED})
            _HELD[root] = set(PARSED)
        except OSError:
            pass  # a read-only or full cache: parsed again next time


def _executed(tree: ast.AST) -> Iterable[ast.AST]:
    """Every statement, nested ones included, except those under ``if TYPE_CHECKING:`` (typing-only
    imports never run). Imports are statements: expressions need not be walked."""
    stack = list(getattr(tree, "body", []))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                stack.extend(block)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _absolute(module: str | None, level: int, package: str) -> str | None:
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else [])) or None


# -- tasks (ratecheck.runner.tasks): a claim's stored search ----------------------------------------------

LIBRARIES = ("hypothesis", "sympy", "numpy")  # what a search reads besides the project's code
_TASK_CODE: dict[int, tuple[Any, str]] = {}  # id(claim) -> (claim, digest): claims are not hashable


def stored_task_key(claim: Any, task: Any) -> str:
    """The store's key of a task: its own key, the digest of the import closure of the modules
    ``claim`` is built from (with the engine's) and the versions of the libraries it reads."""
    known = _TASK_CODE.get(id(claim))
    if known is None or known[0] is not claim:
        digest = _modules_digest(tuple(dict.fromkeys([*object_modules(claim), *ENGINE, *STORAGE])))
        known = _TASK_CODE[id(claim)] = (claim, digest)
    return stable_hash({"task": task.key(), "code": known[1]})


def runs_code(configs: Iterable[RunConfig]) -> dict[str, str]:
    """The code digests of the runs a task made, by algorithm, family and mode (checked on reading)."""
    out: dict[str, str] = {}
    for config in configs:
        name = f"{config.algorithm}|{config.problem}|{config.mode}"
        if name not in out:
            out[name] = code_identity(config)["digest"]
    return out


def runs_code_current(recorded: Any) -> bool:
    """Whether every run a stored task made would still be made by the same code."""
    if not isinstance(recorded, dict):
        return False
    for name, digest in recorded.items():
        algorithm, problem, mode = name.split("|")
        if code_identity(RunConfig(algorithm, {}, problem, {}, 1, mode=mode))["digest"] != digest:
            return False
    return True


@functools.cache
def _modules_digest(roots: tuple[str, ...]) -> str:
    closure = import_closure(roots)
    return stable_hash({"modules": {name: module_digest(name) for name in closure},
                        "libraries": {name: _version(name) for name in LIBRARIES}})


@functools.cache
def _version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return ""
