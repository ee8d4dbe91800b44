"""Stored computations other than runs: a claim's search (a hunt's restart), asked for by the claim.

Adaptive claims (a hunt, a bisection on the horizon) do not know every run up front. They state what
they still need with ``requests(profile, results)``: run configurations and ``Task``s not yet in
``results`` (empty once they have all they need), and decide from ``results`` alone. The sweep
(``ratecheck.runner.sweep.gather``) answers the requests round by round, from the store or on the
executor, so these computations are cached, resumable and parallel like runs.

A ``Task`` names its claim (workers find a registered claim by id) and a JSON-able spec; the claim's
``compute_task(task)`` returns a JSON-able result. Its stored key covers the spec, the import
closure of the modules the claim is built from (its class, its search space's functions, its
theorem's paper) and the versions of the libraries it reads (hypothesis, sympy, numpy); the code
of the algorithms and families the task ran is recorded with the result and checked on reading.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
import types
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..model.tasks import Task
from ..simulate.engine import run_config
from ..trace import RunConfig

if TYPE_CHECKING:
    from ..claims import Claim, Profile

__all__ = ["Pending", "Task", "complete", "jsonable", "object_modules", "running_with", "task_runner"]


class Pending(Exception):
    """Raised inside a claim's decision when ``results`` lack something it needs (then requested)."""

    def __init__(self, item: RunConfig | Task) -> None:
        super().__init__(f"not yet computed: {item}")
        self.item = item

    def __reduce__(self) -> tuple[Any, ...]:
        # The default would rebuild Pending(message) and prefix the message twice: rebuild from the item.
        return (type(self), (self.item,))


# How a task's runs are made: set by the sweep around ``compute_task`` to a runner that reads and
# writes the store, so an interrupted search resumes from the runs it finished (a rerun replays the
# same draws, answered from the store, and so gives the same numbers). None: run in this process.
_RUNNER: contextvars.ContextVar[Callable[[RunConfig], Any] | None] = contextvars.ContextVar("runner", default=None)


@contextlib.contextmanager
def running_with(runner: Callable[[RunConfig], Any] | None) -> Iterator[None]:
    """Within the block, ``task_runner()`` is ``runner``."""
    token = _RUNNER.set(runner)
    try:
        yield
    finally:
        _RUNNER.reset(token)


def task_runner() -> Callable[[RunConfig], Any] | None:
    """How the task being computed should make a run (None: ``engine.run_config``, uncached)."""
    return _RUNNER.get()


def item_key(item: RunConfig | Task) -> str:
    return item.key()


def complete(claim: Claim, profile: Profile, results: Mapping[str, Any]) -> dict[str, Any]:
    """``results`` with everything ``claim`` requests computed here, uncached: for a decision asked
    outside a sweep (a unit test calling ``decide``). A check never gets here: its sweep has
    answered every request from the store or the executor."""
    out = dict(results)
    while True:
        wanted = claim.requests(profile, out)
        if not wanted:
            return out
        for item in wanted:
            if isinstance(item, RunConfig):
                out[item.key()] = run_config(item)
            else:
                out[item.key()] = jsonable(claim.compute_task(item))


def jsonable(obj: Any) -> Any:
    """``obj`` as it reads back from the store (JSON), so a fresh and a cached decision see the same."""
    return json.loads(json.dumps(obj, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))


def object_modules(obj: Any, depth: int = 4) -> list[str]:
    """The modules that define ``obj``: its class, and for a dataclass those of its fields' values
    (functions, nested dataclasses, sequences of them), ``depth`` levels down."""
    found: dict[str, None] = {}

    def visit(value: Any, level: int) -> None:
        if level < 0 or value is None or isinstance(value, (str, bytes, int, float, bool)):
            return
        if isinstance(value, (types.FunctionType, types.MethodType, type)):
            module = getattr(value, "__module__", None)
            if module:
                found.setdefault(module)
            return
        if dataclasses.is_dataclass(value):
            found.setdefault(type(value).__module__)
            for f in dataclasses.fields(value):
                visit(getattr(value, f.name, None), level - 1)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item, level - 1)
        elif isinstance(value, Mapping):
            for item in value.values():
                visit(item, level - 1)
        elif callable(value):  # functools.partial and other callables
            visit(getattr(value, "func", type(value)), level - 1)

    visit(obj, depth)
    return [m for m in found if m and not m.startswith(("builtins", "typing", "functools", "sympy"))]
