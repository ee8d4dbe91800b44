"""``ratecheck mutate TARGET``: how many single-token bugs of a module the claims that use it catch.

TARGET is a module (``ratecheck.algorithms.fedavg``), a .py file (a plugin's module, loaded from its
path: its package folder goes on the path, nothing is installed), a registered algorithm or problem
family (its defining module) or a theorem id (the module that defines it). The claims that use the
target are those whose runs' code identity (ratecheck.runner.identity: the import closure of the algorithm,
the family and the engine) or whose own modules' import closure holds the module.

Each mutant (ratecheck.mutate.mutants) is written to a temporary folder and served in place of the
module by an import hook, in a fresh process and its pool workers (ratecheck.mutate.hook); the user's
file is never touched, so an interrupt leaves nothing behind (the temporary folder goes with the
command). The unmutated code's outcomes are the baseline; a mutant is

* caught by FAIL when some claim's verdict becomes FAIL, caught when some verdict changes otherwise
  (to INCONCLUSIVE, ERROR, or a confirmed erratum's FAIL lost), crashed when its check could not run;
* equivalent when every claim's outcome is identical to the baseline, numbers included (config keys
  aside): the claims' runs computed exactly the same output, so no claim can tell it apart;
* surviving otherwise: the numbers moved and no verdict did. Survivors are printed as diffs.

The score is the fraction of non-equivalent mutants caught by a FAIL (issue #23's target: 90%).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .mutants import Mutant, mutants, select

STATUSES = ("caught by FAIL", "caught", "crashed", "survived", "equivalent")


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
    from ratecheck.registry import default

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
    alone would name every claim for each algorithm.)"""
    from ratecheck.claims import PROFILES
    from ratecheck.registry import default
    from ratecheck.runner.identity import code_identity, import_closure

    registry = default()
    for source in sources:
        registry.add_source(source)
    profile = PROFILES[profile_name]
    direct, closure, run = [], [], set()
    for claim in registry.claims():
        try:
            configs = claim.runs(profile)
        except Exception:  # a claim that plans through tasks (a hunt): its own modules decide
            configs = []
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
        if module in import_closure([m for m in own if m]) or any(module in code_identity(c)["modules"] for c in configs):
            closure.append(claim.id)
    return direct or closure, run


def _algorithms_defined(module: str) -> set[str]:
    """Names of the registered algorithm classes that ``module`` defines."""
    from ratecheck.registry import default

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


def _comparable(outcome: dict[str, Any]) -> Any:
    """An outcome without what names the code (config keys) or the cache (runs reused/computed)."""
    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in ("config_key", "runs")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return strip(outcome)


def classify(baseline: dict[str, dict[str, Any]], outcomes: list[dict[str, Any]] | None) -> tuple[str, list[dict[str, str]]]:
    """(status, the claims whose verdict changed with their baseline and mutant verdicts)."""
    if outcomes is None:
        return "crashed", []
    changed = [{"claim": o["claim"], "baseline": baseline[o["claim"]]["verdict"], "verdict": o["verdict"]}
               for o in outcomes if o["verdict"] != baseline[o["claim"]]["verdict"]]
    if any(c["verdict"] == "FAIL" for c in changed):
        return "caught by FAIL", changed
    if changed:
        return "caught", changed
    if all(_comparable(o) == _comparable(baseline[o["claim"]]) for o in outcomes):
        return "equivalent", []
    return "survived", []


def run_claims(claims: list[str], args: argparse.Namespace, work: Path, tag: str, target: Target,
               mutant: Path | None) -> tuple[list[dict[str, Any]] | None, str]:
    """Decide ``claims`` in a fresh process (with the mutant served when given): (outcomes or None, error)."""
    out = work / f"{tag}.json"
    spec = {"claims": claims, "sources": list(args.paper), "profile": "full" if args.full else "quick",
            "cache_dir": None if args.no_cache else str(args.cache_dir), "jobs": args.jobs, "out": str(out)}
    spec_path = work / f"{tag}.spec.json"
    spec_path.write_text(json.dumps(spec))
    env = dict(os.environ)
    env.pop("RATECHECK_MUTANT", None)
    if mutant is not None:
        env["RATECHECK_MUTANT"] = f"{target.module}={mutant}"
    if target.root is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(target.root), *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.Popen([sys.executable, "-m", "ratecheck.mutate.runner", str(spec_path)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate()
    except BaseException:  # Ctrl-C: end the child (its pool ends with it) before the folder goes
        proc.terminate()
        proc.wait()
        raise
    if proc.returncode != 0 or not out.is_file():
        lines = [line for line in err.strip().splitlines() if line.strip()]
        return None, lines[-1] if lines else f"exit {proc.returncode}"
    return json.loads(out.read_text()), ""


def mutate(args: argparse.Namespace) -> dict[str, Any]:
    """The whole command's result (what --json prints)."""
    from tqdm import tqdm

    target = resolve(args.target, list(args.paper))
    claims, classes_run = claims_using(target.module, list(args.paper), "full" if args.full else "quick")
    algorithms = _algorithms_defined(target.module)
    if args.claims:
        import fnmatch

        claims = [c for c in claims if fnmatch.fnmatch(c, args.claims) or args.claims in c]
    if not claims:
        raise ValueError(f"no registered claim uses {target.module} (a plugin's paper: add --paper MODULE)")
    original = target.path.read_text()
    found = mutants(original, target.module)
    chosen = select(found, args.max_mutants, args.seed)
    started = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="ratecheck-mutate-") as tmp:
        work = Path(tmp)
        base, error = run_claims(claims, args, work, "baseline", target, None)
        if base is None:
            raise RuntimeError(f"the unmutated code's check failed: {error}")
        baseline = {o["claim"]: o for o in base}
        bar = tqdm(chosen, desc=f"mutants of {target.module}", unit="mutant", disable=args.json or None,
                   file=sys.stderr)
        for mutant in bar:
            folder = work / f"m{mutant.index}"
            folder.mkdir()
            path = folder / target.path.name
            path.write_text(mutant.source)
            outcomes, error = run_claims(claims, args, work, f"m{mutant.index}", target, path)
            status, changed = classify(baseline, outcomes)
            results.append(_record(mutant, original, target, status, changed, error, classes_run, algorithms))
            bar.set_postfix_str(f"caught by FAIL {sum(r['status'] == STATUSES[0] for r in results)}/{len(results)}")
            if bar.disable:  # no bar (not a terminal, or --json): one line per mutant on stderr instead
                print(f"mutant {len(results)}/{len(chosen)}: {_line(results[-1])}", file=sys.stderr, flush=True)
    return {"target": args.target, "module": target.module, "path": str(target.path), "claims": claims,
            "profile": "full" if args.full else "quick", "mutants_found": len(found), "mutants_run": len(chosen),
            "max_mutants": args.max_mutants, "seed": args.seed, "seconds": round(time.perf_counter() - started, 1),
            "score": score(results), "baseline": {c: o["verdict"] for c, o in baseline.items()}, "mutants": results}


def _record(mutant: Mutant, original: str, target: Target, status: str, changed: list[dict[str, str]],
            error: str, classes_run: set[str], algorithms: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": mutant.id, "kind": mutant.kind, "line": mutant.line, "before": mutant.before,
                           "after": mutant.after, "status": status, "caught_by": changed,
                           "scope": mutant.scope, "diff": mutant.diff(original, target.path.name)}
    if mutant.scope in algorithms:  # in an algorithm: do the claims run it? (if not, they cannot see the mutant)
        out["class_run"] = mutant.scope in classes_run
    if error:
        out["error"] = error
    return out


def score(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts by status and the score: caught by FAIL over the non-equivalent mutants."""
    counts = Counter(r["status"] for r in results)
    relevant = len(results) - counts["equivalent"]
    detected = counts["caught by FAIL"] + counts["caught"] + counts["crashed"]
    unrun = sum(r["status"] == "equivalent" and r.get("class_run") is False for r in results)
    return {**{s: counts[s] for s in STATUSES}, "equivalent_in_unrun_classes": unrun, "non_equivalent": relevant,
            "score": counts["caught by FAIL"] / relevant if relevant else None,
            "detected": detected / relevant if relevant else None}


def text(result: dict[str, Any]) -> str:
    """The terminal report: the score, each mutant's fate and the claim that caught it, survivors' diffs."""
    s = result["score"]
    lines = [f"{result['module']} ({result['path']}): {result['mutants_run']} of {result['mutants_found']} mutants "
             f"(seed {result['seed']}), {len(result['claims'])} claims, {result['profile']} profile, "
             f"{result['seconds']:.0f}s"]
    lines += [f"  {_line(r)}" for r in result["mutants"]]
    survivors = [r for r in result["mutants"] if r["status"] == "survived"]
    if survivors:
        lines.append("\nsurviving mutants:")
        lines += [r["diff"].rstrip() for r in survivors]
    pct = f"{s['score']:.0%}" if s["score"] is not None else "n/a"
    det = f"{s['detected']:.0%}" if s["detected"] is not None else "n/a"
    lines.append(f"\nscore: {s['caught by FAIL']} of {s['non_equivalent']} non-equivalent mutants caught by a FAIL "
                 f"({pct}); detected in any way {det}; {s['equivalent']} equivalent ({s['equivalent_in_unrun_classes']} in "
                 f"classes no claim runs), {s['survived']} survived, "
                 f"{s['caught']} caught without a FAIL, {s['crashed']} crashed")
    return "\n".join(lines)


def _line(r: dict[str, Any]) -> str:
    """One mutant's fate: where, what, and the first claim that caught it with its verdicts."""
    fails = [c for c in r["caught_by"] if c["verdict"] == "FAIL"]
    by = (fails or r["caught_by"] or [None])[0]
    what = f" by {by['claim']} ({by['baseline']} -> {by['verdict']})" if by else ""
    more = f" and {len(r['caught_by']) - 1} more" if len(r["caught_by"]) > 1 else ""
    err = f": {r['error']}" if r.get("error") else ""
    if r.get("class_run") is False:
        err += f" (in {r['scope']}, a class no claim runs)"
    return f"line {r['line']:>4} {r['kind']:<10} {r['before']!r} -> {r['after']!r}: {r['status']}{what}{more}{err}"


def cmd_mutate(args: argparse.Namespace) -> int:
    from ratecheck.params import ParamError, check_option

    try:  # through the options' one declaration, as check, run and hunt do
        check_option("mutate", "max_mutants", args.max_mutants)
        args.jobs = check_option("mutate", "jobs", 1 if args.jobs is None else args.jobs)
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
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes of each mutant's check (default: all cores, as check)")
    p.add_argument("--cache-dir", default=cache_dir, help=f"run cache (default {cache_dir})")
    p.add_argument("--no-cache", action="store_true", help="ignore the cache")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_mutate, usage_error=usage_error)
