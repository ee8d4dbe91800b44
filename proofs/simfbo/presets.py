"""The test problems of spec simfbo §6 as parameters of the shared ``quadratic_bilevel`` family
(problems/quadratic_bilevel.py): P1 (quadratic upper level), P2 (pseudo-Huber) and P3 (nonconvex). Each
returns the family's parameters with ``overrides`` applied (``make_problem("quadratic_bilevel", p1(clients=10))``);
the claims write only what differs from the spec's instance.
"""

from __future__ import annotations

from typing import Any


def p1(**overrides: Any) -> dict[str, Any]:
    """Spec §6.6 P1 instance: d = 4, A = diag(1, 4/3, 5/3, 2), Gaussian B, lam = 0.5, zeta = 1, sigma = 1."""
    return {"upper": "quadratic", "dim_x": 4, "dim_y": 4, "a_min": 1.0, "a_max": 2.0, "lam": 0.5, "zeta": 1.0,
            "sigma_f": 1.0, "sigma_g": 1.0, **overrides}


def p2(**overrides: Any) -> dict[str, Any]:
    """Spec §6.2: pseudo-Huber upper level, B = I, delta = 1, zeta = 1."""
    return {"upper": "pseudo_huber", "dim_x": 4, "dim_y": 4, "b": 1.0, "delta": 1.0, "zeta": 1.0, **overrides}


def p3(**overrides: Any) -> dict[str, Any]:
    """Spec §6.6 P3: d = 4, a = linspace(1, 2, 4), b = 1, zeta = 0."""
    return {"upper": "nonconvex", "dim_x": 4, "dim_y": 4, "b": 1.0, "zeta": 0.0, **overrides}
