#!/usr/bin/env python3
"""Does any claim flip on correct code when only the random draws change? (issue #23's "no claim flips on
correct code across 5 seeds")

    python tools/seed_stability.py [PATTERN] [--offsets 1000 2000 3000 4000 5000] [--full] [--jobs J]
                                   [--cache-dir DIR] [--base BASE.json] [--json OUT.json]

Decides the claims matching PATTERN (default: every registered claim) once per seed offset with
``ratecheck check --seed-offset K --json --no-report`` (every Monte-Carlo run's and hunt's seed shifted by K,
ratecheck.runner.sweep.seeded; exact runs are expectations and do not depend on the seed), in a fresh process
each, and prints every claim whose verdict differs from its expected one under some offset, with its verdict and
reason under each offset. ``--base`` adds a check already made at offset 0 (e.g. /work/s6/base.json) as a column.
Exit status 0 when no claim flips, 1 when one does, 3 when a check could not run.

A flip is a finding, not a tolerance to widen: the code, the test design (a margin inside the spread of its
statistic, replicas too few for its interval) or the paper is wrong, and which must be found out.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OFFSETS = (1000, 2000, 3000, 4000, 5000)  # far apart: a claim's own seeds 0, 1, 2, ... never collide


def check(pattern: str | None, offset: int, *, full: bool, jobs: int, cache_dir: str | None) -> dict[str, Any]:
    """One ``ratecheck check --json`` under ``offset``, in a fresh process (this checkout's code)."""
    cmd = [sys.executable, "-m", "ratecheck", "check", *([pattern] if pattern else []), "--json", "--no-report",
           "--jobs", str(jobs), "--seed-offset", str(offset), *(["--full"] if full else [])]
    cmd += ["--cache-dir", cache_dir] if cache_dir else ["--no-cache"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise RuntimeError(f"check at offset {offset} failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def verdicts(output: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Claim id -> verdict, expected verdict and reason, from one check's JSON (observations have no verdict)."""
    return {c["claim"]: {"verdict": c["verdict"], "expected": c["expected"], "reason": c["reason"]}
            for c in output["claims"] if not c.get("observation")}


def flips(columns: dict[str, dict[str, dict[str, Any]]], optional: frozenset[str] = frozenset()
          ) -> dict[str, dict[str, Any]]:
    """The claims whose verdict differs from the expected one in some column (offset), or that a column not in
    ``optional`` (the base, made by other code) did not decide, with every column's."""
    out: dict[str, dict[str, Any]] = {}
    for claim in sorted({c for column in columns.values() for c in column}):
        seen = {name: column.get(claim) for name, column in columns.items()}
        expected = next(v["expected"] for v in seen.values() if v is not None)
        if any(v["verdict"] != expected if v is not None else name not in optional for name, v in seen.items()):
            out[claim] = {"expected": expected, "by_offset": seen}
    return out


def option_problems(args: argparse.Namespace) -> str | None:
    """What is wrong with the options, each offset and --jobs by its declaration (params.OPTION_PARAMS: the rule
    ``ratecheck check`` applies to the same values), or None. Offsets must also differ: one decided twice is not
    another seed."""
    sys.path.insert(0, str(ROOT))  # this checkout's ratecheck, as the checks it starts
    from ratecheck.params import ParamError, check_option

    try:
        for offset in args.offsets:
            check_option("seed_stability --offsets", "seed_offset", offset)
        check_option("seed_stability --jobs", "jobs", args.jobs)
    except ParamError as exc:
        return str(exc)
    if len(set(args.offsets)) != len(args.offsets):
        return f"seed_stability: parameter offsets = {args.offsets} is invalid: must be distinct"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", nargs="?", help="glob or substring of claim ids / papers (default: all)")
    parser.add_argument("--offsets", type=int, nargs="+", default=list(DEFAULT_OFFSETS),
                        help=f"seed offsets, each a check (default {' '.join(map(str, DEFAULT_OFFSETS))})")
    parser.add_argument("--full", action="store_true", help="full profile (default quick)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes of each check (default 1)")
    parser.add_argument("--cache-dir", help="run cache shared by the checks (default: none)")
    parser.add_argument("--base", help="a `ratecheck check --json` at offset 0 to show beside them")
    parser.add_argument("--json", dest="out", help="also write the result here")
    args = parser.parse_args(argv)
    if problem := option_problems(args):
        parser.error(problem)

    columns: dict[str, dict[str, dict[str, Any]]] = {}
    if args.base:
        columns["0 (base)"] = verdicts(json.loads(Path(args.base).read_text()))
    for offset in args.offsets:
        started = time.perf_counter()
        try:
            output = check(args.pattern, offset, full=args.full, jobs=args.jobs, cache_dir=args.cache_dir)
        except RuntimeError as exc:
            print(f"seed_stability: {exc}", file=sys.stderr)
            return 3
        columns[str(offset)] = verdicts(output)
        bad = sum(v["verdict"] != v["expected"] for v in columns[str(offset)].values())
        print(f"offset {offset}: {len(columns[str(offset)])} claims, {bad} not as expected "
              f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    if args.base and args.pattern:  # the base may hold every paper: keep the claims the checks decided
        decided = set().union(*(set(columns[str(o)]) for o in args.offsets))
        columns["0 (base)"] = {c: v for c, v in columns["0 (base)"].items() if c in decided}

    found = flips(columns, frozenset({"0 (base)"}))
    claims = len(set().union(*(set(column) for column in columns.values())))
    print(f"{claims} claims under offsets {', '.join(columns)}: {len(found)} differ from their expected verdict "
          f"under some offset")
    for claim, row in found.items():
        print(f"\n{claim} (expected {row['expected']}):")
        for name, seen in row["by_offset"].items():
            text = "not decided" if seen is None else f"{seen['verdict']}: {seen['reason']}"
            print(f"  offset {name}: {text[:300]}")
    if args.out:
        Path(args.out).write_text(json.dumps({"pattern": args.pattern, "offsets": list(columns), "claims": claims,
                                              "flips": found}, indent=2))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
