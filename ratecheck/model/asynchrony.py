"""Event-driven wall-clock simulator of asynchronous federated training (spec defedavg §2.7.3, "Mode E").

A virtual clock and a deterministic event queue keyed by (time, priority, seq) play the system model
of DeFedAvg's §4.1.3: per-client speeds, K-step local jobs, download/upload times, receive and send
buffers. The result is a ``Timeline``: for every server round, which client slots were aggregated
and from which global version each update started, and when the round closed. The timeline depends
only on the seed, the replica and the timing parameters, never on the iterates, so it is computed
first and the numerics then run vectorized over replicas through the same code as the
delay-schedule mode (ratecheck.algorithms.fedavg): a Mode E run and the replay of its timeline
(delay schedule ``trace:<file>``) give the same numbers.

Policies (who trains, which updates a round takes):

* ``niid``: DeFedAvg-nIID (Algorithm 1): n uniform draws with replacement per round; each selected
  client uploads its send buffer (or its running job's result); variant A trains continuously,
  variant B only after its buffered update was uploaded.
* ``iid``: DeFedAvg-IID (Algorithm 2), also FedBuff and AsySG: the first n arrivals, late arrivals
  carried over to the next round.
* ``sync``: synchronous FedAvg (eqs. (2)-(3)): only the n drawn clients train, the round waits for
  the slowest.

Event priorities at equal times: 0 update arrival < 1 broadcast/notification < 2 job done; the
sequence number breaks the remaining ties (spec pitfall 16).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from ..params import SIZE_PARAMS, ParamError, check_fields, choice, flag, integer, real
from ..seeding import replica_generator, stable_hash

POLICIES = ("niid", "iid", "sync")
SPEEDS = ("uniform", "uniform_speed", "by_parity")
TAU_CAP_MODES = ("assert", "drop")
NIID_VARIANTS = ("A", "B")  # Algorithm 1's clients: A train continuously, B only after an upload (§2.3)

ARRIVAL, BROADCAST, NOTIFY, JOB_DONE = 0, 1, 1, 2  # event priorities (NOTIFY shares BROADCAST's)

STALLED_DROPS = 1000  # tau_cap drops a client, no round closed: stalled (other discards end with the round)


class TimelineError(ValueError):
    """A timeline that cannot be built: a wall-time budget reached, a deadlock, a delay above tau_cap."""


@dataclass(frozen=True)
class SystemModel:
    """Timing of the clients and the network (defaults: the paper's FashionMNIST model, §4.1.3).

    A job of client i lasts K * s_i * step_time (times a lognormal jitter if ``jitter`` > 0), with
    s_i the client's slowdown: 'uniform' s_i ~ U[speed_low, speed_high] (default [1, 5]);
    'uniform_speed' speed u_i ~ U[speed_low, speed_high] and s_i = speed_high / u_i (the other reading
    of the paper); 'by_parity' even clients s_i ~ U[speed_low, speed_low + parity_width], odd clients
    U[speed_high - parity_width, speed_high] (fast clients holding one kind of data, spec P2-e).
    """

    # Declared once here (ratecheck.params); the event algorithms take these fields as their own (system_field).
    step_time: float = real(1.7e-3, "seconds per local step on the fastest client (N_MAC / C_MAC)", positive=True)
    speeds: str = choice("uniform", "client slowdowns: 'uniform' s ~ U[speed_low, speed_high] (paper); "
                         "'uniform_speed' speed ~ U[low, high], time ~ high/speed; 'by_parity' even clients "
                         "fast, odd slow (spec P2-e)", SPEEDS)
    speed_low: float = real(1.0, "lower end of the slowdown range", positive=True)
    speed_high: float = real(5.0, "upper end of the slowdown range", positive=True)
    parity_width: float = real(0.5, "'by_parity': width of each group's slowdown range", low=0.0)
    speed_redraw: bool = flag(False, "redraw each client's slowdown for every job")
    jitter: float = real(0.0, "sigma of a lognormal(0, sigma) factor on each job's duration", low=0.0)
    t_down: float = real(0.044, "model download time (s): 2.2 MB at 400 Mbit/s", low=0.0)
    t_up: float = real(0.044, "update upload time (s)", low=0.0)
    t_server: float = real(0.0, "server aggregation time (s)", low=0.0)
    notify_delay: float | None = real(None, "nIID: delay of the selection notice (s); None: it rides on the "
                                      "broadcast (t_down, spec §2.6(5))", low=0.0, nullable=True)
    rx_consume: bool = flag(True, "taking a model empties the receive buffer (spec §2.6(1))")
    niid_variant: str = choice("A", "DeFedAvg-nIID clients: 'A' train continuously (paper default), 'B' train again "
                               "only after an upload", NIID_VARIANTS)
    carry_over: bool = flag(True, "first-n rounds: an update arriving at a round's close or while the server "
                            "aggregates (t_server) waits for the next round (spec §2.6(7)); False: it is "
                            "discarded (not in the paper)")
    tau_cap: int | None = integer(None, "optional cap on the delay (Assumption 4), None: no cap", low=0, nullable=True)
    tau_cap_mode: str = choice("assert", "above tau_cap: 'assert' stops with an error, 'drop' discards the "
                               "update (not in the paper)", TAU_CAP_MODES)
    wall_budget: float = real(1e7, "virtual seconds after which an unfinished run stops with an error",
                              positive=True)

    def __post_init__(self) -> None:
        check_fields(self, "system model")  # each field by its declaration; below, the rules between fields
        if not math.isfinite(self.step_time * self.speed_high):
            raise ParamError("system model", "step_time", self.step_time,
                             f"step_time x speed_high = {self.step_time * self.speed_high} must be finite")
        if self.speed_low > self.speed_high:
            raise ParamError("system model", "speed_low", self.speed_low, f"must be <= speed_high = {self.speed_high}")
        if self.speeds == "by_parity" and self.parity_width > self.speed_high - self.speed_low:
            raise ParamError("system model", "parity_width", self.parity_width,
                             f"must be <= speed_high - speed_low = {self.speed_high - self.speed_low}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def slowdowns(self, rng: np.random.Generator, clients: int) -> np.ndarray:
        """s_i per client (time multiplier >= speed_low / ... ), from the timing stream."""
        u = rng.random(clients)
        if self.speeds == "uniform":
            return self.speed_low + (self.speed_high - self.speed_low) * u
        if self.speeds == "uniform_speed":
            return self.speed_high / (self.speed_low + (self.speed_high - self.speed_low) * u)
        even = np.arange(clients) % 2 == 0
        low = np.where(even, self.speed_low, self.speed_high - self.parity_width)
        return low + self.parity_width * u


def system_field(name: str) -> Any:
    """SystemModel's declared field ``name`` (default and declaration) for another dataclass: the event algorithms'
    timing parameters are the system model's."""
    declared = next(f for f in fields(SystemModel) if f.name == name)
    return field(default=declared.default, metadata=declared.metadata)


@dataclass
class Timeline:
    """What the event simulation of one replica produced (arrays over rounds t = 0..T-1).

    clients[t, m], base[t, m]: the m-th aggregated slot of round t and the global version its update
    started from (delay = t - base). ``shared``: duplicate slots of a client in one round are one
    update counted twice (nIID, sync FedAvg), not distinct jobs (IID). wall[t]: the virtual time at
    which round t closed (w^{t+1} exists).
    """

    clients: np.ndarray  # (T, n) int
    base: np.ndarray  # (T, n) int
    wall: np.ndarray  # (T,)
    shared: bool
    participation: np.ndarray  # (N,) slots aggregated per client (with multiplicity)
    busy_fraction: np.ndarray  # (N,) fraction of the run's wall time spent computing
    discarded: np.ndarray  # (N,) completed updates never aggregated (overwritten or dropped)
    lambda_virtual: int  # nIID: max over clients and rounds of t - virtual base (spec §2.6(10)); else lambda
    events: int = 0

    @property
    def rounds(self) -> int:
        return int(self.clients.shape[0])

    @property
    def delays(self) -> np.ndarray:
        return np.arange(self.rounds)[:, None] - self.base

    @property
    def max_delay(self) -> int:
        return int(self.delays.max(initial=0))

    @property
    def lambda_used(self) -> int:
        """max(1, largest delay of an aggregated update): Assumption 4 needs lambda >= 1 (§4.7 item 7)."""
        return max(1, self.max_delay)

    def histogram(self) -> np.ndarray:
        """Counts of aggregated updates by delay 0..max_delay (with multiplicity)."""
        return np.bincount(self.delays.ravel(), minlength=self.max_delay + 1)

    def round_times(self) -> np.ndarray:
        return np.diff(self.wall, prepend=0.0)


@dataclass
class _Client:
    """Mutable client state of one simulation, a Python list per field (scalar access is the hot path).

    The receive buffer is implicit: every broadcast reaches every client at once, so client i holds a
    model when a broadcast arrived after the version it last took (or, without consumption, ever).
    """

    taken: list[int]  # version the client's last job started from, -1 before the first
    busy: list[bool]
    job_base: list[int]
    send: list[int]  # nIID send buffer: base version of the buffered update, -1 if empty
    requested: list[bool]  # nIID: selected and owing an upload
    busy_time: list[float]  # total length of the jobs started so far (the running one whole)
    job_end: list[float]  # when the running (or last) job ends
    discarded: list[int]


def timeline_key(policy: str, system: SystemModel, clients: int, n: int, local_steps: int) -> str:
    """What a timeline depends on besides the seed and the replica: never the step sizes or the problem."""
    return stable_hash({"policy": policy, "system": system.to_dict(), "N": clients, "n": n, "K": local_steps})


def simulate(
    policy: str,
    system: SystemModel,
    *,
    clients: int,
    n: int,
    local_steps: int,
    rounds: int,
    seed: int = 0,
    replica: int = 0,
) -> Timeline:
    """Run the event simulation of one replica until `rounds` rounds have closed."""
    SIZE_PARAMS["rounds"].check("rounds", rounds, "timeline")
    return Simulation(policy, system, clients=clients, n=n, local_steps=local_steps, seed=seed,
                      replica=replica).advance(rounds).timeline(rounds)


class Simulation:
    """The event simulation of one replica, advanced on demand: ``advance(T)`` processes events until T
    rounds have closed. Advancing in pieces gives the same timeline as advancing at once (the events
    are processed in the same order), so a run that does not know its length can extend it."""

    def __init__(self, policy: str, system: SystemModel, *, clients: int, n: int, local_steps: int,
                 seed: int = 0, replica: int = 0):
        if policy not in POLICIES:
            raise TimelineError(f"policy must be one of {POLICIES}, got {policy!r}")
        for name, value in (("clients", clients), ("n", n), ("local_steps", local_steps)):
            SIZE_PARAMS["clients" if name == "n" else name].check(name, value, "timeline")  # n: clients a round waits for
        if system.tau_cap_mode == "drop" and system.tau_cap is not None and policy != "iid":
            raise TimelineError("tau_cap_mode 'drop' (not in the paper) applies to first-n-arrival rounds "
                                "(policy 'iid') only")
        key = timeline_key(policy, system, clients, n, local_steps)
        self.timing = replica_generator(seed, key, replica, "timing")
        self.server = replica_generator(seed, key, replica, "server")
        self.policy, self.sys, self.N, self.n, self.K = policy, system, int(clients), int(n), int(local_steps)
        self.slowdown = system.slowdowns(self.timing, self.N)
        self.slowdown_list = self.slowdown.tolist()
        N = self.N
        self.c = _Client(taken=[-1] * N, busy=[False] * N, job_base=[0] * N, send=[-1] * N,
                         requested=[False] * N, busy_time=[0.0] * N, job_end=[0.0] * N, discarded=[0] * N)
        self.idle: set[int] = set(range(N))
        self.latest = -1  # newest version that has reached the clients
        self.heap: list = []
        self.seq = 0
        self.t = 0  # version of the current global model = rounds closed so far
        self.out_clients: list[list[int]] = []
        self.out_base: list[list[int]] = []
        self.out_wall: list[float] = []
        self.out_discarded: list[list[int]] = []  # per client, at each round's close
        self.out_busy: list[np.ndarray] = []  # per client, seconds spent computing by each round's close
        self.out_counts: list[tuple[int, int]] = []  # (lambda_virtual, events) at each round's close
        self.fifo: list[tuple[int, int]] = []
        self.selection: list[int] | None = None  # nIID/sync: the multiset of round t
        self.pending: dict[int, int] = {}  # nIID/sync: distinct selected client -> base, once delivered
        self.waiting: set[int] = set()
        self.lambda_virtual = 0
        self.events = 0
        self.dropped = 0  # updates tau_cap 'drop' discarded: the only discards that can keep every round open
        self.now = 0.0
        self.handlers = {"arrival": self.on_arrival, "broadcast": self.on_broadcast, "notify": self.on_notify,
                         "done": self.on_done}
        self.open_round(0.0)

    # -- queue --------------------------------------------------------------------------------
    def push(self, time: float, priority: int, kind: str, a: int = 0, b: int = 0) -> None:
        heapq.heappush(self.heap, (time, priority, self.seq, kind, a, b))
        self.seq += 1

    def advance(self, rounds: int) -> Simulation:
        """Process events until `rounds` rounds have closed (or raise at the wall-time budget, or when STALLED_DROPS
        updates a client are dropped above tau_cap with no round closed, which the budget takes hours to notice)."""
        heap, budget, handlers = self.heap, self.sys.wall_budget, self.handlers
        closed, mark, stall = self.t, self.dropped, STALLED_DROPS * (self.N + self.n)
        while self.t < rounds:
            if self.t != closed:
                closed, mark = self.t, self.dropped
            elif self.dropped - mark > stall:
                raise TimelineError(f"stalled: {stall} updates dropped above tau_cap and no round closed, after {self.t} "
                                    f"of {rounds} rounds ({self.policy}, n = {self.n}, {self.N} clients; discarded "
                                    f"updates by client: {list(self.c.discarded)})")
            if not heap:
                raise TimelineError(
                    f"deadlock: no pending event after {self.t} of {rounds} rounds ({self.policy}, n = {self.n})")
            time, _, _, kind, a, b = heapq.heappop(heap)
            if time > budget:
                raise TimelineError(
                    f"wall-time budget of {budget:g} virtual seconds reached after {self.t} of {rounds} rounds "
                    f"({self.policy}): the system model never completes a round in time (speeds, communication "
                    f"times), or wall_budget is too small")
            self.now = time
            self.events += 1
            handlers[kind](a, b)
        return self

    def timeline(self, rounds: int | None = None) -> Timeline:
        """The first `rounds` closed rounds (all closed rounds by default) and the diagnostics so far."""
        rounds = self.t if rounds is None else rounds
        if rounds > self.t:
            raise TimelineError(f"only {self.t} rounds simulated, {rounds} asked; call advance() first")
        clients = np.array(self.out_clients[:rounds], dtype=np.int64).reshape(rounds, self.n)
        base = np.array(self.out_base[:rounds], dtype=np.int64).reshape(rounds, self.n)
        wall = np.array(self.out_wall[:rounds])
        end = wall[-1] if rounds else 0.0
        # all by round `rounds`' close: a live timeline simulates ahead, and its later events are not these rounds'
        busy_time = self.out_busy[rounds - 1] if rounds else np.zeros(self.N)
        busy = np.minimum(busy_time / end, 1.0) if end > 0 else np.zeros(self.N)
        counts = np.bincount(clients.ravel(), minlength=self.N)
        used = int((np.arange(rounds)[:, None] - base).max(initial=0))
        virtual, events = self.out_counts[rounds - 1] if rounds else (0, 0)
        lam_virtual = max(virtual, used)  # the aggregated updates are among the N clients
        discarded = np.array(self.out_discarded[rounds - 1] if rounds else [0] * self.N)
        return Timeline(clients, base, wall, self.policy != "iid", counts, busy, discarded, max(1, lam_virtual), events)

    # -- rounds -------------------------------------------------------------------------------
    def open_round(self, now: float) -> None:
        """Broadcast version t (and, nIID/sync, the selection of round t) at `now` + t_server."""
        send = now + self.sys.t_server
        if self.policy in ("niid", "sync"):
            self.selection = self.server.integers(0, self.N, self.n).tolist()
            self.pending = {}
            self.waiting = set(self.selection)
            notify = self.sys.notify_delay
            if self.policy == "niid" and notify is not None and notify != self.sys.t_down:
                self.push(send + notify, NOTIFY, "notify", self.t)
        self.push(send + self.sys.t_down, BROADCAST, "broadcast", self.t)

    def close_round(self, slots: list[tuple[int, int]]) -> None:
        t = self.t
        self.out_clients.append([i for i, _ in slots])
        self.out_base.append([b for _, b in slots])
        self.out_wall.append(self.now)
        self.out_discarded.append(list(self.c.discarded))
        c, now = self.c, self.now  # a running job counts up to now, not to its end
        # an array, not a list: N numbers a round is most of a long timeline's memory (8 bytes each, not 32)
        self.out_busy.append(np.array([b - (e - now if busy else 0.0)
                                       for b, e, busy in zip(c.busy_time, c.job_end, c.busy)]))
        self.out_counts.append((self.lambda_virtual, self.events))
        if self.sys.tau_cap is not None and self.sys.tau_cap_mode == "assert":
            worst = max(t - b for _, b in slots)
            if worst > self.sys.tau_cap:
                raise TimelineError(f"tau_cap = {self.sys.tau_cap} (mode 'assert'): round {t} aggregates an "
                                    f"update of delay {worst}")
        self.t += 1
        self.open_round(self.now)

    def pending_versions(self) -> tuple[set[int], int]:
        """What a round still to come can read: the distinct base versions of every running job and upload under way
        (the queue's job-done and arrival events), of every update buffered (nIID send buffers), queued (first-n
        arrivals) or delivered to the open round, and ``floor``: a job not yet started starts from the newest model
        the clients hold or a later one (sync: the version being broadcast), so from a version >= floor. No round
        to come reads a version outside ``versions | [floor, oo)``; a policy that starts jobs elsewhere (a plugin)
        must list those versions here. Cost: the queue's length, never the span of versions."""
        c = self.c
        floor = self.t if self.policy == "sync" else max(self.latest, 0)
        versions = {event[5] for event in self.heap if event[3] in ("done", "arrival")}
        versions.update(b for b in c.send if b >= 0)
        versions.update(b for _, b in self.fifo)
        versions.update(self.pending.values())
        return {v for v in versions if v < floor}, floor

    def virtual_lambda(self) -> None:
        """nIID diagnostic at a round close: t - base of every client's buffered or running update."""
        c = self.c
        oldest = min(b if b >= 0 else j for b, j in zip(c.send, c.job_base))
        self.lambda_virtual = max(self.lambda_virtual, self.t - oldest)

    # -- clients ------------------------------------------------------------------------------
    def may_start(self, i: int) -> bool:
        if self.policy == "niid" and self.sys.niid_variant == "B":
            return self.c.send[i] < 0
        return True

    def has_model(self, i: int) -> bool:
        if self.sys.rx_consume:
            return self.latest > self.c.taken[i]
        return self.latest >= 0

    def start_job(self, i: int, version: int) -> None:
        c = self.c
        c.taken[i] = version
        c.busy[i] = True
        self.idle.discard(i)
        c.job_base[i] = version
        s = float(self.sys.slowdowns(self.timing, 1)[0]) if self.sys.speed_redraw else self.slowdown_list[i]
        duration = self.K * s * self.sys.step_time
        if self.sys.jitter > 0:
            duration *= math.exp(self.sys.jitter * self.timing.standard_normal())
        c.busy_time[i] += duration
        c.job_end[i] = self.now + duration
        self.push(self.now + duration, JOB_DONE, "done", i, version)

    def upload(self, i: int, base: int) -> None:
        self.push(self.now + self.sys.t_up, ARRIVAL, "arrival", i, base)

    def notify_selected(self) -> None:
        """nIID: every distinct selected client uploads its buffered update, or owes one."""
        c = self.c
        for i in sorted(self.waiting):
            if c.send[i] >= 0:
                self.upload(i, c.send[i])
                c.send[i] = -1
            else:
                c.requested[i] = True

    def on_notify(self, version: int, _: int) -> None:
        if version != self.t:
            return
        self.notify_selected()
        for i in sorted(self.waiting & self.idle):
            if self.has_model(i) and self.may_start(i):
                self.start_job(i, self.latest)

    def on_broadcast(self, version: int, _: int) -> None:
        if self.policy == "sync":  # only the drawn clients receive w^t and train
            for i in sorted(self.waiting):
                self.start_job(i, version)
            return
        if self.policy == "niid" and (self.sys.notify_delay is None or self.sys.notify_delay == self.sys.t_down):
            self.notify_selected()  # same instant: upload first, then train from w^t (spec §2.6(6))
        self.latest = max(self.latest, version)
        for i in sorted(self.idle):
            if self.may_start(i) and self.has_model(i):
                self.start_job(i, self.latest)

    def on_done(self, i: int, base: int) -> None:
        c = self.c
        c.busy[i] = False
        self.idle.add(i)
        if self.policy == "niid":
            if c.send[i] >= 0:
                c.discarded[i] += 1  # overwritten before it was requested
            c.send[i] = base
            if c.requested[i]:
                self.upload(i, base)
                c.send[i] = -1
                c.requested[i] = False
        else:
            self.upload(i, base)
        if self.policy != "sync" and self.may_start(i) and self.has_model(i):
            self.start_job(i, self.latest)

    def on_arrival(self, i: int, base: int) -> None:
        if self.policy == "iid":
            cap = self.sys.tau_cap
            if cap is not None and self.sys.tau_cap_mode == "drop" and self.t - base > cap:
                self.c.discarded[i] += 1  # not in the paper: an option
                self.dropped += 1
                return
            if not self.sys.carry_over and self.out_wall and (
                    self.now == self.out_wall[-1] or self.now - self.out_wall[-1] < self.sys.t_server):
                self.c.discarded[i] += 1  # late for the round just closed, and the server takes none while it aggregates
                return
            self.fifo.append((i, base))
            if len(self.fifo) == self.n:  # arrivals come one at a time: the n-th closes the round
                taken, self.fifo = self.fifo, []
                self.close_round(taken)
            return
        self.pending[i] = base
        self.waiting.discard(i)
        if not self.waiting:
            if self.policy == "niid":
                self.virtual_lambda()
            assert self.selection is not None  # set with the broadcast that opened this round
            slots = [(j, self.pending[j]) for j in self.selection]
            self.close_round(slots)


@dataclass
class Timelines:
    """The timelines of R replicas stacked for the vectorized numerics: (R, T, n) and (R, T)."""

    clients: np.ndarray
    base: np.ndarray
    wall: np.ndarray
    shared: bool
    replicas: tuple[int, ...]
    each: list[Timeline] = field(default_factory=list, repr=False)

    @classmethod
    def stack(cls, timelines: list[Timeline], replicas: tuple[int, ...]) -> Timelines:
        return cls(np.stack([tl.clients for tl in timelines]), np.stack([tl.base for tl in timelines]),
                   np.stack([tl.wall for tl in timelines]), timelines[0].shared, tuple(replicas), timelines)

    @property
    def max_delay(self) -> int:
        """The largest delay of any recorded round."""
        return self.recorded_delay()

    def recorded_delay(self) -> int:
        """The largest delay of any recorded round (computed once per size of the arrays)."""
        rounds = self.clients.shape[1]
        cached = self.__dict__.get("_max_delay")
        if cached is None or cached[0] != (rounds, id(self.base)):
            cached = ((rounds, id(self.base)), int((np.arange(rounds)[None, :, None] - self.base).max(initial=0)))
            self.__dict__["_max_delay"] = cached
        return cached[1]

    def pending(self) -> tuple[frozenset[int], float]:
        """What the rounds after the recorded ones can read (``Simulation.pending_versions``): nothing, a record
        ends there (a replay asked for more rounds stops with an error)."""
        return frozenset(), math.inf

    def save(self, path: str) -> None:
        """Write the (client, base version) pairs and round times for replay by the 'trace' delay schedule."""
        np.savez_compressed(path, clients=self.clients, base=self.base, wall=self.wall,
                            shared=np.array(self.shared), replicas=np.array(self.replicas))

    @classmethod
    def load(cls, path: str) -> Timelines:
        with np.load(path) as data:
            return cls(data["clients"], data["base"], data["wall"], bool(data["shared"]),
                       tuple(int(r) for r in data["replicas"]))

    def select(self, replicas: tuple[int, ...]) -> Timelines:
        """The rows of the given replica ids (a replay must use each replica's own timeline)."""
        index = {r: k for k, r in enumerate(self.replicas)}
        missing = [r for r in replicas if r not in index]
        if missing:
            raise TimelineError(f"the recorded timeline has no replica(s) {missing}; it has {list(self.replicas)}")
        rows = [index[r] for r in replicas]
        return Timelines(self.clients[rows], self.base[rows], self.wall[rows], self.shared, tuple(replicas))

    def summary(self, grid_points: int = 257) -> dict[str, Any]:
        """JSON-able diagnostics: lambda_used/virtual, delay histogram, mean round time, participation,
        busy fraction, discarded updates, and per-replica wall time on a grid of rounds."""
        rounds = self.clients.shape[1]
        grid = np.unique(np.linspace(0, rounds, grid_points).astype(int))
        cumulative = np.concatenate([np.zeros((self.wall.shape[0], 1)), self.wall], axis=1)
        delays = (np.arange(rounds)[None, :, None] - self.base).ravel()
        out: dict[str, Any] = {
            "lambda_used": max(1, int(delays.max(initial=0))),
            "max_delay": int(delays.max(initial=0)),
            "delay_histogram": np.bincount(delays).tolist(),
            "mean_round_time": float(self.wall[:, -1].mean() / rounds),
            "wall_time_total": self.wall[:, -1].tolist(),
            "wall_rounds": grid.tolist(),
            "wall_time": cumulative[:, grid].tolist(),
        }
        if self.each:
            out.update(
                lambda_virtual=max(tl.lambda_virtual for tl in self.each),
                participation=np.mean([tl.participation for tl in self.each], axis=0).round(3).tolist(),
                busy_fraction=float(np.mean([tl.busy_fraction.mean() for tl in self.each])),
                discarded=float(np.mean([tl.discarded.sum() for tl in self.each])),
                events=int(sum(tl.events for tl in self.each)),
            )
        return out


def simulate_replicas(policy: str, system: SystemModel, *, clients: int, n: int, local_steps: int, rounds: int,
                      seed: int, replicas: tuple[int, ...]) -> Timelines:
    """One timeline per replica id (each from its own streams), stacked."""
    each = [simulate(policy, system, clients=clients, n=n, local_steps=local_steps, rounds=rounds, seed=seed,
                     replica=r) for r in replicas]
    return Timelines.stack(each, tuple(replicas))


class LiveTimelines(Timelines):
    """Timelines of R replicas that grow on demand (a run does not know its length in advance):
    ``ensure(t)`` advances every replica's simulation until round t exists. The rounds already
    simulated never change, so the numbers do not depend on how far ahead it simulated.

    ``pending()`` says what the rounds still to simulate can read: the versions of the updates in flight at the end
    of the simulated rounds and every version from the newest model the clients hold on
    (``Simulation.pending_versions``, over the replicas), so that the numerics keep a model only while a round to
    come can read it (ratecheck.model.versions), however far a delay jumps past those seen (a straggler's first
    update, started from w^0)."""

    def __init__(self, sims: list[Simulation], replicas: tuple[int, ...], chunk: int = 64):
        self.sims, self.chunk = sims, chunk
        self._refresh(0)
        self.replicas = tuple(replicas)

    def _refresh(self, rounds: int) -> None:
        self.each = [sim.timeline(rounds) for sim in self.sims]
        stacked = Timelines.stack(self.each, tuple(range(len(self.sims))))
        self.clients, self.base, self.wall, self.shared = stacked.clients, stacked.base, stacked.wall, stacked.shared
        pending = [sim.pending_versions() for sim in self.sims]  # the sims stand at round `rounds`' close
        floor = min(f for _, f in pending)
        self.in_flight = (frozenset(v for versions, _ in pending for v in versions if v < floor), floor)

    def pending(self) -> tuple[frozenset[int], float]:
        return self.in_flight

    def ensure(self, t: int) -> None:
        """Make rounds 0..t available. A missing round is simulated with a stretch after it (at least `chunk`
        rounds, else four times the largest delay of a simulated round, but no more than a quarter of the rounds
        before it), so a run re-stacks its timelines rarely and simulates at most a quarter more rounds than it runs
        however its delays grow. Neither the stretch nor which models the numerics keep changes the numbers or the
        diagnostics of the rounds run."""
        have = self.clients.shape[1]
        if t < have:
            return
        target = t + max(self.chunk, min(4 * (self.recorded_delay() + 1), t // 4))
        for sim in self.sims:
            sim.advance(target)
        self._refresh(target)

    def upto(self, rounds: int) -> Timelines:
        """The first `rounds` rounds, with each replica's diagnostics at that point."""
        return Timelines.stack([sim.timeline(rounds) for sim in self.sims], self.replicas)


def live_timelines(policy: str, system: SystemModel, *, clients: int, n: int, local_steps: int, seed: int,
                   replicas: tuple[int, ...]) -> LiveTimelines:
    sims = [Simulation(policy, system, clients=clients, n=n, local_steps=local_steps, seed=seed, replica=r)
            for r in replicas]
    return LiveTimelines(sims, tuple(replicas))
