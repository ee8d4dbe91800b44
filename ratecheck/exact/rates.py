"""Exact linear rates as eigenvalues of the exact moment map (issue #21).

Where a run's round is time-invariant, its second moment evolves as S_{t+1} = L(S_t) on the
augmented state v = (..., 1). Deviations from the fixed point have S[-1, -1] = 0, a subspace L keeps
(the constant stays 1) and on which the noise term vanishes, so the exact asymptotic contraction
factor of E||x_t - x_lim||^2 (any quadratic measure, minus its limit) is the spectral radius of L
there; the mean contracts at the spectral radius of the mean map. Both are computed by Arnoldi
(scipy.sparse.linalg.eigs) on the map's ACTION, the model's own round operator: never the dense
(n^2 x n^2) matrix. Eigenvalues exactly 1 (a set of fixed points, directions a measure does not
see) are left out, as in a hand-written 2 log rho(F) that skips them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .diagonal import DiagonalFedAvgModel
from .probing import NotExact
from .run import model_for

UNIT_GAP = 1e-9  # |lambda - 1| below this: a fixed direction of the round, not a contraction
EIGS_TOL = 1e-13  # Arnoldi's relative tolerance on the Ritz values


@dataclass(frozen=True)
class ExactRates:
    """Spectral radii of a time-invariant round. On {S[-1, -1] = 0} the second-moment map is block
    triangular: the mean block S[:-1, -1] evolves by the mean map alone (radius ``mean``), the block
    S[:-1, :-1] given a zero mean block by the centred second-moment map (radius ``second``). A
    quadratic measure minus its limit thus decays like max(second, mean)^t in general, and like
    second^t when the components along the mean cancel (a deterministic run measured at its fixed
    point: second = rho(F)^2)."""

    second: float
    mean: float

    @property
    def log_second(self) -> float:
        return math.log(self.second) if self.second > 0 else -math.inf

    @property
    def log_mean(self) -> float:
        return math.log(self.mean) if self.mean > 0 else -math.inf


def _operator(model: Any) -> Any:
    """The model's round operator at t = 0, refused unless the model vouches it holds for every t."""
    if hasattr(model, "operator"):  # FedAvgModel: delay tables periodic with period lam + 1
        if not (model.server_time_invariant and model._tables is not None and model.period == 1):
            raise NotExact("the round's map changes with t (server step, delays): no single spectral radius")
        return model.operator(0)
    known = getattr(model, "_known", None)
    if known and getattr(model, "_constant", False):  # RoundModel: a vouched, t-free round
        return known[0].operator
    raise NotExact("the round's map is not vouched time-invariant: no single spectral radius")


def _radius(matvec, size: int, what: str) -> float:
    """Largest |lambda| with |lambda - 1| > UNIT_GAP of the operator ``matvec`` on R^size (Arnoldi)."""
    from scipy.sparse.linalg import LinearOperator, eigs

    if size == 0:
        return 0.0
    op = LinearOperator((size, size), matvec=matvec, dtype=float)
    k = min(6, size - 2)
    if k < 1:  # too small for ARPACK: the action on the basis (size <= 2)
        lam = np.linalg.eigvals(np.column_stack([matvec(e) for e in np.eye(size)]))
    else:
        lam = eigs(op, k=k, which="LM", tol=EIGS_TOL, return_eigenvectors=False,
                   v0=np.random.default_rng(0).standard_normal(size), maxiter=100 * size)
    kept = np.abs(lam[np.abs(lam - 1) > UNIT_GAP])
    if kept.size == 0:
        if k >= 1 and k < size - 2:  # every leading eigenvalue is 1: look further down
            lam = eigs(op, k=min(size - 2, 4 * k), which="LM", tol=EIGS_TOL, return_eigenvectors=False,
                       v0=np.random.default_rng(0).standard_normal(size), maxiter=100 * size)
            kept = np.abs(lam[np.abs(lam - 1) > UNIT_GAP])
        if kept.size == 0:
            raise NotExact(f"every leading eigenvalue of the {what} map is 1")
    return float(kept.max())


def exact_rates(model: Any) -> ExactRates:
    """The exact contraction factors of a time-invariant exact model (FedAvgModel, RoundModel or
    DiagonalFedAvgModel): spectral radii of its second-moment map on {S[-1, -1] = 0} and of its mean
    map, by Arnoldi on their actions."""
    if isinstance(model, DiagonalFedAvgModel):
        return _diagonal_rates(model)
    op = _operator(model)
    n = model.n
    h = n - 1  # the non-constant part

    def second(x: np.ndarray) -> np.ndarray:
        S = np.zeros((n, n))
        block = x.reshape(h, h)
        S[:h, :h] = (block + block.T) / 2  # the symmetric subspace L maps into itself
        return op.apply(S.reshape(-1)).reshape(n, n)[:h, :h].reshape(-1)

    def mean(x: np.ndarray) -> np.ndarray:
        # E v' = S'[:, -1] for S = v e_c^T + e_c v^T (v without constant): the mean map's linear part
        S = np.zeros((n, n))
        S[:h, -1] = x
        S[-1, :h] = x
        return op.apply(S.reshape(-1)).reshape(n, n)[:h, -1]

    return ExactRates(second=_radius(second, h * h, "second-moment"), mean=_radius(mean, h, "mean"))


def _diagonal_rates(model: DiagonalFedAvgModel) -> ExactRates:
    """Per eigen-coordinate the centred second moment evolves by f^2 + s_d^2 (pair A^2 + each sum_i
    a_i^2) and the mean by f: closed form, no Arnoldi. (The diagonal of S in the eigenbasis is the
    subspace the model's measures see; the dense model's radius also covers the off-diagonal modes.)"""
    quad = model.f ** 2 + model.sd ** 2 * (model.pair * model.A ** 2 + model.each * model.A2)

    def radius(lam: np.ndarray) -> float:
        return float(np.abs(lam[np.abs(lam - 1) > UNIT_GAP]).max(initial=0.0))

    return ExactRates(second=radius(quad), mean=radius(model.f))


def config_log_rate(config: Any) -> float:
    """log of the exact second-moment contraction factor of the run a RunConfig names (the round
    probed on its algorithm and problem, as exact mode would): NotExact where the run is not
    linear-Gaussian or its round not time-invariant."""
    from ..registry import (  # names resolve only through the registry
        make_algorithm,
        make_problem,
    )

    algorithm = make_algorithm(config.algorithm, config.params)
    problem = make_problem(config.problem, config.problem_params)
    algorithm.check_problem(problem)
    return exact_rates(model_for(algorithm, problem, int(config.rounds))).log_second
