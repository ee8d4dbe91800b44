"""The trajectory oracles' threshold rule on per-replica deviations (ratecheck.claims.trajectory)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from ratecheck.claims import PROFILES, Verdict
from ratecheck.claims.trajectory import DeviationCeiling, median_lower_bound, trajectory_oracle
from ratecheck.theory import Source
from ratecheck.trace import RunConfig, Trace

PROFILE = PROFILES["quick"]
GRID = (4, 8, 16, 32, 64)


def test_the_median_bound_is_the_order_statistic_the_binomial_allows():
    x = np.arange(16.0)[::-1]
    # P(Bin(16, 1/2) >= 5) = 0.962 >= 0.95 > P(Bin(16, 1/2) >= 6) = 0.895: the 5th smallest of 16
    assert median_lower_bound(x, 0.95) == 4.0
    assert median_lower_bound(np.ones(4), 0.95) == -np.inf  # 1 - 2^-4 < 0.95: no order statistic is a bound


def test_the_median_bound_covers_at_its_level_on_heavy_tails():
    rng = np.random.default_rng(7)
    samples = rng.lognormal(0.0, 3.0, size=(4000, 16))  # median 1
    covered = np.mean([median_lower_bound(s, 0.95) <= 1.0 for s in samples])
    exact = stats.binom.sf(4, 16, 0.5)  # P(at least 5 of 16 below the median): the bound's exact coverage, 0.962
    assert abs(covered - exact) < 4 * np.sqrt(exact * (1 - exact) / 4000)  # 4 standard errors of 4000 draws


def _claim():
    def configure(value, profile):
        return RunConfig("fedavg", {"v": value}, "quadratic", {}, rounds=2, replicas=16, checkpoints=2)

    return trajectory_oracle(id="t.oracle", paper="t", title="t", statement="s", source=Source("synthetic", "t"),
                             configure=configure, oracle=lambda config, checkpoints: {"m": np.ones(len(checkpoints))},
                             measures=["m"], rtol=1e-9, tolerance_reason="round-off", grid={"quick": GRID})


def _traces(claim, replica_values):
    out = {}
    for value in GRID:
        config = claim.configure(value, PROFILE)
        m = np.vstack([np.ones(16), replica_values])
        out[config.key()] = Trace(config=config, replica_ids=np.arange(16), checkpoints=np.array([0, 2]),
                                  measures={"m": m}, counters={}, final={"x": np.zeros((16, 2))},
                                  diverged_round=np.full(16, -1))
    return out


def test_a_heavy_tailed_monte_carlo_fallback_fails_an_oracle_of_exact_expectations():
    claim = _claim()
    assert isinstance(claim.rule, DeviationCeiling)
    # every replica off by O(1) and one by 1e6 (a run that left exact mode): the mean's t interval reaches below 0
    far = np.r_[np.linspace(1.5, 3.0, 15), 1e6]
    outcome = claim.decide(PROFILE, _traces(claim, far))
    assert outcome.verdict == Verdict.FAIL and "median" in outcome.reason
    assert claim.decide(PROFILE, _traces(claim, np.full(16, 1.0 + 1e-13))).verdict == Verdict.PASS
