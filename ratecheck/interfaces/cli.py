"""The ``ratecheck`` command: list, describe, check, report, run, cache.

Exit status: 0 when every verdict is the one its claim expects, 1 when some verdict is unexpected
(an ERROR verdict too: a run or search a claim needs failed; the other claims are still decided),
2 on bad usage or input (an unknown pattern, a malformed or invalid parameter, a file given as the
cache directory), 3 when nothing could run (every claim's runs failed) or the cluster fails, 130 on
Ctrl-C (finished runs stay cached).
``--json`` prints machine-readable output instead of tables.

Each command imports its machinery inside its function (start-up: `ratecheck --help` and a usage
error answer without loading sympy, the engine or the store).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..mutate.command import register as register_mutate
from .cli_options import check_run_options, option_problem
from .cli_text import _parse_value, _table

DEFAULT_CACHE = ".ratecheck-cache"
DEFAULT_REPORTS = "reports"
WIDTH = 100  # the terminal tables fit this many columns
EXIT_OK, EXIT_UNEXPECTED, EXIT_USAGE, EXIT_FAILURE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(Exception):
    """Bad usage or input: reported in one line, exit status 2."""


class RunFailure(Exception):
    """A run or the cluster failed: reported in one line, exit status 3."""


def _parse_assignments(items: Sequence[str] | None, flag: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"{flag} expects KEY=VALUE with a non-empty KEY, got {item!r}")
        if key in out:
            raise UsageError(f"{flag} sets {key} twice")
        out[key] = _parse_value(value.strip())
    return out


# -- sources (issue #9) ---------------------------------------------------------------------------


def _add_paper_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paper", action="append", default=[], metavar="MODULE_OR_PATH",
                   help="also register a paper/algorithm/problem module or .py file (repeatable)")
    p.add_argument("--skip-plugin", action="append", default=[], metavar="DIST[:ENTRY_POINT]",
                   help="do not load this installed plugin (a distribution, or one of its entry points; "
                        "repeatable or comma-separated); also RATECHECK_SKIP_PLUGINS=A,B")


def _registry(args: argparse.Namespace, papers: bool = True):
    """The registry with the --paper sources added: a source or an installed plugin that fails ends
    the command (exit 2), unless the plugin is skipped (--skip-plugin, RATECHECK_SKIP_PLUGINS)."""
    from ratecheck.registry import SKIP_ENV, RegistryError, default, skipped_plugins

    if getattr(args, "skip_plugin", None):  # through the environment, so that worker processes skip them too
        os.environ[SKIP_ENV] = ",".join(skipped_plugins() + args.skip_plugin)
    registry = default()
    for spec in getattr(args, "paper", None) or ():
        try:
            registry.add_source(spec, papers=papers)
        except RegistryError as exc:
            raise UsageError(str(exc)) from None
    alone = papers and registry.named_paper(getattr(args, "pattern", None))  # `check PAPER`: no other paper
    registry.ensure(*(() if papers and not alone else ("algorithm", "problem")))
    broken = registry.plugin_errors
    if broken:  # a plugin the user installed must not silently drop out of what is checked
        skip = ",".join(e.entry_point.spec for e in broken if e.entry_point is not None)
        raise UsageError("; ".join(str(e) for e in broken) + f" (to go on without it: --skip-plugin {skip}, "
                         f"or RATECHECK_SKIP_PLUGINS={skip})")
    return registry


# -- list -------------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    from ratecheck.assumptions import admissible_families, family_assumptions

    registry = _registry(args)
    papers = registry.items("paper")
    families = family_assumptions(registry)
    data: dict[str, Any] = {
        "papers": [{"paper": i.name, "title": i.obj.title, "source": i.obj.seed, "origin": i.origin} for i in papers],
        "theorems": [
            {"id": t.id, "title": t.title, "source": str(t.source), "bounds": list(t.versions),
             "requires": [str(a) for a in t.requires], "families": admissible_families(t, families)}
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
    print(_table([[p["paper"], p["title"], p["source"], p["origin"]] for p in data["papers"]],
                 ["paper", "title", "source", "origin"], width=WIDTH, stretch=1))
    print("\nTheorems:")
    print(_table([[t["id"], t["title"], ", ".join(t["bounds"])] for t in data["theorems"]],
                 ["theorem", "title", "bounds"], width=WIDTH, stretch=1))
    print("\nWhich families certify what each theorem requires (ratecheck.assumptions):")
    print(_table([[t["id"], ", ".join(t["families"]) if t["requires"] else "(requires not declared)"]
                  for t in data["theorems"]], ["theorem", "families"], width=WIDTH, stretch=1))
    print("\nClaims:")
    print(_table([[c["id"], c["kind"], c["expect"], c["title"]] for c in data["claims"]],
                 ["claim", "kind", "expect", "title"], width=WIDTH))
    print("\nProblems:")
    print(_table([[name, origin] for name, origin in data["problem_origins"].items()], ["family", "origin"],
                 width=WIDTH, stretch=1))
    print("\nAlgorithms:")
    print(_table([[a["name"], a["origin"]] for a in data["algorithms"]], ["algorithm", "origin"],
                 width=WIDTH, stretch=1))
    return 0


# -- check / report -----------------------------------------------------------------------------


def _store(args: argparse.Namespace):
    from ratecheck.model.store import NullStore, Store

    if getattr(args, "no_cache", False):
        return NullStore("")
    try:
        return Store(args.cache_dir)
    except (NotADirectoryError, ValueError) as exc:
        raise UsageError(f"--cache-dir: {exc}") from None


def _outcomes(args: argparse.Namespace):
    from ratecheck.claims import PROFILES
    from ratecheck.runner.executors import make_executor
    from ratecheck.runner.sweep import check_claims, load_plans

    profile = PROFILES["full" if args.full else "quick"]
    if getattr(args, "seed_offset", 0):
        profile = dataclasses.replace(profile, seed_offset=args.seed_offset)
    _derivations_beside_runs(args)
    registry = _registry(args)
    args.store = _store(args)
    try:
        claims = registry.select_claims(args.pattern)
        load_plans(claims, profile, args.store)  # planning is a stored derivation too (issue #19)
        registry.plan(claims, profile)  # unknown algorithm or problem: say which claim, before any run
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    args.stats = {"reused": 0, "computed": 0}
    started = time.perf_counter()
    try:
        executor = make_executor(jobs=args.jobs, dask=args.dask, dask_local=args.dask_local)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    with executor:
        outcomes = check_claims(
            claims, profile, store=args.store, executor=executor,
            progress=not getattr(args, "json", False), stats=args.stats,
        )
    return profile, outcomes, time.perf_counter() - started


def _derivations_beside_runs(args: argparse.Namespace) -> None:
    """Keep sympy's derived orders and tables (ratecheck.derivations) as records of the run cache,
    so that a cached check does no sympy work and `cache clear` removes them (unless
    RATECHECK_SYMPY_CACHE names another place). Set before the papers load: they derive at import."""
    from ratecheck.derivations import ENV

    if getattr(args, "no_cache", False) or ENV in os.environ:
        return
    os.environ[ENV] = str(Path(args.cache_dir))


def _runs_line(args: argparse.Namespace) -> str:
    stats = getattr(args, "stats", None) or {}
    return f"runs: {stats.get('reused', 0)} reused from the cache, {stats.get('computed', 0)} computed"


def _write_report(args, profile, outcomes, seconds: float) -> Path:
    from ratecheck.report.command import write

    return write(args, profile, outcomes, seconds)


_ZERO_CI = re.compile(r"(\d+% )?CI \[([^,\]]+), \2\]")


def plain_reason(reason: str) -> str:
    """A claim's reason for the terminal: a confidence interval of zero width (every replica gave
    the same number, e.g. noise-free runs) is said as 'deterministic' instead."""
    return _ZERO_CI.sub(lambda m: f"deterministic ({m.group(2).strip()})", reason)


def _print_outcomes(outcomes, verbose: bool = False) -> None:
    from ratecheck.report.counts import UNEXPECTED, tally

    rows = []
    categories = tally(outcomes).categories  # the report's categories (erratum, negative control, ...)
    for o in outcomes:
        category = categories[o.claim.id]
        status = f"UNEXPECTED (expected {o.expected})" if category == UNEXPECTED else f"ok, {category}"
        rows.append([o.claim.id, str(o.verdict), status, plain_reason(o.reason)])
    if not verbose:
        print(_table(rows, ["claim", "verdict", "status", "reason"], width=WIDTH))
        return
    from ratecheck.claims.power import power_text  # -v: the full reason and the rule's power, wrapped under its row
    from ratecheck.claims.terms import terms_text  # and a bound's dominant term at each point

    print(_table([r[:3] for r in rows], ["claim", "verdict", "status"], width=WIDTH, stretch=0))
    for r, o in zip(rows, outcomes):
        print(textwrap.fill(r[3] + power_text(o.evidence) + terms_text(o), WIDTH, initial_indent=f"  {r[0]}: ", subsequent_indent="    "))


def cmd_describe(args: argparse.Namespace) -> int:
    from ratecheck.interfaces.describe import command

    return command(args.name, _registry(args), as_json=args.json)


def cmd_new(args: argparse.Namespace) -> int:
    from ratecheck.interfaces.scaffold import ScaffoldError, new_package

    try:
        tex = Path(args.from_tex).read_text(encoding="utf-8", errors="replace") if args.from_tex else None
        written = new_package(args.name, Path(args.dir), tex=tex)
    except (ScaffoldError, OSError) as exc:
        raise UsageError(f"new: {exc}") from None
    print("\n".join(map(str, written)))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from ratecheck.report.counts import tally

    profile, outcomes, seconds = _outcomes(args)
    report = None if args.no_report else _write_report(args, profile, outcomes, seconds)
    unexpected = [o for o in outcomes if not o.ok]
    if args.json:
        print(json.dumps({
            "profile": profile.name,
            **({"seed_offset": profile.seed_offset} if profile.seed_offset else {}),
            "seconds": round(seconds, 2),
            "report": str(report) if report else None,
            "ok": not unexpected,
            "runs": dict(args.stats),
            "counts": tally(outcomes).to_dict(),  # the report's counts (ratecheck.report.counts)
            "claims": [o.to_dict() for o in outcomes],
        }, indent=2, allow_nan=False, default=str))
    else:
        _print_outcomes(outcomes, verbose=args.verbose)
        print("\n" + textwrap.fill(f"{tally(outcomes).sentence()} {len(outcomes)} outcomes in {seconds:.1f}s "
                                   f"({profile.name} profile).", WIDTH))
        print(_runs_line(args))
        if report:
            print(f"report: {report}")
        if unexpected:
            from ratecheck.claims.explain import describe

            print("\nUnexpected verdicts:")
            for o in unexpected:
                print(plain_reason(describe(o)) + "\n")
    errors = [o for o in outcomes if str(o.verdict) == "ERROR"]
    if outcomes and len(errors) == len(outcomes):  # nothing could run: a failure, not a verdict
        return _fail(EXIT_FAILURE, f"a run failed, and no claim could be decided: {errors[0].reason}")
    return EXIT_UNEXPECTED if unexpected else EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    profile, outcomes, seconds = _outcomes(args)
    print(f"report: {_write_report(args, profile, outcomes, seconds)}")
    print(_runs_line(args))
    return EXIT_OK


# -- run ----------------------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    import numpy as np

    from ratecheck.registry import make_algorithm, make_problem
    from ratecheck.simulate.engine import run

    _registry(args, papers=False)
    algorithm_params = _parse_assignments(args.set, "--set")
    problem_params = _parse_assignments(args.problem_set, "--problem-set")
    try:
        algorithm = make_algorithm(args.algorithm, algorithm_params)
        problem = make_problem(args.problem, problem_params)
        trace = run(algorithm, problem, args.rounds, replicas=args.replicas, seed=args.seed, progress=True,
                    mode=args.mode)  # issue #8: --exact / --auto
    except (ValueError, TypeError) as exc:  # a declaration refused an input: the message names it
        raise UsageError(str(exc)) from None
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
        return EXIT_OK
    print(f"{algorithm.name} on {problem.family}: {trace.config.rounds} rounds, {trace.replicas} replicas, "
          f"{trace.info['wall_seconds']:.2f}s")
    print(_table([[k, f"{v['mean']:.6g}" if v["mean"] is not None else "nan",
                   f"{v['std']:.3g}" if v["std"] is not None else "nan"] for k, v in summary.items()],
                 ["measure (after last round)", "replica mean", "replica std"]))
    print("counters: " + ", ".join(f"{k}={v:g}" for k, v in counters.items()))
    if trace.exact or "exact_fallback" in trace.info:  # issue #8
        print("exact expectations (one row, no spread)" if trace.exact else trace.info["exact_fallback"])
    if trace.diverged_count:
        rounds = sorted(set(trace.diverged_round[trace.diverged_round >= 0].tolist()))
        print(f"diverged: {trace.diverged_count} of {trace.replicas} replicas (rounds {rounds})")
    return EXIT_OK


# -- cache ----------------------------------------------------------------------------------------


def cmd_cache(args: argparse.Namespace) -> int:
    from ratecheck.interfaces.cli_cache import cache_command

    return cache_command(args, _store(args))


# -- hunt (issue #13) ----------------------------------------------------------------------------


def cmd_hunt(args: argparse.Namespace) -> int:
    """Search for an admissible instance on which a theorem's bound breaks; exit 0 either way
    (a found counterexample is a finding, not a failure of the command)."""
    from ratecheck.runner.hunt import hunt
    from ratecheck.runner.sweep import run_configs

    registry = _registry(args)
    spaces = {s.id: s for paper in registry.papers().values() for s in paper.spaces}
    if args.theorem not in spaces:
        raise UsageError(f"no search space for theorem {args.theorem!r}; theorems with one: {sorted(spaces)}")
    space = spaces[args.theorem]
    version = args.bound or space.theorem.versions[0]
    if version not in space.theorem.versions:
        raise UsageError(f"theorem {space.id} has no bound {version!r}; its bounds: {list(space.theorem.versions)}")
    if args.examples is not None and (problem := option_problem("examples", args.examples)):
        raise UsageError(problem)
    if args.budget is not None and (problem := option_problem("budget", args.budget)):
        raise UsageError(problem)
    args.store = _store(args)
    database = None if args.no_cache else Path(args.cache_dir) / "hunts"

    def run(config):
        return run_configs([config], store=args.store, progress=False)[config.key()]

    def progress(probe) -> None:
        if not args.json:
            mark = "BREAKS" if probe.breaks else ""
            print(f"  measure/bound {probe.ratio:10.4g}  T={int(probe.config.rounds):<6d} {mark}", file=sys.stderr)

    result = hunt(space, version, examples=args.examples or 100, budget=args.budget, seed=args.seed,
                  run=run, database=database, progress=progress)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, default=str))
        return EXIT_OK
    head = (f"{space.id}, bound '{version}': {result.examples} admissible instances in {result.seconds:.1f}s "
            f"({result.rejected} drawn outside the conditions); stopped: {result.stopped}")
    print(head)
    if result.best is None:
        if result.truncated:
            print(f"the budget of {args.budget:g} s ran out before any admissible instance was run: "
                  "give a larger --budget")
        else:
            print("no admissible instance was drawn: the search space misses the theorem's conditions")
        return EXIT_OK
    best = result.best
    what = "COUNTEREXAMPLE (shrunk)" if result.found else "no counterexample; the largest ratio seen"
    print(f"{what}: measure/bound = {best.ratio:.4g} (mean {best.mean:.4g}, lower confidence bound "
          f"{best.lcb:.4g}, bound {best.bound:.4g})")
    print("instance: " + json.dumps(best.instance, sort_keys=True, default=str))
    print(_table([[c.name, f"{c.lhs:.4g}", f"{c.rhs:.4g}", f"{c.margin:.3g}", "yes" if c.holds else "NO"]
                  for c in best.evaluation.conditions], ["condition", "lhs", "rhs", "margin", "holds"], width=WIDTH))
    print(f"reproduce: {result.command}")
    return EXIT_OK


# -- parser ---------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    from ratecheck.report.command import add_options as report_options
    from ratecheck.report.command import register_export

    parser = argparse.ArgumentParser(prog="ratecheck", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="papers, theorems, claims, problems, algorithms")
    p.add_argument("--json", action="store_true")
    _add_paper_option(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("describe", help="parameters, constants, conditions, bounds, orders of a registered name")
    p.add_argument("name", help="an algorithm, family, paper, theorem or claim (fedavg, defedavg.theorem2)")
    p.add_argument("--json", action="store_true")
    _add_paper_option(p)
    p.set_defaults(func=cmd_describe)

    p = sub.add_parser("new", help="write an installable plugin package NAME that passes its check and tests")
    p.add_argument("name")
    p.add_argument("--dir", default=".", help="folder to write NAME/ into (default: here)")
    p.add_argument("--from-tex", metavar="FILE", help="also draft the theorems of a LaTeX source")
    p.set_defaults(func=cmd_new)

    for name, func, helptext in (
        ("check", cmd_check, "run registered claims and print verdicts (exit 1 on an unexpected verdict)"),
        ("report", cmd_report, "write the Markdown/HTML report (runs what the cache lacks)"),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("pattern", nargs="?", help="glob or substring of claim ids / papers")
        prof = p.add_mutually_exclusive_group()
        prof.add_argument("--quick", action="store_true", help="quick profile (default)")
        prof.add_argument("--full", action="store_true", help="full profile: larger grids, more replicas")
        p.add_argument("--jobs", type=int, default=None,
                       help="worker processes (default: all cores; 1 runs serially; more than the cores "
                            "is capped at them unless --force-jobs)")
        p.add_argument("--force-jobs", action="store_true", help="use --jobs even if it exceeds the cores")
        p.add_argument("--dask", metavar="ADDRESS", help="run on the Dask scheduler at ADDRESS")
        p.add_argument("--dask-local", action="store_true", help="start a local Dask cluster")
        p.add_argument("--cache-dir", default=DEFAULT_CACHE, help=f"run cache (default {DEFAULT_CACHE})")
        p.add_argument("--no-cache", action="store_true", help="ignore the cache")
        p.add_argument("--report-dir", default=DEFAULT_REPORTS, help=f"report directory (default {DEFAULT_REPORTS})")
        _add_paper_option(p)
        report_options(p)
        if name == "check":
            p.add_argument("--no-report", action="store_true", help="do not write the report")
            p.add_argument("--json", action="store_true", help="machine-readable output")
            p.add_argument("-v", "--verbose", action="store_true", help="full reasons, wrapped")
            p.add_argument("--seed-offset", type=int, default=0, metavar="N",
                           help="add N to the seed of every Monte-Carlo run and search (default 0: the registered "
                                "verdicts; tools/seed_stability.py compares several)")
        p.set_defaults(func=func)

    register_export(sub, _add_paper_option, _outcomes, DEFAULT_CACHE, UsageError)

    p = sub.add_parser("run", help="one run with a progress bar; prints the final measures")
    p.add_argument("algorithm")
    p.add_argument("--problem", required=True, help="problem family (see `ratecheck list`)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="algorithm parameter")
    p.add_argument("--problem-set", action="append", metavar="KEY=VALUE", help="problem parameter")
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--replicas", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    # issue #8: exact expectations (ratecheck.exact); --auto falls back to Monte Carlo, saying why
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--exact", dest="mode", action="store_const", const="exact", default="monte_carlo",
                      help="exact expectations by moment propagation (linear-Gaussian runs only)")
    mode.add_argument("--auto", dest="mode", action="store_const", const="auto",
                      help="exact where supported, Monte Carlo otherwise")
    _add_paper_option(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("hunt", help="search for an instance, within a theorem's conditions, that breaks its bound")
    p.add_argument("theorem", help="theorem id with a search space (see `ratecheck list`)")
    p.add_argument("--bound", help="bound version (default: the theorem's first)")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--examples", type=int, help="admissible instances to run (default 100)")
    limit.add_argument("--budget", type=float, metavar="SECONDS", help="stop running new instances after this")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cache-dir", default=DEFAULT_CACHE, help=f"run cache and example database (default {DEFAULT_CACHE})")
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--json", action="store_true")
    _add_paper_option(p)
    p.set_defaults(func=cmd_hunt)

    register_mutate(sub, DEFAULT_CACHE, UsageError)  # issue #23: ratecheck.mutate.command

    p = sub.add_parser("cache", help="show or manage the run cache: info, clear, prune")
    p.add_argument("action", choices=("info", "clear", "prune"), nargs="?", default="info",
                   help="info (default): entries, size, stale and corrupt files; clear: remove "
                        "everything; prune: remove entries of changed code, corrupt and stale temp files")
    p.add_argument("--cache-dir", default=DEFAULT_CACHE, help=f"run cache (default {DEFAULT_CACHE})")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_cache, no_cache=False)
    return parser


def _check_run_options(args: argparse.Namespace) -> str | None:
    return check_run_options(args, _store, UsageError)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: --help exits 0, a usage error 2
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_USAGE
    # -- options that apply after parsing (other helpers add theirs here, one call each) ----------
    problem = _check_run_options(args)
    if problem:
        return _fail(EXIT_USAGE, problem)
    # ---------------------------------------------------------------------------------------------
    from ratecheck.model.interrupts import cli_interrupts

    with cli_interrupts():
        return _run_command(args)


def _run_command(args: argparse.Namespace) -> int:
    from ratecheck.model.interrupts import describe, is_foreign_exit, raised_in

    try:
        try:
            return int(args.func(args) or 0)
        except BaseException as exc:
            if not is_foreign_exit(exc):
                raise
            where = raised_in(exc)  # plugin code ended the command: a broken plugin, never success
            return _fail(EXIT_USAGE, f"a plugin broke the command: {describe(exc)}" + (f" at {where}" if where else ""))
    except UsageError as exc:
        return _fail(EXIT_USAGE, str(exc))
    except KeyboardInterrupt:
        store: Any = getattr(args, "store", None)
        stored = (getattr(args, "stats", None) or {}).get("computed", getattr(store, "puts", 0))  # runs, not plans
        where = f" in {store.root}" if stored and getattr(store, "root", None) else ""
        return _fail(EXIT_INTERRUPTED, f"interrupted: {stored} runs stored{where}, rerun to resume")
    except BrokenPipeError:  # `ratecheck list | head`: the reader left, which is not an error
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:  # a run or the cluster failed: one line, no traceback
        if os.environ.get("RATECHECK_TRACEBACK"):  # for debugging the package itself
            raise
        return _fail(EXIT_FAILURE, _failure_message(exc, args))


def _fail(code: int, message: str) -> int:
    print(f"ratecheck: {message}", file=sys.stderr)
    return code


def _failure_message(exc: BaseException, args: argparse.Namespace) -> str:
    """One line for a failed run or cluster, saying what is kept."""
    from ratecheck.runner.executors import JobError

    stored = (getattr(args, "stats", None) or {}).get("computed", 0)  # runs, not stored plans
    kept = f" ({stored} finished runs are cached, rerun to resume)" if stored else ""
    if isinstance(exc, JobError):
        return f"a run failed{kept}: {exc}"
    if isinstance(exc, (OSError, TimeoutError)) and getattr(args, "dask", None):
        return f"cannot use the Dask scheduler at {args.dask}: {type(exc).__name__}: {exc}{kept}"
    return f"failed{kept}: {type(exc).__name__}: {exc}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
