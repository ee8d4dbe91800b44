"""What a mutant's check shows, against the unmutated code's outcomes, and the score over the mutants.

A mutant is

* caught by FAIL when some claim's verdict becomes FAIL (where the unmutated code's is not);
* caught when some verdict changes otherwise (to INCONCLUSIVE, ERROR, or a confirmed erratum's FAIL lost);
* broken when the mutant cannot even be imported or breaks the registration of the claims (no claim
  could run: caught, but not by a claim);
* timeout when its check ran past the time limit and was killed (e.g. a loop that never ends);
* crashed when its check stopped with an error after the claims were registered;
* equivalent when every claim was decided and every outcome is identical to the unmutated code's, numbers
  included (config keys aside): the claims' runs computed exactly the same output;
* surviving otherwise: every claim was decided, the numbers moved, no verdict did. A survivor whose
  numbers all agree with the unmutated ones to a relative ROUNDOFF is marked ``roundoff``: no claim
  could tell it apart (e.g. a factor that a normalization cancels), so it is equivalent in effect.

A FAIL decided before a time limit or a crash still counts (the mutant is caught by FAIL). The score is
the fraction of non-equivalent mutants caught by a FAIL (issue #23's target: 90%); the other categories
are shown beside it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

STATUSES = ("caught by FAIL", "caught", "broken", "timeout", "crashed", "survived", "equivalent")
FAILURES = ("broken", "timeout", "crashed")  # how a mutant's check can end without deciding every claim
# Oracle, cost and exact claims decide at round-off or exact equality: they catch most mutants, so they
# are tried at this fraction of their cost (ordering only; every claim is decided for a survivor).
EXACT_WEIGHT = 0.25
ROUNDOFF = 1e-9  # relative difference of a survivor's numbers below which it is marked ``roundoff``


def order(costs: dict[str, float], exact: dict[str, bool]) -> list[str]:
    """Claim ids, cheapest first (exact claims weighted by EXACT_WEIGHT), ties by id: deterministic."""
    return sorted(costs, key=lambda c: (costs[c] * (EXACT_WEIGHT if exact.get(c) else 1.0), c))


def _comparable(outcome: dict[str, Any]) -> Any:
    """An outcome without what names the code (config keys) or the cache (runs reused/computed)."""
    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in ("config_key", "runs")}
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


def classify(baseline: dict[str, dict[str, Any]], outcomes: list[dict[str, Any]], failure: str = "",
             complete: bool = True) -> tuple[str, list[dict[str, str]]]:
    """(status, the claims whose verdict changed with their baseline and mutant verdicts).

    ``outcomes``: the claims decided (in order; fewer than the baseline's when the check stopped early
    or ended); ``failure``: "broken", "timeout" or "crashed" when the check ended without finishing;
    ``complete``: every claim was decided."""
    changed = [{"claim": o["claim"], "baseline": baseline[o["claim"]]["verdict"], "verdict": o["verdict"]}
               for o in outcomes if o["verdict"] != baseline[o["claim"]]["verdict"]]
    if any(c["verdict"] == "FAIL" for c in changed):
        return "caught by FAIL", changed
    if failure:
        return failure, changed
    if changed:
        return "caught", changed
    if complete and all(_comparable(o) == _comparable(baseline[o["claim"]]) for o in outcomes):
        return "equivalent", []
    return "survived", []


def score(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts by status and the score: caught by FAIL over the non-equivalent mutants; ``detected``: the
    fraction told apart from the unmutated code in any way (a changed verdict, broken, timeout, crashed)."""
    counts = Counter(r["status"] for r in results)
    relevant = len(results) - counts["equivalent"]
    detected = sum(counts[s] for s in STATUSES if s not in ("survived", "equivalent"))
    unrun = sum(r["status"] == "equivalent" and r.get("class_run") is False for r in results)
    return {**{s: counts[s] for s in STATUSES}, "equivalent_in_unrun_classes": unrun,
            "survived_roundoff": sum(bool(r.get("roundoff")) for r in results), "non_equivalent": relevant,
            "score": counts["caught by FAIL"] / relevant if relevant else None,
            "detected": detected / relevant if relevant else None}


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
    pct = f"{s['score']:.0%}" if s["score"] is not None else "n/a"
    det = f"{s['detected']:.0%}" if s["detected"] is not None else "n/a"
    lines.append(f"\nscore: {s['caught by FAIL']} of {s['non_equivalent']} non-equivalent mutants caught by a FAIL "
                 f"({pct}); detected in any way {det}: {s['caught']} caught without a FAIL, {s['broken']} broken, "
                 f"{s['timeout']} timeout, {s['crashed']} crashed; {s['survived']} survived ({s['survived_roundoff']} only "
                 f"at round-off); {s['equivalent']} "
                 f"equivalent ({s['equivalent_in_unrun_classes']} in classes no claim runs)")
    return "\n".join(lines)


def _line(r: dict[str, Any], claims: int) -> str:
    """One mutant's fate: where, what, the first claim that caught it with its verdicts, how much was decided."""
    fails = [c for c in r["caught_by"] if c["verdict"] == "FAIL"]
    by = (fails or r["caught_by"] or [None])[0]
    what = f" by {by['claim']} ({by['baseline']} -> {by['verdict']})" if by else ""
    more = f" and {len(r['caught_by']) - 1} more" if len(r["caught_by"]) > 1 else ""
    decided = f" [{r['decided']}/{claims} claims, {r['seconds']:.0f}s]" if "decided" in r else ""
    err = f": {r['error']}" if r.get("error") else ""
    if r.get("roundoff"):
        err += f" (every number within {ROUNDOFF:g} of the unmutated code's)"
    if r.get("class_run") is False:
        err += f" (in {r['scope']}, a class no claim runs)"
    return (f"line {r['line']:>4} {r['kind']:<10} {r['before']!r} -> {r['after']!r}: {r['status']}{what}{more}"
            f"{decided}{err}")
