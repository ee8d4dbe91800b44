"""The regime-change gate of a slope claim (ratecheck.claims.rules_fit._regime_change) judges the curvature's CI
against +-max(limit, h), h the CI's half-width and limit the claim's max_curvature, else its tolerance (issue #23
S2: the default "resolved"): a fit that resolves its limit is gated at the limit; one that does not fires only
beyond 2h. The named option "limit" judges the CI against +-limit: with a CI that covers (the bootstrap-t,
benchmarks/bench_coverage.py) it fires on a true power law at most (1 - level)/2 a side."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ratecheck.claims.rules_fit import ExponentInBand, _regime_change
from ratecheck.model.fit import SlopeFit

CLAIM = SimpleNamespace(tolerance=0.1, max_curvature=None, r2_floor=0.0)


def _fit(curvature: float, half: float) -> SlopeFit:
    return SlopeFit(slope=-1.0, intercept=0.0, ci_low=-1.05, ci_high=-0.95, level=0.95, r2=0.99, stderr=0.025,
                    x=(1, 2, 4, 8, 16), means=(1, 0.5, 0.25, 0.125, 0.0625), replicas_used=(16,) * 5,
                    curvature=curvature, curvature_low=curvature - half, curvature_high=curvature + half)


@pytest.mark.parametrize("band", ["limit", "resolved"])
def test_a_fit_that_resolves_its_limit_is_gated_at_the_limit(band: str):
    assert _regime_change(CLAIM, _fit(0.16, 0.05), -1.0, band).startswith("regime change")
    assert "beyond +-0.1: not one power law" in _regime_change(CLAIM, _fit(-0.16, 0.05), -1.0, band)
    assert _regime_change(CLAIM, _fit(0.14, 0.05), -1.0, band) == ""


def test_a_noisy_fit_beyond_the_limit_fires_under_the_limit_option_only():
    # fessgda.B2.ncpl_floor_m at seed offset 3000 (bootstrap-t): curvature -0.569, CI [-0.915, -0.255]
    assert "beyond +-0.1: not one power law" in _regime_change(CLAIM, _fit(-0.569, 0.33), -1.0, "limit")
    assert _regime_change(CLAIM, _fit(-0.569, 0.33), -1.0) == ""  # the default: CI reaches inside +-0.33
    assert _regime_change(CLAIM, _fit(-0.4, 0.33), -1.0, "limit") == ""  # CI [-0.73, -0.07] reaches inside +-0.1


def test_the_resolved_band_fires_only_beyond_twice_its_half_width():
    assert _regime_change(CLAIM, _fit(-0.569, 0.357), -1.0, "resolved") == ""
    why = _regime_change(CLAIM, _fit(-0.75, 0.33), -1.0, "resolved")
    assert "beyond +-0.33 (the limit 0.1 widened to the CI half-width the replicas resolve)" in why


def test_an_explicit_max_curvature_is_the_limit():
    claim = SimpleNamespace(tolerance=0.1, max_curvature=0.5, r2_floor=0.0)
    assert _regime_change(claim, _fit(0.7, 0.3), -1.0) == ""  # CI [0.4, 1.0] reaches inside +-0.5
    assert "beyond +-0.5: not one power law" in _regime_change(claim, _fit(0.85, 0.3), -1.0)


def test_the_band_is_a_named_option():
    assert ExponentInBand().curvature_band == "resolved"
    with pytest.raises(ValueError, match="curvature_band must be one of"):
        ExponentInBand(curvature_band="wide")
