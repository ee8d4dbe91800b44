"""Closed-form problem families, one module each, registered by entry point (group
``ratecheck.problems`` in pyproject.toml) like anyone's; ``make_problem`` builds one by name."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ratecheck.problem import Problem


def __getattr__(name: str) -> Any:
    if name == "FAMILIES":  # family name -> factory, every registered family (ratecheck.registry)
        return _families()
    raise AttributeError(name)


def _families() -> dict[str, Callable[..., Problem]]:
    from ratecheck.registry import default

    return {item.name: item.obj for item in default().items("problem")}


def make_problem(name: str, params: Mapping[str, Any] | None = None) -> Problem:
    """Build a registered problem; the error lists the known families and the factory's parameters."""
    FAMILIES = _families()
    if name not in FAMILIES:
        raise ValueError(f"unknown problem family {name!r}; known: {sorted(FAMILIES)}")
    try:
        return FAMILIES[name](**dict(params or {}))
    except TypeError as exc:  # an unknown keyword: name the accepted ones
        import inspect

        accepted = list(inspect.signature(FAMILIES[name]).parameters)
        raise ValueError(f"problem {name!r}: {exc}; accepted parameters: {accepted}") from None
