"""Claims on exact traces (issue #8 item 5): one row of exact expectations decides a claim.

An exact run (``RunConfig(mode="exact")``) has one "replica" and no spread: the precheck must not
demand ``min_replicas`` of it, CIs have zero width, and the reason, the evidence and the JSON say
"exact". An ``auto`` run that falls back to Monte Carlo is judged as Monte Carlo, with the reason.
"""

import json
import warnings

import numpy as np
import pytest

from ratecheck.claims import (
    PROFILES,
    ExpectedOrder,
    LimitClaim,
    SlopeClaim,
    ThresholdClaim,
    ValueClaim,
    Verdict,
    point_ci,
)
from ratecheck.inspection import problem_of
from ratecheck.model.fit import fit_slope
from ratecheck.proofs.defedavg.presets import p1
from ratecheck.runner.sweep import check_claims
from ratecheck.theory import Source
from ratecheck.trace import RunConfig

PROFILE = PROFILES["quick"]
SRC = Source("synthetic", "test")
PROBLEM = p1(clients=8, x0_offset=0.0, L=1.0, mu=0.1, sigma=1.0)
GRID = {"quick": (1, 2, 4, 8)}


def _floor_config(n, profile, *, mode="exact", problem="quadratic", problem_params=None):
    params = {"eta_global": 1.0, "eta_local": 0.05, "local_steps": 2, "delay": "none",
              "participation": f"without_replacement:{int(n)}", "duplicates": "shared"}
    return RunConfig("defedavg_iid", params, problem, dict(problem_params or PROBLEM), rounds=400,
                     replicas=profile.replicas, mode=mode)


def _floor_floor(config):
    """Stationary E||grad F||^2 of x <- x - beta x + eps along each eigen-direction (no delay):
    Var = noise / (1 - (1 - beta)^2), gradient h x."""
    problem = problem_of(config)
    p = config.params
    n = int(str(p["participation"]).split(":")[1])
    total = 0.0
    for h in np.linalg.eigvalsh(problem.h_bar):
        q = 1 - p["eta_local"] * h
        beta = p["eta_global"] * (1 - q ** p["local_steps"])
        noise = (p["eta_global"] * p["eta_local"]) ** 2 / n * problem.sigma**2 / problem.dim * np.sum(
            q ** (2 * np.arange(p["local_steps"])))
        total += h**2 * noise / (1 - (1 - beta) ** 2)
    return float(total)


def _decide(claim):
    return check_claims([claim], PROFILE, progress=False)[0]


def _value_claim(**kw):
    base = dict(id="t.value", paper="t", title="t", statement="s", source=SRC, vary="n", grid=GRID,
                configure=_floor_config, measure="grad_norm_sq", predict=_floor_floor,
                prediction="stationary floor", rel_tolerance=0.05)
    return ValueClaim(**{**base, **kw})


def test_exact_run_decides_without_min_replicas():
    outcome = _decide(_value_claim())
    assert outcome.verdict == Verdict.PASS, outcome.reason
    assert "exact" in outcome.reason
    assert outcome.evidence["exact"] is True
    assert all(p.exact and p.samples.size == 1 for p in outcome.points)
    row = json.loads(json.dumps(outcome.to_dict()))
    assert row["exact"] is True and all(p["exact"] for p in row["points"])
    # the 400-round exact value sits on the stationary floor up to the build-up from x*, which decays
    # like (1 - beta_min)^(2t) ~ 1e-5 here (beta_min = 0.01)
    ratios = [r["ratio"] for r in outcome.evidence["rows"]]
    assert max(abs(r - 1) for r in ratios) < 1e-4


def test_exact_ci_has_zero_width_so_a_small_offset_fails():
    # a prediction 1% off is decided FAIL with a 0.1% band: no Monte-Carlo CI can blur an exact value
    outcome = _decide(_value_claim(predict=lambda c: 1.01 * _floor_floor(c), rel_tolerance=0.001))
    assert outcome.verdict == Verdict.FAIL, outcome.reason
    p = outcome.points[0]
    ci = point_ci(p)
    assert ci.low == ci.high == ci.mean == float(p.samples[0])


def test_exact_point_that_diverged_is_inconclusive():
    # beta = eta (1 - (1 - etabar)^K) > 2 at h = 1: the exact second moment blows up
    def configure(n, profile):
        config = _floor_config(n, profile)
        return config.with_(params={**config.params, "eta_global": 6.0, "eta_local": 0.9})

    outcome = _decide(_value_claim(configure=configure))
    assert outcome.verdict == Verdict.INCONCLUSIVE
    assert "the exact expectations diverged" in outcome.reason


def test_exact_slope_is_deterministic_and_says_exact():
    claim = SlopeClaim(id="t.slope", paper="t", title="t", statement="s", source=SRC, vary="n",
                       grid={"quick": (1, 2, 4, 8, 16)}, measure="grad_norm_sq",
                       configure=lambda n, profile: _floor_config(n, profile, problem_params={**PROBLEM,
                                                                                              "clients": 16}),
                       expected=ExpectedOrder(value=-1.0, why="variance / n"), tolerance=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "only one finite replica" warning for exact points
        outcome = _decide(claim)
    fit = outcome.evidence["fit"]
    assert fit["exact"] and fit["deterministic"] and fit["ci_low"] == fit["ci_high"] == fit["slope"]
    assert "exact" in outcome.reason
    # without replacement from N = 16 the floor is not exactly 1/n: the verdict is decisive either way
    assert outcome.verdict in (Verdict.PASS, Verdict.FAIL)


def test_fit_slope_exact_flags():
    x = [1, 2, 4, 8, 16]
    samples = [np.array([v**-0.5]) for v in x]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = fit_slope(x, samples, exact=True)
    assert fit.exact and fit.deterministic and fit.slope == pytest.approx(-0.5)
    with pytest.warns(RuntimeWarning, match="only one finite replica"):
        assert not fit_slope(x, samples).exact
    with pytest.raises(ValueError, match="one flag or one per grid point"):
        fit_slope(x, samples, exact=[True, False])


def test_monte_carlo_run_is_not_exact():
    claim = ThresholdClaim(id="t.thr", paper="t", title="t", statement="s", source=SRC, vary="n",
                           grid={"quick": (4,)}, measure="grad_norm_sq", threshold=1.0,
                           configure=lambda n, profile: _floor_config(n, profile, mode="monte_carlo"))
    outcome = _decide(claim)
    assert outcome.evidence["exact"] is False and outcome.to_dict()["exact"] is False
    assert not outcome.points[0].exact and outcome.points[0].samples.size == PROFILE.replicas


def test_auto_fallback_is_judged_as_monte_carlo_with_the_reason():
    from ratecheck.proofs.defedavg.presets import p3

    claim = ThresholdClaim(id="t.thr", paper="t", title="t", statement="s", source=SRC, vary="n",
                           grid={"quick": (2,)}, measure="grad_norm_sq", threshold=1e3,
                           configure=lambda n, profile: _floor_config(n, profile, mode="auto",
                                                                      problem="cosine_quadratic",
                                                                      problem_params=p3(clients=4)))
    outcome = _decide(claim)
    assert outcome.verdict == Verdict.PASS
    assert outcome.evidence["exact"] is False
    assert outcome.evidence["exact_fallback"] and "Monte Carlo instead of exact" in outcome.evidence["exact_fallback"][0]


def test_exact_limit_distance_is_the_mean_itself():
    problem = {**PROBLEM, "x0_offset": 1.0}
    claim = LimitClaim(id="t.lim", paper="t", title="t", statement="s", source=SRC, vary="n",
                       grid={"quick": (4,)}, measure="dist_sq", tolerance=1e-6,
                       configure=lambda n, profile: _floor_config(n, profile, problem_params=problem).with_(
                           rounds=3000),
                       target=lambda config: problem_of(config).x_star)
    outcome = _decide(claim)
    row = outcome.evidence["rows"][0]
    assert row["distance"] == row["low"] == row["high"]
    assert outcome.verdict == Verdict.PASS and "exact" in outcome.reason


def test_an_exact_claim_without_a_monte_carlo_band_does_not_judge_monte_carlo_points():
    """ExactSlopeClaim / ExactValueClaim with no mc_tolerance: Monte-Carlo points (exact mode refused a run)
    are INCONCLUSIVE, never judged with the exact band or a band nobody stated."""
    import numpy as np

    from ratecheck.claims import ExactSlopeClaim, ExpectedOrder, PointResult, Verdict

    claim = ExactSlopeClaim(id="t", paper="t", title="t", statement="t", source=None, vary="x",
                            grid={"quick": (1, 2)}, configure=None, measure="m", tolerance=0.1,
                            expected=ExpectedOrder(value=-1.0, why="t"), tolerance_reason="t")
    points = [PointResult(value=v, config=None, samples=np.array([1.0 / v, 1.1 / v]), diverged=0) for v in (1, 2)]
    assert not any(p.exact for p in points)
    verdict, reason, _ = claim._decide(points)
    assert verdict == Verdict.INCONCLUSIVE and "exact runs only" in reason
