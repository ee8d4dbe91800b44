"""Replay oracles of FESS-GDA's Monte-Carlo path (issue #23 item 2): a noise-free Monte-Carlo run (s = 0) against
Algorithm 1 of ../shared/seeds/004_57c332141565532a.txt replayed with the run's own client draws (every replica at
once: replicas and clients are array axes).

The exact-mode oracles (proofs/fessgda/oracles.py, oracles_variants.py) check the expectations through exact mode,
which refuses a round that is not affine in the state: a step divided by a gradient, say, ends in an ERROR there,
not in a FAIL. A noise-free run takes the Monte-Carlo path, whatever the round computes, and is deterministic given
its client sets, so the replay sees such a bug as a wrong number. The one thing shared with the code is the
primitive draw of the 'sampling' stream (M uniform keys a round, the m smallest chosen: a uniform m-subset without
replacement, as Algorithm 1 line 2 samples); everything computed from the sets is written from the boxes here:

* fess_gda (Algorithm 1): each sampled client runs K simultaneous GDA steps w <- w - Lam F_i(w) from (x_t, y_t)
  (lines 5-9; Y = R^d2, so the projection is the identity); x_{t+1} = x_t + eta_{x,g} (mean_i x_i - x_t) -
  eta_{x,l} eta_{x,g} K p (x_t - z_t), y_{t+1} = y_t + eta_{y,g} (mean_i y_i - y_t), z_{t+1} = z_t + beta (x_{t+1} -
  z_t) (lines 12-15), z_0 = x_0.
* fess_gda_two_phase (Proposition 3.1, Appendix J; spec §2.4(B)): T1 rounds of Algorithm 1, then x~ = x_{T1} and
  Algorithm 1 with p = 0 and the phase-2 steps on f_i + l ||x - x~||^2 (its gradient 2 l (x - x~)).
* smoothed_agda (Zhang et al. 2020; Yang et al. 2022b; spec §7): x+ = x - tau1 (grad_x f(x, y) + p (x - z)),
  y+ = y + tau2 grad_y f(x+, y), z+ = z + beta (x+ - z), f the mean of the M clients.

The instance is (a1) of spec §6.1 as in oracles_variants.Instance (the field form F_i(w) = J_i w + v_i, its data read
from the problem's matrices A, B, C, spread and offsets), with s = 0; measures as the exact oracles.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.costs import sampled_clients, sampling_rule
from ratecheck.claims.trajectory import UNBOUNDED, trajectory_deviation, trajectory_oracle
from ratecheck.trace import RunConfig, Trace

from .oracles import ORACLE_PROBLEM, ORACLE_STEPS
from .oracles_variants import MEASURES, RUNS, Instance
from .theorems import KEY, src

REPLAY_T = 24
REPLAY_REPLICAS = 4
REPLAY_RTOL = 1e-9  # deterministic given the draws: float64 round-off over 24 rounds (measured below 1e-13)
PROBLEM = {**ORACLE_PROBLEM, "noise": 0.0}
STEPS = {"fess_gda": ORACLE_STEPS, "fess_gda_two_phase": {**RUNS["fess_gda_two_phase"], "phase1_rounds": 10},
         "smoothed_agda": RUNS["smoothed_agda"]}


class Replay:
    """One replica set of a noise-free run, state v = (x, y, z, x~, 1) per replica (rows), in Instance's layout."""

    def __init__(self, config: RunConfig) -> None:
        if float(config.problem_params["noise"]):
            raise ValueError("the replay is noise-free: the problem's noise s must be 0")
        self.inst = Instance(config)
        self.R = int(config.replicas)
        self.v = np.tile(self.inst.v0, (self.R, 1))
        mode, _ = sampling_rule(str(config.params.get("participation", "full")))
        if mode == "with_replacement":  # the boxes draw m distinct clients
            raise ValueError(f"the replay draws clients without replacement, got {config.params['participation']!r}")
        self.draws = iter(sampled_clients(config))  # (R, m) a round: the kit's replay of the 'sampling' stream

    def clients(self) -> np.ndarray:
        """(R, m): each replica's client set this round (ratecheck.claims.costs.sampled_clients: all M, or the m
        smallest of M uniform keys, Algorithm 1 line 2)."""
        return next(self.draws)

    def field(self, chosen: np.ndarray, w: np.ndarray, anchor_weight: float, anchor: np.ndarray) -> np.ndarray:
        """F_i(w) of the clients ``chosen`` (R, m) at w (R, m, d1 + d2), a descent step on x and an ascent step on
        y, plus the anchor's 2 weight (x - x~) on x (anchor (R, d1), each replica's)."""
        out = (self.inst.J[chosen] @ w[..., None])[..., 0] + self.inst.v[chosen]
        out[..., : self.inst.d1] += 2 * anchor_weight * (w[..., : self.inst.d1] - anchor[:, None])
        return out

    def fess_round(self, p: dict, anchor_weight: float = 0.0) -> None:
        """Algorithm 1 lines 2-15, every replica and sampled client at once."""
        inst, d1, v = self.inst, self.inst.d1, self.v
        exl, eyl, exg, eyg = (float(p[k]) for k in ("eta_x_local", "eta_y_local", "eta_x_global", "eta_y_global"))
        K, sp, beta = int(p["local_steps"]), float(p["p"]), float(p["beta"])
        lam = np.r_[np.full(d1, exl), np.full(inst.d2, eyl)]
        chosen = self.clients()
        w0, z, anchor = v[:, inst.W], v[:, inst.Z], v[:, inst.Anc]
        w = np.repeat(w0[:, None], chosen.shape[1], axis=1)  # every sampled client starts from (x_t, y_t)
        for _ in range(K):
            w = w - lam * self.field(chosen, w, anchor_weight, anchor)
        mean = np.mean(w, axis=1)
        x, y = w0[:, :d1], w0[:, d1:]
        x_new = x + exg * (mean[:, :d1] - x) - exl * exg * K * sp * (x - z)
        v[:, inst.X], v[:, inst.Y] = x_new, y + eyg * (mean[:, d1:] - y)
        v[:, inst.Z] = z + beta * (x_new - z)

    def smoothed_agda_round(self, p: dict) -> None:
        inst, d1, v = self.inst, self.inst.d1, self.v
        t1, t2, sp, beta = (float(p[k]) for k in ("eta_x_local", "eta_y_local", "p", "beta"))
        J, c = inst.J.mean(0), inst.v.mean(0)  # F = mean_i F_i
        x, y, z = v[:, inst.X], v[:, inst.Y], v[:, inst.Z]
        x_new = x - t1 * ((v[:, inst.W] @ J.T + c)[:, :d1] + sp * (x - z))
        y_new = y - t2 * (np.hstack([x_new, y]) @ J.T + c)[:, d1:]  # F's y-part is -grad_y f: an ascent step
        v[:, inst.X], v[:, inst.Y], v[:, inst.Z] = x_new, y_new, z + beta * (x_new - z)

    def measures(self) -> dict[str, np.ndarray]:
        return {name: np.sum((self.v @ L.T) ** 2, axis=1) for name, L in self.inst.forms().items()}


def replay(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    """Per replica (C, R): the measures of the run of ``config`` replayed from its boxes (see the module)."""
    run = Replay(config)
    p = dict(config.params)
    T1 = int(p.get("phase1_rounds", 0))
    phase2 = {**p, "p": 0.0, **{k: p[f"{k}_2"] for k in ("eta_x_local", "eta_y_local", "eta_x_global", "eta_y_global",
                                                          "local_steps") if f"{k}_2" in p}}
    weight = float(p.get("anchor_weight") or 0.0) or run.inst.l  # the paper's f~ = f + l ||x - x~||^2
    want = {int(t): j for j, t in enumerate(marks)}
    out = {name: np.full((len(marks), run.R), np.nan) for name in MEASURES}
    last = int(max(marks))
    for t in range(last + 1):
        if t in want:
            for name, value in run.measures().items():
                out[name][want[t]] = value
        if t == last:  # no round after the last checkpoint (the run drew none)
            break
        if config.algorithm == "smoothed_agda":
            run.smoothed_agda_round(p)
        elif config.algorithm == "fess_gda_two_phase" and t >= T1:
            if t == T1:
                run.v[:, run.inst.Anc] = run.v[:, run.inst.X]  # x~ = x_{T1}
            run.fess_round(phase2, anchor_weight=weight)
        else:
            run.fess_round(p)
    return out


def replay_deviation(config: RunConfig, trace: Trace) -> np.ndarray:
    """Per replica, the largest relative deviation of the run from the replay; a non-finite one as UNBOUNDED."""
    worst = trajectory_deviation(replay)(config, trace)
    return np.where(np.isfinite(worst), worst, UNBOUNDED)


def replay_configure(algorithm: str):
    def configure(value: float, profile: Profile) -> RunConfig:
        return RunConfig(algorithm, dict(STEPS[algorithm]), "minimax", dict(PROBLEM), int(value), replicas=REPLAY_REPLICAS,
                         checkpoints=int(value))
    return configure


WHAT = {
    "fess_gda": ("FESS-GDA with local steps 0.12, 0.09, global steps 0.8, 1.3, K = 3, p = 0.7, beta = 0.3, 2 of 4 "
                 "clients without replacement", src("Algorithm 1 (lines 2-15)", "spec §2.1")),
    "fess_gda_two_phase": ("Proposition 3.1's two phases: 10 rounds of FESS-GDA as fessgda.oracle.fess_gda_replay, then "
                           "x~ = x_10 and FSGDA (p = 0) with local steps 0.1, 0.07, global steps 1.2, 0.9, K = 2 on "
                           "f_i + l ||x - x~||^2 (l recomputed), 2 of 4 clients",
                           src("Proposition 3.1, Corollary 3.1, Appendix J", "spec §2.4(B)")),
    "smoothed_agda": ("Smoothed-AGDA (tau1 = 0.3, tau2 = 0.2, p = 0.7, beta = 0.3, alternating) on the mean of the 4 "
                      "clients", src("Smoothed-AGDA (Zhang et al. 2020; Yang et al. 2022b)", "spec §7")),
}

CLAIMS = tuple(
    dataclasses.replace(trajectory_oracle(
        id=f"fessgda.oracle.{name}_replay", paper=KEY,
        title=f"{name}: a noise-free Monte-Carlo run equals its algorithm box replayed with the run's own client draws",
        statement=f"{what} on the instance of fessgda.oracle.fess_gda_trajectory with s = 0 (a1: per-client curvature, "
                  "heterogeneous offsets, asymmetric spectra), run by the algorithm in Monte Carlo, replica by "
                  "replica: the box replayed with each round's clients taken from the run's 'sampling' Generator "
                  "(the m smallest of M uniform keys) gives every checkpoint's measures "
                  "(proofs/fessgda/oracles_replay.py).",
        source=source, configure=replay_configure(name), oracle=replay, measures=MEASURES, rtol=REPLAY_RTOL,
        tolerance_reason="deterministic given the client sets: float64 round-off over 24 rounds (measured below "
                         "1e-13); a step not affine in the state (which exact mode refuses, an ERROR), a wrong step, "
                         "average or smoothing changes some replica by >= 1e-3.",
        grid={"quick": (REPLAY_T,), "full": (REPLAY_T,)}), summary=replay_deviation)
    for name, (what, source) in WHAT.items())
