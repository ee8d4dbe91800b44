"""DeFedAvg-nIID replayed with its noise (issue #23): a client drawn twice uploads ONE update.

The noise-free replay (oracles.py) cannot tell a shared update from two independent local jobs: without
noise the two jobs are the same. With sigma > 0 they differ, and only the paper's rule reproduces the run.
Written from ../shared/seeds/003_2fcc6b9d543c5aab.txt (Algorithm 1 as eq. (8)) and spec defedavg §2.6(3):
round t draws n slots uniformly with replacement from N and a delay d ~ U{0..lam} per slot; each distinct
client i runs K steps x <- x - eta_l (H_i (x - c_i) + xi_k), xi_k ~ N(0, sigma^2/d I), from
w^{max(t - d_first, 0)} (d_first: its first draw's delay) and uploads Delta_i = start - end, counted once per
draw: w^{t+1} = w^t - eta_g (1/n) sum_slots Delta_{client(slot)}.

The draws come from the run's own Generators (ratecheck.seeding: one per replica and purpose). Their layout
is the seeding contract, not the algorithm: "sampling" serves n integers and "delay" n integers a round, and
"noise" serves each local step's (n, d) standard normals, one row per slot in draw order (the problem's
stochastic gradient draws for every slot of the batch, so a duplicate's row is drawn and left unused).
"""

from __future__ import annotations

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.trajectory import trajectory_oracle
from ratecheck.inspection import problem_of
from ratecheck.seeding import Streams
from ratecheck.trace import RunConfig

from .oracles import MEASURES, ORACLE_PROBLEM, ORACLE_RTOL, ORACLE_RUNS, ORACLE_T
from .theorems import KEY, src


def _first_draw(clients: np.ndarray) -> np.ndarray:
    """(R, n): for each slot, the slot of its client's first draw in the round."""
    same = clients[:, :, None] == clients[:, None, :]  # (R, slot, earlier slot)
    return same.argmax(axis=2)


def noisy_replay(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    """Per replica (C, R): DeFedAvg-nIID replayed from eq. (8) with the run's own draws, noise included."""
    prob = problem_of(config)
    H, C = np.asarray(prob.hessians), np.asarray(prob.centers)
    N, d = C.shape
    H = np.broadcast_to(H, (N, d, d)) if H.ndim == 2 else H
    p = config.params
    eta_g, eta_l, K = float(p["eta_global"]), float(p["eta_local"]), int(p["local_steps"])
    mode, _, count = str(p["participation"]).partition(":")
    kind, _, lam_text = str(p["delay"]).partition(":")
    if mode != "with_replacement" or kind != "uniform" or p.get("duplicates", "shared") != "shared":
        raise ValueError("the noisy replay is for with-replacement draws, uniform delays and shared duplicates")
    n, lam, R = int(count), int(lam_text), int(config.replicas)
    scale = float(prob.sigma) / np.sqrt(d)
    streams = Streams(int(config.seed), config.run_key(), range(R))
    x0 = np.asarray(prob.initial_point(), dtype=float)
    x_star = np.linalg.solve(H.mean(0), np.einsum("nij,nj->i", H, C) / N)
    history = np.repeat(x0[None, None, :], lam + 1, axis=1).repeat(R, axis=0)  # w^t, w^{t-1}, ...
    want = {int(t): j for j, t in enumerate(marks)}
    out = {name: np.full((len(marks), R), np.nan) for name in MEASURES}
    rows = np.arange(R)[:, None]
    for t in range(int(max(marks)) + 1):
        if t in want:
            e = history[:, 0] - x_star
            g = e @ H.mean(0)
            out["grad_norm_sq"][want[t]], out["dist_sq"][want[t]] = (g * g).sum(1), (e * e).sum(1)
            out["gap"][want[t]] = 0.5 * (e * g).sum(1)
        clients = streams["sampling"].integers(N, (n,))
        delays = streams["delay"].integers(lam + 1, (n,))
        first = _first_draw(clients)
        start = history[rows, np.minimum(np.take_along_axis(delays, first, axis=1), t)]  # (R, n, d)
        x = start.copy()
        for _ in range(K):
            xi = streams["noise"].normal((n, d)) * scale
            x = x - eta_l * (np.einsum("rnij,rnj->rni", H[clients], x - C[clients]) + xi)
        delta = np.take_along_axis(start - x, first[:, :, None], axis=1)  # the first draw's update, each draw
        new = history[:, 0] - eta_g * delta.mean(axis=1)
        history = np.concatenate([new[:, None], history[:, :-1]], axis=1)
    return out


def noisy_config(value: float, profile: Profile) -> RunConfig:
    return RunConfig("defedavg_niid", dict(ORACLE_RUNS["defedavg_niid"]), "quadratic", dict(ORACLE_PROBLEM),
                     int(value), replicas=profile.replicas, checkpoints=int(value))


NOISY_REPLAY = trajectory_oracle(
    id="defedavg.oracle.defedavg_niid_noisy_replay", paper=KEY,
    title="defedavg_niid with noise: a Monte-Carlo run equals eq. (8) replayed with the run's own draws",
    statement="The oracle instance with sigma = 0.7 (n = 3 draws with replacement from N = 5, delays U{0, 1, 2}, "
              "K = 3), run by the algorithm's own round (Monte Carlo), replica by replica: with the same Generators "
              "the draws, delays and gradient noise are the same, and eq. (8) with ONE update per distinct client "
              "(its first draw's delay and noise), counted once per draw, reproduces every iterate. Without noise "
              "two independent jobs of one client are the same job, so only this replay sees the duplicate rule.",
    source=src("Algorithm 1, eq. (8)", "spec §2.6(3)"),
    configure=noisy_config, oracle=noisy_replay, measures=MEASURES, rtol=ORACLE_RTOL,
    tolerance_reason="deterministic given the draws: float64 round-off over 40 rounds; an independent job per "
                     "draw, a wrong delay or a wrong weight changes some replica by far more (shown in "
                     "tests/test_defedavg_noisy_replay.py).",
    grid={"quick": (ORACLE_T,), "full": (ORACLE_T,)})

CLAIMS = (NOISY_REPLAY,)
