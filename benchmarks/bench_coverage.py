"""Coverage of the claims' confidence intervals (issue #23, item 6): nominal against empirical, with its
Monte-Carlo standard error, for every interval the claims compute, and the standard alternatives.

What the claims compute (ratecheck.model.fit, ratecheck.claims.statistics):
* slope      : the OLS slope of log(replica mean) against log(x) (fit_slope; ExponentInBand);
* curvature  : the change of the local slope across the grid, from a quadratic in log x (the regime gate);
* difference : slope A - slope B of two independent series (SlopeDifference; DifferenceBelow);
* mean       : a grid point's replica mean, two-sided and one-sided (mean_ci: RelativeBand, BetweenBounds,
               the ceilings' ucb and lcb, rates).
Each is judged at level 0.95 and the profiles' replica counts (quick 16, full 48; also 8 and 32), on
synthetic replicas y = mu(x) * Z shaped like the claims' measures: Z of mean 1 with Gaussian spread (cv
0.3), chi-square(d)/d (a squared error of a d-dimensional Gaussian iterate, d = 4 and 1), lognormal
(sigma 1) and Pareto (alpha 2.5, heavy: no third moment), and a heteroscedastic grid (lognormal sigma
from 0.25 to 1.25 along x); grid: 5 log-spaced points (every quick Monte-Carlo slope claim has 5 or 6).
The truth is known: log E[y] = log mu(x), and every interval is invariant to mu (it shifts log means by
constants), so the slope's, curvature's and difference's truth is 0 and the mean's is 1.

Methods (ratecheck.model.intervals, the functions the fit itself calls): percentile (the fit's
current default for slope and curvature), basic, normal (est -+ z * the draws' sd: the slope
difference's current method), t (delta-method standard error, Welch-Satterthwaite df: the mean's current
method, Student-t with R - 1 df), studentized (bootstrap-t), bca. Every repetition bootstraps with
n_boot = 2000 draws like fit_slope; the draws' resampling counts are shared across the repetitions of a
scenario (each repetition's data are independent, so each interval is still a bootstrap interval of its
own data; the coverage estimate stays unbiased). A slope difference pairs repetition i with i + M/2 and
shifts B's draws by one, so A's and B's resampling is independent.

Monte-Carlo standard error of a coverage p over M repetitions: sqrt(p (1 - p) / M). A method
undercovers materially where nominal - empirical > 3 MC standard errors.

    PYTHONPATH=. python benchmarks/bench_coverage.py [--reps 4000] [--replicas 8 16 32 48] [--seed 0]

Prints one table per statistic (coverage %, MC s.e., and the share of intervals entirely above/below
the truth: a slope interval entirely on one side is what turns a correct exponent into a FAIL), then
a summary (per statistic, method and replica count, the coverage range over the homoscedastic noises),
then ``worst_undercoverage_<statistic>_<method>=<z>`` lines: the largest (nominal - empirical) / MC s.e.
over the scenarios (the heteroscedastic one included).

Measured (4000 repetitions, 11-13 min on 2 shared cores; --reps 1000 takes a quarter), coverage at
nominal 95% and 16 replicas over the homoscedastic noises (Gaussian / chi-square / lognormal / Pareto):
  slope      percentile 92.2-93.6 (every noise > 3 s.e. below)   studentized 92.2-95.2   t 92.8-95.5
  curvature  percentile 91.9-93.4                                 studentized 91.5-94.8   t 92.2-95.2
  difference normal     90.2-95.0                                 studentized 90.5-95.6
  mean       t          81.5-94.8 (upper bound 77.5-95.3)         studentized 89.2-94.6 (85.7-95.2)
At 16 replicas the bootstrap-t's two-sided intervals are within 3 s.e. of nominal on Gaussian and
chi-square replicas (the claims' squared errors: fessgda B2's replicas have cv 0.2-0.3, skewness 0.4-2.2;
its one-sided upper bound on chi-square(1) covers 93.4%), still short on lognormal and Pareto tails; on the
heteroscedastic grid every method misses (slope: percentile 82.0, studentized 90.0): the
log of a replica mean is biased by about -cv^2/(2R), which cancels in a slope only when cv is the same
at every grid point.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable

import numpy as np

from ratecheck.model.intervals import METHODS, intervals, welch_df

LEVEL = 0.95
N_BOOT = 2000
CHUNK = 250


def _lognormal(sigma: float) -> Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]:
    return lambda rng, shape: np.exp(sigma * rng.standard_normal(shape) - sigma**2 / 2)


def _pareto(alpha: float) -> Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]:
    # numpy's pareto is Lomax (x_m = 1, shifted): 1 + it has mean alpha / (alpha - 1)
    return lambda rng, shape: (1 + rng.pareto(alpha, shape)) * (alpha - 1) / alpha


def _chi2(d: int) -> Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]:
    return lambda rng, shape: rng.chisquare(d, shape) / d


def _hetero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    sigma = np.linspace(0.25, 1.25, shape[1])[None, :, None]
    return np.exp(sigma * rng.standard_normal(shape) - sigma**2 / 2)


NOISES: dict[str, Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]] = {
    "gauss cv0.3": lambda rng, shape: 1 + 0.3 * rng.standard_normal(shape),
    "chi2 d=4": _chi2(4),
    "chi2 d=1": _chi2(1),
    "lognorm s=1": _lognormal(1.0),
    "pareto a=2.5": _pareto(2.5),
    "hetero logn": _hetero,
}


def contrasts(points: int) -> dict[str, np.ndarray]:
    """The weights w (G,) of the slope and the curvature as linear functions of log(mean) on a log-spaced
    grid, exactly as fit_slope forms them."""
    u = np.log(np.geomspace(1.0, 16.0, points))
    uc = u - u.mean()
    coef = np.linalg.pinv(np.column_stack([np.ones_like(uc), uc, uc**2]))
    return {"slope": uc / (uc @ uc), "curvature": coef[2] * 2.0 * float(uc.max() - uc.min())}


def _pieces(y: np.ndarray, counts: np.ndarray) -> dict[str, np.ndarray]:
    """Per repetition and grid point: log mean, squared relative s.e. of the mean, the same for every
    bootstrap draw, and the jackknife's log leave-one-out means minus the log mean."""
    r = y.shape[-1]
    m = y.mean(axis=-1)
    boot_m = np.einsum("mgr,bgr->mbg", y, counts) / r
    boot_sq = np.einsum("mgr,bgr->mbg", y**2, counts) / r
    boot_var = np.maximum(boot_sq - boot_m**2, 0.0) * r / (r - 1)
    loo = (r * m[..., None] - y) / (r - 1)
    return {"log_m": np.log(m), "rel": y.var(axis=-1, ddof=1) / (r * m**2),
            "boot_log_m": np.log(boot_m), "boot_rel": boot_var / (r * boot_m**2),
            "jack": np.log(loo) - np.log(m)[..., None], "r": np.full(y.shape[1], r - 1.0)}


def _contrast(p: dict[str, np.ndarray], w: np.ndarray) -> dict[str, np.ndarray]:
    """The interval inputs of theta = sum_g w_g log m_g (ratecheck.model.fit does the same per fit)."""
    parts = p["rel"] * w**2
    jack = w[None, :, None] * p["jack"]
    influence = (jack.mean(axis=-1, keepdims=True) - jack).reshape(jack.shape[0], -1)
    return {"est": p["log_m"] @ w, "boot": p["boot_log_m"] @ w, "se": np.sqrt(parts.sum(-1)),
            "df": welch_df(parts, p["r"]), "boot_se": np.sqrt(p["boot_rel"] @ w**2), "influence": influence,
            "parts": parts}


def _difference(a: dict[str, np.ndarray], b: dict[str, np.ndarray], dof: np.ndarray) -> dict[str, np.ndarray]:
    b_boot, b_boot_se = np.roll(b["boot"], 1, axis=-1), np.roll(b["boot_se"], 1, axis=-1)
    parts = np.concatenate([a["parts"], b["parts"]], axis=-1)
    return {"est": a["est"] - b["est"], "boot": a["boot"] - b_boot, "se": np.hypot(a["se"], b["se"]),
            "df": welch_df(parts, np.concatenate([dof, dof])), "boot_se": np.hypot(a["boot_se"], b_boot_se),
            "influence": np.concatenate([a["influence"], -b["influence"]], axis=-1)}


def _mean(y: np.ndarray, counts: np.ndarray) -> dict[str, np.ndarray]:
    """Inputs of the interval of one grid point's mean (y: (M, R); counts: (B, R))."""
    r = y.shape[-1]
    boot = y @ counts.T / r
    boot_var = np.maximum((y**2) @ counts.T / r - boot**2, 0.0) * r / (r - 1)
    m = y.mean(axis=-1)
    loo = (r * m[:, None] - y) / (r - 1)
    return {"est": m, "boot": boot, "se": y.std(axis=-1, ddof=1) / math.sqrt(r), "df": np.full(m.shape, r - 1.0),
            "boot_se": np.sqrt(boot_var / r), "influence": loo.mean(axis=-1, keepdims=True) - loo}


def _tally(tally: dict, key: tuple, inputs: dict[str, np.ndarray], truth: float, side: str = "two-sided") -> None:
    keep = ("boot", "se", "df", "boot_se", "influence")
    out = intervals(METHODS, LEVEL, inputs["est"], side=side, **{k: inputs[k] for k in keep})
    for method, (low, high) in out.items():
        row = tally.setdefault(key + (method,), np.zeros(3))
        row += (np.sum((low <= truth) & (truth <= high)), np.sum(low > truth), np.sum(high < truth))


def scenario(noise: str, replicas: int, reps: int, points: int, seed: int, tally: dict) -> None:
    """Every statistic's coverage tallies for one noise shape and replica count."""
    rng = np.random.default_rng([seed, replicas, list(NOISES).index(noise)])
    counts = rng.multinomial(replicas, np.full(replicas, 1.0 / replicas), size=(N_BOOT, points)).astype(float)
    w = contrasts(points)
    dof = np.full(points, replicas - 1.0)
    for start in range(0, reps, CHUNK):
        m = min(CHUNK, reps - start)
        y = NOISES[noise](rng, (m, points, replicas))
        p = _pieces(y, counts)
        for name, weights in w.items():
            c = _contrast(p, weights)
            _tally(tally, (name, noise, replicas), c, 0.0)
            if name == "slope":
                half = m // 2
                a = {k: v[:half] for k, v in c.items()}
                b = {k: v[half:2 * half] for k, v in c.items()}
                _tally(tally, ("difference", noise, replicas), _difference(a, b, dof), 0.0)
        # the mean at the grid's first point (the noise shape there; heteroscedastic: its narrowest)
        mean_inputs = _mean(y[:, 0, :], counts[:, 0, :])
        _tally(tally, ("mean", noise, replicas), mean_inputs, 1.0)
        _tally(tally, ("mean upper", noise, replicas), mean_inputs, 1.0, side="upper")
        _tally(tally, ("mean lower", noise, replicas), mean_inputs, 1.0, side="lower")


def summary(tally: dict, replica_counts: list[int]) -> None:
    """Per statistic, method and replica count: the coverage range over the homoscedastic noises (every row
    but the heteroscedastic one, whose bias no interval method removes)."""
    print("\n## coverage range (%) over the homoscedastic noises, per replica count")
    print(f"{'statistic':11s} {'R':>3s} " + " ".join(f"{m:>12s}" for m in METHODS))
    for stat in ("slope", "curvature", "difference", "mean", "mean upper", "mean lower"):
        for r in replica_counts:
            cells = []
            for method in METHODS:
                p = [tally[(stat, n, r, method)][0] / tally[(stat, n, r, method)].sum() for n in NOISES
                     if n != "hetero logn"]
                cells.append(f"{100 * min(p):5.1f}-{100 * max(p):5.1f}")
            print(f"{stat:11s} {r:3d} " + " ".join(f"{c:>12s}" for c in cells))


def report(tally: dict, replica_counts: list[int]) -> dict[tuple[str, str], float]:
    """Print the tables; return per (statistic, method) the worst (nominal - empirical) / MC s.e."""
    worst: dict[tuple[str, str], float] = {}
    for stat in ("slope", "curvature", "difference", "mean", "mean upper", "mean lower"):
        print(f"\n## {stat}: coverage % at nominal {LEVEL:.0%} (MC s.e. in parentheses; '>'/'<': % of intervals "
              f"entirely above/below the truth)")
        print(f"{'noise':14s} {'R':>3s} " + " ".join(f"{m:>21s}" for m in METHODS))
        for noise in NOISES:
            for r in replica_counts:
                cells = []
                for method in METHODS:
                    hits, above, below = tally[(stat, noise, r, method)]
                    n = hits + above + below
                    p = hits / n
                    se = math.sqrt(max(p * (1 - p), 1e-12) / n)
                    z = (LEVEL - p) / se
                    worst[(stat, method)] = max(worst.get((stat, method), -math.inf), z)
                    flag = "!" if z > 3 else " "
                    cells.append(f"{100 * p:5.1f}({100 * se:3.1f}){flag}{100 * above / n:4.1f}/{100 * below / n:4.1f}")
                print(f"{noise:14s} {r:3d} " + " ".join(f"{c:>21s}" for c in cells))
    return worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=4000, help="repetitions per scenario (default 4000)")
    parser.add_argument("--replicas", type=int, nargs="+", default=[8, 16, 32, 48])
    parser.add_argument("--points", type=int, default=5, help="grid points (log-spaced over 1.2 decades)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    tally: dict = {}
    for noise in NOISES:
        for r in args.replicas:
            scenario(noise, r, args.reps, args.points, args.seed, tally)
    worst = report(tally, args.replicas)
    summary(tally, args.replicas)
    print(f"\n{args.reps} repetitions a scenario, n_boot {N_BOOT}, {args.points} grid points, "
          f"{time.perf_counter() - start:.0f} s; '!': empirical below nominal by > 3 MC s.e.")
    for (stat, method), z in sorted(worst.items()):
        print(f"worst_undercoverage_{stat.replace(' ', '_')}_{method}={z:+.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
