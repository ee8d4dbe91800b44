"""pytest integration: claims as parametrized tests, the profile, a shared run cache, readable failures.

Registered as a pytest11 entry point, so any project that installs ratecheck can write

    def test_claim(ratecheck_outcome):      # one test per claim of every installed paper and --paper
        assert_outcome(ratecheck_outcome)

or decide its own claims explicitly with ``ratecheck.check(MY_CLAIM)``. As in benchopt, the plugin's
``pytest_generate_tests`` parametrizes the ``ratecheck_claim`` fixture over the registered claims;
the runs of every collected claim are planned together and made once per session (duplicates across
claims run once), on ``--jobs`` processes, cached in ``--ratecheck-cache``. A plugin that fails to
load, or a claim naming an unknown algorithm or problem, fails its own test with the cause.

Which papers become tests: the papers the project under test declares (the ``ratecheck.papers`` entry
points of the pyproject.toml in pytest's rootdir) and those given with ``--paper``; or, explicitly, the
keys in ``--ratecheck-paper KEY`` (repeatable) or the ini option ``ratecheck_papers`` (``all`` selects every
installed paper). Other installed papers are not collected. Test ids are claim ids, and ``-k`` matches a
claim's test by its claim id and paper key only (not by the test module's name).

Options: ``--full`` (profile), ``--jobs N``, ``--paper MODULE_OR_PATH`` (repeatable),
``--ratecheck-paper KEY`` (repeatable), ``--ratecheck-cache DIR``.

Marker ``claims``: a test that decides registered claims or runs heavy sweeps. The plugin adds it to every
test that uses the claim fixtures (``ratecheck_claim``, ``ratecheck_outcome``, ``ratecheck_runs``,
``ratecheck_traces``), is parametrized over Claim objects, or is marked ``full``; mark other heavy tests
by hand. ``pytest -m "not claims"`` is then the unit layer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .claims import PROFILES, Claim, Outcome, Profile
from .claims.explain import describe  # noqa: F401  (re-exported: the readable account of an outcome)
from .model.store import NullStore, Store
from .registry import RegistryError, default
from .runner.checking import ClaimFailure, assert_outcome  # noqa: F401  (re-exported)
from .trace import Trace


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ratecheck")
    group.addoption("--full", action="store_true", help="run claims in the full profile (heavy sweeps)")
    group.addoption(
        "--ratecheck-cache",
        default=os.environ.get("RATECHECK_CACHE"),
        help="directory of the run cache for claim tests (default: none, every run is computed)",
    )
    group.addoption("--jobs", type=int, default=1, dest="ratecheck_jobs",
                    help="processes for the claims' runs (default 1: serial)")
    group.addoption("--paper", action="append", default=[], dest="ratecheck_papers", metavar="MODULE_OR_PATH",
                    help="also register a paper/algorithm/problem module or .py file (repeatable)")
    group.addoption("--ratecheck-paper", action="append", default=[], dest="ratecheck_select", metavar="KEY",
                    help="collect the claims of this paper (repeatable; 'all' for every installed paper); "
                         "default: the papers of the project under test and of --paper")
    parser.addini("ratecheck_papers", type="linelist", default=[],
                  help="paper keys whose claims become tests ('all' for every installed paper)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "claims: decides registered claims or runs heavy sweeps (deselect with "
                                       "-m 'not claims' for the unit layer)")
    from .interfaces.cli_options import option_problem  # start-up: the plugin loads in every pytest run

    if problem := option_problem("jobs", config.getoption("ratecheck_jobs")):
        raise pytest.UsageError(problem)
    sources = config.getoption("ratecheck_papers")
    if sources:
        for spec in sources:
            try:
                default().add_source(spec)
            except RegistryError as exc:
                raise pytest.UsageError(str(exc)) from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``ratecheck_claim`` over the claims of the selected papers, plus one failing entry
    per selected plugin that could not be loaded (so a broken plugin is seen, and the others still run)."""
    if "ratecheck_claim" not in metafunc.fixturenames:
        return
    registry = default()
    selection = select_papers(metafunc.config, registry)
    profile = PROFILES["full" if metafunc.config.getoption("--full") else "quick"]
    # the profile's claims only (an object speaking just the claim protocol belongs to every profile)
    claims: list[Any] = [c for key in selection.keys for c in registry.papers()[key].claims
                         if getattr(c, "in_profile", lambda _: True)(profile)]
    problems = selection.problems + [e for e in registry.errors if selection.shows(e.source)]
    values = claims + problems
    ids = [c.id for c in claims] + [f"load-error-{i}" for i in range(len(problems))]
    metafunc.parametrize("ratecheck_claim", values, ids=ids, indirect=True)


@dataclass(frozen=True)
class Selection:
    """The papers whose claims become tests, and the distributions whose load errors are shown."""

    keys: tuple[str, ...]
    dists: frozenset[str] | None  # None: every distribution's (an explicit 'all')
    problems: list[str]  # selection errors, each shown as a failing test

    def shows(self, source: str) -> bool:
        return self.dists is None or source.startswith("--paper") or source.split(" ")[0] in self.dists


def select_papers(config: pytest.Config, registry: Any) -> Selection:
    """The selected paper keys: explicit (``--ratecheck-paper``, else the ini ``ratecheck_papers``), or the
    project's own (its pyproject's paper entry points) plus those registered by ``--paper``."""
    installed = registry.papers()
    explicit = list(config.getoption("ratecheck_select")) or list(config.getini("ratecheck_papers"))
    if "all" in explicit:
        return Selection(tuple(installed), None, [])
    if explicit:
        unknown = [k for k in explicit if k not in installed]
        problems = [f"--ratecheck-paper / ratecheck_papers: unknown paper {k!r}; installed papers: "
                    f"{sorted(installed)}" for k in unknown]
        return Selection(tuple(k for k in dict.fromkeys(explicit) if k in installed), frozenset(), problems)
    name, declared = project_papers(config.rootpath)
    from_sources = [item.name for item in registry.items("paper") if item.origin.startswith("--paper")]
    keys = tuple(k for k in dict.fromkeys([*declared, *from_sources]) if k in installed)
    problems = [f"the project's pyproject.toml declares paper {k!r}, but no installed paper has that key "
                f"(is the project installed? `pip install -e .`)" for k in declared if k not in installed]
    if not keys and not problems:
        problems = [f"no ratecheck paper selected: the project in {config.rootpath} declares no "
                    "'ratecheck.papers' entry point and no --paper was given; select papers with "
                    "--ratecheck-paper KEY or ratecheck_papers = KEY ... in the pytest configuration "
                    f"(installed: {sorted(installed)}, or 'all')"]
    dists = frozenset({name}) if name else frozenset()
    return Selection(keys, dists, problems)


def project_papers(rootdir: Path) -> tuple[str | None, list[str]]:
    """The project's distribution name and the paper keys its pyproject.toml declares (none without one)."""
    pyproject = rootdir / "pyproject.toml"
    try:
        import tomllib  # type: ignore[import-not-found, unused-ignore]  # Python 3.11+
    except ImportError:  # Python 3.10: no TOML reader in the standard library
        return None, []
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, ValueError):
        return None, []
    papers = project.get("entry-points", {}).get("ratecheck.papers", {})
    return project.get("name"), list(papers)


# fixtures whose use means the test decides registered claims on their runs
CLAIM_FIXTURES = frozenset({"ratecheck_claim", "ratecheck_outcome", "ratecheck_runs", "ratecheck_traces"})


def runs_claims(item: pytest.Item) -> bool:
    """True when a test decides registered claims or runs heavy sweeps (it gets the ``claims`` marker)."""
    if CLAIM_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(isinstance(v, Claim) for v in params.values()):
        return True
    return item.get_closest_marker("full") is not None


@pytest.hookimpl(tryfirst=True)  # before -m and -k deselect: the marker must be there when it is read
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    select_by_keyword(config, items)
    for item in items:
        if item.get_closest_marker("claims") is None and runs_claims(item):
            item.add_marker(pytest.mark.claims)
    if config.getoption("--full"):
        return
    skip = pytest.mark.skip(reason="full profile: run with --full")
    for item in items:
        if item.get_closest_marker("full") is not None:  # the marker, not any id containing "full"
            item.add_marker(skip)


def _param(item: pytest.Item) -> Any:
    """The value ``ratecheck_claim`` is parametrized with (a Claim, or a load/selection error), or None."""
    return getattr(getattr(item, "callspec", None), "params", {}).get("ratecheck_claim")


def claim_of(item: pytest.Item) -> Claim | None:
    claim = _param(item)
    return claim if isinstance(claim, Claim) else None


def select_by_keyword(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Apply ``-k`` here, matching a claim's test by its claim id and paper key only (pytest would also
    match the test module's name, so ``-k mypaper`` in test_mypaper.py selected every installed claim);
    other tests match as pytest matches them. pytest's own pass then has nothing left to do."""
    expression = config.option.keyword.lstrip()
    if not expression or all(_param(item) is None for item in items):
        return
    # pytest's own parser and matcher (substring, case-insensitive), so -k reads as it always does
    from _pytest.mark import KeywordMatcher, _parse_expression

    compiled = _parse_expression(expression, "Wrong expression passed to '-k'")
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        claim = claim_of(item)
        if claim is None and _param(item) is not None:
            kept.append(item)  # a selection or load error: it explains missing claims, whatever -k says
            continue
        matcher = KeywordMatcher(frozenset({claim.id, claim.paper})) if claim else KeywordMatcher.from_item(item)
        (kept if compiled.evaluate(matcher) else dropped).append(item)
    config.option.keyword = ""  # decided here
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember the claims that will run (after -k and deselection): their sweep is planned together."""
    chosen: dict[str, Claim] = {}
    for item in session.items:
        claim = claim_of(item)
        if claim is not None:
            chosen.setdefault(claim.id, claim)
    session.config.stash[_CLAIMS] = list(chosen.values())


_CLAIMS = pytest.StashKey[list]()


@dataclass
class SessionRuns:
    """The traces of every collected claim's runs, and the claims whose runs could not be planned."""

    traces: Mapping[str, Trace]
    refused: dict[str, str] = field(default_factory=dict)


@pytest.fixture(scope="session")
def ratecheck_profile(request: pytest.FixtureRequest) -> Profile:
    return PROFILES["full" if request.config.getoption("--full") else "quick"]


@pytest.fixture(scope="session")
def ratecheck_store(request: pytest.FixtureRequest) -> Store:
    root = request.config.getoption("--ratecheck-cache")
    return Store(root) if root else NullStore("")


@pytest.fixture
def ratecheck_claim(request: pytest.FixtureRequest) -> Claim:
    """One registered claim (parametrized by pytest_generate_tests)."""
    value = request.param
    if not isinstance(value, Claim):  # a LoadError or a selection error: fail with its account
        pytest.fail(str(value), pytrace=False)
    return value


@pytest.fixture(scope="session")
def ratecheck_runs(request: pytest.FixtureRequest, ratecheck_profile: Profile, ratecheck_store: Store) -> SessionRuns:
    """One deduplicated sweep over the runs of every collected claim."""
    # start-up: this plugin loads in every pytest run; the run machinery only once a session collects claims
    from .runner.executors import make_executor
    from .runner.sweep import gather

    claims, refused = [], {}
    for claim in request.config.stash.get(_CLAIMS, []):
        try:
            default().plan([claim], ratecheck_profile)
            claims.append(claim)
        except RegistryError as exc:
            refused[claim.id] = str(exc)
    with make_executor(jobs=request.config.getoption("ratecheck_jobs")) as executor:
        # runs and searches (hunts, bisections) alike, through the store
        results, _ = gather(claims, ratecheck_profile, store=ratecheck_store, executor=executor, progress=False)
    return SessionRuns(results, refused)


@pytest.fixture(scope="session")
def ratecheck_traces(ratecheck_runs: SessionRuns) -> Mapping[str, Trace]:
    """Traces by config key of every collected claim's runs (made once per session)."""
    return ratecheck_runs.traces


@pytest.fixture
def ratecheck_outcome(ratecheck_claim: Claim, ratecheck_profile: Profile, ratecheck_runs: SessionRuns) -> Outcome:
    """The claim decided on the session's runs; assert it with ``assert_outcome``."""
    if ratecheck_claim.id in ratecheck_runs.refused:
        pytest.fail(ratecheck_runs.refused[ratecheck_claim.id], pytrace=False)
    return ratecheck_claim.decide(ratecheck_profile, ratecheck_runs.traces)
