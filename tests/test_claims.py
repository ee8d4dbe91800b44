"""Claims: the decision rules on synthetic data, and every registered claim in the active profile."""

import dataclasses

import numpy as np
import pytest
import sympy as sp

import ratecheck.proofs as proofs
from ratecheck.claims import (
    PROFILES,
    BoundClaim,
    ExpectedOrder,
    LimitClaim,
    SlopeClaim,
    Verdict,
)
from ratecheck.claims.explain import describe
from ratecheck.pytest_plugin import ClaimFailure, assert_outcome
from ratecheck.runner.sweep import check_claims
from ratecheck.theory import Bound, Condition, Source, Theorem
from ratecheck.trace import RunConfig, Trace

PROFILE = PROFILES["quick"]
GRID = (1, 2, 4, 8, 16)
SRC = Source("synthetic", "test")
x_sym, c_sym = sp.symbols("x c", positive=True)
THEOREM = Theorem(
    id="synthetic", title="synthetic", source=SRC, measure="m", constants=(c_sym,), parameters=(x_sym,),
    conditions=(Condition("x <= 100", x_sym <= 100, SRC),),
    bounds=(Bound("loose", 2 * c_sym / sp.sqrt(x_sym), SRC), Bound("tight", c_sym / (2 * sp.sqrt(x_sym)), SRC)),
)


def _config(value, profile):
    return RunConfig("fedavg", {"v": value}, "quadratic", {}, rounds=10, replicas=profile.replicas)


def _traces(exponent, *, noise=0.05, replicas=16, seed=0, diverge=0, final=None):
    """Fake traces: measure m = x^exponent times log-normal noise, one per grid value."""
    rng = np.random.default_rng(seed)
    out = {}
    for value in GRID:
        config = _config(value, PROFILE)
        m = value**exponent * np.exp(noise * rng.standard_normal(replicas))
        diverged = np.full(replicas, -1)
        diverged[:diverge] = 3
        m[:diverge] = np.nan
        x = final if final is not None else np.zeros((replicas, 2))
        out[config.key()] = Trace(
            config=config, replica_ids=np.arange(replicas), checkpoints=np.array([0, 10]),
            measures={"m": np.vstack([np.full(replicas, np.nan), m])}, counters={},
            final={"x": x + 0.01 * rng.standard_normal((replicas, 2))}, diverged_round=diverged,
        )
    return out


def _slope(expected=-0.5, side="two-sided", **kw):
    return SlopeClaim(id="t.slope", paper="t", title="t", statement="s", source=SRC, vary="x",
                      grid={"quick": GRID}, configure=_config, measure="m",
                      expected=ExpectedOrder(value=expected, why="test"), side=side, **kw)


def test_slope_pass_fail_and_inconclusive():
    assert _slope().decide(PROFILE, _traces(-0.5)).verdict == Verdict.PASS
    assert _slope().decide(PROFILE, _traces(-1.0)).verdict == Verdict.FAIL
    # a slope right at the band edge with noisy data cannot be decided
    edge = _slope().decide(PROFILE, _traces(-0.6, noise=0.3))
    assert edge.verdict == Verdict.INCONCLUSIVE and "more replicas" in edge.reason


def test_one_sided_slope():
    # "no slower than x^-0.5": a faster decay passes, a slower one fails
    assert _slope(side="at_most").decide(PROFILE, _traces(-1.0)).verdict == Verdict.PASS
    assert _slope(side="at_most").decide(PROFILE, _traces(0.0)).verdict == Verdict.FAIL


def test_too_many_diverged_replicas_is_inconclusive_and_says_so():
    out = _slope().decide(PROFILE, _traces(-0.5, diverge=10))
    assert out.verdict == Verdict.INCONCLUSIVE
    assert "too few non-diverged replicas" in out.reason and "10 diverged, the first at round 3" in out.reason


def _bound(version, binding_c=1.0, x_max=None):
    def bindings(config, trace):
        return {"c": binding_c, "x": config.params["v"] if x_max is None else x_max}

    return BoundClaim(id=f"t.bound.{version}", paper="t", title="t", statement="s", source=SRC, vary="x",
                      grid={"quick": GRID}, configure=_config, measure="m", theorem=THEOREM,
                      bindings=bindings, version=version)


def test_bound_verdicts_use_confidence_bounds_and_conditions():
    traces = _traces(-0.5)  # mean ~ x^-1/2, between c/(2 sqrt x) and 2c/sqrt x
    assert _bound("loose").decide(PROFILE, traces).verdict == Verdict.PASS
    out = _bound("tight").decide(PROFILE, traces)
    assert out.verdict == Verdict.FAIL
    assert {r["value"] for r in out.evidence["rows"]} == set(GRID)
    violated = _bound("loose", x_max=200.0).decide(PROFILE, traces)
    assert violated.verdict == Verdict.INCONCLUSIVE and "conditions violated" in violated.reason


def test_limit_claim():
    def claim(target, tol):
        return LimitClaim(id="t.limit", paper="t", title="t", statement="s", source=SRC, vary="x",
                          grid={"quick": GRID}, configure=_config, measure="m",
                          target=lambda config: np.asarray(target), tolerance=tol)

    traces = _traces(-0.5, final=np.zeros((16, 2)))
    assert claim([0.0, 0.0], 0.05).decide(PROFILE, traces).verdict == Verdict.PASS
    assert claim([1.0, 0.0], 0.05).decide(PROFILE, traces).verdict == Verdict.FAIL


def test_an_unexpected_verdict_reads_well_as_an_assertion():
    out = _slope(expected=-2.0).decide(PROFILE, _traces(-0.5))
    assert not out.ok
    with pytest.raises(ClaimFailure) as info:
        assert_outcome(out)
    text = str(info.value)
    for piece in ("t.slope", "expected PASS, measured FAIL", "fitted slope", "CI"):
        assert piece in text
    assert "x=16" in describe(_bound("tight").decide(PROFILE, _traces(-0.5)))


def test_claim_ids_are_unique_and_every_claim_cites_its_source():
    claims = proofs.all_claims()
    assert len({c.id for c in claims}) == len(claims)
    for claim in claims:
        assert claim.source.paper and claim.source.where
        if claim.expect == Verdict.FAIL:
            assert claim.expect_reason, f"{claim.id}: an expected FAIL must say why"
    for theorem in proofs.all_theorems():
        assert theorem.source.paper and all(b.source.where for b in theorem.bounds)


# -- the registered claims, in the active profile ------------------------------------------------


def _selected_claims(session: pytest.Session, profile) -> list:
    """The registered claims the collected tests need: all of them if a test other than
    test_registered_claim uses the traces, else only those selected (so `-k <paper>` runs one paper)."""
    needed, everything = set(), False
    for item in session.items:
        if "registered_traces" not in getattr(item, "fixturenames", ()):
            continue
        if getattr(item, "originalname", "") == "test_registered_claim":
            needed.add(item.callspec.params["claim"].id)
        else:
            everything = True
    claims = [c for c in proofs.all_claims() if c.in_profile(profile)]  # the profile's claims (issue #23)
    return claims if everything else [c for c in claims if c.id in needed]


@pytest.fixture(scope="session")
def registered_traces(request, ratecheck_profile, ratecheck_store):
    """The runs the selected registered claims need, computed once (deduplicated) on a 2-process pool."""
    from ratecheck.runner.executors import make_executor
    from ratecheck.runner.sweep import gather

    with make_executor(jobs=2) as executor:  # runs and searches (hunts, bisections) alike
        return gather(_selected_claims(request.session, ratecheck_profile), ratecheck_profile, store=ratecheck_store, executor=executor,
                      progress=False)[0]


@pytest.mark.parametrize("claim", proofs.all_claims(), ids=lambda c: c.id)
def test_registered_claim(claim, ratecheck_profile, registered_traces):
    if not claim.in_profile(ratecheck_profile):  # e.g. a Monte-Carlo twin: a claim of the full profile only
        pytest.skip(f"{claim.id} is not a claim of the {ratecheck_profile.name} profile")
    assert_outcome(claim.decide(ratecheck_profile, registered_traces))


def test_check_claims_matches_decide(ratecheck_profile, registered_traces, tmp_path):
    """check_claims (the CLI path) reuses the cache and gives the same verdicts."""
    from ratecheck.model.store import Store
    from ratecheck.runner.sweep import put_trace

    store = Store(tmp_path)
    for trace in registered_traces.values():
        if hasattr(trace, "to_arrays"):  # runs; the searches are computed again
            put_trace(store, trace.config, *trace.to_arrays())
    outcomes = check_claims(proofs.all_claims(), ratecheck_profile, store=store, progress=False)
    direct = [c.decide(ratecheck_profile, registered_traces).verdict for c in proofs.all_claims()
              if c.in_profile(ratecheck_profile)]
    assert [o.verdict for o in outcomes] == direct


def test_regime_not_reached_is_inconclusive_and_says_why():
    from ratecheck.claims import term_negligible

    def claim(c_value):
        return _slope(theorem=THEOREM, bindings=lambda config, trace: {"c": c_value, "x": config.params["v"]},
                      regime=term_negligible(c_sym / x_sym, "c/x"))

    traces = _traces(-0.5)  # measured ~ x^-1/2; the term c/x is below 10% of it only when c is small
    assert claim(0.01).decide(PROFILE, traces).verdict == Verdict.PASS
    out = claim(1.0).decide(PROFILE, traces)
    assert out.verdict == Verdict.INCONCLUSIVE
    assert out.reason.startswith("regime not reached") and "c/x" in out.reason


def test_tail_average_is_the_exact_mean_over_the_tail():
    from ratecheck import run
    from ratecheck.claims import tail_average
    from ratecheck.problems import make_problem
    from ratecheck.proofs.defedavg.presets import p1
    from ratecheck.registry import make_algorithm

    alg = make_algorithm("fedavg", dict(eta_local=0.05, local_steps=2))
    trace = run(alg, make_problem("quadratic", p1(clients=4)), 100, replicas=3, checkpoints=1000)
    tail = tail_average("grad_norm_sq", 0.25)(trace.config, trace)
    per_round = trace.measures["grad_norm_sq"]  # rows are rounds 0..100
    np.testing.assert_allclose(tail, per_round[25:100].mean(axis=0), rtol=1e-10)


def test_value_claim_against_a_prediction():
    from ratecheck.claims import ValueClaim

    def claim(scale):
        return ValueClaim(id="t.value", paper="t", title="t", statement="s", source=SRC, vary="x",
                          grid={"quick": GRID}, configure=_config, measure="m",
                          predict=lambda config: scale * config.params["v"] ** -0.5, prediction="x^-1/2",
                          rel_tolerance=0.05)

    traces = _traces(-0.5, noise=0.02)
    assert claim(1.0).decide(PROFILE, traces).verdict == Verdict.PASS
    assert claim(1.5).decide(PROFILE, traces).verdict == Verdict.FAIL
    assert claim(1.045).decide(PROFILE, traces).verdict == Verdict.INCONCLUSIVE


@pytest.mark.claims  # plans every registered claim's runs in both profiles
@pytest.mark.parametrize("profile_name", ["quick", "full"])
def test_every_registered_run_is_valid_in_every_profile(profile_name):
    """Catches a grid that asks for the impossible (e.g. m > N) before anyone waits for a sweep."""
    from ratecheck.problems import make_problem
    from ratecheck.registry import make_algorithm

    for claim in proofs.all_claims():
        if not claim.in_profile(PROFILES[profile_name]):  # e.g. a Monte-Carlo twin of the full profile only
            continue
        for config in claim.runs(PROFILES[profile_name]):
            problem = make_problem(config.problem, config.problem_params)
            make_algorithm(config.algorithm, config.params).validate(problem)


# -- issue #7: verdict rules ---------------------------------------------------------------------


def test_a_fit_needs_five_points_over_a_decade_or_a_stated_reason():
    few = SlopeClaim(id="t.few", paper="t", title="t", statement="s", source=SRC, vary="x",
                     grid={"quick": (1, 2, 4)}, configure=_config, measure="m",
                     expected=ExpectedOrder(value=-0.5, why="test"))
    out = few.decide(PROFILE, _traces(-0.5))
    assert out.verdict == Verdict.INCONCLUSIVE and "fit design: 3 points over 0.60 decades" in out.reason
    stated = dataclasses.replace(few, design_reason="the law is exact here")
    assert stated.decide(PROFILE, _traces(-0.5)).verdict == Verdict.PASS


def _bent_traces(replicas=16):
    """m = x^-1 + 0.2: the local slope drifts from about -0.8 to -0.2 across the grid."""
    out = {}
    for value in GRID:
        config = _config(value, PROFILE)
        m = np.full(replicas, value**-1.0 + 0.2)
        out[config.key()] = Trace(config=config, replica_ids=np.arange(replicas), checkpoints=np.array([0, 10]),
                                  measures={"m": np.vstack([m, m])}, counters={}, final={"x": np.zeros((replicas, 2))},
                                  diverged_round=np.full(replicas, -1))
    return out


def test_a_regime_change_is_inconclusive_with_the_reason():
    out = _slope(expected=-0.5, side="at_most").decide(PROFILE, _bent_traces())
    assert out.verdict == Verdict.INCONCLUSIVE
    assert out.reason.startswith("regime change")
    assert "(deterministic)" in out.reason  # identical replicas: no zero-width CI


def test_one_sided_claims_state_the_cap_and_the_measurement():
    out = _slope(side="at_most").decide(PROFILE, _traces(-1.0))
    assert out.verdict == Verdict.PASS
    assert "the theorem's cap: at most -0.500" in out.reason and "measured slope -1" in out.reason


def test_no_claim_may_expect_inconclusive():
    with pytest.raises(ValueError, match="INCONCLUSIVE"):
        _slope(expect=Verdict.INCONCLUSIVE)


def test_a_negative_control_must_differ_from_the_claim_it_controls():
    claim = _slope(expected=-0.5)
    control = _slope(expected=-2.0, expect=Verdict.FAIL, negative_control=True, controls=claim,
                     expect_reason="test")
    out = control.decide(PROFILE, _traces(-0.5))
    assert out.verdict == Verdict.FAIL and out.ok and "differs from t.slope (PASS)" in out.reason
    same = _slope(expected=-0.5, expect=Verdict.FAIL, negative_control=True, controls=claim, expect_reason="test")
    out = same.decide(PROFILE, _traces(-0.5))
    assert out.verdict == Verdict.INCONCLUSIVE and not out.ok and "does not differ" in out.reason
    with pytest.raises(ValueError, match="grid"):
        dataclasses.replace(control, grid={"quick": (1, 2)})


def test_an_observation_has_no_verdict_and_never_fails():
    from ratecheck.claims import observe

    obs = observe(_bound("loose"), id="t.obs", title="t", quantity="mean/bound",
                  compute=lambda points, ev: {"largest": max(r["ratio"] for r in ev["rows"])})
    out = obs.decide(PROFILE, _traces(-0.5))
    assert out.verdict == Verdict.OBSERVED and out.ok and out.observation and not out.erratum
    assert 0 < out.evidence["observed"]["largest"] < 1 and "observed mean/bound: largest = " in out.reason
    assert out.to_dict()["observation"] is True
    from ratecheck.claims.explain import observation_lines
    assert observation_lines([out])[0].startswith("t.obs: mean/bound: largest = ")


def _rate_traces(contraction, replicas=4, rounds=200):
    marks = np.arange(0, rounds + 1, 10)
    out = {}
    for value in (rounds,):
        config = _config(value, PROFILE)
        m = np.repeat((contraction ** marks)[:, None], replicas, axis=1)
        out[config.key()] = Trace(config=config, replica_ids=np.arange(replicas), checkpoints=marks,
                                  measures={"m": m}, counters={}, final={"x": np.zeros((replicas, 2))},
                                  diverged_round=np.full(replicas, -1))
    return out


def test_rate_claim_against_the_exact_and_the_guaranteed_rate():
    from ratecheck.claims import RateClaim

    def claim(exact, guaranteed):
        return RateClaim(id="t.rate", paper="t", title="t", statement="s", source=SRC, vary="T",
                         grid={"quick": (200,)}, configure=_config, measure="m", min_replicas=4,
                         exact=lambda config, rounds: np.log(exact), guaranteed=lambda p: np.log(guaranteed))

    traces = _rate_traces(0.95)
    out = claim(0.95, 0.99).decide(PROFILE, traces)
    assert out.verdict == Verdict.PASS and "(deterministic)" in out.reason
    assert out.evidence["rows"][0]["tightness"] == pytest.approx(np.log(0.95) / np.log(0.99))
    assert claim(0.9, 0.99).decide(PROFILE, traces).verdict == Verdict.FAIL  # not the exact rate
    slower = claim(0.95, 0.9).decide(PROFILE, traces)  # the theorem promises more than the run does
    assert slower.verdict == Verdict.FAIL and "slower than" in slower.reason


def test_registered_claims_follow_the_fit_design_rule():
    """Every registered slope claim has five grid points over a decade in its varied value, or says why
    (claims that map the grid through an abscissa: the decision itself checks those)."""
    from ratecheck.claims import HittingTimeClaim

    for claim in proofs.all_claims():
        mapped = isinstance(claim, HittingTimeClaim) or getattr(claim, "abscissa", None) is not None
        if isinstance(claim, SlopeClaim) and not mapped and not claim.design_reason:
            values = claim.grid.get("quick") or claim.grid["full"]  # a full-profile-only twin: its full grid
            assert len(set(values)) >= 5 and max(values) / min(values) >= 10 - 1e-9, claim.id
        assert claim.expect != Verdict.INCONCLUSIVE


def test_monte_carlo_twin_reads_exact_runs_in_quick_and_draws_in_full():
    """The shared twin (issue #8): same runs as its exact claim in quick (no cost), replicas in full,
    and quick=True draws in quick too; an exact run's single row becomes the profile's replicas."""
    from ratecheck.claims import PROFILES, monte_carlo_twin

    exact = _slope().__class__  # any slope claim kind
    base = dataclasses.replace(_slope(), configure=lambda v, p: _config(v, p).with_(mode="exact", replicas=1),
                               grid={"quick": GRID, "full": GRID})
    twin = monte_carlo_twin(base, tolerance=0.3)
    quick, full = PROFILES["quick"], PROFILES["full"]
    assert twin.id == f"{base.id}.monte_carlo" and twin.tolerance == 0.3 and isinstance(twin, exact)
    assert twin.configure(2.0, quick) == base.configure(2.0, quick)
    # issue #23: in the quick profile it would reread the exact runs, so it is not a claim there
    assert not twin.in_profile(quick) and twin.in_profile(full) and monte_carlo_twin(base, quick=True).in_profile(quick)
    drawn = twin.configure(2.0, full)
    assert drawn.mode == "monte_carlo" and drawn.replicas == full.replicas
    assert monte_carlo_twin(base, quick=True).configure(2.0, quick).mode == "monte_carlo"
