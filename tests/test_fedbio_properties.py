"""Property-based checks of the fedbio_bilevel family over its own search space (ratecheck.problems.quadratic_bilevel
.fedbio_strategy, issue #13): every drawn instance's closed forms agree with numerics."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings

from ratecheck.problems.bilevel_strategies import fedbio_strategy
from ratecheck.problems.fedbio_bilevel import make_fedbio


@settings(max_examples=40, deadline=None, derandomize=True)
@given(fedbio_strategy())
def test_hypergradient_is_the_gradient_of_h_and_vanishes_at_x_star(params):
    problem = make_fedbio(**params)
    x_star = problem.x_star
    scale = 1.0 + np.abs(problem.hypergrad(np.zeros(problem.dim_x))).max()
    assert np.abs(problem.hypergrad(x_star)).max() < 1e-9 * scale
    rng = np.random.default_rng(0)
    x = x_star + rng.standard_normal(problem.dim_x)
    h = 1e-5
    fd = np.array([(problem.value(x + h * e) - problem.value(x - h * e)) / (2 * h) for e in np.eye(problem.dim_x)])
    np.testing.assert_allclose(problem.hypergrad(x), fd, rtol=1e-6, atol=1e-6 * scale)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(fedbio_strategy(test="B"))
def test_global_lower_level_closed_forms_solve_their_equations(params):
    """y_x solves the averaged lower level, u_x the averaged linear system of eq. (4)."""
    problem = make_fedbio(**params)
    x = np.random.default_rng(1).standard_normal(problem.dim_x)
    y = problem.y_star(x)
    np.testing.assert_allclose(problem.A_bar @ y - problem.B_bar @ x - problem.c.mean(0), 0, atol=1e-10)
    u = problem.u_star(x)
    np.testing.assert_allclose(problem.A_bar @ u, problem.psi1(y - problem.d_m).mean(0), atol=1e-10)
