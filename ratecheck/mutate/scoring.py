"""What a mutant's check shows, against the unmutated code's outcomes, and the scores over the mutants.

A mutant is

* caught by FAIL when some claim's verdict becomes FAIL (where the unmutated code's is not);
* raises when its runs raise: no verdict became FAIL and every verdict that changed is an ERROR because a
  run or search the claim needs raised an exception (a shape, an axis or an index numpy refuses, a
  counter past the end); where it raised (in the mutated module or downstream) is recorded beside it;
* caught when some verdict changes otherwise: to INCONCLUSIVE, a confirmed erratum's FAIL lost, an ERROR
  of a claim's own decide on the mutant's numbers;
* broken when the mutant cannot even be imported or breaks the registration of the claims (no claim
  could run: caught, but not by a claim);
* timeout when its check ran past the time limit and was killed (e.g. a loop that never ends);
* crashed when its check stopped with an error after the claims were registered;
* equivalent when every claim was decided and every outcome is identical to the unmutated code's, numbers
  included (config keys, reuse counts and a search's wall seconds aside: they name the code, the cache
  and the machine, not what the code computed);
* surviving otherwise: every claim was decided, the numbers moved, no verdict did (``moved``: where). A
  survivor whose numbers all agree with the unmutated ones to a relative ROUNDOFF is marked
  ``roundoff``: no claim could tell it apart (e.g. a factor that a normalization cancels), so it is
  equivalent in effect.

A FAIL decided before a time limit or a crash still counts (the mutant is caught by FAIL). Two scores,
side by side:

* strict: caught by FAIL over the non-equivalent mutants;
* power: caught by FAIL over the mutants that run to completion, i.e. the non-equivalent ones less those
  that raise, are broken, time out or crash. A mutant that raises (or cannot be imported, or never
  ends) is caught by any run of its code and says nothing about what a claim can see; a silent wrong
  number is what claims exist for, and the power score is the fraction of those a FAIL catches.

Issue #23's target (90% of the non-equivalent mutants of each algorithm module caught by a FAIL) is read
on the power score. A raising run gives its claims an ERROR by design (the same issue's item 5: one
failing run never loses other verdicts), so a raising mutant can never become a FAIL; mutation tools
count it as detected (Stryker's states: a test that fails, by assertion or by exception, kills the
mutant; a timeout is detected; a mutant the runner cannot load is invalid and outside the score), and a
user sees it as an unexpected ERROR and exit code 1. What is left to measure is whether every mutant that
computes silently wrong numbers turns some claim into a FAIL: the power score.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

STATUSES = ("caught by FAIL", "raises", "caught", "broken", "timeout", "crashed", "survived", "equivalent")
FAILURES = ("broken", "timeout", "crashed")  # how a mutant's check can end without deciding every claim
INCOMPLETE = ("raises", *FAILURES)  # mutants that do not run to completion: outside the power score's denominator
# the reason of a claim whose run or search raised (ratecheck.runner.sweep gives it an ERROR verdict)
RUN_FAILED = "a run or search this claim needs failed"
UNCOMPARED = ("config_key", "runs", "seconds")  # the code's identity, the cache's reuse, a search's wall time
# Oracle, cost and exact claims decide at round-off or exact equality: they catch most mutants, so they
# are tried at this fraction of their cost (ordering only; every claim is decided for a survivor).
EXACT_WEIGHT = 0.25
REASON = 300  # characters of an ERROR's reason kept in a mutant's record
ROUNDOFF = 1e-9  # relative difference of a survivor's numbers below which it is marked ``roundoff``


def order(costs: dict[str, float], exact: dict[str, bool]) -> list[str]:
    """Claim ids, cheapest first (exact claims weighted by EXACT_WEIGHT), ties by id: deterministic."""
    return sorted(costs, key=lambda c: (costs[c] * (EXACT_WEIGHT if exact.get(c) else 1.0), c))


def _comparable(outcome: dict[str, Any]) -> Any:
    """An outcome without what names the code (config keys), the cache (runs reused/computed) or the machine
    (a hunt's wall ``seconds``: a mutant of a module every run imports recomputes every search)."""
    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in UNCOMPARED}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return strip(outcome)


def _close(a: Any, b: Any) -> bool:
    """Equal structures whose numbers agree to a relative ROUNDOFF (NaN equal to NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        a, b = float(a), float(b)
        return (a != a and b != b) or a == b or abs(a - b) <= ROUNDOFF * max(abs(a), abs(b))
    return bool(a == b)


def roundoff(baseline: dict[str, dict[str, Any]], outcomes: list[dict[str, Any]]) -> bool:
    """Do a survivor's outcomes agree with the unmutated ones up to round-off (see the module's docstring)?"""
    return all(_close(_comparable(o), _comparable(baseline[o["claim"]])) for o in outcomes)


def moved(baseline: dict[str, dict[str, Any]], outcomes: list[dict[str, Any]], limit: int = 5) -> list[dict[str, Any]]:
    """Where a survivor's outcomes differ from the unmutated ones: the first ``limit`` differences, each
    with its claim, its path in the outcome and both values (what no claim's verdict saw)."""
    found: list[dict[str, Any]] = []

    def walk(a: Any, b: Any, claim: str, path: str) -> None:
        if len(found) >= limit or a == b:
            return
        if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
            for k in a:
                walk(a[k], b[k], claim, f"{path}.{k}" if path else str(k))
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, claim, f"{path}[{i}]")
        elif not (isinstance(a, float) and isinstance(b, float) and a != a and b != b):  # NaN == NaN here
            found.append({"claim": claim, "at": path, "baseline": _short(a), "mutant": _short(b)})

    for o in outcomes:
        walk(_comparable(baseline[o["claim"]]), _comparable(o), o["claim"], "")
    return found


def _short(value: Any) -> Any:
    text = repr(value)
    return value if len(text) <= 80 else text[:77] + "..."


def raises(changed: list[dict[str, str]]) -> bool:
    """Is every changed verdict an ERROR because a run or search raised (the mutant's code raises)?"""
    return bool(changed) and all(c["verdict"] == "ERROR" and c.get("reason", "").startswith(RUN_FAILED)
                                 for c in changed)


def classify(baseline: dict[str, dict[str, Any]], outcomes: list[dict[str, Any]], failure: str = "",
             complete: bool = True) -> tuple[str, list[dict[str, str]]]:
    """(status, the claims whose verdict changed with their baseline and mutant verdicts, and an ERROR's reason).

    ``outcomes``: the claims decided (in order; fewer than the baseline's when the check stopped early
    or ended); ``failure``: "broken", "timeout" or "crashed" when the check ended without finishing;
    ``complete``: every claim was decided."""
    changed = [{"claim": o["claim"], "baseline": baseline[o["claim"]]["verdict"], "verdict": o["verdict"],
                **({"reason": str(o.get("reason", ""))[:REASON]} if o["verdict"] == "ERROR" else {})}
               for o in outcomes if o["verdict"] != baseline[o["claim"]]["verdict"]]
    if any(c["verdict"] == "FAIL" for c in changed):
        return "caught by FAIL", changed
    if failure:
        return failure, changed
    kept = {c["claim"] for c in changed}
    silent = any(_comparable(o) != _comparable(baseline[o["claim"]]) for o in outcomes if o["claim"] not in kept)
    if raises(changed) and not silent:  # a wrong number a claim decided on is not excused by a raise elsewhere
        return "raises", changed
    if changed:
        return "caught", changed
    if complete and all(_comparable(o) == _comparable(baseline[o["claim"]]) for o in outcomes):
        return "equivalent", []
    return "survived", []


def score(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts by status and the two scores (see the module's docstring): ``strict``, caught by FAIL over
    the non-equivalent mutants (also under its old name ``score``), and ``power``, caught by FAIL over the
    ``completed`` ones (non-equivalent, less raises, broken, timeout and crashed); ``detected``: the
    fraction of non-equivalent mutants told apart from the unmutated code in any way."""
    counts = Counter(r["status"] for r in results)
    relevant = len(results) - counts["equivalent"]
    completed = relevant - sum(counts[s] for s in INCOMPLETE)
    detected = sum(counts[s] for s in STATUSES if s not in ("survived", "equivalent"))
    unrun = sum(r["status"] == "equivalent" and r.get("class_run") is False for r in results)
    strict = counts["caught by FAIL"] / relevant if relevant else None
    return {**{s: counts[s] for s in STATUSES}, "equivalent_in_unrun_classes": unrun,
            "survived_roundoff": sum(bool(r.get("roundoff")) for r in results), "non_equivalent": relevant,
            "completed": completed, "strict": strict, "score": strict,
            "power": counts["caught by FAIL"] / completed if completed else None,
            "detected": detected / relevant if relevant else None}


def figures(s: dict[str, Any]) -> str:
    """The two scores side by side, as the summary line and the README's table give them."""
    def pct(value: float | None) -> str:
        return f"{value:.0%}" if value is not None else "n/a"

    return (f"strict {s['caught by FAIL']}/{s['non_equivalent']} = {pct(s['strict'])} (FAIL over non-equivalent), "
            f"power {s['caught by FAIL']}/{s['completed']} = {pct(s['power'])} (FAIL over the mutants that run to "
            f"completion: less {s['raises']} raises, {s['broken']} broken, {s['timeout']} timeout, {s['crashed']} crashed)")


def text(result: dict[str, Any]) -> str:
    """The terminal report: the score, each mutant's fate and the claim that caught it, survivors' diffs."""
    s = result["score"]
    n = len(result["claims"])
    lines = [f"{result['module']} ({result['path']}): {result['mutants_run']} of {result['mutants_found']} mutants "
             f"(seed {result['seed']}), {n} claims, {result['profile']} profile, time limit "
             f"{result['timeout']:.0f}s a mutant, {result['seconds']:.0f}s"]
    if not result["all_claims"]:
        lines.append("  claims cheapest first, each mutant stopped after the group of claims (1, 1, 2, 4, ...) holding "
                     "its first FAIL (--all-claims decides every claim); a mutant no claim FAILs decides every "
                     "claim, so that equivalence is known")
    lines += [f"  {_line(r, n)}" for r in result["mutants"]]
    survivors = [r for r in result["mutants"] if r["status"] == "survived"]
    if survivors:
        lines.append("\nsurviving mutants:")
        lines += [r["diff"].rstrip() for r in survivors]
    det = f"{s['detected']:.0%}" if s["detected"] is not None else "n/a"
    lines.append(f"\nscore: {figures(s)}; detected in any way {det}: {s['raises']} raise, {s['caught']} caught "
                 f"without a FAIL, {s['broken']} broken, {s['timeout']} timeout, {s['crashed']} crashed; "
                 f"{s['survived']} survived ({s['survived_roundoff']} only at round-off); {s['equivalent']} "
                 f"equivalent ({s['equivalent_in_unrun_classes']} in classes no claim runs)")
    lines.append("  (a mutant that raises is caught by any run of its code and says nothing about a claim's power; "
                 "a silent wrong number is what claims exist for)")
    return "\n".join(lines)


def _line(r: dict[str, Any], claims: int) -> str:
    """One mutant's fate: where, what, the first claim that caught it with its verdicts, how much was decided."""
    fails = [c for c in r["caught_by"] if c["verdict"] == "FAIL"]
    by = (fails or r["caught_by"] or [None])[0]
    what = f" by {by['claim']} ({by['baseline']} -> {by['verdict']})" if by else ""
    more = f" and {len(r['caught_by']) - 1} more" if len(r["caught_by"]) > 1 else ""
    decided = f" [{r['decided']}/{claims} claims, {r['seconds']:.0f}s]" if "decided" in r else ""
    err = f": {r['error']}" if r.get("error") else ""
    if r.get("raised"):
        err += f": {_raised(r['raised'])}"
    if r.get("roundoff"):
        err += f" (every number within {ROUNDOFF:g} of the unmutated code's)"
    elif r.get("moved"):
        first = r["moved"][0]
        err += f" (e.g. {first['claim']} {first['at']}: {first['baseline']} -> {first['mutant']})"
    if r.get("class_run") is False:
        err += f" (in {r['scope']}, a class no claim runs)"
    return (f"line {r['line']:>4} {r['kind']:<10} {r['before']!r} -> {r['after']!r}: {r['status']}{what}{more}"
            f"{decided}{err}")


def _raised(raised: dict[str, Any]) -> str:
    """Where a mutant's run raised (ratecheck.mutate.runner re-runs one of its failed runs to know)."""
    where = f"at line {raised['line']} of the mutant" if raised.get("line") else f"downstream, at {raised.get('at')}"
    return f"{raised['exception']} {where}"
