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

A third part (issue #21, ``--part scale``; every figure from a fresh subprocess, CPU seconds from
os.times of the child and peak RSS from resource.getrusage, so imports (~50 MB) are included):
FedAvg on the quadratic, K = 5, T = ``--scale-rounds`` (500), participation without_replacement:N/2,
for d in (10, 50, 100, 200, 400) and N in (10, 100): exact mode (shared curvature, the family's
default, and per-client curvature, where the O(N d^3)-a-round limit applies), 16 Monte-Carlo
replicas, the baseline's exact mode (``--baseline``: a checkout of 42d283e, before issue #21) where its
(d^2 x n^2) operator fits in ``--baseline-max-gb``, and the O(N d^3) limit's flop count
4 N d^3 T (two GEMMs of 2 N d^3 a round); then the shared-eigenbasis family (spectral_quadratic,
diagonal exact mode) up to d = 1000, N = 100. Targets: d = 100, N = 100 exact < 200 MB and
<= 0.5 x the CPU of mc16; d = 400, N = 10 < 1 GB; diagonal d = 1000, N = 100 < 10 s.
    PYTHONPATH=. python benchmarks/bench_exact.py --part scale

A fourth part (issue #21, ``--part steps``): the K-step client maps composed from one step by
repeated squaring (ratecheck.exact.local_steps) against the direct probe (K steps per probe row,
K d noise probes), for K in ``--steps``, FedAvg on the quadratic with per-client curvature (d = 50,
N = 10): CPU seconds of each, their ratio, and the largest relative difference of (A, b, Cov). The
direct probe is skipped beyond ``--direct-max-work`` multiply-adds (it grows like K^2).
    PYTHONPATH=. python benchmarks/bench_exact.py --part steps

A fifth part (issue #21, ``--part multiplicative``): Gaussian multiplicative noise (stochastic Hessian
H + sum_k xi_k B_k, p = 4 draws, rho = 0.5; family stochastic_hessian_quadratic) under FedAvg, K = 5,
N/2 of N clients without replacement, T = ``--mult-rounds``: CPU seconds of exact mode (probing the
bilinear steps included) and of 16 Monte-Carlo replicas, and at T = 20 the exact curve's largest |z|
against ``--reference-replicas`` replicas (rows up to d = 10).
    PYTHONPATH=. python benchmarks/bench_exact.py --part multiplicative

A sixth part (issue #21, ``--part fedbio``): FedBiO's rounds with stochastic Jacobians and Hessians. FedBiO-Local on
S10's instance (Test C1, Q = 20 sampled Hessians a round, I = 5, sigma_f = 1, sigma_J = 0.5, sigma_H = 0.2),
propagated stage by stage (ratecheck.exact.neumann), and FedBiO (Algorithm 1, Test B, the same noise), a whole round
bilinear in (state, noise) (ratecheck.exact.bilinear_round), T = ``--fedbio-rounds``: CPU seconds of exact mode
(reading the maps included) and of 16 Monte-Carlo replicas, and at T = 20 the exact curve's largest |z| against
``--reference-replicas`` replicas (M <= 4).
    PYTHONPATH=. python benchmarks/bench_exact.py --part fedbio
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

# one BLAS thread for both sides: on a shared 2-core machine threaded GEMMs of these sizes only spin
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from ratecheck import run
from ratecheck.problems import make_problem
from ratecheck.registry import make_algorithm

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
    parser.add_argument("--part", choices=("speed", "scale", "steps", "multiplicative", "fedbio", "all"), default="all")
    parser.add_argument("--fedbio-rounds", type=int, default=600, help="T of the fedbio part (S10's)")
    parser.add_argument("--mult-rounds", type=int, default=200, help="T of the multiplicative part")
    parser.add_argument("--steps", default="1,2,4,8,16,32,64,128,256,1024", help="K of the steps part")
    parser.add_argument("--steps-dim", type=int, default=50)
    parser.add_argument("--direct-max-work", type=float, default=2e10)
    parser.add_argument("--scale-rounds", type=int, default=500, help="T of the scale table")
    parser.add_argument("--baseline", default="/tmp/exact-base",
                        help="checkout whose exact mode is the baseline (e.g. git archive 42d283e, before issue #21)")
    parser.add_argument("--baseline-max-gb", type=float, default=3.0, help="skip baseline runs predicted larger")
    parser.add_argument("--dims", default="10,50,100,200,400")
    parser.add_argument("--per-client-max", type=float, default=1e9, help="skip per-client curvature beyond this N d^3")
    parser.add_argument("--clients", default="10,100")
    args = parser.parse_args()
    if args.part in ("steps", "all"):
        steps_table(args)
    if args.part in ("scale", "all"):
        scale_table(args)
    if args.part in ("multiplicative", "all"):
        multiplicative_table(args)
    if args.part in ("fedbio", "all"):
        fedbio_table(args)
    if args.part in ("scale", "steps", "multiplicative", "fedbio"):
        return

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
    from ratecheck.exact import RoundModel
    from ratecheck.proofs.simfbo.presets import p1

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


def multiplicative_table(args) -> None:
    """Exact Gaussian multiplicative noise against Monte Carlo: CPU seconds and agreement."""
    print(f"\nFedAvg, stochastic Hessian (p = 4, rho = 0.5), K = 5, N/2 of N; T = {args.mult_rounds}")
    print("| d | N | exact CPU s | mc16 CPU s | max abs z at T = 20 |")
    print("|---|---|---|---|---|")
    for d, n_clients in ((3, 4), (10, 10), (20, 10), (50, 10)):
        problem = make_problem("stochastic_hessian_quadratic", {"dim": d, "clients": n_clients, "rho": 0.5,
                                                                "hessian_draws": 4, "zeta": 0.5})
        algorithm = make_algorithm("fedavg", {"local_steps": 5, "eta_local": 0.3,
                                              "participation": f"without_replacement:{n_clients // 2}"})
        start = time.process_time()
        run(algorithm, problem, args.mult_rounds, mode="exact")
        t_exact = time.process_time() - start
        start = time.process_time()
        run(algorithm, problem, args.mult_rounds, replicas=16, seed=SEED)
        t_mc = time.process_time() - start
        z = "-"
        if d <= 10 and args.reference_replicas:
            exact = run(algorithm, problem, 20, mode="exact").measures["dist_sq"][1:, 0]
            parts = [run(algorithm, problem, 20, replicas=range(lo, min(lo + 256, args.reference_replicas)),
                         seed=SEED + 1).measures["dist_sq"][1:] for lo in range(0, args.reference_replicas, 256)]
            samples = np.concatenate(parts, axis=1)
            se = samples.std(axis=1, ddof=1) / np.sqrt(samples.shape[1])
            z = f"{np.max(np.abs(samples.mean(axis=1) - exact) / se):.2f}"
        print(f"| {d} | {n_clients} | {t_exact:.2f} | {t_mc:.2f} | {z} |")


def fedbio_table(args) -> None:
    """FedBiO-Local (Neumann stages) and FedBiO (a bilinear whole round) exact vs Monte Carlo: CPU and agreement."""
    from ratecheck.simulate.engine import run_config
    from ratecheck.trace import RunConfig

    noise = {"sigma_f": 1.0, "sigma_J": 0.5, "sigma_H": 0.2}
    cases = [("fedbio_local", {"I": 5, "eta": 0.02, "gamma": 0.1, "Q": 20, "tau_N": 0.3},
              {"test": "C1", "a_max": 2.0, "start": "solution", **noise}, (1, 4, 16, 32)),
             ("fedbio", {"I": 5, "eta": 0.02, "gamma": 0.05, "tau": 0.05},
              {"test": "B", "s": 0.7, "s_H": 0.4, "s_B": 0.5, **noise}, (3, 16))]
    print(f"\nFedBiO's rounds with Jacobian and Hessian noise; T = {args.fedbio_rounds}")
    print("| algorithm | M | exact CPU s | mc16 CPU s | max abs z at T = 20 |")
    print("|---|---|---|---|---|")
    for name, steps, problem, clients in cases:
        for M in clients:
            config = RunConfig(name, steps, "fedbio_bilevel", {**problem, "clients": M}, args.fedbio_rounds,
                               replicas=1, checkpoints=24, mode="exact")
            start = time.process_time()
            run_config(config)
            t_exact = time.process_time() - start
            start = time.process_time()
            run_config(config.with_(mode="monte_carlo", replicas=16))
            t_mc = time.process_time() - start
            z = "-"
            if M <= 4 and args.reference_replicas:
                short = config.with_(rounds=20, checkpoints=20)
                exact = run_config(short).measures["grad_norm_sq"][1:, 0]
                samples = run_config(short.with_(mode="monte_carlo", replicas=args.reference_replicas)
                                     ).measures["grad_norm_sq"][1:]
                se = samples.std(axis=1, ddof=1) / np.sqrt(samples.shape[1])
                z = f"{np.max(np.abs(samples.mean(axis=1) - exact) / se):.2f}"
            print(f"| {name} | {M} | {t_exact:.2f} | {t_mc:.2f} | {z} |")


CHILD = """
import json, os, resource, sys, time
sys.path.insert(0, os.getcwd())
from ratecheck import run
from ratecheck.registry import make_algorithm
spec = json.loads(sys.argv[1])
if spec["family"] == "spectral_quadratic":
    from ratecheck.problems.spectral_quadratic import make
    problem = make(**spec["problem"])
else:
    from ratecheck.problems import make_problem
    problem = make_problem(spec["family"], spec["problem"])
algorithm = make_algorithm("fedavg", spec["algorithm"])
before = os.times()
if spec["mode"] == "exact":
    trace = run(algorithm, problem, spec["rounds"], mode="exact")
else:
    trace = run(algorithm, problem, spec["rounds"], replicas=16, seed=0)
after = os.times()
value = float(trace.measures["dist_sq"][-1].mean())
print(json.dumps({"cpu": after.user - before.user + after.system - before.system,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "dist_sq": value}))
"""


def measure(spec: dict, cwd: str) -> dict:
    """One run in a fresh interpreter (one BLAS thread), its CPU seconds and peak RSS; {} on failure."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONPATH=cwd)
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:80]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def cell(result: dict, key: str, form: str) -> str:
    """A figure of a measured run, or why there is none."""
    return f"{result[key]:{form}}" if key in result else result.get("error", "skipped")[:8]


def scale_table(args) -> None:
    """Issue #21: exact mode's CPU and memory against 16 replicas, the baseline and the O(N d^3) limit."""
    here = os.getcwd()
    T = args.scale_rounds
    dims = [int(x) for x in args.dims.split(",")]
    counts = [int(x) for x in args.clients.split(",")]
    print(f"\nFedAvg on the quadratic, K=5, T={T}, without_replacement:N/2 (CPU s, peak MB per fresh process)")
    print(f"{'d':>4} {'N':>4} {'curvature':>10} | {'exact s':>8} {'MB':>6} | {'mc16 s':>7} {'MB':>6} | "
          f"{'exact/mc16':>10} | {'baseline s':>10} {'MB':>6} {'rel.diff':>9} | {'4NdT^3 GF':>9}")
    for d in dims:
        for N in counts:
            for curvature in ("shared", "per_client"):
                if curvature == "per_client" and N * d**3 > args.per_client_max:
                    print(f"{d:>4} {N:>4} {curvature:>10} | skipped: N d^3 > {args.per_client_max:.0e} "
                          f"(--per-client-max); the limit's flops {4 * N * d**3 * T / 1e9:.0f} GF", flush=True)
                    continue
                problem = dict(dim=d, clients=N, curvature=curvature)
                algorithm = dict(local_steps=5, participation=f"without_replacement:{N // 2}")
                spec = dict(family="quadratic", problem=problem, algorithm=algorithm, rounds=T)
                exact = measure({**spec, "mode": "exact"}, here)
                mc = measure({**spec, "mode": "mc16"}, here)
                n = d + 1
                base = {}
                if 8 * d * d * n * n * 3 / 1e9 <= args.baseline_max_gb and os.path.isdir(args.baseline):
                    base = measure({**spec, "mode": "exact"}, args.baseline)
                ratio = exact["cpu"] / mc["cpu"] if "cpu" in exact and "cpu" in mc else float("nan")
                rel = (abs(exact["dist_sq"] - base["dist_sq"]) / abs(base["dist_sq"])
                       if "dist_sq" in base and "dist_sq" in exact else float("nan"))
                flops = 4 * N * d**3 * T / 1e9 if curvature == "per_client" else 4 * d**3 * T / 1e9
                print(f"{d:>4} {N:>4} {curvature:>10} | {cell(exact, 'cpu', '8.2f')} {cell(exact, 'peak_mb', '6.0f')} | "
                      f"{cell(mc, 'cpu', '7.2f')} {cell(mc, 'peak_mb', '6.0f')} | {ratio:10.2f} | "
                      f"{cell(base, 'cpu', '10.2f') if base else 'skipped':>10} {cell(base, 'peak_mb', '6.0f') if base else '':>6} "
                      f"{rel:9.1e} | {flops:9.1f}", flush=True)
    print(f"\nspectral_quadratic (shared eigenbasis, spread 0.5), diagonal exact mode, K=5, T={T}")
    for d, N in [(100, 100), (400, 10), (1000, 10), (1000, 100)]:
        problem = dict(dim=d, clients=N)
        algorithm = dict(local_steps=5, participation=f"without_replacement:{N // 2}")
        spec = dict(family="spectral_quadratic", problem=problem, algorithm=algorithm, rounds=T)
        exact = measure({**spec, "mode": "exact"}, here)
        mc = measure({**spec, "mode": "mc16"}, here)
        print(f"d={d:>5} N={N:>4}  exact {exact.get('cpu', float('nan')):7.2f} s {exact.get('peak_mb', float('nan')):6.0f} MB"
              f"   mc16 {mc.get('cpu', float('nan')):7.2f} s {mc.get('peak_mb', float('nan')):6.0f} MB", flush=True)


def steps_table(args) -> None:
    """Issue #21 item 1: composed K-step client maps against the direct probe, CPU seconds vs K."""
    from ratecheck.exact.local_steps import client_maps, composed_client_maps

    d, N = args.steps_dim, 10
    problem = make_problem("quadratic", dict(dim=d, clients=N, curvature="per_client", zeta=1.0,
                                             heterogeneity="random", sigma=1.0))
    print(f"\nK-step client maps, FedAvg on the quadratic (per-client curvature), d={d} N={N} (CPU s)")
    print(f"{'K':>6} | {'composed s':>10} | {'direct s':>9} | {'direct/composed':>15} | {'max rel. diff':>13}")
    for K in (int(k) for k in args.steps.split(",")):
        algorithm = make_algorithm("fedavg", dict(local_steps=K, eta_local=0.01))
        start = time.process_time()
        composed = composed_client_maps(algorithm, problem, m=N // 2) if K > 1 else None
        composed = composed or client_maps(algorithm, problem, m=N // 2, compose=False)  # K = 1: one step
        t_composed = time.process_time() - start
        work = N * d * d * (K * (d + 1) + K * K * d)
        if work > args.direct_max_work:
            print(f"{K:>6} | {t_composed:10.3f} | skipped: direct work {work:.1e} > --direct-max-work", flush=True)
            continue
        start = time.process_time()
        direct = client_maps(algorithm, problem, m=N // 2, compose=False)
        t_direct = time.process_time() - start
        gap = max(float(np.max(np.abs(getattr(composed, f) - getattr(direct, f)))
                        / max(float(np.max(np.abs(getattr(direct, f)))), 1e-300)) for f in ("A", "b", "cov"))
        print(f"{K:>6} | {t_composed:10.3f} | {t_direct:9.3f} | {t_direct / t_composed:15.1f} | {gap:13.1e}", flush=True)


if __name__ == "__main__":
    main()
