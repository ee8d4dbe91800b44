"""What each kind of problem offers an algorithm: typing Protocols of the oracles.

An algorithm names the protocol it needs as the type parameter of its base class
(``class FedAvg(Algorithm[SmoothFederatedOracles])``) and annotates its ``init``/``round`` with it;
a family implements it (structurally: nothing to inherit) and its module states so for mypy with a
``_: type[Protocol] = Family`` line. The protocols are runtime-checkable, so ``Algorithm.check_problem``
refuses a family that lacks an oracle before a run starts, and ``ratecheck.testing`` checks that every
registered family offers what it claims.

Shapes (DESIGN.md, "Core contracts"): points (R, m, d) for R replicas and m active clients, client
ids (R, m); ``gather`` collects the active clients' data once per round, local steps reuse it; noise
comes from an explicit ``ReplicaStream``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from .assumptions import Assumption
    from .problem import Constant
    from .seeding import ReplicaStream


@runtime_checkable
class ProblemContract(Protocol):
    """What every problem offers the engine (``ratecheck.problem.Problem`` implements it)."""

    family: ClassVar[str]
    non_quadratic_measures: ClassVar[frozenset[str]]
    assumptions: ClassVar[tuple[Assumption, ...]]
    num_clients: int
    dim: int

    @property
    def spec(self) -> dict[str, Any]: ...

    @property
    def params(self) -> Mapping[str, Any]: ...

    def initial_point(self) -> np.ndarray | dict[str, np.ndarray]: ...

    def measures(self, point: Any) -> dict[str, np.ndarray]: ...

    def all_measures(self, point: Any) -> dict[str, np.ndarray]: ...  # with the papers' (Problem.all_measures)

    def constants(self) -> dict[str, Constant]: ...


@runtime_checkable
class SmoothFederatedOracles(ProblemContract, Protocol):
    """min_x F(x) = (1/N) sum_i F_i(x) with a stochastic gradient per client, E||noise||^2 = sigma^2."""

    sigma: float

    def initial_point(self) -> np.ndarray: ...

    def gather(self, clients: np.ndarray) -> Any: ...

    def local_grad(self, batch: Any, w: np.ndarray) -> np.ndarray: ...

    def stochastic_grad(self, batch: Any, w: np.ndarray, noise: ReplicaStream) -> np.ndarray: ...


@runtime_checkable
class CompositeOracles(SmoothFederatedOracles, Protocol):
    """Simple bilevel: an inner loss h (``stochastic_grad``) and an outer loss f per client; select
    among the minimizers of h (``project`` onto argmin h)."""

    sigma_f: float
    outer: Any  # the outer loss f: ``grad(x)`` and ``value(x)`` of the global f

    def composite_grad(self, batch: Any, w: np.ndarray, eta: float, noise: ReplicaStream,
                       anchor: np.ndarray | None = None) -> np.ndarray: ...

    def project(self, y: np.ndarray) -> np.ndarray: ...

    def dist_sq(self, y: np.ndarray) -> np.ndarray: ...

    def global_grads(self, x: np.ndarray, eta: float) -> np.ndarray: ...


@runtime_checkable
class BilevelOracles(ProblemContract, Protocol):
    """min_x (1/n) sum_i p_i f_i(x, y*(x)), y*(x) = argmin_y g(x, y): SimFBO's client oracles on a
    gathered batch (lower-level gradient, linear-system gradient, surrogate hypergradient)."""

    p: np.ndarray  # (n,) client weights, summing to 1

    def gather(self, clients: np.ndarray) -> Any: ...

    def initial_state(self) -> dict[str, np.ndarray]: ...

    def lower_grad(self, batch: Any, x: np.ndarray, y: np.ndarray, noise: ReplicaStream | None) -> np.ndarray: ...

    def ls_grad(self, batch: Any, x: np.ndarray, y: np.ndarray, v: np.ndarray,
                noise: ReplicaStream | None) -> np.ndarray: ...

    def surrogate_grad(self, batch: Any, x: np.ndarray, y: np.ndarray, v: np.ndarray,
                       noise: ReplicaStream | None) -> np.ndarray: ...

    def client_hypergrads(self, x: np.ndarray) -> np.ndarray: ...

    def y_star(self, x: np.ndarray) -> np.ndarray: ...

    def v_star(self, x: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class SampledBilevelOracles(ProblemContract, Protocol):
    """Bilevel problems sampled per oracle (FedBiO): one draw of mini-batches, then the partial
    gradients, Jacobian- and Hessian-vector products of every client on it."""

    dim_x: int
    dim_y: int

    @property
    def A_bar(self) -> np.ndarray: ...

    def initial_state(self) -> dict[str, np.ndarray]: ...

    def draw(self, noise: ReplicaStream | None, shape: tuple[int, ...], batch: int = 1, hessians: int = 1,
             oracles: tuple[str, ...] = ..., share_f: bool = False) -> Any: ...

    def grad_x_f(self, x: np.ndarray, y: np.ndarray, s: Any) -> np.ndarray: ...

    def grad_y_f(self, x: np.ndarray, y: np.ndarray, s: Any) -> np.ndarray: ...

    def grad_y_g(self, x: np.ndarray, y: np.ndarray, s: Any) -> np.ndarray: ...

    def jvp(self, x: np.ndarray, y: np.ndarray, u: np.ndarray, s: Any) -> np.ndarray: ...

    def hvp(self, x: np.ndarray, y: np.ndarray, u: np.ndarray, s: Any, k: int = 0) -> np.ndarray: ...


@runtime_checkable
class MinimaxOracles(ProblemContract, Protocol):
    """min_x max_{y in Y} (1/M) sum_i f_i(x, y): stochastic (grad_x, grad_y) per client, projection onto Y."""

    y_set: ClassVar[str]
    l: float  # smoothness of every f_i (Assumption 2.1)
    dim_x: int
    dim_y: int

    def gather(self, clients: np.ndarray) -> Any: ...

    def stochastic_grads(self, batch: Any, x: np.ndarray, y: np.ndarray,
                         noise: ReplicaStream) -> tuple[np.ndarray, np.ndarray]: ...

    def project_y(self, y: np.ndarray) -> np.ndarray: ...


KINDS: dict[str, type] = {
    "smooth federated": SmoothFederatedOracles,
    "composite": CompositeOracles,
    "bilevel": BilevelOracles,
    "sampled bilevel": SampledBilevelOracles,
    "minimax": MinimaxOracles,
}


def kinds_of(problem: object) -> list[str]:
    """The oracle kinds ``problem`` offers (runtime check of the protocols' members)."""
    return [name for name, protocol in KINDS.items() if isinstance(problem, protocol)]
