"""Round operators on the second moment of the augmented state (vec S -> vec S')."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    dense: np.ndarray | None = field(init=False, repr=False, compare=False)  # set in __post_init__

    def __post_init__(self) -> None:
        # small states: one (n^2, n^2) matrix, vec S' = (F (x) F + (E (x) E) Q) vec S, is one call
        # per round instead of six (numpy call overhead dominates at these sizes)
        n = self.F.shape[0]
        dense = None
        if n <= DENSE_MAX:  # einsum, not a threaded GEMM (see _outer_map)
            dense = np.kron(self.F, self.F)
            if self.E is not None:
                assert self.Q is not None  # a direction E comes with its covariance map Q
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

    When W's off-diagonal entries are all equal (E n_i n_k for i != k under every supported sampling
    scheme), W = c 11^T + diag(e) and the double sum collapses to c Fsum S Fsum^T + sum_a e_a F_a S F_a^T:
    O(K n^3) a round, never the O(K^2 n^2) pair sum.

    Enumerated outcomes: F_a the round's map under outcome a and W = diag P(a). Rounds additive
    over the clients drawn (F_s = sum_i n_i D_i): F_i = D_i and W = E[n n^T], the multiplicities'
    second moments. ``noise`` is the expected covariance of the noise. Small states propagate as
    one dense (n^2 x n^2) matrix, built once.
    """

    F: np.ndarray  # (K, n, n)
    W: np.ndarray  # (K, K), symmetric
    noise: np.ndarray  # (n, n)
    # set in __post_init__; F_stacked_T only when there is no dense matrix
    dense: np.ndarray | None = field(init=False, repr=False, compare=False)
    collapsed: tuple[float, np.ndarray, np.ndarray] | None = field(init=False, repr=False, compare=False)
    F_stacked_T: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        K, n, _ = self.F.shape
        dense = None
        if n <= DENSE_MAX or (n <= MIXTURE_DENSE_MAX and n <= 4 * K):  # dense: n^4 a round, else 4 K n^3
            Y = np.tensordot(self.W, self.F, axes=(0, 0))  # Y_b = sum_a W_ab F_a
            dense = np.tensordot(Y, self.F, axes=(0, 0)).transpose(0, 2, 1, 3).reshape(n * n, n * n)
            dense[:, -1] += self.noise.reshape(-1)
        object.__setattr__(self, "dense", dense)
        object.__setattr__(self, "collapsed", None)
        if dense is None:
            object.__setattr__(self, "F_stacked_T", self.F.transpose(0, 2, 1).reshape(K * n, n).copy())
            off = self.W[~np.eye(K, dtype=bool)]
            if K > 1 and np.all(off == off[0]):  # the multiplicities' moments: E n_i n_k the same for i != k
                c = float(off[0])
                object.__setattr__(self, "collapsed", (c, np.diag(self.W) - c, self.F.sum(axis=0)))

    def apply(self, flat: np.ndarray) -> np.ndarray:
        """vec S -> vec S' (row-major vec of the n x n second moment)."""
        if self.dense is not None:
            return self.dense @ flat
        K, n, _ = self.F.shape
        second = flat.reshape(n, n)
        FS = (self.F.reshape(K * n, n) @ second).reshape(K, n, n)
        if self.collapsed is not None:  # W = c 11^T + diag(e): c Fsum S Fsum^T + sum_a e_a F_a S F_a^T
            c, e, total = self.collapsed
            out = _weighted_sandwich(FS, e, self.F_stacked_T) + c * (total @ second @ total.T)
            return (out + second[-1, -1] * self.noise).reshape(-1)
        Y = np.tensordot(self.W, FS, axes=(0, 0))  # sum_a W_ab F_a S
        # sum_b Y_b F_b^T as one product: (n, K n) @ (K n, n)
        out = Y.transpose(1, 0, 2).reshape(n, K * n) @ self.F_stacked_T
        return (out + second[-1, -1] * self.noise).reshape(-1)


def _weighted_sandwich(left: np.ndarray, weights: np.ndarray, right_T: np.ndarray) -> np.ndarray:
    """sum_j weights_j left_j right_j^T for left (J, p, q) and the stacked right_j^T (J q, p'): one
    (p, J q) @ (J q, p') product."""
    J, p, q = left.shape
    scaled = left * weights[:, None, None]
    return scaled.transpose(1, 0, 2).reshape(p, J * q) @ right_T


@dataclass(frozen=True)
class JobsOperator:
    """One round of the FedAvg family on the second moment S (n x n) of v = (x-part, 1), never as an
    (n^2 x n^2) or (d^2 x n^2) operator:

    S' = F S F^T + E X E^T,
    X  = pair Jsum S Jsum^T + sum_j c_j J_j S J_j^T + S[-1, -1] noise,

    X the direction's covariance given v averaged over the sampling, the delays and the noise (the
    multiplicities' moments are folded into ``pair`` and the weights c_j), J_j = [Jx_j, b_j] (d x n)
    the local jobs (a client at a delay, or its delay-averaged job), F = M + E B the mean dynamics,
    E (n x d) where the direction enters. Each J_j S J_j^T splits into Jx_j Sxx Jx_j^T (the only
    O(d n^2) part), Jx_j s b_j^T and its transpose (s = E[x-part], O(d n) per job) and S[-1, -1]
    b_j b_j^T (a constant); the first sums over an exact low-rank basis of the Jx_j when they span few
    directions (every client with the same curvature: one), so a round costs O(r d n^2 + J d n).
    """

    F: np.ndarray  # (n, n)
    E: np.ndarray  # (n, d)
    Jsum: np.ndarray  # (d, n)
    pair: float
    jobs: np.ndarray  # (J, d, n)
    weights: np.ndarray  # (J,)
    noise: np.ndarray  # (d, d)
    # set in __post_init__
    basis_flat: np.ndarray = field(init=False, repr=False, compare=False)
    basis_weights: np.ndarray = field(init=False, repr=False, compare=False)
    Jx_flat: np.ndarray = field(init=False, repr=False, compare=False)
    weighted_b: np.ndarray = field(init=False, repr=False, compare=False)
    constant: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        J, d, n = self.jobs.shape
        Jx, b = self.jobs[:, :, :-1], self.jobs[:, :, -1].copy()
        Jx_flat = Jx.reshape(J * d, n - 1)  # a copy (Jx is a strided view): the one O(J d n) stack kept
        stack = Jx_flat.reshape(J, d, n - 1)
        basis, scale = _span(stack, self.weights)
        r = basis.shape[0]
        # the jobs themselves as their basis (per-client curvature): share the stack, no second copy
        object.__setattr__(self, "basis_flat", Jx_flat if basis is stack else basis.reshape(r * d, n - 1))
        object.__setattr__(self, "basis_weights", scale)
        object.__setattr__(self, "Jx_flat", Jx_flat)
        object.__setattr__(self, "weighted_b", self.weights[:, None] * b)
        object.__setattr__(self, "constant", np.einsum("j,ja,jb->ab", self.weights, b, b) + self.noise)

    def apply(self, flat: np.ndarray) -> np.ndarray:
        """vec S -> vec S' (row-major vec of the n x n second moment)."""
        n = self.F.shape[0]
        J, d, _ = self.jobs.shape
        second = flat.reshape(n, n)
        Sxx, s = second[:-1, :-1], second[:-1, -1]
        X = self._sandwich(Sxx)
        cross = (self.Jx_flat @ s).reshape(J, d).T @ self.weighted_b  # sum_j c_j (Jx_j s) b_j^T
        X += cross
        X += cross.T
        if self.pair:
            X += self.pair * (self.Jsum @ second @ self.Jsum.T)
        X += second[-1, -1] * self.constant
        out = self.F @ second @ self.F.T + self.E @ X @ self.E.T
        return out.reshape(-1)

    def _sandwich(self, Sxx: np.ndarray) -> np.ndarray:
        """sum_k lam_k U_k Sxx U_k^T over the basis, in chunks of SANDWICH_ELEMENTS (one GEMM per chunk:
        the temporaries stay O(chunk d n), not O(J d n))."""
        d, m = self.jobs.shape[1], Sxx.shape[0]
        r = self.basis_weights.size
        chunk = max(1, SANDWICH_ELEMENTS // max(d * m, 1))
        X = np.zeros((d, d))
        for lo in range(0, r, chunk):
            hi = min(lo + chunk, r)
            basis = self.basis_flat[lo * d:hi * d]
            right_T = basis.reshape(hi - lo, d, m).transpose(0, 2, 1).reshape((hi - lo) * m, d)
            X += _weighted_sandwich((basis @ Sxx).reshape(hi - lo, d, m), self.basis_weights[lo:hi], right_T)
        return X


SANDWICH_ELEMENTS = 2**22  # elements of one chunk of the jobs' sandwich sum (32 MB of temporaries each)
SPAN_RTOL = 1e-10  # singular values below this fraction of the largest are round-off in the jobs' span
GRAM_SURE = 1e-8  # Gram eigenvalues above this fraction: singular values above 1e-4 of the largest


def _span(jobs: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(U, lam) with sum_k lam_k U_k S U_k^T = sum_j weights_j jobs_j S jobs_j^T for every S: the
    weighted Gram sum_j w_j vec(J_j) vec(J_j)^T diagonalized on the jobs' span when it has at most
    half as many directions as there are jobs (else the jobs themselves). Exact up to the dropped
    singular values (< SPAN_RTOL of the largest, round-off between equal jobs)."""
    J = jobs.shape[0]
    if J < 2:
        return jobs, weights
    # a Gram eigenvalue above GRAM_SURE of the largest is a singular value far above SPAN_RTOL: when
    # more than half are, the jobs span too many directions and the SVD (O(J d n) more memory) is skipped
    gram = np.zeros((J, J))
    rows = max(1, SANDWICH_ELEMENTS // max(J * int(np.prod(jobs.shape[2:], dtype=np.int64)), 1))
    for lo in range(0, jobs.shape[1], rows):  # in row blocks: a strided stack is not copied whole
        part = jobs[:, lo:lo + rows].reshape(J, -1)
        gram += part @ part.T
    eigenvalues = np.linalg.eigvalsh(gram)
    if np.sum(eigenvalues > GRAM_SURE * eigenvalues[-1]) > J // 2:
        return jobs, weights
    Z = jobs.reshape(J, -1)
    P, sing, Vt = np.linalg.svd(Z, full_matrices=False)
    r = int(np.sum(sing > SPAN_RTOL * sing[0])) if sing[0] > 0 else 0
    if r > J // 2:
        return jobs, weights
    B = P[:, :r] * sing[:r]  # Z ~ B Vt[:r]
    lam, W = np.linalg.eigh(B.T @ (weights[:, None] * B))
    return (W.T @ Vt[:r]).reshape((r, *jobs.shape[1:])), lam
