"""What a claim runs is a piece too (issue #20 item 1): the plans (a grid, two series, a stored recursion beside
the runs, several runs per grid value, an adaptive search), the views the report asks of the decision's pieces
(item 1's "each statistic and rule owns its plot layer"), and the invariants no piece can bypass."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

from ratecheck.claims import (
    Claim,
    ExponentInBand,
    Reading,
    Rule,
    SlopeClaim,
    StrictlyDecreasing,
    ThresholdClaim,
    Verdict,
    negative_control,
)
from ratecheck.claims.compose import Grid, Plan
from ratecheck.claims.plans import RunsPerValue, SeriesPair, StoredRecursion
from ratecheck.claims.trajectory import trajectory_oracle
from ratecheck.claims.views import NoRule, OwnDrawing, Statistic
from ratecheck.claims.views_slopes import ExponentBand, Monotone
from ratecheck.runner.horizon import Bisection
from ratecheck.runner.hunt import Searches
from ratecheck.runner.tasks import jsonable
from tests.test_compose import GRID, PROFILE, SRC, _config, _slope, _traces

COMMON = dict(paper="t", title="t", statement="s", source=SRC, vary="x", grid={"quick": GRID}, configure=_config,
              measure="m")


def _oracle(config, checkpoints):
    """The synthetic runs' expectation, v^-1/2 after the last round (round 0 has no value)."""
    return {"m": np.array([np.nan, config.params["v"] ** -0.5])}


def _trajectory(**kw):
    return trajectory_oracle(id="t.traj", paper="t", title="t", statement="s", source=SRC, configure=_config,
                             oracle=_oracle, measures=("m",), rtol=0.5, tolerance_reason="a test", vary="x",
                             grid={"quick": GRID}, **kw)


def test_a_stored_recursion_is_asked_for_beside_each_run_unless_the_claim_gives_its_own_deviation():
    claim = _trajectory()
    assert isinstance(claim.plan, StoredRecursion) and claim.plans_runs
    traces = _traces(-0.5)
    asked = claim.requests(PROFILE, traces)
    assert len(asked) == len(GRID) and {t.kind for t in asked} == {"oracle"}
    results = {**traces, **{t.key(): jsonable(claim.compute_task(t)) for t in asked}}
    assert claim.requests(PROFILE, results) == []  # every recursion is there
    stored, fresh = claim.decide(PROFILE, results), claim.decide(PROFILE, traces)  # fresh: computed by the reading
    assert stored.verdict == fresh.verdict == Verdict.PASS
    assert all(np.array_equal(a.samples, b.samples) for a, b in zip(stored.points, fresh.points))
    # a claim with its own deviation (the event replays' combined_deviation) decides on it and asks for nothing
    own = dataclasses.replace(claim, summary=lambda config, trace: np.full(trace.replica_ids.size, 0.75))
    assert own.requests(PROFILE, traces) == []
    out = own.decide(PROFILE, traces)
    assert out.verdict == Verdict.FAIL and all(p.samples.max() == 0.75 for p in out.points)


def test_two_series_on_one_grid_are_one_plan():
    from ratecheck.claims import ExpectedOrder, ExponentComparisonClaim

    def faster(value, profile):
        return dataclasses.replace(_config(value, profile), params={"v": value, "series": "B"})

    claim = ExponentComparisonClaim(id="t.cmp", **COMMON, configure_other=faster, labels=("A", "B"),
                                    expected=(ExpectedOrder(value=-1.0, why="t"), None))
    assert isinstance(claim.plan, SeriesPair)
    runs = claim.runs(PROFILE)
    assert len(runs) == 2 * len(GRID) and runs[len(GRID)].params["series"] == "B"
    traces = {**_traces(-1.0), **{faster(t.config.params["v"], PROFILE).key(): t for t in _traces(-0.5).values()}}
    out = claim.decide(PROFILE, traces)
    assert [p.stats["series"] for p in out.points] == ["A"] * len(GRID) + ["B"] * len(GRID)
    assert out.verdict == Verdict.PASS and out.evidence["difference"]["value"] == pytest.approx(-0.5, abs=0.05)


def _runs_traces(claim):
    """A synthetic trace for each of the claim's runs, its final m the run's own parameter v in every replica (an
    'up' run at v = grid value, its 'down' partner at v + 0.5), so a point read from another run shows."""
    trace = next(iter(_traces(-0.5).values()))
    out = {}
    for c in claim.runs(PROFILE):
        m = trace.measures["m"].copy()
        m[-1] = c.params["v"]
        out[c.key()] = dataclasses.replace(trace, config=c, measures={"m": m})
    return out


@dataclass(frozen=True)
class _GapToUp(Reading):
    """Per replica, the point's own final m minus its 'up' partner's: needs the point's own run and its partners."""

    def __call__(self, claim, point):
        point.samples = point.trace.measures["m"][-1] - point.inputs["runs"]["up"].measures["m"][-1]


@dataclass(frozen=True)
class _GapsAsConfigured(Rule):
    """PASS when every point's gap is the v offset its run was configured with (0 for 'up', 0.5 for 'down')."""

    def __call__(self, claim, points, estimate):
        ok = all(np.allclose(p.samples, p.config.params["v"] - p.value) for p in points)
        return (Verdict.PASS if ok else Verdict.FAIL), "gaps as configured", {"runs": len(points)}


@dataclass(frozen=True, kw_only=True)
class _TwoRuns(Claim):
    """Two runs per grid value, tagged 'up' and 'down' (as DeFedAvg's stability and wall-clock claims)."""

    min_replicas: int = 4
    plan: Plan = RunsPerValue()
    reading: Reading = _GapToUp()
    rule: Rule = _GapsAsConfigured()

    def runs_at(self, value, profile):
        return [({"run": "up"}, _config(value, profile)), ({"run": "down"}, _config(value + 0.5, profile))]


def test_several_runs_per_grid_value_are_one_plan_and_each_point_sees_its_partners():
    claim = _TwoRuns(id="t.two", **COMMON)
    assert len(claim.runs(PROFILE)) == 2 * len(GRID)
    traces = _runs_traces(claim)
    out = claim.decide(PROFILE, traces)
    assert out.verdict == Verdict.PASS and [p.stats["run"] for p in out.points[:2]] == ["up", "down"]
    up, down = out.points[:2]
    assert up.value == down.value == GRID[0] and np.all(up.samples == 0.0) and np.all(down.samples == 0.5)
    assert set(down.inputs["runs"]) == {"up", "down"} and down.inputs["runs"]["down"] is down.trace
    assert "inputs" not in out.points[0].to_dict()  # what the plan fetched stays out of the JSON
    assert out.evidence["exact"] is False
    quiet = dataclasses.replace(claim, plan=RunsPerValue(exactness=False))
    assert "exact" not in quiet.decide(PROFILE, traces).evidence
    # the rule can fail: a 'down' run that measured its 'up' partner's values (a run paired with the wrong one)
    first_down = _config(GRID[0] + 0.5, PROFILE).key()
    swapped = {**traces, first_down: dataclasses.replace(traces[_config(GRID[0], PROFILE).key()],
                                                          config=traces[first_down].config)}
    assert claim.decide(PROFILE, swapped).verdict == Verdict.FAIL


PLANS = [Grid(), SeriesPair(), StoredRecursion(), RunsPerValue(), Bisection(), Searches()]


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: type(p).__name__)
def test_no_plan_lets_a_claim_expect_inconclusive_or_miss_a_field_it_reads(plan):
    with pytest.raises(ValueError, match="INCONCLUSIVE|reads"):
        _slope(plan=plan, expect=Verdict.INCONCLUSIVE)
    if plan.reads:  # a plan that reads fields a slope claim does not have is refused, naming both
        with pytest.raises(ValueError, match=f"{type(plan).__name__} reads"):
            _slope(plan=plan)


def test_a_negative_control_with_any_plan_must_differ_from_what_it_controls():
    claim = _TwoRuns(id="t.two", **COMMON)
    traces = _runs_traces(claim)
    same = negative_control(claim, id="t.two.control", title="c", statement="c", expect_reason="r")
    out = same.decide(PROFILE, traces)
    assert out.verdict == Verdict.INCONCLUSIVE and "does not differ from t.two" in out.reason


def test_the_invariants_are_checked_for_every_registered_claim_and_no_kind_decides_unwatched():
    import ratecheck.proofs as proofs
    from ratecheck.claims.base import check_invariants

    claims = list(proofs.all_claims())
    for claim in claims:
        check_invariants(claim)  # what every constructor ran: no expected INCONCLUSIVE, pieces fit fields, ...
        decide = type(claim).decide
        assert getattr(decide, "_controlled", False), f"{type(claim).__name__}.decide bypasses the controls"
        post_init = type(claim).__post_init__
        assert post_init is Claim.__post_init__ or getattr(post_init, "_checks_invariants", False)
    # only a hunt (a search, not grid points) and an observation (no
    # verdict) still write decide; none writes points
    def written(name):
        return {type(c).__name__ for c in claims if any(name in vars(k) for k in type(c).__mro__[: type(c).__mro__.index(Claim)])}

    assert written("decide") <= {"HuntClaim", "Observation", "LimitObservation"}, written("decide")
    assert not written("points") and not written("runs") and not written("own_runs")


def test_every_registered_claims_plot_is_drawn_by_its_decision_pieces():
    import ratecheck.proofs as proofs

    for claim in proofs.all_claims():
        drawn = getattr(claim, "of", None) or claim
        assert not any(hasattr(k, "statistic_view") or hasattr(k, "rule_view") for k in type(drawn).__mro__), \
            f"{drawn.id}: a view attached to its kind"
        view = drawn.view()
        if callable(getattr(drawn, "draw_plot", None)):
            assert isinstance(view.statistic, OwnDrawing)
            continue
        # the points' side is the plan's, the reading's or the statistic's view, the yardstick the rule's
        pieces = [drawn.plan.display(), drawn._reading().display(), drawn.statistic.display()]
        first = next((v for v in pieces if v is not None), None)
        if first is None:  # no piece draws itself: the points are shown as their means
            assert type(view.statistic) is Statistic, drawn.id
        else:
            assert view.statistic is first, drawn.id
        ruled = drawn.rule.display()
        assert type(view.rule) is (type(ruled) if ruled is not None else NoRule), drawn.id
        label = view.ylabel(drawn)
        assert label and "<lambda>" not in label and label != "summary", f"{drawn.id}: y axis {label!r}"
        if _judges_direction(drawn.rule):
            assert isinstance(view.rule, Monotone) and not isinstance(view.rule, ExponentBand), drawn.id
    by_id = {c.id: c for c in proofs.all_claims()}
    s14 = by_id["fedbio.S14.acc_fixed_T_speedup"]
    assert isinstance(s14.view().rule, Monotone) and isinstance(s14.view().rule.reported, ExponentBand)
    for wall in ("defedavg.wallclock.iid_vs_fedavg", "defedavg.wallclock.niid_vs_fedavg"):
        label = by_id[wall].view().ylabel(by_id[wall])
        assert label.startswith("time to target: ") and "grad_norm_sq" not in label
    traj = by_id["fedbio.oracle.fedbio_trajectory"]
    assert "deviation" in traj.view().ylabel(traj)


def _judges_direction(rule: Any) -> bool:
    inner = [getattr(rule, f.name) for f in dataclasses.fields(rule)] if dataclasses.is_dataclass(rule) else []
    return isinstance(rule, StrictlyDecreasing) or any(_judges_direction(r) for r in inner if isinstance(r, Rule))


def test_a_direction_rule_is_drawn_as_the_direction_not_as_the_band_it_reports():
    from ratecheck.report.plots import _figure

    claim = _slope(rule=StrictlyDecreasing(reported=ExponentInBand()))
    out = claim.decide(PROFILE, _traces(-1.0))  # strictly decreasing, outside the reported band
    assert out.verdict == Verdict.PASS
    fig = _figure(out)
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert any(lab.startswith("judged: a confident fall") for lab in labels), labels
    assert not any(lab.startswith("band: slope") for lab in labels), labels  # the band is reported, not judged
    caption = claim.view().caption(out)
    assert "judges only the direction" in caption
    facts = dict(claim.view().facts(out))
    assert "Judged: " in facts and any(k.startswith("Reported, not judged: Expected exponent") for k in facts)
    band = _slope().decide(PROFILE, _traces(-0.5))
    band_labels = [t.get_text() for legend in _figure(band).legends for t in legend.get_texts()]
    assert any(lab.startswith("band: slope") for lab in band_labels)


def test_a_paper_rule_wrapping_another_is_shown_as_the_rule_it_wraps_unless_it_says_otherwise():
    @dataclass(frozen=True)
    class Gated(Rule):
        inner: Rule = ExponentInBand()

        def __call__(self, claim, points, estimate):
            return self.inner(claim, points, estimate)

    assert isinstance(_slope(rule=Gated()).view().rule, ExponentBand)

    @dataclass(frozen=True)
    class Drawn(Gated):
        view: ClassVar[Any] = NoRule()

    assert type(_slope(rule=Drawn()).view().rule) is NoRule


def test_a_claim_kind_names_pieces_not_views():
    from ratecheck.claims import base

    assert "statistic_view" not in inspect.getsource(base) and "rule_view" not in inspect.getsource(base)
    assert isinstance(ThresholdClaim(id="t.t", **COMMON, threshold=1.0).plan, Grid)
    assert isinstance(SlopeClaim.__dataclass_fields__["plan"].default, Grid)
