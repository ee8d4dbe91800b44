"""The ``ratecheck`` command: list, check, report, run.

Exit status of ``check``: 0 when every verdict is the one its claim expects, 1 otherwise, 2 on bad
usage. ``--json`` prints machine-readable output instead of tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

DEFAULT_CACHE = ".ratecheck-cache"
DEFAULT_REPORTS = "reports"


def _parse_value(text: str) -> Any:
    """CLI values: JSON where it parses (numbers, true, null, lists), else the plain string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _parse_assignments(items: Sequence[str] | None, flag: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"ratecheck: {flag} expects key=value, got {item!r}")
        out[key.strip()] = _parse_value(value.strip())
    return out


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


# -- sources (issue #9) ---------------------------------------------------------------------------


def _add_paper_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paper", action="append", default=[], metavar="MODULE_OR_PATH",
                   help="also register a paper/algorithm/problem module or .py file (repeatable)")


def _registry(args: argparse.Namespace, papers: bool = True):
    """The registry with the --paper sources added: a source that fails ends the command (exit 2);
    an installed plugin that fails is reported, and the others are used."""
    from ratecheck.registry import RegistryError, default

    registry = default()
    for spec in getattr(args, "paper", None) or ():
        try:
            registry.add_source(spec, papers=papers)
        except RegistryError as exc:
            print(f"ratecheck: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    registry.ensure(*(() if papers else ("algorithm", "problem")))
    for error in registry.errors:
        print(f"ratecheck: warning: {error}", file=sys.stderr)
    return registry


# -- list -------------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    registry = _registry(args)
    papers = registry.items("paper")
    data = {
        "papers": [{"paper": i.name, "title": i.obj.title, "source": i.obj.seed, "origin": i.origin} for i in papers],
        "theorems": [
            {"id": t.id, "title": t.title, "source": str(t.source), "bounds": list(t.versions)}
            for t in registry.theorems()
        ],
        "claims": [
            {"id": c.id, "paper": c.paper, "kind": c.kind, "title": c.title, "expect": str(c.expect)}
            for c in registry.claims()
        ],
        "problems": [i.name for i in registry.items("problem")],
        "problem_origins": {i.name: i.origin for i in registry.items("problem")},
        "algorithms": [{"name": i.name, "source": i.obj.source, "origin": i.origin}
                       for i in registry.items("algorithm")],
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print("Papers:")
    for p in data["papers"]:
        print(f"  {p['paper']:<12} {p['title']}  [{p['source']}]  from {p['origin']}")
    print("\nTheorems:")
    for t in data["theorems"]:
        print(f"  {t['id']:<24} {t['title']}  (bounds: {', '.join(t['bounds'])})")
    print("\nClaims:")
    print(_table([[c["id"], c["kind"], c["expect"], c["title"]] for c in data["claims"]],
                 ["claim", "kind", "expect", "title"]))
    print("\nProblems:")
    for name, origin in data["problem_origins"].items():
        print(f"  {name:<20} from {origin}")
    print("\nAlgorithms:")
    for item in data["algorithms"]:
        print(f"  {item['name']:<20} from {item['origin']}")
    return 0


# -- check / report -----------------------------------------------------------------------------


def _store(args: argparse.Namespace):
    from ratecheck.store import NullStore, Store

    return NullStore("") if args.no_cache else Store(args.cache_dir)


def _outcomes(args: argparse.Namespace):
    from ratecheck.claims import PROFILES
    from ratecheck.executors import make_executor
    from ratecheck.sweep import check_claims

    profile = PROFILES["full" if args.full else "quick"]
    registry = _registry(args)
    try:
        claims = registry.select_claims(args.pattern)
        registry.plan(claims, profile)  # unknown algorithm or problem: say which claim, before any run
    except ValueError as exc:
        raise SystemExit(f"ratecheck: {exc}") from None
    started = time.perf_counter()
    with make_executor(jobs=args.jobs, dask=args.dask, dask_local=args.dask_local) as executor:
        outcomes = check_claims(
            claims, profile, store=_store(args), executor=executor,
            progress=not getattr(args, "json", False),
        )
    return profile, outcomes, time.perf_counter() - started


def _write_report(args, profile, outcomes, seconds: float) -> Path:
    from ratecheck import __version__, registry
    from ratecheck.report import write_report

    meta = {"wall_seconds": round(seconds, 1), "ratecheck": __version__, "jobs": args.jobs}
    return write_report(outcomes, args.report_dir, profile=profile, papers=registry.papers(), meta=meta)


def _print_outcomes(outcomes) -> None:
    rows = []
    for o in outcomes:
        status = "ok" if o.ok else "UNEXPECTED"
        if o.erratum:
            status = "ok (erratum confirmed)"
        rows.append([o.claim.id, str(o.verdict), str(o.expected), status, o.reason[:90]])
    print(_table(rows, ["claim", "verdict", "expected", "status", "reason"]))


def cmd_check(args: argparse.Namespace) -> int:
    profile, outcomes, seconds = _outcomes(args)
    report = None if args.no_report else _write_report(args, profile, outcomes, seconds)
    unexpected = [o for o in outcomes if not o.ok]
    if args.json:
        print(json.dumps({
            "profile": profile.name,
            "seconds": round(seconds, 2),
            "report": str(report) if report else None,
            "ok": not unexpected,
            "claims": [o.to_dict() for o in outcomes],
        }, indent=2, allow_nan=False, default=str))
    else:
        _print_outcomes(outcomes)
        print(f"\n{len(outcomes)} claims in {seconds:.1f}s ({profile.name} profile): "
              f"{len(outcomes) - len(unexpected)} as expected, {len(unexpected)} unexpected, "
              f"{sum(o.erratum for o in outcomes)} errata confirmed.")
        if report:
            print(f"report: {report}")
        if unexpected:
            from ratecheck.explain import describe

            print("\nUnexpected verdicts:")
            for o in unexpected:
                print(describe(o) + "\n")
    return 1 if unexpected else 0


def cmd_report(args: argparse.Namespace) -> int:
    profile, outcomes, seconds = _outcomes(args)
    print(f"report: {_write_report(args, profile, outcomes, seconds)}")
    return 0


# -- run ----------------------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    from ratecheck.engine import run
    from ratecheck.registry import make_algorithm, make_problem

    _registry(args, papers=False)
    try:
        algorithm = make_algorithm(args.algorithm, _parse_assignments(args.set, "--set"))
        problem = make_problem(args.problem, _parse_assignments(args.problem_set, "--problem-set"))
        trace = run(algorithm, problem, args.rounds, replicas=args.replicas, seed=args.seed, progress=True)
    except ValueError as exc:
        print(f"ratecheck: {exc}", file=sys.stderr)
        return 2
    finals = {k: v[-1] for k, v in trace.measures.items()}
    summary = {
        name: {"mean": float(np.nanmean(v)) if np.isfinite(v).any() else None,
               "std": float(np.nanstd(v)) if np.isfinite(v).any() else None}
        for name, v in finals.items()
    }
    counters = {k: float(v[-1]) for k, v in trace.counters.items()}
    if args.json:
        print(json.dumps({"config": trace.config.to_dict(), "final": summary, "counters": counters,
                          "diverged": trace.diverged_round.tolist(), "info": trace.info}, indent=2, default=str))
        return 0
    print(f"{algorithm.name} on {problem.family}: {trace.config.rounds} rounds, {trace.replicas} replicas, "
          f"{trace.info['wall_seconds']:.2f}s")
    print(_table([[k, f"{v['mean']:.6g}" if v["mean"] is not None else "nan",
                   f"{v['std']:.3g}" if v["std"] is not None else "nan"] for k, v in summary.items()],
                 ["measure (after last round)", "replica mean", "replica std"]))
    print("counters: " + ", ".join(f"{k}={v:g}" for k, v in counters.items()))
    if trace.diverged_count:
        rounds = sorted(set(trace.diverged_round[trace.diverged_round >= 0].tolist()))
        print(f"diverged: {trace.diverged_count} of {trace.replicas} replicas (rounds {rounds})")
    return 0


# -- parser ---------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ratecheck", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="papers, theorems, claims, problems, algorithms")
    p.add_argument("--json", action="store_true")
    _add_paper_option(p)
    p.set_defaults(func=cmd_list)

    for name, func, helptext in (
        ("check", cmd_check, "run registered claims and print verdicts (exit 1 on an unexpected verdict)"),
        ("report", cmd_report, "write the Markdown/HTML report (runs what the cache lacks)"),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("pattern", nargs="?", help="glob or substring of claim ids / papers")
        prof = p.add_mutually_exclusive_group()
        prof.add_argument("--quick", action="store_true", help="quick profile (default)")
        prof.add_argument("--full", action="store_true", help="full profile: larger grids, more replicas")
        p.add_argument("--jobs", type=int, default=1, help="process pool size (default 1: serial)")
        p.add_argument("--dask", metavar="ADDRESS", help="run on the Dask scheduler at ADDRESS")
        p.add_argument("--dask-local", action="store_true", help="start a local Dask cluster")
        p.add_argument("--cache-dir", default=DEFAULT_CACHE, help=f"run cache (default {DEFAULT_CACHE})")
        p.add_argument("--no-cache", action="store_true", help="ignore the cache")
        p.add_argument("--report-dir", default=DEFAULT_REPORTS, help=f"report directory (default {DEFAULT_REPORTS})")
        _add_paper_option(p)
        if name == "check":
            p.add_argument("--no-report", action="store_true", help="do not write the report")
            p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(func=func)

    p = sub.add_parser("run", help="one run with a progress bar; prints the final measures")
    p.add_argument("algorithm")
    p.add_argument("--problem", required=True, help="problem family (see `ratecheck list`)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="algorithm parameter")
    p.add_argument("--problem-set", action="append", metavar="KEY=VALUE", help="problem parameter")
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--replicas", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    _add_paper_option(p)
    p.set_defaults(func=cmd_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from ratecheck.executors import JobError

    args = build_parser().parse_args(argv)
    if getattr(args, "jobs", 1) is not None and getattr(args, "jobs", 1) < 1:
        print(f"ratecheck: --jobs must be >= 1, got {args.jobs}", file=sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except JobError as exc:  # a claim asked for a run that cannot be made: say which, keep the cache
        print(f"ratecheck: a run failed, finished runs are cached: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `ratecheck list | head`: the reader left, which is not an error
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
