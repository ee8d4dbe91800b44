"""The wall-clock claims' band tolerances are what a pool of runs says they need (proofs/defedavg/wallclock_band.py,
tools/wallclock_band.py), per grid value and block size: on disjoint blocks of the claim's size (distinct replica
streams, another seed than the claims' own), the tolerance used at each (n, runs) decides nearly every block, and is
not far above what those blocks need."""

import math

import pytest

from ratecheck.proofs.defedavg import wallclock as w
from ratecheck.proofs.defedavg.wallclock_band import band_figures_grid, claim_runs

POOL = 384  # 48 blocks of 8 and 16 of 24 per grid value: a few minutes on an idle machine

pytestmark = pytest.mark.claims


@pytest.mark.parametrize("claim,used", [(w.WALL_IID, w.WALL_IID_TOLERANCE), (w.WALL_NIID, w.WALL_NIID_TOLERANCE)],
                         ids=lambda x: getattr(x, "id", ""))
def test_each_band_tolerance_decides_its_blocks_and_is_not_inflated(claim, used):
    figures = band_figures_grid(claim, POOL, seed=1000)  # seeds apart from the tool's (0) and the claims'
    assert sorted((f.n, f.runs) for f in figures) == sorted(used)  # one tolerance per (n, runs) a claim decides at
    for f in figures:
        tol = used[(f.n, f.runs)]
        decided = float((f.need < tol).mean())
        # the tool's 1024-run pools put the 99% quantile under the tolerance; a pool of 384 estimates a block's
        # chance of a PASS to about +-0.03 (48 blocks) or +-0.05 (16): 0.9 is two of those below 0.99
        assert decided >= 0.9, (claim.id, f.n, f.runs, tol, decided)
        # the 8-run t-interval holds its level on these tails (binomial sd ~0.03 at 48 blocks)
        if f.runs == claim_runs("quick"):
            assert f.coverage >= 0.85, (claim.id, f.n, f.coverage)
        # not inflated: within log 1.1 of the largest need of that (n, runs)'s blocks
        assert tol <= f.need.max() + math.log(1.1), (claim.id, f.n, f.runs, tol, f.need.max())

