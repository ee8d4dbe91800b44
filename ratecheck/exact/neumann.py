"""FedBiO-Local's round exactly under Jacobian and Hessian noise (issue #21 item 4): second moments factor by factor.

Algorithm 3's round (ratecheck.algorithms.fedbio) runs, per client and iteration, on one Neumann draw (xi_f, xi_g,
xi_1..xi_Q) and one lower batch B_y:

    v_0 = start(x, y),   v_k = factor_{Q-k}(x, y, v_{k-1}) (k = 1..Q),   nu = finish(x, y, sum_k v_k),
    (x', y') = local_step(x, y, nu),   at a sync communicate(x', y').

As a whole the round is a polynomial of degree Q + 2 in its draws (a product of Q sampled Hessians), which the
whole-round probe (RoundModel) refuses. Stage by stage it is bilinear: each seam is bilinear in (its inputs, the draws
it reads) and no draw is read by two stages. On the client's augmented vector z = (x, y, v, total, 1) every stage is
z' = A z + sum_q zeta_q B_q z with its own independent standard-normal zeta, so

    E[z' z'^T] = A S A^T + sum_q B_q S B_q^T

exactly, stage after stage (Q + 3 stages of O((p + 3d)^3) per client). Clients draw independently, so across clients
only the mean maps act: on the round's state v = (x_1..x_N, y_1..y_N, 1)

    E[v' v'^T] = P (Abar S Abar^T + blockdiag_i R_i(S_ii)) P^T,

Abar the clients' mean maps (the stages' A composed), R_i(S_ii) client i's random part (its propagated moment minus
the mean part) and P the sync (identity between syncs). b_x i.i.d. copies of the estimator (neumann_batch 'copies')
divide the random part of (x, y, nu) by b_x before the local step.

Every map is read off the algorithm's own seams (``neumann_start``, ``neumann_factor``, ``neumann_finish``,
``local_step``, ``communicate``, the samples from ``draw_lower`` and the problem's ``draw``), and every round is
checked: the algorithm's ``round`` on random states and draws must equal the composed maps on the same draws, with
or without the sync (which of the two it matched says whether round t syncs); a round that calls its seams
otherwise is refused. A run whose draws only add to the state is left to RoundModel (its numbers unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..problem import Problem
from .bilinear import BilinearMap, read_bilinear
from .probing import AFFINE_RTOL, NotExact, ProbeStream, ProbeStreams, _close, column_script, normal_layout
from .round_model import RoundModel

SEAMS = ("neumann_start", "neumann_factor", "neumann_finish", "local_step", "communicate", "draw_lower",
         "neumann_layout", "neumann_oracles")
STAGE_DRAWS = 2**22  # probe rows x clients x draws the stages may take to read, at most (memory and time)


@dataclass(frozen=True)
class Stage:
    """One stage on the clients' augmented vectors: z' = A_i z + sum_q zeta_q B_q,i z."""

    name: str
    read: BilinearMap  # the seam's own map (for the round check)
    A: np.ndarray  # (N, n_out, n_in)
    B: np.ndarray  # (P, N, n_out, n_in)

    def moment(self, S: np.ndarray) -> np.ndarray:
        """E[z' z'^T] from E[z z^T] = S (N, n_in, n_in), every client at once."""
        out = self.A @ S @ np.swapaxes(self.A, -1, -2)
        if self.B.shape[0]:
            out += np.sum(self.B @ S @ np.swapaxes(self.B, -1, -2), axis=0)
        return out


def _stage(name: str, read: BilinearMap, select: np.ndarray, keep: np.ndarray, put: np.ndarray) -> Stage:
    """The stage z' = keep z + put seam(z[select]) on augmented vectors (the last entry 1)."""
    A, B = read.augmented(select, keep.shape[1])
    return Stage(name, read, keep + put @ A, put @ B)


class NeumannModel(RoundModel):
    """Exact moments of FedBiO-Local (Algorithm 3) with stochastic Hessians and Jacobians, stage by stage."""

    def __init__(self, algorithm: Any, problem: Problem, rounds: int):
        missing = [seam for seam in SEAMS if not hasattr(algorithm, seam)]
        if missing:
            raise NotExact(f"{algorithm.name} has no seams {missing} to propagate a Neumann round through")
        self._setup_state(algorithm, problem)
        N, p, d = problem.num_clients, int(problem.dim_x), int(problem.dim_y)  # type: ignore[attr-defined]  # a bilevel problem
        if [(name, key, shape) for name, key, shape, _ in self.layout] != [("x", None, (N, p)), ("y", None, (N, d))]:
            raise NotExact(f"{algorithm.name}'s state is not the clients' (x, y): a Neumann round reads those only")
        self.N, self.p, self.d = N, p, d
        shape, self.minibatch = algorithm.neumann_layout(problem, algorithm.bx)
        self.copies = int(np.prod(shape[1:], dtype=np.int64))
        self._draw_layout()
        self.stages = self._read_stages()
        if not any(stage.read.multiplies for stage in self.stages):
            raise NotExact("no draw multiplies the state (only additive noise): the whole round is affine-Gaussian "
                           "and RoundModel reads it")
        self.P, self.P_offset = self._read_sync()
        b0 = p + d + 1
        self.index = np.array([[*(i * p + np.arange(p)), *(N * p + i * d + np.arange(d)), self.n - 1]
                               for i in range(N)])  # (N, b0): client i's (x_i, y_i, 1) in v
        chain = np.eye(b0)[None]
        for stage in self.stages[:-1]:
            chain = stage.A @ chain
        self.mean_nu = chain  # (N, 2p + d + 1, b0): start .. finish composed
        self.mean = self.stages[-1].A @ chain  # (N, b0, b0): the client's mean round
        self.Abar = np.zeros((self.n, self.n))  # the clients' blocks; they share only the constant (its 1)
        self.Abar[self.index[:, :, None], self.index[:, None, :]] = self.mean
        self.synced = np.zeros((self.n, self.n))
        self.synced[:-1, :-1], self.synced[:-1, -1], self.synced[-1, -1] = self.P, self.P_offset, 1.0
        start = self.book
        self._check(0)  # round 0 runs as composed, and its costs
        self._costs, self.book = dict(self.last_costs), start

    # -- the draws: one lower batch, one Neumann sample of one copy -------------------------------------
    def _sample(self, stream: ProbeStream) -> tuple[Any, Any]:
        alg = self.algorithm
        s_y = alg.draw_lower(self.problem, stream)
        s = self.problem.draw(stream, (self.N,), self.minibatch, **alg.neumann_oracles())  # type: ignore[attr-defined]  # FedBilevel's draw
        return s_y, s

    def _draw_layout(self) -> None:
        journal: list = []
        self.algorithm.draw_lower(self.problem, ProbeStream(1, None, purpose="noise", journal=journal))
        self.lower_calls = len(journal)
        journal = []
        self._sample(ProbeStream(1, None, purpose="noise", journal=journal))
        self.sizes, self.offsets = normal_layout(journal, self.N, f"{self.algorithm.name}'s lower batch and Neumann sample")
        self.draws = int(self.offsets[-1])

    def _serve(self, Z: np.ndarray):
        """A normal script serving the columns of Z (R, N, draws) in the probed layout, call by call."""
        return column_script(Z, self.sizes, f"{self.algorithm.name}'s draws depend on the inputs")

    # -- reading the stages off the seams ---------------------------------------------------------------
    def _read_stages(self) -> list[Stage]:
        alg, problem, N, p, d = self.algorithm, self.problem, self.N, self.p, self.d
        Q = int(alg.Q)
        rows = (Q + 3) * (self.draws + 1) * (2 * p + d + 1) * N
        if rows > STAGE_DRAWS:
            raise NotExact(f"reading {Q + 3} stages with {self.draws} draws a client at N = {N} takes {rows} probe rows "
                           f"of a client, more than the {STAGE_DRAWS} exact mode reads")

        def runner(seam: str, k: int = 0):
            def run(U: np.ndarray, Z: np.ndarray) -> np.ndarray:
                s_y, s = self._sample(ProbeStream(U.shape[0], self._serve(Z)))
                x, y, w = U[..., :p], U[..., p:p + d], U[..., p + d:]
                if seam == "start":
                    out = alg.neumann_start(problem, x, y, s)
                elif seam == "factor":
                    out = alg.neumann_factor(problem, x, y, w, s, k)
                elif seam == "finish":
                    out = alg.neumann_finish(problem, x, y, w, s)
                else:
                    out = np.concatenate(alg.local_step(problem, x, y, w, s_y), axis=-1)
                return np.asarray(out, dtype=float).reshape(U.shape[0], N, -1)
            return run

        def read(seam: str, n_in: int, k: int = 0) -> BilinearMap:
            what = f"{alg.name}.{seam if seam == 'local_step' else 'neumann_' + seam}"
            return read_bilinear(runner(seam, k), n_in, self.draws, N, self.scale, what)

        b0, bc, bn = p + d + 1, p + 3 * d + 1, 2 * p + d + 1
        X, Y = np.arange(p), p + np.arange(d)
        V, TOT, NU = p + d + np.arange(d), p + 2 * d + np.arange(d), p + d + np.arange(p)

        def put(size: int, *blocks: np.ndarray) -> np.ndarray:
            """(size, width): the seam's output (of the blocks' width) written to each of ``blocks``."""
            out = np.zeros((size, blocks[0].size))
            for block in blocks:
                out[block, np.arange(block.size)] = 1.0
            return out

        def keep(size_out: int, size_in: int, pairs: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
            out = np.zeros((size_out, size_in))
            for to, frm in pairs:
                out[to, frm] = 1.0
            out[-1, -1] = 1.0
            return out

        XY = np.r_[X, Y]
        stages = [_stage("start", read("start", p + d), XY, keep(bc, b0, [(XY, XY)]), put(bc, V, TOT))]
        for k in range(1, Q + 1):
            stages.append(_stage(f"factor {Q - k}", read("factor", p + 2 * d, Q - k), np.r_[XY, V],
                                 keep(bc, bc, [(XY, XY), (TOT, TOT)]), put(bc, V, TOT)))
        stages.append(_stage("finish", read("finish", p + 2 * d), np.r_[XY, TOT], keep(bn, bc, [(XY, XY)]),
                             put(bn, NU)))
        stages.append(_stage("local_step", read("local_step", 2 * p + d), np.r_[XY, NU], keep(b0, bn, []),
                             put(b0, XY)))
        seen = np.concatenate([stage.read.columns for stage in stages])
        if np.unique(seen).size != seen.size:
            raise NotExact(f"a draw is read by two of {alg.name}'s stages: the stages' noises are not independent")
        return stages

    def _read_sync(self) -> tuple[np.ndarray, np.ndarray]:
        """The sync's affine map on (x_1..x_N, y_1..y_N), read off ``communicate`` and checked on random states."""
        n, N, p, d = self.n_state, self.N, self.p, self.d

        def run(V: np.ndarray) -> np.ndarray:
            x, y = V[:, :N * p].reshape(-1, N, p), V[:, N * p:].reshape(-1, N, d)
            nx, ny = self.algorithm.communicate(x, y)
            return np.hstack([np.asarray(nx, float).reshape(V.shape[0], -1), np.asarray(ny, float).reshape(V.shape[0], -1)])

        out = run(np.vstack([np.zeros(n), np.eye(n)]))
        c = out[0]
        P = (out[1:] - c).T
        Vr = self.scale * np.random.default_rng(4).standard_normal((3, n))
        gap = _close(run(Vr), Vr @ P.T + c)
        if not gap <= AFFINE_RTOL:
            raise NotExact(f"{self.algorithm.name}.communicate is not affine (off by {gap:.2e} on random states)")
        return P, c

    # -- the round check: the algorithm's round against the composed stages ------------------------------
    def _predict(self, V: np.ndarray, Z: list[np.ndarray]) -> np.ndarray:
        """The composed stages on states V (R, n_state) with each copy's draws Z[c] (R, N, draws), no sync."""
        N, p, d = self.N, self.p, self.d
        x, y = V[:, :N * p].reshape(-1, N, p), V[:, N * p:].reshape(-1, N, d)
        xy = np.concatenate([x, y], axis=-1)
        nus = []
        for z in Z:
            v = self.stages[0].read.apply(xy, z)
            total = v.copy()
            for stage in self.stages[1:-2]:
                v = stage.read.apply(np.concatenate([xy, v], axis=-1), z)
                total = total + v
            nus.append(self.stages[-2].read.apply(np.concatenate([xy, total], axis=-1), z))
        out = self.stages[-1].read.apply(np.concatenate([xy, np.mean(nus, axis=0)], axis=-1), Z[0])
        return np.hstack([out[..., :p].reshape(V.shape[0], -1), out[..., p:].reshape(V.shape[0], -1)])

    def _check(self, t: int) -> bool:
        """Round t on random states and draws against the composed stages: whether it synced. Sets the round's
        costs and bookkeeping."""
        rng = np.random.default_rng([t, 7])
        R, n = 3, self.n_state
        V = self.scale * rng.standard_normal((R, n))
        recorded: list[np.ndarray] = []

        def script(index: int, shape: tuple[int, ...]) -> np.ndarray:
            recorded.append(rng.standard_normal((R, *shape)))
            return recorded[-1]

        new, costs = self.algorithm.round(self.unflatten(V), self.problem, t,
                                          ProbeStreams(R, lambda purpose: ProbeStream(R, script, purpose=purpose)))
        actual = self.flatten(new)
        if len(recorded) != len(self.sizes):
            raise NotExact(f"{self.algorithm.name}.round drew {len(recorded)} times, its seams' samples "
                           f"{len(self.sizes)}: it does not run its seams as probed")
        Z = []
        for c in range(self.copies):
            columns = []
            for j, draw in enumerate(recorded):
                lower = j < self.lower_calls
                if self.copies > 1 and not lower:
                    if draw.shape[1:3] != (self.N, self.copies):
                        raise NotExact(f"{self.algorithm.name}.round's Neumann draw has shape {draw.shape[1:]}, not "
                                       f"{self.copies} copies a client")
                    draw = draw[:, :, c]
                columns.append(draw.reshape(R, self.N, -1))
            Z.append(np.concatenate(columns, axis=-1))
        if Z[0].shape[-1] != self.draws:
            raise NotExact(f"{self.algorithm.name}.round's draws are laid out otherwise than its seams' samples")
        plain = self._predict(V, Z)
        synced = plain @ self.P.T + self.P_offset
        if _close(actual, plain) <= AFFINE_RTOL:
            sync = False
        elif _close(actual, synced) <= AFFINE_RTOL:
            sync = True
        else:
            raise NotExact(f"{self.algorithm.name}.round at t = {t} is not its seams composed (off by "
                           f"{min(_close(actual, plain), _close(actual, synced)):.2e} on random states and draws)")
        self.book = self._bookkeeping(new)
        self.last_costs = {k: float(np.mean(v)) for k, v in costs.items()}
        return sync

    # -- the model interface used by run_exact ------------------------------------------------------------
    def step(self, t: int, flat: np.ndarray) -> np.ndarray:
        sync = self._check(t)
        n = self.n
        S = flat.reshape(n, n)
        ix = self.index
        client = S[ix[:, :, None], ix[:, None, :]]  # (N, b0, b0): E[w_i w_i^T]
        moment = client
        for stage in self.stages[:-1]:
            moment = stage.moment(moment)
        if self.copies > 1:  # the mean of b_x i.i.d. estimators: the random part of (x, y, nu) over b_x
            mean = self.mean_nu @ client @ np.swapaxes(self.mean_nu, -1, -2)
            moment = mean + (moment - mean) / self.copies
        random = self.stages[-1].moment(moment) - self.mean @ client @ np.swapaxes(self.mean, -1, -2)
        random[:, -1, :] = 0.0  # the constant is not random (round-off only)
        random[:, :, -1] = 0.0
        out = self.Abar @ S @ self.Abar.T
        out[ix[:, :-1, None], ix[:, None, :-1]] += random[:, :-1, :-1]  # disjoint client blocks: no repeated index
        if sync:
            out = self.synced @ out @ self.synced.T
        return out.reshape(-1)
