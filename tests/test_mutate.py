"""ratecheck mutate (issue #23 item 4): the mutants, the import hook that serves them without touching the
user's file, the classification against the unmutated outcomes, and the command on a plugin's module
loaded from its path."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ratecheck.mutate.command import resolve
from ratecheck.mutate.mutants import mutants, select
from ratecheck.mutate.scoring import STATUSES, classify, roundoff, score, text

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "fedavg_momentum"

SOURCE = '''"""A docstring with 1 + 2."""
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    LIMIT: int = 3

SCALE = 4


def step(x, g, eta, t):
    """Doc 5 - 6."""
    if eta < 0:
        raise ValueError(f"eta {eta} < 0")
    y = x - eta * g  # the update
    y += 0.5 * (x[t] if t >= 1 else -x[0])
    return y ** 2, True
'''


def test_every_operator_is_one_token_and_the_guarded_parts_are_left_alone():
    found = mutants(SOURCE, "m")
    kinds = {m.kind for m in found}
    assert kinds == {"arithmetic", "comparison", "constant", "sign", "index", "drop"}
    for m in found:
        diff = [line for line in m.diff(SOURCE).splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        assert len(diff) == 2, m.describe()  # one line out, one line in
        compile(m.source, "m", "exec")
    changed = {m.line for m in found}
    assert not changed & {1, 5, 7, 11, 12, 13}  # docstrings, TYPE_CHECKING, ALL_CAPS, a guard and its message
    pairs = {(m.before, m.after) for m in found}
    assert {("-", "+"), ("*", "/"), (">=", ">"), ("0.5", "1.0"), ("True", "False"), ("+=", "-="), ("**", "*")} <= pairs
    assert ("-", "") in pairs and (" * g", "") in pairs  # a sign dropped, a factor dropped
    assert any(m.kind == "index" and m.after == " + 1" for m in found)


def test_selection_is_seeded_and_in_source_order():
    found = mutants(SOURCE, "m")
    a, b = select(found, 5, seed=3), select(found, 5, seed=3)
    assert [m.index for m in a] == [m.index for m in b] == sorted(m.index for m in a)
    assert select(found, None, 0) == found and len(select(found, 10**6, 0)) == len(found)


def test_the_hook_serves_the_mutant_and_its_identity_in_a_fresh_process(tmp_path):
    package = tmp_path / "plug_mut"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "values.py").write_text("VALUE = 1 + 1\n")
    mutant = tmp_path / "mutant" / "values.py"
    mutant.parent.mkdir()
    mutant.write_text("VALUE = 1 - 1\n")
    env = {**os.environ, "RATECHECK_MUTANT": f"plug_mut.values={mutant}",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    code = ("import ratecheck, plug_mut.values as v; from ratecheck.runner.identity import module_digest; "
            "import hashlib, pathlib; print(v.VALUE, v.__file__, "
            f"module_digest('plug_mut.values') == hashlib.sha256(pathlib.Path({str(mutant)!r}).read_bytes()).hexdigest())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", str(mutant), "True"]
    assert (package / "values.py").read_text() == "VALUE = 1 + 1\n"


def _outcome(claim, verdict, mean=1.0):
    return {"claim": claim, "verdict": verdict, "points": [{"mean": mean, "config_key": "k"}], "runs": {"computed": 1}}


def test_classification_against_the_baseline():
    base = {"a": _outcome("a", "PASS"), "b": _outcome("b", "FAIL")}
    assert classify(base, [], "crashed", complete=False) == ("crashed", [])
    assert classify(base, [], "broken", complete=False) == ("broken", [])
    assert classify(base, [_outcome("a", "FAIL")], "timeout", complete=False)[0] == "caught by FAIL"  # a FAIL first
    assert classify(base, [_outcome("a", "PASS")], "timeout", complete=False)[0] == "timeout"
    assert classify(base, [_outcome("a", "PASS")], complete=False)[0] == "survived"  # not known equivalent
    status, by = classify(base, [_outcome("a", "FAIL"), _outcome("b", "FAIL")])
    assert status == "caught by FAIL" and by == [{"claim": "a", "baseline": "PASS", "verdict": "FAIL"}]
    assert classify(base, [_outcome("a", "PASS"), _outcome("b", "PASS")])[0] == "caught"  # an erratum lost
    same = [{**_outcome("a", "PASS"), "points": [{"mean": 1.0, "config_key": "other"}]}, _outcome("b", "FAIL")]
    assert classify(base, same)[0] == "equivalent"  # another code identity, the same numbers
    assert classify(base, [_outcome("a", "PASS", mean=1.1), _outcome("b", "FAIL")])[0] == "survived"
    assert not roundoff(base, [_outcome("a", "PASS", mean=1.1), _outcome("b", "FAIL")])
    assert roundoff(base, [_outcome("a", "PASS", mean=1.0 + 1e-12), _outcome("b", "FAIL")])  # survived in name only
    s = score([{"status": "caught by FAIL"}, {"status": "equivalent"}, {"status": "survived"}])
    assert s["score"] == 0.5 and s["non_equivalent"] == 2 and s["detected"] == 0.5
    assert score([{"status": "equivalent", "class_run": False}])["equivalent_in_unrun_classes"] == 1


def test_a_mutant_knows_its_class():
    found = mutants("class A:\n    def f(self):\n        return 1\n\n\ndef g():\n    return 2\n", "m")
    assert [(m.line, m.scope) for m in found] == [(3, "A"), (7, "")]


def test_a_plugin_module_is_resolved_from_its_path():
    target = resolve(str(EXAMPLE / "fedavg_momentum" / "algorithm.py"), [])
    assert target.module == "fedavg_momentum.algorithm" and target.root == EXAMPLE


@pytest.mark.claims  # decides the example's claim three times in new processes (the baseline, two mutants)
def test_mutate_a_plugin_module_end_to_end(tmp_path):
    """The command on the worked example's algorithm (loaded from its path, not installed), two mutants
    on its cheapest claim: a verdict per mutant, the user's file untouched, the JSON complete."""
    path = EXAMPLE / "fedavg_momentum" / "algorithm.py"
    before = path.read_bytes()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), str(ROOT)])}
    out = subprocess.run([sys.executable, "-m", "ratecheck", "mutate", str(path), "--paper", "fedavg_momentum.paper",
                          "--claims", "fedavgm.floor_in_beta", "--max-mutants", "2", "--seed", "1", "--jobs", "1",
                          "--cache-dir", str(tmp_path / "cache"), "--json"],
                         env=env, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["module"] == "fedavg_momentum.algorithm" and result["claims"] == ["fedavgm.floor_in_beta"]
    assert result["mutants_run"] == 2 and len(result["mutants"]) == 2
    for m in result["mutants"]:
        assert m["status"] in STATUSES
        assert m["diff"].startswith("--- a/algorithm.py")
    assert path.read_bytes() == before
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("ratecheck-mutate-*/m*/algorithm.py"))
    assert "score:" in text(result)


def test_usage_errors(tmp_path):
    from ratecheck.interfaces.cli import main

    assert main(["mutate", "no.such.module", "--cache-dir", str(tmp_path)]) == 2
    assert main(["mutate", "ratecheck.algorithms.local", "--max-mutants", "0", "--cache-dir", str(tmp_path)]) == 2


@pytest.mark.claims  # decides the example's claim on the unmutated code before the first mutant exists
def test_an_interrupt_leaves_no_mutant_behind(tmp_path):
    """Ctrl-C while a mutant's check runs: the child ends, the mutant's folder goes, exit 130, the file as it was."""
    import signal
    import time

    path = EXAMPLE / "fedavg_momentum" / "algorithm.py"
    before = path.read_bytes()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXAMPLE), str(ROOT)]), "TMPDIR": str(scratch)}
    proc = subprocess.Popen([sys.executable, "-m", "ratecheck", "mutate", str(path), "--paper", "fedavg_momentum.paper",
                             "--claims", "fedavgm.floor_in_beta", "--max-mutants", "1", "--jobs", "1", "--no-cache"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 600
    while not list(scratch.glob("ratecheck-mutate-*/m*/algorithm.py")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert not list(scratch.iterdir()) and path.read_bytes() == before


def test_targets_by_name_resolve_to_their_defining_modules():
    assert resolve("fedavg", []).module == "ratecheck.algorithms.fedavg"
    assert resolve("quadratic", []).module == "ratecheck.problems.quadratic"
    assert resolve("defedavg.theorem1", []).module == "ratecheck.proofs.defedavg.theorems"
    assert resolve("ratecheck.algorithms.local", []).path.name == "local.py"


@pytest.mark.claims  # plans every registered claim's runs and reads the code identities (about 9 s)
def test_a_helper_module_is_used_by_the_claims_whose_algorithms_import_it():
    from ratecheck.mutate.command import claims_using
    from ratecheck.registry import default

    paper = {c.id: c.paper for c in default().claims()}
    ids, _ = claims_using("ratecheck.algorithms.periodic", [], "quick")
    papers = {paper[i] for i in ids}
    assert papers == {"fedbio"}  # fedbio.py imports periodic.py; the registry, which imports both, does not count
    assert {"fedbio.hunt.lemma8_stated", "fedbio.hunt.lemma8_cross_term_restored"} <= set(ids)  # searches by paper
    direct, _ = claims_using("ratecheck.algorithms.strfedavg", [], "quick")
    assert {paper[i] for i in direct} == {"strfedavg"}
