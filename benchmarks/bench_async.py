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
"""

from __future__ import annotations

import argparse
import heapq
import os
import tempfile
import time

import numpy as np

from ratecheck import run
from ratecheck.model.asynchrony import SystemModel, Timelines, simulate
from ratecheck.problems import make_problem
from ratecheck.proofs.defedavg.presets import p1
from ratecheck.registry import make_algorithm

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--replicas", type=int, default=8)
    parser.add_argument("--naive-rounds", type=int, default=2000)
    args = parser.parse_args()
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
