"""FESS-GDA and its special cases: federated (smoothed) stochastic gradient descent ascent.

Source: FESS-GDA paper, ../shared/seeds/004_57c332141565532a.txt (arXiv:2311.00944), Algorithm 1;
spec ../shared/spec/fessgda.md §2.1-§2.3 and pitfalls P1-P4, P11, P12.

* ``fess_gda``: Algorithm 1 exactly. Each round the server samples m clients uniformly WITHOUT
  replacement (line 2; ``full`` is m = M) and sends (x_t, y_t); each client runs K simultaneous
  local GDA steps with ONE sample for both partial gradients (lines 6-8), projecting y onto Y after
  every local step; the server averages over the m sampled clients, applies the global steps and the
  smoothing term - eta_{x,l} eta_{x,g} K p (x_t - z_t) ONCE, at the round-start (x_t, z_t) (line 13),
  projects y (line 14) and updates z with the NEW x (line 15). z never leaves the server; z_0 = x_0
  (unspecified in the paper, spec §2.5).
* ``fsgda`` (Yang et al. 2022a): the same code with p = 0 (beta, z irrelevant), spec §2.3.
* ``local_sgda`` (Deng & Mahdavi 2021): additionally eta_{x,g} = eta_{y,g} = 1.
* ``smoothed_agda`` (Zhang et al. 2020; stochastic: Yang et al. 2022b), centralized: FESS-GDA's code
  with K = 1, full participation, global steps 1, ALTERNATING updates (y-gradient at the new x) and
  the smoothing p (x - z) inside the x-step (both named deviation options), spec §7.
* ``fedgda_gt`` (Sun & Wei 2022, not compared in the paper): Local GDA (p = 0, global steps 1, full
  participation) whose local direction is tracked: grad f_i(w) - grad f_i(w_t) + grad f(w_t), the
  round-start gradients gathered from all clients (spec §7).
* ``fess_gda_swapped``: the PL-PL role swap of spec §2.4(C) (pitfall P19): FESS-GDA run on
  g(y, x) = -f(x, y), i.e. y becomes the minimization variable, the smoothing term and z act on y.
  A wrapper around the same round (``SwappedRoles`` view of the problem), not a copy. With p = 0 it
  coincides with FSGDA (the round is symmetric in the roles): what changes is which branch of
  Theorem 3.5's recipe applies (mu1 < mu2: eta_x = 1/(4lK), eta_y = eta_x mu1^2/(64 l^2)).
* ``fess_gda_two_phase``: the translation to Phi-stationarity of Proposition 3.1 / Corollary 3.1
  (spec §2.4(B), pitfall P18): phase 1 is FESS-GDA as configured for ``phase1_rounds`` rounds, giving
  (x~, y~); phase 2 runs FESS-GDA with p = 0 (FSGDA) and its own step sizes on the anchored clients
  f_i + anchor_weight ||x - x~||^2 (anchor_weight = l by default) from (x~, y~). Same round code
  (``Anchored`` view of the problem), not a copy.
* ``sgda`` (Lin et al. 2020): centralized simultaneous SGDA = Local SGDA with K = 1 under full
  participation (one step on the client-mean gradient).

Every special case is a subclass that only fixes defaults and validation, never a copy of the round.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, cast

import numpy as np

from ..model.participation import Participation
from ..oracles import MinimaxOracles
from ..params import choice, flag, integer, option, real
from ..seeding import Streams
from .base import Algorithm, Costs, register


@dataclass
class MinimaxState:
    x: np.ndarray  # (R, d1)
    y: np.ndarray  # (R, d2)
    z: np.ndarray  # (R, d1): server-only smoothing variable


UPDATES = ("simultaneous", "alternating")
SMOOTHING = ("server", "local")


def local_gda(problem: Any, batch: Any, x: np.ndarray, y: np.ndarray, steps: int, eta_x: float,
              eta_y: float, noise: Any, updates: str = "simultaneous", prox: float = 0.0,
              anchor: np.ndarray | None = None,
              correction: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """K local SGDA steps on (R, m, d) points (Algorithm 1 lines 5-9), y projected onto Y after
    every step (line 8). Shared by every federated GDA variant.

    'simultaneous' (FESS-GDA): both partial gradients from ONE sample at (x^k, y^k) (pitfall P2).
    'alternating' (Smoothed-AGDA): the y-gradient is taken at the new x^{k+1}, from a second sample.
    ``prox`` > 0 adds prox (x^k - anchor) to every local x-gradient (local smoothing, NOT FESS-GDA).
    ``correction`` (cx, cy) is added to every local gradient (gradient tracking, FedGDA-GT).
    """
    for _ in range(steps):
        gx, gy = problem.stochastic_grads(batch, x, y, noise)
        if prox:
            gx = gx + prox * (x - anchor)
        if correction is not None:
            gx = gx + correction[0]
        x = x - eta_x * gx
        if updates == "alternating":
            gy = problem.stochastic_grads(batch, x, y, noise)[1]
        if correction is not None:
            gy = gy + correction[1]
        y = problem.project_y(y + eta_y * gy)
    return x, y


@register
@dataclass(frozen=True)
class FessGDA(Algorithm[MinimaxOracles]):
    """Algorithm 1 of the FESS-GDA paper, with local (client) and global (server) step sizes."""

    name: ClassVar[str] = "fess_gda"
    source: ClassVar[str] = "004_57c332141565532a.txt Algorithm 1 (spec fessgda §2.1)"
    allowed_modes: ClassVar[tuple[str, ...]] = ("full", "without_replacement")

    problem_kinds: ClassVar[tuple[str, ...]] = ("minimax",)

    eta_x_local: float = real(0.01, "local step size of x, the paper's eta_{x,l}", positive=True)
    eta_y_local: float = real(0.01, "local step size of y, the paper's eta_{y,l}", positive=True)
    eta_x_global: float = real(1.0, "global (server) step size of x, eta_{x,g}", positive=True)
    eta_y_global: float = real(1.0, "global (server) step size of y, eta_{y,g}", positive=True)
    local_steps: int = integer(1, "local GDA steps K per round", low=1, high=10**6)
    p: float = real(0.0, "smoothing coefficient (p = 2l in the NC-* theorems, 0 for PL-PL)", low=0.0)
    beta: float = real(0.5, "EMA rate of the smoothing variable z (Algorithm 1 input)", low=0.0, high=1.0,
                       low_open=True, high_open=True)
    participation: Participation = option(Participation, "client sampling: full or without_replacement:m "
                                          "(Algorithm 1 line 2)", Participation.parse)
    # deviation options (defaults are the paper's): 'alternating' takes the y-gradient at the updated
    # x (Smoothed-AGDA's order); smoothing 'local' puts p (x^k - z_t) into every local x-step instead
    # of once at the server (pitfall P1: a different algorithm)
    updates: str = choice("simultaneous", "'simultaneous' (paper) or 'alternating' (y-gradient at the new x)",
                          UPDATES)
    smoothing: str = choice("server", "'server': p (x_t - z_t) once per round (paper); 'local': in every "
                            "local x-step", SMOOTHING)
    tracking: bool = flag(False, "FedGDA-GT's gradient tracking (a baseline, not in the FESS-GDA paper)")

    def validate(self, problem: MinimaxOracles) -> None:
        if self.participation.mode not in self.allowed_modes:
            raise ValueError(
                f"{self.name} samples clients uniformly without replacement (Algorithm 1 line 2): "
                f"participation must be one of {self.allowed_modes}, got {self.participation}"
            )
        self.participation.validate(problem.num_clients)

    def init(self, problem: MinimaxOracles, streams: Streams) -> MinimaxState:
        R = len(streams.replicas)
        start = problem.initial_point()
        x = np.tile(np.asarray(start["x"], dtype=float), (R, 1))
        y = np.tile(np.asarray(start["y"], dtype=float), (R, 1))
        return MinimaxState(x=x, y=y, z=x.copy())  # z_0 = x_0 (spec §2.5)

    def round(self, state: MinimaxState, problem: MinimaxOracles, t: int, streams: Streams):
        clients = self.participation.sample(problem.num_clients, streams["sampling"])
        m = clients.shape[1]
        batch = problem.gather(clients)
        x_loc = np.repeat(state.x[:, None, :], m, axis=1)
        y_loc = np.repeat(state.y[:, None, :], m, axis=1)
        local = self.smoothing == "local"
        correction = None
        if self.tracking:  # direction grad f_i(w) - grad f_i(w_t) + grad f(w_t) (Sun & Wei 2022)
            gx0, gy0 = problem.stochastic_grads(batch, x_loc, y_loc, streams["noise"])
            correction = (gx0.mean(axis=1, keepdims=True) - gx0, gy0.mean(axis=1, keepdims=True) - gy0)
        x_loc, y_loc = local_gda(problem, batch, x_loc, y_loc, self.local_steps, self.eta_x_local,
                                 self.eta_y_local, streams["noise"], self.updates,
                                 prox=self.p if local else 0.0, anchor=state.z[:, None, :], correction=correction)
        # lines 13-15: average over the m sampled clients (divide by m, P11); smoothing once at the
        # server with the round-start x_t, z_t (P1); z follows the NEW x (P3)
        server_p = 0.0 if local else self.p
        smoothing = (self.eta_x_local * self.eta_x_global * self.local_steps * server_p) * (state.x - state.z)
        x_new = state.x + self.eta_x_global * (x_loc.mean(axis=1) - state.x) - smoothing
        y_new = problem.project_y(state.y + self.eta_y_global * (y_loc.mean(axis=1) - state.y))
        z_new = state.z + self.beta * (x_new - state.z)
        calls = m * (self.local_steps * (2 if self.updates == "alternating" else 1) + int(self.tracking))
        # tracking: the round-start gradients go up and their mean comes down, besides the models
        sent = float(m * (1 + int(self.tracking)))
        costs: Costs = {"oracle_calls": float(calls), "vectors_up": sent, "vectors_down": sent}
        return MinimaxState(x_new, y_new, z_new), costs

    def output(self, state: MinimaxState) -> dict[str, np.ndarray]:
        return {"x": state.x, "y": state.y, "z": state.z}


@register
@dataclass(frozen=True)
class FSGDA(FessGDA):
    """FSGDA (Yang et al. 2022a) = FESS-GDA with p = 0 (spec §2.3); beta and z play no role."""

    name: ClassVar[str] = "fsgda"
    source: ClassVar[str] = "004_57c332141565532a.txt §2.3 special case p = 0 of Algorithm 1"

    def validate(self, problem: MinimaxOracles) -> None:
        super().validate(problem)
        if self.p != 0:
            raise ValueError(f"{self.name} is FESS-GDA with p = 0, got p={self.p!r} (use fess_gda)")


@register
@dataclass(frozen=True)
class LocalSGDA(FSGDA):
    """Local SGDA (Deng & Mahdavi 2021) = FSGDA with eta_{x,g} = eta_{y,g} = 1 (plain averaging)."""

    name: ClassVar[str] = "local_sgda"
    source: ClassVar[str] = "004_57c332141565532a.txt §2.3 special case p = 0, eta_g = 1 of Algorithm 1"

    def validate(self, problem: MinimaxOracles) -> None:
        super().validate(problem)
        if self.eta_x_global != 1 or self.eta_y_global != 1:
            raise ValueError(
                f"{self.name} averages local models (global steps 1), got eta_x_global={self.eta_x_global!r}, "
                f"eta_y_global={self.eta_y_global!r} (use fsgda)"
            )


@register
@dataclass(frozen=True)
class SGDA(LocalSGDA):
    """Centralized simultaneous SGDA (Lin et al. 2020): one step per round on the full gradient,
    i.e. Local SGDA with K = 1 and full participation (spec §7)."""

    name: ClassVar[str] = "sgda"
    source: ClassVar[str] = "Lin et al. 2020 (cited in 004_57c332141565532a.txt, Table 1); spec fessgda §7"

    def validate(self, problem: MinimaxOracles) -> None:
        super().validate(problem)
        if self.local_steps != 1 or self.participation.mode != "full":
            raise ValueError(
                f"{self.name} is centralized: local_steps must be 1 and participation 'full', "
                f"got local_steps={self.local_steps!r}, participation={self.participation}"
            )


@register
@dataclass(frozen=True)
class SmoothedAGDA(FessGDA):
    """Smoothed-AGDA (Zhang et al. 2020; Yang et al. 2022b), centralized and alternating:
    x+ = x - tau1 (grad_x f(x, y) + p (x - z)); y+ = P_Y(y + tau2 grad_y f(x+, y)); z+ = z + beta (x+ - z)
    (spec §7), i.e. FESS-GDA with K = 1, full participation, global steps 1, updates='alternating',
    smoothing='local'."""

    name: ClassVar[str] = "smoothed_agda"
    source: ClassVar[str] = "Zhang et al. 2020 / Yang et al. 2022b (cited in 004_57c332141565532a.txt); spec fessgda §7"

    updates: str = choice("alternating", "Smoothed-AGDA alternates (y-gradient at the new x)", UPDATES)
    smoothing: str = choice("local", "Smoothed-AGDA puts p (x - z) inside the x-step", SMOOTHING)

    def validate(self, problem: MinimaxOracles) -> None:
        super().validate(problem)
        if (self.local_steps, self.participation.mode, self.eta_x_global, self.eta_y_global, self.updates,
                self.smoothing) != (1, "full", 1, 1, "alternating", "local"):
            raise ValueError(
                f"{self.name} is centralized and alternating: local_steps 1, participation 'full', global steps 1, "
                f"updates 'alternating', smoothing 'local'; got local_steps={self.local_steps!r}, "
                f"participation={self.participation}, eta_x_global={self.eta_x_global!r}, "
                f"eta_y_global={self.eta_y_global!r}, updates={self.updates!r}, smoothing={self.smoothing!r}"
            )


@register
@dataclass(frozen=True)
class FedGDAGT(LocalSGDA):
    """FedGDA-GT (Sun & Wei 2022): Local SGDA with gradient tracking under full participation (spec §7)."""

    name: ClassVar[str] = "fedgda_gt"
    source: ClassVar[str] = "Sun & Wei 2022 (FedGDA-GT), spec fessgda §7; not compared in 004_57c332141565532a.txt"

    tracking: bool = flag(True, "gradient tracking (FedGDA-GT's defining feature)")

    def validate(self, problem: MinimaxOracles) -> None:
        super().validate(problem)
        if not self.tracking or self.participation.mode != "full":
            raise ValueError(
                f"{self.name} tracks the full gradient: tracking must be True and participation 'full', "
                f"got tracking={self.tracking!r}, participation={self.participation}"
            )


class SwappedRoles:
    """The problem seen with the roles of x and y exchanged: min_u max_v g(u, v) = -f(v, u), u = y, v = x
    (spec §2.4(C)). Needs Y = R^d2 (PL-PL): the new maximization variable x is unconstrained."""

    def __init__(self, problem: Any) -> None:
        if getattr(problem, "y_set", "free") != "free":
            raise ValueError(f"the role swap needs an unconstrained Y (PL-PL, Assumption 3.7), got Y = {problem.y_set!r}")
        self.problem = problem
        self.num_clients = problem.num_clients

    def gather(self, clients: np.ndarray) -> Any:
        return self.problem.gather(clients)

    def stochastic_grads(self, batch: Any, u: np.ndarray, v: np.ndarray, noise: Any) -> tuple[np.ndarray, np.ndarray]:
        gx, gy = self.problem.stochastic_grads(batch, v, u, noise)  # the same single sample (P2)
        return -gy, -gx

    def project_y(self, v: np.ndarray) -> np.ndarray:
        return v  # X = R^d1


@register
@dataclass(frozen=True)
class FessGDASwapped(FessGDA):
    """FESS-GDA with the roles of x and y swapped (spec §2.4(C)): Algorithm 1 on g(y, x) = -f(x, y).

    Parameters keep f's names (eta_x_* move x, eta_y_* move y); the smoothing p (y_t - z_t) is applied
    once at the server to y and z follows y: y_{t+1} = y_t + eta_{y,g}(mean_i y_i - y_t) - eta_{y,l} eta_{y,g} K p (y_t - z_t),
    z_{t+1} = z_t + beta (y_{t+1} - z_t).
    """

    name: ClassVar[str] = "fess_gda_swapped"
    source: ClassVar[str] = "004_57c332141565532a.txt Theorem 3.5 / Appendix I case mu1 < mu2 (spec §2.4(C)): Algorithm 1 on -f(y, x)"

    def validate(self, problem: MinimaxOracles) -> None:
        super().validate(problem)
        SwappedRoles(problem)  # fails early on a constrained Y

    def inner(self) -> FessGDA:
        """The plain FESS-GDA that runs on the swapped problem (x and y step sizes exchanged)."""
        swap = {"eta_x_local": "eta_y_local", "eta_y_local": "eta_x_local", "eta_x_global": "eta_y_global",
                "eta_y_global": "eta_x_global"}
        return FessGDA(**{swap.get(f.name, f.name): getattr(self, f.name) for f in fields(FessGDA)})

    def init(self, problem: MinimaxOracles, streams: Streams) -> MinimaxState:
        state = super().init(problem, streams)
        return MinimaxState(state.x, state.y, state.y.copy())  # z_0 = y_0: z anchors the new min variable

    def round(self, state: MinimaxState, problem: MinimaxOracles, t: int, streams: Streams):
        new, costs = self.inner().round(MinimaxState(state.y, state.x, state.z), cast(MinimaxOracles, SwappedRoles(problem)), t, streams)
        return MinimaxState(new.y, new.x, new.z), costs


# Rounds that ignore t (exact mode, ratecheck/exact.py: with no bookkeeping in the state, such a round's
# map is the same every round, so it is probed once instead of re-verified every round). Named by the
# function itself: a subclass that overrides round() is not vouched for.
FessGDA.t_free_rounds = (FessGDA.round, FessGDASwapped.round)


class Anchored:
    """The clients f_i(x, y) + weight ||x - anchor||^2 with a per-replica anchor (R, d1) (spec §2.4(B)):
    the regularizer's gradient 2 weight (x - anchor) is exact (noise-free) and the same for every client."""

    def __init__(self, problem: Any, anchor: np.ndarray, weight: float) -> None:
        self.problem, self.anchor, self.weight = problem, anchor, float(weight)
        self.num_clients = problem.num_clients

    def gather(self, clients: np.ndarray) -> Any:
        return self.problem.gather(clients)

    def stochastic_grads(self, batch: Any, x: np.ndarray, y: np.ndarray, noise: Any) -> tuple[np.ndarray, np.ndarray]:
        gx, gy = self.problem.stochastic_grads(batch, x, y, noise)
        return gx + (2 * self.weight) * (x - self.anchor[:, None, :]), gy

    def project_y(self, y: np.ndarray) -> np.ndarray:
        return self.problem.project_y(y)


@dataclass
class TwoPhaseState(MinimaxState):
    anchor: np.ndarray | None = None  # x~ (R, d1): x_0 until phase 2 starts, then x at the switch (always an array: exact mode tracks it)


@register
@dataclass(frozen=True)
class FessGDATwoPhase(FessGDA):
    """Proposition 3.1 / Corollary 3.1 (Appendix J), spec §2.4(B): FESS-GDA (the inherited parameters,
    p = 2l in the theorem) for ``phase1_rounds`` rounds, then FESS-GDA with p = 0 and the phase-2 step
    sizes on f_i + anchor_weight ||x - x~||^2 (x~ = x at the switch; anchor_weight 0 means the paper's l)."""

    name: ClassVar[str] = "fess_gda_two_phase"
    source: ClassVar[str] = "004_57c332141565532a.txt Proposition 3.1, Corollary 3.1, Appendix J (spec §2.4(B))"

    phase1_rounds: int = integer(100, "rounds of phase 1 (FESS-GDA as configured) before the switch", low=0)
    eta_x_local_2: float = real(0.01, "phase-2 local step size of x", positive=True)
    eta_y_local_2: float = real(0.01, "phase-2 local step size of y", positive=True)
    eta_x_global_2: float = real(1.0, "phase-2 global step size of x", positive=True)
    eta_y_global_2: float = real(1.0, "phase-2 global step size of y", positive=True)
    local_steps_2: int = integer(1, "phase-2 local steps K", low=1, high=10**6)
    anchor_weight: float = real(0.0, "weight of the anchor ||x - x~||^2 in phase 2; 0 means the problem's l "
                                "(the paper's f~ = f + l ||x - x~||^2)", low=0.0)

    def validate(self, problem: MinimaxOracles) -> None:
        super().validate(problem)
        self.phase2().validate(problem)

    def phase2(self) -> FessGDA:
        """FESS-GDA with p = 0 and the phase-2 step sizes (FSGDA), same participation."""
        base = {f.name: getattr(self, f.name) for f in fields(FessGDA)}
        return FessGDA(**{**base, "p": 0.0, "eta_x_local": self.eta_x_local_2, "eta_y_local": self.eta_y_local_2,
                          "eta_x_global": self.eta_x_global_2, "eta_y_global": self.eta_y_global_2,
                          "local_steps": self.local_steps_2})

    def init(self, problem: MinimaxOracles, streams: Streams) -> TwoPhaseState:
        state = super().init(problem, streams)
        return TwoPhaseState(state.x, state.y, state.z, state.x.copy())

    def round(self, state: TwoPhaseState, problem: MinimaxOracles, t: int,  # type: ignore[override]  # its own init makes the state
              streams: Streams) -> tuple[TwoPhaseState, Any]:
        if t < self.phase1_rounds:
            new, costs = FessGDA.round(self, state, problem, t, streams)
            return TwoPhaseState(new.x, new.y, new.z, state.anchor), costs
        anchor = state.x.copy() if t == self.phase1_rounds or state.anchor is None else state.anchor
        view = Anchored(problem, anchor, self.anchor_weight or problem.l)
        new, costs = self.phase2().round(state, cast(MinimaxOracles, view), t, streams)  # a view with the oracles
        return TwoPhaseState(new.x, new.y, new.z, anchor), costs
