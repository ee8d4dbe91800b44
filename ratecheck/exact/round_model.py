"""Exact moments of any algorithm whose whole round is affine-Gaussian given the clients drawn."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model.participation import Participation
from ..model.points import as_points
from ..problem import Problem
from .operators import MixtureOperator, RoundOperator
from .probing import AFFINE_RTOL, NotExact, ProbeStream, ProbeStreams, _close, column_script

OUTCOME_CAP = 5000  # client-sampling outcomes a round is probed under, at most, when not additive
SAMPLING_CHECKS = 8  # random outcomes that check an additive sampling map (and re-verify every round)
PROBE_ROWS = 8192  # replicas per probe call (memory)
BOOKKEEPING_WATCH = 8  # verified rounds of constant bookkeeping steps before a vouched round is carried


class _NotAdditive(Exception):
    """A round's map under client sampling is not additive over the clients drawn: enumerate instead."""


@dataclass(frozen=True)
class _Sampling:
    """How RoundModel averages a round's client sampling: the outcomes it probes (client ids and the
    'sampling' draws that pick them), their probabilities when enumerated (else the first ``design``
    outcomes determine an additive map and the others check it), and the check outcomes."""

    participation: Participation
    clients: np.ndarray  # (K, m)
    draws: np.ndarray  # (K, ...): the uniforms that make Participation.sample pick each outcome
    weights: np.ndarray | None  # (K,) probabilities, or None: additive over the multiplicities
    design: int
    checks: np.ndarray  # indices into clients of the outcomes random checks run under


@dataclass(frozen=True)
class _Seen:
    """One call of a round on random states V and draws z: its outputs, draw layout and bookkeeping."""

    V: np.ndarray
    z: np.ndarray
    actual: np.ndarray
    sizes: tuple[int, ...]
    after: Mapping[str, Any]


@dataclass(frozen=True)
class _KnownRound:
    """A probed round as an operator on the second moment, with what it costs; its maps
    v' = A v + c + G z under the check outcomes (one per check, or one without sampling) re-verify it."""

    operator: RoundOperator | MixtureOperator
    A: np.ndarray  # (C, n, n)
    c: np.ndarray  # (C, n)
    G: np.ndarray  # (C, n, draws)
    sizes: tuple[int, ...]  # the sizes of the normal draws, in call order
    costs: dict[str, float]  # expected over the sampling
    after: dict[str, Any]  # the bookkeeping after the round


class RoundModel:
    """Exact moments of any algorithm whose ``round`` itself is affine-Gaussian in its array state.

    For algorithms without the FedAvg seams: the whole round is probed (the state's arrays, and the
    arrays of its dict fields, flattened into v; origin and unit vectors as replicas, then unit draws
    of every normal number the round takes), giving v' = F v + G z exactly.

    Client sampling inside the round is averaged exactly. The sampler is read off what the round asks
    the 'sampling' stream for (``_sampler``: m integer draws is with replacement, N uniform keys is the
    participation's without-replacement draw), so a round that samples otherwise than its field says
    is averaged as it samples. The round is then probed under many outcomes at once (blocks of
    replicas, each served the draws that pick its clients, Participation.draws_for): all of them with
    their probabilities when few, else a design of N outcomes that fixes an additive map
    F_s = sum_i n_i D_i (with the noise covariance and the costs), checked on random outcomes and
    averaged with E n_i n_k (MixtureOperator); a non-additive round with more than OUTCOME_CAP
    outcomes is refused with the count. Any other uniform draw (random local-step counts, random
    delays) raises NotExact.

    Fields that are not arrays are bookkeeping (a round counter, a sum of step sizes, an output
    weight): they may move, but only deterministically, the same on every probe whatever the state
    and the noise; they are then carried round by round. Fields the algorithm names in its
    ``monitors`` class attribute (running maxima of the iterates, say: not a moment) are not tracked
    and keep their initial value.

    A round's map may change with t in ways no probe at a few rounds reveals (a sync every I steps, a
    step-size schedule), so every round is checked: one call of the round on three random states
    with random draws (under three of the check outcomes when it samples) must match a known
    operator to AFFINE_RTOL (the one used last, usually), or the round is probed afresh. A
    time-invariant run thus costs one small call per round; a time-varying one under sampling pays a
    probe over all its outcomes every round (Tikhonov FedAvg's output average: ~0.1-0.2 s a round).
    A round the algorithm vouches ignores t and whose map ignores the bookkeeping (``t_free_rounds``
    names the very function, so an overriding subclass is not vouched for) is not called again once
    its bookkeeping has moved by constant steps for BOOKKEEPING_WATCH verified rounds: the steps carry
    it (a round counter, a sum of a constant rho). That makes such runs cost a probe plus one small
    matrix-vector product a round.
    """

    def __init__(self, algorithm: Any, problem: Problem, rounds: int):
        self._setup_state(algorithm, problem)
        self.sampling = self._sampling_plan()
        # a round the algorithm vouches ignores t (its ``t_free_rounds`` names this very function, so a
        # subclass that overrides round() is not vouched for) and a state without bookkeeping has one
        # map for every round: probed once, not re-verified each round
        self._vouched = type(algorithm).round in getattr(algorithm, "t_free_rounds", ())
        self._constant = self._vouched and not self.book
        self._steps: dict[str, Any] = {}
        self._history: list[dict[str, Any]] = [dict(self.book)]
        first = self._probe(0, self.book)
        self._known: list[_KnownRound] = [first]  # operators seen, most recent first, re-verified every round
        self._costs = first.costs
        self.last_costs = dict(self._costs)

    def _setup_state(self, algorithm: Any, problem: Problem) -> None:
        """The flattened state v = (arrays of the state, 1): layout, bookkeeping, start and its noise."""
        self.algorithm, self.problem = algorithm, problem
        journal: list = []
        zero = ProbeStreams(1, lambda purpose: ProbeStream(1, None, purpose=purpose, journal=journal))
        self.template = algorithm.init(problem, zero)
        if not dataclasses.is_dataclass(self.template):
            raise NotExact(f"{algorithm.name}'s state is not a dataclass of arrays")
        self.monitors = frozenset(getattr(algorithm, "monitors", ()))
        self.layout = []  # (field, key or None, shape without the replica axis, slice in v)
        start = 0
        for name, key, value in self._leaves(self.template):
            size = int(np.prod(value.shape[1:], dtype=np.int64))
            self.layout.append((name, key, value.shape[1:], slice(start, start + size)))
            start += size
        if not self.layout:  # e.g. an event timeline's models, kept by version (ratecheck.model.versions)
            raise NotExact(f"{algorithm.name}'s state holds no arrays with a replica axis to probe states with "
                           f"(an event timeline's models are kept by version, its delays random per replica)")
        self.array_fields = {name for name, _, _, _ in self.layout}
        self.book = self._bookkeeping(self.template)
        self.n_state = start
        self.n = start + 1
        self.v0 = self.flatten(self.template)[0]
        self.scale = max(1.0, float(np.max(np.abs(self.v0), initial=0.0)))
        self.init_cov = self._initial_noise(journal)

    def _initial_noise(self, journal: list) -> np.ndarray:
        """Cov of the initial state when ``init`` draws noise (a first STORM batch): G0 G0^T, probed."""
        sizes = [int(np.prod(shape, dtype=np.int64)) for _, _, shape in journal]
        draws = sum(sizes)
        if not draws:
            return np.zeros((self.n_state, self.n_state))

        def call(block: np.ndarray) -> np.ndarray:
            R = block.shape[0]
            script = self._script(block, tuple(sizes), "init's draws depend on the replica count")
            state = self.algorithm.init(self.problem, ProbeStreams(R, lambda p: ProbeStream(R, script, purpose=p)))
            return self.flatten(state)

        G0 = (call(np.eye(draws)) - self.v0).T
        z = np.random.default_rng(1).standard_normal((3, draws))
        gap = _close(call(z), self.v0 + z @ G0.T)
        if not gap <= AFFINE_RTOL:
            raise NotExact(f"{self.algorithm.name}.init is not affine in its noise (off by {gap:.2e})")
        return G0 @ G0.T

    # -- state <-> vectors ----------------------------------------------------------------------
    @staticmethod
    def _leaves(state: Any):
        """(field, dict key or None, array) for every array with a replica axis, dict fields included."""
        for f in dataclasses.fields(state):
            value = getattr(state, f.name)
            if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == 1:
                yield f.name, None, value
            elif isinstance(value, dict) and value and all(isinstance(v, np.ndarray) and v.ndim >= 1
                                                           and v.shape[0] == 1 for v in value.values()):
                for key in sorted(value):
                    yield f.name, key, value[key]

    def _bookkeeping(self, state: Any) -> dict[str, Any]:
        return {f.name: getattr(state, f.name) for f in dataclasses.fields(state)
                if f.name not in self.array_fields and f.name not in self.monitors}

    def flatten(self, state: Any) -> np.ndarray:
        parts = []
        for name, key, shape, _ in self.layout:
            value = getattr(state, name)
            value = value.get(key) if key is not None and isinstance(value, dict) else value
            if not isinstance(value, np.ndarray) or value.shape[1:] != shape:
                where = name if key is None else f"{name}[{key!r}]"
                raise NotExact(f"{self.algorithm.name}'s state field {where} changed its shape or type in a round")
            parts.append(value.reshape(value.shape[0], -1))
        return np.hstack(parts).astype(float)

    def unflatten(self, V: np.ndarray, book: Mapping[str, Any] | None = None) -> Any:
        R = V.shape[0]
        fields: dict[str, Any] = dict(self.book if book is None else book)
        for name, key, shape, sl in self.layout:
            value = V[:, sl].reshape((R, *shape)).copy()
            if key is None:
                fields[name] = value
            else:
                fields.setdefault(name, {})[key] = value
        return dataclasses.replace(self.template, **fields)

    # -- probing the round ----------------------------------------------------------------------
    def _call(self, V: np.ndarray, t: int, script, book: Mapping[str, Any],
              sampling: np.ndarray | None = None) -> tuple[np.ndarray, list, Any, dict]:
        """One call of the round on the states V (R, n_state) with scripted normal draws and, for the
        'sampling' stream, the uniform draws ``sampling`` (R, ...) that pick each replica's clients."""
        R = V.shape[0]
        journal: list = []

        def draw_clients(index: int, shape: tuple[int, ...]) -> np.ndarray:
            assert sampling is not None  # served only when there are sampling draws (see stream)
            if index > 0:
                raise NotExact(f"{self.algorithm.name}.round draws its clients more than once per round: the "
                               "outcomes of the draws multiply (exact mode averages one draw per round)")
            if tuple(shape) != sampling.shape[1:]:
                raise NotExact(f"{self.algorithm.name}.round drew {tuple(shape)} uniforms from 'sampling', then "
                               f"{sampling.shape[1:]}: its sampling depends on the state")
            return sampling

        def stream(purpose: str) -> ProbeStream:
            uniform = draw_clients if purpose == "sampling" and sampling is not None else None
            return ProbeStream(R, script, uniform, purpose=purpose, journal=journal)

        try:
            new, costs = self.algorithm.round(self.unflatten(V, book), self.problem, t, ProbeStreams(R, stream))
        except NotExact:
            raise
        except (ValueError, TypeError, AttributeError, IndexError) as exc:
            # state that is not a moment (an event timeline sized for other replicas, say): not probe-able
            raise NotExact(f"{self.algorithm.name}.round cannot run on probe states (its state holds more than "
                           f"arrays with a replica axis): {type(exc).__name__}: {exc}") from None
        costs = {k: np.broadcast_to(np.asarray(v, dtype=float), (R,)) for k, v in costs.items()}
        return self.flatten(new), journal, costs, self._bookkeeping(new)

    def _rows(self, V: np.ndarray, t: int, Z: np.ndarray | None, book: Mapping[str, Any],
              sampling: np.ndarray | None, sizes: tuple[int, ...] | None = None) -> tuple[np.ndarray, list, dict, list]:
        """``_call`` on many rows, in chunks of at most PROBE_ROWS replicas: Z (R, draws) are the normal
        draws laid out in call order (None: zeros). Returns outputs, journal, costs and the bookkeeping
        of every chunk."""
        journal: list[Any]
        outs, costs, books, journal = [], [], [], []
        for lo in range(0, V.shape[0], PROBE_ROWS):
            hi = min(lo + PROBE_ROWS, V.shape[0])
            script = None if Z is None else self._script(Z[lo:hi], sizes)  # type: ignore[arg-type]  # sizes come with Z
            out, journal, cost, after = self._call(V[lo:hi], t, script, book,
                                                   None if sampling is None else sampling[lo:hi])
            outs.append(out)
            costs.append(cost)
            books.append(after)
        merged = {k: np.concatenate([c[k] for c in costs]) for k in costs[0]}
        return np.vstack(outs), journal, merged, books

    def _script(self, Z: np.ndarray, sizes: tuple[int, ...], mismatch: str = "round's draws depend on its inputs"):
        """Serve the columns of Z (R, draws) as the normal draws of init or round, call after call;
        a call whose size differs from the probed layout is NotExact (``mismatch`` says why)."""
        return column_script(Z, sizes, f"{self.algorithm.name}.{mismatch}")

    def _sampler(self) -> Participation | None:
        """The sampling the round really does, from what it asks the 'sampling' stream for in one call:
        ``integers(N, (m,))`` is m draws with replacement; ``uniform((N,))`` are the keys of m clients
        without replacement (m from the algorithm's ``participation``: the m smallest keys, as
        Participation.sample takes them); nothing is no sampling. So a round that samples otherwise
        than its ``participation`` field says is averaged as it samples, not as the field says."""
        N = self.problem.num_clients
        journal: list = []

        def distinct(index: int, shape: tuple[int, ...]) -> np.ndarray:
            size = int(np.prod(shape, dtype=np.int64))
            return ((np.arange(size) + 0.5) / max(size, 1)).reshape((1, *shape))

        def stream(purpose: str) -> ProbeStream:
            return ProbeStream(1, None, distinct if purpose == "sampling" else None, purpose=purpose, journal=journal)

        try:
            self.algorithm.round(self.unflatten(self.v0[None, :]), self.problem, 0, ProbeStreams(1, stream))
        except NotExact as why:
            raise NotExact(f"{self.algorithm.name}.round: {why}") from None
        requests = [(kind, shape) for purpose, kind, shape in journal if purpose == "sampling"]
        declared = getattr(self.algorithm, "participation", None)
        if not requests:
            return None
        if len(requests) > 1:
            raise NotExact(f"{self.algorithm.name}.round draws its clients {len(requests)} times per round: the "
                           "outcomes of the draws multiply (exact mode averages one draw per round)")
        kind, shape = requests[0]
        if kind == f"integers:{N}" and len(shape) == 1:
            return Participation("with_replacement", shape[0])
        if (kind == "uniform" and shape == (N,) and isinstance(declared, Participation)
                and declared.mode == "without_replacement"):
            return declared
        raise NotExact(f"{self.algorithm.name}.round draws {kind} numbers of shape {shape} from 'sampling' (participation "
                       f"{declared}): exact mode averages integers(N, (m,)) draws, or uniform((N,)) keys of a "
                       "without-replacement Participation")

    def _sampling_plan(self, enumerate_all: bool = False) -> _Sampling | None:
        """How the round's client sampling is averaged (None: the algorithm samples nothing): every
        outcome when there are few (or ``enumerate_all``), else an additive design."""
        participation = self._sampler()
        if participation is None:
            return None
        N = self.problem.num_clients
        m = participation.per_round(N)
        count = participation.outcome_count(N)
        rng = np.random.default_rng(11)
        replace = participation.mode == "with_replacement"
        random_outcomes = np.sort(np.stack([rng.integers(0, N, m) if replace else rng.permutation(N)[:m]
                                            for _ in range(SAMPLING_CHECKS)]), axis=1)
        if count <= N + SAMPLING_CHECKS or enumerate_all:
            clients, weights = participation.outcomes(N)
            return _Sampling(participation, clients, participation.draws_for(clients, N), weights,  # type: ignore[arg-type]  # never 'full' here: draws_for returns draws
                             design=0, checks=rng.choice(clients.shape[0], SAMPLING_CHECKS))
        # a design of N outcomes whose multiplicities span R^N, then the random outcomes that check it
        if replace:  # all m draws on client i
            design: np.ndarray | list[np.ndarray] = np.repeat(np.arange(N)[:, None], m, axis=1)
        else:  # {0..m-1}, then one swap at a time: a client i >= m in for 0, then m in for each j in 1..m-1
            base = np.arange(m)
            design = [base] + [np.sort(np.r_[base[1:], i]) for i in range(m, N)] \
                + [np.sort(np.r_[np.delete(base, j), m]) for j in range(1, m)]
            design = np.stack(design)
        clients = np.vstack([design, random_outcomes])
        checks = np.arange(N, N + SAMPLING_CHECKS)
        return _Sampling(participation, clients, participation.draws_for(clients, N), None, design=N, checks=checks)  # type: ignore[arg-type]  # never 'full' here: draws_for returns draws

    def _probe(self, t: int, book: Mapping[str, Any], seen: _Seen | None = None) -> _KnownRound:
        """The round-t maps from bookkeeping ``book``, checked on random inputs, with its costs.

        ``seen``: a call of this very round on random states and draws that matched no known map
        (``_operator``'s check, without client sampling). It gives the draws' layout, so the origin, the
        unit states and the unit draws go in ONE call, and it is the check on random inputs: one call
        per new map instead of three (rounds whose map changes every round, e.g. a step size alpha_t).

        Under client sampling the maps are read off under every probed outcome at once (outcomes
        laid out as blocks of replicas, the 'sampling' stream serving each block the draws that
        pick its clients), then averaged: over the enumerated outcomes with their probabilities, or,
        when there are too many, through the multiplicities (F_s = sum_i n_i D_i, checked on random
        outcomes) and their exact moments E n_i n_k."""
        n, plan = self.n_state, self.sampling
        K = 1 if plan is None else plan.clients.shape[0]

        def outcome_rows(count: int) -> np.ndarray | None:
            return None if plan is None else np.repeat(plan.draws, count, axis=0)

        if seen is not None and plan is None:
            return self._probe_seen(t, book, seen)
        # 1) origin and unit vectors under every outcome, zero draws (also logs the draws a round takes)
        V = np.tile(np.vstack([np.zeros(n), np.eye(n)]), (K, 1))
        try:
            out, journal, costs, books = self._rows(V, t, None, book, outcome_rows(n + 1))
        except NotExact as why:
            hint = ("; exact mode averages client sampling through the algorithm's `participation` "
                    "(a ratecheck.model.participation.Participation)") if "'sampling'" in str(why) and plan is None else ""
            raise NotExact(f"{self.algorithm.name}.round: {why}{hint}") from None
        after = books[0]
        out = out.reshape(K, n + 1, n)
        c = out[:, 0]
        A = np.transpose(out[:, 1:] - c[:, None], (0, 2, 1))  # (K, n_out, n_in)
        sizes = tuple(int(np.prod(shape, dtype=np.int64)) for _, kind, shape in journal if kind == "normal")
        draws = int(sum(sizes))
        costs = {k: v.reshape(K, n + 1)[:, 0] for k, v in costs.items()}
        G = np.zeros((K, n, 0))
        if draws:  # 2) unit draws, one replica per draw, under every outcome
            unit_out, _, _, unit_books = self._rows(np.zeros((K * draws, n)), t, np.tile(np.eye(draws), (K, 1)), book,
                                                    outcome_rows(draws), sizes)
            G = np.transpose(unit_out.reshape(K, draws, n) - c[:, None], (0, 2, 1))
            books += unit_books
        # 3) random states and random draws under the check outcomes
        chk = np.zeros(3, dtype=int) if plan is None else plan.checks
        rng = np.random.default_rng(t)
        Vr = self.scale * rng.standard_normal((chk.size, n))
        z = rng.standard_normal((chk.size, draws))
        actual, _, _, random_books = self._rows(Vr, t, z, book, None if plan is None else plan.draws[chk], sizes)
        books += random_books
        predicted = np.einsum("rij,rj->ri", A[chk], Vr) + c[chk] + np.einsum("rik,rk->ri", G[chk], z)
        self._check_affine(actual, predicted, after, books)
        F = np.zeros((K, self.n, self.n))
        F[:, :n, :n] = A
        F[:, :n, -1] = c
        F[:, -1, -1] = 1.0
        cov = np.zeros((K, self.n, self.n))
        for k in range(K):  # 2-D products: a batched matmul with a transposed operand is far slower
            cov[k, :n, :n] = G[k] @ G[k].T  # enters through S[-1, -1] = 1
        check = (A[chk], c[chk], G[chk])
        if plan is None:
            operator: RoundOperator | MixtureOperator = RoundOperator(F=F[0], noise=cov[0])
            mean_costs = {k: float(v[0]) for k, v in costs.items()}
        elif plan.weights is not None:  # every outcome, with its probability
            w = plan.weights
            operator = MixtureOperator(F, np.diag(w), np.tensordot(w, cov, axes=(0, 0)))
            mean_costs = {k: float(w @ v) for k, v in costs.items()}
        else:
            try:
                operator, mean_costs = self._additive(F, cov, costs)
            except _NotAdditive as why:
                count = plan.participation.outcome_count(self.problem.num_clients)
                if count > OUTCOME_CAP:
                    raise NotExact(f"{why}, and {plan.participation} has {count} outcomes on "
                                   f"{self.problem.num_clients} clients, more than the {OUTCOME_CAP} exact mode "
                                   "enumerates") from None
                self.sampling, self._known = self._sampling_plan(enumerate_all=True), []
                return self._probe(t, book)
        return _KnownRound(operator, *check, sizes, mean_costs, after)

    def _check_affine(self, actual: np.ndarray, predicted: np.ndarray, after: Mapping[str, Any], books: list) -> None:
        """NotExact unless the round's outputs on random inputs are the probed affine map's, and its
        bookkeeping is the same on every probe."""
        gap = _close(actual, predicted)
        if not gap <= AFFINE_RTOL:
            raise NotExact(f"{self.algorithm.name}.round is not affine in (state, noise): off by {gap:.2e} "
                           "on random inputs (a nonlinear problem or a projection that binds)")
        for name in after:  # bookkeeping must not depend on the state, the noise or the clients drawn
            if not all(_same(b[name], after[name]) for b in books):
                raise NotExact(f"{self.algorithm.name}'s state field {name!r} is not an array and depends on "
                               "the iterates, the noise or the clients drawn (exact mode tracks moments of arrays; "
                               "name it in the algorithm's `monitors` if it is only a diagnostic)")

    def _probe_seen(self, t: int, book: Mapping[str, Any], seen: _Seen) -> _KnownRound:
        """``_probe`` without client sampling, from a call already seen on random inputs: the origin, the
        n unit states (zero draws) and the unit draws (zero state) in one call, checked against ``seen``."""
        n, sizes = self.n_state, seen.sizes
        draws = int(sum(sizes))
        V = np.zeros((n + 1 + draws, n))
        V[1:n + 1] = np.eye(n)
        Z = np.vstack([np.zeros((n + 1, draws)), np.eye(draws)]) if draws else None
        out, _, costs, books = self._rows(V, t, Z, book, None, sizes if draws else None)
        after = books[0]
        c = out[0]
        A = (out[1:n + 1] - c).T
        G = (out[n + 1:] - c).T if draws else np.zeros((n, 0))
        self._check_affine(seen.actual, seen.V @ A.T + c + seen.z @ G.T, after, [*books, seen.after])
        F = np.zeros((self.n, self.n))
        F[:n, :n], F[:n, -1], F[-1, -1] = A, c, 1.0
        cov = np.zeros((self.n, self.n))
        cov[:n, :n] = G @ G.T
        return _KnownRound(RoundOperator(F=F, noise=cov), A[None], c[None], G[None], sizes,
                           {k: float(v[0]) for k, v in costs.items()}, after)

    def _additive(self, F: np.ndarray, cov: np.ndarray, costs: Mapping[str, np.ndarray]) -> tuple[MixtureOperator, dict]:
        """F_s = sum_i n_i D_i, Cov_s = sum_i n_i C_i and cost_s = sum_i n_i k_i read off the design
        outcomes, checked on the random ones; averaged with E n_i and E n_i n_k. Else NotExact with
        _NotAdditive."""
        plan, N = self.sampling, self.problem.num_clients
        assert plan is not None  # only rounds that sample are additive over the clients drawn
        counts = (plan.clients[..., None] == np.arange(N)).sum(axis=-2).astype(float)  # multiplicities (K, N)
        X, rest = counts[:plan.design], counts[plan.design:]
        pieces = {"map": F.reshape(F.shape[0], -1), "noise": cov.reshape(cov.shape[0], -1),
                  **{f"cost {k}": v[:, None] for k, v in costs.items()}}
        solved = {}
        for name, Y in pieces.items():
            per_client = np.linalg.solve(X, Y[:plan.design])
            gap = _close(Y[plan.design:], rest @ per_client)
            if not gap <= AFFINE_RTOL:
                raise _NotAdditive(f"{self.algorithm.name}.round's {name} is not additive over the clients drawn "
                                   f"(off by {gap:.2e} on random outcomes)")
            solved[name] = per_client
        first, second = plan.participation.multiplicity_moments(N)
        n = self.n
        operator = MixtureOperator(solved["map"].reshape(N, n, n), second, (first @ solved["noise"]).reshape(n, n))
        return operator, {k: float(first @ solved[f"cost {k}"][:, 0]) for k in costs}

    def _watch_bookkeeping(self, after: Mapping[str, Any]) -> None:
        """A vouched round whose bookkeeping moves by the same step for BOOKKEEPING_WATCH verified rounds
        (a round counter, a sum of a constant) and whose map stayed the same: from then on its
        bookkeeping is carried by those steps, without calling the round (non-numbers must not move)."""
        self._history.append(dict(after))
        if len(self._history) <= BOOKKEEPING_WATCH or len(self._known) != 1:
            return
        recent = self._history[-BOOKKEEPING_WATCH - 1:]
        steps = {}
        for name, value in after.items():
            if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
                moves = [b[name] - a[name] if b[name] != a[name] else 0 for a, b in zip(recent, recent[1:])]  # inf stays
                if not all(math.isclose(m, moves[0], rel_tol=1e-9, abs_tol=1e-300) for m in moves):
                    return
                if moves[0] != 0:
                    steps[name] = moves[0]
            elif not all(_same(b[name], value) for b in recent):
                return
        self._steps, self._constant = steps, True

    def _random_call(self, t: int, sampling: np.ndarray | None = None) -> tuple[Any, ...]:
        """The round on three random states with random draws (seeded by t): the states, the draws laid out in call
        order, the outputs, the normal draws' sizes, the costs and the bookkeeping after it."""
        rng = np.random.default_rng([t, 7])
        V = self.scale * rng.standard_normal((3, self.n_state))
        draws: list[np.ndarray] = []

        def random_draws(index: int, shape: tuple[int, ...]) -> np.ndarray:
            draws.append(rng.standard_normal((3, int(np.prod(shape, dtype=np.int64)))))
            return draws[-1]

        actual, journal, costs, after = self._call(V, t, random_draws, self.book, sampling)
        sizes = tuple(int(np.prod(shape, dtype=np.int64)) for _, kind, shape in journal if kind == "normal")
        return V, np.hstack(draws) if draws else np.zeros((3, 0)), actual, sizes, costs, after

    def _operator(self, t: int) -> RoundOperator | MixtureOperator:
        """Round t's operator: a known one if a random call of the round (under the check outcomes of
        the sampling) matches it, else probed."""
        if self._constant and self._known:  # a vouched t-free round: one map for all t
            self.last_costs = self._known[0].costs
            self.book = {k: v + self._steps[k] if k in self._steps else v for k, v in self.book.items()}
            return self._known[0].operator
        plan = self.sampling
        pick = np.zeros(3, dtype=int) if plan is None else np.arange(3) % plan.checks.size
        sampling = None if plan is None else plan.draws[plan.checks[pick]]
        V, z, actual, sizes, costs, after = self._random_call(t, sampling)
        if self._vouched:
            self._watch_bookkeeping(after)
        for k, known in enumerate(self._known):
            if known.sizes != sizes:
                continue
            A, c, G = known.A[pick], known.c[pick], known.G[pick]
            if _close(actual, np.einsum("rij,rj->ri", A, V) + c + np.einsum("rik,rk->ri", G, z)) <= AFFINE_RTOL:
                self._known.insert(0, self._known.pop(k))
                self.book = after
                # without sampling the costs of this very call; with it, the expectation probed
                self.last_costs = {k: float(np.mean(v)) for k, v in costs.items()} if plan is None else known.costs
                return known.operator
        known = self._probe(t, self.book, _Seen(V, z, actual, sizes, after))
        self._known = [known, *self._known[:7]]
        self.book, self.last_costs = known.after, known.costs
        return known.operator

    # -- the model interface used by run_exact -------------------------------------------------
    def initial(self) -> np.ndarray:
        v = np.append(self.v0, 1.0)
        second = np.outer(v, v)
        second[:self.n_state, :self.n_state] += self.init_cov
        return second

    def step(self, t: int, flat: np.ndarray) -> np.ndarray:
        """vec E[v v^T] after round t from before it (rounds are stepped in order); the round's
        expected costs are then in ``last_costs``."""
        return self._operator(t).apply(flat)

    def measure_space(self) -> tuple[int, Callable[[np.ndarray], Any], np.ndarray]:
        book = dict(self.book)
        self._output_book = book
        self._inert: set[str] = getattr(self, "_inert", set())  # numeric bookkeeping the output ignores
        return self.n_state, lambda V: self.algorithm.output(self.unflatten(V, book)), np.arange(self.n_state)

    def output_moved(self) -> bool:
        """Whether the output map changed since ``measure_space`` (an output average's weight is
        bookkeeping): then the measures' quadratic forms must be read off again."""
        changed = {k for k, v in self._output_book.items() if not _same(self.book[k], v)}
        if changed <= self._inert:  # numbers that did not move the output before (a round counter)
            self._output_book = dict(self.book)
            return False
        V = self.scale * np.random.default_rng(5).standard_normal((3, self.n_state))
        before = as_points(self.algorithm.output(self.unflatten(V, self._output_book)))
        after = as_points(self.algorithm.output(self.unflatten(V)))
        if all(np.array_equal(np.asarray(before[k]), np.asarray(after[k])) for k in after):
            self._output_book = dict(self.book)
            self._inert |= {k for k in changed if isinstance(self.book[k], (int, float, np.number))}
            return False
        return True

    def final(self, second: np.ndarray) -> dict[str, np.ndarray]:
        output = self.algorithm.output(self.unflatten(second[:self.n_state, -1][None, :]))
        return {name: np.asarray(point, dtype=float) for name, point in as_points(output).items()}

    def costs(self) -> dict[str, float]:
        return dict(self._costs)

    def info(self, second: np.ndarray) -> dict[str, Any]:
        info = dict(self.algorithm.info(self.unflatten(second[:self.n_state, -1][None, :])))
        for name in self.monitors & set(info):
            info[name] = float("nan")  # a monitor of the iterates: not an expectation, not tracked
        return info


def _same(a: Any, b: Any) -> bool:
    """Equal bookkeeping; floats up to rounding (a mean over R equal replicas depends on R in the last bit)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if isinstance(a, float) and isinstance(b, float) and not (a == b):
        return math.isclose(a, b, rel_tol=1e-12)
    return a == b


# algorithm class -> model builder, tried from the most derived class up: the FedAvg family through
# its seams (any participation and delay schedule), everything else through its whole round
