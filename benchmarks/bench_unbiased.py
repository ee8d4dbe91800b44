"""What the unbiasedness claims add to a check: each paper's constants claim, then its unbiasedness claim in the same
process (as `ratecheck check --jobs 1` decides them: the noise draws are shared through per_problem, so the second
claim pays only for the oracles no constants instance draws: DeFedAvg's stochastic-Hessian and row-sampled gradients,
SimFBO's Hessian-vector product, FedBiO's N2 instance).

Run:  python benchmarks/bench_unbiased.py
Prints CPU and wall seconds per claim; the last line is  constants_cpu=<a> unbiased_cpu=<b> ratio=<(a + b) / a>
(CPU time: the machine is shared, wall time is reported beside it).
"""

from __future__ import annotations

import importlib
import time

from ratecheck.claims import PROFILES

PAPERS = ("defedavg", "simfbo", "fedbio", "fessgda", "strfedavg")


def timed(claim: object) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    claim.decide(PROFILES["quick"], {})  # type: ignore[attr-defined]
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    totals = [0.0, 0.0]
    for paper in PAPERS:
        constants = importlib.import_module(f"ratecheck.proofs.{paper}.constants").CLAIMS[0]
        unbiased = importlib.import_module(f"ratecheck.proofs.{paper}.unbiased").CLAIMS[0]
        (c_cpu, c_wall), (u_cpu, u_wall) = timed(constants), timed(unbiased)
        totals[0] += c_cpu
        totals[1] += u_cpu
        print(f"{paper:10s} constants {c_cpu:.2f}s cpu ({c_wall:.2f}s wall)  unbiased {u_cpu:.2f}s cpu ({u_wall:.2f}s wall)")
    print(f"constants_cpu={totals[0]:.2f} unbiased_cpu={totals[1]:.2f} ratio={(totals[0] + totals[1]) / totals[0]:.3f}")


if __name__ == "__main__":
    main()
