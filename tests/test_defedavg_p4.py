"""DeFedAvg P4 (interpolating least squares): the negative control never turns into a false PASS."""

import dataclasses

import pytest

from ratecheck.claims import PROFILES, Verdict
from ratecheck.proofs.defedavg.interpolation import P4_NO_SPEEDUP, NoiseDominated
from ratecheck.runner.sweep import run_configs

QUICK = PROFILES["quick"]


@pytest.mark.claims  # decides the registered claim P4_NO_SPEEDUP on its quick-profile runs
def test_p4_says_not_noise_dominated_and_never_passes():
    traces = run_configs(P4_NO_SPEEDUP.runs(QUICK), progress=False)
    outcome = P4_NO_SPEEDUP.decide(QUICK, traces)
    assert outcome.verdict == Verdict.FAIL and outcome.ok
    assert outcome.reason.startswith("not in the noise-dominated regime")
    assert all(row["high"] < -1 for row in outcome.evidence["regime"]["rows"])
    assert outcome.evidence["controlled"]["verdict"] == "PASS"
    # without the regime diagnostic the slope rule alone still refuses linear speedup (saturation)
    blind = dataclasses.replace(P4_NO_SPEEDUP, rule=NoiseDominated(efolds=float("inf")))
    assert blind.decide(QUICK, traces).verdict != Verdict.PASS
    # and a band wide enough to hold the measured slope is still overruled by the regime diagnostic
    lax = dataclasses.replace(P4_NO_SPEEDUP, tolerance=0.45, r2_floor=0.0, max_curvature=10.0)
    assert lax.decide(QUICK, traces).verdict == Verdict.FAIL
