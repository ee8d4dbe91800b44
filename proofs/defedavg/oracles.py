"""Trajectory oracles of DeFedAvg and FedAvg (issue #23 item 2): exact expectations against a second-moment
recursion written from the paper's compact recursion eq. (8), by enumerating every outcome of a round.

Written from ../shared/seeds/003_2fcc6b9d543c5aab.txt (Algorithm 1 as eq. (8); Algorithm 2) and spec
defedavg §2.6(3), §2.7.2 (Mode D), NOT from ratecheck/algorithms/fedavg.py or ratecheck/exact: a round t
draws n slots (i.i.d. uniform with replacement for DeFedAvg-nIID; n distinct clients for DeFedAvg-IID and
FedAvg without replacement) and a delay d ~ U{0..lam} per slot; client i runs K local SGD steps
x <- x - eta_l (H_i (x - c_i) + xi), xi ~ N(0, sigma^2/d I), from w^{max(t - d, 0)}, and uploads
Delta_i = start - end; w^{t+1} = w^t - eta_g (1/n) sum_slots Delta (a client drawn twice uploads ONE update,
with its first draw's delay, counted twice). K local steps are the affine map
Delta_i = (I - A_i^K)(start - c_i) + eta_l sum_k A_i^(K-1-k) xi_k, A_i = I - eta_l H_i.

The oracle enumerates every (clients, delays) outcome with its probability (N^n (lam+1)^n outcomes with
replacement, C(N, n) n! ordered draws without) and averages the outcome's affine map on the mean and the
second moment of v = (w^t, ..., w^{t-lam}, 1); the measures are quadratic forms in w with x* and H_bar
recomputed here. Exact (no sampling): the tolerance is round-off.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.trajectory import moment_trajectory, trajectory_oracle
from ratecheck.inspection import problem_of
from ratecheck.seeding import Streams
from ratecheck.trace import RunConfig

from .theorems import KEY, src

# per-client curvature (asymmetric spectra, rotated per client), random heterogeneity, sigma not 1
ORACLE_PROBLEM = {"dim": 3, "clients": 5, "mu": 0.3, "L": 1.7, "zeta": 0.8, "sigma": 0.7,
                  "heterogeneity": "random", "curvature": "per_client", "x0_offset": 1.3, "seed": 11}
COMMON = {"eta_global": 0.8, "eta_local": 0.15, "local_steps": 3}
ORACLE_RUNS = {
    "defedavg_niid": {**COMMON, "participation": "with_replacement:3", "delay": "uniform:2", "duplicates": "shared"},
    "defedavg_iid": {**COMMON, "participation": "without_replacement:3", "delay": "uniform:2"},
    "fedavg": {**COMMON, "participation": "without_replacement:2", "delay": "cyclic:1"},
}
ORACLE_T = 40
MEASURES = ("grad_norm_sq", "dist_sq", "gap")
# both sides exact: float64 round-off over 40 rounds of averaged 10 x 10 maps (measured below 1e-12); a wrong
# multiplicity, delay or step moves the numbers by >= 1e-3
ORACLE_RTOL = 1e-9


def _outcomes(mode: str, N: int, n: int, lam: int, kind: str
              ) -> list[tuple[float, tuple[int, ...], tuple[int, ...] | None]]:
    """(probability, clients, delays) of every outcome of a round's draws (delays at round t >= 0 for
    'uniform'; 'cyclic' and 'none' are deterministic given the clients and are filled in by the caller)."""
    if mode == "with_replacement":
        draws = [(c, 1.0 / N**n) for c in itertools.product(range(N), repeat=n)]
    elif mode == "without_replacement":
        perms = list(itertools.permutations(range(N), n))
        draws = [(c, 1.0 / len(perms)) for c in perms]
    else:
        draws = [(tuple(range(N)), 1.0)]
    delay_sets: list[tuple[int, ...] | None] = (
        list(itertools.product(range(lam + 1), repeat=n)) if kind == "uniform" else [None])
    p_delay = 1.0 / len(delay_sets)
    return [(p * p_delay, c, dl) for c, p in draws for dl in delay_sets]


class FedAvgRecursion:
    """Mean and second moment of v = (w^t, ..., w^{t-lam}, 1) under eq. (8) with the delay schedule."""

    def __init__(self, config: RunConfig) -> None:
        prob = problem_of(config)
        H = np.asarray(prob.hessians)
        C = np.asarray(prob.centers)
        N, d = C.shape
        H = np.broadcast_to(H, (N, d, d)) if H.ndim == 2 else H
        p = config.params
        eta_g, eta_l, K = float(p["eta_global"]), float(p["eta_local"]), int(p["local_steps"])
        mode, _, count = str(p.get("participation", "full")).partition(":")
        n = int(count) if count else N
        kind, _, lam_text = str(p.get("delay", "none")).partition(":")
        lam = int(lam_text or 0)
        self.d, self.lam, self.kind = d, lam, kind
        self.nv = (lam + 1) * d + 1
        # K local steps of client i: end = A^K start + (I - A^K) c_i + noise, A = I - eta_l H_i
        Ak = [np.linalg.matrix_power(np.eye(d) - eta_l * H[i], K) for i in range(N)]
        noise = [eta_l**2 * float(prob.sigma) ** 2 / d * sum(
            np.linalg.matrix_power(np.eye(d) - eta_l * H[i], 2 * (K - 1 - k)) for k in range(K)) for i in range(N)]
        self.rounds_maps: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._parts = (N, n, mode, eta_g, Ak, noise, C)
        self.H_bar = H.mean(0)
        self.x_star = np.linalg.solve(self.H_bar, np.einsum("nij,nj->ni", H, C).mean(0))
        self.x0 = np.asarray(prob.x0, dtype=float)

    def _round(self, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """E[F (.) F^T] as a stacked (F_s, weight) set and the noise term, for round t (delays clip at 0 and
        the cyclic schedule depends on t mod (lam + 1))."""
        key = min(t, self.lam) if self.kind != "cyclic" else (t % (self.lam + 1)) + (self.lam + 1) * (t < self.lam)
        if key in self.rounds_maps:
            return self.rounds_maps[key]
        N, n, mode, eta_g, Ak, noise, C = self._parts
        d, lam, nv = self.d, self.lam, self.nv
        Fs, Qs, ps = [], [], []
        base = np.zeros((nv, nv))
        base[:d, :d] = np.eye(d)
        for s in range(1, lam + 1):  # shift the history: w^{t-s} <- w^{t-s+1}
            base[s * d:(s + 1) * d, (s - 1) * d:s * d] = np.eye(d)
        base[-1, -1] = 1.0
        pull = [np.eye(d) - a for a in Ak]  # I - A_i^K
        for prob_s, clients, delays in _outcomes(mode, N, n, lam, self.kind):
            if delays is None:
                delays = tuple((c + t) % (lam + 1) for c in clients) if self.kind == "cyclic" else \
                    tuple(lam if self.kind == "constant" else 0 for _ in clients)
            F = base.copy()
            Q = np.zeros((nv, nv))
            first: dict[int, int] = {}
            for slot, i in enumerate(clients):
                first.setdefault(i, delays[slot])
            for i, dl in first.items():
                mult = clients.count(i)  # a client drawn twice: one update counted twice (spec §2.6(3))
                age = min(dl, t)  # w^{max(t - d, 0)}: before round d the start is w^0
                w = eta_g * mult / n
                F[:d, age * d:(age + 1) * d] -= w * pull[i]  # Delta = (I - A^K)(start - c_i) + noise
                F[:d, -1] += w * pull[i] @ C[i]
                Q[:d, :d] += w**2 * noise[i]
            Fs.append(F)
            Qs.append(Q)
            ps.append(prob_s)
        self.rounds_maps[key] = (np.array(Fs), np.einsum("s,sij->ij", np.array(ps), np.array(Qs)), np.array(ps))
        return self.rounds_maps[key]

    def trajectory(self, marks: np.ndarray) -> dict[str, np.ndarray]:
        v0 = np.concatenate([np.tile(self.x0, self.lam + 1), [1.0]])
        L = np.zeros((self.d, self.nv))
        L[:, :self.d] = np.eye(self.d)
        L[:, -1] = -self.x_star  # w - x*
        Hb = self.H_bar
        forms = {"grad_norm_sq": Hb @ L, "dist_sq": L, "gap": np.linalg.cholesky(0.5 * Hb).T @ L}

        def maps(t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            Fs, Q, ps = self._round(t)
            return Fs, ps, Q
        return moment_trajectory(v0, maps, forms, marks)


def _oracle(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    return FedAvgRecursion(config).trajectory(marks)


def replay(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    """Per replica (C, R): a noise-free DeFedAvg-nIID run replayed from eq. (8) with the run's own draws.

    Exact mode computes its expectations from its own skeleton (multiplicity moments), not from the
    algorithm's round, so the round's sampling, duplicate and delay rules need a check of their own: the same
    Generators (ratecheck.seeding: one per replica and purpose) give the same n uniform draws from N
    ("sampling") and delays U{0..lam} ("delay") per round; with sigma = 0 nothing else is random, so every
    replica's trajectory is reproduced to round-off."""
    rec = FedAvgRecursion(config)
    N, n, mode, eta_g, Ak, _, C = rec._parts
    if mode != "with_replacement" or rec.kind != "uniform" or float(config.problem_params.get("sigma", 1.0)):
        raise ValueError("the replay oracle is for with-replacement draws, uniform delays and sigma = 0")
    streams = Streams(int(config.seed), config.run_key(), range(int(config.replicas)))
    R, lam = int(config.replicas), rec.lam
    history = np.repeat(rec.x0[None, None, :], lam + 1, axis=1).repeat(R, axis=0)  # w^t, w^{t-1}, ...
    want = {int(t): j for j, t in enumerate(marks)}
    out = {name: np.full((len(marks), R), np.nan) for name in MEASURES}
    Hb = rec.H_bar
    for t in range(int(max(marks)) + 1):
        if t in want:
            e = history[:, 0] - rec.x_star
            g = e @ Hb
            out["grad_norm_sq"][want[t]], out["dist_sq"][want[t]] = (g * g).sum(1), (e * e).sum(1)
            out["gap"][want[t]] = 0.5 * (e * g).sum(1)
        clients = streams["sampling"].integers(N, (n,))
        delays = streams["delay"].integers(lam + 1, (n,))
        new = history[:, 0].copy()
        for r in range(R):
            seen: dict[int, int] = {}
            for slot in range(n):  # a client drawn twice: its first draw's delay and update, counted twice
                seen.setdefault(int(clients[r, slot]), int(delays[r, slot]))
            for slot in range(n):
                i = int(clients[r, slot])
                start = history[r, min(seen[i], t)]
                new[r] -= eta_g / n * (start - (Ak[i] @ (start - C[i]) + C[i]))
        history = np.concatenate([new[:, None], history[:, :-1]], axis=1)
    return out


def oracle_configure(algorithm: str) -> Any:
    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(algorithm, dict(ORACLE_RUNS[algorithm]), "quadratic", dict(ORACLE_PROBLEM), int(value),
                         replicas=1, checkpoints=int(value), mode="exact")
    return configure


WHAT = {"defedavg_niid": "Algorithm 1 (eq. (8)): 3 draws with replacement from N = 5 (duplicates share one update "
                         "counted twice), delays U{0, 1, 2} per draw",
        "defedavg_iid": "Algorithm 2: 3 distinct clients of N = 5, delays U{0, 1, 2} per client",
        "fedavg": "FedAvg (eqs. (2)-(3), sign fixed) with 2 distinct clients of N = 5 and the cyclic delay "
                  "d = (i + t) mod 2"}

CLAIMS = tuple(
    trajectory_oracle(
        id=f"defedavg.oracle.{name}_trajectory", paper=KEY,
        title=f"{name}: exact expectations equal eq. (8)'s moment recursion over every outcome of a round",
        statement=f"{WHAT[name]}; K = 3 local steps, eta_g = 0.8, eta_l = 0.15, on a quadratic with per-client "
                  "rotated Hessians (spectrum 0.3..1.7, d = 3), random centres (zeta = 0.8), sigma = 0.7: the exact "
                  "E||grad F||^2, E||w - x*||^2 and E[F - F*] of every round equal the mean and second-moment "
                  "recursion averaged over every (clients, delays) outcome with its probability "
                  "(proofs/defedavg/oracles.py).",
        source=src("Algorithms 1-2, eq. (8); eqs. (2)-(3)", "spec §2.6(3), §2.7.2 Mode D"),
        configure=oracle_configure(name), oracle=_oracle, measures=MEASURES, rtol=ORACLE_RTOL,
        tolerance_reason="both sides are exact; the gap is float64 round-off over 40 rounds (measured < 1e-12); "
                         "a wrong multiplicity, delay or local step moves it by >= 1e-3.",
        grid={"quick": (ORACLE_T,), "full": (ORACLE_T,)})
    for name in ORACLE_RUNS)


def replay_config(value: float, profile: Profile) -> RunConfig:
    return RunConfig("defedavg_niid", dict(ORACLE_RUNS["defedavg_niid"]), "quadratic",
                     {**ORACLE_PROBLEM, "sigma": 0.0}, int(value), replicas=profile.replicas, checkpoints=int(value))


REPLAY = trajectory_oracle(
    id="defedavg.oracle.defedavg_niid_replay", paper=KEY,
    title="defedavg_niid: a noise-free Monte-Carlo run equals eq. (8) replayed with the run's own draws",
    statement="The same instance with sigma = 0, run by the algorithm's own round (Monte Carlo, not exact mode), "
              "replica by replica: with the same Generators (one per replica and purpose) the n = 3 uniform draws "
              "from N = 5 and the delays U{0, 1, 2} are the same, and eq. (8) with one update per distinct client "
              "counted with its multiplicity and its first draw's delay reproduces every iterate. Exact mode does "
              "not read the round's sampling or duplicate rule (it has its own skeleton), this claim does.",
    source=src("Algorithm 1, eq. (8)", "spec §2.6(3), §2.7.2 Mode D"),
    configure=replay_config, oracle=replay, measures=MEASURES, rtol=ORACLE_RTOL,
    tolerance_reason="deterministic given the draws: float64 round-off over 40 rounds (measured < 1e-13); a "
                     "wrong duplicate, delay or weight rule changes some replica by >= 1e-3.",
    grid={"quick": (ORACLE_T,), "full": (ORACLE_T,)})

CLAIMS = CLAIMS + (REPLAY,)
