"""FedAvg and DeFedAvg (delay-schedule mode): local SGD from possibly stale global models.

Source: ../shared/seeds/003_2fcc6b9d543c5aab.txt (arXiv:2402.11198), spec ../shared/spec/defedavg.md.

* ``fedavg``: the paper's reference synchronous FedAvg, eqs. (2)-(3), with the sign of (3) fixed
  (spec §2.4): w^{t+1} = w^t - eta * (1/n) sum_i Delta_i, Delta_i = start - end of K local steps.
* ``defedavg_niid``: Algorithm 1 as the compact recursion eq. (8) with a prescribed delay schedule
  (spec §2.7.2, "Mode D"): n i.i.d. uniform draws with replacement; a client drawn twice contributes
  its one update twice (divide by n, count multiplicity, spec §2.6(3)).
* ``defedavg_iid``: Algorithm 2 in the same mode: n distinct clients per round (any choice is valid
  for IID data, spec §2.7.2); default uniform without replacement.

The delayed variants keep a ring buffer of the last lambda+1 global models and start each local job
from w^{tau}, tau = max(0, t - d) (spec pitfall 13: never apply an old update to the new model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..options import KindOption
from ..params import choice, integer, option, real
from ..participation import Participation, first_occurrence
from ..problem import SmoothFederatedProblem
from ..seeding import ReplicaStream, Streams
from .base import Algorithm, Costs, register
from .local import local_sgd

DELAY_KINDS = ("none", "constant", "uniform", "cyclic", "per_client")


@dataclass(frozen=True)
class DelaySchedule(KindOption):
    """Delay d (in rounds) of the model a client's job starts from; 0 <= d <= lam (spec §2.7.2).

    none: d = 0.  constant:d: d for everyone.  uniform:lam: d ~ U{0..lam} i.i.d. per client and round.
    cyclic:lam: d = (j + t) mod (lam+1).  per_client:lam: d = j mod (lam+1).
    """

    label: ClassVar[str] = "delay"
    example: ClassVar[str] = "constant:2"
    default_count: ClassVar[int] = 0

    kind: str = "none"
    lam: int = 0

    def __post_init__(self) -> None:
        if self.kind not in DELAY_KINDS:
            raise ValueError(f"delay kind must be one of {DELAY_KINDS}, got {self.kind!r}")
        if self.kind == "none" and self.lam != 0:
            raise ValueError("delay 'none' takes no lambda (use constant:d for a fixed delay)")
        if int(self.lam) != self.lam or self.lam < 0:
            raise ValueError(f"delay lambda must be an integer >= 0, got {self.lam!r}")

    def __str__(self) -> str:
        return self.kind if self.kind == "none" else f"{self.kind}:{self.lam}"

    def sample(self, clients: np.ndarray, t: int, stream: ReplicaStream) -> np.ndarray:
        """Delays of shape (R, m) for the round-t participants `clients` (R, m)."""
        if self.kind == "none":
            return np.zeros(clients.shape, dtype=np.int64)
        if self.kind == "constant":
            return np.full(clients.shape, self.lam, dtype=np.int64)
        if self.kind == "uniform":
            return stream.integers(self.lam + 1, clients.shape[1:])
        if self.kind == "cyclic":
            return (clients + t) % (self.lam + 1)
        return clients % (self.lam + 1)


@dataclass
class FedAvgState:
    history: np.ndarray  # (R, lam+1, d): ring buffer, w^s sits at slot s mod (lam+1)
    t: int
    max_delay: int = 0  # largest delay actually used (the paper's lambda_used)
    server: Any = None  # the server step's own state (e.g. a momentum buffer); None for plain FedAvg

    @property
    def x(self) -> np.ndarray:
        return self.history[:, self.t % self.history.shape[1]]


@register
@dataclass(frozen=True)
class FedAvg(Algorithm):
    """Local SGD with a server learning rate, a participation scheme and an optional delay schedule.

    A round is built from three seams a variant can replace (as FedJAX builds FedAvg from a client
    and a server optimizer), while sampling, delays and duplicate clients stay here:
    ``client_update`` (the local job of each active client), ``aggregate`` (the active clients'
    updates -> one direction) and ``server_step`` (direction -> new global model, with an optional
    server state from ``server_init``).
    """

    name: ClassVar[str] = "fedavg"
    source: ClassVar[str] = "003_2fcc6b9d543c5aab.txt eqs. (2)-(3), sign fixed (spec defedavg §2.4)"
    parsers: ClassVar = {"participation": Participation.parse, "delay": DelaySchedule.parse}
    allowed_modes: ClassVar[tuple[str, ...]] = ("full", "with_replacement", "without_replacement")
    broadcast_to_all: ClassVar[bool] = False  # sync FedAvg sends w^t to the selected clients only

    eta_global: float = real(1.0, "server (global) step size, the paper's eta", positive=True)
    eta_local: float = real(0.1, "client (local) step size, the paper's eta-bar", positive=True)
    local_steps: int = integer(1, "local SGD steps K per round", low=1, high=10**6)
    participation: Participation = option(Participation, "client sampling: full, with_replacement:n, "
                                          "without_replacement:n", Participation.parse)
    delay: DelaySchedule = option(DelaySchedule, "delay schedule of the model a job starts from: none, "
                                  "constant:d, uniform:lam, cyclic:lam, per_client:lam", DelaySchedule.parse)
    duplicates: str = choice("shared", "a client drawn twice: 'shared' uploads one update counted twice "
                             "(paper); 'independent' runs two fresh local jobs (spec pitfall 3)",
                             ("shared", "independent"))

    def validate(self, problem: SmoothFederatedProblem) -> None:
        if self.participation.mode not in self.allowed_modes:
            raise ValueError(
                f"{self.name} needs participation in {self.allowed_modes}, got {self.participation}"
            )
        self.participation.validate(problem.num_clients)

    def init(self, problem: SmoothFederatedProblem, streams: Streams) -> FedAvgState:
        x0 = np.broadcast_to(problem.initial_point(), (len(streams.replicas), problem.dim))
        history = np.repeat(x0[:, None, :], self.delay.lam + 1, axis=1).astype(float)
        return FedAvgState(history=history, t=0, server=self.server_init(history[:, 0]))

    # -- seams ---------------------------------------------------------------------------------
    def client_update(self, problem: SmoothFederatedProblem, batch: Any, start: np.ndarray,
                      streams: Streams) -> np.ndarray:
        """Delta_i = start - end of K local SGD steps, (R, m, d); it points uphill (spec §2.1)."""
        end = local_sgd(problem, batch, start, self.local_steps, self.eta_local, streams["noise"])
        return start - end

    def aggregate(self, updates: np.ndarray, clients: np.ndarray) -> np.ndarray:
        """(R, m, d) -> (R, d): divide by n, a client drawn twice counted twice (spec §2.6(3))."""
        return updates.mean(axis=1)

    def server_init(self, x0: np.ndarray) -> Any:
        """The server step's state at round 0 (None: plain FedAvg keeps none)."""
        return None

    def server_step(self, x: np.ndarray, direction: np.ndarray, server: Any, t: int) -> tuple[np.ndarray, Any]:
        """w^{t+1} = w^t - eta * direction (eq. (3) with its sign fixed)."""
        return x - self.eta_global * direction, server

    def round(self, state: FedAvgState, problem: SmoothFederatedProblem, t: int, streams: Streams):
        slots = self.delay.lam + 1
        clients = self.participation.sample(problem.num_clients, streams["sampling"])
        delays = self.delay.sample(clients, t, streams["delay"])
        shared = self.duplicates == "shared" and self.participation.mode == "with_replacement"
        if shared:  # one job per distinct client: its delay and update are those of its first draw
            first = first_occurrence(clients)
            delays = np.take_along_axis(delays, first, axis=1)
        base = np.maximum(t - delays, 0)
        replica_index = np.arange(clients.shape[0])[:, None]
        start = state.history[replica_index, base % slots]  # (R, m, d)
        batch = problem.gather(clients)
        update = self.client_update(problem, batch, start, streams)
        if shared:
            update = np.take_along_axis(update, first[:, :, None], axis=1)
            distinct = (first == np.arange(clients.shape[1])).sum(axis=1).astype(float)
        else:
            distinct = np.full(clients.shape[0], float(clients.shape[1]))
        x_new, server = self.server_step(state.x, self.aggregate(update, clients), state.server, t)
        if slots > 1:
            history = state.history.copy()
            history[:, (t + 1) % slots] = x_new
        else:
            history = x_new[:, None, :]
        costs: Costs = {
            "oracle_calls": distinct * self.local_steps,
            "vectors_up": distinct,
            "vectors_down": float(problem.num_clients) if self.broadcast_to_all else distinct,
        }
        used = int(delays.max(initial=0))
        return FedAvgState(history, t + 1, max(state.max_delay, used), server), costs

    def output(self, state: FedAvgState) -> np.ndarray:
        return state.x

    def info(self, state: FedAvgState) -> dict[str, Any]:
        # lambda >= 1 in Assumption 4; plug max(1, observed) into bounds (spec §4.7 item 7).
        return {"max_delay_used": state.max_delay, "lambda_used": max(1, state.max_delay)}


@register
@dataclass(frozen=True)
class DeFedAvgNIID(FedAvg):
    """Algorithm 1 (DeFedAvg-nIID), compact recursion (8) with a delay schedule."""

    name: ClassVar[str] = "defedavg_niid"
    source: ClassVar[str] = "003_2fcc6b9d543c5aab.txt Algorithm 1, eq. (8) (spec defedavg §2.2, §2.7.2)"
    allowed_modes: ClassVar[tuple[str, ...]] = ("with_replacement",)
    broadcast_to_all: ClassVar[bool] = True  # w^{t+1} goes to all N clients (Algorithm 1, S8)

    participation: Participation = option(lambda: Participation("with_replacement", 1),
                                          "client sampling: with_replacement:n (Algorithm 1)", Participation.parse)


@register
@dataclass(frozen=True)
class DeFedAvgIID(FedAvg):
    """Algorithm 2 (DeFedAvg-IID), compact recursion with a delay schedule and n distinct clients."""

    name: ClassVar[str] = "defedavg_iid"
    source: ClassVar[str] = "003_2fcc6b9d543c5aab.txt Algorithm 2 (spec defedavg §2.3, §2.7.2)"
    allowed_modes: ClassVar[tuple[str, ...]] = ("without_replacement", "full")
    broadcast_to_all: ClassVar[bool] = True

    participation: Participation = option(lambda: Participation("without_replacement", 1),
                                          "client sampling: n distinct clients, without_replacement:n or full",
                                          Participation.parse)
