"""Event simulation and numerics of asynchronous FL: the two-phase design vs a naive interleaving.

Setting (issue #12): N = 1000 clients, T = 10^4 rounds of DeFedAvg-IID (first n = 10 arrivals,
K = 5, the paper's timing model) on the quadratic (d = 10), R replicas. Timings:

* events:   ratecheck.model.asynchrony.simulate for one replica (the timeline: no numerics at all);
            events per second;
* numerics: the recorded timelines replayed through FedAvg's vectorized round (delay 'trace'),
            R replicas as an array axis; client-steps per second (R x n x K per round);
* naive:    one replica at a time, events and numerics interleaved: each job's K local steps run
            on one client vector when the job starts, from a dict of stored models (the way a
            straightforward simulator is written); client-steps per second, on fewer rounds.

Run:  python benchmarks/bench_async.py [--rounds 10000] [--clients 1000] [--replicas 8]
The last line is  events_per_s=<a> client_steps_per_s=<b> naive_client_steps_per_s=<c> speedup=<d>.

Live timeline (--live): a Mode E run of DeFedAvg-IID (the timeline simulated as the run goes, the numerics keeping
the past models the rounds to come read) on this checkout and on a baseline commit's code (``git archive`` of
--baseline, default 15ada27, whose numerics kept every model from the oldest version in flight to the newest), each
in a fresh process: CPU seconds of the rounds, the bytes of the past models kept (at their largest), and the peak traced
memory (tracemalloc) of the same run through the engine, with the ratios baseline / this.
Two cases: 'paper' (the paper's timing model) and 'anchored' (a policy plugin: client 0 trains every job from the
version of its first, w^0, so one base stays old for the whole run). The final iterates' digest must agree.

Run:  python benchmarks/bench_async.py --live [--live-rounds 4000] [--live-clients 50] [--replicas 8]
The last line is  live_time_ratio_<case>=<a> live_models_ratio_<case>=<b> live_memory_ratio_<case>=<c> (paper, then
anchored) same_numbers=<True|False>.
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ratecheck import run
from ratecheck.algorithms.asynchronous import DeFedAvgIIDEvents
from ratecheck.model.asynchrony import LiveTimelines, Simulation, SystemModel, Timelines, simulate
from ratecheck.problems import make_problem
from ratecheck.proofs.defedavg.presets import p1
from ratecheck.registry import make_algorithm
from ratecheck.seeding import Streams, stable_hash

K, N_PER_ROUND, SEED = 5, 10, 0
STEPS = dict(eta_global=0.5, eta_local=0.01, local_steps=K)


def events(clients: int, rounds: int, replicas: int) -> tuple[float, int, Timelines]:
    start = time.perf_counter()
    each = [simulate("iid", SystemModel(), clients=clients, n=N_PER_ROUND, local_steps=K, rounds=rounds, seed=SEED,
                     replica=r) for r in range(replicas)]
    elapsed = time.perf_counter() - start
    return elapsed, sum(tl.events for tl in each), Timelines.stack(each, tuple(range(replicas)))


def numerics(problem, timelines: Timelines, rounds: int) -> tuple[float, np.ndarray]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "timeline.npz")
        timelines.save(path)
        algorithm = make_algorithm("defedavg_iid", dict(STEPS, participation=f"without_replacement:{N_PER_ROUND}",
                                                        delay=f"trace:{path}"))
        start = time.perf_counter()
        trace = run(algorithm, problem, rounds, replicas=len(timelines.replicas), seed=SEED)
        return time.perf_counter() - start, trace.final["x"]


def naive(problem, clients: int, rounds: int) -> float:
    """Interleaved: a heap of (time, seq, kind, client) and per-client numpy work inside the handlers."""
    system = SystemModel()
    rng = np.random.default_rng(SEED)
    slowdown = 1.0 + 4.0 * rng.random(clients)
    h, centers = problem.hessians, problem.centers
    scale = problem.sigma / np.sqrt(problem.dim)
    models = {0: problem.x0.copy()}
    x, t, heap, seq, fifo = problem.x0.copy(), 0, [], 0, []
    start = time.perf_counter()

    def start_job(i: int, now: float) -> None:
        nonlocal seq
        y = models[t].copy()
        w0 = y.copy()
        for _ in range(K):  # numerics inside the event handler, one client vector at a time
            y = y - STEPS["eta_local"] * (h @ (y - centers[i]) + scale * rng.standard_normal(problem.dim))
        heapq.heappush(heap, (now + K * slowdown[i] * system.step_time + system.t_up, seq, i, w0 - y))
        seq += 1

    for i in range(clients):
        start_job(i, system.t_down)
    while t < rounds:
        now, _, i, delta = heapq.heappop(heap)
        fifo.append(delta)
        if len(fifo) >= N_PER_ROUND:
            x = x - STEPS["eta_global"] * np.mean(fifo[:N_PER_ROUND], axis=0)
            fifo = fifo[N_PER_ROUND:]
            t += 1
            models[t] = x.copy()
            models.pop(t - 200, None)
        start_job(i, now + system.t_down)
    return time.perf_counter() - start


class Anchored(Simulation):
    """A policy plugin: client 0 trains every job from the version its first job started from (w^0)."""

    def start_job(self, i: int, version: int) -> None:
        super().start_job(i, self.c.job_base[0] if i == 0 and self.c.taken[0] >= 0 else version)


@dataclass(frozen=True)
class AnchoredIID(DeFedAvgIIDEvents):
    """DeFedAvg-IID on the Anchored policy (the API a plugin uses on both the baseline and this checkout)."""

    def timeline(self, problem, streams):
        n = self.participation.per_round(problem.num_clients)
        return LiveTimelines([Anchored(self.policy, self.system(), clients=problem.num_clients, n=n,
                                       local_steps=self.local_steps, seed=streams.seed, replica=r)
                              for r in streams.replicas], tuple(streams.replicas))


def live_case(case: str, clients: int, rounds: int, replicas: int) -> dict:
    """The algorithm's rounds run by hand (timed in CPU seconds of this process, which a shared machine's load
    disturbs less than wall time; the bytes of the past models it keeps, at their largest), then the same run
    through the engine under tracemalloc (its peak: timelines, models, trace)."""
    problem = make_problem("quadratic", p1(clients=clients))
    kind = AnchoredIID if case == "anchored" else DeFedAvgIIDEvents
    algorithm = kind(eta_global=0.5, eta_local=0.01, local_steps=K, participation=f"without_replacement:{N_PER_ROUND}")
    streams = Streams(SEED, stable_hash("bench_async --live"), range(replicas))  # a run key is a hex digest
    start = time.process_time()
    state, models = algorithm.init(problem, streams), 0
    for t in range(rounds):
        state, _ = algorithm.round(state, problem, t, streams)
        models = max(models, getattr(state.history, "buffer", state.history).nbytes)  # a ring, or the store's buffer
    seconds = time.process_time() - start
    tracemalloc.start()
    run(algorithm, problem, rounds, replicas=replicas, seed=SEED)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"seconds": seconds, "models_bytes": models, "peak_bytes": peak, "max_delay": int(state.max_delay),
            "digest": hashlib.sha256(np.ascontiguousarray(state.x).tobytes()).hexdigest()[:16]}


def live_compare(args: argparse.Namespace) -> None:
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(root), "archive", args.baseline], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        ratios: dict[str, float] = {}
        same = True
        for case in ("paper", "anchored"):
            got = {}
            for label, code in (("baseline", tmp), ("this", str(root))):
                env = dict(os.environ, PYTHONPATH=code)
                out = subprocess.run([sys.executable, __file__, "--live-child", case, "--live-rounds", str(args.live_rounds),
                                      "--live-clients", str(args.live_clients), "--replicas", str(args.replicas)],
                                     env=env, cwd=tmp, check=True, capture_output=True, text=True)
                got[label] = json.loads(out.stdout.strip().splitlines()[-1])
                g = got[label]
                print(f"live {case:8s} {label:8s} ({args.baseline if label == 'baseline' else 'checkout'}): "
                      f"{g['seconds']:7.2f} CPU-s, past models {g['models_bytes'] / 2**10:9.1f} KiB, run's peak "
                      f"{g['peak_bytes'] / 2**20:7.2f} MiB, max delay {g['max_delay']}, final x {g['digest']}")
            ratios[f"live_time_ratio_{case}"] = got["baseline"]["seconds"] / got["this"]["seconds"]
            ratios[f"live_models_ratio_{case}"] = got["baseline"]["models_bytes"] / got["this"]["models_bytes"]
            ratios[f"live_memory_ratio_{case}"] = got["baseline"]["peak_bytes"] / got["this"]["peak_bytes"]
            same &= got["baseline"]["digest"] == got["this"]["digest"]
    print(f"({args.replicas} replicas x {args.live_rounds} rounds, N = {args.live_clients}, n = {N_PER_ROUND}, K = {K}, "
          f"d = {make_problem('quadratic', p1(clients=args.live_clients)).dim})")
    print(" ".join(f"{k}={v:.2f}" for k, v in ratios.items()) + f" same_numbers={same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--replicas", type=int, default=8)
    parser.add_argument("--naive-rounds", type=int, default=2000)
    parser.add_argument("--live", action="store_true", help="the live timeline against --baseline's code")
    parser.add_argument("--live-rounds", type=int, default=4000)
    parser.add_argument("--live-clients", type=int, default=50)
    parser.add_argument("--baseline", default="15ada27", help="the commit whose code the live case compares with")
    parser.add_argument("--live-child", choices=("paper", "anchored"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.live_child:
        print(json.dumps(live_case(args.live_child, args.live_clients, args.live_rounds, args.replicas)))
        return
    if args.live:
        live_compare(args)
        return
    problem = make_problem("quadratic", p1(clients=args.clients))

    t_events, count, timelines = events(args.clients, args.rounds, args.replicas)
    print(f"events:   {count} events for {args.replicas} replicas x {args.rounds} rounds in {t_events:.2f} s "
          f"({count / t_events:,.0f} events/s); max delay {timelines.max_delay}")
    t_num, _ = numerics(problem, timelines, args.rounds)
    steps = args.replicas * args.rounds * N_PER_ROUND * K
    print(f"numerics: {steps} client-steps in {t_num:.2f} s ({steps / t_num:,.0f} client-steps/s)")
    t_naive = naive(problem, args.clients, args.naive_rounds)
    naive_steps = args.naive_rounds * N_PER_ROUND * K  # one replica; jobs never aggregated not counted
    print(f"naive:    {naive_steps} aggregated client-steps (1 replica, {args.naive_rounds} rounds) in {t_naive:.2f} s "
          f"({naive_steps / t_naive:,.0f} client-steps/s)")
    two_phase = steps / (t_events + t_num)
    print(f"events_per_s={count / t_events:.0f} client_steps_per_s={steps / t_num:.0f} "
          f"naive_client_steps_per_s={naive_steps / t_naive:.0f} speedup={two_phase / (naive_steps / t_naive):.1f}")


if __name__ == "__main__":
    main()
