"""Print where DeFedAvg's wall-clock band tolerances come from (issue #23 item 6; proofs/defedavg/wallclock_band.py).

For each wall-clock claim and grid value: a pool of runs cut into disjoint blocks of the claim's size, the timing
model's bias, the per-run spread, the blocks' interval coverage and the tolerance a block needs to be decided; then
the tolerance the claim needs (99% of blocks decided) against the one it uses, and the smallest model error it fails.

    nice -n 5 python tools/wallclock_band.py [--pool 1024] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ratecheck.proofs.defedavg import wallclock as w  # noqa: E402
from ratecheck.proofs.defedavg.wallclock_band import DECIDED, smallest_detected_factor, tolerance_needed  # noqa: E402

USED = {w.WALL_IID.id: w.WALL_IID_TOLERANCE, w.WALL_NIID.id: w.WALL_NIID_TOLERANCE}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=int, default=1024, help="runs per configuration (default 1024)")
    parser.add_argument("--seed", type=int, default=0, help="offset added to the claims' seeds (default 0)")
    args = parser.parse_args()
    for claim in (w.WALL_IID, w.WALL_NIID):
        need, figures = tolerance_needed(claim, args.pool, seed=args.seed)
        print(f"{claim.id} (pool {args.pool}, seed offset {args.seed})")
        print("   n  runs  bias(log)  sd(log)  ex.kurt  coverage  need q50  need q99  need max")
        for f in figures:
            print(f"  {f.n:2d}  {f.runs:4d}  {f.bias:+9.4f}  {f.sd:7.4f}  {f.excess_kurtosis:7.2f}  {f.coverage:8.3f}"
                  f"  {f.quantile(0.5):8.4f}  {f.quantile(DECIDED):8.4f}  {f.need.max():8.4f}")
        used = USED[claim.id]
        print(f"  needed (q{DECIDED:g} over the grid): {need:.4f} = log {math.exp(need):.4f}; used {used:.4f} = "
              f"log {math.exp(used):.4f}; smallest model error failed in {DECIDED:.0%} of blocks: x/ "
              f"{smallest_detected_factor(used, figures):.3f}")


if __name__ == "__main__":
    main()
