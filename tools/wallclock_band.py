"""Print where DeFedAvg's wall-clock band tolerances come from (issue #23 item 6; proofs/defedavg/wallclock_band.py).

For each wall-clock claim and each (grid value n, runs a block decides on) of both profiles: a pool of runs cut into
disjoint blocks of the claim's size, the timing model's bias, the per-run spread, the blocks' interval coverage and
the tolerance a block needs to be decided; then the tolerance derived for that (n, runs) (its blocks' 99% quantile
need, rounded up to 0.01) against the one wallclock.py uses, and the smallest model error it fails.

    nice -n 5 python tools/wallclock_band.py [--pool 1024] [--seed 10000]

The pool's seed offset defaults to POOL_SEED_OFFSET (10000): apart from the seeds of every replica the claims decide
on (0 registered, 1000-5000 under tools/seed_stability.py), so the tables are derived out of sample.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ratecheck.params import RUN_PARAMS, ParamError, check_option  # noqa: E402
from ratecheck.proofs.defedavg import wallclock as w  # noqa: E402
from ratecheck.proofs.defedavg.wallclock_band import (  # noqa: E402
    DECIDED,
    POOL_SEED_OFFSET,
    band_figures_grid,
    claim_runs,
    derived_tolerance,
    smallest_detected_factor,
)

USED = {w.WALL_IID.id: w.WALL_IID_TOLERANCE, w.WALL_NIID.id: w.WALL_NIID_TOLERANCE}
OWNER = "tools/wallclock_band.py"


def options(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, each option checked against its declaration in ratecheck.params."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pool", type=int, default=1024, help="runs per configuration (default 1024)")
    parser.add_argument("--seed", type=int, default=POOL_SEED_OFFSET,
                        help=f"offset added to the claims' seeds (default {POOL_SEED_OFFSET}: none of their replicas)")
    args = parser.parse_args(argv)
    try:
        RUN_PARAMS["replicas"].check("pool", args.pool, OWNER)  # the pool is one run's replicas
        check_option(OWNER, "seed", args.seed, declared="seed_offset")
        block = max(claim_runs(profile) for profile in ("quick", "full"))
        if args.pool < block:
            raise ParamError(OWNER, "pool", args.pool, f"must hold one block of the largest claim size ({block} runs)")
    except ParamError as exc:
        parser.error(str(exc))
    return args


def main(argv: list[str] | None = None) -> None:
    args = options(argv)
    for claim in (w.WALL_IID, w.WALL_NIID):
        figures = band_figures_grid(claim, args.pool, seed=args.seed)
        used = USED[claim.id]
        print(f"{claim.id} (pool {args.pool}, seed offset {args.seed})")
        print("   n  runs  bias(log)  sd(log)  ex.kurt  coverage  need q50  need q99  need max  derived  used"
              "  fails x/")
        for f in figures:
            tol = used[(f.n, f.runs)]
            print(f"  {f.n:2d}  {f.runs:4d}  {f.bias:+9.4f}  {f.sd:7.4f}  {f.excess_kurtosis:7.2f}  {f.coverage:8.3f}"
                  f"  {f.quantile(0.5):8.4f}  {f.quantile(DECIDED):8.4f}  {f.need.max():8.4f}  {derived_tolerance(f):7.2f}"
                  f"  {tol:4.2f}  {smallest_detected_factor(tol, f):8.3f}")
        print(f"  derived: the q{DECIDED:g} need rounded up to 0.01 (log; the band is the prediction x/ exp(used), "
              f"from x/ {math.exp(min(used.values())):.3f} to x/ {math.exp(max(used.values())):.3f}); fails x/: the "
              f"smallest timing-model error a block fails in {DECIDED:.0%} of blocks")


if __name__ == "__main__":
    main()
