"""Trajectory oracle of StR-FedAvg (issue #23 item 2): exact expectations of Algorithm 1's output (the
theta-weighted average) and last iterate against a second-moment recursion written from the paper.

Written from ../shared/seeds/001_511a8e816d499631.txt, Algorithm 1 (index typos I1, I2 fixed as in spec
strfedavg §2.1) and Theorem 1's parameters, NOT from ratecheck/algorithms/strfedavg.py: with R the horizon,
gamma_tilde = (mu_f R)^-a, eta = p ln R/(mu_f R)^b, gamma_l = gamma_tilde/(gamma_g K), theta = 1/(1 - eta mu_f
gamma_tilde/2); round r samples S of N clients without replacement, client i runs K steps
y <- y - gamma_l (A_i^T (A_i y - b_i) + zeta + eta (mu (y - c_i) + xi)) (h_i = 1/2||A_i x - b_i||^2, tp1's
f_i = mu/2 ||x - c_i||^2, zeta ~ N(0, sigma_h^2/n I), xi ~ N(0, sigma_f^2/n I)), x^r = x^{r-1} + gamma_g (1/S)
sum_i (y_i,K - x^{r-1}); the output is sum_{r} theta^r x^{r-1} / sum_r theta^r (I3: normalized). Measured:
E[h(x^) - h*] (h - h* = 1/2 (x - x_LS)^T H (x - x_LS)), E||x^ - x*||^2 with x* = Pi(c_bar), the projection of
the outer centre on X*_h (spec §6 TP1), and E||x^R - x*||^2 of the last iterate; x_LS, H, the row space and
x* recomputed here from (A_i, b_i, c_i).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

import numpy as np

from ratecheck.claims import PROFILES, Observation, Profile, observe
from ratecheck.claims.trajectory import moment_trajectory, trajectory_oracle
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig

from .claims import SELECTION_STR, fedavg_h_config
from .theorems import src

KEY = "strfedavg"
# TP1 with an inconsistent global system (delta > 0), a spread row spectrum, heterogeneous centres, both noises
ORACLE_PROBLEM = {"dim": 6, "rank": 3, "clients": 4, "rows": 2, "lam_min": 0.2, "lam_max": 1.0, "delta": 0.3,
                  "outer": "tp1", "mu": 0.5, "rho": 0.5, "sigma_h": 0.6, "sigma_f": 0.4, "seed": 4}
ORACLE_T = 40
ORACLE_STEPS = {"horizon": ORACLE_T, "schedule": "strongly_convex", "p": 1.5, "mu_f": 0.5, "gamma_g": 1.5,
                "local_steps": 3, "participation": "without_replacement:2"}
MEASURES = ("dist_sq", "h_gap", "last_dist_sq")
ORACLE_RTOL = 1e-9  # both exact: float64 round-off over 40 rounds of 13 x 13 maps (measured below 1e-12)


def output_average(theta: float, t: int, n: int, size: int) -> np.ndarray:
    """Round r = t + 1 on a state (x, x-hat, ...): x-hat takes x^{r-1} at weight theta^r (the normalized running
    mean sum_r theta^r x^{r-1} / sum_r theta^r of Algorithm 1's output, I3), everything else unchanged."""
    weights = theta ** np.arange(1, t + 2)
    share = weights[-1] / weights.sum()
    Avg = np.eye(size)
    Avg[n:2 * n, n:2 * n] = (1 - share) * np.eye(n)
    Avg[n:2 * n, :n] = share * np.eye(n)
    return Avg


class StRRecursion:
    """Mean and second moment of v = (x^r, x-hat^r, 1) under Algorithm 1 with Theorem 1's parameters."""

    def __init__(self, config: RunConfig) -> None:
        prob = problem_of(config)
        p, pp = config.params, config.problem_params
        A, b = np.asarray(prob.A), np.asarray(prob.b)
        N, _, n = A.shape
        mu = float(pp["mu"])
        c = np.asarray(prob.outer.q) / mu  # tp1: grad f_i = mu (x - c_i), stored as x P - q_i with P = mu I
        R, K, gg, mu_f = int(p["horizon"]), int(p["local_steps"]), float(p["gamma_g"]), float(p["mu_f"])
        a_exp, b_exp, p_log = 2 / 3, 1 / 3, float(p.get("p", 1.0))  # the defaults a = 2/3, b = 1/3 (spec §2.1)
        if p.get("schedule") == "fixed":  # Tikhonov FedAvg (spec §7): eta and gamma_tilde given
            gt, eta = float(p["gamma_tilde"]), float(p["eta"])
        else:
            gt = (mu_f * R) ** -a_exp
            eta = p_log * math.log(R) / (mu_f * R) ** b_exp
        gl = gt / (gg * K)
        self.theta = 1.0 / (1.0 - eta * mu_f * gt / 2)
        self.R = R
        S = int(str(p["participation"]).split(":")[1])
        var = (float(pp["sigma_h"]) ** 2 + eta**2 * float(pp["sigma_f"]) ** 2) / n
        self.n = n
        nv = 2 * n + 1
        locals_ = []
        for i in range(N):
            G = np.eye(n) - gl * (A[i].T @ A[i] + eta * mu * np.eye(n))
            g0 = gl * (A[i].T @ b[i] + eta * mu * c[i])
            GK = np.linalg.matrix_power(G, K)
            const = sum(np.linalg.matrix_power(G, k) @ g0 for k in range(K))
            cov = gl**2 * var * sum(np.linalg.matrix_power(G, 2 * k) for k in range(K))
            locals_.append((GK, const, cov))
        sets = list(itertools.combinations(range(N), S))
        maps: list[np.ndarray] = []
        self.Q = np.zeros((nv, nv))
        for C in sets:
            F = np.eye(nv)
            mean_G = sum(locals_[i][0] for i in C) / S
            F[:n, :n] = (1 - gg) * np.eye(n) + gg * mean_G
            F[:n, -1] = gg * sum(locals_[i][1] for i in C) / S
            maps.append(F)
            self.Q[:n, :n] += gg**2 * sum(locals_[i][2] for i in C) / S**2 / len(sets)
        self.maps = np.array(maps)
        self.ps = np.full(len(sets), 1.0 / len(sets))
        # closed forms: H, x_LS, the row space V1 and x* = Pi(c_bar)
        H = np.einsum("nki,nkj->ij", A, A) / N
        x_ls = np.linalg.lstsq(A.reshape(-1, n), b.reshape(-1), rcond=None)[0]
        eig, vec = np.linalg.eigh(H)
        V1 = vec[:, eig > 1e-10 * eig.max()]
        c_bar = c.mean(0)
        x_star = c_bar - V1 @ (V1.T @ (c_bar - x_ls))
        root = np.sqrt(np.clip(eig, 0, None) / 2)[:, None] * vec.T  # 1/2 z^T H z = ||root z||^2
        sel = np.eye(nv)
        avg = sel[n:2 * n] - np.outer(x_star, sel[-1])
        self.forms = {"dist_sq": avg, "h_gap": root @ (sel[n:2 * n] - np.outer(x_ls, sel[-1])),
                      "last_dist_sq": sel[:n] - np.outer(x_star, sel[-1])}
        x0 = np.asarray(prob.x0, dtype=float)
        self.v0 = np.concatenate([x0, x0, [1.0]])

    def _maps(self, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # the average reads the OLD x: apply the server map to x only after it
        return np.matmul(self.maps, output_average(self.theta, t, self.n, 2 * self.n + 1)), self.ps, self.Q

    def trajectory(self, marks: np.ndarray) -> dict[str, np.ndarray]:
        return moment_trajectory(self.v0, self._maps, self.forms, marks)


def _oracle(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    return StRRecursion(config).trajectory(marks)


RUNS = {"strfedavg": ORACLE_STEPS,
        "tikhonov_fedavg": {**{k: v for k, v in ORACLE_STEPS.items() if k != "p"}, "schedule": "fixed", "eta": 0.3,
                            "gamma_tilde": 0.15}}


def oracle_configure(algorithm: str):
    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(algorithm, dict(RUNS[algorithm]), "least_squares", dict(ORACLE_PROBLEM), int(value),
                         replicas=1, checkpoints=int(value), mode="exact")
    return configure


oracle_config = oracle_configure("strfedavg")


ORACLE = trajectory_oracle(
    id="strfedavg.oracle.strfedavg_trajectory", paper=KEY,
    title="strfedavg: exact expectations of the output and last iterate equal Algorithm 1's moment recursion",
    statement="StR-FedAvg with S = 2 of N = 4 clients without replacement, K = 3, gamma_g = 1.5, Theorem 1's "
              "schedule at R = 40 (mu_f = 0.5, p = 1.5) on TP1 with an inconsistent system (delta = 0.3), row "
              "spectrum 0.2..1, heterogeneous centres (rho = 0.5), sigma_h = 0.6, sigma_f = 0.4: the exact "
              "E||x^ - x*||^2 and E[h(x^) - h*] of the theta-weighted output and E||x^r - x*||^2 of the last iterate "
              "equal the recursion of Algorithm 1 over the 6 client sets (proofs/strfedavg/oracles.py).",
    source=src("Algorithm 1 (I1, I2 fixed), Theorem 1's gamma_tilde, eta, theta", "spec §2.1, §6 TP1"),
    configure=oracle_config, oracle=_oracle, measures=MEASURES, rtol=ORACLE_RTOL,
    tolerance_reason="both sides are exact; the gap is float64 round-off over 40 rounds (measured < 1e-12); a "
                     "wrong theta weight, eta, gamma_l, server step or noise scale moves it by >= 1e-3.",
    grid={"quick": (ORACLE_T,), "full": (ORACLE_T,)})

TIKHONOV = trajectory_oracle(
    id="strfedavg.oracle.tikhonov_fedavg_trajectory", paper=KEY,
    title="tikhonov_fedavg: exact expectations equal Algorithm 1's moment recursion at a fixed eta and step",
    statement="Tikhonov FedAvg (Algorithm 1 with eta = 0.3 and gamma_tilde = 0.15 fixed, theta from them) on the "
              "instance of strfedavg.oracle.strfedavg_trajectory: the output's and the last iterate's exact moments "
              "equal the recursion (proofs/strfedavg/oracles.py).",
    source=src("Algorithm 1 with a fixed eta (sequential regularization, ref. [33])", "spec §7"),
    configure=oracle_configure("tikhonov_fedavg"), oracle=_oracle, measures=MEASURES, rtol=ORACLE_RTOL,
    tolerance_reason="both sides are exact: float64 round-off over 40 rounds (measured < 1e-13).",
    grid={"quick": (ORACLE_T,), "full": (ORACLE_T,)})



PROFILES_QUICK = PROFILES["quick"]


def _selection_margin(points, evidence) -> dict[str, float]:
    """How close the output came, against the gap between the two limits and the limit claim's allowance."""
    prob = problem_of(fedavg_h_config(points[0].value, PROFILES_QUICK))
    gap = float(np.linalg.norm(prob.project(prob.x0) - prob.x_star))
    distance = float(points[0].stats["distance"])
    return {"distance": distance, "gap_Pi_x0_to_x_star": gap, "distance_over_gap": distance / gap,
            "allowance": SELECTION_STR.tolerance, "distance_over_allowance": distance / SELECTION_STR.tolerance}


# Issue #23: the selection claim's allowance (a quarter of ||Pi(x0) - x*||, 1.448) is a discrimination between
# the two limits (its negative control, FedAvg on h, sits at the other end), not a closeness check: the
# distance measured (0.566 at R = 3200, about a tenth of the gap) is reported here rather than squeezed into a
# tolerance tuned to it. The trajectory oracles above check the algorithm's numbers at round-off.
@dataclass(frozen=True, kw_only=True)
class LimitObservation(Observation):
    """An observation on a limit claim's runs, drawn as that claim (its view reads the point and the target)."""

    point: str = "x"
    target_name: str = "x*"


_margin = observe(
    SELECTION_STR, id="strfedavg.selection.strfedavg_margin",
    title="Selection: how close StR-FedAvg's output comes to x* (distance against the gap ||Pi(x0) - x*|| and the "
          "limit claim's allowance)",
    quantity="the output's distance to x* at R = 3200, the gap to FedAvg's limit Pi(x0), and their ratios",
    compute=_selection_margin)
SELECTION_MARGIN = LimitObservation(**{f.name: getattr(_margin, f.name) for f in dataclasses.fields(_margin)},
                                    point=SELECTION_STR.point, target_name=SELECTION_STR.target_name)

CLAIMS = (ORACLE, TIKHONOV, SELECTION_MARGIN)
