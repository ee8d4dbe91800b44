"""Measures papers register for a problem family (issue #20 item 5), as the registry finds them.

A paper's lemma quantities (``ratecheck.problem.Measures``) are registered under the family's name in the
``ratecheck.measures`` entry-point group, or in a source's ``MEASURES = {family: Measures}``; the registry
imports only the entry points named after the family a problem is built for, and ``make_problem``
attaches them (``Problem.extra_measures``), so the engine and exact mode record them
(``Problem.all_measures``) and a run's code identity includes their module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .model.entry_points import GROUPS
from .problem import Measures

GROUP = GROUPS["measures"]


def checked(family: str, extra: Any) -> Measures:
    """``extra`` as the Measures of ``family``; ValueError (a RegistryError in the registry) otherwise."""
    if not isinstance(extra, Measures):
        raise ValueError(f"measures of family {family!r}: expected a ratecheck.problem.Measures, "
                         f"got {type(extra).__name__}")
    return extra


def of_source(module: Any) -> dict[str, Measures]:
    """A source's ``MEASURES`` (family -> Measures), checked."""
    measures = getattr(module, "MEASURES", {})
    if not isinstance(measures, Mapping):
        raise ValueError(f"MEASURES must map family names to Measures, got {type(measures).__name__}")
    return {name: checked(name, extra) for name, extra in measures.items()}


def of_entry_points(family: str, entry_points: Iterable[Any]) -> list[Measures]:
    """The Measures of the entry points named ``family`` (only those are imported)."""
    return [checked(family, ep.load()) for ep in entry_points if ep.name == family]


def attach(problem: Any, extra: tuple[Measures, ...]) -> Any:
    """The problem with the papers' measures of its family (a frozen problem: set once, when it is built)."""
    if extra:
        object.__setattr__(problem, "extra_measures", tuple(problem.extra_measures) + extra)
    return problem
