"""ratecheck mutate's robustness and speed (issue #23 item 4): a mutant that never ends is killed at its
time limit and reported as a timeout, one that breaks its module's import or the claims' registration is
broken (not a crash, not a survivor), a mutant's check stops at its first new FAIL (every claim with
--all-claims), claims are ordered cheapest first, and the draw is the same on every run.

The plugin below has two claims with no runs (each decides from ``target.value()``), so that a mutant's
check costs a process start and nothing else."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ratecheck.mutate.mutants import mutants, select
from ratecheck.mutate.scoring import order

ROOT = Path(__file__).resolve().parents[1]

TARGET = '''def steps(t):
    while t > 0:
        t -= 1
    return t


def value():
    return steps(3) + 1.0


def tag():
    return 1
'''

PAPER = '''from dataclasses import dataclass

from ratecheck.claims.base import Claim, Outcome
from ratecheck.claims.model import Verdict
from ratecheck.paper import Paper
from ratecheck.theory import Source

from . import target


@dataclass(frozen=True, kw_only=True)
class Probe(Claim):
    """PASS when target.value() is 1, FAIL otherwise; no runs."""

    def own_runs(self, profile):
        return []

    def decide(self, profile, traces):
        v = target.value()
        return Outcome(self, Verdict.PASS if v == 1.0 else Verdict.FAIL, f"value {v}", {"value": v}, [])


def probe(i):
    return Probe(id=f"mutplug.probe{i}", paper="mutplug", title="value is 1", statement="value() == 1",
                 source=Source.of("a test plugin")("target.value"), vary="x", grid={"quick": (0,), "full": (0,)},
                 configure=lambda x, profile: None, measure="dist_sq")


PAPER = Paper(key="mutplug", title="a plugin for mutate's tests", seed="none",
              claims=(probe(target.tag()), probe(2 * target.tag() + 1)))
'''


@pytest.fixture
def plugin(tmp_path):
    package = tmp_path / "plug" / "mutplug"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "target.py").write_text(TARGET)
    (package / "paper.py").write_text(PAPER)
    return package / "target.py"


def _id(line, before, after):
    """The id of the mutant of TARGET at ``line`` turning ``before`` into ``after``."""
    [m] = [m for m in mutants(TARGET, "mutplug.target") if (m.line, m.before, m.after) == (line, before, after)]
    return m.id


HANG = _id(3, "-=", "+=")  # t += 1: the loop never ends
FAILS = _id(8, "+", "-")  # value() == -1: both claims FAIL
EQUIVALENT = _id(8, "3", "4")  # steps(4) is 0 too
BROKEN = _id(12, "1", "2")  # the claims are registered as probe2 and probe5, not probe1 and probe3


def _mutate(path, tmp_path, *extra):
    scratch = tmp_path / "tmp"  # the command's folder, so that its processes are known by their command line
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path.parents[1]), str(ROOT)]), "TMPDIR": str(scratch)}
    out = subprocess.run([sys.executable, "-m", "ratecheck", "mutate", str(path), "--paper", "mutplug.paper", "--json",
                          "--cache-dir", str(tmp_path / "cache"), *extra],
                         env=env, capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.claims  # starts ratecheck in new processes (the unmutated check and one per mutant)
def test_a_timeout_a_broken_registration_and_an_early_stop(plugin, tmp_path):
    """The hanging mutant is killed at --timeout with its process group and reported as a timeout; the
    mutant that renames the claims is broken; the failing one decides one claim of two; the equivalent
    one decides both. --jobs 2 runs two mutants at once; the result is in source order."""
    before = plugin.read_bytes()
    result = _mutate(plugin, tmp_path, "--mutant", HANG, "--mutant", FAILS, "--mutant", EQUIVALENT,
                     "--mutant", BROKEN, "--timeout", "60", "--jobs", "2")
    by_id = {m["id"]: m for m in result["mutants"]}
    assert [m["id"] for m in result["mutants"]] == [HANG, FAILS, EQUIVALENT, BROKEN]
    assert by_id[HANG]["status"] == "timeout" and "killed after 60s" in by_id[HANG]["error"]
    assert by_id[HANG]["seconds"] < 300  # killed, not waited for
    assert by_id[BROKEN]["status"] == "broken" and "unknown claims" in by_id[BROKEN]["error"]
    assert by_id[FAILS]["status"] == "caught by FAIL" and by_id[FAILS]["decided"] == 1
    assert by_id[FAILS]["caught_by"] == [{"claim": "mutplug.probe1", "baseline": "PASS", "verdict": "FAIL"}]
    assert by_id[EQUIVALENT]["status"] == "equivalent" and by_id[EQUIVALENT]["decided"] == 2
    s = result["score"]
    assert (s["caught by FAIL"], s["timeout"], s["broken"], s["equivalent"], s["non_equivalent"]) == (1, 1, 1, 1, 3)
    assert s["score"] == pytest.approx(1 / 3) and s["detected"] == 1.0
    assert result["timeout"] == 60 and not result["all_claims"]
    assert plugin.read_bytes() == before
    assert not subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True).stdout  # no process left


@pytest.mark.claims
def test_all_claims_decides_every_claim_and_the_default_limit_follows_the_unmutated_check(plugin, tmp_path):
    result = _mutate(plugin, tmp_path, "--mutant", FAILS, "--all-claims", "--jobs", "1")
    [m] = result["mutants"]
    assert m["status"] == "caught by FAIL" and m["decided"] == 2 and len(m["caught_by"]) == 2
    assert result["all_claims"] and result["claims"] == ["mutplug.probe1", "mutplug.probe3"]
    assert 60 <= result["timeout"] < 60 + 5 * 120  # 5x the unmutated check (claims with no runs) + 60 s


def test_a_module_that_fails_to_import_is_broken(plugin, tmp_path):
    """Through run_claims, the process level: a mutant raising at import is broken, not crashed."""
    from argparse import Namespace

    from ratecheck.mutate.command import resolve, run_claims

    target = resolve(str(plugin), [])  # its folder goes on the runner's path
    mutant = tmp_path / "m" / "target.py"
    mutant.parent.mkdir()
    mutant.write_text("raise RuntimeError('a mutant that cannot be imported')\n")
    args = Namespace(paper=["mutplug.paper"], full=False, cache_dir=tmp_path / "cache")
    out, ended = run_claims(["mutplug.probe1"], args, tmp_path, "m0", target, mutant, timeout=600)
    assert ended.startswith("broken: RuntimeError: a mutant that cannot be imported"), ended
    assert out["outcomes"] == [] and not out["registered"]


def test_the_draw_is_deterministic_and_depends_on_the_seed():
    source = (ROOT / "ratecheck" / "algorithms" / "fedavg.py").read_text()
    first = [m.id for m in select(mutants(source, "ratecheck.algorithms.fedavg"), 12, seed=0)]
    again = [m.id for m in select(mutants(source, "ratecheck.algorithms.fedavg"), 12, seed=0)]
    other = [m.id for m in select(mutants(source, "ratecheck.algorithms.fedavg"), 12, seed=1)]
    assert first == again and len(first) == 12 and first != other
    code = ("from pathlib import Path; from ratecheck.mutate.mutants import mutants, select; "
            f"print([m.id for m in select(mutants(Path({str(ROOT / 'ratecheck' / 'algorithms' / 'fedavg.py')!r})"
            ".read_text(), 'ratecheck.algorithms.fedavg'), 12, seed=0)])")
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                           env={**os.environ, "PYTHONHASHSEED": "123"})
    assert fresh.stdout.strip() == str(first)  # another process, another hash seed: the same draw


def test_claims_are_ordered_cheapest_first_with_exact_claims_weighted():
    costs = {"slow": 100.0, "oracle": 20.0, "fast": 8.0, "b": 1.0, "a": 1.0}
    assert order(costs, {"oracle": True}) == ["a", "b", "oracle", "fast", "slow"]  # oracle: 20 x 0.25 = 5 < 8
