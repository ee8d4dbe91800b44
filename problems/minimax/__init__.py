"""Federated minimax problems min_x max_{y in Y} f(x, y) = (1/M) sum_i f_i(x, y) in closed form.

Paper: FESS-GDA (004_57c332141565532a.txt, arXiv:2311.00944); spec ../shared/spec/fessgda.md §6.

One registry family ``minimax`` whose ``kind`` parameter selects the problem (``make``):

* ``quadratic`` (spec §6.1 a1): SC-SC quadratic f_i = 1/2 x'Ax + x'By - 1/2 y'Cy + b_i'x - c_i'y,
  linear zero-sum heterogeneity, saddle (0, 0), PL-PL potential W and its exact stationary value
  under FSGDA/Local SGDA (discrete Lyapunov equation, any local and global step sizes).
* ``quadratic_pl`` (spec §6.1 a2): the same family with A = U'U singular (PL, not strongly convex in x).
* ``ncnc_pl`` (spec §6.1 a3): nonconvex-nonconcave two-sided PL x^2 + 3 sin^2 x sin^2 y - 4 y^2 - 10 sin^2 y,
  mu1 < mu2 (Theorem 3.5 through the role swap of spec §2.4(C)).
* ``ncpl`` (spec §6.2 b): f = sum_k [-alpha log(1+x_k^2) + b x_k y_k - mu/2 y_k^2], b = sqrt(c mu),
  Phi independent of mu (mu is a pure conditioning knob), stationary points x_k in {0, +-1}.
* ``wgan`` (spec §6.3 b'): the paper's WGAN in closed form (population moments), NC-SC with
  kappa = l/(2 lam); two minimizers sigma_g = +-sigma^.
* ``tanh`` (spec §6.5 d): nonconvex-concave f = sum_k [lam/2 x^2 - alpha log(1+x^2) + y tanh(b x)] on a box,
  Moreau-envelope stationarity via its separable prox; ``reg_eps`` gives Theorem 3.3's regularized clients.
* ``onepc`` (spec §6.6 e): nonconvex-one-point-concave (not concave) f = sum_k [lam/2 x^2 - alpha log(1+x^2)
  - q(y - tanh x)], q(u) = u^2 + a sin^2 u, on a box; Phi smooth and closed form.
* ``pwmax`` (spec §6.4 c): point-wise maximum of 4 components over the simplex with strict
  complementarity margin c0; negative controls c0 = 0 and a duplicated component.

Shared conventions (spec §6.0):

* one stochastic sample for BOTH partial gradients: xi ~ N(0, s^2 I_{d1+d2}), so sigma^2 = s^2 (d1+d2)
  (pitfall P9);
* sinusoidal zero-sum heterogeneity zeta sum_k sin(omega x_k + 2 pi i/M) (real client drift, P10),
  sigma_G^2 = zeta^2 omega^2 d1 (a sup, attained), client smoothness l + zeta omega^2 (P7);
* oracles take points (R, m, d) and client ids (R, m); ``gather`` once per round;
* measures take the algorithm's output {"x": (R, d1), "y": (R, d2), ...}; the y-measure of Def 2.1
  uses the projection step exactly 1/l (P13);
* y0 outside Y is refused (ValueError), never silently projected.

Layout: one module per kind (``quadratic`` holds a1 and a2) and ``base`` (the base problem, the
declarations every kind shares, the size rules); this module is the family's factory ``make``.
"""

from __future__ import annotations

from typing import Any

from ratecheck.params import Param

from .base import (  # noqa: F401 (re-exported)
    CLIENTS,
    DIM,
    MAX_CLIENTS,
    MAX_DIM,
    MAX_ENTRIES,
    MAX_QUADRATIC_DIM,
    MOREAU,
    NOISE,
    OMEGA,
    SEED,
    SHARED,
    X0,
    Y0,
    Y_SETS,
    ZETA,
    MinimaxBatch,
    MinimaxProblem,
)
from .ncnc_pl import TwoSidedPLSine, make_ncnc_pl  # noqa: F401 (re-exported)
from .ncpl import NCPLLog, make_ncpl  # noqa: F401 (re-exported)
from .onepc import OnePointConcave, make_onepc  # noqa: F401 (re-exported)
from .pwmax import PointwiseMax, make_pwmax  # noqa: F401 (re-exported)
from .quadratic import MinimaxQuadratic, make_quadratic, make_quadratic_pl  # noqa: F401 (re-exported)
from .tanh import TanhBox, make_tanh  # noqa: F401 (re-exported)
from .wgan import WGAN, make_wgan, shard_moments  # noqa: F401 (re-exported)

KINDS: dict[str, Any] = {"quadratic": make_quadratic, "quadratic_pl": make_quadratic_pl, "ncpl": make_ncpl, "pwmax": make_pwmax,
         "tanh": make_tanh, "onepc": make_onepc, "wgan": make_wgan, "ncnc_pl": make_ncnc_pl}


KIND = Param.choice("which minimax problem: " + ", ".join(KINDS), tuple(KINDS))


def make(kind: str = "quadratic", **params: Any) -> MinimaxProblem:
    """The registry's factory: ``kind`` selects the family, the rest are that family's parameters
    (each kind's factory declares them, see ``declared_for``)."""
    kind = KIND.check("kind", kind, "minimax")
    return KINDS[kind](**params)


make.checks_parameters = True  # type: ignore[attr-defined]  # each kind's declared factory checks them
make.kinds = tuple(KINDS)  # type: ignore[attr-defined]  # ratecheck.testing.fuzz reads a kind's parameters


def declared_for(kind: str) -> dict[str, Param]:
    """The declared parameters of one kind (with ``kind`` itself), for listings and the fuzz tests."""
    return {"kind": KIND, **KINDS[KIND.check("kind", kind, "minimax")].declared}



make.declared_for = declared_for  # type: ignore[attr-defined]  # a kind's parameters, for ratecheck.testing.fuzz
