"""Test helpers for trajectory oracles (claims that hold a run against a recursion written from the paper,
``ratecheck.claims.trajectory``): decide one on the quick profile, name a paper's oracles by their run, and
the two tests every module of oracles has: each oracle PASSes on the code (on the exact recursion where it is
exact), and each plausible single bug, monkeypatched in, makes the oracle it names FAIL. For example::

    from ratecheck.testing import oracles as kit
    from mypaper import oracles

    def _patch(monkeypatch, mutation):
        if mutation == "noise_scale":
            monkeypatch.setattr(MyProblem, "stochastic_grad", unscaled_grad)

    test_oracles_pass_on_the_code = kit.passes_on_the_code(oracles.CLAIMS)
    test_plausible_bugs_fail = kit.bugs_fail(oracles.CLAIMS, _patch, [("noise_scale", "myalg")])
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from ..claims import PROFILES, Profile, Verdict
from ..claims.base import Claim, Outcome
from ..runner.sweep import check_claims

PROFILE = PROFILES["quick"]
# patch(monkeypatch, mutation): apply the named plausible bug (undone by pytest's monkeypatch after the test)
Patch = Callable[[Any, str], None]


def decide(claim: Claim, profile: Profile = PROFILE) -> Outcome:
    """The claim decided on its own runs of ``profile`` (no store: every run is computed here)."""
    return check_claims([claim], profile, progress=False)[0]


def short_name(claim: Claim) -> str:
    """The last part of the claim's id without ``_trajectory``: ``defedavg.oracle.fedavg_trajectory`` is
    ``fedavg``, ``defedavg.oracle.defedavg_niid_replay`` is ``defedavg_niid_replay``."""
    return claim.id.rsplit(".", 1)[-1].removesuffix("_trajectory")


def by_name(claims: Iterable[Claim]) -> dict[str, Claim]:
    """The claims by their short names; two claims of one name are an error (a test would pick one)."""
    named: dict[str, Claim] = {}
    for claim in claims:
        name = short_name(claim)
        if name in named:
            raise ValueError(f"two oracles are named {name!r}: {named[name].id} and {claim.id}")
        named[name] = claim
    return named


def assert_passes(claim: Claim, exact: bool | None = True) -> Outcome:
    """Decide ``claim`` and require PASS; ``exact`` True (False) also requires that it was decided on the
    exact recursion (on Monte-Carlo replicas), None does not look."""
    outcome = decide(claim)
    assert outcome.verdict == Verdict.PASS, (claim.id, outcome.reason)
    if exact is not None:
        assert outcome.evidence["exact"] is exact, (claim.id, outcome.evidence.get("exact"))
    return outcome


def assert_fails(claim: Claim, mutation: str = "") -> Outcome:
    """Decide ``claim`` (with a bug patched in) and require FAIL; the message names the mutation."""
    outcome = decide(claim)
    assert outcome.verdict == Verdict.FAIL, (mutation, claim.id, outcome.reason)
    return outcome


def passes_on_the_code(claims: Iterable[Claim], *, inexact: Collection[str] = (),
                       exact: bool | None = True) -> Any:
    """A test, parametrized over ``claims`` (assign it to a test_* name in a test module): each PASSes on the
    code, decided on the exact recursion (``exact=True``) except those whose short names are in ``inexact``,
    which are decided on Monte-Carlo replicas; ``exact=None`` does not look at how."""
    import pytest

    named = by_name(claims)
    if not named:
        raise ValueError("passes_on_the_code needs at least one oracle claim (an empty list tests nothing)")
    unknown = set(inexact) - set(named)
    if unknown:
        raise ValueError(f"inexact names no oracle: {sorted(unknown)} (the oracles: {sorted(named)})")

    @pytest.mark.parametrize("claim", list(named.values()), ids=short_name)
    def test(claim: Claim) -> None:
        assert_passes(claim, None if exact is None else exact and short_name(claim) not in inexact)

    return test


def bugs_fail(claims: Iterable[Claim], patch: Patch, bugs: Iterable[tuple[str, str]]) -> Any:
    """A test, parametrized over ``bugs``, pairs (mutation, short name of the oracle that must see it): with
    ``patch(monkeypatch, mutation)`` applied, that oracle FAILs."""
    import pytest

    named: Mapping[str, Claim] = by_name(claims)
    cases = list(bugs)
    missing = sorted({name for _, name in cases} - set(named))
    if missing or not cases:
        raise ValueError(f"bugs must name oracles among {sorted(named)}: {missing or 'none given'}")

    # the claim is a parameter, so the pytest plugin marks each case ``claims``
    params = [pytest.param(mutation, named[name], id=f"{mutation}-{name}") for mutation, name in cases]

    @pytest.mark.parametrize("mutation, claim", params)
    def test(monkeypatch: Any, mutation: str, claim: Claim) -> None:
        patch(monkeypatch, mutation)
        assert_fails(claim, mutation)

    return test
