"""Hypothesis strategies of the two bilevel families (issue #13): quadratic_bilevel (SimFBO's test problems) and
fedbio_bilevel instances over the ranges each family builds well-posed, for the papers' hunts (proofs/simfbo/hunts.py,
proofs/fedbio/hunts.py fix what their theorem needs) and property tests."""

from __future__ import annotations

from typing import Any

from .fedbio_bilevel import FEDBIO_TESTS
from .quadratic_bilevel import UPPERS

# =============================================================================================
# Search space of the quadratic_bilevel family (issue #13): hypothesis strategies for hunts and property tests.


def simfbo_strategy(**fixed: Any):
    """A hypothesis strategy of quadratic_bilevel instances (parameters of ``make``), for hunts and property
    tests; keyword arguments fix a parameter (a value) or replace its strategy.

    Ranges are those the family builds quickly and well-posed: d_x, d_y <= 3, 1..8 clients, mu_g in
    [0.1, 5] with a_max/a_min <= 10, noise and heterogeneity up to 2. Relative draws keep every
    instance valid: the Hessian spread stays below mu_g/2 (so every A_i is positive definite) and the
    Hessian noise sigma_h below the smallest client curvature; the pseudo-Huber and nonconvex shapes
    get B = b I with b != 0 and d_x = d_y, as ``make`` requires.
    """
    from hypothesis import strategies as st

    from ratecheck.model.strategies import finite_floats, fixed_draws  # start-up: hypothesis loads when a hunt draws

    number = finite_floats
    base = {
        "upper": st.sampled_from(UPPERS),
        "dim_x": st.integers(min_value=1, max_value=3),
        "dim_y": st.integers(min_value=1, max_value=3),
        "clients": st.integers(min_value=1, max_value=8),
        "a_min": number(0.1, 5.0),
        "a_ratio": number(1.0, 10.0),  # a_max / a_min
        "b": st.one_of(st.none(), number(0.2, 3.0)),
        # lam > 0: with lam = 0 and d_x > d_y P1's Hessian M'M is singular (no unique x*; make refuses it, naming lam)
        "lam": number(0.05, 2.0),
        "delta": number(0.2, 5.0),
        "zeta": number(0.0, 2.0),
        "spread_fraction": number(0.0, 0.45),  # hessian_spread / a_min
        "sigma_f": number(0.0, 2.0),
        "sigma_g": number(0.0, 2.0),
        "sigma_h_fraction": number(0.0, 0.9),  # sigma_h / (smallest client curvature)
        "start": st.one_of(st.just("zero"), number(-3.0, 3.0)),
        "seed": st.integers(min_value=0, max_value=3),
    }
    base.update(fixed_draws(fixed))

    def to_params(drawn: dict[str, Any]) -> dict[str, Any]:
        params = dict(drawn)
        a_min = params["a_min"]
        params["a_max"] = a_min * params.pop("a_ratio")
        spread = a_min * params.pop("spread_fraction")
        params.setdefault("hessian_spread", spread)
        # client curvatures are >= a_min - 2 spread (p-centred u_i in [-1, 1]); N2 noise must stay below
        params.setdefault("sigma_h", params.pop("sigma_h_fraction") * (a_min - 2 * params["hessian_spread"]))
        if params["upper"] != "quadratic":  # B = b I with b != 0 and d_x = d_y (make's rule)
            params["b"] = params["b"] if params["b"] else 1.0
            params["dim_x"] = params["dim_y"]
        elif params["b"] is not None:
            params["dim_x"] = params["dim_y"]
        return params

    return st.fixed_dictionaries(base).map(to_params)


# =============================================================================================
# Search space of the FedBiO family (issue #13): hypothesis strategies for hunts and property tests.


def fedbio_strategy(**fixed: Any):
    """A hypothesis strategy of fedbio_bilevel instances (parameters of ``make_fedbio``), for hunts and
    property tests; keyword arguments fix a parameter (a value) or replace its strategy.

    Every test of spec §6 (A, B and C2 quadratic with global or local lower levels, C1, and the
    pseudo-Huber D, D'), on the ranges the family builds quickly and well-posed: p = d <= 3 (B_bar = b I),
    2..6 clients, A_bar's spectrum in [a_min, a_min a_ratio] with a_min in [0.5, 2], a_ratio <= 5;
    offsets s, Jacobian heterogeneity s_B up to 1.5; the Hessian heterogeneity a fraction of a_min below
    0.9 (every A_m stays positive definite); additive N1 noise on grad f and grad_y g up to 1, exactly 0
    half the time. Tests with shared A_m, B_m get s_H = s_B = 0 (make_fedbio's rule). Jacobian and Hessian
    noise stay 0: they multiply the state, so runs would no longer be exact expectations
    (ratecheck.exact); fix them to search with them.
    """
    from hypothesis import strategies as st

    from ratecheck.model.strategies import finite_floats, fixed_draws  # start-up: hypothesis loads when a hunt draws

    number = finite_floats
    base = {
        "test": st.sampled_from(FEDBIO_TESTS),
        "dim": st.integers(min_value=1, max_value=3),
        "clients": st.integers(min_value=2, max_value=6),
        "a_min": number(0.5, 2.0),
        "a_ratio": number(1.0, 5.0),
        "b": number(0.2, 2.0),
        "delta": number(0.3, 3.0),  # pseudo-Huber scale (Tests D, D')
        "s": number(0.0, 1.5),
        "s_H_fraction": number(0.0, 0.9),  # s_H / a_min
        "s_B": number(0.0, 1.5),
        # noise-free instances half the time: the structure of a bound shows there, noise adds to both sides
        "sigma_f": st.one_of(st.just(0.0), number(0.0, 1.0)),
        "sigma_g": st.one_of(st.just(0.0), number(0.0, 1.0)),
        "sigma_J": st.just(0.0),
        "sigma_H": st.just(0.0),
        "start": st.sampled_from(("solution", "zero")),
        "seed": st.integers(min_value=0, max_value=3),
    }
    base.update(fixed_draws(fixed))

    def to_params(drawn: dict[str, Any]) -> dict[str, Any]:
        params = dict(drawn)
        params["dim_x"] = params["dim_y"] = params.pop("dim")
        params["a_max"] = params["a_min"] * params.pop("a_ratio")
        params["s_H"] = params["a_min"] * params.pop("s_H_fraction")
        if params["test"] not in ("B", "C2"):  # shared A_m, B_m
            params["s_H"] = params["s_B"] = 0.0
        return params

    return st.fixed_dictionaries(base).map(to_params)
