"""DeFedAvg's wall-clock claims (Table I, quoted not matched): the time to a target ||grad F||^2 on the
paper's system model (ratecheck.model.asynchrony) against synchronous FedAvg's, inside a timing model's band."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ratecheck.claims import Claim, Estimator, PointResult, Profile, Reading, Rule, Verdict, hitting_rounds
from ratecheck.claims.compose import Plan
from ratecheck.claims.plans import RunsPerValue
from ratecheck.inspection import view
from ratecheck.model.fit import mean_ci
from ratecheck.trace import RunConfig, Trace

from .presets import p1, p2
from .theorems import KEY, src
from .views import TimeRatio

# On the paper's system model (1.7 ms per step
# on the fastest client, slowdowns U[1, 5], 44 ms per transfer, K = 50), DeFedAvg reaches a target
# ||grad F||^2 sooner in virtual seconds than synchronous FedAvg with the same step sizes.

WALL_CLIENTS = 20
WALL_STEPS = {"eta_global": 1.0, "eta_local": 0.002, "local_steps": 50}
WALL_GRID = {"quick": (4, 8), "full": (4, 8, 16)}
WALL_ROUNDS = 60  # the target is reached by round ~30 (measured), FedAvg's too
WALL_TARGET = 0.05  # fraction of ||grad F(x0)||^2


def wall_config(algorithm: str, n_clients: int, problem: dict, profile: Profile) -> RunConfig:
    part = "without_replacement" if algorithm == "defedavg_iid_events" else "with_replacement"
    params = {**WALL_STEPS, "participation": f"{part}:{int(n_clients)}"}
    # the time ratio's CI is a few percent wide: half the profile's replicas decide it
    return RunConfig(algorithm, params, "quadratic", dict(problem), rounds=WALL_ROUNDS,
                     replicas=max(8, profile.replicas // 2), checkpoints=96)


def rounds_to_target(trace: Trace, fraction: float) -> np.ndarray:
    """Per replica, the first checkpoint (a round) where ||grad F||^2 <= fraction x initial (NaN if never)."""
    values = trace.measures["grad_norm_sq"]
    return hitting_rounds(trace.checkpoints, values, fraction * float(np.nanmean(values[0])))


def time_to_target(trace: Trace, fraction: float) -> np.ndarray:
    """Per replica, the virtual seconds at the first checkpoint where ||grad F||^2 <= fraction x initial."""
    rounds = rounds_to_target(trace, fraction)
    timeline = trace.info["timeline"]
    grid = np.asarray(timeline["wall_rounds"], dtype=float)
    wall = np.asarray(timeline["wall_time"], dtype=float)
    return np.array([np.interp(r, grid, w) if np.isfinite(r) else np.nan for r, w in zip(rounds, wall)])


# The timing model's prediction of the time ratio (system model of §4.1.3, ratecheck/model/asynchrony.py):
# a job of client i lasts K s_i step_time, s_i ~ U[speed_low, speed_high] fixed per run.
# * synchronous FedAvg: a round is t_server + t_down + t_up + the longest job among the distinct clients
#   drawn (n draws with replacement from N); with D distinct, E max s = low + (high - low) D/(D+1).
# * DeFedAvg-IID (first n arrivals, N clients training back to back): client i's k-th update arrives
#   at t_server + t_down + t_up + k K s_i step_time, so by time t the count is sum_i floor(...) ~ rate (t -
#   latency) - N/2 (a floor loses 1/2 on average), rate = N E[1/s] / (K step_time), E[1/s] =
#   ln(high/low)/(high - low): round r closes at latency + (r n + N/2) / rate. Neglected: waits for a
#   newer model (rx_consume) and the per-run spread of the speeds (Jensen on 1/rate: +1.2%).
# * DeFedAvg-nIID (variant A): round t lasts t_server + t_down + t_up + the longest wait W_j of its distinct
#   selected clients, W_j = 0 when j's send buffer is full at the broadcast, else the rest of its running job
#   (niid_close_times: a mean-field recursion over rounds, below).
# Both times the ratio of rounds to target (measured per replica, in rounds: the iterates' part).

# The band tolerances are what a pool of runs says a block of the claim's runs needs to be decided, per grid value n
# and block size (proofs/defedavg/wallclock_band.py; `python tools/wallclock_band.py --pool 1024`, its pool at seed
# offset 10000: none of the replicas a claim decides on, so the verdicts are out of sample): per run x =
# log(measured / predicted ratio), cut into disjoint blocks of the claim's size (8 quick, 24 full); a block PASSes the
# band when tol > |mean| + its t-interval's half-width, and the tolerance at (n, runs) is that need's 99% quantile over
# the blocks, rounded up to 0.01 in log. So each profile's grid value is judged at the band it needs (one maximum over
# both profiles judged the quick profile's n = 4, 8 at the full profile's n = 16 model bias). The same blocks check
# the intervals' coverage of the pool mean (0.91-1.00; excess kurtosis of x within +-0.35, no heavy tail on the log
# scale the claims judge).
Tolerances = Mapping[tuple[int, int], float]  # (n, runs) -> band half-width in log

WALL_IID_TOLERANCE: Tolerances = {(4, 8): 0.25, (8, 8): 0.24, (4, 24): 0.16, (8, 24): 0.16, (16, 24): 0.35}
WALL_IID_TOLERANCE_WHY = ("per (n, runs), the 99% quantile over blocks of a 1024-run pool (seed offset 10000, apart "
                          "from the claims' replicas) of the tolerance a block needs (|mean| + half-width of log "
                          "measured / predicted), rounded up to 0.01: 0.241 (n = 4) and 0.232 (n = 8) at 8 runs "
                          "(quick), 0.153, 0.159 and 0.347 (n = 4, 8, 16) at 24 (full); the renewal model is 5-6% "
                          "below the simulator at n = 4, 8 and 27% at n = 16 (it neglects waits for a newer model, "
                          "many with n/N = 0.8); a timing model off by a factor 1.6 (quick), 1.36 (full, n = 4, 8) or "
                          "2.0 (n = 16) fails in 99% of blocks")


def band_tolerance(table: Tolerances, config: RunConfig) -> float:
    """The band's half-width in log for a run's grid value n and its runs (the claim's block size)."""
    key = (view(config).participating, int(config.replicas))
    if key not in table:
        raise ValueError(f"no wall-clock band tolerance derived for n = {key[0]} with {key[1]} runs "
                         f"(derived for (n, runs) in {sorted(table)}: tools/wallclock_band.py)")
    return table[key]


def _distinct_draws(n: int, clients: int) -> np.ndarray:
    """P(D = k), k = 0..n, the number of distinct clients among n uniform draws with replacement."""
    prob = np.zeros(n + 1)
    prob[0] = 1.0
    for _ in range(n):  # a new draw is a new client with probability (N - k)/N
        k = np.arange(n + 1)
        step = prob * k / clients
        step[1:] += prob[:-1] * (clients - k[:-1]) / clients
        prob = step
    return prob


def sync_round_time(config: RunConfig) -> float:
    """Expected wall time of one synchronous FedAvg round under the timing model."""
    run = view(config)
    system = run.algorithm.system()
    if system.speeds != "uniform" or system.jitter or system.speed_redraw:
        raise ValueError(f"the wall-clock prediction is derived for fixed U[low, high] slowdowns, not {system}")
    n, N = run.participating, run.num_clients
    if run.param("participation").mode != "with_replacement":
        raise ValueError("synchronous FedAvg's round time is derived for draws with replacement")
    D = np.arange(n + 1)
    longest = system.speed_low + (system.speed_high - system.speed_low) * np.sum(_distinct_draws(n, N) * D / (D + 1))
    return system.t_server + system.t_down + system.t_up + run.local_steps * system.step_time * longest


def first_arrivals_time(config: RunConfig, rounds: np.ndarray) -> np.ndarray:
    """Predicted wall time at which DeFedAvg-IID (first n arrivals) closes round `rounds`."""
    run = view(config)
    system = run.algorithm.system()
    low, high = system.speed_low, system.speed_high
    mean_speed = math.log(high / low) / (high - low) if high > low else 1.0 / low
    rate = run.num_clients * mean_speed / (run.local_steps * system.step_time)
    latency = system.t_server + system.t_down + system.t_up
    return latency + (np.asarray(rounds) * run.participating + run.num_clients / 2) / rate


def iid_ratio_band(config: RunConfig, baseline: RunConfig, rounds: np.ndarray, base_rounds: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """DeFedAvg-IID / FedAvg time ratio predicted per replica, times exp(-+ its WALL_IID_TOLERANCE)."""
    predicted = first_arrivals_time(config, rounds) / (base_rounds * sync_round_time(baseline))
    tol = band_tolerance(WALL_IID_TOLERANCE, config)
    return predicted * math.exp(-tol), predicted * math.exp(tol)


# derived as WALL_IID_TOLERANCE is (above)
WALL_NIID_TOLERANCE: Tolerances = {(4, 8): 0.29, (8, 8): 0.26, (4, 24): 0.17, (8, 24): 0.16, (16, 24): 0.16}
WALL_NIID_TOLERANCE_WHY = ("per (n, runs), the 99% quantile over blocks of a 1024-run pool (seed offset 10000, apart "
                           "from the claims' replicas) of the tolerance a block needs (|mean| + half-width of log "
                           "measured / predicted), rounded up to 0.01: 0.282 (n = 4) and 0.251 (n = 8) at 8 runs "
                           "(quick), 0.160, 0.158 and 0.156 (n = 4, 8, 16) at 24 (full); the mean-field recursion is "
                           "5-8% below the simulator's ratio (it neglects the clients' dependence through the rounds), "
                           "the per-run spread 0.09-0.13 in log, the 8-run t-intervals cover the pool mean in 0.91 "
                           "(n = 4) and 0.98 (n = 8) of 128 blocks, so the tolerance is read off the blocks' needs "
                           "rather than from the nominal level; a timing model off by a factor 1.7-1.8 (quick) or 1.4 "
                           "(full) fails in 99% of blocks")


def niid_close_times(config: RunConfig, rounds: int, grid: int = 64) -> np.ndarray:
    """Predicted wall time at which DeFedAvg-nIID (variant A, rx_consume) closes rounds 0..rounds-1.

    Client j of slowdown s has jobs of J = K s step_time. Selected in round t (probability q = 1 - (1 - 1/N)^n
    per round), it waits W_j > x after the broadcast B_t when no job completed since its last upload: never
    uploaded, its first job ends at B_0 + J; last uploaded g rounds ago from a full buffer, the next completion
    is U[0, J] after B_{t-g}; last uploaded at a completion (it had waited m), the next ends J later (round 0:
    J after B_1, the client idles until w^1 arrives). The distinct selected clients are included independently
    with probability q, so P(max W <= x) = exp(N E_s log(1 - q P(W_s > x))) with s ~ U[low, high] by midpoints,
    and B_{t+1} = B_t + E max W + t_up + t_server + t_down."""
    run = view(config)
    system = run.algorithm.system()
    if system.speeds != "uniform" or system.jitter or system.speed_redraw or system.niid_variant != "A" \
            or not system.rx_consume or system.notify_delay not in (None, system.t_down):
        raise ValueError(f"the nIID round-time model is derived for fixed U[low, high] slowdowns, variant A, "
                         f"consumed models and the notice on the broadcast, not {system}")
    N, n = run.num_clients, run.participating
    q = 1 - (1 - 1 / N) ** n
    s = system.speed_low + (system.speed_high - system.speed_low) * (np.arange(grid) + 0.5) / grid
    J = run.local_steps * system.step_time * s
    x = np.linspace(0.0, float(J.max()), 4 * grid)
    B = [system.t_server + system.t_down]  # B_t: w^t reaches the clients
    close: list[float] = []
    waited: list[np.ndarray] = []  # P(W_u > 0 | selected in round u), per slowdown
    mean_wait: list[np.ndarray] = []  # E[W_u | selected, W_u > 0]
    for t in range(rounds):
        tail = (1 - q) ** t * ((B[0] + J)[:, None] - B[t] > x)  # never uploaded: the first job
        for g in range(1, t + 1):
            gap = B[t] - B[t - g]
            if gap >= 2 * J[-1] and g < t:  # a job completed since an upload this old (W <= J): no wait
                continue
            after_full = np.clip(1 - (gap + x) / J[:, None], 0.0, 1.0)
            rest = np.minimum(B[1] + J - B[t] if g == t else mean_wait[t - g] + J - gap, J)
            tail = tail + q * (1 - q) ** (g - 1) * ((1 - waited[t - g])[:, None] * after_full
                                                    + waited[t - g][:, None] * (rest[:, None] > x))
        waited.append(tail[:, 0])
        mean_wait.append(np.trapezoid(tail, x, axis=1) / np.maximum(tail[:, 0], 1e-300))
        longest = np.trapezoid(1 - np.exp(N * np.mean(np.log1p(-q * tail), axis=0)), x)
        close.append(B[t] + longest + system.t_up)
        B.append(close[-1] + system.t_server + system.t_down)
    return np.array(close)


def niid_ratio_band(config: RunConfig, baseline: RunConfig, rounds: np.ndarray, base_rounds: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """DeFedAvg-nIID / FedAvg time ratio predicted per replica, times exp(-+ its WALL_NIID_TOLERANCE)."""
    close = niid_close_times(config, int(np.nanmax(rounds)))
    mine = np.interp(rounds, np.arange(len(close) + 1), np.concatenate([[0.0], close]))  # w^r exists at close[r-1]
    predicted = mine / (base_rounds * sync_round_time(baseline))
    tol = band_tolerance(WALL_NIID_TOLERANCE, config)
    return predicted * math.exp(-tol), predicted * math.exp(tol)


@dataclass(frozen=True)
class LogTimeRatio(Reading):
    """Per replica, log(time to target of ``claim.algorithm`` / ``claim.baseline``'s) from the grid value's two
    runs (``point.inputs["runs"]`` by role); the baseline's point carries its negative."""

    reads: ClassVar[tuple[str, ...]] = ("algorithm", "baseline", "fraction")  # the claim fields it reads

    def label(self, claim: Any) -> str:
        return f"log time to target: {claim.algorithm} / {claim.baseline}"

    def __call__(self, claim: Any, point: PointResult) -> None:
        runs = point.inputs["runs"]
        log_ratio = np.log(time_to_target(runs[claim.algorithm], claim.fraction)
                           / time_to_target(runs[claim.baseline], claim.fraction))
        point.samples = log_ratio if point.stats["role"] == claim.algorithm else -log_ratio

    def precheck(self, claim: Any, points: Any) -> str:
        missed = [p.value for p in points if np.isnan(p.samples).any()]
        return f"target not reached within {WALL_ROUNDS} rounds at n={missed[0]:g}" if missed else ""


@dataclass(frozen=True)
class TimeRatios(Estimator):
    """Per grid value (the algorithm's points): the CI of the mean log time ratio, and of its distance to the
    timing model's band ``claim.band(...)`` per replica (above its bottom, below its top), with the row the
    report shows (times, ratio and band as geometric means over replicas)."""

    reads: ClassVar[tuple[str, ...]] = ("algorithm", "band", "baseline", "fraction")  # the claim fields it reads
    view: ClassVar[Any] = TimeRatio()

    def __call__(self, claim: Any, points: Any) -> list[tuple[dict[str, float], Any, Any, Any]]:
        out = []
        for p in points:
            if p.stats["role"] != claim.algorithm:
                continue
            mine, base = p.inputs["runs"][claim.algorithm], p.inputs["runs"][claim.baseline]
            t_mine, t_base = time_to_target(mine, claim.fraction), time_to_target(base, claim.fraction)
            log_ratio = p.samples
            low, high = claim.band(p.config, base.config, rounds_to_target(mine, claim.fraction),
                                   rounds_to_target(base, claim.fraction))
            ci = mean_ci(log_ratio, level=claim.level)
            above = mean_ci(log_ratio - np.log(high), level=claim.level)  # < 0: below the band's top
            below = mean_ci(log_ratio - np.log(low), level=claim.level)  # > 0: above its bottom
            row = {"value": p.value, "time": float(t_mine.mean()), "baseline_time": float(t_base.mean()),
                   "ratio": float(np.exp(ci.mean)), "ratio_low": float(np.exp(ci.low)),
                   "ratio_high": float(np.exp(ci.high)), "band_low": float(np.exp(np.mean(np.log(low)))),
                   "band_high": float(np.exp(np.mean(np.log(high))))}
            out.append((row, ci, above, below))
        return out


@dataclass(frozen=True)
class FasterInBand(Rule):
    """FAIL when the algorithm is confidently slower than the baseline or its ratio confidently outside the
    timing model's band; PASS when confidently faster and inside; else INCONCLUSIVE."""

    reads: ClassVar[tuple[str, ...]] = ("band_reason", "baseline", "fraction")  # the claim fields it reads

    def __call__(self, claim: Any, points: Any, estimate: Any) -> tuple[Verdict, str, dict[str, Any]]:
        worse, outside, unsure = [], [], []
        for row, ci, above, below in estimate:
            if ci.low > 0:
                worse.append(row["value"])
            elif above.low > 0 or below.high < 0:
                outside.append(row["value"])
            elif ci.high > 0 or above.high > 0 or below.low < 0:
                unsure.append(row["value"])
        rows = [row for row, *_ in estimate]
        evidence = {"rows": rows, "baseline": claim.baseline, "target_fraction": claim.fraction,
                    "band_reason": claim.band_reason}
        tag = ", ".join(f"n={r['value']:g}: {r['ratio']:.3g} [{r['ratio_low']:.3g}, {r['ratio_high']:.3g}] in "
                        f"model band [{r['band_low']:.3g}, {r['band_high']:.3g}]" for r in rows)
        if worse:
            return Verdict.FAIL, f"slower than {claim.baseline} (time ratio {tag})", evidence
        if outside:
            return Verdict.FAIL, f"time ratio outside the timing model's band ({tag})", evidence
        if unsure:
            return Verdict.INCONCLUSIVE, f"time ratio CI crosses 1 or a band edge ({tag})", evidence
        return (Verdict.PASS, f"faster than {claim.baseline}, as the timing model predicts: time-to-target ratio "
                f"{tag}", evidence)


@dataclass(frozen=True, kw_only=True)
class WallClockClaim(Claim):
    """Per replica, the time to target of `algorithm` over `baseline`'s, inside the timing model's band.

    ``band(config, baseline_config, rounds, baseline_rounds)`` gives the predicted (low, high) ratio
    per replica from the rounds to target measured on both runs; the mean over replicas of
    log(measured / high) must be < 0 and of log(measured / low) > 0 with confidence (FAIL when either
    CI lies wholly on the wrong side). It is also < 1 (faster), the paper's claim."""

    algorithm: str
    baseline: str
    problem: dict
    band: Callable[[RunConfig, RunConfig, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
    band_reason: str
    fraction: float = WALL_TARGET
    kind: str = "wall_clock"
    # both runs of a grid value (ratecheck.claims.compose: the plan, reading, statistic and rule)
    plan: Plan = RunsPerValue(exactness=False)
    reading: Reading = LogTimeRatio()
    statistic: Estimator = TimeRatios()
    rule: Rule = FasterInBand()

    def runs_at(self, value: float, profile: Profile) -> list[tuple[dict[str, Any], RunConfig]]:
        return [({"role": a}, wall_config(a, int(value), self.problem, profile)) for a in (self.algorithm, self.baseline)]


def _factors(table: Tolerances) -> str:
    """The band's factors exp(tol) per grid value and runs, as the statements quote them."""
    return ", ".join(f"{math.exp(tol):.2f} (n = {n}, {runs} runs)" for (n, runs), tol in table.items())


_WALL_COMMON: dict[str, Any] = dict(paper=KEY, vary="n", grid=WALL_GRID, measure="grad_norm_sq",
                    configure=lambda value, profile: wall_config("fedavg_events", value, p1(clients=WALL_CLIENTS),
                                                                 profile),
                    source=src("Table I and §4.2 (wall-clock time to target accuracy); spec §4.4, §5.5"))

WALL_IID = WallClockClaim(
    id="defedavg.wallclock.iid_vs_fedavg",
    title="DeFedAvg-IID reaches the target sooner than synchronous FedAvg (wall clock)",
    statement="On the paper's system model, first-n arrivals remove the wait for stragglers: time to 5% of the "
              "initial ||grad F||^2 is shorter than FedAvg's (Table I: 54.41 vs 302.12 s on CIFAR-10, n = 10), by "
              "the factor the timing model predicts (first-arrival throughput against E[longest drawn job]) "
              f"x/ {_factors(WALL_IID_TOLERANCE)}.",
    algorithm="defedavg_iid_events",
    baseline="fedavg_events",
    problem=p1(clients=WALL_CLIENTS),
    band=iid_ratio_band,
    band_reason=f"predicted ratio (fluid renewal model of first arrivals over E sync round) x/ "
                f"{_factors(WALL_IID_TOLERANCE)}: {WALL_IID_TOLERANCE_WHY}",
    **_WALL_COMMON,
)

WALL_NIID = WallClockClaim(
    id="defedavg.wallclock.niid_vs_fedavg",
    title="DeFedAvg-nIID reaches the target sooner than synchronous FedAvg on non-IID data (wall clock)",
    statement="Selected clients upload buffered updates instead of training on demand: time to 5% of the "
              "initial ||grad F||^2 is shorter than FedAvg's (Table I: 103.25 vs 437.57 s on FMNIST, n = 10), "
              "by the factor the timing model predicts (a round waits for the selected clients whose send buffer "
              f"is empty, against E[longest drawn job]) x/ {_factors(WALL_NIID_TOLERANCE)}.",
    algorithm="defedavg_niid_events",
    baseline="fedavg_events",
    problem=p2(clients=WALL_CLIENTS),
    band=niid_ratio_band,
    band_reason=f"predicted ratio (mean-field recursion of the waits for empty send buffers over E sync round) x/ "
                f"{_factors(WALL_NIID_TOLERANCE)}: {WALL_NIID_TOLERANCE_WHY}",
    **_WALL_COMMON,
)
