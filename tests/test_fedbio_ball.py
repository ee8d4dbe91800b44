"""The after-run C_f ball check of the FedBiO claims (proofs/fedbio/ball.py, issue #10 part 1)."""

from types import SimpleNamespace

import numpy as np

from ratecheck.claims import PointResult, Verdict
from ratecheck.inspection import problem_of
from ratecheck.proofs.fedbio import claims as fc
from ratecheck.proofs.fedbio.ball import BallGate, ball_checked, ball_evidence
from ratecheck.trace import RunConfig

CONFIG = RunConfig("fedbio", {}, "fedbio_bilevel", {"test": "A", "clients": 2}, 10)


def _point(max_x: float, max_y: float = 0.1, samples: np.ndarray | None = None) -> PointResult:
    samples = np.zeros(4) if samples is None else samples
    trace = SimpleNamespace(info={"max_x_norm": max_x, "max_y_norm": max_y}, exact=False)
    return PointResult(value=1.0, config=CONFIG, samples=samples, diverged=0, trace=trace)


def test_iterates_outside_the_ball_are_named_and_a_decisive_claim_is_not_accepted():
    R_x, R_y = problem_of(CONFIG).ball
    inside, outside = _point(0.5 * R_x), _point(2 * R_x)
    assert ball_evidence([inside])["left"] == []
    left = ball_evidence([inside, outside])["left"]
    assert len(left) == 1 and f"R_x {R_x:.3g}" in left[0]
    claim = ball_checked(fc.STORM_GLOBAL, decisive=True)
    assert claim.id == fc.STORM_GLOBAL.id
    verdict, reason, evidence = claim.judge([inside])
    assert verdict == Verdict.PASS and evidence["C_f_ball"]["left"] == []
    verdict, reason, evidence = claim.judge([outside])
    assert verdict == Verdict.INCONCLUSIVE and "LEFT the ball" in reason
    verdict, reason, _ = ball_checked(fc.STORM_GLOBAL).judge([outside])  # reported, not decisive
    assert verdict == Verdict.PASS and "LEFT the ball" in reason


def test_exact_runs_are_counted_as_unchecked_and_every_claim_is_wrapped():
    exact = PointResult(value=1.0, config=CONFIG, samples=np.zeros(1), diverged=0,
                        trace=SimpleNamespace(info={}, exact=True))
    assert ball_evidence([exact]) == {"points": [], "left": [], "unchecked": 1}
    assert ball_evidence([_point(float("nan"), float("nan"))])["unchecked"] == 1  # exact mode's NaN monitors
    assert all(any(isinstance(g, BallGate) for g in c.gates) for c in fc.CLAIMS)


def test_runs_record_the_visited_maxima():
    from ratecheck.simulate.engine import run_config

    trace = run_config(RunConfig("fedbio", {"eta": 0.1}, "fedbio_bilevel", {"test": "A", "clients": 2}, 30,
                                 replicas=2))
    x_star = problem_of(CONFIG).x_star
    assert np.linalg.norm(x_star) * 0.5 < trace.info["max_x_norm"] < problem_of(CONFIG).ball[0]
    assert trace.info["max_y_norm"] > 0
