"""SimFBO and ShroFBO: single-loop federated bilevel optimization with simultaneous y, v, x updates.

Source: ../shared/seeds/000_66e1ccf0a50396e9.txt, Algorithm 1 (lines 8/12/14 SimFBO, 9/13/15 ShroFBO),
eqs. (3)-(8); spec ../shared/spec/simfbo.md §2. One round (= one communication, no sub-loops):

* server samples C (|C| = P, uniformly without replacement) and sends (x, y, v);
* client i runs tau_i local steps of eq. (3): from the same old (x_i, y_i, v_i) it computes
  g_y = grad_y g_i, g_v = grad_yy g_i v_i - grad_y f_i, g_x = grad_x f_i - grad_xy g_i v_i (three
  independent samples) and updates all three at once with step a_i^{(t,k)} eta (Jacobi, pitfall 2);
  it returns q_i = sum_k a_i^{(t,k)} g_k and ||a_i||_1 (eq. (4));
* SimFBO: y <- y - gamma_y sum_{i in C} pt_i q_{y,i}, v <- P_r(v - gamma_v ...), x <- x - gamma_x ...
  with pt_i = (n/P) p_i, not renormalized (eq. (5));
* ShroFBO: the same with h_i = q_i/||a_i||_1 and the step scaled by rho = sum_{j=1}^n p_j ||a_j||_1
  over ALL clients (eqs. (6)-(8), pitfall 5).

Deviations are named options defaulting to the paper: ``participation`` with_replacement (test T4's
naive sampler), ``rho`` 'sampled' (spec §2.4 option 3), ``radius`` 'off' (no projection of v).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np

from ..model.diagnostics import Diagnostic
from ..model.participation import Participation
from ..model.projections import project_ball
from ..oracles import BilevelOracles
from ..params import ParamError, choice, option, real
from ..seeding import ReplicaStream, Streams
from .base import Algorithm, Costs, register

COEFFICIENTS = ("constant", "harmonic", "geometric")
RHO_MODES = ("all_clients", "sampled")
# families speaking the one-sample bilevel oracle interface the baselines use (problems/quadratic_bilevel.py);
# SimFBO and ShroFBO also need the SimFBO family's per-client weights, so they take quadratic_bilevel only
BILEVEL_FAMILIES = ("quadratic_bilevel", "fedbio_bilevel")


@dataclass(frozen=True)
class LocalSteps:
    """Local step counts tau_i (spec §2.1): one count for everyone ('5'), one per client
    ('per_client:1,1,10,10'), or redrawn i.i.d. uniform on {lo..hi} per client and round ('uniform:1:10')."""

    kind: str = "fixed"
    values: tuple[int, ...] = (1,)

    def __post_init__(self) -> None:
        if self.kind not in ("fixed", "per_client", "uniform"):
            raise ValueError(f"local_steps kind must be fixed, per_client or uniform, got {self.kind!r}")
        bad = [v for v in self.values if int(v) != v or v < 1]
        if bad or not self.values:
            raise ValueError(f"local_steps (tau_i) must be integers >= 1, got {list(self.values)}")
        if self.kind == "uniform" and (len(self.values) != 2 or self.values[0] > self.values[1]):
            raise ValueError(f"local_steps 'uniform:lo:hi' needs 1 <= lo <= hi, got {list(self.values)}")

    @classmethod
    def parse(cls, value: Any) -> LocalSteps:
        if isinstance(value, LocalSteps):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if int(value) != value or value < 1:
                raise ValueError(f"local_steps (tau_i) must be an integer >= 1, got {value!r}")
            return cls("fixed", (int(value),))
        if isinstance(value, (list, tuple)):
            return cls("per_client", tuple(value))
        if isinstance(value, str):
            kind, _, rest = value.partition(":")
            if kind.lstrip("-").isdigit():
                return cls.parse(int(kind))
            sep = "," if kind == "per_client" else ":"
            return cls(kind, tuple(int(v) for v in rest.split(sep)))
        raise ValueError(f"local_steps must be an int, a list or 'uniform:lo:hi', got {value!r}")

    def __str__(self) -> str:
        if self.kind == "fixed":
            return str(self.values[0])
        if self.kind == "per_client":
            return "per_client:" + ",".join(str(v) for v in self.values)
        return f"uniform:{self.values[0]}:{self.values[1]}"

    def validate(self, num_clients: int) -> None:
        if self.kind == "per_client" and len(self.values) != num_clients:
            raise ValueError(f"local_steps per_client needs {num_clients} counts, got {len(self.values)}")

    @property
    def max_steps(self) -> int:
        return int(max(self.values))

    def sample(self, num_clients: int, stream: ReplicaStream) -> np.ndarray:
        """tau of all n clients this round (R, n): the server needs them all for rho (spec §2.4)."""
        if self.kind == "uniform":
            lo, hi = self.values
            return lo + stream.integers(hi - lo + 1, (num_clients,))
        tau = np.full(num_clients, self.values[0]) if self.kind == "fixed" else np.asarray(self.values)
        return np.broadcast_to(tau, (stream.count, num_clients))

    def mean(self, num_clients: int) -> float:
        """tau_bar = (1/n) sum_i E tau_i (spec §4.8 item 3: the mean, not the sum)."""
        if self.kind == "uniform":
            return 0.5 * (self.values[0] + self.values[1])
        return float(np.mean(self.sample(num_clients, cast(ReplicaStream, _Count(1)))))  # reads .count only


class _Count:  # a stand-in stream for deterministic step counts
    def __init__(self, count: int) -> None:
        self.count = count


def coefficient_table(kind: str, steps: int) -> np.ndarray:
    """a^{(k)}, k = 0..steps-1 (spec §2.7): 'constant' 1, 'harmonic' 1/(k+1), 'geometric:q' q^k."""
    name, _, arg = kind.partition(":")
    k = np.arange(steps, dtype=float)
    if name == "constant" and not arg:
        return np.ones(steps)
    if name == "harmonic" and not arg:
        return 1.0 / (k + 1.0)
    if name == "geometric" and arg:
        q = float(arg)
        if not q > 0:
            raise ValueError(f"coefficients geometric:q needs q > 0 (a_k must stay positive), got {q}")
        return q**k
    raise ValueError(f"coefficients must be one of 'constant', 'harmonic', 'geometric:q', got {kind!r}")


def parse_coefficients(value: Any) -> str:
    """A coefficient schedule name, checked by building its first entry."""
    if not isinstance(value, str):
        raise ValueError(f"coefficients must be a string such as 'harmonic', got {value!r}")
    coefficient_table(value, 1)
    return value


def parse_radius(value: Any) -> Any:
    """'paper' (r = L_f/mu_g), 'off' (no projection) or a number > 0 (a numeric string is read as one)."""
    if value in ("paper", "off"):
        return value
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"radius r must be 'paper', 'off' or a number > 0, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (np.isfinite(value) and value > 0):
        raise ValueError(f"radius r must be 'paper', 'off' or a number > 0, got {value!r}")
    return value


@dataclass
class BilevelState:
    x: np.ndarray  # (R, dx)
    y: np.ndarray  # (R, dy)
    v: np.ndarray  # (R, dy)
    radius: float  # r of P_r (inf: no projection)
    rho_sum: float = 0.0
    rho_min: float = np.inf
    rho_max: float = 0.0
    local_v_max: float = 0.0  # max ||v_i^{(t,k)}|| over everything (Prop. 1)
    rounds: int = 0

    def points(self) -> dict[str, np.ndarray]:
        """The global (x, y, v) every bilevel algorithm outputs and the problem measures."""
        return {"x": self.x, "y": self.y, "v": self.v}


def client_update(problem: BilevelOracles, batch: Any, x: np.ndarray, y: np.ndarray, v: np.ndarray, tau: np.ndarray,
                  coeff: np.ndarray, eta: tuple[float, float, float], noise: ReplicaStream,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """ClientUpdate of spec §2.2 for the m active clients at once: (q_y, q_v, q_x, max ||v_i||).

    x (R, dx), y, v (R, dy) are the server's points; tau (R, m) the clients' step counts; clients with
    fewer steps stop contributing (their a is 0 from step tau_i on).
    """
    m = tau.shape[1]
    eta_y, eta_v, eta_x = eta
    xi, yi, vi = (np.repeat(z[:, None, :], m, axis=1) for z in (x, y, v))
    qy, qv, qx = np.zeros_like(yi), np.zeros_like(vi), np.zeros_like(xi)
    v_max = float(np.linalg.norm(vi, axis=-1).max())
    for k in range(int(tau.max())):
        a = (coeff[k] * (k < tau))[..., None]  # (R, m, 1)
        gy = problem.lower_grad(batch, xi, yi, noise)  # sample zeta
        gv = problem.ls_grad(batch, xi, yi, vi, noise)  # sample psi (HVP and grad_y f share it)
        gx = problem.surrogate_grad(batch, xi, yi, vi, noise)  # sample xi
        yi = yi - (eta_y * a) * gy  # simultaneous: all three gradients at the old triple
        vi = vi - (eta_v * a) * gv  # local v is never projected (spec pitfall 3)
        xi = xi - (eta_x * a) * gx
        qy += a * gy
        qv += a * gv
        qx += a * gx
        v_max = max(v_max, float(np.linalg.norm(vi, axis=-1).max()))
    return qy, qv, qx, v_max


def weighted_sum(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """sum_m weights[r, m] values[r, m, :] -> (R, d)."""
    return np.einsum("rm,rmd->rd", weights, values)


def sampled_weights(problem: BilevelOracles, clients: np.ndarray) -> np.ndarray:
    """pt_i = (n/|C|) p_i for the sampled ids (R, m), not renormalized (eq. (5), spec pitfall 4)."""
    return (problem.num_clients / clients.shape[1]) * problem.p[clients]


def initial_points(problem: BilevelOracles, replicas: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The problem's (x0, y0, v0) broadcast to (R, d) float arrays."""
    start = problem.initial_state()
    x, y, v = (np.broadcast_to(start[k], (replicas, start[k].size)).astype(float) for k in ("x", "y", "v"))
    return x, y, v


@register
@dataclass(frozen=True)
class SimFBO(Algorithm[BilevelOracles]):
    """SimFBO (Algorithm 1 lines 8/12/14, eqs. (4)-(5)): server steps on the a-weighted SUMS q_i."""

    name: ClassVar[str] = "simfbo"
    diagnostics: ClassVar[tuple[Diagnostic, ...]] = (
        Diagnostic.number("rho_bar", "mean server step factor rho^(t) over the rounds"),
        Diagnostic.number("rho_min", "smallest rho^(t) (condition C4: rho^(t) >= rho_bar/2)"),
        Diagnostic.number("rho_max", "largest rho^(t)"),
        Diagnostic.number("local_v_max", "max ||v_i^(t,k)|| over everything (Prop. 1)"),
        Diagnostic.number("radius", "r of the projection P_r (inf: none)"),
    )
    source: ClassVar[str] = "000_66e1ccf0a50396e9.txt Algorithm 1 (SimFBO), eqs. (3)-(5)"
    normalized: ClassVar[bool] = False  # ShroFBO: h_i = q_i/||a_i||_1 and the rho step
    problem_kinds: ClassVar[tuple[str, ...]] = ("quadratic_bilevel",)  # issue #7: problem contract
    monitors: ClassVar[tuple[str, ...]] = ("local_v_max",)  # a running max of the iterates: exact mode skips it

    eta_x: float = real(0.01, "local step of x (eta_x, eq. (3))", positive=True)
    eta_y: float = real(0.01, "local step of y (eta_y, eq. (3))", positive=True)
    eta_v: float = real(0.01, "local step of v (eta_v, eq. (3))", positive=True)
    gamma_x: float = real(0.05, "server step of x (gamma_x, eq. (5))", positive=True)
    gamma_y: float = real(0.2, "server step of y (gamma_y, eq. (5))", positive=True)
    gamma_v: float = real(0.2, "server step of v (gamma_v, eq. (5))", positive=True)
    local_steps: LocalSteps = option(LocalSteps, "local steps tau_i: N, per_client:a,b,..., or uniform:lo:hi",
                                     LocalSteps.parse)
    coefficients: str = option(lambda: "constant", "local coefficients a_i^(k): constant, harmonic, geometric:q",
                               parse_coefficients)
    participation: Participation = option(Participation, "client sampling: full, without_replacement:P, "
                                          "with_replacement:P", Participation.parse)
    radius: Any = option(lambda: "paper", "projection radius r of v: 'paper' (L_f/mu_g), 'off', or a number > 0",
                         parse_radius)
    rho: str = choice("all_clients", "ShroFBO's rho over all clients (paper) or 'sampled' (its estimate over C, "
                      "spec §2.4 option 3)", RHO_MODES)

    def validate(self, problem: BilevelOracles) -> None:
        try:
            self.local_steps.validate(problem.num_clients)
        except ValueError as exc:
            raise ParamError(self.name, "local_steps", str(self.local_steps), str(exc)) from None
        clients = self.participation.clients
        if self.participation.mode != "full" and clients is not None and clients > problem.num_clients:
            raise ParamError(self.name, "participation", str(self.participation),
                             f"P must be <= n = {problem.num_clients}")
        self.participation.validate(problem.num_clients)

    def init(self, problem: BilevelOracles, streams: Streams) -> BilevelState:
        if self.radius == "paper":
            radius = float(problem.constants()["r"].value)
        else:
            radius = np.inf if self.radius == "off" else float(self.radius)
        x, y, v = initial_points(problem, len(streams.replicas))
        return BilevelState(x, y, self._project(v, radius), radius)

    @staticmethod
    def _project(v: np.ndarray, radius: float) -> np.ndarray:
        """P_r on the server v only (spec §2.1); project_ball leaves v = 0 unchanged."""
        if np.isinf(radius):
            return v
        with np.errstate(over="ignore"):  # r/||v|| overflows harmlessly to inf at v = 0
            return project_ball(v, radius)

    def round(self, state: BilevelState, problem: BilevelOracles, t: int, streams: Streams) -> tuple[BilevelState, Costs]:
        n = problem.num_clients
        taus = self.local_steps.sample(n, streams["local_steps"])  # (R, n)
        clients = self.participation.sample(n, streams["sampling"])  # (R, P)
        tau = np.take_along_axis(taus, clients, axis=1)
        coeff = coefficient_table(self.coefficients, self.local_steps.max_steps)
        norms = np.concatenate([[0.0], np.cumsum(coeff)])  # ||a||_1 for tau = 0, 1, ...
        batch = problem.gather(clients)
        qy, qv, qx, v_max = client_update(problem, batch, state.x, state.y, state.v, tau, coeff,
                                          (self.eta_y, self.eta_v, self.eta_x), streams["noise"])
        weights = sampled_weights(problem, clients)
        rho = self._rho(problem.p, norms[taus], norms[tau], weights)  # (R,)
        weights = weights * self._factor(problem.p, norms[taus], norms[tau], weights)
        y = state.y - self.gamma_y * weighted_sum(weights, qy)
        v = self._project(state.v - self.gamma_v * weighted_sum(weights, qv), state.radius)
        x = state.x - self.gamma_x * weighted_sum(weights, qx)
        new = BilevelState(x, y, v, state.radius, state.rho_sum + float(rho.mean()), min(state.rho_min, float(rho.min())),
                           max(state.rho_max, float(rho.max())), max(state.local_v_max, v_max), state.rounds + 1)
        P = float(clients.shape[1])
        return new, {"oracle_calls": tau.sum(axis=1).astype(float), "vectors_up": P, "vectors_down": P}

    def _rho(self, p: np.ndarray, norms_all: np.ndarray, norms_c: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """rho^(t) = sum_j p_j ||a_j||_1 over all n clients (or its estimate over C)."""
        if self.rho == "sampled":
            return (weights * norms_c).sum(axis=1)
        return norms_all @ p

    def _factor(self, p: np.ndarray, norms_all: np.ndarray, norms_c: np.ndarray,
                weights: np.ndarray) -> np.ndarray | float:
        """Per-client multiplier of pt_i q_i: 1 for SimFBO; rho/||a_i||_1 for ShroFBO.

        rho/||a_i||_1 is computed as sum_j p_j (||a_j||_1/||a_i||_1) / sum_j p_j, equal to it since
        sum p = 1; with equal ||a_j||_1 every ratio is exactly 1.0, so ShroFBO's iterates are then
        bit-identical to SimFBO's (spec §6.4 T0(e)) despite p not summing to 1 in floating point.
        """
        if not self.normalized:
            return 1.0
        if self.rho == "sampled":
            return self._rho(p, norms_all, norms_c, weights)[:, None] / norms_c
        ratio = norms_all[:, None, :] / norms_c[:, :, None]  # (R, m, n)
        return (ratio @ p) / p.sum()

    def output(self, state: BilevelState) -> dict[str, np.ndarray]:
        return state.points()

    def info(self, state: BilevelState) -> dict[str, Any]:
        return {"rho_bar": state.rho_sum / max(state.rounds, 1), "rho_min": state.rho_min, "rho_max": state.rho_max,
                "local_v_max": state.local_v_max, "radius": state.radius}


@register
@dataclass(frozen=True)
class ShroFBO(SimFBO):
    """ShroFBO (Algorithm 1 lines 9/13/15, eqs. (6)-(8)): normalized h_i = q_i/||a_i||_1, step rho gamma."""

    name: ClassVar[str] = "shrofbo"
    source: ClassVar[str] = "000_66e1ccf0a50396e9.txt Algorithm 1 (ShroFBO), eqs. (6)-(8)"
    normalized: ClassVar[bool] = True


# Rounds that ignore t and whose map does not depend on the bookkeeping (radius is fixed, the rho sums
# only accumulate): exact mode (ratecheck/exact.py) then probes the map once and carries the bookkeeping
# by its constant steps instead of calling the round every round. Named by the function itself: a
# subclass that overrides round() is not vouched for.
SimFBO.t_free_rounds = (SimFBO.round,)


@register
@dataclass(frozen=True)
class SOBA(SimFBO):
    """The non-federated limit (spec §2, §7.2): SimFBO with n = 1 and tau = 1 is SOBA (Dagreou et al. 2022, [7],
    Algorithm 1: simultaneous y, v, x SGD steps). SOBA does not project v, so ``radius`` defaults to 'off' here;
    'paper' gives SimFBO's P_r at n = 1."""

    name: ClassVar[str] = "soba"
    source: ClassVar[str] = ("Dagreou et al. NeurIPS 2022 (SOBA) Algorithm 1 = 000_66e1ccf0a50396e9.txt Algorithm 1 "
                             "with n = 1, tau = 1 (ref. [7])")

    radius: Any = option(lambda: "off", "projection radius r of v: 'off' (SOBA, the default), 'paper' (SimFBO's "
                         "L_f/mu_g) or a number > 0", parse_radius)

    def validate(self, problem: BilevelOracles) -> None:
        super().validate(problem)
        if problem.num_clients != 1 or str(self.local_steps) != "1":
            raise ValueError(f"soba is the n = 1, tau = 1 limit: got n={problem.num_clients}, local_steps={self.local_steps}")
