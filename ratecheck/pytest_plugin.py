"""pytest integration: claims as parametrized tests, the profile, a shared run cache, readable failures.

Registered as a pytest11 entry point, so any project that installs ratecheck can write

    def test_claim(ratecheck_outcome):      # one test per claim of every installed paper and --paper
        assert_outcome(ratecheck_outcome)

or decide its own claims explicitly with ``ratecheck.check(MY_CLAIM)``. As in benchopt, the plugin's
``pytest_generate_tests`` parametrizes the ``ratecheck_claim`` fixture over the registered claims;
the runs of every collected claim are planned together and made once per session (duplicates across
claims run once), on ``--jobs`` processes, cached in ``--ratecheck-cache``. A plugin that fails to
load, or a claim naming an unknown algorithm or problem, fails its own test with the cause.

Options: ``--full`` (profile), ``--jobs N``, ``--paper MODULE_OR_PATH`` (repeatable),
``--ratecheck-cache DIR``.

Marker ``claims``: a test that decides registered claims or runs heavy sweeps. The plugin adds it to every
test that uses the claim fixtures (``ratecheck_claim``, ``ratecheck_outcome``, ``ratecheck_runs``,
``ratecheck_traces``), is parametrized over Claim objects, or is marked ``full``; mark other heavy tests
by hand. ``pytest -m "not claims"`` is then the unit layer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from .checking import ClaimFailure, assert_outcome  # noqa: F401  (re-exported)
from .claims import PROFILES, Claim, Outcome, Profile
from .explain import describe  # noqa: F401  (re-exported: the readable account of an outcome)
from .store import NullStore, Store
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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "claims: decides registered claims or runs heavy sweeps (deselect with "
                                       "-m 'not claims' for the unit layer)")
    if config.getoption("ratecheck_jobs") < 1:
        raise pytest.UsageError(f"--jobs must be >= 1, got {config.getoption('ratecheck_jobs')}")
    sources = config.getoption("ratecheck_papers")
    if sources:
        from .registry import RegistryError, default

        for spec in sources:
            try:
                default().add_source(spec)
            except RegistryError as exc:
                raise pytest.UsageError(str(exc)) from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``ratecheck_claim`` over every registered claim, plus one failing entry per
    plugin that could not be loaded (so a broken plugin is seen, and the others still run)."""
    if "ratecheck_claim" not in metafunc.fixturenames:
        return
    from .registry import default

    registry = default()
    profile = PROFILES["full" if metafunc.config.getoption("--full") else "quick"]
    # the profile's claims only (an object speaking just the claim protocol belongs to every profile)
    claims: list[Any] = [c for c in registry.claims() if getattr(c, "in_profile", lambda _: True)(profile)]
    values = claims + list(registry.errors)
    ids = [c.id for c in claims] + [f"load-error-{i}" for i in range(len(registry.errors))]
    metafunc.parametrize("ratecheck_claim", values, ids=ids, indirect=True)


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


@pytest.hookimpl(tryfirst=True)  # before -m deselects: the marker must be there when it is read
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("claims") is None and runs_claims(item):
            item.add_marker(pytest.mark.claims)
    if config.getoption("--full"):
        return
    skip = pytest.mark.skip(reason="full profile: run with --full")
    for item in items:
        if item.get_closest_marker("full") is not None:  # the marker, not any id containing "full"
            item.add_marker(skip)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember the claims that will run (after -k and deselection): their sweep is planned together."""
    chosen: dict[str, Claim] = {}
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        claim = params.get("ratecheck_claim")
        if isinstance(claim, Claim):
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
    if not isinstance(value, Claim):  # a LoadError: the plugin it names could not be registered
        pytest.fail(str(value), pytrace=False)
    return value


@pytest.fixture(scope="session")
def ratecheck_runs(request: pytest.FixtureRequest, ratecheck_profile: Profile, ratecheck_store: Store) -> SessionRuns:
    """One deduplicated sweep over the runs of every collected claim."""
    from .executors import make_executor
    from .registry import RegistryError, default
    from .sweep import gather

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
