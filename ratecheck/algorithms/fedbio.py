"""FedBiO, FedBiOAcc, FedBiO-Local, FedBiOAcc-Local: federated bilevel optimization by local SGD.

Source: ../shared/seeds/002_25acef2c58d2293a.txt (Li, Huang, Huang), Algorithms 1-4; spec
../shared/spec/fedbio.md §2. One engine round is ONE iteration t (t = 1..T); clients keep their own
(x, y, u) (and momenta) between communications, which happen when t % I == 0 (spec pitfall 5), so the
measures are taken every iteration at the virtual averages (pitfall 6). Every client participates.

* ``fedbio`` (Alg. 1): Jacobi steps y -= gamma omega, x -= eta nu, u += tau (grad_y f - H u) from the
  same state (pitfall 1); fresh independent batches B_y (b_y) and B_f1, B_g1, B_f2, B_g2 (b_x); at a sync
  x, y, u are averaged.
* ``fedbioacc`` (Alg. 2): STORM momenta omega, nu, q with ONE fresh batch per client evaluated at the
  old and the new point (pitfall 2), weight 1 - c alpha_t^2 (pitfall 3), steps gamma alpha_t etc.;
  variables and momenta averaged at a sync; a first batch of size b1.
* ``fedbio_local`` (Alg. 3): each client its own y (never averaged), x-direction the Neumann estimator
  of eq. (6) (b_x i.i.d. copies averaged, spec §2.6 item 5; ``neumann_batch='per_factor'``: one chain of
  b_x-minibatch factors); only x is communicated.
* ``fedbioacc_local`` (Alg. 4): STORM on x (nu, averaged) and on the client's y (omega, never averaged);
  b_y = b M (Theorem 8).

Every reading the spec chose (§2.6) is a field defaulting to the paper; the seams a variant overrides
(``samples``, ``sync``, ``u_direction``, ``hypergrad_estimate``) are methods.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..model.diagnostics import Diagnostic
from ..oracles import SampledBilevelOracles
from ..params import ParamError, choice, flag, integer, real
from ..seeding import Streams
from .base import Algorithm, Costs, register
from .periodic import average, is_sync, storm, storm_step_size


@dataclass
class ClientsState:
    """Per-client variables (R, M, .) and momenta, kept across iterations."""

    x: np.ndarray
    y: np.ndarray
    u: np.ndarray | None = None
    momenta: dict[str, np.ndarray] = field(default_factory=dict)
    max_u_norm: float = 0.0  # H1 monitor: max_t,m ||u_t^(m)|| (spec §3.2)
    syncs: int = 0
    max_x_norm: float = 0.0  # max_t,m ||x_t^(m)||: constants taken on a ball (C_f) are checked on it after the run
    max_y_norm: float = 0.0  # max_t,m ||y_t^(m)||


def _tracked(old: ClientsState | None, new: ClientsState) -> ClientsState:
    """``new`` with the running maxima of ||x_t^(m)||, ||y_t^(m)|| and ||u_t^(m)|| (Euclidean, per client) over
    the visited iterates (spec pitfalls 16, 21; H1 of §3.2 bounds ||u|| by C_f/mu)."""
    new.max_x_norm = max(0.0 if old is None else old.max_x_norm, float(np.linalg.norm(new.x, axis=-1).max()))
    new.max_y_norm = max(0.0 if old is None else old.max_y_norm, float(np.linalg.norm(new.y, axis=-1).max()))
    if new.u is not None:
        new.max_u_norm = max(0.0 if old is None else old.max_u_norm, float(np.linalg.norm(new.u, axis=-1).max()))
    return new


def visited(state: ClientsState) -> dict[str, float]:
    """What the after-run ball check reads (info of every FedBiO-type run; absent on exact runs)."""
    return {"max_u_norm": state.max_u_norm, "max_x_norm": state.max_x_norm, "max_y_norm": state.max_y_norm}


def _start(problem: SampledBilevelOracles, replicas: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The common initial (x1, y1, u1) on every client: (R, M, .)."""
    s = problem.initial_state()
    M = problem.num_clients
    return tuple(np.broadcast_to(np.asarray(s[k], float), (replicas, M, np.size(s[k]))).copy() for k in ("x", "y", "v"))


def _constant(problem: SampledBilevelOracles, name: str) -> float:
    return float(problem.constants()[name].value)


def _fit_finite_sum(owner: str, problem: SampledBilevelOracles, batches: dict[str, int]) -> None:
    """N2 (finite sums of K rows, minibatches without replacement): refuse a batch larger than K before running."""
    rows = getattr(problem, "rows_f", None)
    if rows is None or getattr(problem, "replacement", False):
        return
    K = rows.shape[1]
    for name, size in batches.items():
        if size > K:
            raise ParamError(owner, name, size, f"a minibatch without replacement needs <= K = {K} rows per client "
                             "(problem finite_sum); set replacement or a larger finite_sum")


@dataclass(frozen=True)
class FedBiOBase(Algorithm[SampledBilevelOracles]):
    """Shared fields and checks of the four algorithms."""

    diagnostics: ClassVar[tuple[Diagnostic, ...]] = (
        Diagnostic.number("max_u_norm", "largest ||u|| of any client and step (ball check)"),
        Diagnostic.number("max_x_norm", "largest ||x_t^(m)|| (ball check, Assumption A2's region)"),
        Diagnostic.number("max_y_norm", "largest ||y_t^(m)|| (ball check)"),
        Diagnostic.number("syncs", "number of averaging rounds"),
    )

    local: ClassVar[bool] = False  # Alg. 3/4: y never averaged, Neumann x-direction
    monitors: ClassVar[tuple[str, ...]] = ("max_u_norm", "max_x_norm", "max_y_norm")  # running maxima: exact mode skips them

    I: int = integer(1, "communication period I: average when t % I == 0, t = 1, 2, ...", low=1, high=10**6)
    eta: float = real(0.01, "x step eta", positive=True)
    gamma: float = real(0.1, "y step gamma", positive=True)
    steps: str = choice("error", "caps on tau L and tau_N L: 'error' refuses a diverging recursion before "
                        "running; 'record' runs it and lets the engine record the divergence", ("error", "record"))

    def _cap(self: Any, name: str, value: float, L: float, what: str) -> None:  # self: also StocBiO
        if value * L >= 1 and self.steps == "error":
            raise ParamError(self.name, name, value, f"needs {name} * L < 1, i.e. {name} < 1/L = {1 / L:.4g} "
                             f"(L = {L:.4g}): otherwise {what} diverges (spec §6.6)")

    def _hessian_warning(self: Any, problem: SampledBilevelOracles, step: float, name: str) -> None:
        """Warn when a sampled I - step grad_yy g(xi) may expand (contraction needs ||I - step H(xi)|| <= 1,
        spec §6.0): under N2 the sampled Hessians are known rows, under N1 only their noise level."""
        rows = problem.hessian_rows_range() if hasattr(problem, "hessian_rows_range") else None
        if rows is not None:
            low, high = rows
            if step * high >= 1 or low < 0:
                warnings.warn(f"{self.name}: the sampled Hessian rows A_m,i have eigenvalues in [{low:.3g}, "
                              f"{high:.3g}] ({name} * max = {step * high:.3g}): I - {name} A_m,i expands for some row "
                              f"(contraction needs 0 <= {name} lambda(A_m,i) < 1; lower the problem's sigma_H under "
                              "finite_sum, spec §6.0 N2)", stacklevel=2)
            return
        L, sH = _constant(problem, "L"), _constant(problem, "sigma_H")
        if sH > 0 and step * (L + sH) >= 1:
            warnings.warn(f"{self.name}: {name} * (L + sigma_H) = {step * (L + sH):.3g} >= 1: a sampled "
                          f"I - {name} grad_yy g(xi) may expand (contraction needs ||I - {name} H(xi)|| <= 1, "
                          "spec §6.0)", stacklevel=2)

    def batches(self, problem: SampledBilevelOracles) -> dict[str, int]:
        """The minibatch sizes the run draws per oracle call (checked against a finite sum's K)."""
        return {}

    def sync(self, iteration: int) -> bool:
        """Seam: is iteration t a communication?"""
        return is_sync(iteration, self.I)

    def output(self, state: ClientsState) -> dict[str, np.ndarray]:
        out = {"x": state.x.mean(1)}
        if self.local:
            out["y_clients"] = state.y
        else:
            assert state.u is not None  # the global setting tracks u
            out["y"], out["u"] = state.y.mean(1), state.u.mean(1)
        if getattr(self, "client_measures", False):  # the problem then measures the clients' dispersions
            out["x_clients"], out["y_clients"], out["u_clients"] = state.x, state.y, state.u
        return out

    def info(self, state: ClientsState) -> dict[str, Any]:
        return {**visited(state), "syncs": state.syncs}


@register
@dataclass(frozen=True)
class FedBiO(FedBiOBase):
    """Algorithm 1: local SGD on x, y and the quadratic (4) in u, averaged every I iterations."""

    name: ClassVar[str] = "fedbio"
    source: ClassVar[str] = "002_25acef2c58d2293a.txt Algorithm 1 (spec fedbio §2.1)"

    tau: float = real(0.1, "u step tau (one SGD step on eq. (4) per iteration)", positive=True)
    bx: int = integer(1, "batch b_x of the grad f, Jacobian and Hessian oracles", low=1, high=10**6)
    by: int = integer(1, "batch b_y of the grad_y g oracle", low=1, high=10**6)
    u_update: str = choice("sgd", "'sgd': the paper's one step on eq. (4); 'exact': the ablation solving (4) "
                           "exactly at each client's (x, y) with the global Hessian (spec §7)", ("sgd", "exact"))
    client_measures: bool = flag(False, "also hand the client iterates x^(m), y^(m), u^(m) to the problem's "
                                 "measures: the dispersions and the hypergradient bias of Lemma 8 (its hunt); "
                                 "the iterates are unchanged")

    def batches(self, problem: SampledBilevelOracles) -> dict[str, int]:
        return {"bx": self.bx, "by": self.by}

    def validate(self, problem: SampledBilevelOracles) -> None:
        _fit_finite_sum(self.name, problem, self.batches(problem))
        self._cap("tau", self.tau, _constant(problem, "L"), "the u recursion")
        self._hessian_warning(problem, self.tau, "tau")

    def init(self, problem: SampledBilevelOracles, streams: Streams) -> ClientsState:
        x, y, u = _start(problem, len(streams.replicas))
        return _tracked(None, ClientsState(x, y, u))

    def u_direction(self, problem: SampledBilevelOracles, x, y, u, sample) -> np.ndarray:
        """Seam: r = grad_y f - grad_yy g u = -(gradient of eq. (4)); u += tau r (pitfall 7)."""
        return problem.grad_y_f(x, y, sample) - problem.hvp(x, y, u, sample)

    def round(self, state: ClientsState, problem: SampledBilevelOracles, t: int, streams: Streams) -> tuple[ClientsState, Costs]:
        it = t + 1
        noise = streams["noise"]
        M, p, d = problem.num_clients, problem.dim_x, problem.dim_y
        s_y = problem.draw(noise, (M,), self.by, oracles=("gy",))
        s_x = problem.draw(noise, (M,), self.bx, oracles=("fx", "fy", "J", "H"))
        x, y, u = state.x, state.y, state.u
        assert u is not None  # FedBiO tracks u
        omega = problem.grad_y_g(x, y, s_y)
        nu = problem.grad_x_f(x, y, s_x) - problem.jvp(x, y, u, s_x)
        if self.u_update == "exact":
            u_new = self._exact_u(problem, x, y)
        else:
            u_new = u + self.tau * self.u_direction(problem, x, y, u, s_x)
        y_new, x_new = y - self.gamma * omega, x - self.eta * nu
        comm = self.sync(it)
        if comm:
            x_new, y_new, u_new = average(x_new), average(y_new), average(u_new)
        costs = {"communication_rounds": float(comm), "floats_up": float(comm * M * (p + 2 * d)),
                 "floats_down": float(comm * M * (p + 2 * d)),  # Alg. 1: the averages x, y, u sent back
                 "samples_f_per_client": float(2 * self.bx), "samples_g_per_client": float(self.by),
                 "jvp_per_client": float(self.bx), "hvp_per_client": float(self.bx),
                 "oracle_calls": float(M * (self.by + 4 * self.bx))}
        return _tracked(state, ClientsState(x_new, y_new, u_new, syncs=state.syncs + comm)), costs

    @staticmethod
    def _exact_u(problem: SampledBilevelOracles, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """[avg_m grad_yy g_m]^-1 avg_m grad_y f_m at each client's point (exact oracles; ablation)."""
        gy = problem.grad_y_f(x, y, problem.draw(None, ()))
        u = np.linalg.solve(problem.A_bar, gy.mean(1)[..., None])[..., 0]
        return np.broadcast_to(u[:, None, :], gy.shape).copy()


@dataclass(frozen=True)
class StormFields(FedBiOBase):
    """The STORM parameters shared by Algorithms 2 and 4 (spec §2.2, §2.6 items 2 and 4)."""

    b: int = integer(1, "minibatch b per oracle and iteration", low=1, high=10**6)
    b1: int = integer(1, "first batch b1 (Theorem 6: b1 = I^(3/2) b)", low=1, high=10**9)
    alpha_gain: float | None = real(None, "alpha_t = gain (bM)^(2/3)/((bM)^2 u_bar + t)^(1/3); null: the "
                                    "theorem's gain", positive=True, nullable=True)
    u_bar: float | None = real(None, "offset u_bar of alpha_t; null: the theorem's formula", positive=True,
                               nullable=True)
    c_nu: float | None = real(None, "STORM constant c_nu (x momentum); null: the theorem's", low=0.0, nullable=True)
    c_om: float | None = real(None, "STORM constant c_omega (y momentum); null: the theorem's", low=0.0,
                              nullable=True)
    average_momenta: bool = flag(True, "average the momenta at a sync (paper); false: the ablation of spec §7")
    first_batch: str = choice("sampled", "initial momenta from a first batch of b1 samples (paper) or 'exact' "
                              "(noise-free oracles: the b1 -> oo limit, spec §6.6)", ("sampled", "exact"))

    def first_noise(self, streams: Streams) -> Any:
        """The stream of the first batch: None gives the exact oracles."""
        return None if self.first_batch == "exact" else streams["noise"]

    def sample_pair(self, problem: SampledBilevelOracles, noise, shape, batch, **kw) -> tuple[Any, Any]:
        """Seam: the samples at the new and the old point: ONE fresh minibatch used twice (pitfall 2)."""
        s = problem.draw(noise, shape, batch, **kw)
        return s, s


@register
@dataclass(frozen=True)
class FedBiOAcc(StormFields):
    """Algorithm 2: FedBiO with STORM momenta on x, y and u (global lower level)."""

    name: ClassVar[str] = "fedbioacc"
    source: ClassVar[str] = "002_25acef2c58d2293a.txt Algorithm 2 (spec fedbio §2.2)"

    tau: float = real(0.1, "u step tau (effective tau alpha_t)", positive=True)
    c_u: float | None = real(None, "STORM constant c_u (u momentum); null: the theorem's", low=0.0, nullable=True)

    def schedule(self, problem: SampledBilevelOracles) -> dict[str, float]:
        """Theorem 6's constants (spec §4.4) unless set: c_nu, c_om, c_u, u_bar, gain = (16 L_tilde)^(-1/3)."""
        bM = float(self.b * problem.num_clients)
        mu, Lt = _constant(problem, "mu"), _constant(problem, "L_tilde")
        c_nu = 64 / (9 * bM) + 2 / (3 * bM**2) if self.c_nu is None else self.c_nu
        c_om = 48**2 / (bM * mu**2) + 2 / (3 * bM**2) if self.c_om is None else self.c_om
        c_u = c_om if self.c_u is None else self.c_u
        u_bar = max(2.0, 16**2 * self.I**4.5 * Lt**2, c_nu**1.5, c_om**1.5) if self.u_bar is None else self.u_bar
        gain = (16 * Lt) ** (-1 / 3) if self.alpha_gain is None else self.alpha_gain
        return {"bM": bM, "c_nu": c_nu, "c_om": c_om, "c_u": c_u, "u_bar": u_bar, "gain": gain}

    def batches(self, problem: SampledBilevelOracles) -> dict[str, int]:
        return {"b": self.b, **({"b1": self.b1} if self.first_batch == "sampled" else {})}

    def validate(self, problem: SampledBilevelOracles) -> None:
        _fit_finite_sum(self.name, problem, self.batches(problem))
        sch = self.schedule(problem)
        a1 = storm_step_size(1, sch["bM"], sch["u_bar"], sch["gain"])
        self._cap("tau alpha_1", self.tau * a1, _constant(problem, "L"), "the u recursion")
        self._hessian_warning(problem, self.tau * a1, "tau alpha_1")

    def targets(self, problem: SampledBilevelOracles, x, y, u, s) -> dict[str, np.ndarray]:
        """G, Mu, P of spec §2.2 at one point for one sample (each point its own u, §2.6 item 3)."""
        return {"om": problem.grad_y_g(x, y, s),
                "nu": problem.grad_x_f(x, y, s) - problem.jvp(x, y, u, s),
                "q": problem.hvp(x, y, u, s) - problem.grad_y_f(x, y, s)}

    def init(self, problem: SampledBilevelOracles, streams: Streams) -> ClientsState:
        x, y, u = _start(problem, len(streams.replicas))
        s = problem.draw(self.first_noise(streams), (problem.num_clients,), self.b1)
        return _tracked(None, ClientsState(x, y, u, self.targets(problem, x, y, u, s)))

    def round(self, state: ClientsState, problem: SampledBilevelOracles, t: int, streams: Streams) -> tuple[ClientsState, Costs]:
        it = t + 1
        sch = self.schedule(problem)
        a = storm_step_size(it, sch["bM"], sch["u_bar"], sch["gain"])
        M, p, d = problem.num_clients, problem.dim_x, problem.dim_y
        mom = state.momenta
        assert state.u is not None  # FedBiOAcc tracks u
        x_new = state.x - self.eta * a * mom["nu"]
        y_new = state.y - self.gamma * a * mom["om"]
        u_new = state.u - self.tau * a * mom["q"]
        comm = self.sync(it)
        if comm:
            x_new, y_new, u_new = average(x_new), average(y_new), average(u_new)
        s_new, s_old = self.sample_pair(problem, streams["noise"], (M,), self.b)
        new = self.targets(problem, x_new, y_new, u_new, s_new)
        old = self.targets(problem, state.x, state.y, state.u, s_old)
        weight = {"om": 1 - sch["c_om"] * a**2, "nu": 1 - sch["c_nu"] * a**2, "q": 1 - sch["c_u"] * a**2}
        momenta = {k: storm(new[k], old[k], mom[k], weight[k]) for k in mom}
        if comm and self.average_momenta:
            momenta = {k: average(v) for k, v in momenta.items()}
        down = comm * M * (p + 2 * d) * (2 if self.average_momenta else 1)  # averages of x, y, u (and momenta)
        first = self.b1 if it == 1 and self.first_batch == "sampled" else 0  # Alg. 2 line 2: the b1 batch
        costs = {"communication_rounds": float(comm), "floats_up": float(comm * M * 2 * (p + 2 * d)),
                 "floats_down": float(down), "samples_f_per_client": float(4 * self.b + 2 * first),
                 "samples_g_per_client": float(2 * self.b + first),
                 "jvp_per_client": float(2 * self.b + first), "hvp_per_client": float(2 * self.b + first),
                 "oracle_calls": float(M * (10 * self.b + 5 * first))}
        return _tracked(state, ClientsState(x_new, y_new, u_new, momenta, syncs=state.syncs + comm)), costs


def neumann_chain(seams: Any, problem: SampledBilevelOracles, x: np.ndarray, y: np.ndarray, sample: Any,
                  Q: int) -> np.ndarray:
    """Phi-hat(x, y; xi) of eq. (6) through the seams: v_0 = grad_y f, v_k = (I - tau_N H(xi_{Q-k+1})) v_{k-1},
    grad_x f - tau_N grad_xy g sum_{k<=Q} v_k; independent Hessian draws, one xi_f for both blocks of grad f (spec
    §1.2, pitfall 11), each draw possibly a minibatch mean (spec §2.6 item 5). Exact mode runs these very seams."""
    v = seams.neumann_start(problem, x, y, sample)
    total = v.copy()
    for k in range(1, Q + 1):
        v = seams.neumann_factor(problem, x, y, v, sample, Q - k)
        total += v
    return seams.neumann_finish(problem, x, y, total, sample)


@dataclass(frozen=True)
class NeumannFields(FedBiOBase):
    """The Neumann-series fields of Algorithms 3 and 4 (eq. (6), spec §1.2)."""

    local: ClassVar[bool] = True

    Q: int = integer(5, "Neumann truncation Q (Q+1 terms, Q Hessian samples)", low=0, high=10**4)
    tau_N: float = real(0.2, "Neumann scaling tau_N (< 1/L)", positive=True)
    gamma: float = real(0.1, "y step gamma (Theorem 7: 1/(2L))", positive=True)
    neumann_batch: str = choice("copies", "the minibatch Phi-hat(x, y; B_x) of eq. (6), ambiguous in the paper (spec "
                                "§2.6 item 5): 'copies' averages b_x i.i.d. single-sample estimators, each with its "
                                "own Q + 2 samples (the spec's reading); 'per_factor' is ONE product chain whose "
                                "factors are b_x-minibatches (grad f, the Jacobian, each of the Q Hessians)",
                                ("copies", "per_factor"))

    def validate(self, problem: SampledBilevelOracles) -> None:
        if getattr(problem, "setting", "local") != "local":
            raise ParamError(self.name, "problem", problem.family, "needs a local lower-level problem "
                             "(setting 'local', eq. (5))")
        _fit_finite_sum(self.name, problem, self.batches(problem))
        self._cap("tau_N", self.tau_N, _constant(problem, "L"), "the Neumann series")
        self._hessian_warning(problem, self.tau_N, "tau_N")

    def neumann_layout(self, problem: SampledBilevelOracles, batch: int) -> tuple[tuple[int, ...], int]:
        """(client shape, minibatch) of one Neumann draw of ``batch`` samples per client and factor: b_x copies
        of single samples (M, b_x) x 1, or one chain of b_x-minibatches (M,) x b_x. Either way a client's
        estimate costs b_x samples of grad f (one xi_f for both blocks), b_x JVPs and b_x Q HVPs."""
        M = problem.num_clients
        return ((M, batch), 1) if self.neumann_batch == "copies" else ((M,), batch)

    def neumann_oracles(self) -> dict[str, Any]:
        """The draw's oracles: xi_f (shared by grad_x f and grad_y f), xi_g (Jacobian), xi_1..xi_Q (Hessians)."""
        return {"hessians": max(self.Q, 1), "oracles": ("fx", "fy", "J", "H"), "share_f": True}

    def neumann_start(self, problem: SampledBilevelOracles, x: np.ndarray, y: np.ndarray, sample: Any) -> np.ndarray:
        """Seam: the series' first term v_0 = grad_y f(x, y; xi_f) of eq. (6)."""
        return problem.grad_y_f(x, y, sample)

    def neumann_factor(self, problem: SampledBilevelOracles, x: np.ndarray, y: np.ndarray, v: np.ndarray, sample: Any,
                       k: int) -> np.ndarray:
        """Seam: one factor of eq. (6)'s products, v <- (I - tau_N grad_yy g(x, y; xi_k)) v (the k-th Hessian draw)."""
        return v - self.tau_N * problem.hvp(x, y, v, sample, k)

    def neumann_finish(self, problem: SampledBilevelOracles, x: np.ndarray, y: np.ndarray, total: np.ndarray,
                       sample: Any) -> np.ndarray:
        """Seam: Phi-hat = grad_x f(x, y; xi_f) - tau_N grad_xy g(x, y; xi_g) sum_k v_k."""
        return problem.grad_x_f(x, y, sample) - self.tau_N * problem.jvp(x, y, total, sample)

    def hypergrad_estimate(self, problem: SampledBilevelOracles, x: np.ndarray, y: np.ndarray, sample: Any, batch: int) -> np.ndarray:
        """Seam: Phi-hat of eq. (6) from a draw laid out by ``neumann_layout`` (spec §2.6 item 5): the mean of
        ``batch`` i.i.d. single-sample estimators, or the one chain of minibatch factors (per_factor)."""
        if self.neumann_batch == "per_factor":
            return neumann_chain(self, problem, x, y, sample, self.Q)
        R, M, p = x.shape
        xc = np.broadcast_to(x[:, :, None, :], (R, M, batch, p))
        yc = np.broadcast_to(y[:, :, None, :], (R, M, batch, y.shape[-1]))
        return neumann_chain(self, problem, xc, yc, sample, self.Q).mean(axis=2)

    def draw_neumann(self, problem: SampledBilevelOracles, noise, batch: int) -> Any:
        return problem.draw(noise, *self.neumann_layout(problem, batch), **self.neumann_oracles())

    def neumann_batches(self, name: str, batch: int) -> dict[str, int]:
        """The Neumann minibatch a finite sum must hold: per_factor draws ``batch`` rows per factor, copies 1."""
        return {name: batch} if self.neumann_batch == "per_factor" else {}

    def init(self, problem: SampledBilevelOracles, streams: Streams) -> ClientsState:
        x, y, _ = _start(problem, len(streams.replicas))
        return _tracked(None, ClientsState(x, y))


@register
@dataclass(frozen=True)
class FedBiOLocal(NeumannFields):
    """Algorithm 3: local lower levels; y stays on the client, x moves along the Neumann estimator."""

    name: ClassVar[str] = "fedbio_local"
    source: ClassVar[str] = "002_25acef2c58d2293a.txt Algorithm 3, eq. (6) (spec fedbio §2.3)"

    bx: int = integer(1, "minibatch b_x of eq. (6): b_x i.i.d. single-sample estimators, or b_x samples per factor "
                      "(neumann_batch)", low=1, high=10**6)
    by: int = integer(1, "batch b_y of the grad_y g oracle", low=1, high=10**6)

    def batches(self, problem: SampledBilevelOracles) -> dict[str, int]:
        return {"by": self.by, **self.neumann_batches("bx", self.bx)}

    def draw_lower(self, problem: SampledBilevelOracles, noise: Any) -> Any:  # B_y: b_y samples per client
        return problem.draw(noise, (problem.num_clients,), self.by, oracles=("gy",))

    def local_step(self, problem: SampledBilevelOracles, x: np.ndarray, y: np.ndarray, nu: np.ndarray,
                   s_y: Any) -> tuple[np.ndarray, np.ndarray]:
        """Seam: one local step of Algorithm 3, x - eta nu and y - gamma grad_y g(x, y; B_y), from the same point."""
        return x - self.eta * nu, y - self.gamma * problem.grad_y_g(x, y, s_y)

    def communicate(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return average(x), y  # seam: a sync averages x; y is never averaged (pitfall 4)

    def round(self, state: ClientsState, problem: SampledBilevelOracles, t: int, streams: Streams) -> tuple[ClientsState, Costs]:
        it = t + 1
        noise = streams["noise"]
        M, p = problem.num_clients, problem.dim_x
        s_y = self.draw_lower(problem, noise)
        nu = self.hypergrad_estimate(problem, state.x, state.y, self.draw_neumann(problem, noise, self.bx), self.bx)
        x_new, y_new = self.local_step(problem, state.x, state.y, nu, s_y)
        comm = self.sync(it)
        if comm:
            x_new, y_new = self.communicate(x_new, y_new)
        costs = {"communication_rounds": float(comm), "floats_up": float(comm * M * p), "floats_down": float(comm * M * p),
                 "samples_f_per_client": float(self.bx), "samples_g_per_client": float(self.by),
                 "jvp_per_client": float(self.bx), "hvp_per_client": float(self.bx * self.Q),
                 "oracle_calls": float(M * (self.by + self.bx * (self.Q + 3)))}
        return _tracked(state, ClientsState(x_new, y_new, syncs=state.syncs + comm)), costs


@register
@dataclass(frozen=True)
class FedBiOAccLocal(NeumannFields, StormFields):
    """Algorithm 4: STORM on x (nu, averaged at syncs) and on each client's y (omega, never averaged)."""

    name: ClassVar[str] = "fedbioacc_local"
    source: ClassVar[str] = "002_25acef2c58d2293a.txt Algorithm 4 (spec fedbio §2.4)"

    by: int | None = integer(None, "lower batch b_y; null: b M (Theorem 8)", low=1, high=10**9, nullable=True)

    def batches(self, problem: SampledBilevelOracles) -> dict[str, int]:
        by = self.b * problem.num_clients if self.by is None else self.by
        first = {"b_y1": self.b1 * by // self.b, **self.neumann_batches("b1", self.b1)} \
            if self.first_batch == "sampled" else {}
        return {"by": by, **self.neumann_batches("b", self.b), **first}

    def schedule(self, problem: SampledBilevelOracles) -> dict[str, float]:
        """Theorem 8's constants (spec §4.6) unless set; gain = Lhat^(-2/3)."""
        bM = float(self.b * problem.num_clients)
        L, mu, Lh = _constant(problem, "L"), _constant(problem, "mu"), _constant(problem, "Lhat")
        c_nu = 32 / (9 * bM) + Lh / (24 * self.I * bM**2) if self.c_nu is None else self.c_nu
        c_om = 144 * L**2 / (bM * mu**2) + Lh / (24 * self.I * bM**2) if self.c_om is None else self.c_om
        u_bar = max(2.0, 16**3 * self.I**4.5 * Lh, c_nu**1.5, c_om**1.5) if self.u_bar is None else self.u_bar
        gain = Lh ** (-2 / 3) if self.alpha_gain is None else self.alpha_gain
        return {"bM": bM, "c_nu": c_nu, "c_om": c_om, "u_bar": u_bar, "gain": gain}

    def init(self, problem: SampledBilevelOracles, streams: Streams) -> ClientsState:
        x, y, _ = _start(problem, len(streams.replicas))
        M = problem.num_clients
        noise = self.first_noise(streams)
        by1 = self.b1 * M if self.by is None else self.b1 * self.by // self.b  # Theorem 8: |B_y1| = b1 M
        om = problem.grad_y_g(x, y, problem.draw(noise, (M,), max(by1, 1), oracles=("gy",)))
        batch = 1 if noise is None else self.b1  # exact oracles: every copy is the same
        nu = self.hypergrad_estimate(problem, x, y, self.draw_neumann(problem, noise, batch), batch)
        return _tracked(None, ClientsState(x, y, momenta={"om": om, "nu": nu}))

    def round(self, state: ClientsState, problem: SampledBilevelOracles, t: int, streams: Streams) -> tuple[ClientsState, Costs]:
        it = t + 1
        sch = self.schedule(problem)
        a = storm_step_size(it, sch["bM"], sch["u_bar"], sch["gain"])
        M, p = problem.num_clients, problem.dim_x
        by = self.b * M if self.by is None else self.by
        mom = state.momenta
        x_new = state.x - self.eta * a * mom["nu"]
        y_new = state.y - self.gamma * a * mom["om"]
        comm = self.sync(it)
        if comm:
            x_new = average(x_new)
        noise = streams["noise"]
        sy_new, sy_old = self.sample_pair(problem, noise, (M,), by, oracles=("gy",))
        om = storm(problem.grad_y_g(x_new, y_new, sy_new), problem.grad_y_g(state.x, state.y, sy_old), mom["om"],
                   1 - sch["c_om"] * a**2)
        sx_new, sx_old = self.sample_pair(problem, noise, *self.neumann_layout(problem, self.b),
                                          **self.neumann_oracles())  # every Neumann sample at both points
        nu = storm(self.hypergrad_estimate(problem, x_new, y_new, sx_new, self.b),
                   self.hypergrad_estimate(problem, state.x, state.y, sx_old, self.b), mom["nu"], 1 - sch["c_nu"] * a**2)
        if comm and self.average_momenta:
            nu = average(nu)  # omega stays on the client
        costs = {"communication_rounds": float(comm), "floats_up": float(comm * M * 2 * p),
                 "floats_down": float(comm * M * p * (2 if self.average_momenta else 1)),  # x (and nu) averaged
                 "samples_f_per_client": float(2 * self.b), "samples_g_per_client": float(2 * by),
                 "jvp_per_client": float(2 * self.b), "hvp_per_client": float(2 * self.b * self.Q),
                 "oracle_calls": float(M * 2 * (by + self.b * (self.Q + 3)))}
        return _tracked(state, ClientsState(x_new, y_new, momenta={"om": om, "nu": nu}, syncs=state.syncs + comm)), costs


@register
@dataclass(frozen=True)
class MRBOLike(FedBiOAccLocal):
    """The centralized reference of spec §7: FedBiOAcc-Local with M = 1 is a MRBO-type single-loop method
    (STORM on both levels, the Neumann estimator of eq. (6))."""

    name: ClassVar[str] = "mrbo_like"
    source: ClassVar[str] = "002_25acef2c58d2293a.txt Algorithm 4 with M = 1 (MRBO [50], spec fedbio §7)"

    def validate(self, problem: SampledBilevelOracles) -> None:
        super().validate(problem)
        if problem.num_clients != 1:
            raise ParamError(self.name, "problem.clients", problem.num_clients, "the centralized reference needs M = 1")


@register
@dataclass(frozen=True)
class StocBiO(Algorithm[SampledBilevelOracles]):
    """StocBiO (Ji, Yang, Liang, ICML 2021; ref. [20] of the paper, spec §7): the centralized (M = 1) double-loop
    reference. One engine round is one outer iteration k: D warm-started SGD steps on y with fresh batches of
    size b_y, then x_{k+1} = x_k - alpha [grad_x f - grad_xy g eta_N sum_{q=0}^{Q} prod (I - eta_N grad_yy g) grad_y f]
    at (x_k, y_k^D), every oracle a minibatch of b samples, each of the Q Hessian factors its own batch (StocBiO's
    Algorithm 2; the same estimator as eq. (6) of the FedBiO paper)."""

    name: ClassVar[str] = "stocbio"
    diagnostics: ClassVar[tuple[Diagnostic, ...]] = (
        Diagnostic.number("max_u_norm", "largest ||u|| of any client and step (ball check)"),
        Diagnostic.number("max_x_norm", "largest ||x_t^(m)|| (ball check, Assumption A2's region)"),
        Diagnostic.number("max_y_norm", "largest ||y_t^(m)|| (ball check)"),
    )
    source: ClassVar[str] = "Ji, Yang, Liang 2021 (StocBiO), Algorithms 1-2; ref. [20] of 002_25acef2c58d2293a.txt (spec §7)"
    eta: float = real(0.1, "x step alpha", positive=True)
    gamma: float = real(0.1, "inner y step beta", positive=True)
    D: int = integer(5, "inner SGD steps on y per outer iteration (warm start)", low=1, high=10**6)
    Q: int = integer(5, "Neumann truncation Q (Q+1 terms, Q Hessian batches)", low=0, high=10**4)
    tau_N: float = real(0.2, "Neumann scaling eta_N (< 1/L)", positive=True)
    b: int = integer(1, "batch of the grad f, Jacobian and each Hessian oracle", low=1, high=10**6)
    by: int = integer(1, "batch of each inner grad_y g step", low=1, high=10**6)
    steps: str = choice("error", "cap on tau_N L: 'error' refuses a diverging Neumann series before running; "
                        "'record' runs it and lets the engine record the divergence", ("error", "record"))

    # the caps and the Hessian warning read only name and steps: FedBiO's checks, shared
    _cap = FedBiOBase._cap
    _hessian_warning = FedBiOBase._hessian_warning

    def validate(self, problem: SampledBilevelOracles) -> None:
        if problem.num_clients != 1:
            raise ParamError(self.name, "problem.clients", problem.num_clients, "the centralized reference needs M = 1")
        _fit_finite_sum(self.name, problem, {"b": self.b, "by": self.by})
        self._cap("tau_N", self.tau_N, _constant(problem, "L"), "the Neumann series")
        self._hessian_warning(problem, self.tau_N, "tau_N")

    monitors: ClassVar[tuple[str, ...]] = FedBiOBase.monitors

    def output(self, state: ClientsState) -> dict[str, np.ndarray]:
        return {"x": state.x[:, 0], "y": state.y[:, 0], "y_clients": state.y}

    def info(self, state: ClientsState) -> dict[str, Any]:
        return visited(state)

    def init(self, problem: SampledBilevelOracles, streams: Streams) -> ClientsState:
        x, y, _ = _start(problem, len(streams.replicas))
        return _tracked(None, ClientsState(x, y))

    # the chain's stages read only tau_N: FedBiO-Local's seams, shared
    neumann_start = NeumannFields.neumann_start
    neumann_factor = NeumannFields.neumann_factor
    neumann_finish = NeumannFields.neumann_finish

    def hypergrad_estimate(self, problem: SampledBilevelOracles, x: np.ndarray, y: np.ndarray, sample: Any) -> np.ndarray:
        """Seam: the Neumann hypergradient of StocBiO's Algorithm 2 (one minibatch per oracle and factor)."""
        return neumann_chain(self, problem, x, y, sample, self.Q)

    def round(self, state: ClientsState, problem: SampledBilevelOracles, t: int, streams: Streams) -> tuple[ClientsState, Costs]:
        noise = streams["noise"]
        y = state.y
        for _ in range(self.D):  # inner loop on y at the current x
            y = y - self.gamma * problem.grad_y_g(state.x, y, problem.draw(noise, (1,), self.by, oracles=("gy",)))
        s = problem.draw(noise, (1,), self.b, hessians=max(self.Q, 1), oracles=("fx", "fy", "J", "H"), share_f=True)
        x = state.x - self.eta * self.hypergrad_estimate(problem, state.x, y, s)
        costs = {"communication_rounds": 0.0, "floats_up": 0.0, "floats_down": 0.0, "samples_f_per_client": float(self.b),
                 "samples_g_per_client": float(self.D * self.by), "jvp_per_client": float(self.b),
                 "hvp_per_client": float(self.Q * self.b),
                 "oracle_calls": float(self.D * self.by + self.b * (self.Q + 3))}
        return _tracked(state, ClientsState(x, y)), costs
