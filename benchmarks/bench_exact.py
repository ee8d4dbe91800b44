"""Exact expectations vs Monte Carlo: time to produce FedAvg's T-curve, and the exact curve's error.

Setting (issue #8): FedAvg on the quadratic, d = 10, N = 100 clients (random heterogeneity, sigma = 1),
K = 10 local steps, two participations: full, and 10 of 100 without replacement. For each:

* exact : ratecheck.run(..., mode="exact"): the expectations of every measure at every checkpoint,
          probing of the seams included;
* mc16  : ratecheck.run with 16 replicas (the quick profile's Monte Carlo), same rounds and checkpoints;
* ref   : a 4096-replica Monte-Carlo mean (run in batches of replica ids, identical numbers to one
          run), against which the exact curve's error is reported, in relative terms and in units
          of the reference's standard error (|z| should look like |N(0,1)|, i.e. mostly < 3).

Timings (T = ``--rounds``) take the best of ``--repeats``; the error is measured on the curve of
T = ``--reference-rounds`` (the 4096-replica reference costs 4096/16 times the Monte-Carlo timing).
The machine is shared; absolute times are inflated.
Run from the repository root:
    PYTHONPATH=. python benchmarks/bench_exact.py [--rounds 1000] [--reference-rounds 100]
The last line is  exact_speedup=<x>  (the smaller of the two settings' speedups over mc16).

A second, informational part times client sampling inside a whole round (RoundModel, no seams): SimFBO
on P1 (spec §6.6) with P of n = 32 clients drawn without replacement (the T4/T5a instances), exact
(averaged over the sampling through the multiplicity moments) against mc16, and the probing cost.
"""

from __future__ import annotations

import argparse
import os
import time

# one BLAS thread for both sides: on a shared 2-core machine threaded GEMMs of these sizes only spin
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from problems import make_problem
from ratecheck import run
from ratecheck.algorithms import make_algorithm

D, N, K = 10, 100, 10
ETA, ETA_LOCAL, SEED = 1.0, 0.05, 0
SETTINGS = ("full", "without_replacement:10")
MEASURES = ("grad_norm_sq", "dist_sq", "avg:grad_norm_sq")


def best_time(fn, repeats: int):
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def reference(algorithm, problem, rounds: int, replicas: int, batch: int = 256) -> dict[str, np.ndarray]:
    """Monte-Carlo mean and standard error of each measure over `replicas` replicas, in batches."""
    parts = [run(algorithm, problem, rounds, replicas=range(lo, min(lo + batch, replicas)), seed=SEED + 1)
             for lo in range(0, replicas, batch)]
    out = {}
    for name in MEASURES:
        samples = np.concatenate([p.measures[name] for p in parts], axis=1)
        out[name] = (samples.mean(axis=1), samples.std(axis=1, ddof=1) / np.sqrt(samples.shape[1]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000, help="T of the timed curves")
    parser.add_argument("--reference-rounds", type=int, default=100, help="T of the error check")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--reference-replicas", type=int, default=4096, help="0: timings only")
    args = parser.parse_args()

    problem = make_problem("quadratic", dict(dim=D, clients=N, zeta=1.0, heterogeneity="random", sigma=1.0,
                                             curvature="per_client"))
    speedups = []
    print(f"FedAvg on the quadratic: d={D} N={N} K={K} eta={ETA} etabar={ETA_LOCAL}; timings at T={args.rounds}, "
          f"error at T={args.reference_rounds} against {args.reference_replicas} replicas")
    for participation in SETTINGS:
        algorithm = make_algorithm("fedavg", dict(eta_global=ETA, eta_local=ETA_LOCAL, local_steps=K,
                                                  participation=participation))
        run(algorithm, problem, 2, mode="exact")  # warm-up (imports, first allocations)
        t_exact, _ = best_time(lambda: run(algorithm, problem, args.rounds, mode="exact"), args.repeats)
        t_mc, _ = best_time(lambda: run(algorithm, problem, args.rounds, replicas=16, seed=SEED), args.repeats)
        speedups.append(t_mc / t_exact)
        print(f"\n[{participation}]  exact {t_exact:.3f} s   mc16 {t_mc:.3f} s   speedup {t_mc / t_exact:.1f}x")
        if args.reference_replicas == 0:  # timings only
            continue
        start = time.perf_counter()
        ref = reference(algorithm, problem, args.reference_rounds, args.reference_replicas)
        exact = run(algorithm, problem, args.reference_rounds, mode="exact")
        print(f"  reference: {args.reference_replicas} replicas in {time.perf_counter() - start:.1f} s")
        for name in MEASURES:
            value = exact.measures[name][:, 0]
            mean, se = ref[name]
            live = np.isfinite(mean) & (se > 1e-12 * np.abs(mean))  # t = 0 is deterministic
            rel = np.abs(value - mean)[live] / np.abs(mean)[live]
            z = (value - mean)[live] / se[live]
            print(f"  {name:18s} max rel. error {rel.max():.2e}  median {np.median(rel):.2e}  "
                  f"max |z| {np.abs(z).max():.2f} over {live.sum()} checkpoints  (final exact {value[-1]:.5g})")
    sampled_round(args.rounds, args.repeats)
    print(f"\nexact_speedup={min(speedups):.1f}")


def sampled_round(rounds: int, repeats: int) -> None:
    """SimFBO with sampling inside its round: exact vs 16 Monte-Carlo replicas (informational)."""
    from problems.quadratic_bilevel import p1
    from ratecheck.exact import RoundModel

    problem = make_problem("quadratic_bilevel", p1(clients=32))
    print(f"\nSimFBO on P1 (n = 32, d_x = d_y = 4, sigma = 1), sampling inside round(); T={rounds}")
    for P in (8, 31):
        algorithm = make_algorithm("simfbo", dict(participation=f"without_replacement:{P}", radius="off",
                                                  local_steps=2))
        start = time.perf_counter()
        model = RoundModel(algorithm, problem, rounds)
        t_probe = time.perf_counter() - start
        route = "enumerated" if model.sampling.weights is not None else "additive"
        t_exact, _ = best_time(lambda: run(algorithm, problem, rounds, mode="exact"), repeats)
        t_mc, _ = best_time(lambda: run(algorithm, problem, rounds, replicas=16, seed=SEED), repeats)
        print(f"[without_replacement:{P}]  {route} over {model.sampling.clients.shape[0]} probed outcomes, "
              f"probe {t_probe:.3f} s;  exact {t_exact:.3f} s   mc16 {t_mc:.3f} s   speedup {t_mc / t_exact:.1f}x")


if __name__ == "__main__":
    main()
