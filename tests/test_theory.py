"""Tests of the symbolic theorem encoding on DeFedAvg-IID (arXiv:2402.11198, Theorem 2)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ratecheck.theory import Bound, Condition, Evaluation, Source, Theorem, elasticity

PAPER = "003_2fcc6b9d543c5aab.txt (arXiv:2402.11198)"

L, sigma, Delta = sp.symbols("L sigma Delta", positive=True)
n, K, T, lam = sp.symbols("n K T lam", positive=True)
eta, etabar = sp.symbols("eta etabar", positive=True)


def make_theorem(**overrides) -> Theorem:
    src = Source(PAPER, "Theorem 2")
    tail = 8 * L / (K * T)
    kwargs = dict(
        id="defedavg.theorem2",
        title="DeFedAvg-IID, nonconvex, full participation",
        source=src,
        measure="avg:grad_norm_sq",
        constants=(L, sigma, Delta),
        parameters=(n, K, T, lam, eta, etabar),
        conditions=(
            Condition("etabar_small", etabar <= 1 / (4 * sp.sqrt(3) * L * K), src),
            # written with >= to exercise the flip
            Condition("eta_etabar_small", 1 / (4 * L * K * lam) >= eta * etabar, src),
        ),
        bounds=(
            Bound("main_text", sp.sqrt(128 * Delta / (n * K * T)) + tail, src, "drops L and sigma^2"),
            Bound("appendix", sp.sqrt(128 * L * Delta / (n * K * T)) + tail, src, "drops sigma^2"),
            Bound("corrected", sp.sqrt(128 * L * sigma**2 * Delta / (n * K * T)) + tail, src),
            Bound(
                "general",
                4 * Delta / (K * T * eta * etabar)
                + 8 * L * sigma**2 * eta * etabar / n
                + 8 * L**2 * K * sigma**2 * etabar**2,
                Source(PAPER, "Theorem 2, before the step-size choice"),
            ),
        ),
        schedule={eta: sp.sqrt(n * K * Delta / 2), etabar: 1 / (K * sp.sqrt(sigma**2 * L * T))},
        assumptions=("A1 L-smooth", "A2 bounded variance", "A3 IID data"),
    )
    kwargs.update(overrides)
    return Theorem(**kwargs)


@pytest.fixture(scope="module")
def thm() -> Theorem:
    return make_theorem()


BASE = dict(L=1.0, sigma=1.0, Delta=2.0435, n=4, K=5, T=6000, lam=2)


def hand(L, sigma, Delta, n, K, T, lam):
    """The theorem's numbers written out independently with math.sqrt."""
    eta_v = math.sqrt(n * K * Delta / 2)
    etabar_v = 1 / (K * math.sqrt(sigma**2 * L * T))
    c1_rhs = 1 / (4 * math.sqrt(3) * L * K)
    c2_lhs, c2_rhs = eta_v * etabar_v, 1 / (4 * L * K * lam)
    tail = 8 * L / (K * T)
    return {
        "eta": eta_v,
        "etabar": etabar_v,
        "c1": (etabar_v, c1_rhs),
        "c2": (c2_lhs, c2_rhs),
        "main_text": math.sqrt(128 * Delta / (n * K * T)) + tail,
        "appendix": math.sqrt(128 * L * Delta / (n * K * T)) + tail,
        "corrected": math.sqrt(128 * L * sigma**2 * Delta / (n * K * T)) + tail,
        "general": 4 * Delta / (K * T * eta_v * etabar_v)
        + 8 * L * sigma**2 * eta_v * etabar_v / n
        + 8 * L**2 * K * sigma**2 * etabar_v**2,
    }


# -- numbers ----------------------------------------------------------------------------------


def test_evaluate_matches_hand_computation(thm: Theorem) -> None:
    h = hand(**BASE)
    ev = thm.evaluate(BASE)
    assert isinstance(ev, Evaluation)
    assert ev.schedule == pytest.approx({"eta": h["eta"], "etabar": h["etabar"]}, rel=1e-14)
    assert thm.schedule_values(BASE) == pytest.approx(ev.schedule, rel=1e-15)
    c1, c2 = ev.conditions
    assert (c1.name, c2.name) == ("etabar_small", "eta_etabar_small")
    for res, (lhs, rhs) in ((c1, h["c1"]), (c2, h["c2"])):
        assert res.lhs == pytest.approx(lhs, rel=1e-14)
        assert res.rhs == pytest.approx(rhs, rel=1e-14)
        assert res.margin == pytest.approx(lhs / rhs, rel=1e-14)
        assert res.holds and res.margin < 1
        assert PAPER in res.source
    assert ev.all_hold
    for version in ("main_text", "appendix", "corrected", "general"):
        assert ev.bounds[version] == pytest.approx(h[version], rel=1e-13), version
    # sanity of the hand numbers themselves
    assert h["eta"] == pytest.approx(math.sqrt(20.435))
    assert h["etabar"] == pytest.approx(1 / (5 * math.sqrt(6000)))


def test_symbol_keys_and_json(thm: Theorem) -> None:
    ev_sym = thm.evaluate({L: 1, sigma: 1, Delta: 2.0435, n: 4, K: 5, T: 6000, lam: 2})
    assert ev_sym == thm.evaluate(BASE)
    d = json.loads(json.dumps(ev_sym.to_dict(), allow_nan=False))
    assert d["all_hold"] is True
    assert d["schedule"]["eta"] == pytest.approx(math.sqrt(20.435))
    assert set(d["bounds"]) == {"main_text", "appendix", "corrected", "general"}


def test_general_at_schedule_equals_corrected_numerically(thm: Theorem) -> None:
    ev = thm.evaluate(BASE)
    assert ev.bounds["general"] == pytest.approx(ev.bounds["corrected"], rel=1e-12)
    # with L, sigma != 1 the stated versions differ from the corrected one
    ev2 = thm.evaluate({**BASE, "L": 3.0, "sigma": 0.5})
    assert ev2.bounds["general"] == pytest.approx(ev2.bounds["corrected"], rel=1e-12)
    assert ev2.bounds["main_text"] != pytest.approx(ev2.bounds["corrected"], rel=1e-3)


@settings(max_examples=60, deadline=None)
@given(
    Lv=st.floats(0.01, 100), sv=st.floats(0.01, 100), dv=st.floats(0.01, 100),
    nv=st.integers(1, 1000), kv=st.integers(1, 100), tv=st.integers(1, 10**6),
)
def test_general_equals_corrected_property(thm: Theorem, Lv, sv, dv, nv, kv, tv) -> None:
    ev = thm.evaluate(dict(L=Lv, sigma=sv, Delta=dv, n=nv, K=kv, T=tv, lam=1))
    assert ev.bounds["general"] == pytest.approx(ev.bounds["corrected"], rel=1e-12)
    for c in ev.conditions:
        assert c.holds == (c.margin <= 1)


def test_general_at_schedule_equals_corrected_symbolically(thm: Theorem) -> None:
    general = thm.bound_expr("general", use_schedule=True)
    corrected = thm.bound("corrected").expr
    assert sp.simplify(general - corrected) == 0
    # and without the schedule they are different expressions
    assert sp.simplify(thm.bound("general").expr - corrected) != 0


def test_condition_fails_for_small_T(thm: Theorem) -> None:
    vals = {**BASE, "T": 100, "n": 64}
    h = hand(**vals)
    ev = thm.evaluate(vals)
    by = {c.name: c for c in ev.conditions}
    assert by["etabar_small"].holds  # 0.02 <= 0.0289
    bad = by["eta_etabar_small"]
    assert not bad.holds and bad.margin > 1
    assert bad.margin == pytest.approx(h["c2"][0] / h["c2"][1], rel=1e-14)
    assert not ev.all_hold


def test_margin_with_nonpositive_rhs() -> None:
    x, y = sp.symbols("x y", real=True)
    src = Source("p", "w")
    th = Theorem("t", "t", src, "m", (), (x, y), (Condition("c", x <= y, src), Condition("s", x < y, src)),
                 (Bound("b", x + y, src),))
    ev = th.evaluate({"x": -2, "y": -1})
    assert all(c.holds and c.margin == math.inf for c in ev.conditions)
    ev = th.evaluate({"x": 1, "y": 0})
    assert not any(c.holds for c in ev.conditions) and ev.conditions[0].margin == math.inf
    ev = th.evaluate({"x": 1, "y": 1})
    assert ev.conditions[0].holds and not ev.conditions[1].holds  # <= vs <
    assert json.dumps(ev.to_dict(), allow_nan=False)


def test_use_schedule_false_requires_and_uses_explicit_values(thm: Theorem) -> None:
    with pytest.raises(ValueError, match="use_schedule=False"):
        thm.evaluate({**BASE, "eta": 1.0})
    with pytest.raises(ValueError, match=r"eta, etabar"):
        thm.evaluate(BASE, use_schedule=False)
    h = hand(**BASE)
    ev = thm.evaluate({**BASE, "eta": h["eta"], "etabar": h["etabar"]}, use_schedule=False)
    assert ev.schedule == {}
    assert ev.bounds["general"] == pytest.approx(h["general"], rel=1e-13)


# -- errors -----------------------------------------------------------------------------------


def test_missing_symbols_named(thm: Theorem) -> None:
    vals = {k: v for k, v in BASE.items() if k not in ("Delta", "lam")}
    with pytest.raises(ValueError, match="Delta") as exc:
        thm.evaluate(vals)
    # Delta is missing already for the schedule; lam is reported once the schedule can run
    with pytest.raises(ValueError, match="lam"):
        thm.evaluate({**vals, "Delta": 1.0})
    assert "Delta" in str(exc.value)


def test_unknown_version_named(thm: Theorem) -> None:
    with pytest.raises(ValueError, match="stated") as exc:
        thm.bound("stated")
    assert "main_text" in str(exc.value) and "corrected" in str(exc.value)
    with pytest.raises(ValueError, match="nope"):
        thm.order(T, version="nope")


def test_stray_symbol_rejected() -> None:
    mu = sp.Symbol("mu", positive=True)
    src = Source(PAPER, "x")
    with pytest.raises(ValueError, match=r"'mu' in bound 'bad'"):
        make_theorem(bounds=(Bound("bad", mu / T, src),))
    with pytest.raises(ValueError, match=r"'mu' in condition 'c'"):
        make_theorem(conditions=(Condition("c", eta <= mu, src),))
    with pytest.raises(ValueError, match=r"'mu' in schedule of 'eta'"):
        make_theorem(schedule={eta: mu})
    with pytest.raises(ValueError, match="not a parameter"):
        make_theorem(schedule={L: sp.Integer(1)})
    # same name, other assumptions: a different sympy symbol, which would silently not substitute
    with pytest.raises(ValueError, match="assumptions"):
        make_theorem(bounds=(Bound("b", sp.Symbol("T") ** -1, src),))
    with pytest.raises(ValueError, match="relation"):
        Condition("trivial", sp.Le(1, 2), src)


# -- asymptotics ------------------------------------------------------------------------------


def test_orders_of_corrected(thm: Theorem) -> None:
    half = sp.Rational(-1, 2)
    assert thm.order(n, version="corrected", dominant_in=T) == half
    assert thm.order("T", version="corrected") == half
    assert thm.order(K, version="corrected") == half
    # without dominant_in, the 8L/(KT) term wins as n -> oo: the n-dependence disappears
    assert thm.order(n, version="corrected") == 0
    assert thm.order(T, version="corrected", at="0") == -1
    assert thm.order(L, version="corrected", dominant_in=T) == sp.Rational(1, 2)
    assert thm.order(sigma, version="corrected", dominant_in=T) == 1
    assert thm.order(sigma, version="main_text", dominant_in=T) == 0


def test_orders_of_general_with_schedule(thm: Theorem) -> None:
    assert thm.order(n, version="general", dominant_in=T) == sp.Rational(-1, 2)
    assert thm.order(T, version="general") == sp.Rational(-1, 2)
    with pytest.raises(ValueError, match="schedule"):
        thm.order(eta, version="general")
    # without the schedule, the step sizes are free: the first term is 1/eta
    assert thm.order(eta, version="general", use_schedule=False, dominant_in=T) == 1
    assert thm.order(T, version="general", use_schedule=False) == 0


def test_leading_term(thm: Theorem) -> None:
    lead = thm.leading_term("corrected", T)
    assert sp.simplify(lead - sp.sqrt(128 * L * sigma**2 * Delta / (n * K * T))) == 0
    assert sp.simplify(thm.leading_term("corrected", n) - 8 * L / (K * T)) == 0
    # the two sqrt-like terms of "general" tie in T and are combined
    lead_g = thm.leading_term("general", T)
    assert sp.simplify(lead_g - sp.sqrt(128 * L * sigma**2 * Delta / (n * K * T))) == 0


def test_elasticity_helper() -> None:
    x, a = sp.symbols("x a", positive=True)
    assert elasticity(a * x**3 + x, x) == 3
    assert elasticity(a * x**3 + x, x, at="0") == 1
    assert elasticity(a * x**3 + x, "x") == 3
    assert elasticity(a / x, "y") == 0
    assert elasticity(sp.log(x), x) == 0
    with pytest.raises(ValueError, match="at"):
        elasticity(x, x, at="1")


def test_source_str_and_hash(thm: Theorem) -> None:
    assert str(Source("p.txt", "Thm 1")) == "p.txt, Thm 1"
    assert str(Source("p.txt", "Thm 1", "typo")) == "p.txt, Thm 1 (typo)"
    assert hash(thm) == hash(make_theorem())
    assert thm == make_theorem()


@pytest.fixture
def derivations(tmp_path, monkeypatch):
    """A fresh process's derivations, stored in a run cache under tmp_path."""
    import ratecheck.asymptotics as asymptotics
    import ratecheck.derivations as derivations

    monkeypatch.setenv("RATECHECK_SYMPY_CACHE", str(tmp_path / "cache"))

    def new_process() -> None:
        monkeypatch.setattr(derivations, "DERIVATIONS", derivations.DerivationStore())
        monkeypatch.setattr(asymptotics, "DERIVATIONS", derivations.DERIVATIONS)
        monkeypatch.setattr(asymptotics, "_ORDERS", {})

    new_process()
    return new_process


def test_orders_are_store_records_as_exact_rationals(tmp_path, monkeypatch, derivations):
    import sympy as sp

    import ratecheck.asymptotics as asymptotics
    from ratecheck.model.store import Store
    from ratecheck.theory import elasticity

    T = sp.Symbol("T", positive=True)
    expr = 1 / sp.sqrt(T) + sp.log(T) / T
    assert elasticity(expr, T) == sp.Rational(-1, 2)
    store = Store(tmp_path / "cache")
    (key,) = store.keys()
    arrays, meta = store.get(key)
    assert meta["result"] == "-1/2" and meta["derivation"] == {"what": "elasticity", "sympy": sp.__version__}
    derivations()  # a fresh process reads it back without deriving
    real = asymptotics._derive_elasticity
    monkeypatch.setattr(asymptotics, "_derive_elasticity", lambda *a: (_ for _ in ()).throw(AssertionError("derived")))
    assert elasticity(expr, T) == sp.Rational(-1, 2)
    # an entry that does not verify is set aside and derived again, not trusted
    path = store.path(key)
    path.write_bytes(path.read_bytes()[:-40])
    derivations()
    monkeypatch.setattr(asymptotics, "_derive_elasticity", real)
    assert elasticity(expr, T) == sp.Rational(-1, 2)
    assert Path(str(path) + ".corrupt").exists() and store.get(key)[1]["result"] == "-1/2"


def test_cached_derivation_keeps_results_in_the_store_and_rebuilds_them_without_eval(derivations):
    import sympy as sp

    import ratecheck.derivations as derivations_module

    calls = []
    T, eps = sp.symbols("T epsilon", positive=True)

    def rounds(rate):
        calls.append(rate)
        return tuple(sp.solve(sp.Eq(rate, eps**2), T))

    cached = derivations_module.cached_derivation(rounds)
    first = cached(1 / sp.sqrt(T))
    derivations()  # a new process
    again = derivations_module.cached_derivation(rounds)
    assert again(1 / sp.sqrt(T)) == first == (eps**-4,) and len(calls) == 1
    with pytest.raises(ValueError, match="not a plain sympy expression"):
        derivations_module._rebuild("__import__('os').system('true')")


def test_derivations_are_counted_by_cache_info_and_removed_by_cache_clear(tmp_path, monkeypatch, capsys, derivations):
    import json

    import sympy as sp

    from ratecheck.interfaces.cli import main
    from ratecheck.theory import elasticity

    T = sp.Symbol("T", positive=True)
    elasticity(T**-2 + 1 / T, T)
    cache = str(tmp_path / "cache")
    assert main(["cache", "info", "--json", "--cache-dir", cache]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["entries"] == info["derivations"] == 1 and info["stale_code_entries"] == 0
    assert main(["cache", "clear", "--cache-dir", cache]) == 0
    assert "1 entries removed" in capsys.readouterr().out
    assert main(["cache", "info", "--json", "--cache-dir", cache]) == 0
    assert json.loads(capsys.readouterr().out)["derivations"] == 0


# --- split-proofs (issue #9 item 7, issue #7 startup): helpers the paper packages share ---------------


def test_derived_number_is_computed_once_and_only_when_used():
    from ratecheck.theory import Derived

    calls = []
    d = Derived(lambda: calls.append(1) or sp.Rational(-1, 2))
    assert calls == []  # declaring it derives nothing (what `ratecheck list` relies on)
    assert float(d) == -0.5 and float(d) == -0.5
    assert calls == [1]


def test_at_most_and_at_least_are_the_relations_sympy_would_build():
    from ratecheck.theory import at_least, at_most

    cap = 1 / (4 * sp.sqrt(3) * L * K)
    assert sp.srepr(at_most(eta, cap)) == sp.srepr(eta <= cap)
    assert sp.srepr(at_least(eta, cap)) == sp.srepr(eta >= cap)
    c = Condition("eta cap", at_most(eta, cap), Source(PAPER, "Theorem 2"))
    assert (c.lhs, c.rhs, c.strict) == (eta, cap, False)
    with pytest.raises(ValueError, match="no symbol"):
        Condition("typo", at_most(sp.Integer(1), sp.Integer(2)), Source(PAPER, "Theorem 2"))


def test_derive_complexity_reads_rounds_and_samples_off_a_rate():
    from ratecheck.theory import derive_complexity, exponent

    eps, N, mu_, l_, kap = sp.symbols("epsilon N mu l kappa", positive=True)
    # a term in T alone fixes T, a term in K T alone fixes the samples K T (bound on a squared measure)
    rate = l_ / (mu_ * T) + sigma**2 / (n * K * T)
    samples, rounds = derive_complexity(rate, eps=eps, rounds=T, local_steps=K, samples=N,
                                        before={l_: 1}, after={mu_: 1 / kap})
    assert sp.simplify(rounds - kap / eps**2) == 0
    assert sp.simplify(samples - sigma**2 / (n * eps**2)) == 0
    assert exponent(rounds, eps, inverse=True) == 2.0 and exponent(rounds, kap) == 1.0
    same, _ = derive_complexity(rate, eps=eps, rounds=T, local_steps=K, samples=N, k_is_constant=True,
                                before={l_: 1}, after={mu_: 1 / kap})
    assert sp.simplify(same - (kap + sigma**2 / n) / eps**2) == 0  # K = O(1): samples = rounds
    with pytest.raises(ValueError, match="mixes K and T"):
        derive_complexity(1 / T + K / T**2, eps=eps, rounds=T, local_steps=K, samples=N)


def test_cap_is_a_conditions_right_side_at_values():
    """Theorem.cap: the step-size cap a search draws under, read off the condition (not typed again)."""
    L, K, eta = sp.symbols("L K eta", positive=True)
    th = Theorem(id="t", title="t", source=Source("test", "x"), measure="m", constants=(L,), parameters=(K, eta),
                 conditions=(Condition("eta <= 1/(4 L K)", eta <= 1 / (4 * L * K), Source("test", "x")),),
                 bounds=(Bound("b", eta, Source("test", "x")),))
    assert th.cap("eta <= 1/(4 L K)", {"L": 2.0, "K": 5, "eta": 99.0}) == pytest.approx(1 / 40)
    with pytest.raises(ValueError, match="needed by the right side"):
        th.cap("eta <= 1/(4 L K)", {"L": 2.0})
