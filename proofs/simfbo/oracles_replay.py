"""Replay oracles of SimFBO and ShroFBO (issue #23): the options exact mode cannot follow (random local-step counts
'uniform:lo:hi', ShroFBO's rho estimated over the sampled clients, a projection of v that binds) and the diagnostics
it skips (the running max of the local ||v_i||, the rho statistics of condition C4), checked on noise-free runs whose
every replica is replayed from the run's own primitive draws.

Written from ../shared/seeds/000_66e1ccf0a50396e9.txt, Algorithm 1 and eqs. (3)-(8), and spec simfbo §2 (§2.1 P_r
on the server v only; §2.4 rho over all n clients, option 3 its estimate over C; §2.7 the coefficients a_k: constant
1, harmonic 1/(k + 1), geometric q^k), NOT from ratecheck/algorithms/bilevel.py. Per round and replica: every client
i draws tau_i (uniform on {lo..hi}: floor((hi - lo + 1) u) + lo of the replica's 'local_steps' uniforms, n a round),
the server draws C (a uniform P-subset from the 'sampling' stream's uniforms, oracles_baselines.client_draws); client
i in C runs tau_i Jacobi steps of eq. (3) from the server's (x, y, v) with step a_k eta (noise-free P1 gradients)
and returns q_i = sum_k a_k g_k; the server steps by sum_C pt_i q_i (SimFBO, pt_i = (n/P) p_i) or sum_C pt_i rho
q_i/||a_i||_1 (ShroFBO) and projects v on the ball of radius r. A run starts at 'zero' (inside every ball) or at
'solution': (x*, y*(x*), v*(x*)) recomputed from P1's matrices (oracles.solution_point), v0 then projected on the
ball too (spec §2.1: Algorithm 1 keeps the server v in P_r's ball, ||v0|| <= r). The claim's deviation is the worst of the measures'
relative deviations (every replica) and those of the diagnostics local_v_max (max ||v_i^(t,k)|| over k = 0..tau_i,
clients, rounds and replicas), rho_bar (mean over rounds of the replica mean of rho^(t)), rho_min and rho_max.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ratecheck.claims import Claim, Profile
from ratecheck.claims.trajectory import trajectory_deviation, trajectory_oracle
from ratecheck.seeding import replica_generator
from ratecheck.trace import RunConfig, Trace

from .oracles import measure_forms, solution_point
from .oracles_baselines import BASE_PROBLEM, NOISE_FREE, RTOL, _data, client_draws
from .theorems import KEY, src

DIAGNOSTICS = ("local_v_max", "rho_bar", "rho_min", "rho_max")
MEASURES = ("grad_norm_sq", "y_err", "v_err", "dist_sq")


def coefficients(spec: str, steps: int) -> np.ndarray:
    """a_k, k = 0..steps-1 (spec §2.7)."""
    name, _, q = spec.partition(":")
    k = np.arange(steps, dtype=float)
    if name == "geometric" and q:
        return float(q) ** k
    if name not in ("constant", "harmonic"):
        raise ValueError(f"the replay knows the coefficients constant, harmonic and geometric:q, got {spec!r}")
    return np.ones(steps) if name == "constant" else 1.0 / (k + 1.0)


def step_counts(config: RunConfig) -> np.ndarray:
    """tau of every client (T, R, n): per_client or one count for all, or the replica's 'local_steps' uniforms."""
    spec, n = str(config.params.get("local_steps", "1")), int(config.problem_params["clients"])
    T, R = int(config.rounds), int(config.replicas)
    kind, _, rest = spec.partition(":")
    if kind == "uniform":
        lo, hi = (int(v) for v in rest.split(":"))
        key = config.run_key()
        u = np.array([replica_generator(int(config.seed), key, r, "local_steps").random(T * n) for r in range(R)])
        return lo + np.minimum((u * (hi - lo + 1)).astype(np.int64), hi - lo).reshape(R, T, n).transpose(1, 0, 2)
    taus = [int(v) for v in rest.split(",")] if kind == "per_client" else [int(kind)] * n
    return np.broadcast_to(np.asarray(taus), (T, R, n))


def project(v: np.ndarray, radius: float) -> np.ndarray:
    """P_r(v) = min{1, r/||v||} v (spec §2.1), v unchanged when it lies in the ball (v = 0 included)."""
    scale = float(np.linalg.norm(v))
    return v if scale <= radius else v * (radius / scale)


def start_point(config: RunConfig, k: dict[str, Any], R: int) -> tuple[np.ndarray, ...]:
    """The problem's (x0, y0, v0) of every replica (R, d), before P_r: 'zero', or 'solution' (x*, y*(x*), v*(x*))
    recomputed from the problem's matrices (oracles.solution_point), not read from the problem's start."""
    start = config.problem_params.get("start", "zero")
    if start == "zero":
        return np.zeros((R, k["dx"])), np.zeros((R, k["dy"])), np.zeros((R, k["dy"]))
    if start != "solution":
        raise ValueError(f"the replay knows the starts 'zero' and 'solution', got {start!r}")
    x0, y0, v0 = solution_point(k["A"], k["B"], k["c"], k["e"], k["s"], k["h"], k["p"], k["lam"])
    return tuple(np.tile(z, (R, 1)) for z in (x0, y0, v0))


def replay(config: RunConfig, marks: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, float], np.ndarray]:
    """Per replica (C, R) measures at the checkpoints, the diagnostics, and where P_r bound ((T + 1, R): the start,
    then each round), of the noise-free run replayed."""
    k, q = _data(config), config.params
    assert k["sf"] == k["sg"] == 0.0, "a noise-free run"
    A, B, lam, p, n, dx, dy = k["A"], k["B"], k["lam"], k["p"], k["n"], k["dx"], k["dy"]
    T, R = int(config.rounds), int(config.replicas)
    eta = {"x": float(q.get("eta_x", 0.01)), "y": float(q.get("eta_y", 0.01)), "v": float(q.get("eta_v", 0.01))}
    gamma = {"x": float(q["gamma_x"]), "y": float(q["gamma_y"]), "v": float(q["gamma_v"])}
    radius = float(q.get("radius", "inf")) if q.get("radius", "off") != "off" else np.inf
    normalized, sampled_rho = config.algorithm == "shrofbo", q.get("rho", "all_clients") == "sampled"
    taus, draws = step_counts(config), client_draws(config)
    a = coefficients(str(q.get("coefficients", "constant")), int(taus.max()))
    norm = np.concatenate([[0.0], np.cumsum(a)])  # ||a_i||_1 for tau_i = 0, 1, ...
    forms = measure_forms(A, B, k["c"], k["e"], k["s"], k["h"], p, lam)
    x, y, v = start_point(config, k, R)
    binds = np.zeros((T + 1, R), dtype=bool)  # where P_r moved v: the start (row 0), then after round t (row t + 1)
    binds[0] = np.linalg.norm(v, axis=1) > radius
    v = np.array([project(vr, radius) for vr in v])  # Algorithm 1 keeps the server v in the ball from the start
    out = {name: np.full((len(marks), R), np.nan) for name in forms}
    want = {int(t): j for j, t in enumerate(marks)}
    v_max, rhos = 0.0, np.zeros((T, R))
    for t in range(T + 1):
        if t in want:
            z = np.hstack([x, y, v])
            for name, (L, l0) in forms.items():
                out[name][want[t]] = np.sum((z @ L.T + l0) ** 2, axis=1)
        if t == T:
            break
        for r in range(R):
            C, tau = [int(i) for i in draws[t, r]], taus[t, r]
            pt = n / len(C) * p[C] if len(C) < n else p[C]
            rho = float(pt @ norm[tau[C]]) if sampled_rho else float(p @ norm[tau])
            rhos[t, r] = rho
            step = {"x": np.zeros(dx), "y": np.zeros(dy), "v": np.zeros(dy)}
            for w, i in zip(pt, C):
                xi, yi, vi = x[r], y[r], v[r]
                qi = {"x": np.zeros(dx), "y": np.zeros(dy), "v": np.zeros(dy)}
                v_max = max(v_max, float(np.linalg.norm(vi)))
                for kk in range(tau[i]):  # eq. (3): all three at the old triple
                    g = {"y": A[i] @ yi - B @ xi - k["c"][i], "v": A[i] @ vi - (yi - k["e"][i]),
                         "x": lam * (xi - k["s"][i]) + k["h"][i] + B.T @ vi}
                    xi, yi, vi = xi - a[kk] * eta["x"] * g["x"], yi - a[kk] * eta["y"] * g["y"], vi - a[kk] * eta["v"] * g["v"]
                    v_max = max(v_max, float(np.linalg.norm(vi)))
                    qi = {s: qi[s] + a[kk] * g[s] for s in qi}
                factor = rho / norm[tau[i]] if normalized else 1.0  # eq. (8): h_i = q_i/||a_i||_1, step rho gamma
                step = {s: step[s] + w * factor * qi[s] for s in step}
            x[r], y[r] = x[r] - gamma["x"] * step["x"], y[r] - gamma["y"] * step["y"]
            v_new = v[r] - gamma["v"] * step["v"]
            scale = np.linalg.norm(v_new)
            v[r], binds[t + 1, r] = project(v_new, radius), scale > radius
    return out, {"local_v_max": v_max, "rho_bar": float(rhos.mean(axis=1).mean()), "rho_min": float(rhos.min()),
                 "rho_max": float(rhos.max())}, binds


def replay_oracle(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    return replay(config, marks)[0]


def replay_deviation(config: RunConfig, trace: Trace) -> np.ndarray:
    """The worst of the measures' (every replica) and the diagnostics' relative deviations from the replay."""
    _, diagnostics, _ = replay(config, np.asarray(trace.checkpoints))
    gap = max(abs(float(trace.info[name]) - want) / abs(want) for name, want in diagnostics.items())
    worst = np.maximum(trajectory_deviation(replay_oracle)(config, trace), gap)
    return np.where(np.isfinite(worst), worst, 1e100)  # a run that left the finite numbers: far off, not dropped


STEPS = {"eta_x": 0.05, "eta_y": 0.08, "eta_v": 0.07, "gamma_x": 0.1, "gamma_y": 0.2, "gamma_v": 0.15}
CASES: dict[str, dict[str, Any]] = {
    "simfbo": {"steps": {**STEPS, "local_steps": "uniform:1:3", "coefficients": "harmonic",
                         "participation": "with_replacement:3", "radius": 0.6},
               "what": "P = 3 of n = 4 drawn with replacement (duplicates), tau_i uniform on {1, 2, 3} redrawn per "
                       "client and round, harmonic a_k, v projected on the ball of radius 0.6 (it binds: ||v*|| is "
                       "larger)"},
    "shrofbo": {"steps": {**STEPS, "local_steps": "uniform:1:4", "coefficients": "geometric:0.6",
                          "participation": "without_replacement:2", "radius": "off"},
                "what": "P = 2 of n = 4 without replacement, tau_i uniform on {1..4}, geometric a_k = 0.6^k, rho "
                        "over all n clients (their own tau_j this round)"},
    "shrofbo_sampled_rho": {"algorithm": "shrofbo",
                            "steps": {**STEPS, "local_steps": "uniform:2:4", "coefficients": "geometric:1.3",
                                      "participation": "without_replacement:3", "radius": "off", "rho": "sampled"},
                            "what": "P = 3 of n = 4 without replacement, tau_i uniform on {2, 3, 4}, geometric a_k = "
                                    "1.3^k, rho estimated over C, sum_C pt_j ||a_j||_1 (spec §2.4 option 3)"},
    "simfbo_solution_start": {"algorithm": "simfbo", "problem": {"start": "solution"},
                              "steps": {**STEPS, "local_steps": "uniform:1:3", "coefficients": "harmonic",
                                        "participation": "without_replacement:2", "radius": 0.4},
                              "what": "started at the solution (x*, y*(x*), v*(x*)) recomputed from P1's matrices, "
                                      "v0 projected on the ball of radius 0.4 (||v*|| = 0.95: P_r binds at the "
                                      "start, then in most but not all later rounds), P = 2 of n = 4 without "
                                      "replacement, tau_i uniform on {1, 2, 3}, harmonic a_k"},
}
REPLAY_T, REPLAY_REPLICAS = 20, 4


def _configure(name: str) -> Any:
    case = CASES[name]

    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(case.get("algorithm", name), dict(case["steps"]), "quadratic_bilevel",
                         {**BASE_PROBLEM, **NOISE_FREE, **case.get("problem", {})}, int(value),
                         replicas=REPLAY_REPLICAS, checkpoints=int(value), mode="monte_carlo")
    return configure


CLAIMS: tuple[Claim, ...] = tuple(
    dataclasses.replace(trajectory_oracle(
        id=f"simfbo.oracle.{name}_replay", paper=KEY,
        title=f"{case.get('algorithm', name)}: a noise-free run with random local steps equals Algorithm 1 replayed "
              "from its own draws",
        statement=f"{case.get('algorithm', name)} on noise-free P1 (d_x = 2, d_y = 3, Gaussian B, weights p = (0.1, "
                  f"0.2, 0.3, 0.4), heterogeneous A_i), {case['what']}: every replica's ||grad Phi(x)||^2, ||y - "
                  "y*(x)||^2, ||v - v*(x)||^2 and ||x - x*||^2 of every round, and the run's local_v_max, rho_bar, "
                  "rho_min and rho_max, equal Algorithm 1 replayed with the replica's own step counts and client "
                  "sets (proofs/simfbo/oracles_replay.py).",
        source=src("Algorithm 1, eqs. (3)-(8); Prop. 1 (||v_i||); condition C4 (rho)", "spec §2.1, §2.4, §2.7"),
        configure=_configure(name), oracle=replay_oracle, measures=MEASURES, rtol=RTOL,
        tolerance_reason="deterministic given the draws: float64 round-off over the rounds (measured below 1e-12); a "
                         "wrong a_k, tau law, rho, weight or projection moves some replica by >= 1e-4.",
        grid={"quick": (REPLAY_T,), "full": (REPLAY_T,)}), summary=replay_deviation)
    for name, case in CASES.items())
