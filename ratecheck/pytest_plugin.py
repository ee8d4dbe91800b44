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
from .store import NullStore, Store


class ClaimFailure(AssertionError):
    """A verdict that differs from what its claim expects, with the evidence in the message."""


def describe(outcome: Outcome) -> str:
    """A human-readable account of an outcome: claim, expected, measured, CI, evidence."""
    claim = outcome.claim
    lines = [
        f"claim {claim.id}: {claim.title}",
        f"  paper says: {claim.statement}  [{claim.source}]",
        f"  expected {claim.expect}, measured {outcome.verdict}: {outcome.reason}",
    ]
    if claim.expect_reason:
        lines.append(f"  why this expectation: {claim.expect_reason}")
    fit = outcome.evidence.get("fit")
    if fit:
        lines.append(
            f"  fitted slope {fit['slope']:+.4f}, CI [{fit['ci_low']:+.4f}, {fit['ci_high']:+.4f}], "
            f"R^2 {fit['r2']:.4f}; expected {outcome.evidence['expected_exponent']:+.4f} "
            f"({outcome.evidence['expected_from']}) +- {outcome.evidence['tolerance']}"
        )
    for row in outcome.evidence.get("rows", []):
        if "bound" in row:
            lines.append(
                f"    {claim.vary}={row['value']:g}: mean {row['mean']:.4g} (UCB {row['ucb']:.4g}) "
                f"vs bound {row['bound']:.4g}  ratio {row['ratio']:.3g}"
            )
        elif "distance" in row:
            lines.append(
                f"    {claim.vary}={row['value']:g}: distance {row['distance']:.4g} "
                f"CI [{row['low']:.4g}, {row['high']:.4g}]"
            )
    for p in outcome.points:
        if fit is None and "rows" in outcome.evidence:
            break
        mean = float(p.samples.mean()) if p.samples.size else float("nan")
        broken = [c.name for c in p.evaluation.conditions if not c.holds] if p.evaluation else []
        note = f"; conditions violated: {broken}" if broken else ""
        lines.append(f"    {claim.vary}={p.value:g}: mean {mean:.4g} over {p.samples.size} replicas{note}")
    return "\n".join(lines)


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
