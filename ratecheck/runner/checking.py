"""``ratecheck.check``: decide claims from Python (a researcher's own test file, a notebook) and fail
with the package's readable account of every unexpected verdict.

    from ratecheck import check
    from my_paper import SLOPE_CLAIM

    def test_speedup():
        check(SLOPE_CLAIM)            # AssertionError with claim, expected, measured, CI, evidence

Claims may also be given as patterns of registered claim ids ("defedavg.T2*"). Runs are shared
across the claims of one call (duplicates run once) and cached in ``cache_dir`` (default: the
RATECHECK_CACHE environment variable, else no cache).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import registry
from ..algorithms.base import swapped
from ..claims import PROFILES
from ..claims.explain import describe
from ..model.store import NullStore, Store

if TYPE_CHECKING:
    from ..algorithms.base import Algorithm
    from ..claims import Claim, Outcome, Profile

__all__ = ["ClaimFailure", "assert_outcome", "check"]


class ClaimFailure(AssertionError):
    """A verdict that differs from what its claim expects, with the evidence in the message."""


def assert_outcome(outcome: Outcome) -> None:
    """Raise ClaimFailure (an AssertionError) when the verdict is not the expected one."""
    if not outcome.ok:
        raise ClaimFailure(describe(outcome))


def check(
    *claims: Claim | str,
    profile: str | Profile = "quick",
    jobs: int = 1,
    cache_dir: str | os.PathLike | None = None,
    algorithms: Mapping[str, type[Algorithm[Any]]] | None = None,
) -> list[Outcome]:
    """Run and decide the claims; raise ClaimFailure describing every unexpected verdict.

    Returns the outcomes when all are as expected. Names the claims use are resolved through the
    registry (installed papers and sources added with ``ratecheck.registry.add_source``);
    ``algorithms`` maps names to classes used instead (a variant under test, a broken variant), in
    this process (so with jobs=1).
    """
    if algorithms:
        if jobs != 1:
            raise ValueError(f"check(algorithms=...) runs the variants in this process: jobs must be 1, got {jobs}")
        with swapped(algorithms):
            return check(*claims, profile=profile, jobs=1, cache_dir=cache_dir)
    # start-up: the pytest plugin imports this module in every pytest run; the run machinery loads here
    from .executors import make_executor
    from .sweep import check_claims, load_plans

    chosen: list[Claim] = []
    for claim in claims:
        chosen += registry.select_claims(claim) if isinstance(claim, str) else [claim]
    if not chosen:
        raise ValueError("check() needs at least one claim or pattern")
    profile = PROFILES[profile] if isinstance(profile, str) else profile
    root = cache_dir if cache_dir is not None else os.environ.get("RATECHECK_CACHE")
    store = Store(root) if root else NullStore("")
    load_plans(chosen, profile, store)  # planned runs are stored too: a cached check plans nothing
    registry.plan(chosen, profile)  # an unknown algorithm or problem: which claim, before any run
    with make_executor(jobs=jobs) as executor:
        outcomes = check_claims(chosen, profile, store=store, executor=executor, progress=False)
    unexpected = [o for o in outcomes if not o.ok]
    if unexpected:
        failure = ClaimFailure("\n\n".join(describe(o) for o in unexpected))
        failure.outcomes = outcomes  # type: ignore[attr-defined]  # every outcome, for ratecheck.notebook.check
        raise failure
    return outcomes
