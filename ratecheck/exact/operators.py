"""Round operators on the second moment of the augmented state (vec S -> vec S')."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DENSE_MAX = 16  # augmented states up to this size propagate as one dense (n^2 x n^2) matrix
MIXTURE_DENSE_MAX = 40  # averaged over many sampling outcomes, dense pays off up to this size (20 MB)


@dataclass(frozen=True)
class RoundOperator:
    """One round on the second moment S of the augmented state v = (..., 1):

    S' = F S F^T + E X E^T + S[-1, -1] N,  vec X = Q vec S,

    F = M + E B the mean dynamics, E where the direction enters, X = Cov(D | v) averaged over the
    sampling, the delays and the noise (the noise enters through S[-1, -1] = 1). E[v] = S[:, -1].
    ``noise`` (N) is a state-independent covariance added directly (RoundModel: G G^T), so that a
    model without a direction needs no (n^2 x n^2) Q.
    """

    F: np.ndarray  # (n, n)
    E: np.ndarray | None = None  # (n, d)
    Q: np.ndarray | None = None  # (d*d, n*n)
    noise: np.ndarray | None = None  # (n, n)

    def __post_init__(self) -> None:
        # small states: one (n^2, n^2) matrix, vec S' = (F (x) F + (E (x) E) Q) vec S, is one call
        # per round instead of six (numpy call overhead dominates at these sizes)
        n = self.F.shape[0]
        dense = None
        if n <= DENSE_MAX:  # einsum, not a threaded GEMM (see _outer_map)
            dense = np.kron(self.F, self.F)
            if self.E is not None:
                dense = dense + np.einsum("ij,jk->ik", np.kron(self.E, self.E), self.Q)
            if self.noise is not None:
                dense[:, -1] += self.noise.reshape(-1)
        object.__setattr__(self, "dense", dense)

    def apply(self, flat: np.ndarray) -> np.ndarray:
        """vec S -> vec S' (row-major vec of the n x n second moment)."""
        if self.dense is not None:
            return self.dense @ flat
        n = self.F.shape[0]
        second = flat.reshape(n, n)
        out = self.F @ second @ self.F.T
        if self.E is not None:
            d = self.E.shape[1]
            X = (self.Q @ flat).reshape(d, d)
            out += self.E @ X @ self.E.T
        if self.noise is not None:
            out += second[-1, -1] * self.noise
        return out.reshape(-1)


def _outer_map(jobs: np.ndarray) -> np.ndarray:
    """sum_j J_j (x) J_j as a (d, d, n, n) array: the map S -> sum_j J_j S J_j^T, for jobs (..., d, n)."""
    d, n = jobs.shape[-2:]
    flat = jobs.reshape(-1, d * n)
    # einsum, not BLAS: a threaded GEMM of this size loses more to thread start-up than it gains
    return np.einsum("ja,jb->ab", flat, flat).reshape(d, n, d, n).transpose(0, 2, 1, 3)


@dataclass(frozen=True)
class MixtureOperator:
    """One round averaged over the clients drawn: S' = sum_ab W_ab F_a S F_b^T + S[-1, -1] noise.

    Enumerated outcomes: F_a the round's map under outcome a and W = diag P(a). Rounds additive
    over the clients drawn (F_s = sum_i n_i D_i): F_i = D_i and W = E[n n^T], the multiplicities'
    second moments. ``noise`` is the expected covariance of the noise. Small states propagate as
    one dense (n^2 x n^2) matrix, built once.
    """

    F: np.ndarray  # (K, n, n)
    W: np.ndarray  # (K, K), symmetric
    noise: np.ndarray  # (n, n)

    def __post_init__(self) -> None:
        K, n, _ = self.F.shape
        dense = None
        if n <= DENSE_MAX or (n <= MIXTURE_DENSE_MAX and n <= 4 * K):  # dense: n^4 a round, else 4 K n^3
            Y = np.tensordot(self.W, self.F, axes=(0, 0))  # Y_b = sum_a W_ab F_a
            dense = np.tensordot(Y, self.F, axes=(0, 0)).transpose(0, 2, 1, 3).reshape(n * n, n * n)
            dense[:, -1] += self.noise.reshape(-1)
        object.__setattr__(self, "dense", dense)

    def apply(self, flat: np.ndarray) -> np.ndarray:
        """vec S -> vec S' (row-major vec of the n x n second moment)."""
        if self.dense is not None:
            return self.dense @ flat
        K, n, _ = self.F.shape
        second = flat.reshape(n, n)
        Y = np.tensordot(self.W, (self.F.reshape(K * n, n) @ second).reshape(K, n, n), axes=(0, 0))  # sum_a W_ab F_a S
        # sum_b Y_b F_b^T as one product: (n, K n) @ (K n, n)
        out = Y.transpose(1, 0, 2).reshape(n, K * n) @ self.F.transpose(0, 2, 1).reshape(K * n, n)
        return (out + second[-1, -1] * self.noise).reshape(-1)
