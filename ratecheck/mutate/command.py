"""``ratecheck mutate TARGET``: how many single-token bugs of a module the claims that use it catch.

TARGET is a module (``ratecheck.algorithms.fedavg``), a .py file (a plugin's module, loaded from its
path: its package folder goes on the path, nothing is installed), a registered algorithm or problem
family (its defining module) or a theorem id (the module that defines it). The claims that use the
target are those whose runs' code identity (ratecheck.runner.identity: the import closure of the algorithm,
the family and the engine) or whose own modules' import closure holds the module.

Each mutant (ratecheck.mutate.mutants) is written to a temporary folder and served in place of the
module by an import hook, in a fresh process and its pool workers (ratecheck.mutate.hook); the user's
file is never touched, so an interrupt leaves nothing behind (the temporary folder goes with the
command). The unmutated code's outcomes are the baseline; what a mutant's outcomes show (caught by FAIL,
raises, caught, broken, timeout, crashed, survived, equivalent) and the two scores (strict: FAIL over the
non-equivalent mutants; power: FAIL over those that run to completion): ratecheck.mutate.scoring.

Speed: the unmutated check records each claim's compute cost (ratecheck.mutate.runner); a mutant's
claims are decided cheapest first, in groups of 1, 1, 2, 4, ... claims, and its check stops after the
group holding its first new FAIL (``--all-claims``: every claim at once). A mutant no claim FAILs
decides every claim anyway, since equivalence needs all of them. Mutants run ``--jobs`` at a time (each
check serial), their runs are stored under their own code identity (a second command reuses them), and
each has a time limit (``--timeout``; default 5x the unmutated check's compute time + 60 s), past which
it is killed with its workers and reported as a timeout. The time
limit is a tool budget: it decides how a mutant is reported, never a claim's verdict.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .mutants import Mutant, mutants, select
from .scoring import STATUSES, _line, classify, moved, order, roundoff, score, text


@dataclass(frozen=True)
class Target:
    """The module to mutate: its import name, its file, and the folder to put on the path (a plugin's)."""

    module: str
    path: Path
    root: Path | None = None


def resolve(target: str, sources: list[str]) -> Target:
    """The module a TARGET names (see the module's docstring); ValueError when it names none."""
    path = Path(target)
    if target.endswith(".py") or path.is_file():
        if not path.is_file():
            raise ValueError(f"no such file: {target}")
        path = path.resolve()
        parts, folder = [path.stem], path.parent
        while (folder / "__init__.py").is_file():
            parts.insert(0, folder.name)
            folder = folder.parent
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
        return Target(".".join(parts), path, folder)
    from ratecheck.registry import default  # start-up, as in claims_using

    registry = default()
    for source in sources:
        registry.add_source(source)
    module = None
    for kind in ("algorithm", "problem"):
        for item in registry.items(kind):
            if item.name == target:
                module = getattr(item.obj, "__module__", None)
    if module is None:
        theorems = {t.id: t for t in registry.theorems()}
        if target in theorems:
            module = _defining_module(theorems[target])
    name = module or target
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise ValueError(f"{target!r} is not a module, a .py file, a registered algorithm or family, or a theorem id")
    return Target(name, Path(spec.origin))


def _defining_module(obj: Any) -> str | None:
    for name, module in list(sys.modules.items()):
        if any(value is obj for value in vars(module).values() if not isinstance(value, type(sys))):
            return name
    return None


def claims_using(module: str, sources: list[str], profile_name: str) -> tuple[list[str], set[str]]:
    """Ids of the registered claims that use ``module``, and the names of its classes their runs execute
    (algorithms with their base classes, problem families). Through the registry first: the claims whose
    runs' algorithm (or a base class) or problem family is defined in it, or whose theorem is; when none
    does (a helper module), those whose runs' code identity or own modules' import closure hold it.
    (Every run's identity holds every algorithm module, through the engine's registry: the import graph
    alone would name every claim for each algorithm.) A helper module is first looked for in the import
    closure of the modules defining the runs' classes, which stops short of the registry: periodic.py is
    imported by fedbio.py's algorithms, so FedBiO's claims use it and DeFedAvg's do not."""
    # start-up: the CLI imports this module for every command; the registry loads when mutate runs
    from ratecheck.claims import PROFILES
    from ratecheck.registry import default
    from ratecheck.runner.identity import code_identity, direct_imports, import_closure

    registry = default()
    for source in sources:
        registry.add_source(source)
    profile = PROFILES[profile_name]
    direct, imported, closure, run = [], [], [], set()
    searches: list[Any] = []
    for claim in registry.claims():
        try:
            configs = claim.runs(profile)
        except Exception:  # a claim that plans through tasks (a hunt): its own modules decide
            configs = []
        if not configs and hasattr(claim, "instances"):  # a claim that reads problems, no run (ConstantsClaim)
            configs = claim.instances(profile)
        classes = [c for config in configs for c in getattr(_algorithm(registry, config.algorithm), "__mro__", ())]
        classes += [getattr(_problem(registry, config.problem), "__self__", None) for config in configs]
        defined = {c.__module__ for c in classes if c is not None}
        defined |= {getattr(_problem(registry, config.problem), "__module__", None) for config in configs}
        run |= {c.__name__ for c in classes if c is not None and c.__module__ == module}
        if claim.theorem is not None:
            defined.add(_defining_module(claim.theorem))
        if module in defined:
            direct.append(claim.id)
            continue
        own = [getattr(claim.configure, "__module__", None), _defining_module(claim.theorem) if claim.theorem else None]
        # the claim's own code (its kind, its pieces, its configure) importing the module: e.g. the cost claims'
        # replay of the sampling rule reads model/participation.py whatever their algorithms import
        pieces = [claim, *(getattr(claim, k, None) for k in ("plan", "reading", "statistic", "rule"))]
        code = {type(p).__module__ for p in pieces if p is not None} | {m for m in own if m}
        if (configs and module in import_closure(sorted(m for m in defined if m))) or any(
                module in direct_imports(m) for m in code):
            imported.append(claim.id)
            continue
        if module in import_closure([m for m in own if m]) or any(module in code_identity(c)["modules"] for c in configs):
            closure.append(claim.id)
            searches += [claim] if not configs else []
    if imported:  # a search's runs are known only when it runs: it goes with its paper's claims that use the module
        papers = {c.paper for c in registry.claims() if c.id in imported}
        imported += [c.id for c in searches if c.paper in papers]
    return direct or imported or closure, run


def _algorithms_defined(module: str) -> set[str]:
    """Names of the registered algorithm classes that ``module`` defines."""
    from ratecheck.registry import default  # start-up, as in claims_using

    return {item.obj.__name__ for item in default().items("algorithm") if getattr(item.obj, "__module__", "") == module}


def _algorithm(registry: Any, name: str) -> Any:
    try:
        return registry.algorithm(name)
    except Exception:  # an unknown name: its run fails and says why
        return None


def _problem(registry: Any, name: str) -> Any:
    try:
        return registry.problem(name)
    except Exception:
        return None


def run_claims(claims: list[str], args: argparse.Namespace, work: Path, tag: str, target: Target,
               mutant: Path | None, *, stop: dict[str, str] | None = None, timeout: float | None = None,
               jobs: int = 1, costs: bool = False, verdicts: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    """Decide ``claims`` in order in a fresh process (the mutant served when given; ``stop``: the unmutated
    verdicts, to stop at the first new FAIL; ``verdicts``: the unmutated verdicts, to find where a run that
    now ERRORs raised; ``timeout``: seconds before the process and its pool are killed).
    Returns the runner's output (ratecheck.mutate.runner.main; what was decided so far when it ended early)
    and how it ended: "" (finished), "broken", "timeout" or "crashed" with the last line of its error."""
    out = work / f"{tag}.json"
    spec = {"claims": claims, "module": target.module, "sources": list(args.paper), "profile": _profile(args),
            "cache_dir": str(args.cache_dir), "jobs": jobs, "out": str(out), "stop": stop, "costs": costs,
            "verdicts": verdicts}
    spec_path = work / f"{tag}.spec.json"
    spec_path.write_text(json.dumps(spec))
    env = dict(os.environ)
    env.pop("RATECHECK_MUTANT", None)
    if mutant is not None:
        env["RATECHECK_MUTANT"] = f"{target.module}={mutant}"
    if target.root is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(target.root), *filter(None, [env.get("PYTHONPATH")])])
    # its own session: a time limit or an interrupt ends the process with its pool workers
    proc = subprocess.Popen([sys.executable, "-m", "ratecheck.mutate.runner", str(spec_path)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    with _LIVE_LOCK:
        _LIVE.add(proc)
    ended = ""
    try:
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            _, err = proc.communicate()
            ended = f"timeout: killed after {timeout:.0f}s"
    except BaseException:  # Ctrl-C: end the child before the folder goes
        _kill(proc)
        raise
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)
    result: dict[str, Any] = json.loads(out.read_text()) if out.is_file() else {"registered": False, "outcomes": []}
    if not ended and proc.returncode != 0:
        lines = [line for line in err.strip().splitlines() if line.strip()]
        why = lines[-1] if lines else f"exit {proc.returncode}"
        ended = f"{'crashed' if result.get('registered') else 'broken'}: {why}"
    return result, ended


_LIVE: set[subprocess.Popen[str]] = set()  # the mutants' processes running now (several with --jobs)
_LIVE_LOCK = threading.Lock()


def _kill(proc: subprocess.Popen[str]) -> None:
    """End a runner and every process of its session (its pool's workers)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _profile(args: argparse.Namespace) -> str:
    return "full" if args.full else "quick"


def _chosen(found: list[Mutant], args: argparse.Namespace) -> list[Mutant]:
    """The mutants to run: those named by --mutant (an id, or its LINE:COL:KIND end), else the seeded draw."""
    if not args.mutant:
        return select(found, args.max_mutants, args.seed)
    wanted = set(args.mutant)
    chosen = [m for m in found if m.id in wanted or m.id.split(":", 1)[1] in wanted]
    unknown = wanted - {m.id for m in chosen} - {m.id.split(":", 1)[1] for m in chosen}
    if unknown:
        raise ValueError(f"no such mutant: {', '.join(sorted(unknown))} (ids are MODULE:LINE:COL:KIND, as --json prints)")
    return chosen


def mutate(args: argparse.Namespace) -> dict[str, Any]:
    """The whole command's result (what --json prints)."""
    from tqdm import tqdm

    target = resolve(args.target, list(args.paper))
    claims, classes_run = claims_using(target.module, list(args.paper), _profile(args))
    algorithms = _algorithms_defined(target.module)
    if args.claims:
        import fnmatch

        claims = [c for c in claims if fnmatch.fnmatch(c, args.claims) or args.claims in c]
    if not claims:
        raise ValueError(f"no registered claim uses {target.module} (a plugin's paper: add --paper MODULE)")
    original = target.path.read_text()
    found = mutants(original, target.module)
    chosen = _chosen(found, args)
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ratecheck-mutate-") as tmp:
        work = Path(tmp)
        if args.no_cache:  # a store of this command's own: nothing reused, nothing left behind
            args.cache_dir = work / "store"
        base, ended = run_claims(claims, args, work, "baseline", target, None, jobs=args.jobs, costs=True)
        if ended or not base.get("complete"):
            raise RuntimeError(f"the unmutated code's check failed: {ended}")
        baseline = {o["claim"]: o for o in base["outcomes"]}
        claims = order(base["costs"], base["exact"])
        timeout = args.timeout or TIMEOUT_FACTOR * max(base["seconds"], base["total_cost"]) + TIMEOUT_SLACK
        verdicts = {c: o["verdict"] for c, o in baseline.items()}
        stop = None if args.all_claims else verdicts
        bar = tqdm(total=len(chosen), desc=f"mutants of {target.module}", unit="mutant",
                   disable=args.json or None, file=sys.stderr)

        def judge(mutant: Mutant) -> dict[str, Any]:
            folder = work / f"m{mutant.index}"
            folder.mkdir()
            path = folder / target.path.name
            path.write_text(mutant.source)
            begun = time.perf_counter()
            out, ended = run_claims(claims, args, work, f"m{mutant.index}", target, path, stop=stop,
                                    timeout=timeout, verdicts=verdicts)
            status, changed = classify(baseline, out["outcomes"], ended.split(":")[0], bool(out.get("complete")))
            record = _record(mutant, original, target, status, changed, ended.partition(": ")[2], classes_run,
                             algorithms, len(out["outcomes"]), time.perf_counter() - begun)
            if status == "raises" and out.get("raised"):
                record["raised"] = out["raised"]
            if status == "survived":
                record["roundoff"] = roundoff(baseline, out["outcomes"])
                record["moved"] = moved(baseline, out["outcomes"])
            return record

        pool = ThreadPoolExecutor(max_workers=args.jobs)
        try:
            futures = [pool.submit(judge, m) for m in chosen]
            for future in as_completed(futures):
                results.append(future.result())
                bar.update(1)
                bar.set_postfix_str(f"caught by FAIL {sum(r['status'] == STATUSES[0] for r in results)}/{len(results)}")
                if bar.disable:  # no bar (not a terminal, or --json): one line per mutant on stderr instead
                    print(f"mutant {len(results)}/{len(chosen)}: {_line(results[-1], len(claims))}", file=sys.stderr,
                          flush=True)
        except BaseException:  # Ctrl-C: no new mutant, the running ones ended, then the folder goes
            pool.shutdown(wait=False, cancel_futures=True)
            with _LIVE_LOCK:
                live = list(_LIVE)
            for proc in live:
                _kill(proc)
            raise
        finally:
            pool.shutdown(wait=True)
            bar.close()
    results.sort(key=lambda r: r["index"])
    return {"target": args.target, "module": target.module, "path": str(target.path), "claims": claims,
            "profile": _profile(args), "mutants_found": len(found), "mutants_run": len(chosen),
            "max_mutants": args.max_mutants, "seed": args.seed, "all_claims": args.all_claims,
            "timeout": round(timeout, 1), "seconds": round(time.perf_counter() - started, 1),
            "score": score(results), "baseline": {c: o["verdict"] for c, o in baseline.items()},
            "claim_costs": base["costs"], "mutants": results}


TIMEOUT_FACTOR, TIMEOUT_SLACK = 5, 60.0  # the default time limit of a mutant: 5x the unmutated check + 60 s


def _record(mutant: Mutant, original: str, target: Target, status: str, changed: list[dict[str, str]],
            error: str, classes_run: set[str], algorithms: set[str], decided: int, seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {"id": mutant.id, "index": mutant.index, "kind": mutant.kind, "line": mutant.line,
                           "before": mutant.before, "after": mutant.after, "status": status, "caught_by": changed,
                           "decided": decided, "seconds": round(seconds, 1), "scope": mutant.scope,
                           "diff": mutant.diff(original, target.path.name)}
    if mutant.scope in algorithms:  # in an algorithm: do the claims run it? (if not, they cannot see the mutant)
        out["class_run"] = mutant.scope in classes_run
    if error:
        out["error"] = error
    return out


def cmd_mutate(args: argparse.Namespace) -> int:
    # start-up: cmd_mutate is registered with the CLI; its checks load only when it runs
    from ratecheck.interfaces.cli_options import default_jobs
    from ratecheck.params import ParamError, check_option

    try:  # through the options' one declaration, as check, run and hunt do
        check_option("mutate", "max_mutants", args.max_mutants)
        check_option("mutate", "timeout", args.timeout, declared="mutant_timeout")
        args.jobs = check_option("mutate", "jobs", default_jobs() if args.jobs is None else args.jobs)
    except ParamError as exc:
        raise args.usage_error(str(exc)) from None
    if not args.no_cache and "RATECHECK_SYMPY_CACHE" not in os.environ:  # derivations beside the runs, as check
        from importlib.metadata import version

        os.environ["RATECHECK_SYMPY_CACHE"] = str(Path(args.cache_dir) / "derivations" / f"sympy-{version('sympy')}.json")
    try:
        result = mutate(args)
    except ValueError as exc:
        raise args.usage_error(str(exc)) from None
    print(json.dumps(result, indent=2, default=str) if args.json else text(result))
    return 0


def register(sub: Any, cache_dir: str, usage_error: type[Exception]) -> None:
    """The ``mutate`` subcommand (cli.py: one registration line; ``usage_error`` ends it with exit 2)."""
    p = sub.add_parser("mutate", help="single-token mutants of a module, scored by the claims that use it")
    p.add_argument("target", help="module name, .py file, algorithm, problem family or theorem id")
    p.add_argument("--paper", action="append", default=[], metavar="MODULE_OR_PATH",
                   help="also register a paper/algorithm/problem module or .py file (repeatable)")
    p.add_argument("--claims", help="only the claims using the target that match this glob or substring")
    p.add_argument("--max-mutants", type=int, default=None, metavar="N",
                   help="run at most N mutants, drawn with --seed (default: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the --max-mutants draw (default 0)")
    p.add_argument("--full", action="store_true", help="full profile (default quick)")
    p.add_argument("--mutant", action="append", default=[], metavar="ID",
                   help="run this mutant (its id as --json prints it, or LINE:COL:KIND; repeatable) instead of a draw")
    p.add_argument("--all-claims", action="store_true",
                   help="decide every claim of every mutant (default: stop at a mutant's first new FAIL)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="kill a mutant's check after this long and report it as a timeout "
                        f"(default: {TIMEOUT_FACTOR}x the unmutated check's compute time + {TIMEOUT_SLACK:.0f} s)")
    p.add_argument("--jobs", type=int, default=None,
                   help="mutants checked at once, each serially; the unmutated check uses as many workers "
                        "(default: all cores)")
    p.add_argument("--cache-dir", default=cache_dir, help=f"run cache (default {cache_dir})")
    p.add_argument("--no-cache", action="store_true", help="a store of the command's own, deleted at the end")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_mutate, usage_error=usage_error)
