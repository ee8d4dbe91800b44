"""A replay oracle of FESS-GDA on a constrained Y (issue #23, held-out bug: the local projection dropped): a
noise-free Monte-Carlo run (s = 0) against Algorithm 1 of ../shared/seeds/004_57c332141565532a.txt replayed with
the run's own client draws, on the point-wise maximum over the simplex (spec §6.4 (c)), where projecting y onto Y
after a local step moves it at nearly every step.

The replays of oracles_replay.py and the exact oracles run on Y = R^d2, where P_Y is the identity: a client that
skips line 8's projection (only the server projecting, line 14) is seen by none of them. Here every projection is
written from its definition, independently of ratecheck.model.projections, and every gradient from spec §6.4:

* f_i(x, y) = sum_j y_j h_j^(i)(x), x in R^2, y in the simplex of R^4, h_j = -cos x_1 - cos x_2 + r <u_j, x> with
  u_j = (cos 2 pi j/3, sin 2 pi j/3) (j <= 3), h_4 = -cos x_1 - cos x_2 - c0, and the client term
  h_j^(i) = h_j + zeta sum_c sin(omega x_c + theta_i + j), theta_i = 2 pi i / M for the client of index i (the
  run's labels 0..M-1). grad_x f_i = sum_j y_j grad h_j^(i)(x), grad_y f_i = (h_j^(i)(x))_j.
* Algorithm 1: each sampled client runs K simultaneous GDA steps from (x_t, y_t), x <- x - eta_{x,l} grad_x f_i,
  y <- P_Y(y + eta_{y,l} grad_y f_i) (lines 5-9); x_{t+1} = x_t + eta_{x,g} (mean_i x_i - x_t) - eta_{x,l}
  eta_{x,g} K p (x_t - z_t), y_{t+1} = P_Y(y_t + eta_{y,g} (mean_i y_i - y_t)), z_{t+1} = z_t + beta (x_{t+1} - z_t)
  (lines 12-15), z_0 = x_0.
* P_Y, the Euclidean projection onto {y >= 0, sum y = 1}: y - tau clipped at 0, tau = (sum of the k largest - 1)/k
  for the largest k whose k-th largest coordinate exceeds that threshold (the sort algorithm; the set of such k
  is an initial segment, so k is their count).
* Measures (spec §6.4, Def 2.1): grad_x f = sum_j y_j (sin x + r u_j) (the client terms cancel over i),
  ||.||^2; the y-measure l^2 ||P_Y(y + h(x)/l) - y||^2 with the problem's constant l (a number of the family, not
  under test); Phi(x) - Phi* = max_j h_j(x) + 2; ||x||^2.

The one thing shared with the code is the primitive draw of the 'sampling' stream, as in oracles_replay.py: M
uniform keys a round, the m smallest chosen (a uniform m-subset without replacement, Algorithm 1 line 2).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ratecheck.claims import Profile
from ratecheck.claims.costs import sampled_clients, sampling_rule
from ratecheck.claims.trajectory import trajectory_deviation, trajectory_oracle
from ratecheck.problems.minimax import make
from ratecheck.trace import RunConfig, Trace

from .oracles_replay import REPLAY_REPLICAS, REPLAY_RTOL, UNBOUNDED
from .theorems import KEY, src

PROJECTED_T = 24
PROBLEM = {"kind": "pwmax", "r": 1.5, "c0": 0.5, "clients": 5, "zeta": 0.4, "omega": 1.3, "noise": 0.0,
           "x0": [1.0, -0.7], "y0": [0.1, 0.2, 0.3, 0.4]}
# large local y-steps: every local ascent step leaves the simplex and lands outside the positive orthant (a face
# of Y active after projecting; 576 of 576 client steps); eta_{y,g} > 1: the server's step leaves Y too (63 of 96)
STEPS = {"eta_x_local": 0.15, "eta_y_local": 0.6, "eta_x_global": 0.9, "eta_y_global": 1.4, "local_steps": 3,
         "p": 0.5, "beta": 0.3, "participation": "without_replacement:2"}
MEASURES = ("stat_sq", "grad_x_sq", "grad_y_sq", "phi_gap", "dist_x_sq")
ANGLES = 2 * np.pi * np.arange(1, 4) / 3
SLOPES = np.vstack([np.stack([np.cos(ANGLES), np.sin(ANGLES)], axis=1), np.zeros((1, 2))])  # u_1..u_3, h_4's 0


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row (last axis) onto the probability simplex (see the module)."""
    top = np.sort(v, axis=-1)[..., ::-1]
    k = np.arange(1, v.shape[-1] + 1)
    thresholds = (np.cumsum(top, axis=-1) - 1.0) / k
    count = np.sum(top > thresholds, axis=-1, keepdims=True)
    tau = np.take_along_axis(thresholds, count - 1, axis=-1)
    return np.maximum(v - tau, 0.0)


class ProjectedReplay:
    """The replicas of a noise-free FESS-GDA run on spec §6.4's problem, every replica and client at once; counts
    how often a local ascent step leaves Y (``left``) and lands outside the orthant (``clipped``) of ``steps``."""

    def __init__(self, config: RunConfig) -> None:
        q = dict(config.problem_params)
        if float(q.get("noise", 0.0)) or q.get("kind") != "pwmax" or q.get("duplicate"):
            raise ValueError(f"the replay is of the noise-free point-wise max (kind 'pwmax', noise 0), got {q!r}")
        self.r, self.c0, self.M = float(q["r"]), float(q["c0"]), int(q["clients"])
        self.zeta, self.omega = float(q["zeta"]), float(q["omega"])
        self.l = float(make(**q).l)  # the problem's smoothness constant, for the Def 2.1 y-measure only
        self.R = int(config.replicas)
        self.x = np.tile(np.asarray(q["x0"], dtype=float), (self.R, 1))
        self.y = np.tile(np.asarray(q["y0"], dtype=float), (self.R, 1))
        self.z = self.x.copy()
        mode, _ = sampling_rule(str(config.params.get("participation", "full")))
        if mode == "with_replacement":  # the boxes draw m distinct clients
            raise ValueError(f"the replay draws clients without replacement, got {config.params['participation']!r}")
        self.draws = iter(sampled_clients(config))  # (R, m) a round: the kit's replay of the 'sampling' stream
        self.steps = self.left = self.clipped = 0

    def clients(self) -> np.ndarray:
        """(R, m): each replica's client set this round (ratecheck.claims.costs.sampled_clients: all M, or the m
        smallest of M uniform keys, Algorithm 1 line 2)."""
        return next(self.draws)

    def components(self, x: np.ndarray, theta: np.ndarray | None = None) -> np.ndarray:
        """h_j(x) (..., 4), or h_j^(i)(x) of the clients with phases theta (..., 1)."""
        h = -np.cos(x).sum(-1, keepdims=True) + self.r * x @ SLOPES.T - self.c0 * (np.arange(4) == 3)
        if theta is None:
            return h
        arg = self.omega * x[..., None, :] + theta[..., None] + np.arange(1, 5)[:, None]  # (..., 4, 2)
        return h + self.zeta * np.sin(arg).sum(-1)

    def client_grad_x(self, x: np.ndarray, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """sum_j y_j grad h_j^(i)(x) at (R, m) points."""
        arg = self.omega * x[..., None, :] + theta[..., None] + np.arange(1, 5)[:, None]
        grads = np.sin(x)[..., None, :] + self.r * SLOPES + self.zeta * self.omega * np.cos(arg)  # (R, m, 4, 2)
        return np.einsum("...j,...jc->...c", y, grads)

    def fess_round(self, p: dict) -> None:
        """Algorithm 1 lines 2-15."""
        exl, eyl, exg, eyg = (float(p[k]) for k in ("eta_x_local", "eta_y_local", "eta_x_global", "eta_y_global"))
        K, sp, beta = int(p["local_steps"]), float(p["p"]), float(p["beta"])
        chosen = self.clients()
        theta = (2 * np.pi / self.M * chosen)[..., None]  # (R, m, 1)
        x = np.repeat(self.x[:, None], chosen.shape[1], axis=1)
        y = np.repeat(self.y[:, None], chosen.shape[1], axis=1)
        for _ in range(K):
            gx, gy = self.client_grad_x(x, y, theta), self.components(x, theta)
            x, ascent = x - exl * gx, y + eyl * gy
            y = project_simplex(ascent)
            self.steps += ascent.shape[0] * ascent.shape[1]
            self.left += int(np.sum(np.abs(y - ascent).max(-1) > 1e-9))
            self.clipped += int(np.sum(ascent.min(-1) < 0))
        x_new = self.x + exg * (x.mean(1) - self.x) - exl * exg * K * sp * (self.x - self.z)
        self.y = project_simplex(self.y + eyg * (y.mean(1) - self.y))
        self.x, self.z = x_new, self.z + beta * (x_new - self.z)

    def measures(self) -> dict[str, np.ndarray]:
        x, y = self.x, self.y
        gx = np.sin(x) * y.sum(-1, keepdims=True) + self.r * y @ SLOPES
        h = self.components(x)
        step = project_simplex(y + h / self.l) - y
        out = {"grad_x_sq": np.sum(gx**2, -1), "grad_y_sq": self.l**2 * np.sum(step**2, -1),
               "phi_gap": h.max(-1) + 2.0, "dist_x_sq": np.sum(x**2, -1)}
        out["stat_sq"] = out["grad_x_sq"] + out["grad_y_sq"]
        return out


def run_replay(config: RunConfig, marks: np.ndarray) -> tuple[dict[str, np.ndarray], ProjectedReplay]:
    """Per replica (C, R): the measures of the run of ``config`` replayed from Algorithm 1, and the replay."""
    run = ProjectedReplay(config)
    want = {int(t): j for j, t in enumerate(marks)}
    out = {name: np.full((len(marks), run.R), np.nan) for name in MEASURES}
    last = int(max(marks))
    for t in range(last + 1):
        if t in want:
            for name, value in run.measures().items():
                out[name][want[t]] = value
        if t < last:  # no round after the last checkpoint
            run.fess_round(dict(config.params))
    return out, run


def replay(config: RunConfig, marks: np.ndarray) -> dict[str, np.ndarray]:
    return run_replay(config, marks)[0]


def replay_deviation(config: RunConfig, trace: Trace) -> np.ndarray:
    """Per replica, the largest relative deviation of the run from the replay; a non-finite one as UNBOUNDED."""
    worst = trajectory_deviation(replay)(config, trace)
    return np.where(np.isfinite(worst), worst, UNBOUNDED)


def configure(value: float, profile: Profile) -> RunConfig:
    return RunConfig("fess_gda", dict(STEPS), "minimax", dict(PROBLEM), int(value), replicas=REPLAY_REPLICAS,
                     checkpoints=int(value))


ORACLE = dataclasses.replace(trajectory_oracle(
    id="fessgda.oracle.fess_gda_projected_replay", paper=KEY,
    title="fess_gda on a simplex Y: a noise-free Monte-Carlo run equals Algorithm 1 replayed with the run's own "
          "client draws, y projected onto Y after every local step",
    statement="FESS-GDA with local steps 0.15, 0.6, global steps 0.9, 1.4, K = 3, p = 0.5, beta = 0.3, 2 of 5 "
              "clients without replacement, on the point-wise maximum of spec §6.4 (r = 1.5, c0 = 0.5, client terms "
              "zeta = 0.4, omega = 1.3, s = 0) over Y = the simplex of R^4, where every local ascent step leaves Y "
              "and the positive orthant (measured: 576 of 576 client steps): run in Monte Carlo, replica by replica, "
              "against the box replayed with each round's clients taken from the run's 'sampling' Generator, the "
              "gradients of spec §6.4 and the projection onto the simplex written from its definition "
              "(proofs/fessgda/oracles_projected.py).",
    source=src("Algorithm 1 (lines 2-15, projections at lines 8 and 14)", "spec §2.1, §6.4"),
    configure=configure, oracle=replay, measures=MEASURES, rtol=REPLAY_RTOL,
    tolerance_reason="deterministic given the client sets: float64 round-off over 24 rounds (measured "
                     "1.2e-13); a client that skips the projection of y (only the server "
                     "projecting), a wrong step, average or smoothing changes some replica by far more.",
    grid={"quick": (PROJECTED_T,), "full": (PROJECTED_T,)}), summary=replay_deviation)
CLAIMS = (ORACLE,)
