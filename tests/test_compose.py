"""Claims composed from pieces (issue #20 item 1) and assumptions matched by problem class (item 4)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import sympy as sp

from ratecheck.assumptions import (
    BILEVEL,
    FEDERATED,
    AssumptionError,
    admissible_families,
    bounded_variance,
    family_assumptions,
    missing,
    smooth,
)
from ratecheck.claims import (
    PROFILES,
    BoundCeiling,
    ExpectedOrder,
    ExponentInBand,
    IntervalClaim,
    LogLogSlope,
    OneSidedMeans,
    Rule,
    SlopeClaim,
    StrictlyDecreasing,
    ThresholdClaim,
    Verdict,
    negative_control,
)
from ratecheck.problem import Problem
from ratecheck.registry import default
from ratecheck.theory import Bound, Source, Theorem
from ratecheck.trace import RunConfig, Trace

PROFILE = PROFILES["quick"]
GRID = (1, 2, 4, 8, 16)
SRC = Source("synthetic", "test")


def _config(value, profile):
    return RunConfig("fedavg", {"v": value}, "quadratic", {}, rounds=10, replicas=profile.replicas)


def _traces(exponent, noise=0.05, replicas=16):
    rng = np.random.default_rng(0)
    out = {}
    for value in GRID:
        config = _config(value, PROFILE)
        m = value**exponent * np.exp(noise * rng.standard_normal(replicas))
        out[config.key()] = Trace(config=config, replica_ids=np.arange(replicas), checkpoints=np.array([0, 10]),
                                  measures={"m": np.vstack([np.full(replicas, np.nan), m])}, counters={},
                                  final={"x": np.zeros((replicas, 2))}, diverged_round=np.full(replicas, -1))
    return out


def _slope(**kw):
    return SlopeClaim(id="t.slope", paper="t", title="t", statement="s", source=SRC, vary="x", grid={"quick": GRID},
                      configure=_config, measure="m", expected=ExpectedOrder(value=-0.5, why="test"), **kw)


def test_a_kind_is_a_named_composition_and_decides_as_rule_of_statistic():
    claim = _slope()
    assert isinstance(claim.statistic, LogLogSlope) and isinstance(claim.rule, ExponentInBand)
    traces = _traces(-0.5)
    points = claim.points(PROFILE, traces)
    by_hand = claim.rule(claim, points, claim.statistic(claim, points))
    assert claim._decide(points)[:2] == by_hand[:2]
    assert claim.decide(PROFILE, traces).verdict == Verdict.PASS


def test_a_papers_own_kind_is_the_kind_with_another_rule():
    # the direction alone decides; the band's verdict is only reported (FedBiO S14's rule)
    monotone = _slope(rule=StrictlyDecreasing(reported=ExponentInBand()))
    out = monotone.decide(PROFILE, _traces(-1.0))  # outside the band, but strictly decreasing
    assert out.verdict == Verdict.PASS and "strictly decreasing" in out.reason and "entirely outside" in out.reason
    rising = monotone.decide(PROFILE, _traces(0.5))
    assert rising.verdict == Verdict.FAIL and "not monotone" in rising.reason


def test_strictly_decreasing_on_monte_carlo_points_judges_by_confidence_intervals():
    monotone = _slope(rule=StrictlyDecreasing(reported=ExponentInBand()))
    # noise of 5 (log scale) on a decade: neighbours' CIs overlap, so the direction is not decided
    noisy = monotone.decide(PROFILE, _traces(-1.0, noise=5.0))
    assert noisy.verdict == Verdict.INCONCLUSIVE and "CIs overlap" in noisy.reason
    flat = monotone.decide(PROFILE, _traces(0.0, noise=1e-3))  # no confident fall, no confident rise
    assert flat.verdict == Verdict.INCONCLUSIVE and "CIs overlap" in flat.reason, flat.reason


def test_a_piece_that_does_not_fit_the_claim_is_refused_when_the_claim_is_made():
    from ratecheck.claims import RelativeBand

    with pytest.raises(ValueError, match="RelativeBand reads rel_tolerance"):
        _slope(rule=StrictlyDecreasing(reported=RelativeBand()))


def test_each_pieces_declared_reads_cover_the_claim_fields_its_code_reads():
    import ast
    import inspect

    from ratecheck.claims import compose, plans, rules, rules_fit, statistics, summaries, trajectory
    from ratecheck.claims.base import Claim
    from ratecheck.proofs.defedavg import asynchronous, wallclock
    from ratecheck.runner import horizon, hunt

    for module in (compose, plans, rules, rules_fit, statistics, summaries, trajectory, horizon, hunt, asynchronous,
                   wallclock):
        for node in ast.parse(inspect.getsource(module)).body:
            cls = getattr(module, getattr(node, "name", ""), None)
            if not (isinstance(node, ast.ClassDef) and isinstance(cls, type)
                    and issubclass(cls, (compose.Plan, compose.Reading, compose.Estimator, compose.Rule))):
                continue
            read = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Name) and n.value.id == "claim"}
            base = {f.name for f in dataclasses.fields(Claim)} | set(dir(Claim))  # every claim has these
            assert read - base <= set(cls.reads), f"{cls.__name__} reads {sorted(read - base - set(cls.reads))}"


def test_a_rule_wrapper_sees_the_inner_decision():
    @dataclasses.dataclass(frozen=True)
    class Never(Rule):
        inner: Rule

        def __call__(self, claim, points, estimate):
            verdict, reason, evidence = self.inner(claim, points, estimate)
            return Verdict.FAIL, f"never: {reason}", {**evidence, "wrapped": str(verdict)}

    out = _slope(rule=Never(ExponentInBand())).decide(PROFILE, _traces(-0.5))
    assert out.verdict == Verdict.FAIL and out.evidence["wrapped"] == "PASS"


def test_the_pieces_of_a_threshold_and_no_bypass_of_the_invariants():
    claim = ThresholdClaim(id="t.thr", paper="t", title="t", statement="s", source=SRC, vary="x", grid={"quick": GRID},
                           configure=_config, measure="m", threshold=2.0)
    assert isinstance(claim.statistic, OneSidedMeans)
    assert claim.decide(PROFILE, _traces(-0.5)).verdict == Verdict.PASS
    # every kind, whatever its pieces, is checked by check_invariants (IntervalClaim once skipped them)
    with pytest.raises(ValueError, match="INCONCLUSIVE"):
        dataclasses.replace(claim, expect=Verdict.INCONCLUSIVE)
    with pytest.raises(ValueError, match="theorem"):
        IntervalClaim(id="t.int", paper="t", title="t", statement="s", source=SRC, vary="x", grid={"quick": GRID},
                      configure=_config, measure="m", lower="a", upper="b", expect=Verdict.INCONCLUSIVE)
    control = negative_control(claim, id="t.thr.control", title="c", statement="s", expect_reason="r",
                               threshold=0.5)
    assert control.controls is claim and control.rule == claim.rule
    with pytest.raises(ValueError, match="BoundCeiling reads version"):  # a ceiling from a theorem needs one
        negative_control(claim, id="t.thr.control2", title="c", statement="s", expect_reason="r",
                         rule=BoundCeiling())


def test_assumptions_match_by_problem_class_not_by_constant_names():
    federated_l = smooth("L", of=FEDERATED)
    assert FEDERATED.assume(smooth("L")) == (federated_l,)
    bilevel_l = BILEVEL.assume(smooth("L", "L_xy"))
    assert missing((federated_l,), bilevel_l) == [federated_l]  # same name, another class
    assert not missing(BILEVEL.assume(smooth("L")), bilevel_l)
    assert "[bilevel]" in str(bilevel_l[0])


def test_an_assumption_without_its_problem_class_is_refused_where_it_is_declared():
    # no default class: a bilevel family that forgot BILEVEL.assume would pass for a federated one
    assert smooth("L").of is None
    with pytest.raises(AssumptionError, match=r"problem family 'forgetful' \(\S*Forgetful.assumptions\): no problem "
                                              r"class for 'smooth \(L_f\)'.*BILEVEL.assume"):
        class Forgetful(Problem):
            family = "forgetful"
            assumptions = (smooth("L_f"), *FEDERATED.assume(bounded_variance("sigma")))
    x = sp.Symbol("x", positive=True)
    with pytest.raises(AssumptionError, match=r"theorem t.forgetful: requires: no problem class for 'bounded variance \(sigma\)'"):
        Theorem(id="t.forgetful", title="t", source=SRC, measure="m", constants=(x,), parameters=(),
                conditions=(), bounds=(Bound("stated", x, SRC),), requires=(bounded_variance("sigma"),))
    with pytest.raises(AssumptionError, match="no problem class"):
        missing((smooth("L"),), FEDERATED.assume(smooth("L")))
    with pytest.raises(AssumptionError, match="'L' is not an Assumption"):
        missing(("L",), ())  # type: ignore[arg-type]


def test_list_shows_the_admissible_families_by_class():
    registry = default()
    families = family_assumptions(registry)
    theorems = {t.id: t for t in registry.theorems()}
    # fedbio_bilevel names its constants L, sigma, Delta too, but they quantify a bilevel problem
    assert "fedbio_bilevel" not in admissible_families(theorems["defedavg.theorem2"], families)
    assert "quadratic" in admissible_families(theorems["defedavg.theorem2"], families)
    # quadratic_bilevel's L_f is the upper level's smoothness, not StR-FedAvg's selection f
    assert "quadratic_bilevel" not in admissible_families(theorems["strfedavg.theorem3_descent"], families)
    assert admissible_families(theorems["fedbio.theorem5"], families) == ["fedbio_bilevel"]


@pytest.fixture
def fresh_registry():
    """A fresh process-wide registry, the previous one restored afterwards."""
    import ratecheck.registry as registry

    registry.default().ensure("algorithm", "problem")
    previous = registry.reset(None)
    yield registry
    registry.reset(previous)


def test_a_paper_registers_measures_of_a_family_and_runs_record_them(fresh_registry, tmp_path):
    from ratecheck.simulate.engine import run_config

    source = tmp_path / "plug_measures.py"
    source.write_text(
        "import numpy as np\n"
        "from ratecheck.problem import Measures\n"
        "def norms(problem, point):\n"
        "    return {'x_norm_sq': np.einsum('ri,ri->r', point, point)}\n"
        "MEASURES = {'quadratic': Measures(compute=norms, names=('x_norm_sq',), source='a test')}\n")
    fresh_registry.add_source(str(source))
    (extra,) = fresh_registry.default().measures("quadratic")
    problem = fresh_registry.make_problem("quadratic", {"dim": 3, "clients": 4})
    assert problem.extra_measures == (extra,)
    assert "x_norm_sq" in problem.all_measures(np.ones((2, 3))) and "x_norm_sq" not in problem.measures(np.ones((2, 3)))
    trace = run_config(RunConfig("fedavg", {}, "quadratic", {"dim": 3, "clients": 4}, rounds=3, replicas=2))
    assert np.all(trace.measures["x_norm_sq"] >= 0)
    # the FedBiO paper's Lemma 8 measures are registered the same way (pyproject's ratecheck.measures group)
    assert [m.names for m in fresh_registry.default().measures("fedbio_bilevel")] == [
        ("hg_bias", "x_drift", "y_drift", "u_disp")]
