"""Where the wall-clock claims' band tolerances come from (issue #23 item 6): a pool of runs with distinct replica
streams, cut into disjoint blocks of the claim's own size, each block judged as the claim judges its runs.

For replica r the claim's statistic is x_r = log(measured time ratio_r) - log(predicted ratio_r) (the band is the
prediction x/ exp(tol)). A block of m runs PASSes the band when its t-interval of the mean of x lies inside
[-tol, tol], i.e. when tol > |mean| + half-width. So the tolerance a block needs is |mean_b| + hw_b, and the band
is decided on correct code with probability q when tol is the q-quantile of that need over blocks. The same blocks
give the interval's coverage of the pool mean (does the 8-run t-interval hold its level on this heavy-ish tail?)
and the model's bias (the pool mean of x). Each (grid value n, runs) gets its own tolerance (wallclock.py's tables).
tools/wallclock_band.py prints the figures; the test tests/test_wallclock_band.py (marked claims) recomputes them on
a smaller pool and checks the tolerances in wallclock.py against them.

Out of sample: a claim decides on replicas 0..7 (quick) or 0..23 (full) of its runs' seed (0), and a check under
``--seed-offset K`` on those of seed K (tools/seed_stability.py: K = 1000, ..., 5000). The pool is replicas
0..pool-1 of seed POOL_SEED_OFFSET = 10000 (streams from (seed, run identity, replica): another seed, other
streams), so no replica a claim decides on, in either profile and at any of those offsets, is in the pool that set
its tolerance (a pool at offset 0 held the claims' own replicas: their verdicts were in-sample). The functions below
default to that offset; tests/test_wallclock_band.py draws its smaller pool at 1000, apart from both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ratecheck.claims import PROFILES
from ratecheck.model.fit import mean_ci
from ratecheck.simulate.engine import run_config

from . import wallclock as w

DECIDED = 0.99  # the quantile of the blocks' needs a tolerance must reach: a PASS on 99% of seeds
POOL_SEED_OFFSET = 10_000  # the tables' pool: apart from the claims' seed 0 and the seed-stability offsets 1000-5000


@dataclass(frozen=True)
class BandFigures:
    """One claim at one n: the pool's figures and the blocks'."""

    claim: str
    n: int
    runs: int  # the claim's runs per block (its profile's)
    pool: int
    bias: float  # pool mean of x: the timing model's error in log
    sd: float  # per-run spread of x
    excess_kurtosis: float
    coverage: float  # fraction of blocks whose t-interval covers the pool mean
    need: np.ndarray  # per block: |mean| + half-width

    def quantile(self, q: float = DECIDED) -> float:
        return float(np.quantile(self.need, q))


def pool_statistic(claim: w.WallClockClaim, n: int, runs: int, pool: int, *, seed: int = POOL_SEED_OFFSET) -> np.ndarray:
    """x_r over a pool of replicas (ids 0..pool-1 of the claim's seed + `seed`; 0 would hold the claim's own)."""
    profile = PROFILES["quick"]
    mine = w.wall_config(claim.algorithm, n, claim.problem, profile)
    base = w.wall_config(claim.baseline, n, claim.problem, profile)
    tm = run_config(mine.with_(replicas=pool, seed=mine.seed + seed))
    tb = run_config(base.with_(replicas=pool, seed=base.seed + seed))
    log_ratio = np.log(w.time_to_target(tm, claim.fraction) / w.time_to_target(tb, claim.fraction))
    if not np.all(np.isfinite(log_ratio)):
        raise ValueError(f"{claim.id} n = {n}: the target is not reached in some of the {pool} runs")
    # the band's centre (its geometric mean) is the prediction, whatever the tolerance of (n, runs)
    low, high = claim.band(mine.with_(replicas=runs), base.with_(replicas=runs), w.rounds_to_target(tm, claim.fraction),
                           w.rounds_to_target(tb, claim.fraction))
    return log_ratio - 0.5 * np.log(low * high)


def band_figures(claim: w.WallClockClaim, n: int, runs: int, pool: int, *, seed: int = POOL_SEED_OFFSET) -> BandFigures:
    x = pool_statistic(claim, n, runs, pool, seed=seed)
    blocks = x[: pool // runs * runs].reshape(-1, runs)
    center = float(x.mean())
    need, covered = [], 0
    for block in blocks:
        ci = mean_ci(block, level=claim.level)
        need.append(abs(ci.mean) + (ci.high - ci.mean))
        covered += ci.low <= center <= ci.high
    z = (x - center) / x.std()
    return BandFigures(claim.id, n, runs, pool, center, float(x.std(ddof=1)), float(np.mean(z**4) - 3),
                       covered / len(blocks), np.array(need))


def claim_runs(profile: str) -> int:
    """The runs a wall-clock claim decides on in a profile (wall_config's replicas)."""
    return max(8, PROFILES[profile].replicas // 2)


def band_figures_grid(claim: w.WallClockClaim, pool: int, *, seed: int = POOL_SEED_OFFSET) -> list[BandFigures]:
    """The figures of every (grid value n, runs) the claim is decided at, in both profiles (once when equal)."""
    figures = []
    for profile in ("quick", "full"):
        for n in claim.grid[profile]:
            if profile == "full" and n in claim.grid["quick"] and claim_runs("full") == claim_runs("quick"):
                continue
            figures.append(band_figures(claim, int(n), claim_runs(profile), pool, seed=seed))
    return figures


def derived_tolerance(figures: BandFigures, q: float = DECIDED) -> float:
    """The tolerance a (n, runs) gets: its blocks' q-quantile need, rounded up to 0.01 in log."""
    return math.ceil(round(figures.quantile(q) * 100, 9)) / 100


def smallest_detected_factor(tolerance: float, figures: BandFigures, q: float = DECIDED) -> float:
    """A timing model off by a factor f shifts x by log f: it leaves the band (a FAIL) in a q-fraction of
    blocks once log f > tol + |bias| + the q-quantile half-width (read off the blocks' needs as a bound)."""
    return math.exp(tolerance + figures.quantile(q))
