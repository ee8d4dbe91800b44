"""pytest integration: the --full profile, a shared run cache, and readable claim failures.

Registered as a pytest11 entry point, so any project that installs ratecheck can write

    def test_my_claim(ratecheck_profile, ratecheck_store):
        outcome = check_claims([MY_CLAIM], ratecheck_profile, store=ratecheck_store)[0]
        assert_outcome(outcome)
"""

from __future__ import annotations

import os

import pytest

from .claims import PROFILES, Outcome, Profile
from .explain import describe  # noqa: F401  (re-exported: the readable account of an outcome)
from .store import NullStore, Store


class ClaimFailure(AssertionError):
    """A verdict that differs from what its claim expects, with the evidence in the message."""


def assert_outcome(outcome: Outcome) -> None:
    """Raise ClaimFailure (an AssertionError) when the verdict is not the expected one."""
    if not outcome.ok:
        raise ClaimFailure(describe(outcome))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ratecheck")
    group.addoption("--full", action="store_true", help="run claims in the full profile (heavy sweeps)")
    group.addoption(
        "--ratecheck-cache",
        default=os.environ.get("RATECHECK_CACHE"),
        help="directory of the run cache for claim tests (default: none, every run is computed)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--full"):
        return
    skip = pytest.mark.skip(reason="full profile: run with --full")
    for item in items:
        if item.get_closest_marker("full") is not None:  # the marker, not any id containing "full"
            item.add_marker(skip)


@pytest.fixture(scope="session")
def ratecheck_profile(request: pytest.FixtureRequest) -> Profile:
    return PROFILES["full" if request.config.getoption("--full") else "quick"]


@pytest.fixture(scope="session")
def ratecheck_store(request: pytest.FixtureRequest) -> Store:
    root = request.config.getoption("--ratecheck-cache")
    return Store(root) if root else NullStore("")
