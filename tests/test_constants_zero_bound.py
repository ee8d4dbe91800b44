"""A constant declared as a sup over a region where nothing above 0 is found (a homogeneous instance's
heterogeneity): the bound rule holds for any declared value >= 0, and a tight one only at 0."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ratecheck.claims import Verdict
from ratecheck.claims.constants import ConstantsAgree, Independent
from ratecheck.claims.model import PointResult
from ratecheck.trace import RunConfig

CONFIG = RunConfig("fedavg", {}, "quadratic", {}, rounds=1, replicas=1)


def _decide(declared: float, tight: float | None) -> Verdict:
    computation = Independent(lambda problem: 0.0, "sup of ||grad f_i - grad f_j|| on the ball", bound=True, tight=tight)
    claim = SimpleNamespace(computations={"zeta": computation}, vary="instance")
    point = PointResult(0.0, CONFIG, np.empty(0), 0, stats={"instance": 0, "constant": "zeta", "declared": declared,
                                                          "independent": 0.0, "relative": float("inf")})
    return ConstantsAgree()(claim, [point], None)[0]


def test_a_bound_over_nothing_found_holds_when_it_is_not_negative():
    assert _decide(0.5, None) == Verdict.PASS and _decide(0.0, 0.05) == Verdict.PASS
    assert _decide(0.5, 0.05) == Verdict.FAIL  # declared tight, but nothing near 0.5 is reached
    assert _decide(-0.1, None) == Verdict.FAIL
