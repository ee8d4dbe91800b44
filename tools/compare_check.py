#!/usr/bin/env python3
"""Compare two `ratecheck check --json` outputs claim by claim.

    python tools/compare_check.py BEFORE.json AFTER.json [--rtol 1e-9] [--ignore KEY ...] [--all]

A refactor keeps every verdict and number: this prints, per claim, what differs (verdict, expected,
flags, reason, and every number of the evidence and points beyond --rtol), the claims only one side
has, and a summary line. Keys that legitimately change between runs (timings, cache counters) are
ignored by default; --ignore adds more. Exit status 0 when nothing differs, 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterator
from typing import Any

# Timings and store bookkeeping change with the machine and the cache, never with a verdict.
VOLATILE = {"seconds", "wall_seconds", "cpu_seconds", "reused", "computed", "runs", "elapsed"}


def _close(a: float, b: float, rtol: float) -> bool:
    if math.isnan(a) and math.isnan(b):
        return True
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-300) or a == b


def diff(a: Any, b: Any, path: str, rtol: float, ignore: set[str]) -> Iterator[str]:
    """Yield one line per difference between two JSON values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key in ignore:
                continue
            sub = f"{path}.{key}" if path else str(key)
            if key not in a:
                yield f"{sub}: only after ({_short(b[key])})"
            elif key not in b:
                yield f"{sub}: only before ({_short(a[key])})"
            else:
                yield from diff(a[key], b[key], sub, rtol, ignore)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{path}: length {len(a)} -> {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            yield from diff(x, y, f"{path}[{i}]", rtol, ignore)
    elif isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        if a != b:
            yield f"{path}: {_short(a)} -> {_short(b)}"
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if not _close(float(a), float(b), rtol):
            yield f"{path}: {a!r} -> {b!r}"
    elif a != b:
        yield f"{path}: {_short(a)} -> {_short(b)}"


def _short(v: Any, n: int = 160) -> str:
    s = json.dumps(v) if not isinstance(v, str) else repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rtol", type=float, default=1e-9, help="relative tolerance on numbers")
    ap.add_argument("--ignore", nargs="*", default=[], help="more keys to ignore anywhere")
    ap.add_argument("--all", action="store_true", help="every differing line, not the first 12 per claim")
    args = ap.parse_args(argv)
    ignore = VOLATILE | set(args.ignore)
    before = {c["claim"]: c for c in json.load(open(args.before))["claims"]}
    after = {c["claim"]: c for c in json.load(open(args.after))["claims"]}
    changed = 0
    for name in sorted(set(before) - set(after)):
        print(f"- {name}: only before (verdict {before[name]['verdict']})")
    for name in sorted(set(after) - set(before)):
        print(f"+ {name}: only after (verdict {after[name]['verdict']})")
    for name in sorted(set(before) & set(after)):
        lines = list(diff(before[name], after[name], "", args.rtol, ignore))
        if not lines:
            continue
        changed += 1
        b, a = before[name], after[name]
        head = f"~ {name}: {b['verdict']}/{b['expected']} -> {a['verdict']}/{a['expected']}"
        print(head + ("" if b["verdict"] == a["verdict"] else "   <-- VERDICT CHANGED"))
        shown = lines if args.all else lines[:12]
        for line in shown:
            print(f"    {line}")
        if len(lines) > len(shown):
            print(f"    ... {len(lines) - len(shown)} more (--all)")
    same = len(set(before) & set(after)) - changed
    print(f"{same} identical, {changed} differ, {len(set(before) - set(after))} removed, "
          f"{len(set(after) - set(before))} added (rtol {args.rtol:g})")
    return 0 if changed == 0 and set(before) == set(after) else 1


if __name__ == "__main__":
    sys.exit(main())
