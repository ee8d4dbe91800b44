"""The test problems of spec defedavg §6 as parameters of the shared families: P1 and P2 of the
``quadratic`` family (problems/quadratic.py), P3 of ``cosine_quadratic``. Each returns the family's
parameters with ``overrides`` applied (``make_problem("quadratic", p2(clients=64))``); the claims write
only what differs from the spec's instance.

P4 (interpolation least squares) is the ``least_squares_interpolation`` family (problems/least_squares.py);
its instance is interpolation.py's P4_PROBLEM.
"""

from __future__ import annotations

from typing import Any


def p1(**overrides: Any) -> dict[str, Any]:
    """Spec defedavg P1: IID ill-conditioned quadratic, d=10, mu=0.1, L=1, sigma=1, x0 = x* + 1."""
    return {"dim": 10, "mu": 0.1, "L": 1.0, "zeta": 0.0, "sigma": 1.0, "heterogeneity": "none", **overrides}


def p2(**overrides: Any) -> dict[str, Any]:
    """Spec defedavg P2: non-IID, c_i = x* +- zeta e_d alternating, zeta = 1."""
    return {"dim": 10, "mu": 0.1, "L": 1.0, "zeta": 1.0, "sigma": 1.0, "heterogeneity": "alternating", **overrides}


def p3(**overrides: Any) -> dict[str, Any]:
    """Spec defedavg P3 (the cosine-perturbed quadratic): alpha = 3, d = 10, start next to the local maximum."""
    return {"dim": 10, "alpha": 3.0, "zeta": 0.0, "sigma": 1.0, "x0_offset": 0.01, **overrides}
