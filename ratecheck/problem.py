"""The problem contract: exact, vectorized oracles, a closed-form solution and analytic constants.

Concrete families live in the top-level ``problems`` package, one module each. A problem is a frozen
object built from JSON-able parameters (``spec``), so a run configuration can name it, hash it and
rebuild it in another process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .assumptions import Assumption, classed
from .seeding import ReplicaStream


@dataclass(frozen=True)
class Constant:
    """An assumption constant with the way it was obtained (for the report)."""

    value: float
    how: str

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class Measures:
    """Measures a paper registers for a family (issue #20 item 5): ``compute(problem, point) -> {name: (R,)
    values}`` at the algorithm's output, recorded by the engine beside the family's own ``measures`` when
    the output carries every key of ``needs`` (e.g. the client states an option of the algorithm outputs).

    A paper registers them under the family's name in the ``ratecheck.measures`` entry-point group (or a
    source's ``MEASURES = {family: Measures}``); ``make_problem`` attaches them to the problems it builds
    (``Problem.extra_measures``) and a run's code identity includes their module. Keep the module light: a
    run of the family imports it."""

    compute: Callable[[Any, Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]
    names: tuple[str, ...]
    needs: tuple[str, ...] = ()
    source: str = ""  # where the quantities come from (a lemma, an equation)

    def __call__(self, problem: Any, point: Any) -> dict[str, np.ndarray]:
        if self.needs and not (isinstance(point, Mapping) and all(k in point for k in self.needs)):
            return {}
        return dict(self.compute(problem, point))


class Problem:
    """Base class of every problem family.

    Subclasses set ``family`` and implement the oracles their algorithm family needs. The engine only
    uses ``num_clients``, ``dim``, ``initial_point``, ``all_measures`` and ``spec``.
    """

    family: ClassVar[str] = "problem"
    # measures that are not quadratic forms of the output (a norm, an absolute value): exact mode
    # (ratecheck.exact) has no expectation for them from the moments and leaves them out, saying so
    non_quadratic_measures: ClassVar[frozenset[str]] = frozenset()
    # the assumptions (ratecheck.assumptions) this family can certify, each quantified by constants of
    # ``constants()``; an instance certifies those whose constants it computes
    assumptions: ClassVar[tuple[Assumption, ...]] = ()
    # measures papers registered for this family (Measures), attached by ratecheck.registry.make_problem
    extra_measures: tuple[Measures, ...] = ()
    num_clients: int
    dim: int

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "assumptions" in cls.__dict__:  # a family's declaration, checked where it is written
            where = f"problem family {cls.family!r} ({cls.__module__}.{cls.__name__}.assumptions)"
            cls.assumptions = classed(cls.assumptions, where)

    @property
    def spec(self) -> dict[str, Any]:
        """JSON-able identity: the registry name and the parameters that rebuild this problem."""
        return {"name": self.family, "params": dict(self.params)}

    @property
    def params(self) -> Mapping[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def initial_point(self) -> np.ndarray | dict[str, np.ndarray]:  # pragma: no cover - abstract
        """The start: an array (d,), or named arrays such as {"x": ..., "y": ...} (minimax)."""
        raise NotImplementedError

    def measures(self, point: Any) -> dict[str, np.ndarray]:  # pragma: no cover - abstract
        """Exact measures of the algorithm's output (an (R, d) array, or named (R, ...) arrays):
        each a (R,) array. They are evaluated every round, so keep them closed form."""
        raise NotImplementedError

    def all_measures(self, point: Any) -> dict[str, np.ndarray]:
        """What a run records: the family's own ``measures`` and those papers registered for it."""
        values = self.measures(point)
        for extra in self.extra_measures:
            values.update(extra(self, point))
        return values

    def constants(self) -> dict[str, Constant]:  # pragma: no cover - abstract
        raise NotImplementedError


class SmoothFederatedProblem(Problem):
    """min_x F(x) = (1/N) sum_i F_i(x), with a stochastic gradient oracle per client.

    Oracle shapes: points (R, m, d) for R replicas and m active clients, client ids (R, m).
    ``gather`` collects the active clients' data once per round; local steps then reuse it.
    """

    sigma: float  # E||noise||^2 = sigma^2 per stochastic gradient

    def initial_point(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def gather(self, clients: np.ndarray) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def local_grad(self, batch: Any, w: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """Exact gradients of the active clients' objectives at w (R, m, d)."""
        raise NotImplementedError

    def stochastic_grad(self, batch: Any, w: np.ndarray, noise: ReplicaStream) -> np.ndarray:
        """Unbiased gradient with additive Gaussian noise, xi ~ N(0, sigma^2/d I): E||xi||^2 = sigma^2."""
        grad = self.local_grad(batch, w)
        if self.sigma != 0.0:  # in place, no temporaries: this is the engine's hot loop
            xi = noise.normal(w.shape[1:])
            xi *= self.sigma / np.sqrt(self.dim)
            grad += xi
        return grad


def check_positive(name: str, value: float, *, strict: bool = True) -> None:
    """Fail early with the parameter, its value and the rule."""
    ok = value > 0 if strict else value >= 0
    if not np.isfinite(value) or not ok:
        rule = "> 0" if strict else ">= 0"
        raise ValueError(f"{name} must be finite and {rule}, got {value!r}")


def check_int(name: str, value: Any, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or int(value) != value:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


# ---------------------------------------------------------------------------------------------
# Issue #11: simple bilevel ("select among the minimizers of h") problems need a composite oracle.


class CompositeFederatedProblem(SmoothFederatedProblem):
    """Two losses per client, h_i (inner, ``stochastic_grad``) and f_i (outer), with independent noise.

    ``composite_grad(batch, w, eta, noise, anchor=None)`` returns grad h~_i(w, zeta) + eta grad f~_i(w, xi)
    with zeta and xi drawn independently (zeta first); with ``anchor`` (R, d) the outer term is the
    exact eta (w - anchor) of g = 1/2||x - y||^2. Its Hessians may be singular (PSD): h has a set of
    minimizers, ``project`` maps onto it.
    """

    sigma_f: float  # E||xi||^2 = sigma_f^2 per outer stochastic gradient

    def composite_grad(self, batch: Any, w: np.ndarray, eta: float, noise: ReplicaStream,
                       anchor: np.ndarray | None = None) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def project(self, y: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """Euclidean projection onto argmin h, for points (..., d)."""
        raise NotImplementedError
