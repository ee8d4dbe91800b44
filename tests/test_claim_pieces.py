"""Claims from pieces: the invariants no kind can bypass, negative controls and extra gates composed
from a claim, and the report asking a claim's pieces (never its kind) how to show it."""

import dataclasses
from dataclasses import dataclass

import numpy as np
import pytest

from ratecheck.claims import (
    Claim,
    IntervalClaim,
    Outcome,
    PointResult,
    Verdict,
    negative_control,
    with_gates,
)
from ratecheck.claims.views import Statistic
from tests.test_claims import PROFILE, SRC, THEOREM, _config, _slope, _traces


def test_an_interval_claim_cannot_expect_inconclusive():
    with pytest.raises(ValueError, match="INCONCLUSIVE"):
        IntervalClaim(id="t.i", paper="t", title="t", statement="s", source=SRC, vary="x", grid={"quick": (1,)},
                      configure=_config, measure="m", theorem=THEOREM, bindings=lambda c, t: {},
                      lower="tight", upper="loose", expect=Verdict.INCONCLUSIVE)


@dataclass(frozen=True, kw_only=True)
class _OwnInit(Claim):
    """A kind that writes its own __post_init__ and decide and forgets the base: still checked."""

    def __post_init__(self) -> None:
        pass

    def decide(self, profile, traces):
        return Outcome(self, Verdict.FAIL, "always", {}, [])


def _own(**kw):
    return _OwnInit(id="t.own", paper="t", title="t", statement="s", source=SRC, vary="x", grid={"quick": (1, 2)},
                    configure=_config, measure="m", **kw)


def test_a_kind_overriding_post_init_or_decide_keeps_the_invariants():
    with pytest.raises(ValueError, match="INCONCLUSIVE"):
        _own(expect=Verdict.INCONCLUSIVE)
    with pytest.raises(ValueError, match="only an Observation"):
        _own(expect=Verdict.OBSERVED)
    failing = _own(expect=Verdict.FAIL, negative_control=True, expect_reason="t")
    control = _own(expect=Verdict.FAIL, negative_control=True, controls=failing, expect_reason="t")
    out = control.decide(PROFILE, {})
    assert out.verdict == Verdict.INCONCLUSIVE and "does not differ from t.own" in out.reason


def test_negative_control_copies_the_claim_and_must_differ():
    claim = _slope(expected=-0.5)
    control = negative_control(claim, id="t.control", title="c", statement="c", expect_reason="a property",
                               expected=dataclasses.replace(claim.expected, value=-2.0))
    assert control.expect == Verdict.FAIL and control.negative_control and control.controls is claim
    assert (control.grid, control.measure, control.tolerance) == (claim.grid, claim.measure, claim.tolerance)
    out = control.decide(PROFILE, _traces(-0.5))
    assert out.verdict == Verdict.FAIL and out.ok and "differs from t.slope (PASS)" in out.reason
    same = negative_control(claim, id="t.same", title="c", statement="c", expect_reason="x")
    assert "does not differ" in same.decide(PROFILE, _traces(-0.5)).reason
    loose = negative_control(claim, id="t.loose", title="c", statement="c", expect_reason="x", compare=False)
    assert loose.controls is None and loose.negative_control


def test_a_gate_runs_after_the_kind_and_can_only_add():
    def downgrade(claim, points, verdict, reason, evidence):
        return Verdict.INCONCLUSIVE, f"{reason}; gated", {**evidence, "gate": len(points)}

    gated = with_gates(_slope(), downgrade)
    assert gated.id == "t.slope" and gated.gates == (downgrade,)
    out = gated.decide(PROFILE, _traces(-0.5))
    assert out.verdict == Verdict.INCONCLUSIVE and out.reason.endswith("gated") and out.evidence["gate"] == 5
    assert _slope().decide(PROFILE, _traces(-0.5)).verdict == Verdict.PASS


def test_a_kind_without_its_own_pieces_is_shown_as_what_it_measured():
    """The fallback is the measure's means and its own label, never another kind's plot."""
    claim = _own()
    view = claim.view()
    assert type(view.statistic) is Statistic and view.ylabel(claim) == "m after the last round"
    point = PointResult(1.0, _config(1.0, PROFILE), np.array([1.0, 2.0]), 0)
    o = Outcome(claim, Verdict.FAIL, "r", {"fit": {"slope": 1}}, [point])
    assert view.facts(o) == [] and view.caption(o).startswith("Points: replica means")


def test_every_registered_kind_is_shown_by_its_pieces():
    import ratecheck.proofs as proofs
    from ratecheck.proofs.defedavg import wallclock as asynchronous

    labels = {type(c).__name__: c.view().ylabel(c) for c in proofs.all_claims() if not hasattr(c, "draw_plot")}
    wall = asynchronous.WALL_IID
    assert wall.view().ylabel(wall) == "time to target: defedavg_iid_events / fedavg_events"
    assert labels["WallClockClaim"].startswith("time to target: ")
    assert "end / start" in labels["StabilityClaim"]
    assert labels["LimitClaim"].startswith("||mean final")
    assert labels["HittingTimeClaim"].startswith("rounds until")
    assert asynchronous.WALL_IID.view().xlabel(asynchronous.WALL_IID) == "n"


def test_evidence_records_write_the_json_shape_and_read_it_back():
    from ratecheck.claims.evidence import BandEvidence, DifferenceEvidence

    out = _slope(expected=-0.5, design_reason="two points suffice here").decide(PROFILE, _traces(-0.5))
    ev = BandEvidence.read(out.evidence)
    assert ev is not None and ev.expected_exponent == -0.5 and ev.band == (-0.6, -0.4)
    assert ev.to_dict() == {k: out.evidence[k] for k in ev.to_dict()}
    assert set(ev.to_dict()) == {"fit", "expected_exponent", "expected_from", "tolerance", "side", "band",
                                 "design_reason"}
    assert BandEvidence.read({"exact": True}) is None
    diff = DifferenceEvidence(labels=("A", "B"), margin=0.1, fits={"A": {"slope": -1.0}, "B": {"slope": -0.5}},
                              expected={"A": {"exponent": -1.0, "from": "t", "band": [-1.1, -0.9]}}, value=-0.5,
                              ci_low=-0.6, ci_high=-0.4)
    assert DifferenceEvidence.read(diff.to_dict()) == diff
    assert set(diff.to_dict()) == {"labels", "margin", "fit_A", "fit_B", "expected_A", "difference"}
