"""The hitting-time machinery of FedBiO's S7-S9 (proofs/fedbio/acceleration.py) on synthetic traces."""

import math

import numpy as np
import pytest

from proofs.fedbio import acceleration as acc
from ratecheck.fit import log_spaced_checkpoints


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

    claim = replace(acc.S9, prescriptions=lambda v: {"FedBiOAcc": {"I_formula": 0.4, "I": 1, "b_formula": 2.0, "b": 2}})
    fake = [type("P", (), {"value": v, "stats": {"series": label}, "samples": np.array([1.0 / v]), "exact": True})()
            for label in claim.labels for v in (1.0, 10.0, 100.0)]
    verdict, reason, evidence = claim._decide(fake)
    assert "clamped to >= 1: FedBiOAcc I 0.4 -> 1" in reason
    assert evidence["clamped"] == ["FedBiOAcc I 0.4 -> 1"]
