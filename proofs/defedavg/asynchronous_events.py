"""DeFedAvg claims on the event timeline (spec §6 P2-e, P1-a Mode E, P3): FedBuff's speed bias against DeFedAvg-nIID's
uniform sampling, Theorem 2 at the measured lambda, and the nonconvex cosine-perturbed quadratic."""

from __future__ import annotations

from typing import Any

import numpy as np

from ratecheck.claims import (
    BoundClaim,
    ExpectedOrder,
    LimitClaim,
    Profile,
    SlopeClaim,
    negative_control,
)
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig, Trace

from .claims import (
    K_T2,
    LAM_T2,
    P1_LOUD,
    T2_TRANSIENT_SMALL,
    bindings,
    scheduled_config,
)
from .presets import p2, p3
from .theorems import KEY, THEOREM_2, src

# --------------------------------------------------------------------------------------------
# P2-e: FedBuff's speed bias against DeFedAvg-nIID's uniform sampling, on the event timeline. Even
# clients (centre +zeta e_d) are fast (slowdown U[1, 1.5]), odd ones (-zeta e_d) slow (U[4.5, 5]).
# First-n arrivals weight the clients by their share of aggregated updates, so FedBuff's fixed point
# is sum_i p_i c_i = x* + zeta (p+ - p-) e_d with the shares measured on the run's own timeline.

BIAS_PROBLEM = p2(clients=8, sigma=0.1)
BIAS_TIMING = {"speeds": "by_parity", "speed_low": 1.0, "speed_high": 5.0, "parity_width": 0.5}
BIAS_STEPS = {"eta_global": 0.4, "eta_local": 0.05, "local_steps": 5}
BIAS_N = 4
BIAS_ROUNDS = {"quick": 600, "full": 4000}
BIAS_TOLERANCE = 0.1


def bias_config(algorithm: str, profile: Profile) -> RunConfig:
    part = "with_replacement" if algorithm == "defedavg_niid_events" else "without_replacement"
    params = {**BIAS_STEPS, **BIAS_TIMING, "participation": f"{part}:{BIAS_N}"}
    return RunConfig(algorithm, params, "quadratic", dict(BIAS_PROBLEM), rounds=BIAS_ROUNDS[profile.name],
                     replicas=profile.replicas)


def speed_biased_point(config: RunConfig, trace: Trace) -> np.ndarray:
    """x* + sum_i p_i (c_i - x*), p_i the measured share of client i in the aggregated updates."""
    problem = problem_of(config)
    share = np.asarray(trace.info["timeline"]["participation"], dtype=float)
    share = share / share.sum()
    return problem.x_star + share @ (problem.centers - problem.x_star)


def _exact_minimizer(config: RunConfig) -> np.ndarray:
    return problem_of(config).x_star


_BIAS_COMMON: dict[str, Any] = dict(paper=KEY, vary="n", grid={"quick": (BIAS_N,), "full": (BIAS_N,)}, measure="dist_sq",
                    tolerance=BIAS_TOLERANCE, source=src("§3.1 on uniform sampling vs first arrivals; spec §6 P2-e, "
                                                         "pitfall 4"))

FEDBUFF_BIAS = LimitClaim(
    id="defedavg.fedbuff.speed_bias",
    title="FedBuff settles at the speed-biased point when fast clients hold one kind of data",
    statement="First-n arrivals weight clients by speed: FedBuff converges to x* + zeta (p+ - p-) e_d, with "
              "p+- the measured shares of fast and slow clients.",
    configure=lambda value, profile: bias_config("fedbuff", profile),
    target=_exact_minimizer,
    target_of_run=speed_biased_point,
    target_name="x* + zeta (p+ - p-) e_d (measured shares)",
    **_BIAS_COMMON,
)

FEDBUFF_NOT_XSTAR = negative_control(
    FEDBUFF_BIAS,
    id="defedavg.fedbuff.not_xstar",
    title="Negative control: FedBuff does not converge to x* under speed skew",
    statement="The same FedBuff runs are farther than the tolerance from x*.",
    target_of_run=None,
    target_name="x*",
    expect_reason="fast clients dominate first-n arrivals (spec pitfall 4): a property of FedBuff, not a paper error",
    compare=False,
)

NIID_UNBIASED = LimitClaim(
    id="defedavg.niid.unbiased_speed_skew",
    title="DeFedAvg-nIID converges to x* under the same speed skew",
    statement="Uniform sampling with replacement makes the aggregate unbiased (eq. (16)): DeFedAvg-nIID settles "
              "at x* on the timeline where FedBuff does not.",
    configure=lambda value, profile: bias_config("defedavg_niid_events", profile),
    target=_exact_minimizer,
    **_BIAS_COMMON,
)


# --------------------------------------------------------------------------------------------
# Theorem 2 on event-timeline runs at their measured lambda (spec §6 P1-a, Mode E). N = 4 clients,
# communication times 0 and slowdowns U[1, 1.5], so that delays stay small (lambda ~ N/n) and
# T2_min = 8 n K L Delta lambda^2 / sigma^2 stays below the run length. The schedule does not
# depend on lambda; conditions (13) are checked at the measured one.

EVENTS_T2_CLIENTS = 4
EVENTS_T2_GRID = {"quick": (1, 2), "full": (1, 2, 3, 4)}
EVENTS_T2_ROUNDS = {"quick": 1000, "full": 6000}


def events_t2_config(n_clients: float, profile: Profile) -> RunConfig:
    n_clients = int(n_clients)
    base = scheduled_config(THEOREM_2, "defedavg_iid_events", {**P1_LOUD, "clients": EVENTS_T2_CLIENTS},
                            n_clients=n_clients, local_steps=K_T2, rounds=EVENTS_T2_ROUNDS[profile.name],
                            delay="none", participation=f"without_replacement:{n_clients}",
                            replicas=profile.replicas)
    params = {k: v for k, v in base.params.items() if k != "duplicates"}
    return base.with_(params={**params, "t_down": 0.0, "t_up": 0.0, "speed_high": 1.5})


T2_BOUND_EVENTS = BoundClaim(
    id="defedavg.T2.bound_events",
    title="Corrected bound (14) holds on event-timeline runs at their measured lambda",
    statement="DeFedAvg-IID on the wall-clock simulator (first n arrivals, speeds U[1,5]): M_T <= "
              "sqrt(128 L sigma^2 Delta/(nKT)) + 8L/(KT), with (13) checked at lambda = max(1, max delay).",
    source=src("Theorem 2, eqs. (13)-(14), Appendix A.2.2; spec §2.7.3, §6 P1-a"),
    version="corrected",
    paper=KEY,
    theorem=THEOREM_2,
    bindings=bindings,
    measure="avg:grad_norm_sq",
    vary="n",
    grid=EVENTS_T2_GRID,
    configure=events_t2_config,
)


# --------------------------------------------------------------------------------------------
# P3: the nonconvex cosine-perturbed quadratic (alpha = 3, L = 4), IID, started next to the local
# maximum at 0, under Theorem 2's step sizes. sigma = 20 keeps T2_min = 8 n K L Delta lam^2 / sigma^2
# (Delta = 23.54 by root finding) at 37.7 n, below the run length at every n of the grid.

P3_IID = p3(clients=32, sigma=20.0)
P3_GRID = {"quick": (1, 2, 4, 8, 16), "full": (1, 2, 4, 8, 16, 32)}
P3_ROUNDS = {"quick": 800, "full": 4000}


def p3_config(n_clients: float, profile: Profile) -> RunConfig:
    n_clients = int(n_clients)
    return scheduled_config(THEOREM_2, "defedavg_iid", P3_IID, n_clients=n_clients, local_steps=K_T2,
                            rounds=P3_ROUNDS[profile.name], delay=f"constant:{LAM_T2}",
                            participation=f"without_replacement:{n_clients}", replicas=profile.replicas,
                            problem="cosine_quadratic")


_P3_COMMON: dict[str, Any] = dict(paper=KEY, theorem=THEOREM_2, bindings=bindings, measure="avg:grad_norm_sq", vary="n",
                  grid=P3_GRID, configure=p3_config)

P3_BOUND = BoundClaim(
    id="defedavg.P3.T2_bound_corrected",
    title="Corrected bound (14) holds on the nonconvex cosine problem",
    statement="On F_i(w) = 1/2||w - c||^2 + 3 sum cos(w_j) (nonconvex, L = 4), M_T <= sqrt(128 L sigma^2 "
              "Delta/(nKT)) + 8L/(KT) under (13).",
    source=src("Theorem 2, eqs. (13)-(14); spec §6 P3"),
    version="corrected",
    **_P3_COMMON,
)

P3_SPEEDUP = SlopeClaim(
    id="defedavg.P3.T2_speedup_n",
    title="Linear speedup in n on the nonconvex cosine problem (DeFedAvg-IID)",
    statement="With Theorem 2's step sizes, M_T falls like n^(-1/2) on a nonconvex problem too.",
    source=src("Theorem 2 and §3.2; spec §6 P3"),
    expected=ExpectedOrder(THEOREM_2, "n", "corrected", dominant_in="T"),
    tolerance=0.1,
    regime=T2_TRANSIENT_SMALL,
    **_P3_COMMON,
)
