"""What `ratecheck check` costs on the five papers' quick profile, against main beside it (issue #19).

Figures (each `check` is a fresh `python -m ratecheck check --json` process in the checkout; CPU is
user + system time of it and all its workers, from getrusage of the waited-for children):

* empty cache: wall and CPU-seconds of `check --no-report` from an empty run cache (target <= 100 CPU-s);
* cached:      wall of the same check again, everything reused (target < 5 s);
* report:      the extra CPU of writing the report (a cached `check` with it, minus one without);
* the same empty-cache and cached figures of the baseline checkout (``--baseline``, default
  /work/main: the main branch), and their ratios;
* per paper, in this process on one core: runs and searches computed, CPU-seconds, and the five
  most expensive claims (the compute time of the runs and searches each reads, plus its decision).

Run:  python benchmarks/bench_check.py [--jobs 2] [--baseline /work/main | --no-baseline] [--no-papers] [--no-report]
      [--no-bytecode]  (by default Python's bytecode is cached, in a temporary folder per checkout: an installed
      package has it; --no-bytecode leaves PYTHONDONTWRITEBYTECODE, if set, in force: every check compiles)
The last line is  empty_cpu=<s> cached_wall=<s> cached_cpu=<s> report_cpu=<s> baseline_empty_cpu=<s>
baseline_cached_cpu=<s> ratio=<x> cached_ratio=<x> (ratios: this checkout's CPU over the baseline's).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ("defedavg", "fedbio", "fessgda", "simfbo", "strfedavg")


def check(checkout: Path, cache: Path, jobs: int, *args: str, pycache: Path | None = None
          ) -> tuple[float, float, dict | None]:
    """(wall seconds, CPU seconds, JSON output) of one `ratecheck check` in ``checkout``; with ``pycache``,
    Python keeps its bytecode there (as any install does), else as the environment says."""
    env = {k: v for k, v in os.environ.items() if k != "RATECHECK_SYMPY_CACHE"}  # derivations: in the cache
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "ratecheck", "check", "--json", "--jobs", str(jobs),
                          "--cache-dir", str(cache), *args], cwd=checkout, capture_output=True, text=True, check=False,
                         env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode not in (0, 1):
        print(out.stderr[-2000:], file=sys.stderr)
        raise SystemExit(f"check in {checkout} failed with exit {out.returncode}")
    try:
        data = json.loads(out.stdout)
    except json.JSONDecodeError:
        data = None
    return wall, cpu, data


def figures(checkout: Path, jobs: int, report: bool, bytecode: bool = True) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-check-") as tmp:
        cache, reports = Path(tmp) / "cache", Path(tmp) / "reports"
        pycache = Path(tmp) / "pycache" if bytecode else None  # written by the first check, read by the next
        empty_wall, empty_cpu, data = check(checkout, cache, jobs, "--no-report", pycache=pycache)
        cached_wall, cached_cpu, again = check(checkout, cache, jobs, "--no-report", pycache=pycache)
        out = {"empty_wall": empty_wall, "empty_cpu": empty_cpu, "cached_wall": cached_wall,
               "cached_cpu": cached_cpu, "claims": len(data["claims"]) if data else 0,
               "same": bool(data and again and _verdicts(data) == _verdicts(again))}
        if report:
            _, with_report, _ = check(checkout, cache, jobs, "--report-dir", str(reports), pycache=pycache)
            out["report_cpu"] = with_report - cached_cpu
    return out


def _verdicts(data: dict) -> list[tuple[str, str, str]]:
    return [(c["claim"], c["verdict"], json.dumps(c["evidence"], sort_keys=True)) for c in data["claims"]]


def per_paper() -> list[tuple[str, int, float, list[tuple[str, float]]]]:
    """Per paper, in this process: results computed, CPU-seconds, and the five costliest claims."""
    sys.path.insert(0, str(ROOT))
    from ratecheck import registry
    from ratecheck.claims import PROFILES
    from ratecheck.model.store import Store
    from ratecheck.runner.sweep import gather

    profile = PROFILES["quick"]
    rows = []
    for paper in PAPERS:
        claims = [c for c in registry.select_claims(f"{paper}.*") if c.in_profile(profile)]
        with tempfile.TemporaryDirectory(prefix="bench-check-") as tmp:
            started = time.process_time()
            results, needs = gather(claims, profile, store=Store(tmp), progress=False)
            costs = []
            for claim, keys in zip(claims, needs):
                t = time.process_time()
                claim.decide(profile, results)
                spent = sum(_seconds(results.get(k)) for k in keys) + time.process_time() - t
                costs.append((claim.id, spent))
            cpu = time.process_time() - started
        rows.append((paper, len(results), cpu, sorted(costs, key=lambda c: -c[1])[:5]))
    return rows


def _seconds(result: object) -> float:
    info = getattr(result, "info", None)
    if isinstance(info, dict):
        return float(info.get("wall_seconds", 0.0))
    return float(result.get("seconds", 0.0)) if isinstance(result, dict) else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--baseline", default="/work/main", help="checkout to compare with (main)")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--no-papers", action="store_true", help="skip the per-paper table")
    ap.add_argument("--no-report", action="store_true", help="skip the report's figure (the report's own target)")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="no bytecode cache, if the environment says so (PYTHONDONTWRITEBYTECODE): every check "
                         "compiles every module it imports; by default each checkout's bytecode is kept in its "
                         "temporary folder, as an installed package has it")
    args = ap.parse_args()

    bytecode = not args.no_bytecode
    mine = figures(ROOT, args.jobs, report=not args.no_report, bytecode=bytecode)
    print(f"bytecode cache: {'kept (PYTHONPYCACHEPREFIX in a temporary folder)' if bytecode else 'as the environment says'}")
    print(f"this checkout ({ROOT}), {mine['claims']} claims, --jobs {args.jobs}:")
    print(f"  empty cache: {mine['empty_wall']:7.1f} s wall {mine['empty_cpu']:7.1f} CPU-s   (target <= 100 CPU-s)")
    print(f"  cached:      {mine['cached_wall']:7.1f} s wall {mine['cached_cpu']:7.1f} CPU-s   (target < 5 s wall)")
    if "report_cpu" in mine:
        print(f"  report:      {mine['report_cpu']:7.1f} extra CPU-s                  (target <= 20 CPU-s)")
    print(f"  cached rerun gives the same verdicts and evidence: {mine['same']}")
    base = None
    if not args.no_baseline and Path(args.baseline).is_dir():
        base = figures(Path(args.baseline), args.jobs, report=False, bytecode=bytecode)
        print(f"baseline ({args.baseline}), {base['claims']} claims:")
        print(f"  empty cache: {base['empty_wall']:7.1f} s wall {base['empty_cpu']:7.1f} CPU-s")
        print(f"  cached:      {base['cached_wall']:7.1f} s wall {base['cached_cpu']:7.1f} CPU-s")
        print(f"  ratio (this / baseline): empty CPU {mine['empty_cpu'] / base['empty_cpu']:.2f}, "
              f"cached CPU {mine['cached_cpu'] / base['cached_cpu']:.2f}, "
              f"cached wall {mine['cached_wall'] / base['cached_wall']:.2f} (CPU is robust under load, wall is not)")
    if not args.no_papers:
        print("\nper paper (this process, one core, empty cache):")
        print(f"  {'paper':<10} {'results':>7} {'CPU-s':>7}  five most expensive claims (s)")
        for paper, count, cpu, top in per_paper():
            print(f"  {paper:<10} {count:7d} {cpu:7.1f}  " + ", ".join(f"{c} {s:.1f}" for c, s in top))
    print(f"empty_cpu={mine['empty_cpu']:.1f} cached_wall={mine['cached_wall']:.2f} cached_cpu={mine['cached_cpu']:.2f} "
          f"report_cpu={mine.get('report_cpu', math.nan):.1f} "
          f"baseline_empty_cpu={base['empty_cpu'] if base else float('nan'):.1f} "
          f"baseline_cached_cpu={base['cached_cpu'] if base else float('nan'):.2f} "
          f"ratio={mine['empty_cpu'] / base['empty_cpu'] if base else float('nan'):.2f} "
          f"cached_ratio={mine['cached_cpu'] / base['cached_cpu'] if base else float('nan'):.2f}")


if __name__ == "__main__":
    main()
