"""The pytest plugin, run as a researcher would run it: a paper file outside the package, a test file
using the parametrized fixture, and ``ratecheck.check`` in a test of their own.

The researcher's sessions run in this process (pytester's in-process runs) on a fresh process-wide
registry, restored afterwards, so that ``--paper`` leaves nothing behind for the later tests; one of
them also runs in a new process, as the researcher runs it (marked ``claims``: it decides claims)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ratecheck import registry
from ratecheck.algorithms import base

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


@pytest.fixture(scope="module", autouse=True)
def package_imported() -> None:
    """The package's modules that the in-process sessions use, imported before pytester's snapshot of
    sys.modules (pytester forgets the modules imported after it: a second copy of one would break
    isinstance in later tests, and the registry would meet its algorithms twice)."""
    registry.default().ensure()  # every paper, algorithm and problem family of the package
    import ratecheck.runner.executors  # noqa: F401  (the plugin's session sweep)
    import ratecheck.runner.sweep  # noqa: F401


@contextmanager
def new_registry() -> Iterator[None]:
    """A new process-wide registry for one in-process session, as a new process would have; this
    process's registry and algorithm tables as they were afterwards (pytester restores sys.modules and
    sys.path)."""
    tables = (base.REGISTRY, base.DECLARED, base.ORIGINS, base.BY_MODULE)
    saved = [{k: (list(v) if isinstance(v, list) else v) for k, v in t.items()} for t in tables]
    previous = registry.reset(None)
    try:
        yield
    finally:
        registry.reset(previous)
        for table, value in zip(tables, saved):
            table.clear()
            table.update(value)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # this checkout's ratecheck in a new process
    pytester.makepyfile(mine_paper=PAPER, test_researcher=TESTS)
    return pytester


def run(pytester: pytest.Pytester, *args: str, new_process: bool = False) -> pytest.RunResult:
    """The researcher's pytest session, with a new registry as their run has: in this process by default."""
    if new_process:
        return pytester.runpytest_subprocess(*args, "-p", "no:cacheprovider")
    seen = _PackageModules()
    before = package_modules()
    with new_registry():
        # without the two plugins that end a session with a full gc.collect of this process's large heap
        result = pytester.runpytest_inprocess(*args, "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p",
                                              "no:unraisableexception", plugins=[seen])
    first = sorted(seen.names - before)
    assert not first, f"first imported by an in-process session (import them in package_imported): {first}"
    return result


def package_modules() -> set[str]:
    return {name for name in sys.modules if name.partition(".")[0] == "ratecheck"}


class _PackageModules:
    """The package's modules imported at the end of an in-process session (pytester then forgets the
    modules the session imported first: a second copy of one would break isinstance in later tests)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def pytest_sessionfinish(self) -> None:
        self.names = package_modules()


@pytest.mark.parametrize("new_process", [False, pytest.param(True, marks=pytest.mark.claims)],
                         ids=["in_process", "new_process"])
def test_claims_from_a_paper_file_become_tests(project: pytest.Pytester, new_process: bool):
    result = run(project, "--paper", "mine_paper.py", "-k", "mine or one_sweep or explicit", new_process=new_process)
    result.assert_outcomes(passed=3, failed=1, errors=1)  # the typo fails at setup, before any run
    result.stdout.fnmatch_lines(["*FAILED test_researcher.py::test_claim?mine.wrong?*",
                                 "*ERROR test_researcher.py::test_claim?mine.typo?*"])
    result.stdout.fnmatch_lines(["*claim mine.wrong: wrong", "*expected PASS, measured FAIL*"])
    text = result.stdout.str()
    assert "claim mine.typo (paper 'mine' from --paper" in text and "unknown algorithm 'fedavgg'" in text
    assert "why this expectation: the prediction is deliberately wrong" in text


def test_a_broken_paper_file_is_a_usage_error(project: pytest.Pytester):
    project.makepyfile(broken_paper="PAPER = (\n")
    result = run(project, "--paper", "broken_paper.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--paper *broken_paper.py: SyntaxError*line 1*"])


def test_tests_that_decide_claims_are_marked_claims(project: pytest.Pytester):
    """`-m "not claims"` leaves the unit tests: the plugin marks the claim fixtures' tests by itself."""
    result = run(project, "--paper", "mine_paper.py", "-m", "not claims", "--collect-only", "-q")
    text = result.stdout.str()
    assert "test_explicit_check" in text  # decides a claim by hand: a unit of the researcher's own
    assert "test_claim[" not in text and "test_one_sweep_for_all_claims" not in text
    marked = run(project, "--paper", "mine_paper.py", "-m", "claims", "--collect-only", "-q")
    assert "test_claim[mine.wrong]" in marked.stdout.str()


def collected_claims(result: pytest.RunResult) -> set[str]:
    """The claim ids of the collected ``test_claim`` items (from ``--collect-only -q``)."""
    lines = [line for line in result.stdout.lines if "::test_claim[" in line]
    return {line.split("::test_claim[", 1)[1].rstrip("]") for line in lines}


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


def test_nothing_selected_says_how_to_select(pytester: pytest.Pytester):
    pytester.makepyfile(test_x="def test_claim(ratecheck_claim):\n    pass\n")
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no ratecheck paper selected*--ratecheck-paper KEY*"])


def test_k_matches_claim_ids_and_paper_keys_not_the_module(pytester: pytest.Pytester):
    """`-k mine` in test_mine_strfedavg.py selects paper mine's claims only, although the module's name
    (which pytest's -k matches) contains both paper keys; other tests match as pytest matches them."""
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
