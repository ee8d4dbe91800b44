"""fit_slope's bootstrap resamples every grid point's replicas independently (fit_slope's docstring: the
replicas at different grid points are independent runs, ratecheck.seeding keys each run's streams apart)."""

from __future__ import annotations

import numpy as np

from ratecheck.model.fit import fit_slope


def test_grid_points_whose_replicas_agree_up_to_scale_still_get_a_slope_interval():
    # every grid point holds the same 16 values scaled by x^-1: resampling the same replica indices at every
    # point would move all means by one factor and leave every resampled slope at exactly -1 (an interval of
    # width 0); independent resamples spread it as the replicas' spread says
    v = np.random.default_rng(5).lognormal(0.0, 0.3, 16)
    grid = [1.0, 2.0, 4.0, 8.0, 16.0]
    fit = fit_slope(grid, [v / x for x in grid])
    assert abs(fit.slope + 1.0) < 1e-12
    # the slope's standard error for independent points: sd(log means) ~ 0.3/4 each, over a log2 grid of 5
    # points, about 0.075 / sqrt(sum (log x - mean)^2) = 0.075 / 2.19 = 0.034; the 95% interval ~ +-0.07
    assert 0.03 < (fit.ci_high - fit.ci_low) / 2 < 0.15
