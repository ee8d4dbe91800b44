"""What writing the report costs (issue #19 item 5: at most 20 CPU-seconds), against a baseline beside it.

Each figure is a fresh `python -m ratecheck check --jobs 1` process on a warm run cache (everything
reused): the report's CPU is that of `check` with the report minus that of `check --no-report`
(user + system of the process and its workers, from getrusage of the waited-for children). The same
two checks run in the baseline checkout (``--baseline DIR``, e.g. an export of 788665f: the code before
issue #18's report), on the same cache, and the ratio is printed.

Run:  python benchmarks/bench_report.py [--baseline DIR | --no-baseline] [--cache-dir DIR] [--repeat N]
The last line is  report_cpu=<s> baseline_report_cpu=<s> ratio=<x>  (the median of --repeat pairs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_check import ROOT, check  # noqa: E402  (one way to time a check, shared with bench_check)


def report_cpu(checkout: Path, cache: Path, repeat: int) -> tuple[float, float, float]:
    """(median report CPU-s, median CPU-s without, median CPU-s with) of ``repeat`` pairs of cached checks."""
    check(checkout, cache, 1, "--no-report")  # warm: fill what the cache lacks, outside the figures
    without, with_report = [], []
    for _ in range(repeat):
        without.append(check(checkout, cache, 1, "--no-report")[1])
        with tempfile.TemporaryDirectory() as reports:
            with_report.append(check(checkout, cache, 1, "--report-dir", reports)[1])
    extra = statistics.median(w - n for w, n in zip(with_report, without))
    return extra, statistics.median(without), statistics.median(with_report)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, help="checkout of the code to compare with")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "ratecheck-bench-report-cache")
    ap.add_argument("--repeat", type=int, default=1, help="pairs of checks per checkout (the median is shown)")
    args = ap.parse_args()
    rows = [("this checkout", ROOT)]
    if args.baseline and not args.no_baseline:
        rows.append(("baseline", args.baseline))
    figures = {}
    for name, checkout in rows:
        extra, without, with_report = report_cpu(checkout, args.cache_dir, args.repeat)
        figures[name] = extra
        print(f"{name:14s} cached check: {without:6.1f} CPU-s without the report, {with_report:6.1f} with it; "
              f"report {extra:6.1f} CPU-s  ({checkout})")
    base = figures.get("baseline")
    ratio = f"{figures['this checkout'] / base:.2f}" if base else "-"
    print(f"report_cpu={figures['this checkout']:.1f} baseline_report_cpu={base if base is None else round(base, 1)} "
          f"ratio={ratio}")


if __name__ == "__main__":
    main()
