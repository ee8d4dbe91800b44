"""Whole rounds bilinear in (state, noise), exactly (issue #21 item 4): v' = A v + c + sum_q z_q (F_q v + g_q).

A round whose oracle draws a random Jacobian or Hessian and applies it once to the state (FedBiO's u-step
u + tau (grad_y f - H(xi) u) and direction grad_x f - J(xi) u; FedBiOAcc's STORM targets J(xi) u at both points)
is bilinear in (state, draws), not affine: RoundModel refuses it. Its second moment is still closed-form on the
augmented state (v, 1):

    E[v' v'^T] = Abar S Abar^T + sum_q B_q S B_q^T,   Abar = [[A, c], [0, 1]],  B_q = [[F_q, g_q], [0, 0]],

the z_q independent with unit variance (no cross terms). The maps are read off the round itself
(ratecheck.exact.bilinear.read_bilinear: unit states times unit draws, after a second-difference refusal of terms
quadratic in the draws), every round re-verified on random states and draws as RoundModel does, re-read when the
map moved (a step-size schedule, a sync). B_q S B_q^T is taken on the columns B_q reads (a client's draw reads that
client's block), the draws reading the same columns in two products: O(P n^2 k) a round for P draws reading k
columns each, not P n^3.

Rounds that sample clients are not supported here (RoundModel averages client sampling for affine rounds only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..problem import Problem
from .bilinear import BilinearMap, read_bilinear
from .probing import AFFINE_RTOL, NotExact, _close
from .round_model import RoundModel, _same

KNOWN_MAPS = 8  # bilinear round maps kept for re-verification (e.g. a sync round and a local one)


@dataclass(frozen=True)
class BilinearOperator:
    """S -> Abar S Abar^T + sum_q B_q S B_q^T on vec E[(v, 1)(v, 1)^T]; the draws grouped by the columns their B_q
    read (a client's draws read its block), each group as two products: [B_q1 .. B_qG] (I (x) S_CC) [..]^T."""

    Abar: np.ndarray  # (n, n)
    B: tuple[np.ndarray, ...]  # per group: (G, n, k), the B_q on the group's k columns
    columns: tuple[np.ndarray, ...]

    @classmethod
    def of(cls, read: BilinearMap) -> BilinearOperator:
        n = read.T.shape[-1] + 1
        A, B = read.augmented(np.arange(n - 1), n)
        Abar = np.zeros((n, n))
        Abar[:-1] = A[0]
        Abar[-1, -1] = 1.0
        pad = np.zeros((B.shape[0], n, n))
        pad[:, :-1] = B[:, 0]
        groups: dict[tuple[int, ...], list[np.ndarray]] = {}
        for Bq in pad:
            cols = tuple(int(j) for j in np.flatnonzero(np.any(Bq != 0.0, axis=0)))
            if cols:
                groups.setdefault(cols, []).append(Bq[:, list(cols)])
        return cls(Abar, tuple(np.stack(g) for g in groups.values()), tuple(np.array(c) for c in groups))

    def apply(self, flat: np.ndarray) -> np.ndarray:
        n = self.Abar.shape[0]
        S = flat.reshape(n, n)
        out = self.Abar @ S @ self.Abar.T
        for Bg, cols in zip(self.B, self.columns, strict=True):
            G, _, k = Bg.shape
            left = (Bg @ S[np.ix_(cols, cols)]).transpose(1, 0, 2).reshape(n, G * k)
            out += left @ Bg.transpose(0, 2, 1).reshape(G * k, n)
        return out.reshape(-1)


@dataclass(frozen=True)
class _KnownBilinear:
    read: BilinearMap
    operator: BilinearOperator
    sizes: tuple[int, ...]


class BilinearRoundModel(RoundModel):
    """Exact moments of an algorithm whose whole round is bilinear in (array state, standard-normal draws)."""

    def __init__(self, algorithm: Any, problem: Problem, rounds: int):
        self._setup_state(algorithm, problem)
        if self._sampler() is not None:
            raise NotExact(f"{algorithm.name}.round samples clients: bilinear rounds are read under full participation only")
        self._known: list[_KnownBilinear] = []  # type: ignore[assignment]  # bilinear maps, not affine ones
        start = self.book
        self._operator(0)
        self._costs, self.book = dict(self.last_costs), start

    def _read(self, t: int, book: Mapping[str, Any], sizes: tuple[int, ...]) -> _KnownBilinear:
        """Round t's bilinear map from bookkeeping ``book``, its draws laid out as ``sizes``."""
        n, draws = self.n_state, int(sum(sizes))
        books: list = []

        def run(U: np.ndarray, Z: np.ndarray) -> np.ndarray:
            out, _, _, after = self._rows(U[:, 0], t, Z[:, 0] if draws else None, book, None, sizes if draws else None)
            books.extend(after)
            return out[:, None]

        read = read_bilinear(run, n, draws, 1, self.scale, f"{self.algorithm.name}.round")
        for name in books[0]:
            if not all(_same(b[name], books[0][name]) for b in books):
                raise NotExact(f"{self.algorithm.name}'s state field {name!r} is not an array and depends on the "
                               "iterates or the noise")
        return _KnownBilinear(read, BilinearOperator.of(read), sizes)

    def _operator(self, t: int) -> BilinearOperator:  # type: ignore[override]  # a bilinear operator
        """Round t's operator: a known map if the round on random states and draws matches it, else read."""
        V, z, actual, sizes, costs, after = self._random_call(t)
        self.last_costs = {k: float(np.mean(v)) for k, v in costs.items()}
        for k, known in enumerate(self._known):
            if known.sizes == sizes and _close(actual, known.read.apply(V[:, None], z[:, None])[:, 0]) <= AFFINE_RTOL:
                self._known.insert(0, self._known.pop(k))
                self.book = after
                return known.operator
        known = self._read(t, self.book, sizes)
        gap = _close(actual, known.read.apply(V[:, None], z[:, None])[:, 0])
        if not gap <= AFFINE_RTOL:
            raise NotExact(f"{self.algorithm.name}.round is not bilinear in (state, noise): off by {gap:.2e} on random "
                           "inputs")
        self._known = [known, *self._known[:KNOWN_MAPS - 1]]
        self.book = after
        return known.operator

    def step(self, t: int, flat: np.ndarray) -> np.ndarray:
        return self._operator(t).apply(flat)


def whole_round_model(algorithm: Any, problem: Problem, rounds: int) -> RoundModel:
    """RoundModel for affine-Gaussian rounds; a round refused as not affine is read as a bilinear one."""
    try:
        return RoundModel(algorithm, problem, rounds)
    except NotExact as affine:
        if "is not affine in (state, noise)" not in str(affine):
            raise
        try:
            return BilinearRoundModel(algorithm, problem, rounds)
        except NotExact as why:
            raise NotExact(f"{affine}; read as a bilinear round: {why}") from None
