"""StR-FedAvg's constants of the least-squares instances that belong to the paper's proofs, not to the
family (problems/least_squares.py certifies L_f, L_h, G_f2, G_h2, M, ...): Lemma 2's bounded gradient
dissimilarity (G^2, B^2) and its rigorous version (spec strfedavg §3.5), and the fixed point of the
Tikhonov-regularized FedAvg round map (spec TP4.3). Each takes a ``LeastSquares`` problem with a quadratic
outer loss."""

from __future__ import annotations

from typing import Any

import numpy as np


def bgd_constants(problem: Any, eta: float, eta_hat: float | None = None) -> dict[str, float]:
    """Lemma 2 (paper, with eta_hat^2 factors when eta_hat > 1) and the rigorous G^2, B^2 (spec §3.5)."""
    c = problem.constants()
    L_f = c["L_f"].value
    eh = eta if eta_hat is None else eta_hat
    scale = max(eh, 1.0) ** 2
    G2 = scale * (2 * c["G_f2"].value + 4 * L_f * c["M"].value) + 2 * c["G_h2"].value
    return {"G2": G2, "B2": lemma2_B2(problem, eh), **rigorous_bgd(problem, eta)}


def lemma2_B2(problem: Any, eta_hat: float) -> float:
    """B^2 of Lemma 2: max(4 eta_hat L_f, 4 L_h); it does not depend on the run's eta (only on eta_hat)."""
    c = problem.constants()
    return max(4 * eta_hat * c["L_f"].value, 4 * c["L_h"].value)


def rigorous_bgd(problem: Any, eta: float) -> dict[str, float]:
    """G^2_rig = 2(L_h + eta L_f)(f*_eta - mean_i min f_eta,i), B^2_rig = 2(L_h + eta L_f) (quadratic f)."""
    outer = problem.outer
    c = problem.constants()
    Lsum = c["L_h"].value + eta * c["L_f"].value
    s = problem.row_scale
    x_eta = problem.regularized_solution(eta)
    f_eta_star = float(problem.h_value(x_eta) + eta * outer.value(x_eta))
    mins = []
    for i in range(problem.num_clients):
        Hi = s * problem.A[i].T @ problem.A[i] + eta * outer.P
        gi = s * problem.A[i].T @ problem.b[i] + eta * outer.q[i]
        xi = np.linalg.lstsq(Hi, gi, rcond=None)[0]
        ri = problem.A[i] @ xi - problem.b[i]
        mins.append(0.5 * s * ri @ ri + eta * (0.5 * xi @ outer.P @ xi - outer.q[i] @ xi + outer.k[i]))
    return {"G2_rig": 2 * Lsum * (f_eta_star - float(np.mean(mins))), "B2_rig": 2 * Lsum,
            "f_eta_star": f_eta_star}


def fixed_point(problem: Any, eta: float, gamma_local: float, local_steps: int) -> np.ndarray:
    """The deterministic full-participation round map's fixed point (spec TP4.3), quadratic f:
    x_FP = (sum_i P_i H~_i)^{-1} sum_i P_i g~_i, P_i = sum_{j<K} (I - gamma_l H~_i)^j."""
    n = problem.dim
    lhs, rhs = np.zeros((n, n)), np.zeros(n)
    for i in range(problem.num_clients):
        Hi = problem.row_scale * problem.A[i].T @ problem.A[i] + eta * problem.outer.P
        gi = problem.row_scale * problem.A[i].T @ problem.b[i] + eta * problem.outer.q[i]
        step = np.eye(n) - gamma_local * Hi
        Pi, power = np.zeros((n, n)), np.eye(n)
        for _ in range(local_steps):
            Pi += power
            power = power @ step
        lhs += Pi @ Hi
        rhs += Pi @ gi
    return np.linalg.solve(lhs, rhs)
