"""Trajectory oracles of StR-FedAvg's baselines (issue #23 item 2): SCAFFOLD, IR-SGD, IPIR-FedAvg (Algorithm 2) and
the exact-projection outer loop, each against a recursion written from its algorithm box, NOT from
ratecheck/algorithms/strfedavg.py.

* SCAFFOLD (Karimireddy et al. 2020, ref. [13] of ../shared/seeds/001_511a8e816d499631.txt), Algorithm 1 with
  option II: S of N clients without replacement; client i from y = x runs K steps y <- y - gamma_l (g_i(y) - c_i
  + c), then c_i+ = c_i - c + (x - y_K)/(K gamma_l); the server sets x <- x + gamma_g (1/S) sum (y_K - x) and
  c <- c + (S/N) (1/S) sum (c_i+ - c_i); c = c_i = 0 at the start. Run on f_eta = h + eta f (spec §7) with a
  fixed eta and gamma_l = gamma_tilde/(gamma_g K); the package also keeps Algorithm 1's theta-weighted output
  (theta = 1/(1 - eta mu_f gamma_tilde/2)), checked here as in oracles.py. Exact moments over the 6 client sets,
  with the local noise entering x, c and c_i jointly.
* IR-SGD (spec §7 table): x_{k+1} = x_k - gamma_k (grad h~(x_k) + eta_k grad f~(x_k)), gamma_k = gamma_0
  (k+1)^-a, eta_k = eta_0 (k+1)^-b, zeta ~ N(0, sigma_h^2/n I), xi ~ N(0, sigma_f^2/n I). Exact moments.
* Exact-projection GD (spec §7, Algorithm 2 line 6 with Pi in closed form): y <- y - gamma (grad f(y) + (y -
  Pi y)/lam), gamma = lam/(4(L_f lam + 2)). Deterministic.
* IPIR-FedAvg (Algorithm 2, R_t = t + R0 (I20), mu_f = 1, p = 2, a = 7/12, b = 5/12): x^t is StR-FedAvg's
  theta-weighted output after R_t rounds on h + eta_t/2 ||x - y^t||^2 from y^t (the proximal term exact, spec
  pitfall 17), y^{t+1} = y^t - gamma (grad f(y^t) + (y^t - x^t)/lam). Exact mode refuses it (R_t client draws a
  round), so a noise-free Monte-Carlo run is replayed with its own client draws (the S smallest of N uniform
  keys per inner round, ratecheck.seeding's 'sampling' stream), every replica at once (replicas and clients are
  array axes).

x_LS, the row space, Pi, x*, the stationary point of F_lambda and L_f, mu_f are recomputed here from (A_i, b_i,
P, q_i) by eigendecompositions, not read from the problem's certified constants.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.trajectory import Oracle, moment_trajectory, trajectory_oracle
from ratecheck.claims.values import ThresholdClaim
from ratecheck.inspection import problem_of
from ratecheck.model.participation import Participation
from ratecheck.seeding import Streams
from ratecheck.trace import RunConfig

from .oracles import ORACLE_PROBLEM, output_average
from .theorems import src

KEY = "strfedavg"
ORACLE_RTOL = 1e-9  # exact or replayed: float64 round-off over the run's rounds (measured below 1e-12)


@dataclass(frozen=True)
class Geometry:
    """h's solution set and the quadratic outer loss, from the data: X*_h = x_LS + null(H)."""

    A: np.ndarray  # (N, rows, n)
    b: np.ndarray  # (N, rows)
    P: np.ndarray  # (n, n): f_i = 1/2 x'Px - q_i'x + k_i
    q: np.ndarray  # (N, n)
    x0: np.ndarray
    H: np.ndarray
    x_ls: np.ndarray
    V1: np.ndarray  # orthonormal basis of range(H)

    @classmethod
    def of(cls, config: RunConfig) -> Geometry:
        prob = problem_of(config)
        A, b = np.asarray(prob.A, float), np.asarray(prob.b, float)
        N, _, n = A.shape
        H = np.einsum("nki,nkj->ij", A, A) / N
        x_ls = np.linalg.lstsq(A.reshape(-1, n), b.reshape(-1), rcond=None)[0]
        eig, vec = np.linalg.eigh(H)
        return cls(A, b, np.asarray(prob.outer.P, float), np.asarray(prob.outer.q, float),
                   np.asarray(prob.x0, float), H, x_ls, vec[:, eig > 1e-10 * eig.max()])

    @property
    def n(self) -> int:
        return self.A.shape[2]

    def project(self, y: np.ndarray) -> np.ndarray:
        """Pi_{X*_h}(y) = y - V1 V1'(y - x_LS) (rows of y)."""
        return y - (y - self.x_ls) @ self.V1 @ self.V1.T

    def x_star(self) -> np.ndarray:
        """argmin f over X*_h: x_LS + V2 u with (V2'PV2) u = V2'(q_bar - P x_LS)."""
        V2 = np.linalg.svd(np.eye(self.n) - self.V1 @ self.V1.T)[0][:, :self.n - self.V1.shape[1]]
        base = self.project(np.zeros(self.n))
        u = np.linalg.solve(V2.T @ self.P @ V2, V2.T @ (self.q.mean(0) - self.P @ base))
        return base + V2 @ u

    def half_hessian_root(self) -> np.ndarray:
        """R with ||R z||^2 = 1/2 z'Hz (h - h* at x_LS + z)."""
        eig, vec = np.linalg.eigh(self.H)
        return np.sqrt(np.clip(eig, 0, None) / 2)[:, None] * vec.T

    def L_f(self) -> float:
        return float(np.abs(np.linalg.eigvalsh(self.P)).max())

    def mu_f(self) -> float:
        return float(np.linalg.eigvalsh(self.P).min())


# ------------------------------------------------------------------------------------------------
# SCAFFOLD


class ScaffoldRecursion:
    """Mean and second moment of v = (x, x-hat, c, c_1..c_N, 1) under SCAFFOLD (option II) on f_eta."""

    def __init__(self, config: RunConfig) -> None:
        geo, p, pp = Geometry.of(config), config.params, config.problem_params
        A, b, P, q = geo.A, geo.b, geo.P, geo.q
        N, n = A.shape[0], geo.n
        R, K, gg = int(p["horizon"]), int(p["local_steps"]), float(p["gamma_g"])
        eta, gt = float(p["eta"]), float(p["gamma_tilde"])
        gl = gt / (gg * K)
        self.theta = 1.0 / (1.0 - eta * geo.mu_f() * gt / 2)
        self.R, self.n = R, n
        S = Participation.parse(p["participation"]).per_round(N)
        var = (float(pp["sigma_h"]) ** 2 + eta**2 * float(pp["sigma_f"]) ** 2) / n  # per coordinate, each step
        X, AV, Cg = slice(0, n), slice(n, 2 * n), slice(2 * n, 3 * n)
        Ci = [slice((3 + i) * n, (4 + i) * n) for i in range(N)]
        nv = (3 + N) * n + 1
        I = np.eye(n)
        # y_K of client i = M_i v + noise (cov Nz_i): the corrected step is affine in y, c_i, c and the data
        M, Nz = [], []
        for i in range(N):
            G = I - gl * (A[i].T @ A[i] + eta * P)
            powers = [np.linalg.matrix_power(G, k) for k in range(K)]
            acc = gl * sum(powers)
            Mi = np.zeros((n, nv))
            Mi[:, X] = np.linalg.matrix_power(G, K)
            Mi[:, Ci[i]] = acc
            Mi[:, Cg] = -acc
            Mi[:, -1] = acc @ (A[i].T @ b[i] + eta * q[i])
            M.append(Mi)
            Nz.append(gl**2 * var * sum(Gk @ Gk.T for Gk in powers))
        sets = list(itertools.combinations(range(N), S))
        maps, self.Q = [], np.zeros((nv, nv))
        for C in sets:
            base = np.eye(nv)  # the parts of the new state that do not read y_K
            W = {i: np.zeros((nv, n)) for i in C}  # how each y_K^i enters the new state
            base[X, X] = (1 - gg) * I
            for i in C:
                W[i][X] = gg / S * I
                # c_i+ = c_i - c + (x - y_K)/(K gl); c+ = c + (1/N) sum_{i in S} (c_i+ - c_i)
                base[Ci[i], :] = 0
                base[Ci[i], Ci[i]] = I
                base[Ci[i], Cg] = -I
                base[Ci[i], X] = I / (K * gl)
                W[i][Ci[i]] = -I / (K * gl)
                base[Cg, Cg] -= I / N
                base[Cg, X] += I / (N * K * gl)
                W[i][Cg] = -I / (N * K * gl)
            F = base + sum(W[i] @ M[i] for i in C)
            maps.append(F)
            self.Q += sum(W[i] @ Nz[i] @ W[i].T for i in C) / len(sets)
        self.maps, self.ps = np.array(maps), np.full(len(sets), 1.0 / len(sets))
        x_star, x_ls = geo.x_star(), geo.x_ls
        sel = np.eye(nv)
        self.forms = {"dist_sq": sel[AV] - np.outer(x_star, sel[-1]),
                      "h_gap": geo.half_hessian_root() @ (sel[AV] - np.outer(x_ls, sel[-1])),
                      "last_dist_sq": sel[X] - np.outer(x_star, sel[-1])}
        self.v0 = np.concatenate([geo.x0, geo.x0, np.zeros((1 + N) * n), [1.0]])
        self.nv = nv

    def _maps(self, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Round r = t + 1: x-hat takes the OLD x at weight theta^r, then the round."""
        return np.matmul(self.maps, output_average(self.theta, t, self.n, self.nv)), self.ps, self.Q

    def trajectory(self, marks: np.ndarray) -> dict[str, np.ndarray]:
        return moment_trajectory(self.v0, self._maps, self.forms, marks)


# ------------------------------------------------------------------------------------------------
# IR-SGD and the exact-projection outer loop


def ir_sgd_trajectory(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    """Exact moments of v = (x, 1) under x <- x - gamma_k (H x - g + zeta + eta_k (P x - q_bar + xi))."""
    geo, p, pp = Geometry.of(config), config.params, config.problem_params
    n = geo.n
    g = np.einsum("nki,nk->i", geo.A, geo.b) / geo.A.shape[0]
    q_bar = geo.q.mean(0)
    g0, e0, a, b = (float(p[k]) for k in ("gamma0", "eta0", "a", "b"))
    sh2, sf2 = float(pp["sigma_h"]) ** 2, float(pp["sigma_f"]) ** 2

    def maps(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        gamma, eta = g0 * (k + 1) ** -a, e0 * (k + 1) ** -b
        F = np.eye(n + 1)
        F[:n, :n] -= gamma * (geo.H + eta * geo.P)
        F[:n, -1] = gamma * (g + eta * q_bar)
        Q = np.zeros((n + 1, n + 1))
        Q[:n, :n] = gamma**2 * (sh2 + eta**2 * sf2) / n * np.eye(n)
        return F[None], np.ones(1), Q

    sel = np.eye(n + 1)
    forms = {"dist_sq": sel[:n] - np.outer(geo.x_star(), sel[-1]),
             "h_gap": geo.half_hessian_root() @ (sel[:n] - np.outer(geo.x_ls, sel[-1]))}
    return moment_trajectory(np.concatenate([geo.x0, [1.0]]), maps, forms, marks)


def _outer_measures(geo: Geometry, lam: float, y: np.ndarray, x: np.ndarray, anchor: np.ndarray) -> dict[str, np.ndarray]:
    """Algorithm 2's measures of rows y (and x, the inner output for the anchor): ||grad F_lam(y)||^2 with
    F_lam = f + dist^2/(2 lam), ||y - y_lam||^2 (y_lam its stationary point), ||x - Pi(anchor)||^2, dist^2(y, X*_h)."""
    q_bar = geo.q.mean(0)
    V1 = geo.V1
    # grad F_lam(y) = P y - q_bar + V1 V1'(y - x_LS)/lam = 0
    y_lam = np.linalg.solve(geo.P + V1 @ V1.T / lam, q_bar + V1 @ V1.T @ geo.x_ls / lam)
    grad = y @ geo.P - q_bar + (y - geo.project(y)) / lam
    err = x - geo.project(anchor)
    feas = y - geo.project(y)
    return {"stat_sq": (grad**2).sum(-1), "y_dist_sq": ((y - y_lam) ** 2).sum(-1),
            "inner_err_sq": (err**2).sum(-1), "y_feas_sq": (feas**2).sum(-1)}


def _outer_step(geo: Geometry, params: dict, lam: float) -> float:
    gamma = params.get("gamma")
    return float(gamma) if gamma is not None else lam / (4 * (geo.L_f() * lam + 2))


def exact_projection_trajectory(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    geo = Geometry.of(config)
    lam = float(config.problem_params["lam"])
    gamma = _outer_step(geo, dict(config.params), lam)
    want = {int(t): j for j, t in enumerate(marks)}
    out = {k: np.full(len(marks), np.nan) for k in ("stat_sq", "y_dist_sq", "y_feas_sq")}
    y = geo.x0.copy()
    for t in range(int(max(marks)) + 1):
        if t in want:
            for k, v in _outer_measures(geo, lam, y[None], geo.project(y[None]), y[None]).items():
                if k in out:
                    out[k][want[t]] = v[0]
        y = y - gamma * (geo.P @ y - geo.q.mean(0) + (y - geo.project(y)) / lam)
    return out


def ipir_replay(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    """Per replica (C, R): a noise-free IPIR-FedAvg run replayed from Algorithm 2 with the run's own client draws.

    The one thing shared with the code is the primitive draw of the sampling stream (N uniform keys per inner
    round, the S smallest chosen: a uniform S-subset without replacement, as the paper samples). A replay
    needs the same subsets; everything computed from them is written from Algorithm 2 here."""
    geo, p, pp = Geometry.of(config), dict(config.params), config.problem_params
    if float(pp.get("sigma_h", 0.0)):
        raise ValueError("the IPIR replay is noise-free (sigma_h = 0; the proximal term has no xi)")
    lam = float(pp["lam"])
    gamma = _outer_step(geo, p, lam)
    A, b = geo.A, geo.b
    N = A.shape[0]
    K, gg, R0 = int(p["local_steps"]), float(p["gamma_g"]), int(p["R0"])
    # The inner schedule gamma~_t = 1/R_t^a, eta_t = p ln(R_t)/R_t^b with p = 2, a = 7/12, b = 5/12 and strong
    # convexity parameter 1: ../shared/seeds/001_511a8e816d499631.txt, Algorithm 2 line 3 (eta_t = 2 ln(t)/t^{5/12})
    # and Theorem 3 case (i) (gamma~_t = 1/t^{7/12}), which the proof of Theorem 3 (after Proposition 7) names
    # p = 2, a = 7/12, b = 5/12 in Algorithm 1's input schedule (line 2: gamma_l = 1/(gamma_g K mu_f^a R^a), eta =
    # p ln(R)/(mu_f^b R^b)). The paper numbers none of these as equations. R_t = t + R0, not t: spec §2.2 [GAP] (I20).
    pl, a_exp, b_exp = 2.0, 7 / 12, 5 / 12
    S = Participation.parse(p["participation"]).per_round(N)
    reps = int(config.replicas)
    streams = Streams(int(config.seed), config.run_key(), range(reps))
    AtA, Atb = np.einsum("nki,nkj->nij", A, A), np.einsum("nki,nk->ni", A, b)
    want = {int(t): j for j, t in enumerate(marks)}
    out = {k: np.full((len(marks), reps), np.nan) for k in ("stat_sq", "y_dist_sq", "inner_err_sq", "y_feas_sq")}
    y = np.repeat(geo.x0[None], reps, axis=0)
    x, anchor = y.copy(), y.copy()
    for t in range(int(max(marks)) + 1):
        if t in want:
            for k, v in _outer_measures(geo, lam, y, x, anchor).items():
                out[k][want[t]] = v
        Rt = t + R0
        gt, eta = Rt ** -a_exp, pl * math.log(Rt) / Rt ** b_exp
        gl, theta = gt / (gg * K), 1.0 / (1.0 - eta * gt / 2)
        w = y.copy()
        acc, total = np.zeros_like(w), 0.0
        for r in range(1, Rt + 1):
            acc += theta**r * w
            total += theta**r
            keys = streams["sampling"].uniform((N,))
            chosen = np.argsort(keys, axis=1)[:, :S]  # (reps, S): each replica's S clients with the smallest keys
            G, g = AtA[chosen], Atb[chosen]  # (reps, S, n, n), (reps, S, n)
            z = np.repeat(w[:, None], S, axis=1)  # every chosen client starts from the server's w
            for _ in range(K):
                z = z - gl * ((G @ z[..., None])[..., 0] - g + eta * (z - y[:, None]))
            w = w + gg * np.mean(z - w[:, None], axis=1)
        x = acc / total
        anchor = y
        y = y - gamma * (y @ geo.P - geo.q.mean(0) + (y - x) / lam)
    return out


# ------------------------------------------------------------------------------------------------
# Instances and claims

SCAFFOLD_T = 30
RUNS: dict[str, dict[str, Any]] = {
    # f_eta with eta = 0.3 (not 1), K = 3, gamma_g = 1.5, 2 of 4 clients; both noises (scales 0.6, 0.4)
    "scaffold": {"horizon": SCAFFOLD_T, "eta": 0.3, "gamma_tilde": 0.15, "gamma_g": 1.5, "local_steps": 3,
                 "participation": "without_replacement:2"},
    "ir_sgd": {"gamma0": 0.3, "eta0": 0.8, "a": 0.6, "b": 0.3},
    "exact_projection_gd": {},  # the default step lam/(4(L_f lam + 2)) is part of what is checked
    "ipir_fedavg": {"R0": 3, "local_steps": 2, "gamma_g": 1.5, "participation": "without_replacement:2"},
}
# TP3b-like (Theorem 3): f = 1/2 x'Px - q'x with P indefinite (-mu on the row space, +mu off it), lam < 1/mu
TP3_ORACLE = {"dim": 6, "rank": 3, "clients": 4, "rows": 2, "lam_min": 0.2, "lam_max": 1.0, "delta": 0.3,
              "outer": "tp3b", "mu": 0.8, "lam": 0.5, "c_scale": 1.0, "seed": 4}
PROBLEMS: dict[str, dict[str, Any]] = {"scaffold": ORACLE_PROBLEM, "ir_sgd": ORACLE_PROBLEM, "exact_projection_gd": TP3_ORACLE,
            "ipir_fedavg": TP3_ORACLE}
ROUNDS = {"scaffold": SCAFFOLD_T, "ir_sgd": 60, "exact_projection_gd": 60, "ipir_fedavg": 12}


def oracle_configure(algorithm: str, mode: str = "exact"):
    def configure(value: float, profile: Profile) -> RunConfig:
        replicas = 1 if mode == "exact" else profile.replicas
        return RunConfig(algorithm, dict(RUNS[algorithm]), "least_squares", dict(PROBLEMS[algorithm]), int(value),
                         replicas=replicas, checkpoints=int(value), mode=mode)
    return configure


def _scaffold(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    return ScaffoldRecursion(config).trajectory(marks)


def _grid(algorithm: str) -> dict[str, tuple[int, ...]]:
    return {"quick": (ROUNDS[algorithm],), "full": (ROUNDS[algorithm],)}


def _claim(algorithm: str, kind: str, oracle: Oracle, measures: tuple[str, ...], mode: str = "exact",
           **text: Any) -> ThresholdClaim:
    """strfedavg.oracle.<algorithm>_<kind>: the run of RUNS[algorithm] on PROBLEMS[algorithm] against ``oracle``."""
    return trajectory_oracle(id=f"strfedavg.oracle.{algorithm}_{kind}", paper=KEY, oracle=oracle, measures=measures,
                             configure=oracle_configure(algorithm, mode), rtol=ORACLE_RTOL, grid=_grid(algorithm),
                             **text)


SCAFFOLD = _claim(
    "scaffold", "trajectory", _scaffold, ("dist_sq", "h_gap", "last_dist_sq"),
    title="scaffold: exact expectations equal SCAFFOLD's (option II) moment recursion over every client set",
    statement="SCAFFOLD on f_eta (eta = 0.3, gamma_tilde = 0.15, K = 3, gamma_g = 1.5, S = 2 of N = 4 without "
              "replacement) on the instance of strfedavg.oracle.strfedavg_trajectory (row spectrum 0.2..1, delta = "
              "0.3, heterogeneous centres, sigma_h = 0.6, sigma_f = 0.4): the exact E||x^ - x*||^2, E[h(x^) - h*] "
              "of the theta-weighted output and E||x^R - x*||^2 equal the recursion of the state (x, x^, c, c_1..c_4) "
              "averaged over the 6 client sets, the control variates updated by option II "
              "(proofs/strfedavg/oracles_baselines.py).",
    source=src("ref. [13] (SCAFFOLD, Algorithm 1, option II) on f_eta", "spec §7"),
    tolerance_reason="both sides are exact; the gap is float64 round-off over 30 rounds (measured < 1e-12); a wrong "
                     "control-variate sign, the c update without S/N, the correction left out of a step or a wrong "
                     "noise scale moves it by >= 1e-4.")

IR_SGD = _claim(
    "ir_sgd", "trajectory", ir_sgd_trajectory, ("dist_sq", "h_gap"),
    title="ir_sgd: exact expectations equal the iteratively regularized SGD recursion",
    statement="IR-SGD with gamma_k = 0.3 (k+1)^-0.6, eta_k = 0.8 (k+1)^-0.3 on the instance of "
              "strfedavg.oracle.strfedavg_trajectory (sigma_h = 0.6, sigma_f = 0.4): the exact E||x_k - x*||^2 and "
              "E[h(x_k) - h*] of every iterate equal the mean and second-moment recursion of "
              "x_{k+1} = x_k - gamma_k (grad h~ + eta_k grad f~) (proofs/strfedavg/oracles_baselines.py).",
    source=src("refs. [1, 15, 26, 27, 9] (iteratively regularized SGD)", "spec §7"),
    tolerance_reason="both sides are exact: float64 round-off over 60 steps (measured < 1e-12); an index shift of "
                     "(k+1), a swapped exponent or a wrong noise scale moves it by >= 1e-3.")

EXACT_PROJECTION = _claim(
    "exact_projection_gd", "trajectory", exact_projection_trajectory, ("stat_sq", "y_dist_sq", "y_feas_sq"),
    title="exact_projection_gd: the iterates equal Algorithm 2's outer step with the closed-form projection",
    statement="Algorithm 2's outer loop y <- y - gamma (grad f(y) + (y - Pi y)/lam) with the default gamma = "
              "lam/(4(L_f lam + 2)), on TP3b with an indefinite Q_f (mu = 0.8, d = 6, rank 3) and lam = 0.5: "
              "||grad F_lam(y)||^2, ||y - y_lam||^2 and dist^2(y, X*_h) of every iterate equal the recursion with Pi, "
              "L_f and the stationary point y_lam recomputed from the data (proofs/strfedavg/oracles_baselines.py).",
    source=src("Algorithm 2, line 6, with Pi exact; eq. (3)", "spec §7"),
    tolerance_reason="deterministic: float64 round-off over 60 steps (measured < 1e-12); a wrong step, projection "
                     "or Moreau weight moves it by >= 1e-3.")

IPIR = _claim(
    "ipir_fedavg", "replay", ipir_replay, ("stat_sq", "y_dist_sq", "inner_err_sq", "y_feas_sq"), mode="monte_carlo",
    title="ipir_fedavg: a noise-free run equals Algorithm 2 replayed with the run's own client draws",
    statement="IPIR-FedAvg (R_t = t + 3 inner rounds, K = 2, gamma_g = 1.5, S = 2 of N = 4 without replacement, "
              "Algorithm 2's inner schedule mu_f = 1, p = 2, a = 7/12, b = 5/12, the default outer step) on the "
              "instance of strfedavg.oracle.exact_projection_gd_trajectory with sigma_h = 0, run by the algorithm "
              "(Monte Carlo), replica by replica: Algorithm 2 with each inner round's clients taken from the same "
              "'sampling' Generator (the S smallest of N uniform keys) reproduces ||grad F_lam(y^t)||^2, "
              "||y^t - y_lam||^2, the inner error ||x^t - Pi(y^t)||^2 and dist^2(y^t, X*_h) "
              "(proofs/strfedavg/oracles_baselines.py).",
    source=src("Algorithm 2 (R_t = t + R0, I20)", "spec §2.2"),
    tolerance_reason="deterministic given the draws: float64 round-off over 12 outer steps and their 102 inner "
                     "rounds (measured < 1e-12); a wrong theta weight, inner schedule, proximal centre or outer step "
                     "changes every replica by >= 1e-4.")

CLAIMS = (SCAFFOLD, IR_SGD, EXACT_PROJECTION, IPIR)
