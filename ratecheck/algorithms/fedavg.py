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
from w^{tau}, tau = max(0, t - d) (spec pitfall 13: never apply an old update to the new model); on a
timeline, the models keyed by version that a round to come still reads (ratecheck.model.versions).

Who takes part in round t and from which version each job starts comes from one seam, ``schedule``:
sampled clients and a delay schedule (Mode D), or a recorded event timeline (delay ``trace:<file>``,
and the event-driven algorithms of ratecheck.algorithms.asynchronous, Mode E). Both modes then run
the same numeric code.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..model.asynchrony import TimelineError, Timelines
from ..model.diagnostics import Diagnostic
from ..model.options import KindOption
from ..model.participation import Participation, first_occurrence
from ..model.versions import VersionedModels
from ..oracles import SmoothFederatedOracles
from ..params import choice, integer, option, real
from ..seeding import ReplicaStream, Streams
from .base import Algorithm, register
from .local import local_sgd

DELAY_KINDS = ("none", "constant", "uniform", "cyclic", "per_client", "trace")


@dataclass(frozen=True)
class DelaySchedule(KindOption):
    """Delay d (in rounds) of the model a client's job starts from; 0 <= d <= lam (spec §2.7.2).

    none: d = 0.  constant:d: d for everyone.  uniform:lam: d ~ U{0..lam} i.i.d. per client and round.
    cyclic:lam: d = (j + t) mod (lam+1).  per_client:lam: d = j mod (lam+1).
    trace:<file.npz>: replay the (client, base version) pairs of a recorded Mode E timeline
    (``Timelines.save``); it fixes the participants too. The file's digest is part of the option's
    string, so a changed file is a different configuration (and cache key).
    """

    label: ClassVar[str] = "delay"
    example: ClassVar[str] = "constant:2"
    default_count: ClassVar[int] = 0

    kind: str = "none"
    lam: int = 0
    path: str = ""

    @classmethod
    def parse(cls, value: Any) -> DelaySchedule:
        if isinstance(value, str) and value.startswith("trace:"):
            path, _, digest = value[len("trace:"):].partition("@")
            found = _file_digest(path)
            if digest and digest != found:
                raise ValueError(f"delay trace file {path!r} changed since it was recorded (digest {found}, "
                                 f"configuration says {digest})")
            return cls("trace", _load_timelines(path, found).max_delay, path)
        return super().parse(value)

    def __post_init__(self) -> None:
        if self.kind not in DELAY_KINDS:
            raise ValueError(f"delay kind must be one of {DELAY_KINDS}, got {self.kind!r}")
        if self.kind == "none" and self.lam != 0:
            raise ValueError("delay 'none' takes no lambda (use constant:d for a fixed delay)")
        if isinstance(self.lam, bool) or int(self.lam) != self.lam or self.lam < 0:
            raise ValueError(f"delay lambda must be an integer >= 0, got {self.lam!r}")
        if (self.kind == "trace") != bool(self.path):
            raise ValueError("delay 'trace' needs a file (trace:<file.npz>), and only 'trace' takes one")

    def __str__(self) -> str:
        if self.kind == "trace":
            return f"trace:{self.path}@{_file_digest(self.path)}"
        return self.kind if self.kind == "none" else f"{self.kind}:{self.lam}"

    def timelines(self) -> Timelines:
        return _load_timelines(self.path, _file_digest(self.path))

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


def _file_digest(path: str) -> str:
    if not os.path.isfile(path):
        raise ValueError(f"delay trace file {path!r} does not exist (record one with Timelines.save)")
    stat = os.stat(path)
    return _digest(path, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_size)


@functools.lru_cache(maxsize=32)
def _digest(path: str, mtime: int, ctime: int, inode: int, size: int) -> str:  # the stat fields key the cache
    import hashlib

    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()[:16]


@functools.lru_cache(maxsize=8)
def _load_timelines(path: str, digest: str) -> Timelines:
    try:
        return Timelines.load(path)
    except (OSError, KeyError, ValueError) as exc:
        raise ValueError(f"delay trace file {path!r} is not a recorded timeline: {exc}") from None


@dataclass
class FedAvgState:
    history: np.ndarray | VersionedModels  # ring (R, lam+1, d), w^s at slot s mod (lam+1); on a timeline, by version
    t: int
    max_delay: int = 0  # largest delay actually used (the paper's lambda_used)
    server: Any = None  # the server step's own state (e.g. a momentum buffer); None for plain FedAvg
    timeline: Any = None  # Mode E / replay: the recorded rounds (Timelines, or a source that extends them)

    @property
    def x(self) -> np.ndarray:
        if isinstance(self.history, VersionedModels):
            return self.history.latest
        return self.history[:, self.t % self.history.shape[1]]


@register
@dataclass(frozen=True)
class FedAvg(Algorithm[SmoothFederatedOracles]):
    """Local SGD with a server learning rate, a participation scheme and an optional delay schedule.

    A round is built from three seams a variant can replace (as FedJAX builds FedAvg from a client
    and a server optimizer), while sampling, delays and duplicate clients stay here:
    ``client_update`` (the local job of each active client), ``aggregate`` (the active clients'
    updates -> one direction) and ``server_step`` (direction -> new global model, with an optional
    server state from ``server_init``).
    """

    name: ClassVar[str] = "fedavg"
    diagnostics: ClassVar[tuple[Diagnostic, ...]] = (
        Diagnostic.number("max_delay_used", "largest delay (rounds) a used model had"),
        Diagnostic.number("lambda_used", "max(1, max_delay_used): lambda >= 1 of Assumption 4 (spec §4.7 item 7)"),
        Diagnostic.record("timeline", "the rounds actually run: delay histogram, wall time, participation"),
    )
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

    def validate(self, problem: SmoothFederatedOracles) -> None:
        if self.participation.mode not in self.allowed_modes:
            raise ValueError(
                f"{self.name} needs participation in {self.allowed_modes}, got {self.participation}"
            )
        self.participation.validate(problem.num_clients)
        if self.delay.kind == "trace":
            recorded = self.delay.timelines()
            if recorded.clients.max(initial=0) >= problem.num_clients:
                raise ValueError(f"delay {self.delay}: the timeline names client {recorded.clients.max()}, "
                                 f"the problem has N = {problem.num_clients} clients")

    def init(self, problem: SmoothFederatedOracles, streams: Streams) -> FedAvgState:
        timeline = self.timeline(problem, streams)
        x0 = np.broadcast_to(problem.initial_point(), (len(streams.replicas), problem.dim))
        if timeline is None:
            history = np.repeat(x0[:, None, :], self.delay.lam + 1, axis=1).astype(float)
            return FedAvgState(history=history, t=0, server=self.server_init(history[:, 0]))
        models = VersionedModels(x0.astype(float), timeline)  # a timeline knows which versions its rounds read
        return FedAvgState(history=models, t=0, server=self.server_init(models.latest), timeline=timeline)

    def timeline(self, problem: SmoothFederatedOracles, streams: Streams) -> Any:
        """The recorded rounds this run replays (delay 'trace'), or None for a sampled schedule."""
        if self.delay.kind == "trace":
            return self.delay.timelines().select(streams.replicas)
        return None

    # -- who takes part, from which version ----------------------------------------------------
    def schedule(self, state: FedAvgState, problem: SmoothFederatedOracles, t: int,
                 streams: Streams) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray | None]:
        """Round t's slots: client ids (R, m), delays (R, m), whether a client's duplicate slots share
        one update, and the round's wall time (R,) when a timeline gives it."""
        if state.timeline is not None:
            recorded = state.timeline
            if t >= recorded.clients.shape[1]:
                raise TimelineError(f"the recorded timeline has {recorded.clients.shape[1]} rounds; round {t} "
                                    "was asked (record a longer run)")
            wall = recorded.wall[:, t] - (recorded.wall[:, t - 1] if t > 0 else 0.0)
            return recorded.clients[:, t], t - recorded.base[:, t], recorded.shared, wall
        clients = self.participation.sample(problem.num_clients, streams["sampling"])
        delays = self.delay.sample(clients, t, streams["delay"])
        shared = self.duplicates == "shared" and self.participation.mode == "with_replacement"
        return clients, delays, shared, None

    # -- seams ---------------------------------------------------------------------------------
    def client_update(self, problem: SmoothFederatedOracles, batch: Any, start: np.ndarray,
                      streams: Streams) -> np.ndarray:
        """Delta_i = start - end of K local SGD steps, (R, m, d); it points uphill (spec §2.1)."""
        end = local_sgd(problem, batch, start, self.local_steps, self.eta_local, streams["noise"])
        return start - end

    def aggregate(self, updates: np.ndarray, clients: np.ndarray, delays: np.ndarray | None = None) -> np.ndarray:
        """(R, m, d) -> (R, d): divide by n, a client drawn twice counted twice (spec §2.6(3)).
        ``delays`` (R, m) is there for variants that weight by staleness (FedBuff's option)."""
        return updates.mean(axis=1)

    def server_init(self, x0: np.ndarray) -> Any:
        """The server step's state at round 0 (None: plain FedAvg keeps none)."""
        return None

    def server_step(self, x: np.ndarray, direction: np.ndarray, server: Any, t: int) -> tuple[np.ndarray, Any]:
        """w^{t+1} = w^t - eta * direction (eq. (3) with its sign fixed)."""
        return x - self.eta_global * direction, server

    def round(self, state: FedAvgState, problem: SmoothFederatedOracles, t: int, streams: Streams):
        clients, delays, shared, wall = self.schedule(state, problem, t, streams)
        if isinstance(state.history, np.ndarray):
            state = self._room_for(state, int(delays.max(initial=0)))
        if shared:  # one job per distinct client: its delay and update are those of its first draw
            first = first_occurrence(clients)
            delays = np.take_along_axis(delays, first, axis=1)
        base = np.maximum(t - delays, 0)
        models = state.history
        if isinstance(models, VersionedModels):
            start = models.read(base)  # (R, m, d)
        else:
            start = models[np.arange(clients.shape[0])[:, None], base % models.shape[1]]
        batch = problem.gather(clients)
        update = self.client_update(problem, batch, start, streams)
        if shared:
            update = np.take_along_axis(update, first[:, :, None], axis=1)
            distinct = (first == np.arange(clients.shape[1])).sum(axis=1).astype(float)
        else:
            distinct = np.full(clients.shape[0], float(clients.shape[1]))
        x_new, server = self.server_step(state.x, self.aggregate(update, clients, delays), state.server, t)
        history: np.ndarray | VersionedModels
        if isinstance(models, VersionedModels):
            history = models.advance(t, x_new)  # in place: only the models a round to come reads stay
        elif models.shape[1] > 1:
            ring = models.copy()
            ring[:, (t + 1) % models.shape[1]] = x_new
            history = ring
        else:
            history = x_new[:, None, :]
        costs: dict[str, float | np.ndarray] = {
            "oracle_calls": distinct * self.local_steps,
            "vectors_up": distinct,
            "vectors_down": float(problem.num_clients) if self.broadcast_to_all else distinct,
        }
        if wall is not None:
            costs["wall_time"] = wall  # virtual seconds of this round (Mode E)
        used = int(delays.max(initial=0))
        return FedAvgState(history, t + 1, max(state.max_delay, used), server, state.timeline), costs

    @staticmethod
    def _room_for(state: FedAvgState, delay: int) -> FedAvgState:
        """Grow the ring buffer when a round brings a delay longer than it holds; w^s keeps slot s mod (lam+1) in
        the new size."""
        assert isinstance(state.history, np.ndarray)  # a timeline's models are keyed by version, not a ring
        slots = state.history.shape[1]
        if delay < slots:
            return state
        new = max(delay + 1, 2 * slots)
        history = np.empty((state.history.shape[0], new, state.history.shape[2]))
        for s in range(max(0, state.t - slots + 1), state.t + 1):
            history[:, s % new] = state.history[:, s % slots]
        return FedAvgState(history, state.t, state.max_delay, state.server, state.timeline)

    def output(self, state: FedAvgState) -> np.ndarray:
        return state.x

    def info(self, state: FedAvgState) -> dict[str, Any]:
        # lambda >= 1 in Assumption 4; plug max(1, observed) into bounds (spec §4.7 item 7).
        out: dict[str, Any] = {"max_delay_used": state.max_delay, "lambda_used": max(1, state.max_delay)}
        if state.timeline is not None:
            out["timeline"] = self.timeline_summary(state)
        return out

    def timeline_summary(self, state: FedAvgState) -> dict[str, Any]:
        """Diagnostics of the rounds actually run (delay histogram, wall time, ...)."""
        recorded = state.timeline
        rounds = state.t
        part = Timelines(recorded.clients[:, :rounds], recorded.base[:, :rounds], recorded.wall[:, :rounds],
                         recorded.shared, recorded.replicas)
        return part.summary()


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
