"""The process that decides a mutant's claims: ``python -m ratecheck.mutate.runner SPEC.json``.

Started by ``ratecheck mutate`` once for the unmutated code and once per mutant, with
``RATECHECK_MUTANT`` set for a mutant (ratecheck.mutate.hook: the mutant is served before any project
module imports it, here and in the pool's spawned workers). It imports the target module, registers the
extra sources and selects the claims by id (a failure there is a *broken* mutant: no claim could run),
then decides the claims in the spec's order, in groups of 1, 1, 2, 4, ... claims, through the usual
executor and store (the code identity keeps a mutant's runs apart), rewriting the output file after each
group so that a mutant killed for its time limit still shows what was decided. With ``stop`` (the unmutated verdicts)
it stops at the first claim that FAILs where the unmutated code did not: the mutant is caught.

The unmutated run (``costs``) gathers every claim's results first and records each claim's compute
cost: the seconds its runs took when they were computed (``wall_seconds``, kept in the store with each
run, so a cached check knows them too) and its searches' (``seconds`` of a hunt), with a static
estimate for stored results that record no time. ``ratecheck mutate`` orders the mutants' claims by it.

A mutant's check that ends with a claim's run raising (an ERROR, no new FAIL) then re-runs, here, one
run that failed (at most TRIES runs the store lacks) to record where it raised: at which line of the
mutant, or downstream of it (``raised``; ratecheck.mutate.scoring's "raises").
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# seconds assumed for a result that records no compute time: a run's trace, a task's result (an oracle's
# recursion: a hunt records its seconds)
STATIC_SECONDS = {"run": 5.0, "task": 1.0}
TRIES = 3  # runs re-run at most to find where a mutant's run raised


def run(spec: dict[str, Any]) -> None:
    """Decide ``spec["claims"]`` in order under ``spec``'s profile, jobs and store, writing the output
    (see ``main``) after each group of claims (``_chunks``)."""
    # imported here, after the mutation hook: the mutant must be the module every later import sees
    from ratecheck.claims import PROFILES
    from ratecheck.model.store import Store
    from ratecheck.registry import default
    from ratecheck.runner.executors import make_executor
    from ratecheck.runner.sweep import check_claims, gather, in_profile

    out: dict[str, Any] = {"registered": False, "outcomes": [], "seconds": 0.0}
    importlib.import_module(spec["module"])  # the mutant itself first: an error here is a broken mutant
    registry = default()
    for source in spec.get("sources", ()):
        registry.add_source(source)
    by_id = {c.id: c for c in registry.claims()}
    missing = [i for i in spec["claims"] if i not in by_id]
    if missing:
        more = f", ... ({len(missing)} in all)" if len(missing) > 3 else ""
        raise LookupError(f"unknown claims: {', '.join(missing[:3])}{more}")
    profile = PROFILES[spec.get("profile", "quick")]
    claims = [by_id[i] for i in spec["claims"] if in_profile(by_id[i], profile)]
    out["registered"] = True
    _write(spec["out"], out)
    store = Store(spec["cache_dir"])
    stop: Mapping[str, str] | None = spec.get("stop")
    with make_executor(jobs=int(spec.get("jobs", 1))) as executor:
        if spec.get("costs"):  # the unmutated code: every claim's results at once, then what each cost
            results, needs = gather(claims, profile, store=store, executor=executor, progress=False)
            out["costs"] = {c.id: round(_cost(results, keys), 3) for c, keys in zip(claims, needs)}
            out["total_cost"] = round(_cost(results, set().union(*needs)), 3)
            out["exact"] = {c.id: _exact(c, profile) for c in claims}
        started, done = time.perf_counter(), 0
        for size in _chunks(len(claims), whole=stop is None):
            chunk = claims[done:done + size]
            done += size
            decided = [o.to_dict() for o in check_claims(chunk, profile, store=store, executor=executor, progress=False)]
            out["outcomes"] += decided
            out["seconds"] = round(time.perf_counter() - started, 3)
            _write(spec["out"], out)
            if stop is not None and any(o["verdict"] == "FAIL" and stop.get(o["claim"]) != "FAIL" for o in decided):
                break
    out["complete"] = len(out["outcomes"]) == len(claims)
    verdicts: Mapping[str, str] = spec.get("verdicts") or {}
    if verdicts and not any(o["verdict"] == "FAIL" and verdicts.get(o["claim"]) != "FAIL" for o in out["outcomes"]):
        out["raised"] = _raised(claims, out["outcomes"], verdicts, profile, store)
    _write(spec["out"], out)


def _chunks(count: int, whole: bool) -> list[int]:
    """Sizes of the successive groups the claims are decided in: 1, 1, 2, 4, ... so that a mutant stops soon
    after its first FAIL while a survivor's check makes a few calls, not one per claim (each call reads its
    runs from the store again); everything at once when nothing stops early (``whole``)."""
    if whole:
        return [count] if count else []
    sizes, total = [], 0
    while total < count:
        size = min(max(1, total), count - total)
        sizes.append(size)
        total += size
    return sizes


def _cost(results: Mapping[str, Any], keys: set[str]) -> float:
    """Seconds the results under ``keys`` took to compute, as recorded (STATIC_SECONDS where not)."""
    total = 0.0
    for key in keys:
        result = results.get(key)
        info = getattr(result, "info", None)
        if isinstance(info, Mapping) and isinstance(info.get("wall_seconds"), (int, float)):
            total += float(info["wall_seconds"])
        elif isinstance(result, Mapping) and isinstance(result.get("seconds"), (int, float)):
            total += float(result["seconds"])
        else:
            total += STATIC_SECONDS["run" if info is not None else "task"]
    return total


def _exact(claim: Any, profile: Any) -> bool:
    """Does the claim decide at round-off or exact equality (an oracle, a cost count, exact-mode runs)?"""
    # after the mutation hook, as in run()
    from ratecheck.claims.costs import CostClaim
    from ratecheck.claims.trajectory import TrajectoryClaim

    if isinstance(claim, (TrajectoryClaim, CostClaim)):
        return True
    try:
        configs = claim.runs(profile)
    except Exception:  # a claim that plans through tasks (a hunt)
        return False
    return bool(configs) and all(getattr(c, "mode", "") == "exact" for c in configs)


def _raised(claims: list[Any], outcomes: list[dict[str, Any]], verdicts: Mapping[str, str], profile: Any,
            store: Any) -> dict[str, Any] | None:
    """Where a run of the mutant raised: the first of the runs of its newly ERROR claims that the store
    lacks (a run that raised is never stored) is run again here and its traceback read; None when no such
    run raises within TRIES (a search's error, or a run that raised only in a worker's state)."""
    # after the mutation hook, as in run()
    from ratecheck.mutate.hook import ENV, parse
    from ratecheck.mutate.scoring import RUN_FAILED
    from ratecheck.runner.identity import stored_key
    from ratecheck.runner.sweep import seeded
    from ratecheck.simulate.engine import run_config

    value = os.environ.get(ENV)
    if not value:
        return None
    mutant = parse(value)[1].resolve()
    by_id = {c.id: c for c in claims}
    tried, seen = 0, set()
    for outcome in outcomes:
        if outcome["verdict"] != "ERROR" or verdicts.get(outcome["claim"]) == "ERROR" \
                or not str(outcome.get("reason", "")).startswith(RUN_FAILED):
            continue
        try:
            configs = list(by_id[outcome["claim"]].runs(profile))
        except Exception:  # a claim that plans through tasks (a hunt)
            continue
        for config in configs:
            config = seeded(config, profile.seed_offset)
            if config.key() in seen or store.get(stored_key(config)) is not None:
                continue
            seen.add(config.key())
            tried += 1
            try:
                run_config(config)
            except Exception as exc:
                return _where(exc, mutant)
            if tried >= TRIES:
                return None
    return None


def _where(exc: BaseException, mutant: Path) -> dict[str, Any]:
    """The exception, the mutant's line its traceback last passed through (None if it never did) and the
    innermost frame (file name and line)."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if Path(f.filename).resolve() == mutant]
    last = frames[-1] if frames else None
    message = f"{type(exc).__name__}: {exc}"
    return {"exception": message if len(message) <= 200 else message[:197] + "...",
            "line": mine[-1].lineno if mine else None,
            "at": f"{Path(last.filename).name}:{last.lineno}" if last else None}


def _write(path: str, out: dict[str, Any]) -> None:
    """Replace the output file at once: the parent may read it after killing this process."""
    tmp = f"{path}.tmp"
    Path(tmp).write_text(json.dumps(out, default=str))  # NaN kept: a mutant may diverge
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    """``{"registered": bool, "outcomes": [Outcome.to_dict(), ...], "seconds": s, "complete": bool,
    "costs": {claim: s}, "total_cost": s, "exact": {claim: bool}, "raised": {...} or None}`` in ``spec["out"]``
    (costs and exact only for the unmutated code; raised only for a mutant, given ``spec["verdicts"]``)."""
    run(json.loads(Path(argv[0]).read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
