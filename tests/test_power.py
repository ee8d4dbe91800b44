"""The power of every rule (issue #23 item 1), checked against brute force: move the measured quantity by
the reported change (scale every sample by 1 +- delta, shift the exponent by +- delta, or add +- delta to
a near-zero quantity) and re-decide
with the claim's own ``_decide``: the verdict holds just before the reported delta and changes just past it.
"""

import copy
import math

import numpy as np
import pytest

from ratecheck.claims import (
    BoundClaim,
    ExpectedOrder,
    ExponentComparisonClaim,
    IntervalClaim,
    LimitClaim,
    RateClaim,
    ThresholdClaim,
    ValueClaim,
    Verdict,
)
from ratecheck.claims.power import COARSE, OFFSET, SCALE, SHIFT, Constraint, power, power_text, read, rule_verdict
from tests.test_claims import GRID, PROFILE, SRC, THEOREM, _config, _rate_traces, _slope, _traces

EPS = 1e-3  # "just before" and "just past" the reported change, relative to it
COMMON = dict(paper="t", title="t", statement="s", source=SRC, vary="x", grid={"quick": GRID}, configure=_config,
              measure="m")


def _scaled(points, factor):
    out = copy.deepcopy(points)
    for p in out:
        p.samples = p.samples * factor
        for key in ("distance", "low", "high"):  # a limit claim's bootstrap distance scales with the samples
            if key in p.stats:
                p.stats[key] *= factor
    return out


def _offset(points, delta):
    out = copy.deepcopy(points)
    for p in out:
        p.samples = p.samples + delta
        for key in ("distance", "low", "high"):  # a limit claim's distance and its CI move by the amount added
            if key in p.stats:
                p.stats[key] += delta
    return out


def _shifted(points, delta, series=None):
    out = copy.deepcopy(points)
    for p in out:
        if series is None or p.stats.get("series") == series:
            p.samples = p.samples * p.value**delta  # log-log slope + delta, its bootstrap CI with it
    return out


def _move(points, mode, delta, series=None):
    if mode == OFFSET:
        return _offset(points, delta)
    return _scaled(points, 1 + delta) if mode == SCALE else _shifted(points, delta, series)


def _brute_force(claim, points, series=None):
    """Check the reported up/down/to_fail against re-deciding the moved points."""
    verdict, _, evidence = claim._decide(points)
    rec = evidence["power"]
    mode = rec["mode"]
    for key, sign in (("up", +1), ("down", -1)):
        delta = float(rec[key])
        if math.isinf(delta):  # nothing in that direction changes it (up to 100x or down to 1/1000)
            far = 100.0 if sign > 0 else (-0.999 if mode == SCALE else -100.0)
            assert claim._decide(_move(points, mode, far, series))[0] == verdict, key
            continue
        before = claim._decide(_move(points, mode, sign * delta * (1 - EPS), series))[0]
        after = claim._decide(_move(points, mode, sign * delta * (1 + EPS), series))[0]
        assert before == verdict and after != verdict, (key, delta, before, after)
    to_fail = float(rec["to_fail"])
    if verdict != Verdict.FAIL and math.isfinite(to_fail):
        moved = [claim._decide(_move(points, mode, s * to_fail * (1 + EPS), series))[0] for s in (1, -1)]
        assert Verdict.FAIL in moved
    return verdict, rec


def _bound(version):
    return BoundClaim(id="t.bound", theorem=THEOREM, bindings=lambda c, t: {"c": 1.0, "x": c.params["v"]},
                      version=version, **COMMON)


@pytest.mark.parametrize("version, verdict", [("loose", Verdict.PASS), ("tight", Verdict.FAIL)])
def test_bound_power_is_where_the_confidence_bound_meets_the_bound(version, verdict):
    claim = _bound(version)
    got, rec = _brute_force(claim, claim.points(PROFILE, _traces(-0.5)))
    assert got == verdict
    if verdict == Verdict.PASS:  # mean ~ x^-1/2 against 2/sqrt(x): about a factor 2 away, coarse
        assert 0.5 < rec["up"] < 1.5 and rec["coarse"] and math.isinf(rec["down"])


def test_threshold_power_is_the_amount_added():
    claim = ThresholdClaim(id="t.threshold", threshold=1.2, **COMMON)
    points = claim.points(PROFILE, _traces(-0.5))
    got, rec = _brute_force(claim, points)
    ucb = max(row["ucb"] for row in claim._decide(points)[2]["rows"])
    assert got == Verdict.PASS and rec["mode"] == OFFSET and rec["up"] == pytest.approx(1.2 - ucb)


@pytest.mark.parametrize("scale, noise", [(1.0, 0.02), (1.5, 0.02), (1.045, 0.02), (1.0, 0.0)])
def test_value_power_on_both_sides(scale, noise):
    claim = ValueClaim(id="t.value", predict=lambda c: scale * c.params["v"] ** -0.5, prediction="x^-1/2",
                       rel_tolerance=0.05, **COMMON)
    _brute_force(claim, claim.points(PROFILE, _traces(-0.5, noise=noise)))


def test_interval_power():
    claim = IntervalClaim(id="t.interval", theorem=THEOREM, bindings=lambda c, t: {"c": 1.0, "x": c.params["v"]},
                          lower="tight", upper="loose", **COMMON)
    got, rec = _brute_force(claim, claim.points(PROFILE, _traces(-0.5)))
    assert got == Verdict.PASS and math.isfinite(rec["up"]) and math.isfinite(rec["down"])


@pytest.mark.parametrize("target", [[0.0, 0.0], [0.05, 0.0], [1.0, 0.0]])
def test_limit_power_is_the_distance_added_over_the_target_size(target):
    claim = LimitClaim(id="t.limit", target=lambda c: np.asarray(target), tolerance=0.05, **COMMON)
    _, rec = _brute_force(claim, claim.points(PROFILE, _traces(-0.5, final=np.zeros((16, 2)))))
    size = np.linalg.norm(target) or 1.0  # a target at 0 has no size: the amount itself is the relative change
    assert rec["mode"] == OFFSET and rec["relative"] == pytest.approx(rec["detectable"] / size)


@pytest.mark.parametrize("exact, guaranteed", [(0.95, 0.99), (0.9, 0.99), (0.95, 0.9), (0.951, 0.96)])
def test_rate_power_against_both_bands(exact, guaranteed):
    claim = RateClaim(id="t.rate", paper="t", title="t", statement="s", source=SRC, vary="T", grid={"quick": (200,)},
                      configure=_config, measure="m", min_replicas=4, exact=lambda c, r: np.log(exact),
                      guaranteed=lambda p: np.log(guaranteed))
    _brute_force(claim, claim.points(PROFILE, _rate_traces(0.95)))


@pytest.mark.parametrize("measured, side", [(-0.5, "two-sided"), (-1.0, "two-sided"), (-0.58, "two-sided"),
                                            (-1.0, "at_most"), (0.0, "at_most"), (-0.45, "at_least")])
def test_slope_power_is_a_shift_of_the_exponent(measured, side):
    claim = _slope(side=side)
    got, rec = _brute_force(claim, claim.points(PROFILE, _traces(measured, noise=0.1)))
    assert rec["mode"] == SHIFT and rec["relative"] == pytest.approx(rec["detectable"] / 0.5)


@pytest.mark.parametrize("other, margin", [(-0.5, 0.2), (-0.5, 0.6), (-0.9, 0.2)])
def test_exponent_comparison_power_shifts_series_a(other, margin):
    def configure_other(value, profile):
        return _config(value * 1000, profile)

    claim = ExponentComparisonClaim(id="t.cmp", configure_other=configure_other, margin=margin,
                                    expected=(ExpectedOrder(value=-1.0, why="t"), None), **COMMON)
    traces = {**_traces(-1.0, noise=0.05), **_other_traces(other)}
    _brute_force(claim, claim.points(PROFILE, traces), series="A")


def _other_traces(exponent):
    base = _traces(exponent, noise=0.05, seed=1)
    out = {}
    for value in GRID:
        config = _config(value * 1000, PROFILE)
        trace = base[_config(value, PROFILE).key()]
        out[config.key()] = type(trace)(config=config, replica_ids=trace.replica_ids, checkpoints=trace.checkpoints,
                                        measures=trace.measures, counters={}, final=trace.final,
                                        diverged_round=trace.diverged_round)
    return out


def test_the_record_reads_back_and_prints_a_coarse_marker():
    rec = power([Constraint(0.9, 1.0, b=2.0)], SCALE, "relative change of the mean", Verdict.PASS)
    assert rec["up"] == pytest.approx(1.0) and rec["coarse"] and rec["coarse_above"] == COARSE
    rule = read({"power": rec})
    assert rule is not None and rule.coarse and rule.up == pytest.approx(1.0)
    assert "COARSE" in power_text({"power": rec}) and power_text({}) == ""
    fine = power([Constraint(0.95, 1.0, 0.9, 1.1)], SCALE, "m", Verdict.PASS)
    assert not fine["coarse"] and fine["detectable"] == pytest.approx(1 - 0.9 / 0.95)


def test_an_undecided_or_gated_verdict_has_no_coarse_flag():
    rec = power([Constraint(0.9, 1.1, b=1.0)], SCALE, "m", Verdict.INCONCLUSIVE)
    assert not rec["coarse"]
    assert rule_verdict([Constraint(0.9, 1.1, b=1.0)], SCALE, 0.0) == Verdict.INCONCLUSIVE
    assert "undetermined" in power([Constraint(0.9, 1.0, b=2.0)], SCALE, "m", Verdict.FAIL)
    assert read({"power": {"undetermined": "a gate"}}) is None


def test_check_v_prints_the_power_after_the_reason(capsys):
    from ratecheck.interfaces.cli import _print_outcomes

    claim = ThresholdClaim(id="t.threshold", threshold=2.0, **COMMON)
    out = claim.decide(PROFILE, _traces(-0.5))
    _print_outcomes([out], verbose=True)
    text = " ".join(capsys.readouterr().out.split())
    assert "power: verdict changes at +" in text and "COARSE (> 20%)" in text


@pytest.mark.parametrize("level, z", [(0.95, 1.959964), (0.90, 1.644854)])  # two-sided normal quantiles, by hand
def test_slope_difference_interval_is_two_sided(level, z):
    """The difference of two independent fitted slopes by the "normal" method (the default before the
    coverage study): diff +- z_{(1+level)/2} sqrt(se_a^2 + se_b^2)."""
    import dataclasses

    from ratecheck.claims.statistics import SlopeDifference

    def configure_other(value, profile):
        return _config(value * 1000, profile)

    claim = ExponentComparisonClaim(id="t.cmp", configure_other=configure_other, margin=0.2,
                                    expected=(ExpectedOrder(value=-1.0, why="t"), None), **COMMON)
    claim = dataclasses.replace(claim, level=level)
    traces = {**_traces(-1.0, noise=0.05), **_other_traces(-0.5)}
    got = SlopeDifference(interval="normal")(claim, claim.points(PROFILE, traces))
    a, b = got.fits
    assert got.low < got.value < got.high and a.stderr > 0 and b.stderr > 0
    half = (got.high - got.low) / 2
    assert half == pytest.approx(z * math.hypot(a.stderr, b.stderr), rel=1e-6)
