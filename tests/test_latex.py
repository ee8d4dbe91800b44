"""Theorems from LaTeX: Bound.from_latex / Condition.from_latex through sympy's lark parser.

sympy's lark parser takes 0.2-4 s per expression, so the default run round-trips a sample that
covers every construct the package's theorems use (fractions, roots, powers, subscripts, bars,
capital and missing Greek letters, Max, Piecewise); ``--full`` round-trips every bound and
condition of every registered theorem.
"""

from __future__ import annotations

import pytest
import sympy as sp

from ratecheck import registry
from ratecheck.model import latex
from ratecheck.model.latex import LatexError
from ratecheck.theory import Bound, Condition, Source, Theorem

SRC = Source("test.txt", "Theorem 1")
L, sigma, Delta, n, K, T, lam, eta, etabar = sp.symbols("L sigma Delta n K T lam eta etabar", positive=True)
SYMBOLS = (L, sigma, Delta, n, K, T, lam, eta, etabar)


def same(a: sp.Basic, b: sp.Basic) -> bool:
    return a == b or sp.simplify(a - b) == 0


def test_a_bound_and_a_condition_pasted_from_the_paper():
    bound = Bound.from_latex("corrected", r"\sqrt{\frac{128 L \sigma^2 \Delta}{n K T}} + \frac{8L}{KT}", SRC, SYMBOLS)
    assert same(bound.expr, sp.sqrt(128 * L * sigma**2 * Delta / (n * K * T)) + 8 * L / (K * T))
    assert bound.expr.free_symbols <= set(SYMBOLS)  # the declared symbols, assumptions included
    cap = Condition.from_latex("etabar cap", r"\bar{\eta} \le \frac{1}{4\sqrt{3} L K}", SRC, SYMBOLS)
    assert cap.relation == (etabar <= 1 / (4 * sp.sqrt(3) * L * K))
    both = Condition.from_latex("eta etabar cap", r"\eta \bar\eta \leq \frac{1}{4 L K \, lam}", SRC, SYMBOLS)
    assert same(both.lhs, eta * etabar) and same(both.rhs, 1 / (4 * L * K * lam))
    theorem = Theorem(id="t", title="t", source=SRC, measure="m", constants=(L, sigma, Delta),
                      parameters=(n, K, T, lam, eta, etabar), conditions=(cap, both), bounds=(bound,))
    assert theorem.order("n", version="corrected", dominant_in="T") == sp.Rational(-1, 2)


def test_subscripts_cases_and_max():
    eta_x, eta_xl, mu_g, l_, p = sp.symbols("eta_x eta_xl mu_g l p", positive=True)
    symbols = {s.name: s for s in (eta_x, eta_xl, mu_g, l_, p, K)}
    expr = sp.Max(128 / (K * eta_x), 32 * p / mu_g**2)
    assert same(Bound.from_latex("b", r"\max\left(\frac{128}{K \eta_x}, \frac{32 p}{\mu_{g}^{2}}\right)", SRC,
                                 symbols).expr, expr)
    cap = Condition.from_latex("drift", sp.latex(eta_xl <= sp.Piecewise((sp.oo, sp.Eq(K, 1)),
                                                                         (1 / (2 * l_ * sp.sqrt(K - 1)), True))),
                               SRC, symbols)
    assert cap.rhs.subs(K, 1) == sp.oo and same(cap.rhs.subs(K, 5), 1 / (4 * l_))


@pytest.mark.parametrize("text, message", [
    (r"\frac{1}{K", "never closed"),
    (r"\sqrt{\frac{\Delta}{n K T}} + \kappa", "symbol 'kappa' in"),
    (r"\frac{1}{K} \% 3", "cannot parse"),
    (r"\frac{1}{K} \mid 3", r"\mid is neither a declared symbol nor a construct"),
    ("   ", "expected a LaTeX string"),
])
def test_text_sympy_cannot_read_is_a_clear_error(text, message):
    with pytest.raises(LatexError, match="bound 'b'") as info:
        Bound.from_latex("b", text, SRC, SYMBOLS)
    assert message in str(info.value)


def test_a_condition_must_be_an_inequality_and_a_bound_an_expression():
    with pytest.raises(LatexError, match=r"condition 'c': expected an inequality"):
        Condition.from_latex("c", r"\eta = 1", SRC, SYMBOLS)
    with pytest.raises(LatexError, match=r"bound 'b': expected an expression"):
        Bound.from_latex("b", r"\eta \le 1", SRC, SYMBOLS)


def _registered() -> list[tuple[str, str, Theorem, sp.Basic]]:
    out = []
    for theorem in registry.default().theorems():
        out += [(theorem.id, f"bound {b.version}", theorem, b.expr) for b in theorem.bounds]
        out += [(theorem.id, f"condition {c.name}", theorem, c.relation) for c in theorem.conditions]
    return out


def _round_trip(theorem: Theorem, item: sp.Basic) -> None:
    text = sp.latex(item)
    symbols = tuple(theorem.symbols.values())
    if isinstance(item, sp.core.relational.Relational):
        back = Condition.from_latex("c", text, SRC, symbols).relation
        assert back.rel_op == item.rel_op and same(back.lhs, item.lhs) and same(back.rhs, item.rhs), text
    else:
        back = Bound.from_latex("b", text, SRC, symbols).expr
        assert same(back, item), text


SAMPLE = {  # one of each construct; --full does them all
    ("defedavg.theorem2", "bound corrected"), ("defedavg.theorem2", "condition etabar <= 1/(4 sqrt(3) L K)"),
    ("fessgda.theorem3_1", "condition eta_xl <= drift cap"),  # Piecewise, subscripts
    ("simfbo.theorem2", "condition eta_x^2 tau_bar cap"),  # multi-letter subscripts, powers
}


def test_registered_sample_round_trips():
    items = [(tid, what, th, item) for tid, what, th, item in _registered() if (tid, what) in SAMPLE]
    assert len(items) == len(SAMPLE)
    for _, _, theorem, item in items:
        _round_trip(theorem, item)


@pytest.mark.full
def test_every_registered_bound_and_condition_round_trips(monkeypatch):
    """sympy latex() -> Bound/Condition.from_latex -> the same expression (difference simplifies to 0).
    The parser is under test, not the length limit: sympy prints many registered bounds longer than
    a paste is allowed to be (up to 3,500 characters read), so the limit is lifted here."""
    monkeypatch.setattr(latex, "MAX_PARSED", 10**6)
    monkeypatch.setattr(latex, "MAX_CHARS", 10**6)
    failures = []
    for theorem_id, what, theorem, item in _registered():
        try:
            _round_trip(theorem, item)
        except (AssertionError, LatexError) as exc:
            failures.append(f"{theorem_id} {what}: {exc}")
    assert not failures, "\n".join(failures)


def test_length_limit_follows_the_parse_cost():
    """The limit is what sympy's parser reads (products explicit) in about a second: the largest
    accepted flat sum parses, one term more is refused naming the length, the rule and its cost."""
    terms = (latex.MAX_PARSED + 3) // 4  # "L + L + ... + L": 4 characters a term, less the last " + "
    while len(" + ".join(["L"] * terms)) > latex.MAX_PARSED:
        terms -= 1
    assert Bound.from_latex("b", " + ".join(["L"] * terms), SRC, SYMBOLS).expr == terms * L
    too_long = " + ".join(["L"] * (terms + 1))
    with pytest.raises(LatexError, match=rf"{len(too_long)} characters long once its products are made explicit.*"
                                         rf"the rule: at most {latex.MAX_PARSED}"):
        Bound.from_latex("b", too_long, SRC, SYMBOLS)
    with pytest.raises(LatexError, match=rf"bound 'b': the LaTeX is {latex.MAX_CHARS + 1} characters long; the rule"):
        Bound.from_latex("b", "L" * (latex.MAX_CHARS + 1), SRC, SYMBOLS)
    cases = r"\begin{cases} " + " + ".join(["L"] * (terms // 2)) + r" & K > 1 \\ " + " + ".join(["L"] * (terms // 2)) \
        + r" & \text{otherwise} \end{cases} + K"
    with pytest.raises(LatexError, match="once its products are made explicit"):  # the rows share the budget
        Bound.from_latex("b", cases, SRC, SYMBOLS)


def test_a_function_times_a_factor_and_eulers_number_read_as_sympy_prints_them():
    """sympy prints ``log(K)*L`` as ``L \\log{\\left(K \\right)}`` and E as ``e``: the grammar alone reads
    a function followed by a factor in two ways (a bare parse tree came back), and e as a symbol."""
    expr = Bound.from_latex("b", r"\log{\left(K \right)} L + e^{- L} \log{\left(K \right)}^{2} T", SRC, SYMBOLS).expr
    assert sp.simplify(expr - (sp.log(K) * L + sp.exp(-L) * sp.log(K) ** 2 * T)) == 0
