"""Federated bilevel baselines of spec ../shared/spec/simfbo.md §7.2 (Table 1 of
../shared/seeds/000_66e1ccf0a50396e9.txt), shared with later bilevel work (FedBiO).

* ``fednest`` / ``lfednest``: Tarzanagh et al., "FedNest", ICML 2022 (ref. [65] of the SimFBO paper),
  Algorithms 1-4. One outer iteration (= one ``round`` here, which costs many communications):
  - FedInn: ``inner_rounds`` rounds of ``local_steps`` local SGD steps on y; FedNest corrects each
    local gradient SVRG-style, grad g_i(y_i; B_nu) - grad g_i(y; B_nu) + (aggregated grad g)(y), ONE
    minibatch B_nu at both points (Algorithm 2 line 7; the authors' SVRGClient evaluates one batch on the
    local and the snapshot model), which costs one extra communication per round (2 per FedInn round);
    LFedNest uses plain local SGD (1 per round). ``svrg_sample='anchor'`` is a named deviation: the
    anchor's own sample subtracted at every local step (it adds the noise of two samples).
  - FedIHGP (Algorithm 3, ``neumann='random'``, the default): the server draws N' uniformly on {0, ..., N-1}
    (N = ``neumann_terms``, one draw per outer iteration, stream 'truncation'); p_0 = sum pt_i grad_y f_i(x, y;
    xi_i) (one communication), then N' times p_n = p_{n-1} + sum pt_i (p_{i,n} - p_{n-1}) with p_{i,n} = (I -
    H_i(zeta_{i,n})/l) p_{n-1} (one communication each, the global Hessian), and the estimate (N/l) p_{N'}:
    unbiased for the N-term series sum_{j<N} (I - H/l)^j grad_y F / l (1/l = ``neumann_step``). An HVP is the LS
    gradient at p minus the LS gradient at 0 on one sample. LFedNest runs the same chain on each client with its
    own Hessian and the server's N' (no communication). ``neumann='series'`` is a named deviation (the FedNest
    authors' code): the deterministic series as N gradient steps of size 1/l on the LS loss from v = 0, each
    term with its own grad_y f sample (same mean, a different variance, N communications).
  - FedOut: ``local_steps`` local x steps on the surrogate grad f_i(x, y, v) with the new y and the
    IHGP v; SVRG-corrected with one aggregation of the surrogate first (FedNest, 2 communications) or
    plain (LFedNest, 1), the SVRG difference again on one minibatch. The server averages the local models'
    updates with weights pt_i, y + sum_C pt_i (y_i - y): the paper's |S|^-1 sum y_i for uniform p, and
    unbiased for any p (sum_C pt_i is not 1 under sampling, so sum_C pt_i y_i would rescale the model).
  The costs report ``communication_rounds`` per outer iteration: 2 I + (N' + 1) + 2 (FedNest; 2 I + N + 2 with
  'series'), I + 1 (LFedNest); oracle calls per client (I + 1)(2K + 1) + N' + 1 (FedNest), (I + 1) K + N' + 1
  (LFedNest), with N for N' + 1 under 'series'.
* ``naive_hypergrad``: each client forms its own exact hypergradient at its own y_i*, v_i* (spec §7.2,
  §1.2) and the server averages them: biased when the A_i differ (the client-drift bias of §1.2).
* ``fednova``: FedNova (Wang et al. 2020, ref. [67]) is ShroFBO's normalized aggregation on a problem
  whose levels are decoupled (B = 0): x <- x - gamma_x tau_eff sum pt_i d_i, d_i = q_i/||a_i||_1,
  tau_eff = rho = sum p_j ||a_j||_1 (spec §7.2, the single-level sanity check).

Participation is sampled once per outer iteration and used by all its sub-loops (the papers sample per
round of the sub-loops; with ``participation`` full, the default, the two coincide).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np

from ..model.participation import Participation
from ..oracles import BilevelOracles
from ..params import ParamError, choice, integer, option, real
from ..seeding import ReplicaStream, Streams
from .base import Algorithm, Costs, register
from .bilevel import BILEVEL_FAMILIES, BilevelState, ShroFBO, initial_points, sampled_weights, weighted_sum

SVRG_SAMPLES = ("shared", "anchor")
NEUMANN_MODES = ("random", "series")


def _spread(z: np.ndarray, m: int) -> np.ndarray:
    """A server point (R, d) copied to the m active clients (R, m, d)."""
    return np.repeat(z[:, None, :], m, axis=1)


def _check_clients(owner: str, participation: Participation, problem: BilevelOracles) -> None:
    if participation.mode != "full" and participation.clients is not None and participation.clients > problem.num_clients:
        raise ParamError(owner, "participation", str(participation), f"P must be <= n = {problem.num_clients}")
    participation.validate(problem.num_clients)


def _averaged(weights: np.ndarray, start: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Model averaging of the clients' iterates (R, m, d) from the server point (R, d): start + sum pt_i delta_i."""
    return start + weighted_sum(weights, local - start[:, None, :])


class _Replay:
    """One minibatch at two points (the SVRG difference of FedNest's Algorithms 2 and 4, line 7): the first
    evaluation draws and keeps a copy of every number, ``replay()`` makes the next evaluation reuse them in the
    same order. Copies, because a served draw may be scaled in place by the oracle."""

    def __init__(self, stream: ReplicaStream) -> None:
        self._stream, self._at = stream, -1
        self._drawn: list[np.ndarray] = []

    @property
    def count(self) -> int:
        return self._stream.count

    def _serve(self, kind: str, *args: Any) -> np.ndarray:
        if self._at < 0:
            value = getattr(self._stream, kind)(*args)
            self._drawn.append(np.array(value, copy=True))
            return value
        value = self._drawn[self._at]
        self._at += 1
        return value.copy()

    def normal(self, shape: tuple[int, ...] = ()) -> np.ndarray:
        return self._serve("normal", shape)

    def uniform(self, shape: tuple[int, ...] = ()) -> np.ndarray:
        return self._serve("uniform", shape)

    def integers(self, high: int, shape: tuple[int, ...] = ()) -> np.ndarray:
        return self._serve("integers", high, shape)

    def replay(self) -> None:
        self._at = 0


def _participation() -> Any:
    return option(Participation, "client sampling, once per outer iteration: full, without_replacement:P, "
                  "with_replacement:P", Participation.parse)


@register
@dataclass(frozen=True)
class FedNest(Algorithm[BilevelOracles]):
    """FedNest (Tarzanagh et al. 2022, Algorithms 1-4): FedInn, FedIHGP, FedOut sub-loops per outer step."""

    name: ClassVar[str] = "fednest"
    source: ClassVar[str] = "Tarzanagh et al. ICML 2022 (FedNest), Algorithms 1-4; ref. [65] of 000_66e1ccf0a50396e9.txt"
    light: ClassVar[bool] = False  # LFedNest: plain local SGD, client-local IHGP
    problem_kinds: ClassVar[tuple[str, ...]] = BILEVEL_FAMILIES  # issue #7: problem contract

    eta_y: float = real(0.1, "FedInn local step on y (beta)", positive=True)
    eta_x: float = real(0.05, "FedOut local step on x (alpha)", positive=True)
    neumann_step: float = real(0.5, "1/l in the Neumann series of FedIHGP (needs l >= L_1)", positive=True)
    inner_rounds: int = integer(5, "FedInn rounds per outer iteration", low=1, high=10**6)
    local_steps: int = integer(1, "local steps in FedInn and FedOut", low=1, high=10**6)
    neumann_terms: int = integer(10, "Neumann terms N of FedIHGP", low=1, high=10**6)
    participation: Participation = _participation()
    svrg_sample: str = choice("shared", "FedNest's SVRG difference grad(z_i; B) - grad(z; B): 'shared' one "
                              "minibatch B at both points (Algorithms 2, 4 line 7); 'anchor' subtracts the anchor's "
                              "own sample at every step (deviation)", SVRG_SAMPLES)
    neumann: str = choice("random", "FedIHGP's estimate: 'random' Algorithm 3's (N/l) prod_{n<=N'} (I - H_n/l) grad_y f "
                          "with N' uniform on {0..N-1} each outer iteration; 'series' the deterministic N-term "
                          "truncated series as N LS steps from v = 0 (deviation, the authors' code)", NEUMANN_MODES)

    def validate(self, problem: BilevelOracles) -> None:
        _check_clients(self.name, self.participation, problem)

    def init(self, problem: BilevelOracles, streams: Streams) -> BilevelState:
        return BilevelState(*initial_points(problem, len(streams.replicas)), radius=np.inf)

    def _corrected(self, grad: Callable[[np.ndarray, ReplicaStream], np.ndarray], local: np.ndarray,
                   anchor_point: np.ndarray, correction: Any, anchor: Any, noise: ReplicaStream) -> np.ndarray:
        """One local direction: grad(local) plain (LFedNest), or SVRG-corrected with the aggregate (FedNest)."""
        if self.light:
            return grad(local, noise)
        if self.svrg_sample == "anchor":
            return grad(local, noise) - anchor + correction
        same = _Replay(noise)
        at_local = grad(local, cast(ReplicaStream, same))
        same.replay()
        return at_local - grad(anchor_point, cast(ReplicaStream, same)) + correction

    def communications(self, terms: np.ndarray | int) -> np.ndarray | int:
        """Communication rounds per outer iteration: every sub-loop round counts (spec §7.2); ``terms`` the
        Neumann terms FedIHGP aggregated (N' + 1, or N with 'series')."""
        if self.light:
            return self.inner_rounds + 1
        return 2 * self.inner_rounds + terms + 2

    def _series(self, problem: BilevelOracles, batch: Any, x_c: np.ndarray, y_c: np.ndarray, weights: np.ndarray,
                noise: ReplicaStream) -> np.ndarray:
        """FedIHGP as the deterministic N-term series: N LS gradient steps of size 1/l from v = 0 ('series')."""
        m = y_c.shape[1]
        v_i = np.zeros_like(y_c)
        for _ in range(self.neumann_terms):
            grad = problem.ls_grad(batch, x_c, y_c, v_i, noise)
            if self.light:  # each client's own Hessian, no communication
                v_i = v_i - self.neumann_step * grad
            else:  # the global Hessian: aggregate every term (1 communication each)
                v_i = _spread(v_i[:, 0] - self.neumann_step * weighted_sum(weights, grad), m)
        return v_i

    def _random(self, problem: BilevelOracles, batch: Any, x_c: np.ndarray, y_c: np.ndarray, weights: np.ndarray,
                noise: ReplicaStream, depth: np.ndarray) -> np.ndarray:
        """FedIHGP of Algorithm 3: (N/l) prod_{n=1}^{N'} (I - H_n/l) grad_y f, N' = ``depth`` (R,) per replica.
        Every replica draws the samples of all N - 1 factors (a replica's numbers must not depend on the others'
        N'); a factor past its N' is not applied."""
        m = y_c.shape[1]
        zero = np.zeros_like(y_c)
        grad_f = -problem.ls_grad(batch, x_c, y_c, zero, noise)  # grad_y f_i(x, y; xi_{i,0}): R at v = 0
        p_n = grad_f if self.light else _spread(weighted_sum(weights, grad_f), m)  # p_0: 1 communication
        for n in range(1, self.neumann_terms):
            same = _Replay(noise)  # H_i p = grad R(p) - grad R(0) on one sample zeta_{i,n}
            at_p = problem.ls_grad(batch, x_c, y_c, p_n, cast(ReplicaStream, same))
            same.replay()
            hvp = at_p - problem.ls_grad(batch, x_c, y_c, zero, cast(ReplicaStream, same))
            if self.light:  # the client's own Hessian
                step = p_n - self.neumann_step * hvp
            else:  # p_n = p_{n-1} + sum pt_i (p_{i,n} - p_{n-1}): 1 communication
                step = _spread(p_n[:, 0] - self.neumann_step * weighted_sum(weights, hvp), m)
            p_n = np.where((n <= depth)[:, None, None], step, p_n)
        return self.neumann_terms * self.neumann_step * p_n

    def round(self, state: BilevelState, problem: BilevelOracles, t: int, streams: Streams) -> tuple[BilevelState, Costs]:
        clients = self.participation.sample(problem.num_clients, streams["sampling"])
        weights = sampled_weights(problem, clients)
        m = clients.shape[1]
        batch = problem.gather(clients)
        noise = streams["noise"]
        x_c = _spread(state.x, m)
        y = state.y
        anchor: Any = 0.0  # the SVRG anchor and aggregate (FedNest only)
        aggregate: Any = 0.0
        for _ in range(self.inner_rounds):  # FedInn (Algorithm 2)
            y_c = _spread(y, m)
            y_i = y_c
            if not self.light:  # q = sum pt_i grad g_i(x, y; B_i): 1 communication
                anchor = problem.lower_grad(batch, x_c, y_c, noise)
                aggregate = weighted_sum(weights, anchor)[:, None, :]
            for _ in range(self.local_steps):
                y_i = y_i - self.eta_y * self._corrected(lambda z, s: problem.lower_grad(batch, x_c, z, s), y_i, y_c,
                                                         aggregate, anchor, noise)
            y = _averaged(weights, y, y_i)  # model averaging (1 communication)
        y_c = _spread(y, m)
        if self.neumann == "series":  # FedIHGP (Algorithm 3)
            terms: np.ndarray | int = self.neumann_terms
            v_i = self._series(problem, batch, x_c, y_c, weights, noise)
        else:
            depth = streams["truncation"].integers(self.neumann_terms)  # N' (R,)
            terms = depth + 1  # p_0 and N' factors: as many communications and oracle calls
            v_i = self._random(problem, batch, x_c, y_c, weights, noise, depth)
        x_i, anchor, aggregate = x_c, 0.0, 0.0  # FedOut (Algorithm 4)
        if not self.light:
            anchor = problem.surrogate_grad(batch, x_c, y_c, v_i, noise)
            aggregate = weighted_sum(weights, anchor)[:, None, :]
        for _ in range(self.local_steps):
            x_i = x_i - self.eta_x * self._corrected(lambda z, s: problem.surrogate_grad(batch, z, y_c, v_i, s), x_i, x_c,
                                                     aggregate, anchor, noise)
        x = _averaged(weights, state.x, x_i)
        v = _averaged(weights, np.zeros_like(state.v), v_i)
        new = BilevelState(x, y, v, state.radius, rounds=state.rounds + 1)
        comms = np.asarray(self.communications(terms), dtype=float)
        per_step = 2 if not self.light and self.svrg_sample == "shared" else 1  # the SVRG difference: 2 evaluations
        calls = (self.inner_rounds + 1) * (per_step * self.local_steps + (not self.light)) + terms
        return new, {"communication_rounds": comms, "oracle_calls": m * np.asarray(calls, dtype=float),
                     "vectors_up": comms * m, "vectors_down": comms * m}

    def output(self, state: BilevelState) -> dict[str, np.ndarray]:
        return state.points()


@register
@dataclass(frozen=True)
class LFedNest(FedNest):
    """LFedNest (Tarzanagh et al. 2022, 'light' FedNest): no SVRG corrections, client-local IHGP."""

    name: ClassVar[str] = "lfednest"
    source: ClassVar[str] = "Tarzanagh et al. ICML 2022 (LFedNest, §4); ref. [65] of 000_66e1ccf0a50396e9.txt"
    light: ClassVar[bool] = True


@register
@dataclass(frozen=True)
class NaiveHypergradient(Algorithm[BilevelOracles]):
    """Naive local-hypergradient averaging (spec §7.2 [spec], §1.2): x <- x - gamma_x sum_C pt_i grad Phi_i(x),
    each client's exact hypergradient at its own y_i*, v_i* (it has no y, v iterates: the output reports
    y*(x), v*(x), so y_err = v_err = 0 by construction)."""

    name: ClassVar[str] = "naive_hypergrad"
    source: ClassVar[str] = "spec simfbo §7.2 (naive local-hypergradient average); 000_66e1ccf0a50396e9.txt §2.1"
    problem_kinds: ClassVar[tuple[str, ...]] = BILEVEL_FAMILIES  # issue #7: problem contract

    gamma_x: float = real(0.05, "server step on the averaged local hypergradients", positive=True)
    participation: Participation = _participation()

    def validate(self, problem: BilevelOracles) -> None:
        if not hasattr(problem, "client_hypergrads"):
            raise ValueError(f"naive_hypergrad needs a problem with client_hypergrads, got {problem.family}")
        _check_clients(self.name, self.participation, problem)

    def init(self, problem: BilevelOracles, streams: Streams) -> BilevelState:
        x, _, _ = initial_points(problem, len(streams.replicas))
        return BilevelState(x, problem.y_star(x), problem.v_star(x), np.inf)

    def round(self, state: BilevelState, problem: BilevelOracles, t: int, streams: Streams) -> tuple[BilevelState, Costs]:
        clients = self.participation.sample(problem.num_clients, streams["sampling"])
        local = np.take_along_axis(problem.client_hypergrads(state.x), clients[..., None], axis=1)
        x = state.x - self.gamma_x * weighted_sum(sampled_weights(problem, clients), local)
        P = float(clients.shape[1])
        return (BilevelState(x, problem.y_star(x), problem.v_star(x), np.inf, rounds=state.rounds + 1),
                {"communication_rounds": 1.0, "vectors_up": P, "vectors_down": P})

    def output(self, state: BilevelState) -> dict[str, np.ndarray]:
        return state.points()


@register
@dataclass(frozen=True)
class FedNova(ShroFBO):
    """FedNova (Wang et al. 2020) = ShroFBO's normalized step on a decoupled problem (B = 0): the x-part is
    single-level local SGD on f_i(x) with x <- x - gamma_x tau_eff sum pt_i q_i/||a_i||_1 (spec §7.2)."""

    name: ClassVar[str] = "fednova"
    source: ClassVar[str] = "Wang et al. 2020 (FedNova), ref. [67]; 000_66e1ccf0a50396e9.txt eqs. (6)-(8) at B = 0"

    def validate(self, problem: BilevelOracles) -> None:
        super().validate(problem)
        B = getattr(problem, "B", None)
        if B is None or np.any(B != 0):
            raise ValueError("fednova is the single-level limit: it needs a problem with B = 0 (e.g. b = 0)")
