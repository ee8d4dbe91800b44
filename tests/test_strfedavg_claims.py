"""The claim kinds added for issue #11 (IntervalClaim, AbscissaSlopeClaim) on synthetic traces."""

import numpy as np
import sympy as sp

from ratecheck.claims import PROFILES, AbscissaSlopeClaim, ExpectedOrder, IntervalClaim, Verdict
from ratecheck.theory import Bound, Source, Theorem
from ratecheck.trace import RunConfig, Trace

PROFILE = PROFILES["quick"]
SRC = Source("synthetic", "test")
GRID = (1, 2, 4, 8, 16)
x_sym = sp.Symbol("x", positive=True)
THEOREM = Theorem(id="synthetic.interval", title="t", source=SRC, measure="m", constants=(), parameters=(x_sym,),
                  conditions=(), bounds=(Bound("lo", -1 / x_sym, SRC), Bound("hi", 1 / x_sym, SRC)))


def _config(value, profile):
    return RunConfig("fedavg", {"v": value}, "quadratic", {}, rounds=10, replicas=profile.replicas)


def _traces(values_of, noise=0.01, replicas=16):
    rng = np.random.default_rng(0)
    out = {}
    for v in GRID:
        config = _config(v, PROFILE)
        m = values_of(v) + noise * rng.standard_normal(replicas)
        out[config.key()] = Trace(config=config, replica_ids=np.arange(replicas), checkpoints=np.array([0, 10]),
                                  measures={"m": np.vstack([np.full(replicas, np.nan), m])}, counters={},
                                  final={"x": np.zeros((replicas, 1))}, diverged_round=np.full(replicas, -1))
    return out


def _interval():
    return IntervalClaim(id="t.interval", paper="t", title="t", statement="s", source=SRC, vary="x",
                         grid={"quick": GRID}, configure=_config, measure="m", theorem=THEOREM,
                         bindings=lambda config, trace: {"x": float(config.params["v"])}, lower="lo", upper="hi")


def test_interval_claim_decides_on_signed_measures():
    claim = _interval()
    assert claim.decide(PROFILE, _traces(lambda v: -0.5 / v)).verdict == Verdict.PASS
    assert claim.decide(PROFILE, _traces(lambda v: -2.0 / v)).verdict == Verdict.FAIL  # below the lower side
    assert claim.decide(PROFILE, _traces(lambda v: 2.0 / v)).verdict == Verdict.FAIL  # above the upper side
    assert claim.decide(PROFILE, _traces(lambda v: -1.0 / v, noise=0.05)).verdict == Verdict.INCONCLUSIVE


def test_abscissa_slope_claim_fits_magnitudes_against_another_axis():
    claim = AbscissaSlopeClaim(id="t.abs", paper="t", title="t", statement="s", source=SRC, vary="x",
                               grid={"quick": GRID}, configure=_config, measure="m", magnitude=True,
                               abscissa=lambda config: 10.0 / config.params["v"],
                               expected=ExpectedOrder(value=2.0, why="test"))
    outcome = claim.decide(PROFILE, _traces(lambda v: -1.0 / v**2, noise=1e-6))
    assert outcome.verdict == Verdict.PASS  # |m| = x^-2 = (abscissa/10)^2
    assert outcome.evidence["fit"]["x"][0] == 10.0


def test_hunt_spaces_differ_only_by_the_i10_conditions():
    """The same instance with a + b > 1: admissible over the printed range (a run at R >= R_min), refused where
    the proof holds (no run)."""
    from ratecheck.proofs.strfedavg import hunts as H

    instance = {"problem": {"dim": 4, "rank": 1, "rows": 1, "clients": 2, "lam_max": 0.0625, "lam_min": 0.0625,
                            "delta": 0.0, "outer": "tp1", "mu": 0.25, "rho": 0.0, "c_scale": 0.0, "x0_scale": 1.0,
                            "sigma_h": 0.0, "sigma_f": 0.0, "seed": 0},
                "a": 1.0, "b_fraction": 0.75, "p": 1.0, "K": 1, "horizon": 1.0}
    config = H.THEOREM_1_PRINTED_SPACE.configure(instance, 2)
    assert config is not None and config.params["exponents"] == "printed"
    assert H.THEOREM_1_PRINTED.evaluate(H.theorem1_bindings(config), use_schedule=False).all_hold
    assert H.THEOREM_1_SPACE.configure(instance, 2) is None
    assert H.THEOREM_1_SPACE.configure({**instance, "b_fraction": 0.5, "a": 2 / 3}, 2) is not None
