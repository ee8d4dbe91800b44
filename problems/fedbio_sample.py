"""FedBiO's test problems: the tests and settings, one minibatch sample of the four stochastic oracles (spec fedbio
§1.3), and the pseudo-Huber derivatives and batched products the family evaluates them with."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FEDBIO_TESTS = ("A", "B", "C1", "C2", "D", "Dp")
SETTINGS = ("global", "local")


@dataclass(frozen=True, eq=False)
class OracleSample:
    """One minibatch per client of every oracle (spec §1.3): noise arrays with a leading replica axis,
    None where the oracle is exact. The same sample evaluated at two points gives STORM's difference
    (spec §2.2 line 8). ``H`` has a draw axis of length Q for the Neumann series. Under N2 with matrix
    rows the B_y minibatch also carries its rows' deviations of A_m and B_m (``gA``, ``gB``): grad_y g's
    noise then depends on the point it is evaluated at (spec §6.0 N2)."""

    fx: np.ndarray | None  # (R, m, p)    x-block of grad f (batch B_f,1)
    fy: np.ndarray | None  # (R, m, d)    y-block of grad f (batch B_f,2)
    gy: np.ndarray | None  # (R, m, d)    grad_y g, its additive part (batch B_y)
    J: np.ndarray | None  # (R, m, p, d) grad_xy g (batch B_g,1)
    H: np.ndarray | None  # (R, m, k, d, d) grad_yy g, k independent draws (batch B_g,2 / xi_1..xi_Q)
    gA: np.ndarray | None = None  # (R, m, d, d) N2: the B_y rows' mean deviation of A_m (grad_y g's y-part)
    gB: np.ndarray | None = None  # (R, m, d, p) N2: the B_y rows' mean deviation of B_m (grad_y g's x-part)


def _pseudo_huber_prime(r: np.ndarray, delta: float) -> np.ndarray:
    return r / np.sqrt(1 + (r / delta) ** 2)


def _pseudo_huber_second(r: np.ndarray, delta: float) -> np.ndarray:
    return (1 + (r / delta) ** 2) ** -1.5


def _matvec(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A (..., i, j) times v (..., j), broadcasting client-only matrices (m, i, j) over replicas;
    one shared matrix (i, j) is a single product."""
    if A.ndim == 2:
        return v @ A.T
    return (A @ v[..., None])[..., 0]


def joint_hessian_norm(A: np.ndarray, B: np.ndarray) -> float:
    """max_m ||[[0, -B_m^T], [-B_m, A_m]]||_2: the joint smoothness of g_m in z = (x, y) (spec §6.1)."""
    M, d, p = B.shape
    joint = np.zeros((M, p + d, p + d))
    joint[:, p:, :p] = -B
    joint[:, :p, p:] = -np.swapaxes(B, 1, 2)
    joint[:, p:, p:] = A
    return float(np.abs(np.linalg.eigvalsh(joint)).max())
