"""The pytest plugin, run as a researcher would run it: a paper file outside the package, a test file
using the parametrized fixture, and ``ratecheck.check`` in a test of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[1]

# Two claims on one run: a ValueClaim whose prediction is far off. Expected FAIL: as expected;
# expected PASS: an unexpected verdict, reported with the package's readable account.
PAPER = '''
from ratecheck.claims import ValueClaim, Verdict
from ratecheck.paper import Paper
from ratecheck.theory import Source
from ratecheck.trace import RunConfig

SRC = Source("mine.txt", "Theorem 1")


def configure(value, profile):
    return RunConfig("fedavg", {"eta_local": 0.05}, "quadratic", {"dim": 2, "clients": 4, "sigma": 0.1},
                     rounds=20, replicas=profile.replicas)


def claim(name, expect, algorithm="fedavg"):
    config = configure if algorithm == "fedavg" else (lambda v, p: configure(v, p).with_(algorithm=algorithm))
    return ValueClaim(id=f"mine.{name}", paper="mine", title=name, statement="the floor is 1e6", source=SRC,
                      vary="v", grid={"quick": (1,), "full": (1,)}, configure=config, measure="grad_norm_sq",
                      predict=lambda c: 1e6, prediction="a floor of 1e6", expect=expect,
                      expect_reason="the prediction is deliberately wrong")


EXPECTED_FAIL = claim("expected_fail", Verdict.FAIL)
WRONG = claim("wrong", Verdict.PASS)
TYPO = claim("typo", Verdict.PASS, algorithm="fedavgg")
PAPER = Paper(key="mine", title="Mine", seed="mine.txt", claims=(EXPECTED_FAIL, WRONG, TYPO))
'''

TESTS = '''
import pytest
from ratecheck import check
from ratecheck.pytest_plugin import assert_outcome


def test_claim(ratecheck_outcome):
    assert_outcome(ratecheck_outcome)


def test_one_sweep_for_all_claims(ratecheck_traces):
    assert len(ratecheck_traces) == 1  # the two decidable claims share their run


def test_explicit_check():
    import mine_paper
    assert check(mine_paper.EXPECTED_FAIL)[0].verdict.value == "FAIL"
    with pytest.raises(AssertionError, match="expected PASS, measured FAIL"):
        check(mine_paper.WRONG)
'''


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # this checkout's ratecheck in the subprocess
    pytester.makepyfile(mine_paper=PAPER, test_researcher=TESTS)
    return pytester


def test_claims_from_a_paper_file_become_tests(project: pytest.Pytester):
    result = project.runpytest_subprocess("--paper", "mine_paper.py", "-k", "mine or one_sweep or explicit", "-p",
                                          "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1, errors=1)  # the typo fails at setup, before any run
    result.stdout.fnmatch_lines(["*FAILED test_researcher.py::test_claim?mine.wrong?*",
                                 "*ERROR test_researcher.py::test_claim?mine.typo?*"])
    result.stdout.fnmatch_lines(["*claim mine.wrong: wrong", "*expected PASS, measured FAIL*"])
    text = result.stdout.str()
    assert "claim mine.typo (paper 'mine' from --paper" in text and "unknown algorithm 'fedavgg'" in text
    assert "why this expectation: the prediction is deliberately wrong" in text


def test_a_broken_paper_file_is_a_usage_error(project: pytest.Pytester):
    project.makepyfile(broken_paper="PAPER = (\n")
    result = project.runpytest_inprocess("--paper", "broken_paper.py", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--paper *broken_paper.py: SyntaxError*line 1*"])


def test_tests_that_decide_claims_are_marked_claims(project: pytest.Pytester):
    """`-m "not claims"` leaves the unit tests: the plugin marks the claim fixtures' tests by itself. (In new
    processes: in this one, --paper would leave paper 'mine' in the registry the later tests read.)"""
    result = project.runpytest_subprocess("--paper", "mine_paper.py", "-m", "not claims", "-p", "no:cacheprovider",
                                          "--collect-only", "-q")
    text = result.stdout.str()
    assert "test_explicit_check" in text  # decides a claim by hand: a unit of the researcher's own
    assert "test_claim[" not in text and "test_one_sweep_for_all_claims" not in text
    marked = project.runpytest_subprocess("--paper", "mine_paper.py", "-m", "claims", "-p", "no:cacheprovider",
                                          "--collect-only", "-q")
    assert "test_claim[mine.wrong]" in marked.stdout.str()


def collected_claims(result: pytest.RunResult) -> set[str]:
    """The claim ids of the collected ``test_claim`` items (from ``--collect-only -q``)."""
    lines = [line for line in result.stdout.lines if "::test_claim[" in line]
    return {line.split("::test_claim[", 1)[1].rstrip("]") for line in lines}


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest in a new process, with this checkout's ratecheck (a new registry, as a researcher's run has)."""
    return pytester.runpytest_subprocess(*args, "-p", "no:cacheprovider")


def test_only_the_project_papers_become_tests(project: pytest.Pytester):
    """By default the papers of the project under test (and --paper) are collected, not every installed
    paper; --ratecheck-paper and the ini option select explicitly; an unknown key is a failing test."""
    own = collected_claims(run(project, "--paper", "mine_paper.py", "--collect-only", "-q"))
    assert own == {"mine.expected_fail", "mine.wrong", "mine.typo"}  # no installed paper's claim

    project.makefile(".toml", pyproject='[project]\nname = "theirs"\n\n'
                                        '[project.entry-points."ratecheck.papers"]\nstrfedavg = "x:PAPER"\n')
    declared = collected_claims(run(project, "--collect-only", "-q"))
    assert declared and all(c.startswith("strfedavg.") for c in declared)  # the project's declared paper

    project.makeini("[pytest]\nratecheck_papers = fessgda\n")
    ini = collected_claims(run(project, "--collect-only", "-q"))
    assert ini and all(c.startswith("fessgda.") for c in ini)

    unknown = run(project, "--ratecheck-paper", "nosuch", "-k", "no_claim_matches_this")
    unknown.assert_outcomes(errors=1)  # the selection error is kept by any -k: it explains missing claims
    unknown.stdout.fnmatch_lines(["*unknown paper 'nosuch'; installed papers: [[]*'fessgda'*"])


def test_nothing_selected_says_how_to_select(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makepyfile(test_x="def test_claim(ratecheck_claim):\n    pass\n")
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no ratecheck paper selected*--ratecheck-paper KEY*"])


def test_k_matches_claim_ids_and_paper_keys_not_the_module(pytester: pytest.Pytester,
                                                           monkeypatch: pytest.MonkeyPatch):
    """`-k mine` in test_mine_strfedavg.py selects paper mine's claims only, although the module's name
    (which pytest's -k matches) contains both paper keys; other tests match as pytest matches them."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makepyfile(mine_paper=PAPER)
    pytester.makepyfile(test_mine_strfedavg="def test_claim(ratecheck_claim):\n    pass\n\n\n"
                                            "def test_plain():\n    pass\n")
    args = ("--paper", "mine_paper.py", "--ratecheck-paper", "all", "--collect-only", "-q")
    mine = run(pytester, *args, "-k", "mine")
    assert collected_claims(mine) == {"mine.expected_fail", "mine.wrong", "mine.typo"}
    assert "test_mine_strfedavg.py::test_plain" in mine.stdout.str()  # by its module's name, as ever
    other = run(pytester, *args, "-k", "strfedavg and not selection or plain")
    chosen = collected_claims(other)
    assert chosen and all(c.startswith("strfedavg.") and "selection" not in c for c in chosen)
    assert "test_mine_strfedavg.py::test_plain" in other.stdout.str()
