"""Projections: feasibility, idempotence and the variational inequality, on hypothesis inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ratecheck.model.projections import project_ball, project_box, project_simplex

points = arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)),
                elements=st.floats(-50, 50, allow_nan=False))


def _is_projection(p, x, feasible_samples):
    # <x - p, z - p> <= 0 for every feasible z characterizes the Euclidean projection
    for z in feasible_samples:
        assert np.einsum("...i,...i->...", x - p, z - p).max() <= 1e-7 * (1 + np.abs(x).max() ** 2)


@settings(max_examples=60, deadline=None)
@given(points, st.floats(0.1, 10))
def test_ball(x, radius):
    p = project_ball(x, radius)
    assert (np.linalg.norm(p, axis=-1) <= radius * (1 + 1e-12)).all()
    np.testing.assert_allclose(project_ball(p, radius), p, atol=1e-12)
    rng = np.random.default_rng(0)
    z = rng.standard_normal((20, *x.shape))
    z *= radius * rng.uniform(0, 1, (20, x.shape[0], 1)) / np.linalg.norm(z, axis=-1, keepdims=True)
    _is_projection(p, x, z)


@settings(max_examples=60, deadline=None)
@given(points)
def test_simplex(x):
    p = project_simplex(x)
    assert (p >= 0).all()
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-10)
    np.testing.assert_allclose(project_simplex(p), p, atol=1e-10)
    rng = np.random.default_rng(1)
    _is_projection(p, x, rng.dirichlet(np.ones(x.shape[-1]), size=(20, x.shape[0])))


def test_box_and_bad_sets():
    np.testing.assert_array_equal(project_box(np.array([-2.0, 0.5, 3.0]), -1, 1), [-1, 0.5, 1])
    with pytest.raises(ValueError, match="box is empty"):
        project_box(np.zeros(2), np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="radius must be > 0"):
        project_ball(np.zeros(2), 0.0)
    with pytest.raises(ValueError, match="simplex total"):
        project_simplex(np.zeros(2), -1.0)
