"""StR-FedAvg and IPIR-FedAvg (optimal solution selection) with the baselines of spec strfedavg §7.

Source: ../shared/seeds/001_511a8e816d499631.txt (arXiv 2503.08634v2), spec ../shared/spec/strfedavg.md.

* ``strfedavg``: Algorithm 1 with the index typos fixed (I1, I2): S clients drawn uniformly without
  replacement each round, K local SGD steps on h~_i + eta f~_i (one fresh zeta and xi per step, drawn
  independently), server step x^r = x^{r-1} + gamma_g (1/S) sum_i (y_{i,K} - x^{r-1}). The parameters
  are tuned to the horizon R (``horizon``): gamma_tilde = gamma_l gamma_g K and eta from ``schedule``.
  The output is the theta-weighted average sum_r theta^r x^{r-1} / sum_r theta^r (normalized: I3),
  kept beside the last iterate: output {"x": average, "last": x^R}.
* ``tikhonov_fedavg``: the same with a fixed eta and gamma_tilde (sequential regularization baseline).
* ``ipir_fedavg``: Algorithm 2. Outer step t runs R_t = t + R0 rounds of StR-FedAvg (strongly convex
  schedule with mu_f = 1, p = 2, a = 7/12, b = 5/12) on h + eta_t/2 ||x - y^t||^2 from x = y^t, then
  y^{t+1} = y^t - gamma (grad f(y^t) + (y^t - x^t)/lam). Every inner round is a communication round.
* ``ir_sgd``: centralized iteratively regularized SGD (gamma_k = gamma_0 (k+1)^-a, eta_k = eta_0 (k+1)^-b).
* ``exact_projection_gd``: Algorithm 2's outer loop with the exact projection (isolates the inner error).
* ``scaffold``: SCAFFOLD (option II control variates) on f_eta with a fixed eta (drift comparison).

FedAvg on h alone is the package's ``fedavg`` (its oracle is the problem's h oracle).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..model.diagnostics import Diagnostic
from ..model.participation import Participation
from ..oracles import CompositeOracles
from ..params import ParamError, choice, integer, option, real
from ..seeding import Streams
from .base import Algorithm, Costs, register
from .local import local_sgd

SCHEDULES = ("strongly_convex", "convex", "fixed", "paper_experiment")


def _constant(problem: CompositeOracles, name: str) -> float:
    return float(problem.constants()[name].value)


def _check_problem(owner: str, problem: Any) -> None:
    if not isinstance(problem, CompositeOracles):
        family = getattr(problem, "family", type(problem).__name__)
        raise ValueError(f"algorithm {owner!r} does not run on problem family {family!r}: it needs a composite "
                         "(h + eta f) problem such as least_squares")


def _check_moreau(owner: str, lam: float | None, problem: Any) -> None:
    """The problem's measures are of F_lambda: the family must define lam (it may differ from ours)."""
    if lam is None and getattr(problem, "lam", None) is None:
        raise ParamError(owner, "lam", None, "give lam > 0 (the problem defines none)")
    if getattr(problem, "lam", None) is None:
        raise ParamError(owner, "lam", lam, f"problem family {problem.family!r} is built without lam, and its "
                         f"measures (of F_lambda) need one: give it to the problem too (--problem-set lam={lam})")


def federated_round(problem: CompositeOracles, x: np.ndarray, *, participation: Participation,
                    local_steps: int, gamma_local: float, gamma_global: float, streams: Streams,
                    oracle: Callable[[Any, np.ndarray, Any], np.ndarray]) -> tuple[np.ndarray, int]:
    """One round of Algorithm 1 lines 3-12: sample, K local steps with `oracle`, average over the
    sampled clients (divide by S), server step. Returns (x^r, S)."""
    clients = participation.sample(problem.num_clients, streams["sampling"])
    batch = problem.gather(clients)
    start = np.broadcast_to(x[:, None, :], (x.shape[0], clients.shape[1], x.shape[1]))
    end = local_sgd(problem, batch, start, local_steps, gamma_local, streams["noise"], oracle)
    direction = (end - start).mean(axis=1)  # Delta x^r = (1/S) sum_{i in S_r} Delta y_i
    return x + gamma_global * direction, clients.shape[1]


@dataclass
class StRState:
    x: np.ndarray  # x^r (R, n)
    average: np.ndarray  # sum_{s <= r} theta^s x^{s-1} / sum_{s <= r} theta^s (x^0 before round 1)
    weight: float  # sum_{s <= r} theta^(s - R)
    t: int
    controls: Any = None  # SCAFFOLD's {"c": (R, n), "ci": (R, N, n)} (a dict of arrays: exact mode tracks it)


@register
@dataclass(frozen=True)
class StRFedAvg(Algorithm[CompositeOracles]):
    """Algorithm 1 (StR-FedAvg), horizon-tuned ("self-tuned") gamma_l and eta; see the module doc."""

    name: ClassVar[str] = "strfedavg"
    diagnostics: ClassVar[tuple[Diagnostic, ...]] = (Diagnostic.number("rounds_done", "rounds run"),)
    source: ClassVar[str] = "001_511a8e816d499631.txt Algorithm 1 (spec strfedavg §2.1)"
    allowed_modes: ClassVar[tuple[str, ...]] = ("without_replacement", "full", "with_replacement")

    horizon: int = integer(100, "R, the number of rounds the schedule is tuned for (run exactly R rounds)",
                           low=2, high=10**8)
    schedule: str = choice("strongly_convex", "strongly_convex: gamma_tilde = (mu_f R)^-a, eta = p ln R/"
                           "(mu_f R)^b (Thm 1); convex: R^-a, R^-b (Thm 2); fixed: eta, gamma_tilde given "
                           "(Tikhonov); paper_experiment: gamma_l = (R+offset)^-a, eta = (R+offset)^-b (§5.1, I28)",
                           SCHEDULES)
    a: float = real(2 / 3, "step exponent a (0 < b < a <= 1)", positive=True, high=1.0)
    b: float = real(1 / 3, "regularization exponent b (0 < b < a)", positive=True, high=1.0)
    p: float = real(1.0, "p >= 1 in eta = p ln R/(mu_f R)^b", low=1.0)
    mu_f: float | None = real(None, "mu_f of the schedule (default: the problem's)", positive=True, nullable=True)
    gamma_g: float = real(1.0, "server step gamma_g >= 1", low=1.0)
    local_steps: int = integer(1, "local SGD steps K per round", low=1, high=10**6)
    participation: Participation = option(Participation, "client sampling: full, without_replacement:S "
                                          "(paper), with_replacement:S (not for bound checks)", Participation.parse)
    eta: float | None = real(None, "regularization eta (schedule 'fixed')", positive=True, nullable=True)
    gamma_tilde: float | None = real(None, "effective step gamma_l gamma_g K (schedule 'fixed')", positive=True,
                                     nullable=True)
    offset: float = real(10.0, "Gamma in (R + Gamma) (schedule 'paper_experiment'; the paper gives no value)",
                         low=0.0)
    exponents: str = choice("proof", "admitted (a, b): 'proof' needs a + b <= 1 as Theorem 1's proof does (I10); "
                            "'printed' admits every 0 < b < a <= 1 as Theorem 1 states (to show I10 by running it)",
                            ("proof", "printed"))

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.schedule in ("strongly_convex", "convex", "paper_experiment"):
            if not self.b < self.a:
                raise ParamError(self.name, "b", self.b, f"must be < a = {self.a} (0 < b < a <= 1)")
            if self.schedule == "strongly_convex" and self.exponents == "proof" and self.a + self.b > 1 + 1e-12:
                raise ParamError(self.name, "a", self.a, f"a + b = {self.a + self.b:g} must be <= 1 (Thm 1 proof, I10)")
            if self.schedule == "convex" and self.a + self.b >= 1:
                raise ParamError(self.name, "a", self.a, f"a + b = {self.a + self.b:g} must be < 1 (Thm 2)")
        if self.schedule == "fixed" and (self.eta is None or self.gamma_tilde is None):
            raise ParamError(self.name, "eta" if self.eta is None else "gamma_tilde", None,
                             "schedule 'fixed' needs both eta and gamma_tilde")

    def validate(self, problem: CompositeOracles) -> None:
        _check_problem(self.name, problem)
        if self.participation.mode not in self.allowed_modes:
            raise ParamError(self.name, "participation", str(self.participation), f"mode must be in {self.allowed_modes}")
        try:
            self.participation.validate(problem.num_clients)
        except ValueError as exc:
            raise ParamError(self.name, "participation", str(self.participation), str(exc)) from None
        if self.schedule == "strongly_convex" and self.resolved_mu(problem) <= 0:
            raise ParamError(self.name, "mu_f", self.mu_f, "schedule 'strongly_convex' needs mu_f > 0")

    def resolved_mu(self, problem: CompositeOracles) -> float:
        return float(self.mu_f) if self.mu_f is not None else _constant(problem, "mu_f")

    def parameters(self, problem: CompositeOracles) -> dict[str, float]:
        """gamma_l, eta, gamma_tilde and theta at this horizon (spec §2.1 table)."""
        R, K, gg = self.horizon, self.local_steps, self.gamma_g
        mu = self.resolved_mu(problem) if self.schedule != "paper_experiment" else 0.0
        if self.schedule == "strongly_convex":
            gt, eta = (mu * R) ** -self.a, self.p * math.log(R) / (mu * R) ** self.b
        elif self.schedule == "convex":
            gt, eta, mu = R ** -self.a, R ** -self.b, 0.0
        elif self.schedule == "fixed":
            gt, eta = float(self.gamma_tilde), float(self.eta)  # type: ignore[arg-type]  # validate: "fixed" sets eta
        else:  # Section 5.1: no 1/(gamma_g K) factor, so gamma_tilde grows with K and gamma_g
            gamma_l = (R + self.offset) ** -self.a
            gt, eta, mu = gamma_l * gg * K, (R + self.offset) ** -self.b, 0.0
        contraction = 0.5 * eta * mu * gt
        if contraction >= 1:
            raise ParamError(self.name, "gamma_tilde", gt, f"eta mu_f gamma_tilde / 2 = {contraction:g} must be < 1 "
                             "(theta = 1/(1 - eta mu_f gamma_tilde/2) must be finite)")
        return {"gamma_l": gt / (gg * K), "eta": eta, "gamma_tilde": gt, "theta": 1.0 / (1.0 - contraction),
                "mu_f": mu}

    def init(self, problem: CompositeOracles, streams: Streams) -> StRState:
        x0 = np.broadcast_to(problem.initial_point(), (len(streams.replicas), problem.dim)).astype(float)
        return StRState(x=x0, average=x0.copy(), weight=0.0, t=0)

    def oracle(self, problem: CompositeOracles, eta: float) -> Callable:
        return lambda batch, w, noise: problem.composite_grad(batch, w, eta, noise)

    def output_weight(self, theta: float, r: int) -> float:
        """The weight of x^{r-1} in the output, scaled by theta^-R (no overflow): theta^(r - R)."""
        return math.exp((r - self.horizon) * math.log(theta))

    def accumulate(self, state: StRState, theta: float) -> tuple[np.ndarray, float]:
        """The output average with x^{r-1} entered at weight theta^r, kept normalized (a running
        weighted mean, so the output is the state itself: exact mode needs no per-round re-probe)."""
        w = self.output_weight(theta, state.t + 1)
        weight = state.weight + w
        return state.average + (w / weight) * (state.x - state.average), weight

    def round(self, state: StRState, problem: CompositeOracles, t: int, streams: Streams):
        par = self._params(problem)
        average, weight = self.accumulate(state, par["theta"])
        x, S = federated_round(problem, state.x, participation=self.participation, local_steps=self.local_steps,
                               gamma_local=par["gamma_l"], gamma_global=self.gamma_g, streams=streams,
                               oracle=self.oracle(problem, par["eta"]))
        costs: Costs = {"oracle_calls": float(S * self.local_steps), "vectors_up": float(S), "vectors_down": float(S)}
        return StRState(x, average, weight, t + 1), costs

    def _params(self, problem: CompositeOracles) -> dict[str, float]:
        """``parameters(problem)``, computed once per problem (the cache keeps the problem alive, so
        its id cannot be reused by another object)."""
        cache = self.__dict__.setdefault("_cache", {})
        held = cache.get(id(problem))
        if held is None or held[0] is not problem:
            held = cache[id(problem)] = (problem, self.parameters(problem))
        return held[1]

    def output(self, state: StRState) -> dict[str, np.ndarray]:
        return {"x": state.average, "last": state.x}

    def info(self, state: StRState) -> dict[str, Any]:
        return {"rounds_done": state.t}


@register
@dataclass(frozen=True)
class TikhonovFedAvg(StRFedAvg):
    """Fixed-eta Tikhonov FedAvg: Algorithm 1 with a constant eta and gamma_tilde (spec §7)."""

    name: ClassVar[str] = "tikhonov_fedavg"
    source: ClassVar[str] = "001_511a8e816d499631.txt §1 (sequential regularization, ref. [33]); spec §7"
    schedule: str = choice("fixed", "fixed eta and gamma_tilde", ("fixed",))
    eta: float | None = real(0.1, "regularization eta", positive=True, nullable=True)
    gamma_tilde: float | None = real(0.1, "effective step gamma_l gamma_g K", positive=True, nullable=True)


@register
@dataclass(frozen=True)
class Scaffold(StRFedAvg):
    """SCAFFOLD (Karimireddy et al., option II control variates) on f_eta with a fixed eta (spec §7).

    Local step y <- y - gamma_l (g_i(y) - c_i + c); after K steps c_i+ = c_i - c + (x - y_K)/(K gamma_l),
    x <- x + gamma_g mean(y_K - x), c <- c + (S/N) mean(c_i+ - c_i). Control variates start at 0.
    """

    name: ClassVar[str] = "scaffold"
    source: ClassVar[str] = "SCAFFOLD (ref. [13] of 001_511a8e816d499631.txt), Algorithm 1 option II; spec §7"
    # SCAFFOLD samples a SET: a client drawn twice would enter c's update twice but its c_i once, breaking
    # c = mean_i c_i (the invariant the correction relies on)
    allowed_modes: ClassVar[tuple[str, ...]] = ("without_replacement", "full")
    schedule: str = choice("fixed", "fixed eta and gamma_tilde", ("fixed",))
    eta: float | None = real(0.1, "regularization eta", positive=True, nullable=True)
    gamma_tilde: float | None = real(0.1, "effective step gamma_l gamma_g K", positive=True, nullable=True)

    def init(self, problem, streams):
        state = super().init(problem, streams)
        R = len(streams.replicas)
        state.controls = {"c": np.zeros((R, problem.dim)), "ci": np.zeros((R, problem.num_clients, problem.dim))}
        return state  # a fresh state object: setting its field is local

    def round(self, state, problem, t, streams):
        par = self._params(problem)
        c, ci = state.controls["c"], state.controls["ci"]
        clients = self.participation.sample(problem.num_clients, streams["sampling"])
        rows = np.arange(clients.shape[0])[:, None]
        correction = c[:, None, :] - ci[rows, clients]  # (R, S, n)
        base = self.oracle(problem, par["eta"])
        batch = problem.gather(clients)
        start = np.broadcast_to(state.x[:, None, :], correction.shape)
        end = local_sgd(problem, batch, start, self.local_steps, par["gamma_l"], streams["noise"],
                        lambda b, w, noise: base(b, w, noise) + correction)
        new_ci = ci[rows, clients] - c[:, None, :] + (start - end) / (self.local_steps * par["gamma_l"])
        delta_c = new_ci - ci[rows, clients]
        ci = ci.copy()
        ci[rows, clients] = new_ci
        S = clients.shape[1]
        c = c + (S / problem.num_clients) * delta_c.mean(axis=1)
        average, weight = self.accumulate(state, par["theta"])
        x = state.x + self.gamma_g * (end - start).mean(axis=1)
        new = StRState(x, average, weight, t + 1, {"c": c, "ci": ci})
        return new, {"oracle_calls": float(S * self.local_steps), "vectors_up": 2.0 * S, "vectors_down": 2.0 * S}


# ------------------------------------------------------------------------------------------------
# Algorithm 2


@dataclass
class IPIRState:
    y: np.ndarray
    x: np.ndarray  # x^{t-1}, the inner output that approximates Pi(anchor)
    t: int
    max_dist: float = 0.0  # sup_t dist(y^t, X*_h) over the run (enters G^2_ncvx, spec §3.5)
    anchor: np.ndarray | None = None  # y^{t-1}, the point x^{t-1} projects (y^0 before the first step)


MOREAU = ("algorithm_2", "definition")


@register
@dataclass(frozen=True)
class IPIRFedAvg(Algorithm[CompositeOracles]):
    """Algorithm 2 (IPIR-FedAvg), case kappa > 1; one engine round is one outer iteration t."""

    name: ClassVar[str] = "ipir_fedavg"
    diagnostics: ClassVar[tuple[Diagnostic, ...]] = (
        Diagnostic.number("max_dist", "largest dist(y_t, argmin h) of the iterates (a running sup)"),)
    source: ClassVar[str] = "001_511a8e816d499631.txt Algorithm 2 (spec strfedavg §2.2)"
    monitors: ClassVar[tuple[str, ...]] = ("max_dist",)  # a running sup of the iterates: exact mode skips it

    lam: float | None = real(None, "Moreau parameter lambda (default: the problem's)", positive=True, nullable=True)
    gamma: float | None = real(None, "outer step (default: the corrected max lam/(4(L_f lam + 2)), I19)",
                               positive=True, nullable=True)
    R0: int = integer(2, "inner rounds R_t = t + R0 (R_t = t in the paper breaks at t <= 1, I20)", low=2, high=10**7)
    local_steps: int = integer(1, "local SGD steps K per inner round", low=1, high=10**6)
    gamma_g: float = real(1.0, "server step of the inner rounds, >= 1", low=1.0)
    participation: Participation = option(Participation, "client sampling of the inner rounds", Participation.parse)
    p: float = real(2.0, "p of the inner schedule (paper: 2)", low=1.0)
    a: float = real(7 / 12, "inner step exponent (paper: 7/12)", positive=True, high=1.0)
    b: float = real(5 / 12, "inner regularization exponent (paper: 5/12)", positive=True, high=1.0)
    inner_init: str = choice("y", "start of the inner run: y^t (default) or the previous output (warm)",
                             ("y", "warm"))
    moreau_gradient: str = choice("algorithm_2", "outer penalty gradient: (y - x)/lam as Algorithm 2 prints "
                                  "(= grad of f + dist^2/(2 lam)), or 2(y - x)/lam, the gradient of the paper's "
                                  "definition f + dist^2/lam (I18)", MOREAU)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.b < self.a or self.a + self.b > 1 + 1e-12:
            raise ParamError(self.name, "b", self.b, f"needs 0 < b < a = {self.a:g} and a + b <= 1")

    def resolved_lam(self, problem: Any) -> float:
        lam = self.lam if self.lam is not None else getattr(problem, "lam", None)
        if lam is None:
            raise ParamError(self.name, "lam", None, "give lam > 0 (the problem defines none)")
        return float(lam)

    def resolved_gamma(self, problem: Any) -> float:
        if self.gamma is not None:
            return float(self.gamma)
        lam = self.resolved_lam(problem)
        return lam / (4 * (_constant(problem, "L_f") * lam + 2))

    def validate(self, problem: Any) -> None:
        _check_problem(self.name, problem)
        try:
            self.participation.validate(problem.num_clients)
        except ValueError as exc:
            raise ParamError(self.name, "participation", str(self.participation), str(exc)) from None
        _check_moreau(self.name, self.lam, problem)

    def inner_schedule(self, t: int) -> dict[str, float]:
        """R_t, eta_t, gamma_tilde_t, gamma_l,t and theta_t (strongly convex schedule with mu_f = 1)."""
        R = t + self.R0
        gt = R ** -self.a
        eta = self.p * math.log(R) / R ** self.b
        return {"R": R, "eta": eta, "gamma_tilde": gt, "gamma_l": gt / (self.gamma_g * self.local_steps),
                "theta": 1.0 / (1.0 - 0.5 * eta * gt)}

    def init(self, problem: Any, streams: Streams) -> IPIRState:
        y0 = np.broadcast_to(problem.initial_point(), (len(streams.replicas), problem.dim)).astype(float)
        # the anchor is an array from the start (y^0, what the output showed before), so the state's
        # arrays keep their type and exact mode can track them
        return IPIRState(y=y0, x=y0.copy(), t=0, anchor=y0.copy())

    def inner(self, problem: Any, y: np.ndarray, start: np.ndarray, t: int, streams: Streams) -> tuple[np.ndarray, int]:
        """x^t: StR-FedAvg for R_t rounds on h + eta_t/2||x - y||^2, theta-weighted average output."""
        s = self.inner_schedule(t)
        R, theta = s["R"], s["theta"]
        oracle = lambda batch, w, noise: problem.composite_grad(batch, w, s["eta"], noise, anchor=y)  # noqa: E731
        x, acc, total, sent = start, np.zeros_like(start), 0.0, 0
        log_theta = math.log(theta)
        for r in range(1, int(R) + 1):
            weight = math.exp((r - R) * log_theta)
            acc += weight * x
            total += weight
            x, S = federated_round(problem, x, participation=self.participation, local_steps=self.local_steps,
                                   gamma_local=s["gamma_l"], gamma_global=self.gamma_g, streams=streams,
                                   oracle=oracle)
            sent += S
        return acc / total, sent

    def round(self, state: IPIRState, problem: Any, t: int, streams: Streams):
        start = state.y if self.inner_init == "y" else state.x
        x, sent = self.inner(problem, state.y, start, t, streams)
        weight = (1.0 if self.moreau_gradient == "algorithm_2" else 2.0) / self.resolved_lam(problem)
        y = state.y - self.resolved_gamma(problem) * (problem.outer.grad(state.y) + weight * (state.y - x))
        dist = float(np.sqrt(problem.dist_sq(state.y)).max())
        R = self.inner_schedule(t)["R"]
        costs: Costs = {"oracle_calls": float(sent * self.local_steps), "vectors_up": float(sent),
                        "vectors_down": float(sent + problem.num_clients), "inner_rounds": float(R)}
        return IPIRState(y, x, t + 1, max(state.max_dist, dist), state.y), costs

    def output(self, state: IPIRState) -> dict[str, Any]:
        return {"y": state.y, "x": state.x, "anchor": state.anchor}

    def info(self, state: IPIRState) -> dict[str, Any]:
        # named like the monitored field, so exact runs report it as NaN (not tracked) instead of its start value
        return {"max_dist": state.max_dist}


# ------------------------------------------------------------------------------------------------
# Centralized baselines


@dataclass
class PointState:
    x: np.ndarray
    t: int


@register
@dataclass(frozen=True)
class IRSGD(Algorithm[CompositeOracles]):
    """Centralized iteratively regularized SGD: x <- x - gamma_k (grad h~ + eta_k grad f~) (spec §7)."""

    name: ClassVar[str] = "ir_sgd"
    source: ClassVar[str] = "refs. [1, 15, 26, 27, 9] of 001_511a8e816d499631.txt; spec strfedavg §7"

    gamma0: float = real(0.1, "gamma_k = gamma0 (k+1)^-a", positive=True)
    eta0: float = real(1.0, "eta_k = eta0 (k+1)^-b", positive=True)
    a: float = real(0.5, "step exponent (0 < b < a, a + b < 1)", positive=True, high=1.0)
    b: float = real(0.25, "regularization exponent", positive=True, high=1.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.b < self.a or self.a + self.b >= 1:
            raise ParamError(self.name, "b", self.b, f"needs 0 < b < a = {self.a:g} and a + b < 1")

    def validate(self, problem: Any) -> None:
        _check_problem(self.name, problem)

    def init(self, problem, streams):
        x0 = np.broadcast_to(problem.initial_point(), (len(streams.replicas), problem.dim)).astype(float)
        return PointState(x0, 0)

    def round(self, state, problem, t, streams):
        gamma, eta = self.gamma0 * (t + 1) ** -self.a, self.eta0 * (t + 1) ** -self.b
        noise = streams["noise"]
        grad = problem.global_grads(state.x, 0.0)
        if problem.sigma:
            grad = grad + noise.normal((problem.dim,)) * (problem.sigma / np.sqrt(problem.dim))
        outer = problem.outer.grad(state.x)
        if problem.sigma_f:
            outer = outer + noise.normal((problem.dim,)) * (problem.sigma_f / np.sqrt(problem.dim))
        return PointState(state.x - gamma * (grad + eta * outer), t + 1), {"oracle_calls": 1.0}

    def output(self, state):
        return state.x


@register
@dataclass(frozen=True)
class ExactProjectionGD(Algorithm[CompositeOracles]):
    """Algorithm 2 with the exact projection: y <- y - gamma (grad f(y) + (y - Pi y)/lam) (spec §7)."""

    name: ClassVar[str] = "exact_projection_gd"
    source: ClassVar[str] = "001_511a8e816d499631.txt Algorithm 2 with Pi in closed form (spec §7)"

    lam: float | None = real(None, "Moreau parameter (default: the problem's)", positive=True, nullable=True)
    gamma: float | None = real(None, "step (default lam/(4(L_f lam + 2)))", positive=True, nullable=True)

    def validate(self, problem):
        _check_problem(self.name, problem)
        _check_moreau(self.name, self.lam, problem)

    def init(self, problem, streams):
        y0 = np.broadcast_to(problem.initial_point(), (len(streams.replicas), problem.dim)).astype(float)
        return IPIRState(y=y0, x=problem.project(y0), t=0)

    def round(self, state, problem, t, streams):
        ipir = IPIRFedAvg(lam=self.lam, gamma=self.gamma)
        lam, gamma = ipir.resolved_lam(problem), ipir.resolved_gamma(problem)
        y = state.y
        y = y - gamma * (problem.outer.grad(y) + (y - state.x) / lam)
        return IPIRState(y=y, x=problem.project(y), t=t + 1), {"projections": 1.0, "inner_rounds": 0.0}

    def output(self, state):
        return {"y": state.y, "x": state.x}
