"""Trajectory oracles of FedBiOAcc-Local, its centralized limit (MRBO) and StocBiO (issue #23 item 2): exact
expectations against mean and covariance recursions written from the algorithm boxes, NOT from
ratecheck/algorithms/fedbio.py.

Local lower levels (eq. (5), Test C2) with N1 noise and deterministic Hessians and Jacobians (sigma_H = sigma_J = 0:
exact mode refuses multiplicative noise). Client m's oracles, per minibatch of size b:

    grad_y g_m(x, y; B) = A_m y - B_m x - c_m + xi_g,       xi_g ~ N(0, sigma_g^2/(d b) I)
    Phi-hat_m(x, y; B)  = rho (x - e_m) + xi_fx + tau_N B_m^T S_m (y - d_m + xi_fy)     (eq. (6))

with S_m = sum_{q=0}^{Q} (I - tau_N A_m)^q (Q + 1 terms; grad_xy g = -B_m^T) and xi_fx, xi_fy blocks of one grad f
draw, each N(0, sigma_f^2/((p + d) b) I) (the mean of b single-sample estimators, or one chain of b-minibatches:
with fixed Hessians both have this law).

* FedBiOAcc-Local (../shared/seeds/002_25acef2c58d2293a.txt, Algorithm 4; spec fedbio §2.4): omega_1 = grad_y g_m(x1,
  y1; B_y1) with |B_y1| = b1 M, nu_1 = Phi-hat_m(x1, y1; B_x1) with |B_x1| = b1; per iteration t, alpha_t = gain
  (bM)^(2/3)/((bM)^2 u_bar + t)^(1/3): y^ = y - gamma alpha_t omega, x^ = x - eta alpha_t nu; at t % I == 0 x is
  averaged (y never); ONE fresh B_y (size b M, Theorem 8) and B_x (size b) at both points (line 10):
  omega' = grad_y g(z'; B_y) + (1 - c_omega alpha_t^2)(omega - grad_y g(z; B_y)), nu' likewise with c_nu, and at a sync
  nu' is averaged (omega stays local). Under N1 the shared sample leaves (c alpha_t^2) xi in each momentum.
* MRBO (Yang, Ji, Liang, NeurIPS 2021, Algorithm 1): the same recursion with M = 1 (x_{k+1} = x_k - eta_k v_k,
  y_{k+1} = y_k - lambda eta_k u_k, STORM weights 1 - c eta_k^2 on one minibatch at both points).
* StocBiO (Ji, Yang, Liang, ICML 2021, Algorithms 1-2): per outer iteration k, D warm-started steps
  y <- y - beta (grad_y g(x_k, y; S_t)) with fresh batches of size b_y, then x_{k+1} = x_k - alpha Phi-hat(x_k, y_k^D)
  with minibatches of size b for grad f (D_F) and the Jacobian, each Hessian factor its own batch.

Measures (eq. (5)): E||grad h(x_bar)||^2, E||x_bar - x*||^2 and (1/M) sum_m E||y_m - y_m*(x_bar)||^2, recomputed from
(A_m, B_m, c_m, d_m, e_m) by ``local_forms``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ratecheck.claims import Claim, Profile
from ratecheck.claims.trajectory import trajectory_oracle
from ratecheck.trace import RunConfig

from .oracles import FAMILY, KEY, ORACLE_RTOL, _instance, local_forms
from .theorems import src

PROBLEM = {"test": "C2", "clients": 3, "s": 0.7, "s_H": 0.4, "s_B": 0.5, "a_min": 1.0, "a_max": 3.0, "rho": 0.6,
           "sigma_f": 0.8, "sigma_g": 1.3, "seed": 3}


def _oracle_maps(k: dict[str, Any], Q: int, tau_N: float) -> dict[str, Any]:
    """Per client m: the affine parts of grad_y g_m and Phi-hat_m, and the single-sample noise covariances."""
    A, B, c, d, e, rho = k["A"], k["B"], k["c"], k["d"], k["e"], k["rho"]
    M, dy, p = B.shape
    S = [sum(np.linalg.matrix_power(np.eye(dy) - tau_N * A[m], q) for q in range(Q + 1)) for m in range(M)]
    G = [tau_N * B[m].T @ S[m] for m in range(M)]
    var_f, var_g = k["sigma_f"] ** 2 / (p + dy), k["sigma_g"] ** 2 / dy
    return {"M": M, "p": p, "dy": dy,
            # grad_y g_m = gy_x x + gy_y y + gy_0;  Phi-hat_m = ph_x x + ph_y y + ph_0
            "gy": [(-B[m], A[m], -c[m]) for m in range(M)],
            "ph": [(rho * np.eye(p), G[m], -rho * e[m] - G[m] @ d[m]) for m in range(M)],
            "cov_g": var_g * np.eye(dy), "cov_ph": [var_f * (np.eye(p) + G[m] @ G[m].T) for m in range(M)]}


def _propagate(mean: np.ndarray, cov: np.ndarray, step: Any, forms: dict[str, np.ndarray],
               marks: np.ndarray) -> dict[str, np.ndarray]:
    """E||L v||^2 at the checkpoints for v = (state, 1) with v_{t+1} = F_t v_t + noise (cov Q_t); step(t) -> (F, Q)."""
    want = {int(t): j for j, t in enumerate(marks)}
    out = {name: np.full(len(marks), np.nan) for name in forms}
    for t in range(int(max(marks)) + 1):
        if t in want:
            for name, L in forms.items():
                a = L @ mean
                out[name][want[t]] = float(a @ a + np.trace(L @ cov @ L.T))
        F, Qn = step(t)
        mean, cov = F @ mean, F @ cov @ F.T + Qn
    return out


class AccLocalRecursion:
    """Mean and covariance of the clients' (x, y, omega, nu) under Algorithm 4 (M = 1: MRBO)."""

    def __init__(self, config: RunConfig) -> None:
        pp, k = config.problem_params, _instance(config)
        if pp.get("sigma_J", 0.0) or pp.get("sigma_H", 0.0) or pp.get("start", "zero") != "zero":
            raise ValueError("the Algorithm 4 oracle has additive noise only and starts at zero")
        o = _oracle_maps(k, int(k["Q"]), float(k["tau_N"]))
        M, p, dy = o["M"], o["p"], o["dy"]
        b, b1 = int(k["b"]), int(k["b1"])
        by = b * M if k.get("by") in (None, "None") else int(k["by"])  # Theorem 8: |B_y| = b M
        self.M, self.I, self.bM = M, int(k["I"]), float(b * M)
        self.gain, self.u_bar, self.c_om, self.c_nu = (float(k[name]) for name in ("alpha_gain", "u_bar", "c_om", "c_nu"))
        self.eta, self.gamma = float(k["eta"]), float(k["gamma"])
        w = 2 * p + 2 * dy
        self.n = n = M * w
        at = [m * w for m in range(M)]
        self.X = [a + np.arange(p) for a in at]
        self.Y = [a + p + np.arange(dy) for a in at]
        self.OM = [a + p + dy + np.arange(dy) for a in at]
        self.NU = [a + p + 2 * dy + np.arange(p) for a in at]
        # T: the exact targets of the momenta as a map of (state, 1): omega rows grad_y g_m, nu rows Phi-hat_m
        T = np.zeros((n + 1, n + 1))
        Qg, Qph = np.zeros((n + 1, n + 1)), np.zeros((n + 1, n + 1))  # per-iteration sample covariances
        for m in range(M):
            gx, gyy, g0 = o["gy"][m]
            T[np.ix_(self.OM[m], self.X[m])], T[np.ix_(self.OM[m], self.Y[m])], T[self.OM[m], -1] = gx, gyy, g0
            hx, hy, h0 = o["ph"][m]
            T[np.ix_(self.NU[m], self.X[m])], T[np.ix_(self.NU[m], self.Y[m])], T[self.NU[m], -1] = hx, hy, h0
            Qg[np.ix_(self.OM[m], self.OM[m])] = o["cov_g"] / by
            Qph[np.ix_(self.NU[m], self.NU[m])] = o["cov_ph"][m] / b
        self.T, self.Qg, self.Qph = T, Qg, Qph
        self.avg_x, self.avg_nu = np.eye(n + 1), np.eye(n + 1)
        for m in range(M):
            for j in range(M):
                self.avg_x[np.ix_(self.X[m], self.X[j])] = np.eye(p) / M
                self.avg_nu[np.ix_(self.NU[m], self.NU[j])] = np.eye(p) / M
        self.move = np.zeros((n + 1, n + 1))  # x -= eta nu, y -= gamma omega (times alpha_t)
        for m in range(M):
            self.move[np.ix_(self.X[m], self.NU[m])] = -self.eta * np.eye(p)
            self.move[np.ix_(self.Y[m], self.OM[m])] = -self.gamma * np.eye(dy)
        mom = np.zeros(n + 1)
        for m in range(M):
            mom[self.OM[m]], mom[self.NU[m]] = 1.0, 1.0
        self.mom = mom
        # line 2: x1 = y1 = 0, first momenta from batches b1 M (omega) and b1 (nu)
        self.mean0 = np.r_[np.zeros(n), 1.0]
        self.mean0 = self.mean0 + np.diag(mom) @ T @ self.mean0
        self.cov0 = Qg * by / (b1 * M) + Qph * b / b1
        self.x_star, self.forms = local_forms(k["A"], k["B"], k["c"], k["d"], k["e"], k["rho"], self.X, self.Y, n)

    def alpha(self, it: int) -> float:
        return self.gain * self.bM ** (2 / 3) / (self.bM**2 * self.u_bar + it) ** (1 / 3)

    def step(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        it = t + 1
        a = self.alpha(it)
        sync = it % self.I == 0
        keep = np.diag(1.0 - self.mom)
        pos = keep @ (np.eye(self.n + 1) + a * self.move)  # lines 4-8, momentum rows cleared
        if sync:
            pos = self.avg_x @ pos
        w = np.zeros(self.n + 1)
        for m in range(self.M):
            w[self.OM[m]], w[self.NU[m]] = 1 - self.c_om * a**2, 1 - self.c_nu * a**2
        W = np.diag(w)
        F = pos + self.T @ pos + W - W @ self.T  # lines 11-12: target(z') + w (momentum - target(z))
        one_minus = np.diag(1.0 - w)
        Qn = one_minus @ (self.Qg + self.Qph) @ one_minus
        if sync:  # nu averaged, omega stays local
            F, Qn = self.avg_nu @ F, self.avg_nu @ Qn @ self.avg_nu.T
        return F, Qn

    def trajectory(self, marks: np.ndarray) -> dict[str, np.ndarray]:
        return _propagate(self.mean0, self.cov0, self.step, self.forms, marks)


class StocBiORecursion:
    """Mean and covariance of (x, y) under StocBiO's Algorithms 1-2 (one client)."""

    def __init__(self, config: RunConfig) -> None:
        pp, k = config.problem_params, _instance(config)
        if pp.get("sigma_J", 0.0) or pp.get("sigma_H", 0.0) or pp.get("start", "zero") != "zero":
            raise ValueError("the StocBiO oracle has additive noise only and starts at zero")
        o = _oracle_maps(k, int(k["Q"]), float(k["tau_N"]))
        assert o["M"] == 1
        p, dy = o["p"], o["dy"]
        n = p + dy
        X, Y = np.arange(p), p + np.arange(dy)
        alpha, beta, D, b, by = float(k["eta"]), float(k["gamma"]), int(k["D"]), int(k["b"]), int(k["by"])
        F, Qn = np.eye(n + 1), np.zeros((n + 1, n + 1))
        gx, gyy, g0 = o["gy"][0]
        inner = np.eye(n + 1)  # one inner step: y <- y - beta grad_y g(x, y; S_t)
        inner[np.ix_(Y, X)] -= beta * gx
        inner[np.ix_(Y, Y)] -= beta * gyy
        inner[Y, -1] -= beta * g0
        noise_y = np.zeros((n + 1, n + 1))
        noise_y[np.ix_(Y, Y)] = beta**2 * o["cov_g"] / by
        for _ in range(D):
            F, Qn = inner @ F, inner @ Qn @ inner.T + noise_y
        hx, hy, h0 = o["ph"][0]
        outer = np.eye(n + 1)  # x_{k+1} = x_k - alpha Phi-hat(x_k, y_k^D)
        outer[np.ix_(X, X)] -= alpha * hx
        outer[np.ix_(X, Y)] -= alpha * hy
        outer[X, -1] -= alpha * h0
        noise_x = np.zeros((n + 1, n + 1))
        noise_x[np.ix_(X, X)] = alpha**2 * o["cov_ph"][0] / b
        self.F, self.Q = outer @ F, outer @ Qn @ outer.T + noise_x
        self.n = n
        _, self.forms = local_forms(k["A"], k["B"], k["c"], k["d"], k["e"], k["rho"], [X], [Y], n)

    def trajectory(self, marks: np.ndarray) -> dict[str, np.ndarray]:
        return _propagate(np.r_[np.zeros(self.n), 1.0], np.zeros((self.n + 1, self.n + 1)),
                          lambda t: (self.F, self.Q), self.forms, marks)


def _oracle(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    if config.algorithm == "stocbio":
        return StocBiORecursion(config).trajectory(marks)
    return AccLocalRecursion(config).trajectory(marks)


STORM = {"b": 2, "b1": 3, "alpha_gain": 0.25, "u_bar": 0.0005, "c_nu": 0.9, "c_om": 1.6, "Q": 3, "tau_N": 0.2,
         "eta": 0.1, "gamma": 0.12, "first_batch": "sampled"}
CASES: dict[str, dict[str, Any]] = {
    "fedbioacc_local": {"steps": {**STORM, "I": 3}, "problem": {}, "T": 45,
                        "what": "M = 3 clients with heterogeneous A_m, B_m (s_H = 0.4, s_B = 0.5), I = 3, b = 2, b_y = bM "
                                "= 6, first batches b1 = 3 and b1 M = 9, c_nu = 0.9 != c_omega = 1.6, Q = 3, tau_N = 0.2",
                        "source": "Algorithm 4; eqs. (5), (6); Theorem 8 (b_y = bM)"},
    "mrbo_like": {"steps": {**STORM, "I": 1}, "problem": {"clients": 1}, "T": 45,
                  "what": "M = 1, b = 2, b1 = 3, c_nu = 0.9 != c_omega = 1.6, Q = 3, tau_N = 0.2",
                  "source": "Algorithm 4 with M = 1; Yang, Ji, Liang 2021 (MRBO) Algorithm 1"},
    "stocbio": {"steps": {"eta": 0.3, "gamma": 0.2, "D": 3, "Q": 2, "tau_N": 0.2, "b": 2, "by": 3},
                "problem": {"clients": 1}, "T": 30,
                "what": "M = 1, D = 3 warm-started inner steps with b_y = 3, Q = 2 Neumann factors at tau_N = 0.2, b = 2",
                "source": "Ji, Yang, Liang 2021 (StocBiO) Algorithms 1-2; eq. (6)"},
}


def _configure(name: str) -> Any:
    case = CASES[name]

    def configure(value: float, profile: Profile) -> RunConfig:  # auto: exact on the box's affine rounds; a
        # change that breaks affinity runs Monte Carlo (16 replicas give its CI) and FAILs instead of refusing (ERROR)
        return RunConfig(name, dict(case["steps"]), FAMILY, {**PROBLEM, **case["problem"]}, int(value), replicas=16,
                         checkpoints=int(value), mode="auto")
    return configure


CLAIMS: tuple[Claim, ...] = tuple(
    trajectory_oracle(
        id=f"fedbio.oracle.{name}_trajectory", paper=KEY,
        title=f"{name}: exact expectations equal a moment recursion written from its algorithm box (Test C2)",
        statement=f"On Test C2 (local lower levels, sigma_f = 0.8, sigma_g = 1.3), {case['what']}: the exact "
                  "E||grad h(x_bar)||^2, E||x_bar - x*||^2 and (1/M) sum_m E||y_m - y_m*(x_bar)||^2 of every iteration "
                  "equal the mean and covariance recursion of the box (proofs/fedbio/oracles_baselines.py).",
        source=src(case["source"], "spec §2.4, §6.3 Test C2, §7"),
        configure=_configure(name), oracle=_oracle, measures=("grad_norm_sq", "dist_sq", "y_err"), rtol=ORACLE_RTOL,
        tolerance_reason="both sides are exact; float64 round-off over the iterations (measured below 1e-12); a batch "
                         "size, a STORM constant, a Neumann term, a sample not reused or a missed average moves it by "
                         ">= 1e-4.",
        grid={"quick": (case["T"],), "full": (case["T"],)})
    for name, case in CASES.items())
