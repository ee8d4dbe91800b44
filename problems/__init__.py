"""Closed-form problem families, one module each, and the registry that builds them by name."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable, Mapping

from ratecheck.params import Param, ParamError
from ratecheck.problem import Problem

from . import quadratic
from . import quadratic_bilevel
from . import minimax

# family name -> factory taking JSON-able keyword parameters
FAMILIES: dict[str, Callable[..., Problem]] = {
    "quadratic": quadratic.make,
    "quadratic_bilevel": quadratic_bilevel.make,
    "minimax": minimax.make,
}


def make_problem(name: str, params: Mapping[str, Any] | None = None) -> Problem:
    """Build a registered problem, every parameter checked against its family's declaration.

    A factory declared with ``ratecheck.params.declare`` checks its own keywords. For one not yet
    declared, the annotations of its signature stand in (``bool`` takes only booleans, ``int`` only
    integers, ``float`` only finite numbers, ``str`` only strings, ``| None`` also null), so a string
    'False' or a null seed is refused instead of silently changing the problem.
    """
    if not isinstance(name, str) or name not in FAMILIES:
        raise ValueError(f"unknown problem family {name!r}; known: {sorted(FAMILIES)}")
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ValueError(f"problem {name!r}: parameters must be a mapping of name to value, got {params!r}")
    factory = FAMILIES[name]
    params = dict(params)
    if not (hasattr(factory, "declared") or getattr(factory, "checks_parameters", False)):
        declared = inferred_declarations(factory)
        for key, value in params.items():
            if key not in declared:
                raise ParamError(name, key, value, f"unknown parameter; accepted parameters: {sorted(declared)}")
            if declared[key] is not None:
                declared[key].check(key, value, name)  # check only: the factory gets the value as given
        _check_dense_size(name, factory, params)
    try:
        return factory(**params)
    except ParamError:
        raise
    except (TypeError, ValueError, OverflowError, ZeroDivisionError, IndexError, KeyError, AttributeError) as exc:
        # the factory's own cross-parameter checks (or a failure they missed): name the family and the input
        raise ValueError(f"problem {name!r} with {params!r}: {type(exc).__name__}: {exc}") from None
    except MemoryError:
        raise ValueError(f"problem {name!r} with {params!r} does not fit in memory: use fewer clients or a "
                         "smaller dimension") from None


MAX_DENSE = 10**8  # float64 numbers an undeclared family may build: clients x dim^2 (dense per-client matrices)


def _check_dense_size(name: str, factory: Callable[..., Any], params: Mapping[str, Any]) -> None:
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


def declarations_of(name: str) -> dict[str, Param | None]:
    """The parameters of a family as declared (or inferred), for listings."""
    if name not in FAMILIES:
        raise ValueError(f"unknown problem family {name!r}; known: {sorted(FAMILIES)}")
    return inferred_declarations(FAMILIES[name])
