"""Counts of the reliability fuzz (issue #24): runs tests/test_fuzz.py and prints how many fuzzed and
hand-written bad inputs ran, with the outcome counts the targets are about.

    python benchmarks/fuzz_counts.py            # the suite's default (small) counts
    python benchmarks/fuzz_counts.py --full     # the large counts (>= 1,000 fuzzed, >= 75 hand-written)

Targets: zero uncaught exceptions and zero silent acceptances (every case asserts both, so they are
the failed cases), zero hangs (the run is bounded by --timeout seconds), zero out-of-memory (the run is
bounded by an address-space limit of --memory-gib). The baseline beside it: the issue's measurement
on main c75dcc8 (1,000 API and 150 CLI cases, 78 hand-written: 2 MemoryErrors, 1 hang, 12 failures).
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = {"fuzzed": 1150, "hand": 78, "out_of_memory": 2, "hangs": 1}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the large counts")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds before the run counts as a hang")
    parser.add_argument("--memory-gib", type=float, default=8.0, help="address-space limit of the run")
    args = parser.parse_args()
    limit = int(args.memory_gib * 2**30)

    def bound_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    argv = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "tests/test_fuzz.py"]
    argv += ["--full"] if args.full else []
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=args.timeout,
                              preexec_fn=bound_memory)
    except subprocess.TimeoutExpired:
        print(f"HANG: the fuzz did not finish in {args.timeout:g} s")
        return 1
    seconds = time.perf_counter() - started
    out = done.stdout + done.stderr
    counts = re.search(r"fuzz inputs: (\{.*?\}), fuzzed (\d+), hand-written (\d+); CLI exit codes (\{.*?\})", out)
    summary = re.search(r"(\d+) passed(?:, (\d+) failed)?", out)
    failed = len(re.findall(r"^FAILED ", out, re.MULTILINE))
    memory_errors = out.count("MemoryError")
    if counts is None or summary is None:
        print(out[-3000:])
        return 1
    fuzzed, hand = int(counts.group(2)), int(counts.group(3))
    print(f"fuzz run ({'--full' if args.full else 'default'}): {seconds:.0f} s wall")
    print(f"  inputs by source: {counts.group(1)}")
    print(f"  fuzzed inputs: {fuzzed} (baseline run {BASELINE['fuzzed']}, ratio {fuzzed / BASELINE['fuzzed']:.2f})")
    print(f"  hand-written bad inputs: {hand} (baseline {BASELINE['hand']})")
    print(f"  CLI exit codes: {counts.group(4)}")
    print(f"  failed cases (uncaught exceptions or silent acceptances): {failed}")
    print(f"  MemoryError seen: {memory_errors} (baseline {BASELINE['out_of_memory']}); hangs: 0 "
          f"(baseline {BASELINE['hangs']})")
    return 0 if failed == 0 and done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
