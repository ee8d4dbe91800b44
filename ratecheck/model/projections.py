"""Euclidean projections shared by every algorithm family, vectorized over leading axes.

Each takes points of shape (..., d) and projects along the last axis.
"""

from __future__ import annotations

import numpy as np


def project_ball(x: np.ndarray, radius: float, center: np.ndarray | float = 0.0) -> np.ndarray:
    """Onto {z : ||z - center|| <= radius}."""
    if not radius > 0:
        raise ValueError(f"radius must be > 0, got {radius!r}")
    diff = x - center
    norm = np.linalg.norm(diff, axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):  # only points outside the ball are divided
        scale = np.where(norm > radius, radius / norm, 1.0)
    return center + diff * scale


def project_box(x: np.ndarray, lower: np.ndarray | float, upper: np.ndarray | float) -> np.ndarray:
    """Onto {z : lower <= z <= upper} (coordinate-wise clipping)."""
    if np.any(np.asarray(lower) > np.asarray(upper)):
        raise ValueError("box is empty: some lower bound exceeds its upper bound")
    return np.clip(x, lower, upper)


def project_simplex(x: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Onto {z >= 0 : sum z = total}, by the sort-based algorithm (Held et al.; Duchi et al. 2008)."""
    if not total > 0:
        raise ValueError(f"simplex total must be > 0, got {total!r}")
    d = x.shape[-1]
    u = -np.sort(-x, axis=-1)  # descending
    css = np.cumsum(u, axis=-1) - total
    ks = np.arange(1, d + 1)
    cond = u - css / ks > 0
    rho = d - 1 - np.argmax(cond[..., ::-1], axis=-1)  # last index where cond holds
    theta = np.take_along_axis(css, rho[..., None], axis=-1) / (rho[..., None] + 1)
    return np.maximum(x - theta, 0.0)
