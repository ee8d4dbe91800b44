"""The measures of FedBiO's Lemma 8 (appendix B.1.4), registered for the fedbio_bilevel family (issue #20
item 5: a paper's lemma quantities live with the paper; the engine records them through the registry's
``ratecheck.measures`` entry points, see pyproject.toml).

At the client iterates (R, M, .) of FedBiO (its ``client_measures`` option outputs them), in the global
setting: hg_bias = ||grad h(x_bar) - E_xi nu_bar||^2 with nu^(m) = grad_x f_m(x_m, y_m) - grad_xy g_m u_m
(exact oracles: the expectation over the sample), and the dispersions x_drift, y_drift, u_disp =
(1/M) sum_m ||v_bar - v^(m)||^2. They are quadratic forms of the state, so exact runs record them too.

This module stays light (numpy and the Measures record): a run of the family imports it, not the paper.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ratecheck.problem import Measures


def _spread(v: np.ndarray) -> np.ndarray:
    return ((v - v.mean(1, keepdims=True)) ** 2).sum(-1).mean(-1)


def lemma8_measures(problem: Any, point: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """hg_bias, x_drift, y_drift, u_disp at the client iterates (see the module docstring)."""
    if problem.setting != "global":  # the local setting has no u^(m) (Lemma 8 is about the global one)
        return {}
    xs, ys, us = point["x_clients"], point["y_clients"], point["u_clients"]
    exact = problem.draw(None, ())
    nu = (problem.grad_x_f(xs, ys, exact) - problem.jvp(xs, ys, us, exact)).mean(1)
    bias = problem.hypergrad(xs.mean(1)) - nu
    return {"hg_bias": np.einsum("ri,ri->r", bias, bias), "x_drift": _spread(xs), "y_drift": _spread(ys),
            "u_disp": _spread(us)}


LEMMA_8 = Measures(compute=lemma8_measures, needs=("x_clients", "y_clients", "u_clients"),
                   names=("hg_bias", "x_drift", "y_drift", "u_disp"),
                   source="FedBiO Lemma 8 (appendix B.1.4)")
