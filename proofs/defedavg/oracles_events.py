"""Trajectory oracles of the event-timeline algorithms (issue #23 item 2): defedavg_niid_events,
defedavg_iid_events, fedavg_events, fedbuff and asysg, each a noise-free Monte-Carlo run replayed from the
timeline's primitive draws.

Written from ../shared/seeds/003_2fcc6b9d543c5aab.txt (Algorithms 1-2, eq. (8), §4.1.3's system model) and
spec defedavg §2.2-§2.4, §2.6, §2.7.3 and §7 (FedBuff [27], AsySG [22]), NOT from ratecheck/model/asynchrony.py
or ratecheck/algorithms/: only the primitive draws are shared with the run, through the same Generators
(ratecheck.seeding: one per replica and purpose): the slowdowns s_i = low + (high - low) u_i ('timing') and the
nIID/sync selections of n uniform draws with replacement ('server'). From them this file plays its own event
queue (per-client broadcast arrivals in client order, priorities update arrival < broadcast < job done, spec
§2.7.3), which decides who updates when and from which version; the iterates then follow eq. (8) written here:
w^{t+1} = w^t - eta (1/n) sum_slots weight * Delta_slot, Delta = (I - A_i^K)(w^base - c_i), A_i = I - eta_l H_i
(sigma = 0: the local job is deterministic). The claim compares every checkpoint's measures, each replica's
wall-clock time of the last round and the delay histogram; a wrong rule of who updates when, from which
version or at what time moves one of them.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.trajectory import UNBOUNDED, trajectory_deviation, trajectory_oracle
from ratecheck.inspection import problem_of
from ratecheck.model.asynchrony import SystemModel, timeline_key
from ratecheck.seeding import replica_generator
from ratecheck.trace import RunConfig, Trace

from .oracles import MEASURES, ORACLE_PROBLEM, FedAvgRecursion
from .theorems import KEY, src

# The paper's system model (§4.1.3; spec §2.7.3's table): a job lasts K s_i step_time; every field a run may set.
PAPER_TIMING: dict[str, Any] = {
    "step_time": 1.7e-3, "speeds": "uniform", "speed_low": 1.0, "speed_high": 5.0, "parity_width": 0.5,
    "speed_redraw": False, "jitter": 0.0, "t_down": 0.044, "t_up": 0.044, "t_server": 0.0, "notify_delay": None,
    "rx_consume": True, "niid_variant": "A", "carry_over": True, "tau_cap": None, "tau_cap_mode": "assert",
    "wall_budget": 1e7}
POLICY = {"defedavg_niid_events": "niid", "defedavg_iid_events": "iid", "fedbuff": "iid", "asysg": "iid",
          "fedavg_events": "sync"}
UPDATE, BROADCAST, DONE = 0, 1, 2  # priorities at equal times (spec §2.7.3)

# Jobs of 0.03-0.12 s against transfers of 0.02 s down, 0.03 s up and 5 ms at the server: rounds overlap jobs,
# delays spread over 0..4 (nIID) and 0..3 (IID), clients wait for a newer model (rx_consume) now and then.
TIMING = {"step_time": 0.01, "speed_high": 4.0, "t_down": 0.02, "t_up": 0.03, "t_server": 0.005}
STEPS = {"eta_global": 0.8, "eta_local": 0.15, "local_steps": 3}
EVENT_RUNS: dict[str, dict[str, Any]] = {
    "defedavg_niid_events": {**STEPS, **TIMING, "participation": "with_replacement:3"},
    "defedavg_niid_events_b": {**STEPS, **TIMING, "participation": "with_replacement:3", "niid_variant": "B",
                               "notify_delay": 0.004, "speeds": "uniform_speed"},
    "defedavg_iid_events": {**STEPS, **TIMING, "participation": "without_replacement:3"},
    "fedavg_events": {**STEPS, **TIMING, "participation": "with_replacement:3"},
    "fedbuff": {**STEPS, **TIMING, "participation": "without_replacement:2", "speeds": "by_parity",
                "staleness": "inverse_sqrt", "local_steps": 4},
    # ties: two speed classes, transfers without delay: jobs end, arrive and close rounds at equal times
    "asysg": {**TIMING, "eta_global": 0.3, "participation": "without_replacement:2", "rx_consume": False,
              "local_steps": 1, "eta_local": 1.0, "speeds": "by_parity", "parity_width": 0.0, "t_down": 0.0,
              "t_up": 0.0, "t_server": 0.0},
    # the named options off the paper's defaults: per-job slowdowns and jitter, late and stale updates dropped
    "defedavg_iid_events_options": {**STEPS, **TIMING, "participation": "without_replacement:3", "jitter": 0.3,
                                    "speed_redraw": True, "carry_over": False, "tau_cap": 2, "tau_cap_mode": "drop"},
    # a straggler: odd clients' jobs take 2.4 s against 0.04-0.08 s for even ones, so their first updates (from
    # w^0) arrive near round 80-100 while every earlier delay is <= 5: a delay jump far past the rounds simulated
    # ahead, and w^0 must still be held (the live timeline's window counts the updates in flight)
    "defedavg_iid_events_straggler": {**STEPS, **TIMING, "participation": "without_replacement:2",
                                      "speeds": "by_parity", "speed_high": 80.0, "parity_width": 0.5},
}
EVENT_T = 40
EVENT_ROUNDS = {"defedavg_iid_events_straggler": 160}  # past the stragglers' first updates (else EVENT_T)
# the replay is deterministic given the draws; float64 round-off over 40-160 rounds (measured below 1e-13)
EVENT_RTOL = 1e-9


@dataclass
class _Client:
    rx: int = -1  # newest version received; -1: none yet
    taken: int = -1  # version of the last job started (rx_consume: a job needs rx > taken)
    busy: bool = False
    send: int | None = None  # nIID send buffer: base version of the buffered update
    requested: bool = False


@dataclass
class _Replay:
    """One replica's event queue, from the paper's system model (spec §2.2-§2.4, §2.6, §2.7.3)."""

    policy: str
    timing: dict[str, Any]
    slowdown: np.ndarray
    server: np.random.Generator
    n: int
    K: int
    timing_rng: np.random.Generator | None = None  # per-job draws (speed redraws, jitter) after the slowdowns
    heap: list = field(default_factory=list)
    seq: int = 0
    rounds: list[tuple[float, list[int], list[int]]] = field(default_factory=list)  # (wall, clients, bases)
    fifo: list[tuple[int, int]] = field(default_factory=list)
    selection: list[int] = field(default_factory=list)
    delivered: dict[int, int] = field(default_factory=dict)
    discarded: int = 0
    jobs: list[tuple[float, float]] = field(default_factory=list)  # every job's (start, end), for the busy time

    def __post_init__(self) -> None:
        self.clients = [_Client() for _ in self.slowdown]
        self.broadcast(0.0)

    def push(self, time: float, priority: int, *event: Any) -> None:
        heapq.heappush(self.heap, (time, priority, self.seq, *event))
        self.seq += 1

    def broadcast(self, now: float) -> None:
        """After a round (or at start): w^t leaves after t_server and reaches every client t_down later; the
        nIID/sync selection of round t is drawn now and, nIID, notified with it (or after notify_delay)."""
        t, leave = len(self.rounds), now + self.timing["t_server"]
        if self.policy != "iid":
            self.selection = [int(j) for j in self.server.integers(0, len(self.clients), self.n)]
            self.delivered = {}
            notify = self.timing["notify_delay"]
            if self.policy == "niid" and notify is not None and notify != self.timing["t_down"]:
                for i in sorted(set(self.selection)):
                    self.push(leave + notify, BROADCAST, "notify", i, t)
        for i in range(len(self.clients)):  # every client's arrival, in index order (spec §2.7.3)
            self.push(leave + self.timing["t_down"], BROADCAST, "model", i, t)

    def may_start(self, c: _Client) -> bool:
        fresh = c.rx > c.taken if self.timing["rx_consume"] else c.rx >= 0
        energy = not (self.policy == "niid" and self.timing["niid_variant"] == "B" and c.send is not None)
        return fresh and energy and not c.busy

    def start(self, i: int, now: float) -> None:
        """A job of K s_i step_time (spec §2.7.3); s_i redrawn for the job with speed_redraw, times a lognormal(0,
        jitter) factor with jitter, both from the timing stream in the order the jobs start."""
        c = self.clients[i]
        c.busy, c.taken = True, c.rx
        s = self.slowdown[i]
        if self.timing["speed_redraw"]:
            assert self.timing_rng is not None
            s = _slowdowns(self.timing, np.asarray(self.timing_rng.random(1)))[0]
        duration = self.K * s * self.timing["step_time"]
        if self.timing["jitter"] > 0:
            assert self.timing_rng is not None
            duration *= np.exp(self.timing["jitter"] * self.timing_rng.standard_normal())
        self.jobs.append((now, now + duration))
        self.push(now + duration, DONE, "done", i, c.rx)

    def notify(self, i: int, now: float) -> None:
        """nIID step S4: upload the send buffer at once, or owe the next completed update (spec §2.6(4))."""
        c = self.clients[i]
        if c.send is not None:
            self.push(now + self.timing["t_up"], UPDATE, "update", i, c.send)
            c.send = None
        else:
            c.requested = True

    def handle(self, now: float, kind: str, i: int, v: int) -> None:
        c = self.clients[i]
        if kind == "notify":
            if v == len(self.rounds):
                self.notify(i, now)
                if self.may_start(c):
                    self.start(i, now)
        elif kind == "model":
            inline = self.timing["notify_delay"] in (None, self.timing["t_down"])
            if self.policy == "niid" and inline and v == len(self.rounds) and i in self.selection:
                self.notify(i, now)  # upload first, then train from w^t (spec §2.6(6))
            if self.policy == "sync":  # only the selected clients receive w^t and train (eqs. (2)-(3))
                if v == len(self.rounds) and i in self.selection:
                    c.rx = v
                    self.start(i, now)
                return
            c.rx = max(c.rx, v)
            if self.may_start(c):
                self.start(i, now)
        elif kind == "done":
            c.busy = False
            if self.policy == "niid":
                self.discarded += c.send is not None  # an unsent update overwritten
                c.send = v
                if c.requested:
                    self.push(now + self.timing["t_up"], UPDATE, "update", i, v)
                    c.send, c.requested = None, False
            else:
                self.push(now + self.timing["t_up"], UPDATE, "update", i, v)
            if self.policy != "sync" and self.may_start(c):
                self.start(i, now)
        elif self.policy == "iid":  # the first n arrivals make a round; later ones go to the next
            if self.late(now) or self.too_stale(v):
                self.discarded += 1
                return
            self.fifo.append((i, v))
            if len(self.fifo) == self.n:
                self.close(now, [j for j, _ in self.fifo], [b for _, b in self.fifo])
                self.fifo = []
        else:  # every distinct selected client delivered: the multiset, each slot its client's one update
            self.delivered[i] = v
            if set(self.delivered) == set(self.selection):
                self.close(now, self.selection, [self.delivered[j] for j in self.selection])

    def late(self, now: float) -> bool:
        """carry_over off (not in the paper): an update arriving at a round's close, or while the server aggregates
        it (t_server), is dropped instead of waiting for the next round (spec §2.6(7))."""
        if self.timing["carry_over"] or not self.rounds:
            return False
        closed = self.rounds[-1][0]
        return now == closed or now - closed < self.timing["t_server"]

    def too_stale(self, base: int) -> bool:
        """tau_cap with mode 'drop' (not in the paper): an update older than tau_cap rounds is dropped."""
        cap = self.timing["tau_cap"]
        return cap is not None and self.timing["tau_cap_mode"] == "drop" and len(self.rounds) - base > cap

    def close(self, now: float, clients: list[int], bases: list[int]) -> None:
        self.rounds.append((now, clients, bases))
        self.broadcast(now)

    def busy_fraction(self, rounds: int) -> float:
        """The clients' mean share of [0, close of round `rounds`] spent in jobs (a running job up to the close)."""
        end = self.rounds[rounds - 1][0]
        return sum(min(stop, end) - start for start, stop in self.jobs if start < end) / (len(self.clients) * end)

    def run(self, rounds: int) -> _Replay:
        while len(self.rounds) < rounds:
            now, _, _, *event = heapq.heappop(self.heap)
            self.handle(now, *event)
        return self


def _timing(params: Mapping[str, Any]) -> dict[str, Any]:
    return {name: params.get(name, default) for name, default in PAPER_TIMING.items()}


def _slowdowns(timing: dict[str, Any], u: np.ndarray) -> np.ndarray:
    """s_i from u_i ~ U[0, 1) (spec §2.7.3): time multiplier uniform on [low, high], or high / speed with the
    speed uniform on [low, high], or even clients in [low, low + w], odd ones in [high - w, high] (P2-e)."""
    low, high, width = timing["speed_low"], timing["speed_high"], timing["parity_width"]
    if timing["speeds"] == "uniform":
        return low + (high - low) * u
    if timing["speeds"] == "uniform_speed":
        return high / (low + (high - low) * u)
    return np.where(np.arange(u.size) % 2 == 0, low, high - width) + width * u


_REPLAYS: dict[str, tuple[list[_Replay], np.ndarray]] = {}


def _replay_rounds(config: RunConfig) -> tuple[list[_Replay], np.ndarray]:
    """Each replica's replayed timeline and the iterates w^0..w^T (R, T + 1, d) of eq. (8), once per run."""
    if config.key() not in _REPLAYS:
        _REPLAYS.clear()  # one run at a time: the oracle and the timeline check of the same trace
        _REPLAYS[config.key()] = _replay(config)
    return _REPLAYS[config.key()]


def _replay(config: RunConfig) -> tuple[list[_Replay], np.ndarray]:
    prob = problem_of(config)
    if float(prob.sigma):
        raise ValueError("the event replay oracle needs sigma = 0 (a deterministic local job)")
    H, C = np.asarray(prob.hessians), np.asarray(prob.centers)
    N, d = C.shape
    H = np.broadcast_to(H, (N, d, d)) if H.ndim == 2 else H
    p = config.params
    policy, timing = POLICY[config.algorithm], _timing(p)
    if timing["tau_cap"] is not None and timing["tau_cap_mode"] != "drop":
        raise ValueError("the event replay plays a delay cap in mode 'drop' only ('assert' stops the run)")
    n, K = int(str(p["participation"]).partition(":")[2]), int(p.get("local_steps", 1))
    eta_g, eta_l = float(p["eta_global"]), float(p.get("eta_local", 1.0))
    key = timeline_key(policy, SystemModel(**timing), N, n, K)
    pull = [np.eye(d) - np.linalg.matrix_power(np.eye(d) - eta_l * H[i], K) for i in range(N)]
    T, replays, iterates = int(config.rounds), [], []
    for r in range(int(config.replicas)):
        rng = replica_generator(int(config.seed), key, r, "timing")
        rep = _Replay(policy, timing, _slowdowns(timing, np.asarray(rng.random(N))),
                      replica_generator(int(config.seed), key, r, "server"), n, K, timing_rng=rng).run(T)
        w = [np.asarray(prob.x0, dtype=float)]
        for t, (_, clients, bases) in enumerate(rep.rounds[:T]):
            step = np.zeros(d)
            for i, b in zip(clients, bases):
                weight = 1.0 / np.sqrt(1.0 + t - b) if p.get("staleness") == "inverse_sqrt" else 1.0
                step += weight * pull[i] @ (w[b] - C[i])  # Delta_i from w^b: (I - A_i^K)(w^b - c_i)
            w.append(w[t] - eta_g / n * step)
        replays.append(rep)
        iterates.append(np.array(w))
    return replays, np.array(iterates)


def event_oracle(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    """Per replica (C, R): ||H_bar (w - x*)||^2, ||w - x*||^2 and F(w) - F* = 1/2 (w - x*)' H_bar (w - x*)."""
    recursion = FedAvgRecursion(config)  # H_bar and x* of the quadratic, recomputed from its H_i and c_i
    Hb = recursion.H_bar
    e = _replay_rounds(config)[1][:, np.asarray(marks, dtype=int)] - recursion.x_star  # (R, C, d)
    g = e @ Hb
    return {"grad_norm_sq": (g * g).sum(-1).T, "dist_sq": (e * e).sum(-1).T, "gap": 0.5 * (e * g).sum(-1).T}


def timeline_deviation(config: RunConfig, trace: Trace) -> np.ndarray:
    """The worst relative gap of the recorded timeline from the replay: each replica's wall time at the last
    round, the delay histogram (counts over replicas) and its largest delay, the clients' mean busy fraction, and,
    nIID or with drops, the mean number of overwritten or dropped updates."""
    replays = _replay_rounds(config)[0]
    T = int(config.rounds)
    recorded = trace.info["timeline"]
    wall = np.array([rep.rounds[T - 1][0] for rep in replays])
    got_wall = np.asarray(recorded["wall_time_total"], dtype=float)
    delays = np.concatenate([[t - b for b in rep.rounds[t][2]] for rep in replays for t in range(T)])
    hist, got_hist = np.bincount(delays), np.asarray(recorded["delay_histogram"], dtype=float)
    if hist.size != got_hist.size or recorded["max_delay"] != hist.size - 1:
        return np.full(len(replays), np.inf)
    busy = np.mean([rep.busy_fraction(T) for rep in replays])
    gaps = [np.abs(got_wall - wall) / wall, np.abs(got_hist - hist) / np.maximum(hist, 1),
            np.array([abs(float(recorded["busy_fraction"]) - busy) / busy])]
    timing = _timing(config.params)
    if POLICY[config.algorithm] == "niid" or not timing["carry_over"] or timing["tau_cap"] is not None:
        want = np.mean([rep.discarded for rep in replays])
        gaps.append(np.array([abs(float(recorded["discarded"]) - want) / max(want, 1.0)]))
    return np.full(len(replays), max(float(np.max(gap)) for gap in gaps))


def combined_deviation(config: RunConfig, trace: Trace) -> np.ndarray:
    """The worst of the measures' and the timeline's relative deviations from the replay, per replica."""
    worst = np.maximum(trajectory_deviation(event_oracle)(config, trace), timeline_deviation(config, trace))
    return np.where(np.isfinite(worst), worst, UNBOUNDED)


def event_configure(name: str) -> Any:
    algorithm = next(a for a in POLICY if name.startswith(a))  # a variant's name extends its algorithm's

    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(algorithm, dict(EVENT_RUNS[name]), "quadratic", {**ORACLE_PROBLEM, "sigma": 0.0},
                         int(value), replicas=profile.replicas, checkpoints=int(value), mode="monte_carlo")
    return configure


WHAT = {
    "defedavg_niid_events": "Algorithm 1, variant A: n = 3 draws with replacement from N = 5 per round, each selected "
                            "client uploads its send buffer at the broadcast of w^t or its running job's update, "
                            "the round waits for every distinct selected client, a duplicate counted twice",
    "defedavg_niid_events_b": "Algorithm 1, variant B (a client trains again only after its buffered update is "
                              "uploaded), the selection notified 4 ms after the model leaves (before the model "
                              "arrives), speeds u ~ U[1, 4] with time 4/u",
    "defedavg_iid_events": "Algorithm 2: the first n = 3 updates to arrive make a round, late ones carried over, "
                           "every client training again as soon as a newer model reaches it",
    "fedavg_events": "synchronous FedAvg (eqs. (2)-(3), sign fixed): n = 3 draws with replacement, only they train "
                     "from w^t, the round waits for the slowest",
    "fedbuff": "FedBuff [27] (spec §7): the first n = 2 arrivals, K = 4, staleness weights 1/sqrt(1 + delay) (its "
               "option), even clients fast (slowdowns U[1, 1.5]) and odd ones slow (U[3.5, 4])",
    "defedavg_iid_events_options": "Algorithm 2 with the simulator's options off the paper's defaults: each job's "
                                   "slowdown redrawn (speed_redraw) and times a lognormal(0, 0.3) jitter, an update "
                                   "arriving at a round's close or within the server's 5 ms dropped (carry_over "
                                   "off) and one older than 2 rounds dropped (tau_cap 2, mode 'drop'); the dropped "
                                   "counts are compared too",
    "defedavg_iid_events_straggler": "Algorithm 2 with stragglers: the first n = 2 arrivals, even clients' slowdowns "
                                     "U[1, 1.5] and odd ones' U[79.5, 80], so the odd clients' first updates, "
                                     "started from w^0, arrive near round 80-100 after delays of at most 5: a run "
                                     "must still hold w^0 then (160 rounds)",
    "asysg": "AsySG [22] (spec §7): one gradient per upload (K = 1, eta_l = 1), the first n = 2 arrivals, a client "
             "training again from the model it holds when no newer one came (rx_consume off); even clients share "
             "slowdown 1 and odd ones 4, transfers take no time, so events tie and the priorities decide",
}

CLAIMS = tuple(
    dataclasses.replace(trajectory_oracle(
        id=f"defedavg.oracle.{name}_replay", paper=KEY,
        title=f"{name}: a noise-free event-timeline run equals its timeline replayed from the primitive draws",
        statement=f"{WHAT[name]}; step 0.01 s x slowdown per local step, transfers 0.02 s down / 0.03 s up, 5 ms "
                  "at the server (unless said otherwise), on the quadratic with per-client rotated Hessians "
                  "(spectrum 0.3..1.7, d = 3, N = 5) and sigma = 0. From the run's slowdown and selection draws "
                  "only, an event queue written from the paper decides every round's (client, base version) slots "
                  "and close time, and eq. (8) the iterates (proofs/defedavg/oracles_events.py); each replica's "
                  "wall time at the last round and the delay histogram are compared as well.",
        source=src("Algorithms 1-2, eq. (8), §4.1.3; FedBuff [27], AsySG [22]", "spec §2.2-§2.4, §2.6, §2.7.3, §7"),
        configure=event_configure(name), oracle=event_oracle, measures=MEASURES, rtol=EVENT_RTOL,
        tolerance_reason=f"deterministic given the draws: float64 round-off over {EVENT_ROUNDS.get(name, EVENT_T)} "
                         "rounds (measured below 1e-13); a wrong slot, base version, weight or event time changes "
                         "some replica by >= 1e-3.",
        grid={"quick": (EVENT_ROUNDS.get(name, EVENT_T),), "full": (EVENT_ROUNDS.get(name, EVENT_T),)}),
        summary=combined_deviation)
    for name in EVENT_RUNS)
