"""The hitting-time machinery of FedBiO's S7-S9 (proofs/fedbio/acceleration.py) on synthetic traces."""

import dataclasses
import math

import numpy as np
import pytest

from ratecheck.model.fit import log_spaced_checkpoints
from ratecheck.proofs.fedbio import acceleration as acc


class FakeTrace:
    """Just what the helpers read: checkpoints and running averages of a measure."""

    def __init__(self, curve, rounds=2000, replicas=1, noise=None):
        marks = log_spaced_checkpoints(rounds, 48)
        t = np.arange(1, rounds + 1, dtype=float)
        values = np.repeat(curve(t)[:, None], replicas, axis=1)
        if noise is not None:
            values = values * noise
        sums = np.vstack([np.zeros((1, replicas)), np.cumsum(values, axis=0)])
        with np.errstate(invalid="ignore", divide="ignore"):
            avg = sums[marks] / marks[:, None].astype(float)
        self.checkpoints = marks
        self.measures = {"avg:grad_norm_sq": avg}


def test_windowed_means_are_the_window_averages():
    trace = FakeTrace(lambda t: t)
    t, w = acc.windowed(trace)
    marks = trace.checkpoints.astype(float)
    keep = np.flatnonzero(np.diff(marks) > 0) + 1
    keep = keep[marks[keep - 1] > 0]
    lo, hi = marks[keep - 1], marks[keep]
    np.testing.assert_allclose(w[:, 0], (lo + 1 + hi) / 2)  # mean of s over (lo, hi]
    np.testing.assert_allclose(t, np.sqrt(lo * hi))


def test_hitting_time_of_a_power_law_inverts_it():
    """On c t^-2/3 the windowed curve is a power law too: hitting times scale like level^-1.5 exactly."""
    trace = FakeTrace(lambda t: t ** (-2 / 3), rounds=20000)
    levels = np.array([0.05, 0.02, 0.01, 0.005])
    hits = np.array([acc.hitting_samples(trace, lev)[0] for lev in levels])
    slope = np.polyfit(np.log(levels), np.log(hits), 1)[0]
    assert slope == pytest.approx(-1.5, abs=0.01)


def test_last_crossing_ignores_an_early_peak_and_reports_not_reached():
    t = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    w = np.array([[0.0], [0.5], [0.2], [0.1], [0.05]])  # rises from the solution, then decays
    # between (4, 0.2) and (8, 0.1), log-log: t = 4 * 2^(log(0.2/0.15)/log 2) = 16/3
    assert acc.last_crossing(t, w, 0.15)[0] == pytest.approx(16 / 3)
    assert math.isnan(acc.last_crossing(t, w, 0.01)[0])


def test_monte_carlo_samples_are_jackknife_pseudo_values_of_the_mean_curve():
    rng = np.random.default_rng(0)
    noise = rng.uniform(0.5, 1.5, size=(4000, 16))
    trace = FakeTrace(lambda t: t ** (-2 / 3), rounds=4000, replicas=16, noise=noise)
    samples = acc.hitting_samples(trace, 0.02)
    t, w = acc.windowed(trace)
    theta = acc.last_crossing(t, w.mean(axis=1, keepdims=True), 0.02)[0]
    assert samples.shape == (16,)
    assert samples.mean() == pytest.approx(theta, rel=0.05)  # the jackknife's bias correction is small here
    identical = FakeTrace(lambda t: t ** (-2 / 3), rounds=4000, replicas=8)
    np.testing.assert_allclose(acc.hitting_samples(identical, 0.02), acc.hitting_samples(FakeTrace(
        lambda t: t ** (-2 / 3), rounds=4000), 0.02)[0])


def test_s9_prescriptions():
    """I from Theorem 6 rounded and clamped; batches follow eps ∝ the horizon's level."""
    assert acc.s9_acc_I(1) == (8, 8.0)
    assert acc.s9_acc_I(1000)[0] == 1  # 8 * 1000^(-2/3) = 0.08: clamped to 1
    short, long = acc.s9_fedbio_config(10, None), acc.s9_fedbio_config(100, None)
    assert long.params["bx"] / short.params["bx"] == pytest.approx(10 ** (2 / 3), rel=0.1)  # b ∝ T^(2/3)
    assert long.params["gamma"] / short.params["gamma"] == pytest.approx(10 ** (-1 / 3))


def test_s9_evidence_shows_the_clamp():
    """Where Theorem 6's I = I_0 M^(-2/3) falls below 1 the clamp is named in the reason and the evidence."""
    from dataclasses import replace

    clamped = acc.Prescribed(lambda v: {"FedBiOAcc": {"I_formula": 0.4, "I": 1, "b_formula": 2.0, "b": 2}})
    claim = replace(acc.S9, gates=(clamped,))  # the prescriptions gate alone (the ball gate reads real runs)
    fake = [type("P", (), {"value": v, "stats": {"series": label}, "samples": np.array([1.0 / v]), "exact": True})()
            for label in claim.labels for v in (1.0, 10.0, 100.0)]
    verdict, reason, evidence = claim.judge(fake)
    assert "clamped to >= 1: FedBiOAcc I 0.4 -> 1" in reason
    assert evidence["clamped"] == ["FedBiOAcc I 0.4 -> 1"]


def _point(trace, level, value=1.0):
    hit = acc.hitting_samples(trace, level)
    return type("P", (), {"value": value, "trace": trace, "samples": hit[np.isfinite(hit)]})()


def test_crossing_slopes_read_the_local_exponent_at_the_crossing():
    """S13's regime check: on c t^-2/3 the crossing's local exponent is -2/3; on a curve still rising it is not."""
    falling = FakeTrace(lambda t: t ** (-2 / 3), rounds=20000)
    [(_, slope)] = acc.crossing_slopes([_point(falling, 0.01)])
    assert slope == pytest.approx(-2 / 3, abs=0.01)
    turnover = FakeTrace(lambda t: t * np.exp(-t / 400.0) / 400.0, rounds=2000)  # peak at t = 400
    [(_, slope)] = acc.crossing_slopes([_point(turnover, 0.3)])
    assert abs(slope - acc.REGIME_SLOPE) > acc.REGIME_BAND


def test_s13_noise_reaches_x_bar_averaged_and_b_y_defaults_to_bM():
    """S13's design on exact runs (Test C1, lower-level noise only, M = 4): E||grad h(x_bar_t)||^2 is linear in
    sigma_g^2/b_y, so Theorem 8's default b_y = bM gives 1/M of the b_y = b run at every window (the Neumann
    bias' deterministic part, ~1e-8 against ~1e-3, is the only other term). A b_y not scaled by M (S13 cannot
    see it: its lower-level claim sets b_y = b itself) fails this."""
    from ratecheck.simulate.engine import run_config

    M, rounds = 4, 60
    scaled = acc.s13_config("lower")(M, None)
    unscaled = acc.s13_config("lower", unscaled_by=True)(M, None)
    short = [dataclasses.replace(c, rounds=rounds) for c in (scaled, unscaled)]
    assert "by" not in short[0].params and short[1].params["by"] == acc.S13_B
    (_, w_scaled), (_, w_unscaled) = (acc.windowed(run_config(c)) for c in short)
    late = slice(len(w_scaled) // 2, None)  # once the noise dominates the (tiny) Neumann-bias transient
    np.testing.assert_allclose(w_scaled[late] / w_unscaled[late], 1.0 / M, rtol=1e-3)
