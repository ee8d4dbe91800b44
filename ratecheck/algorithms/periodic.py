"""Shared machinery for local-SGD algorithms whose clients keep state between communications.

FedBiO-type methods (issue #10) are written per iteration: every client holds its own variables
(and momenta) across iterations, and the server averages some of them every I iterations. The
engine's "round" is then one iteration t = 1..T, and the measure is taken every iteration at the
virtual averages x_bar_t = (1/M) sum_m x_t^(m) (spec fedbio §0, pitfall 6). This module holds:

* ``is_sync`` and ``average``: the communication schedule (t % I == 0 with t starting at 1) and the
  client average broadcast back to every client;
* ``storm``: the STORM momentum update (spec §2.2 lines 9-11) from one sample at two points;
* ``storm_step_size``: the sigma-free alpha_t schedule of the proofs (spec §2.6 item 4).

Problems provide the oracles through one sample object evaluated at any point:
``draw(noise, shape, batch, hessians, oracles)`` and ``grad_x_f``, ``grad_y_f``, ``grad_y_g``,
``jvp`` (grad_xy g u) and ``hvp`` (grad_yy g u, the k-th Hessian draw).
"""

from __future__ import annotations

import numpy as np


def is_sync(iteration: int, period: int) -> bool:
    """Communication at iteration t (t >= 1) when t % I == 0: the first average after I local steps."""
    return iteration % period == 0


def average(z: np.ndarray) -> np.ndarray:
    """Client average (R, M, ...) broadcast back to every client: what a sync leaves on each client."""
    return np.broadcast_to(z.mean(axis=1, keepdims=True), z.shape).copy()


def storm(new: np.ndarray, old: np.ndarray, momentum: np.ndarray, weight: float) -> np.ndarray:
    """d_{t+1} = G(z_{t+1}; B) + (1 - c alpha_t^2)(d_t - G(z_t; B)), ``weight`` = 1 - c alpha_t^2,
    with ``new`` and ``old`` the same minibatch B evaluated at the two points (pitfall 2)."""
    return new + weight * (momentum - old)


def storm_step_size(iteration: int, bM: float, u_bar: float, gain: float) -> float:
    """alpha_t = gain (bM)^(2/3) / ((bM)^2 u_bar + t)^(1/3): the proofs' schedule with sigma cancelled
    (spec §2.6 item 4; gain = (16 L_tilde)^(-1/3) in Theorem 6, Lhat^(-2/3) in Theorem 8)."""
    return gain * bM ** (2.0 / 3.0) / (bM**2 * u_bar + iteration) ** (1.0 / 3.0)
