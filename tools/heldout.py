#!/usr/bin/env python3
"""Measure what the claims catch: apply each held-out bug to a clean copy and re-run the checks (issue #23).

    python tools/heldout.py [--patches DIR] [--patch NAME ...] [--base 53c4733] [--baseline /work/s6/base.json]
                            [--jobs 1] [--tests auto|all|none] [--out DIR] [--json FILE] [--report FILE ...]
                            [--resume] [--table-only]

Each patch in benchmarks/heldout/ (or --patches DIR; git diff format, against --base) starts with comment lines
``# category: ...``, ``# file: ...``, ``# bug: ...``, ``# papers: ...``. For every patch the tool extracts
the base commit into a scratch directory (``git archive``, no worktree bookkeeping), applies the patch,
and runs ``python -m ratecheck check PAPER --json --no-report --jobs N --cache-dir <fresh>`` from that copy
for each paper the header names ('all': the five), under ``nice -n 10``, one bug at a time. Per claim it
compares the verdicts with the unpatched baseline (``ratecheck check --json`` at the base commit):

* caught by FAIL: a registered claim (not an observation) FAILs whose baseline verdict was not FAIL;
* caught otherwise: another verdict change (PASS/FAIL -> INCONCLUSIVE or ERROR, an erratum's FAIL lost, a
  claim missing), a check that aborts (no JSON, exit 3), or, for encoding and statistics bugs (and every
  bug with --tests all), a failing unit test of the touched module (``pytest -m "not claims"``);
* survived: no claim verdict changes (the tool also counts claims whose numbers moved, to tell an
  unexercised or equivalent bug from one the claims measured but tolerated).

Raw results go to DIR/<patch>.json as each bug finishes (``--resume`` skips those already there); the
table and the scores by category are printed and written to every --report file as Markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PATCHES = ROOT / "benchmarks" / "heldout"
PAPERS = ("defedavg", "simfbo", "fessgda", "fedbio", "strfedavg")
FAIL_CATEGORIES = ("algorithm", "problem", "sampling", "asynchrony", "exact")  # target: turned into a FAIL
CAUGHT_CATEGORIES = ("encoding", "statistics")  # target: caught by claims or tests
VOLATILE = {"config_key", "power", "seconds", "wall_seconds", "cpu_seconds", "reused", "computed", "runs",
            "elapsed"}

# the unit tests of a touched file (run for encoding/statistics bugs, or every bug with --tests all)
TESTS = {
    "proofs/defedavg/theorems.py": ["tests/test_defedavg_theory.py", "tests/test_goldens_defedavg.py"],
    "proofs/simfbo/theorems.py": ["tests/test_simfbo_theory.py", "tests/test_goldens_simfbo.py",
                                  "tests/test_goldens_simfbo_conditions.py"],
    "proofs/fessgda/theorems.py": ["tests/test_fessgda_theory.py", "tests/test_goldens_fessgda.py"],
    "proofs/fedbio/theorems.py": ["tests/test_fedbio_theory.py", "tests/test_goldens_fedbio.py"],
    "proofs/strfedavg/theorems.py": ["tests/test_strfedavg_theory.py", "tests/test_goldens_strfedavg.py",
                                     "tests/test_goldens_strfedavg_t3.py"],
    "ratecheck/model/fit.py": ["tests/test_fit.py", "tests/test_compose.py", "tests/test_claim_pieces.py",
                               "tests/test_power.py", "tests/test_slope_resamples_independent.py"],
    "ratecheck/claims/statistics.py": ["tests/test_compose.py", "tests/test_claim_pieces.py", "tests/test_power.py",
                                       "tests/test_fit.py", "tests/test_claims_statistics_by_hand.py"],
    "ratecheck/algorithms/fedavg.py": ["tests/test_fedavg.py", "tests/test_defedavg_modes.py"],
    "ratecheck/algorithms/local.py": ["tests/test_fedavg.py", "tests/test_strfedavg_algorithms.py"],
    "ratecheck/algorithms/strfedavg.py": ["tests/test_strfedavg_algorithms.py", "tests/test_scaffold.py"],
    "ratecheck/algorithms/minimax.py": ["tests/test_minimax_algorithms.py"],
    "ratecheck/algorithms/bilevel.py": ["tests/test_bilevel_algorithms.py"],
    "ratecheck/algorithms/fedbio.py": ["tests/test_fedbio_algorithms.py", "tests/test_fedbio_properties.py"],
    "ratecheck/algorithms/periodic.py": ["tests/test_fedbio_algorithms.py"],
    "ratecheck/model/participation.py": ["tests/test_participation.py", "tests/test_exact_moments.py"],
    "ratecheck/model/asynchrony.py": ["tests/test_asynchrony.py", "tests/test_asynchrony_diagnostics.py"],
    "ratecheck/exact/delays.py": ["tests/test_exact.py", "tests/test_exact_moments.py"],
    "ratecheck/exact/local_steps.py": ["tests/test_exact_local_steps.py"],
    "ratecheck/exact/rates.py": ["tests/test_exact_rates_claims.py"],
    "problems/quadratic.py": ["tests/test_quadratic.py", "tests/test_constants_independent.py"],
    "problems/minimax/base.py": ["tests/test_minimax_problems.py"],
    "problems/least_squares_problem.py": ["tests/test_least_squares.py", "tests/test_constants_independent.py"],
    "problems/quadratic_bilevel.py": ["tests/test_quadratic_bilevel.py", "tests/test_constants_independent.py"],
    "problems/fedbio_problem.py": ["tests/test_fedbio_problems.py"],
}


def parse_patch(path: Path) -> dict[str, Any]:
    """The header fields of a held-out patch and the papers it names."""
    head: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(":")
        head[key.strip()] = value.strip()
    named = head.get("papers", "")
    papers = list(PAPERS) if named.startswith("all") else [p for p in PAPERS if p in named]
    if not papers:
        raise SystemExit(f"{path.name}: the header names no paper of {PAPERS} (papers: {named!r})")
    return {"name": path.stem, "path": str(path), "category": head.get("category", "?"),
            "file": head.get("file", "?"), "bug": head.get("bug", "?"), "papers": papers}


def extract(base: str, into: Path) -> None:
    """The tree of commit ``base`` in ``into`` (git archive: nothing registered in the repository)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", base], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def run_check(tree: Path, paper: str, jobs: int, cache: Path, timeout: float) -> dict[str, Any]:
    """``ratecheck check PAPER --json`` from ``tree``: the parsed JSON (or None), exit code, seconds, stderr tail."""
    cmd = ["nice", "-n", "10", sys.executable, "-m", "ratecheck", "check", paper, "--json", "--no-report",
           "--jobs", str(jobs), "--cache-dir", str(cache)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    start = time.time()
    try:
        proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=timeout, env=env)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = -9, "", f"timeout after {timeout:g} s: {exc}"
    seconds = time.time() - start
    try:
        data = json.loads(out) if out.strip() else None
    except json.JSONDecodeError:
        data = None
    return {"paper": paper, "code": code, "seconds": round(seconds, 1), "data": data,
            "stderr": err.strip().splitlines()[-6:] if err.strip() else [],
            "store": data.get("runs") if isinstance(data, dict) else None}


def run_tests(tree: Path, files: list[str], timeout: float) -> dict[str, Any]:
    """``pytest -q -m "not claims"`` on the touched module's test files in ``tree``."""
    present = [f for f in files if (tree / f).exists()]
    if not present:
        return {"files": files, "code": None, "summary": "no test files"}
    cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-q", "-m", "not claims", "-p", "no:cacheprovider",
           *present]
    try:
        proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=timeout)
        code, out = proc.returncode, proc.stdout
    except subprocess.TimeoutExpired:
        return {"files": present, "code": -9, "summary": f"timeout after {timeout:g} s"}
    lines = [ln for ln in out.strip().splitlines() if ln.strip()]
    failed = [ln.split(" ", 1)[1].split(" - ")[0] for ln in lines if ln.startswith("FAILED ")]
    return {"files": present, "code": code, "summary": lines[-1] if lines else "", "failed": failed[:20]}


def _diff_count(before: dict[str, Any], after: dict[str, Any]) -> int:
    sys.path.insert(0, str(ROOT / "tools"))
    from compare_check import diff  # the project's claim-by-claim comparison

    return sum(1 for _ in diff(before, after, "", 1e-9, VOLATILE))


def compare(baseline: dict[str, dict[str, Any]], run: dict[str, Any]) -> dict[str, Any]:
    """Verdict changes of one paper's run against the baseline claims of that paper."""
    paper = run["paper"]
    base = {k: c for k, c in baseline.items() if c["paper"] == paper}
    if run["data"] is None:
        return {"paper": paper, "crashed": True, "code": run["code"], "stderr": run["stderr"], "fails": [],
                "changes": [], "moved": 0}
    after = {c["claim"]: c for c in run["data"]["claims"]}
    fails, changes, moved, moved_ids = [], [], 0, []
    for cid, b in base.items():
        a = after.get(cid)
        if a is None:
            changes.append({"claim": cid, "before": b["verdict"], "after": "MISSING", "observation": b["observation"]})
            continue
        if a["verdict"] != b["verdict"]:
            entry = {"claim": cid, "before": b["verdict"], "after": a["verdict"], "observation": b["observation"],
                     "reason": a.get("reason", "")[:240]}
            if a["verdict"] == "FAIL" and not b["observation"]:
                fails.append(entry)
            else:
                changes.append(entry)
        elif _diff_count(b, a):
            moved += 1
            moved_ids.append(cid)
    return {"paper": paper, "crashed": False, "code": run["code"], "fails": fails, "changes": changes, "moved": moved,
            "moved_claims": moved_ids, "claims": len(after)}


def measure(patch: dict[str, Any], base_tree: Path, scratch: Path, baseline: dict[str, dict[str, Any]],
            args: argparse.Namespace, fresh: bool = True) -> dict[str, Any]:
    tree = scratch / patch["name"]
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(base_tree, tree, symlinks=True)
    applied = subprocess.run(["git", "apply", "-p1", str(Path(patch["path"]).resolve())], cwd=tree,
                             capture_output=True, text=True)
    result: dict[str, Any] = {**{k: patch[k] for k in ("name", "category", "file", "bug", "papers")},
                              "base": args.base}
    if applied.returncode:
        result["error"] = f"patch does not apply: {applied.stderr.strip()}"
        return result
    result["runs"] = []
    result["cache"] = "fresh" if fresh else "copy of the base tree's cache"
    wants_tests = args.tests == "all" or (args.tests == "auto" and patch["category"] in CAUGHT_CATEGORIES)
    papers = patch["papers"]
    if wants_tests:
        result["tests"] = run_tests(tree, TESTS.get(patch["file"], []), args.timeout)
        print(f"  tests: {result['tests']['summary']}", flush=True)
        if args.tests_first and result["tests"].get("code") not in (0, None, 5):
            # caught by the tests: the claims of one paper only, for the record (or none)
            papers = [] if args.claims_if_tests_miss else papers[:1]
            result["papers_checked"] = papers
    for paper in papers:
        cache = scratch / f"{patch['name']}-cache-{paper}"
        if cache.exists():
            shutil.rmtree(cache)
        if not fresh:
            shutil.copytree(Path(args.base_cache) / f"_cache-{paper}", cache)
        run = run_check(tree, paper, args.jobs, cache, args.timeout)
        cmp = compare(baseline, run)
        cmp["seconds"], cmp["store"] = run["seconds"], run["store"]
        result["runs"].append(cmp)
        shutil.rmtree(cache, ignore_errors=True)
        print(f"  {paper}: {len(cmp['fails'])} new FAIL, {len(cmp['changes'])} other changes, "
              f"{cmp['moved']} moved{' CRASHED' if cmp['crashed'] else ''} ({run['seconds']:.0f} s, runs {run['store']})",
              flush=True)
    shutil.rmtree(tree, ignore_errors=True)
    return result


def outcome(r: dict[str, Any]) -> dict[str, Any]:
    """How a bug was caught: fail (claims that FAIL), other (verdict changes, crashes, tests), survived."""
    if "error" in r:
        return {"status": "not applied", "fail": [], "other": [r["error"]], "moved": 0}
    fails = [f"{f['claim']} ({f['before']}->FAIL)" for run in r["runs"] for f in run["fails"]]
    other = [f"{c['claim']} {c['before']}->{c['after']}" + (" [obs]" if c["observation"] else "")
             for run in r["runs"] for c in run["changes"]]
    # only the check's own "failed" exit (3) is a detection; a timeout (-9), a usage error (2) or a broken
    # environment measured nothing
    other += [f"{run['paper']} check aborted (exit 3)" for run in r["runs"] if run["crashed"] and run["code"] == 3]
    unmeasured = [f"{run['paper']} not measured (exit {run['code']})" for run in r["runs"]
                  if run["crashed"] and run["code"] != 3]
    tests = r.get("tests")
    test_caught = bool(tests and tests.get("code") == 1)  # pytest: 1 tests failed; -9 timeout, 2-5 no verdict
    if test_caught:
        other.append(f"unit tests fail: {tests['summary']}")
    claim_other = [o for o in other if not o.startswith("unit tests") and "[obs]" not in o]
    if fails:
        status = "FAIL"
    elif claim_other:
        status = "other"
    elif test_caught:
        status = "tests"
    elif unmeasured:
        status = "not measured"
        other += unmeasured
    else:
        status = "survived"
    moved = sum(run.get("moved", 0) for run in r["runs"])
    return {"status": status, "fail": fails, "other": other, "moved": moved, "test_caught": test_caught}


def _short(items: list[str], limit: int = 3) -> str:
    if not items:
        return ""
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return "; ".join(items[:limit]) + more


def table(results: list[dict[str, Any]]) -> str:
    """The Markdown table and the scores by category."""
    lines = ["| bug | category | papers | caught by FAIL (claim) | caught otherwise | survived |",
             "|---|---|---|---|---|---|"]
    by_cat: dict[str, Counter] = {}
    for r in results:
        o = outcome(r)
        cat = r["category"]
        by_cat.setdefault(cat, Counter())[o["status"]] += 1
        survived = "yes" + (f" ({o['moved']} claims' numbers moved)" if o["moved"] else " (no claim's numbers moved)") \
            if o["status"] in ("survived", "tests") else ""
        if o["status"] == "tests":
            survived = "by claims: " + survived
        if r.get("papers_checked") == []:
            survived = "claims not run (--claims-if-tests-miss)" if o["status"] == "tests" else survived
        papers = ",".join(r.get("papers_checked", r["papers"])) or "(tests only)"
        lines.append(f"| {r['name']} | {cat} | {papers} | {_short(o['fail'])} | {_short(o['other'])} "
                     f"| {survived} |")
    lines += ["", "| category | bugs measured | turned into FAIL | caught otherwise by claims | caught by tests only "
              "| survived | not measured |", "|---|---|---|---|---|---|---|"]
    total_fail = Counter()
    for cat in (*FAIL_CATEGORIES, *CAUGHT_CATEGORIES, *sorted(set(by_cat) - set(FAIL_CATEGORIES) - set(CAUGHT_CATEGORIES))):
        c = by_cat.get(cat)
        if not c:
            continue
        n = sum(c.values()) - c["not measured"]  # a check that timed out or could not start measured nothing
        lines.append(f"| {cat} | {n} | {c['FAIL']} | {c['other']} | {c['tests']} | {c['survived']} "
                     f"| {c['not measured']} |")
        group = "fail" if cat in FAIL_CATEGORIES else "caught"
        total_fail[group + "_n"] += n
        total_fail[group + "_fail"] += c["FAIL"]
        total_fail[group + "_caught"] += c["FAIL"] + c["other"] + c["tests"]
    lines.append("")
    if total_fail["fail_n"]:
        f, n = total_fail["fail_fail"], total_fail["fail_n"]
        lines.append(f"Algorithm, problem, sampling, asynchrony and exact-mode bugs turned into a FAIL: {f} of {n} "
                     f"({f / n:.0%}; target >= 90%).")
    if total_fail["caught_n"]:
        f, n = total_fail["caught_caught"], total_fail["caught_n"]
        lines.append(f"Encoding and statistics bugs caught by claims or tests: {f} of {n} ({f / n:.0%}; target 100%).")
    return "\n".join(lines)


def write_reports(out: Path, patches: list[dict[str, Any]], reports: list[str],
                  partial: bool = False, folder: Path = PATCHES) -> tuple[list[dict[str, Any]], str]:
    """The table of every raw result in ``out`` among ``patches``, written to each report path."""
    if partial:  # parallel runs share DIR: the table of every bug measured so far
        patches = [parse_patch(p) for p in sorted(folder.glob("*.patch"))]
    names = {p["name"] for p in patches}
    results = [json.loads(f.read_text()) for f in sorted(out.glob("*.json")) if f.stem in names]
    text = table(results)
    if partial:
        text = f"PARTIAL: {len(results)} of {len(patches)} bugs measured so far.\n\n" + text
    for path in reports:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text + "\n")
    return results, text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patches", default=str(PATCHES),
                    help="folder of the bugs (default benchmarks/heldout; benchmarks/heldout/set2 is the second set)")
    ap.add_argument("--patch", action="append", default=[], help="run only this patch (name or prefix; repeatable)")
    ap.add_argument("--base", default="53c4733", help="commit the patches apply to (default 53c4733)")
    ap.add_argument("--baseline", default="/work/s6/base.json", help="`ratecheck check --json` at the base commit")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes of each check (default 1)")
    ap.add_argument("--tests", choices=("auto", "all", "none"), default="auto",
                    help="unit tests of the touched module: encoding/statistics bugs (auto), every bug, or none")
    ap.add_argument("--tests-first", action="store_true",
                    help="run the unit tests first; a bug they catch is checked on its first paper only (time)")
    ap.add_argument("--claims-if-tests-miss", action="store_true",
                    help="with --tests-first: run no claims for a bug the unit tests catch")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per check or test run")
    ap.add_argument("--out", default="/work/s6/heldout/raw", help="directory of the per-bug raw results")
    ap.add_argument("--json", default=None, help="also write every result to this JSON file")
    ap.add_argument("--report", action="append", default=[], help="write the Markdown table here (repeatable)")
    ap.add_argument("--resume", action="store_true", help="skip bugs whose raw result is already in --out")
    ap.add_argument("--reuse-base-cache", action="store_true",
                    help="run each paper once on the unpatched tree and start every bug from a copy of that cache "
                         "(the store's keys carry the code's import closure, so a patched module recomputes exactly "
                         "the runs it can change); default: a fresh empty cache per bug and paper")
    ap.add_argument("--base-cache", default="/tmp/heldout-basecache",
                    help="where --reuse-base-cache keeps the unpatched tree's cache of each paper (built if absent)")
    ap.add_argument("--reverse", action="store_true", help="measure the bugs in reverse order (a parallel run "
                    "from the other end; with --resume, bugs a parallel run holds (DIR/<bug>.lock) are skipped)")
    ap.add_argument("--shard", default=None, help="I/N: measure only every N-th bug from the I-th (parallel runs)")
    ap.add_argument("--recheck-survivors", action="store_true",
                    help="with --reuse-base-cache: re-measure a bug no claim saw with a fresh cache")
    ap.add_argument("--table-only", action="store_true", help="run nothing: the table of the raw results in --out")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))  # this checkout's ratecheck, as the checks it starts
    from ratecheck.params import ParamError, check_option

    try:  # --jobs 0 would make every check exit 2, and every bug look caught
        check_option("heldout --jobs", "jobs", args.jobs)
    except ParamError as exc:
        ap.error(str(exc))

    folder = Path(args.patches)
    patches = [parse_patch(p) for p in sorted(folder.glob("*.patch"))]
    if not patches:
        ap.error(f"--patches {args.patches}: no *.patch file in the folder")
    if args.patch:
        patches = [p for p in patches if any(p["name"] == s or p["name"].startswith(s) for s in args.patch)]
        if not patches:
            raise SystemExit(f"no patch matches {args.patch}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.table_only:
        baseline = {c["claim"]: c for c in json.loads(Path(args.baseline).read_text())["claims"]}
        scratch = Path(tempfile.mkdtemp(prefix="heldout-"))
        try:
            base_tree = scratch / "_base"
            extract(args.base, base_tree)
            todo = patches
            if args.shard:  # of every bug, before --resume drops those done: a shard is the same bugs at every start
                index, count = (int(v) for v in args.shard.split("/"))
                todo = todo[index - 1::count]
            todo = [p for p in todo if not (args.resume and (out / f"{p['name']}.json").exists())]
            if args.reuse_base_cache:
                for paper in sorted({paper for p in todo for paper in p["papers"]}):
                    if (Path(args.base_cache) / f"_cache-{paper}").exists():
                        continue
                    run = run_check(base_tree, paper, args.jobs, Path(args.base_cache) / f"_cache-{paper}",
                                    args.timeout)
                    cmp = compare(baseline, run)
                    print(f"base tree, {paper}: {len(cmp['fails']) + len(cmp['changes'])} verdicts differ from the "
                          f"baseline, {cmp['moved']} claims' numbers ({run['seconds']:.0f} s)", flush=True)
            if args.reverse:
                todo = todo[::-1]
            for k, patch in enumerate(todo, 1):
                raw = out / f"{patch['name']}.json"
                lock = out / f"{patch['name']}.lock"
                if args.resume and (raw.exists() or lock.exists()):  # done, or taken by a parallel run
                    continue
                lock.touch()
                print(f"[{k}/{len(todo)}] {patch['name']} ({patch['category']}; {', '.join(patch['papers'])})",
                      flush=True)
                result = measure(patch, base_tree, scratch, baseline, args, fresh=not args.reuse_base_cache)
                reused = sum((run.get("store") or {}).get("reused", 0) for run in result.get("runs", []))
                if args.reuse_base_cache and args.recheck_survivors and reused and outcome(result)["status"] != "FAIL" \
                        and not outcome(result)["other"]:
                    print("  no verdict moved on the shared cache: re-measured with a fresh cache", flush=True)
                    result = measure(patch, base_tree, scratch, baseline, args, fresh=True)
                raw.write_text(json.dumps(result, indent=1))
                lock.unlink(missing_ok=True)
                write_reports(out, patches, args.report, partial=True, folder=folder)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    results, text = write_reports(out, patches, args.report, partial=args.table_only and not args.patch,
                                  folder=folder)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
