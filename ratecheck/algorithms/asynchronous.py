"""Asynchronous federated algorithms on the event-driven wall-clock timeline (spec defedavg §2.7.3, §7).

Source: ../shared/seeds/003_2fcc6b9d543c5aab.txt (arXiv:2402.11198), spec ../shared/spec/defedavg.md.

Each algorithm here is its delay-schedule counterpart of ratecheck.algorithms.fedavg with one seam
replaced: ``timeline`` simulates the system model (ratecheck.model.asynchrony) before any numerics, and the
rounds' (client, base version) pairs then drive the same numeric round. Timing never depends on the
iterates, so every replica's timeline is a function of (seed, replica, timing parameters, N, n, K).

* ``defedavg_niid_events``: Algorithm 1 (uniform draws with replacement, send buffers, variant A/B).
* ``defedavg_iid_events``: Algorithm 2 (first n arrivals, late arrivals carried over).
* ``fedavg_events``: the paper's synchronous FedAvg (n draws with replacement, wait for the slowest).
* ``fedbuff``: FedBuff [27] = first-n arrivals on non-IID data; staleness weights an option, off.
* ``asysg``: AsySG [22] = DeFedAvg-IID with K = 1 and one learning rate (eta_local = 1 by default).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from ..model.asynchrony import SystemModel, live_timelines, system_field
from ..model.participation import Participation
from ..oracles import SmoothFederatedOracles
from ..params import ParamError, choice, integer, option, real
from ..seeding import Streams
from .base import register
from .fedavg import DeFedAvgIID, DeFedAvgNIID, FedAvg, FedAvgState


@dataclass(frozen=True)
class EventTiming:
    """The system-model fields shared by the event algorithms (defaults: the paper's §4.1.3 model)."""

    policy: ClassVar[str] = "iid"

    # the system model's declarations (ratecheck.model.asynchrony.SystemModel), one place
    step_time: float = system_field("step_time")
    speeds: str = system_field("speeds")
    speed_low: float = system_field("speed_low")
    speed_high: float = system_field("speed_high")
    parity_width: float = system_field("parity_width")
    speed_redraw: bool = system_field("speed_redraw")
    jitter: float = system_field("jitter")
    t_down: float = system_field("t_down")
    t_up: float = system_field("t_up")
    t_server: float = system_field("t_server")
    notify_delay: float | None = system_field("notify_delay")
    rx_consume: bool = system_field("rx_consume")
    carry_over: bool = system_field("carry_over")
    tau_cap: int | None = system_field("tau_cap")
    tau_cap_mode: str = system_field("tau_cap_mode")
    wall_budget: float = system_field("wall_budget")
    niid_variant: str = system_field("niid_variant")

    def system(self) -> SystemModel:
        return SystemModel(**{f.name: getattr(self, f.name) for f in fields(SystemModel)})

    def check_timing(self: Any, problem: SmoothFederatedOracles) -> None:  # self: the FedAvg it is mixed into
        if self.delay.kind != "none":
            raise ParamError(self.name, "delay", str(self.delay), "the event timeline gives the delays: leave it 'none'")
        try:
            self.system()  # the rules between the system model's fields
        except ParamError as exc:
            raise ParamError(self.name, exc.name, exc.value, exc.rule) from None

    def timeline(self: Any, problem: SmoothFederatedOracles, streams: Streams) -> Any:
        n = self.participation.per_round(problem.num_clients)
        return live_timelines(self.policy, self.system(), clients=problem.num_clients, n=n,
                              local_steps=self.local_steps, seed=streams.seed, replicas=streams.replicas)

    def schedule(self: Any, state: FedAvgState, problem: SmoothFederatedOracles, t: int, streams: Streams) -> Any:
        state.timeline.ensure(t)
        return FedAvg.schedule(self, state, problem, t, streams)

    def timeline_summary(self, state: FedAvgState) -> dict[str, Any]:
        return state.timeline.upto(state.t).summary()


@register
@dataclass(frozen=True)
class DeFedAvgNIIDEvents(EventTiming, DeFedAvgNIID):
    """Algorithm 1 on the event timeline: n draws with replacement, buffered uploads (spec §2.2)."""

    name: ClassVar[str] = "defedavg_niid_events"
    source: ClassVar[str] = "003_2fcc6b9d543c5aab.txt Algorithm 1, §2.3 variants (spec defedavg §2.2, §2.7.3)"
    policy: ClassVar[str] = "niid"

    def validate(self, problem: SmoothFederatedOracles) -> None:
        super().validate(problem)
        self.check_timing(problem)


@register
@dataclass(frozen=True)
class DeFedAvgIIDEvents(EventTiming, DeFedAvgIID):
    """Algorithm 2 on the event timeline: the first n updates to arrive make a round (spec §2.3).

    ``participation`` gives n ('without_replacement:n'); which clients those are is the timeline's.
    """

    name: ClassVar[str] = "defedavg_iid_events"
    source: ClassVar[str] = "003_2fcc6b9d543c5aab.txt Algorithm 2 (spec defedavg §2.3, §2.7.3)"
    policy: ClassVar[str] = "iid"

    def validate(self, problem: SmoothFederatedOracles) -> None:
        super().validate(problem)
        self.check_timing(problem)


@register
@dataclass(frozen=True)
class FedAvgEvents(EventTiming, FedAvg):
    """Synchronous FedAvg of the paper (eqs. (2)-(3), sign fixed) on the wall clock: n draws with
    replacement, only they train from w^t, the round waits for the slowest (spec §2.4, pitfall 24)."""

    name: ClassVar[str] = "fedavg_events"
    source: ClassVar[str] = "003_2fcc6b9d543c5aab.txt eqs. (2)-(3), sign fixed (spec defedavg §2.4, §7)"
    policy: ClassVar[str] = "sync"
    allowed_modes: ClassVar[tuple[str, ...]] = ("with_replacement",)

    participation: Participation = option(lambda: Participation("with_replacement", 1),
                                          "client sampling: with_replacement:n (the paper's FedAvg)",
                                          Participation.parse)

    def validate(self, problem: SmoothFederatedOracles) -> None:
        super().validate(problem)
        self.check_timing(problem)


STALENESS = ("none", "inverse_sqrt")


@register
@dataclass(frozen=True)
class FedBuff(DeFedAvgIIDEvents):
    """FedBuff [27]: asynchronous K-step jobs, the server steps after the first n arrivals (spec §7).

    Its mechanism is DeFedAvg-IID's; the difference is the data it runs on (non-IID), where fast
    clients pull the fixed point towards their optimum (spec P2-e). ``staleness`` 'inverse_sqrt'
    weights an update of delay d by 1/sqrt(1 + d) (an extension, off by default).
    """

    name: ClassVar[str] = "fedbuff"
    source: ClassVar[str] = "003_2fcc6b9d543c5aab.txt §1.2 and §4 baseline [27] (spec defedavg §7)"

    staleness: str = choice("none", "staleness weights: 'none' (default) or 'inverse_sqrt' 1/sqrt(1+delay)",
                            STALENESS)

    def aggregate(self, updates: np.ndarray, clients: np.ndarray, delays: np.ndarray | None = None) -> np.ndarray:
        if self.staleness == "none" or delays is None:
            return updates.mean(axis=1)
        weights = 1.0 / np.sqrt(1.0 + delays)
        return np.einsum("rm,rmd->rd", weights, updates) / updates.shape[1]


@register
@dataclass(frozen=True)
class AsySG(DeFedAvgIIDEvents):
    """AsySG (Lian et al. [22]): each client uploads one stochastic gradient at its latest model; the
    server steps w <- w - eta (1/n) sum g after n arrivals. DeFedAvg-IID with K = 1 and eta-bar = 1."""

    name: ClassVar[str] = "asysg"
    source: ClassVar[str] = "003_2fcc6b9d543c5aab.txt §4 baseline [22] (spec defedavg §7)"

    eta_local: float = real(1.0, "fixed at 1: AsySG has one learning rate, eta_global", positive=True)
    local_steps: int = integer(1, "one stochastic gradient per upload (K = 1)", low=1, high=1)

    def validate(self, problem: SmoothFederatedOracles) -> None:
        super().validate(problem)
        if self.eta_local != 1.0:
            raise ParamError(self.name, "eta_local", self.eta_local, "AsySG has one learning rate: must be 1")
