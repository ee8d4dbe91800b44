"""Trajectory oracles of FESS-GDA's variants and baselines (issue #23 item 2): the role swap, the two-phase
translation, FedGDA-GT and Smoothed-AGDA, each against a second-moment recursion written from its algorithm box,
NOT from ratecheck/algorithms/minimax.py. All run on (a1) of spec §6.1 (f_i = 1/2 x'A_i x + x'By - 1/2 y'Cy +
b_i'x - c_i'y, A_i = A + diag(spread_i), one sample xi ~ N(0, s^2 I) per gradient call) in the field form
w = (x, y), F_i(w) = J_i w + v_i with J_i = [[A_i, B], [-B', C]], v_i = (b_i, c_i): a descent step on x and an
ascent step on y are w <- w - Lam (F_i(w) + n), Lam = diag(eta_x I, eta_y I), n ~ N(0, s^2 I).

* fess_gda_swapped (spec §2.4(C), Theorem 3.5's case mu1 < mu2): Algorithm 1 of
  ../shared/seeds/004_57c332141565532a.txt run on g(y, x) = -f(x, y), so y is the minimization variable: the
  local steps are FESS-GDA's (the same field), the smoothing - eta_{y,l} eta_{y,g} K p (y_t - z_t) is applied
  once at the server to y, z follows the NEW y, z_0 = y_0.
* fess_gda_two_phase (Proposition 3.1 / Corollary 3.1, Appendix J; spec §2.4(B)): T1 rounds of Algorithm 1, then
  x~ = x_{T1} and Algorithm 1 with p = 0 and the phase-2 steps on f~_i = f_i + l ||x - x~||^2 (the anchor's
  gradient 2 l (x - x~), exact), l = max_i ||Hessian of f_i||_2 (Assumption 2.1) recomputed here.
* fedgda_gt (Sun & Wei 2022, FedGDA-GT; spec §7): every client's direction is tracked, F_i(w) - F_i(w_t) + F(w_t)
  with F(w_t) the mean over all M clients (full participation, global steps 1, p = 0); stochastic here: each
  gradient evaluation (the round-start ones included) has its own sample, so the correction carries the
  round-start noise mean_j n_j0 - n_i0, correlated across clients.
* smoothed_agda (Zhang et al. 2020; stochastic: Yang et al. 2022b; spec §7), centralized and alternating:
  x+ = x - tau1 (grad_x f(x, y) + p (x - z) + n1), y+ = y + tau2 (grad_y f(x+, y) + n2), z+ = z + beta (x+ - z),
  the stochastic gradient of f = mean_i f_i being the mean of the M clients' (n1, n2 ~ N(0, s^2/M I), independent).

Measures as proofs/fessgda/oracles.py: ||grad_x f||^2, ||grad_y f||^2 (Y = R^d2) and W = 2 Phi - f - Phi*.
"""

from __future__ import annotations

import itertools

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.trajectory import moment_trajectory, trajectory_oracle
from ratecheck.inspection import problem_of
from ratecheck.trace import RunConfig

from .oracles import ORACLE_PROBLEM, ORACLE_STEPS, ORACLE_T
from .theorems import KEY, src

MEASURES = ("stat_sq", "grad_x_sq", "grad_y_sq", "W")
ORACLE_RTOL = 1e-9  # both exact: float64 round-off over 40 rounds of small maps (measured below 1e-12)


class Instance:
    """(a1)'s data in the field form, and the state layout v = (x, y, z, x~, 1)."""

    def __init__(self, config: RunConfig, smoothed: str = "x") -> None:
        prob = problem_of(config)
        self.A, self.B, self.C = (np.asarray(getattr(prob, k), float) for k in "ABC")
        self.v = np.asarray(prob.offsets, float)  # (M, d1 + d2): (b_i, c_i)
        spread = np.asarray(prob.spread, float)
        self.M, self.d1 = spread.shape
        self.d2 = self.C.shape[0]
        d1, d2 = self.d1, self.d2
        self.J = np.array([np.block([[self.A + np.diag(r), self.B], [-self.B.T, self.C]]) for r in spread])
        self.s = float(config.problem_params["noise"])
        dz = d1 if smoothed == "x" else d2
        self.X, self.Y = np.arange(d1), d1 + np.arange(d2)
        self.Z = d1 + d2 + np.arange(dz)
        self.Anc = d1 + d2 + dz + np.arange(d1)
        self.W = np.concatenate([self.X, self.Y])
        self.n = d1 + d2 + dz + d1 + 1
        x0, y0 = np.asarray(prob.x0, float), np.asarray(prob.y0, float)
        self.v0 = np.concatenate([x0, y0, x0 if smoothed == "x" else y0, x0, [1.0]])
        # Assumption 2.1 per client: l = max_i ||[[A_i, B], [B', -C]]||_2
        self.l = max(float(np.linalg.norm(np.block([[self.A + np.diag(r), self.B], [self.B.T, -self.C]]), 2)) for r in spread)

    def forms(self) -> dict[str, np.ndarray]:
        sel = np.eye(self.n)
        A, B, C = self.A, self.B, self.C
        gx, gy = A @ sel[self.X] + B @ sel[self.Y], B.T @ sel[self.X] - C @ sel[self.Y]
        S = A + B @ np.linalg.solve(C, B.T)
        root = np.linalg.cholesky(0.5 * np.block([[2 * S - A, -B], [-B.T, C]])).T  # W = 1/2 w'Qw (Appendix I)
        return {"stat_sq": np.vstack([gx, gy]), "grad_x_sq": gx, "grad_y_sq": gy, "W": root @ sel[self.W]}

    def local(self, i: int, eta_x: float, eta_y: float, K: int, anchor: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """K simultaneous local steps of client i from (x_t, y_t) as a map of v (rows X, Y move; the rest fixed):
        w <- w - Lam (F_i(w) + [2 anchor (x - x~), 0] + n). Returns (G^K, noise covariance)."""
        lam = np.r_[np.full(self.d1, eta_x), np.full(self.d2, eta_y)]
        G = np.eye(self.n)
        G[np.ix_(self.W, self.W)] -= lam[:, None] * self.J[i]
        G[self.W, -1] -= lam * self.v[i]
        G[self.X, self.X] -= eta_x * 2 * anchor
        G[self.X, self.Anc] += eta_x * 2 * anchor
        Lam = np.zeros((self.n, self.d1 + self.d2))
        Lam[self.W, np.arange(self.d1 + self.d2)] = lam
        powers = [np.linalg.matrix_power(G, k) for k in range(K)]
        cov = self.s**2 * sum(P @ Lam @ Lam.T @ P.T for P in powers)
        return np.linalg.matrix_power(G, K), cov

    def fess_round(self, p: dict, m: int, smoothed: str = "x", anchor: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Algorithm 1 lines 2-15 over every m-subset: average, global steps, the smoothing once at the server with
        the round-start point (on x, or on y after the role swap), z following the NEW smoothed variable."""
        exl, eyl, exg, eyg = (float(p[k]) for k in ("eta_x_local", "eta_y_local", "eta_x_global", "eta_y_global"))
        K, sp, beta = int(p["local_steps"]), float(p["p"]), float(p["beta"])
        locals_ = [self.local(i, exl, eyl, K, anchor) for i in range(self.M)]
        I = np.eye(self.n)
        S_rows = self.X if smoothed == "x" else self.Y
        coef = (exl * exg if smoothed == "x" else eyl * eyg) * K * sp
        maps, Q = [], np.zeros((self.n, self.n))
        sets = list(itertools.combinations(range(self.M), m))
        for C in sets:
            U = np.sum([locals_[i][0] for i in C], axis=0) / m  # the mean local model as a map of v
            F = I.copy()
            F[self.X] = (1 - exg) * I[self.X] + exg * U[self.X]
            F[self.Y] = (1 - eyg) * I[self.Y] + eyg * U[self.Y]
            F[S_rows] -= coef * (I[S_rows] - I[self.Z])
            F[self.Z] = (1 - beta) * I[self.Z] + beta * F[S_rows]
            maps.append(F)
            out = np.zeros((self.n, self.n))  # how the mean local noise enters the new state
            out[self.X, self.X], out[self.Y, self.Y] = exg, eyg
            out[self.Z, S_rows] = beta * (exg if smoothed == "x" else eyg)
            Q += out @ (sum(locals_[i][1] for i in C) / m**2) @ out.T / len(sets)
        return np.array(maps), np.full(len(sets), 1.0 / len(sets)), Q


def _participants(p: dict, M: int) -> int:
    _, _, count = str(p.get("participation", "full")).partition(":")
    return int(count) if count else M


def swapped_trajectory(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    inst = Instance(config, smoothed="y")
    round_ = inst.fess_round(dict(config.params), _participants(dict(config.params), inst.M), smoothed="y")
    return moment_trajectory(inst.v0, lambda t: round_, inst.forms(), marks)


def two_phase_trajectory(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    inst = Instance(config)
    p = dict(config.params)
    m, T1 = _participants(p, inst.M), int(p["phase1_rounds"])
    phase1 = inst.fess_round(p, m)
    second = {**p, "p": 0.0, **{k: p[f"{k}_2"] for k in ("eta_x_local", "eta_y_local", "eta_x_global",
                                                          "eta_y_global", "local_steps")}}
    weight = float(p.get("anchor_weight") or 0.0) or inst.l  # the paper's f~ = f + l ||x - x~||^2
    phase2 = inst.fess_round(second, m, anchor=weight)
    switch = np.eye(inst.n)  # x~ = x_{T1}, set before the first phase-2 round
    switch[inst.Anc] = 0.0
    switch[inst.Anc, inst.X] = 1.0
    at_switch = (np.matmul(phase2[0], switch), phase2[1], phase2[2])
    return moment_trajectory(inst.v0, lambda t: phase1 if t < T1 else at_switch if t == T1 else phase2,
                             inst.forms(), marks)


def fedgda_gt_trajectory(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    """w' = (1/M) sum_i u_K^i, u <- u - Lam (F_i(u) - F_i(w_t) + F(w_t) + noise), every F evaluated with its own
    sample; the correction is constant over the K steps."""
    inst = Instance(config)
    p = dict(config.params)
    eta_x, eta_y, K = float(p["eta_x_local"]), float(p["eta_y_local"]), int(p["local_steps"])
    M, dw = inst.M, inst.d1 + inst.d2
    lam = np.diag(np.r_[np.full(inst.d1, eta_x), np.full(inst.d2, eta_y)])
    J_bar, v_bar = inst.J.mean(0), inst.v.mean(0)
    mean = np.zeros((dw + 1, dw + 1))
    mean[-1, -1] = 1.0
    Sk_lam, noise = [], np.zeros((dw, dw))
    for i in range(M):
        G = np.eye(dw) - lam @ inst.J[i]
        powers = [np.linalg.matrix_power(G, k) for k in range(K)]
        Sk = sum(powers)
        # u_K = G^K w + Sk (-Lam v_i - Lam ((J_bar - J_i) w + v_bar - v_i)) - sum_k G^(K-1-k) Lam n_k
        mean[:dw, :dw] += (np.linalg.matrix_power(G, K) - Sk @ lam @ (J_bar - inst.J[i])) / M
        mean[:dw, -1] += -Sk @ lam @ v_bar / M
        noise += inst.s**2 * sum(P @ lam @ lam @ P.T for P in powers) / M**2
        Sk_lam.append(Sk @ lam)
    mean_Sk_lam = sum(Sk_lam) / M
    for j in range(M):  # the round-start sample n_j0 enters every correction: -(1/M) sum_i Sk_i Lam (n_bar0 - n_i0)
        Cj = -(mean_Sk_lam / M - Sk_lam[j] / M)
        noise += inst.s**2 * Cj @ Cj.T
    # embed in the layout (x, y, z, x~, 1): z and x~ play no part (p = 0)
    F = np.eye(inst.n)
    idx = np.r_[inst.W, inst.n - 1]
    F[np.ix_(idx, idx)] = mean
    Q = np.zeros((inst.n, inst.n))
    Q[np.ix_(inst.W, inst.W)] = noise
    return moment_trajectory(inst.v0, lambda t: (F[None], np.ones(1), Q), inst.forms(), marks)


def smoothed_agda_trajectory(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    """x+ = x - tau1 (A x + B y + b_bar + p (x - z) + n1); y+ = y + tau2 (B'x+ - C y - c_bar + n2); z+ = z + beta (x+ - z)."""
    inst = Instance(config)
    p = dict(config.params)
    t1, t2, sp, beta = float(p["eta_x_local"]), float(p["eta_y_local"]), float(p["p"]), float(p["beta"])
    A, B, C = inst.A, inst.B, inst.C
    b_bar, c_bar = inst.v.mean(0)[:inst.d1], inst.v.mean(0)[inst.d1:]
    X, Y, Z = inst.X, inst.Y, inst.Z
    I = np.eye(inst.n)
    Fx = I.copy()  # the x-step (z, y fixed)
    Fx[X] = I[X] - t1 * (A @ I[X] + B @ I[Y] + sp * (I[X] - I[Z]))
    Fx[X, -1] -= t1 * b_bar
    Fy = I.copy()  # the y-step at the new x
    Fy[Y] = I[Y] + t2 * (B.T @ I[X] - C @ I[Y])
    Fy[Y, -1] -= t2 * c_bar
    Fz = I.copy()
    Fz[Z] = (1 - beta) * I[Z] + beta * I[X]
    F = Fz @ Fy @ Fx
    var = inst.s**2 / inst.M  # the mean of M clients' samples
    Ex = np.zeros((inst.n, inst.d1))  # n1 enters x, then y (through B'x+) and z
    Ex[X] = -t1 * np.eye(inst.d1)
    Ey = np.zeros((inst.n, inst.d2))
    Ey[Y] = t2 * np.eye(inst.d2)
    Lx = Fz @ Fy @ Ex
    Ly = Fz @ Ey
    Q = var * (Lx @ Lx.T + Ly @ Ly.T)
    return moment_trajectory(inst.v0, lambda t: (F[None], np.ones(1), Q), inst.forms(), marks)


# ------------------------------------------------------------------------------------------------
# Instances and claims: the instance of fessgda.oracle.fess_gda_trajectory (a1 with per-client curvature,
# heterogeneous offsets, asymmetric spectra, noise s = 0.6)

RUNS = {
    "fess_gda_swapped": ORACLE_STEPS,
    "fess_gda_two_phase": {**ORACLE_STEPS, "phase1_rounds": 15, "eta_x_local_2": 0.1, "eta_y_local_2": 0.07,
                           "eta_x_global_2": 1.2, "eta_y_global_2": 0.9, "local_steps_2": 2},
    "fedgda_gt": {"eta_x_local": 0.12, "eta_y_local": 0.09, "local_steps": 3, "participation": "full"},
    "smoothed_agda": {"eta_x_local": 0.3, "eta_y_local": 0.2, "p": 0.7, "beta": 0.3, "participation": "full"},
}
ORACLES = {"fess_gda_swapped": swapped_trajectory, "fess_gda_two_phase": two_phase_trajectory,
           "fedgda_gt": fedgda_gt_trajectory, "smoothed_agda": smoothed_agda_trajectory}


def oracle_configure(algorithm: str):
    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(algorithm, dict(RUNS[algorithm]), "minimax", dict(ORACLE_PROBLEM), int(value), replicas=1,
                         checkpoints=int(value), mode="exact")
    return configure


WHAT = {
    "fess_gda_swapped": ("Algorithm 1 on g(y, x) = -f(x, y) (the role swap of Theorem 3.5's case mu1 < mu2) with the "
                         "steps and sampling of fessgda.oracle.fess_gda_trajectory: the smoothing p = 0.7 once at the "
                         "server on y, z (beta = 0.3) following the new y from z_0 = y_0",
                         src("Theorem 3.5 / Appendix I, case mu1 < mu2: Algorithm 1 on -f(y, x)", "spec §2.4(C)")),
    "fess_gda_two_phase": ("Proposition 3.1's two phases: 15 rounds of FESS-GDA as in fessgda.oracle.fess_gda_trajectory, "
                           "then x~ = x_15 and FSGDA (p = 0) with local steps 0.1, 0.07, global steps 1.2, 0.9, K = 2 on "
                           "f_i + l ||x - x~||^2 (l = max_i ||Hessian of f_i||, recomputed), 2 of 4 clients",
                           src("Proposition 3.1, Corollary 3.1, Appendix J", "spec §2.4(B)")),
    "fedgda_gt": ("FedGDA-GT (Sun & Wei 2022) with local steps 0.12, 0.09, K = 3, all 4 clients, each gradient with its "
                  "own sample (the round-start ones too)",
                  src("FedGDA-GT (Sun & Wei 2022; not compared in the paper)", "spec §7")),
    "smoothed_agda": ("Smoothed-AGDA (Zhang et al. 2020, Yang et al. 2022b): tau1 = 0.3, tau2 = 0.2, p = 0.7, "
                      "beta = 0.3, alternating, the stochastic gradient the mean of the 4 clients'",
                      src("Smoothed-AGDA (Zhang et al. 2020; Yang et al. 2022b), cited in Table 1", "spec §7")),
}

CLAIMS = tuple(trajectory_oracle(
    id=f"fessgda.oracle.{name}_trajectory", paper=KEY,
    title=f"{name}: exact expectations equal its algorithm box's moment recursion",
    statement=f"{what}, on (a1) with per-client curvature (spread 0.2), heterogeneous offsets (zeta = 0.8), spectra "
              "a = (1, 0.6, 0.35), c = (0.9, 0.5, 0.3), noise s = 0.6: the exact E||grad f||^2 (both blocks) and E W of "
              "every round equal the recursion (proofs/fessgda/oracles_variants.py).",
    source=source, configure=oracle_configure(name), oracle=ORACLES[name], measures=MEASURES, rtol=ORACLE_RTOL,
    tolerance_reason="both sides are exact: float64 round-off over 40 rounds (measured < 1e-12); a smoothing term on "
                     "the wrong variable, a stale anchor, a missing correction or a wrong noise average moves it by "
                     ">= 1e-4.",
    grid={"quick": (ORACLE_T,), "full": (ORACLE_T,)}) for name, (what, source) in WHAT.items())
