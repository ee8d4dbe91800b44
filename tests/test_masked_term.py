"""Issue #22 item 5: a wrong 1/M^2 noise term hidden under a loose optimization term passes a bound claim
at every M; the masked-term gate says so (INCONCLUSIVE, naming the masking term) instead of a silent PASS,
and every bound claim shows which term dominates at each grid point (report column, check -v)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from ratecheck.claims.base import Outcome, with_gates
from ratecheck.claims.model import PointResult, Verdict
from ratecheck.claims.terms import MaskedTerm, dominant_term_column, term_shares, terms_text
from ratecheck.claims.values import BoundClaim
from ratecheck.theory import Bound, Source, Theorem
from ratecheck.trace import RunConfig

SRC = Source("local_sgd.tex", "Theorem 1")
D, sigma = sp.symbols("D sigma", positive=True)
M, T, eta = sp.symbols("M T eta", positive=True)
NOISE_WRONG = eta * sigma**2 / M**2  # the wrong version of the 1/M noise term
THEOREM = Theorem(
    id="local_sgd", title="local SGD", source=SRC, measure="gap", constants=(D, sigma), parameters=(M, T, eta),
    conditions=(), bounds=(Bound("wrong, loose", 40 * D / (eta * T) + NOISE_WRONG, SRC),
                           Bound("wrong, tight", D / (eta * T) + NOISE_WRONG, SRC)))
GRID = (8.0, 16.0, 32.0, 64.0)
VALUES = {"D": 1.0, "sigma": 1.0, "T": 100.0, "eta": 0.5}


def points() -> list[PointResult]:
    """Replicas of the true gap D/(2 eta T) + eta sigma^2 / M (a 1/M noise floor), 2% noise, fixed seed."""
    rng = np.random.default_rng(0)
    out = []
    for m in GRID:
        values = {**VALUES, "M": m}
        truth = values["D"] / (2 * values["eta"] * values["T"]) + values["eta"] * values["sigma"] ** 2 / m
        config = RunConfig(algorithm="local_sgd", params={"clients": m}, problem="quadratic", problem_params={},
                           rounds=100)
        out.append(PointResult(m, config, truth * (1 + 0.02 * rng.standard_normal(16)), 0,
                               THEOREM.evaluate(values, use_schedule=False)))
    return out


def claim(version: str, *gates) -> BoundClaim:
    bound = BoundClaim(id=f"t.{version}", paper="t", title="noise floor", statement="gap <= bound", source=SRC,
                       vary="M", grid={"quick": GRID}, configure=lambda v, p: None, measure="gap",  # type: ignore[arg-type]
                       theorem=THEOREM, bindings=lambda c, t: {}, version=version)
    return with_gates(bound, *gates)


def test_a_wrong_term_under_a_loose_one_is_masked_not_passed():
    silent, _, _ = claim("wrong, loose").judge(points())
    assert silent == Verdict.PASS  # what the user saw: the loose 40 D/(eta T) term hides the wrong 1/M^2 term
    verdict, reason, evidence = claim("wrong, loose", MaskedTerm(NOISE_WRONG, share=0.1)).judge(points())
    assert verdict == Verdict.INCONCLUSIVE
    assert reason.startswith("the term under test eta*sigma**2/M**2 is masked by 40*D/(T*eta): at most 0.97% of bound")
    rows = evidence["terms"]["rows"]
    assert [r["value"] for r in rows] == list(GRID) and all(r["under_test"] < 0.1 for r in rows)
    assert rows[0]["shares"]["40*D/(T*eta)"] == pytest.approx(0.8 / (0.8 + 0.5 / 64))


def test_where_the_term_matters_the_wrong_term_fails():
    # without the loose term the wrong 1/M^2 term decides the bound, and the 1/M truth exceeds it: FAIL stands
    verdict, reason, _ = claim("wrong, tight", MaskedTerm(r"\frac{\eta \sigma^{2}}{M^{2}}")).judge(points())
    assert verdict == Verdict.FAIL, reason


def test_the_dominant_term_at_each_point_is_shown():
    pts = points()
    shares = term_shares(THEOREM.bound("wrong, tight").expr, pts[0].evaluation.values)
    assert sum(shares.values()) == pytest.approx(1.0) and set(shares) == {"D/(T*eta)", "eta*sigma**2/M**2"}
    (column,) = dominant_term_column(claim("wrong, loose"))
    assert column.cell(pts[0]) == "40*D/(T*eta) (99%)"
    outcome = Outcome(claim("wrong, loose"), Verdict.PASS, "", {}, pts)
    assert terms_text(outcome) == ("; dominant term of bound 'wrong, loose': 40*D/(T*eta) at M=8 (99%), 16 (100%), "
                                   "32 (100%), 64 (100%)")


def test_a_masked_term_gate_is_validated():
    with pytest.raises(ValueError, match=r"share must be in \(0, 1\)"):
        MaskedTerm(NOISE_WRONG, share=1.5)
    with pytest.raises(ValueError, match="H not declared by theorem local_sgd"):
        MaskedTerm(sp.Symbol("H", positive=True) / M).expression(THEOREM)
