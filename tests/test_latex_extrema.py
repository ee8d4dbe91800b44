"""Issue #22 item 4: step-size caps written with \\min / \\max, set braces and sized delimiters, and the
conditions a min implies; clear errors naming what does not parse."""

from __future__ import annotations

import pytest
import sympy as sp

from ratecheck.model.extrema import alternatives
from ratecheck.model.latex import LatexError, parse
from ratecheck.theory import Bound, Condition, Source, Theorem

SRC = Source("test.txt", "Theorem 1, eq. (7)")
eta, L, K, mu, T = sp.symbols("eta L K mu T", positive=True)
SYMBOLS = (eta, L, K, mu, T)


@pytest.mark.parametrize("text", [
    r"\eta \le \min\{\frac{1}{4L}, \frac{1}{K\mu}\}",
    r"\eta \leq \min\left\{\frac{1}{4L}, \frac{1}{K\mu}\right\}",
    r"\eta \le \min\Big\{\frac{1}{4L}, \frac{1}{K\mu}\Big\}",
    r"\eta \le \min\lbrace\frac{1}{4L}, \frac{1}{K\mu}\rbrace",
    r"\eta \le \min\left(\frac{1}{4 \cdot L}, \frac{1}{K\mu}\right)",
])
def test_a_min_of_caps_parses_in_every_usual_spelling(text):
    assert parse(text, SYMBOLS) == sp.Le(eta, sp.Min(1 / (4 * L), 1 / (K * mu)))


def test_roots_sized_parentheses_and_max():
    assert parse(r"\frac{1}{\sqrt[3]{K}} + \bigl(\frac{1}{L}\bigr)^{2}", SYMBOLS) == K ** sp.Rational(-1, 3) + L**-2
    assert parse(r"\max\{1, L\} \ge \eta", SYMBOLS) == sp.Ge(sp.Max(1, L), eta)


def test_a_min_in_a_condition_becomes_the_conditions_it_implies():
    caps = Condition.implied_from_latex("eta cap", r"\eta \le \min\{\frac{1}{4L}, \frac{1}{K\mu}\}", SRC, SYMBOLS)
    assert {c.name for c in caps} == {"eta cap (1)", "eta cap (2)"}
    assert {c.relation for c in caps} == {sp.Le(eta, 1 / (4 * L)), sp.Le(eta, 1 / (K * mu))}
    assert all(c.source == SRC and c.printed.startswith(r"\eta \le \min") and "implied by 'eta cap'" in c.note
               for c in caps)
    theorem = Theorem(id="t", title="t", source=SRC, measure="m", constants=(L, mu), parameters=(eta, K, T),
                      conditions=caps, bounds=(Bound("b", 1 / (eta * T), SRC),))
    result = {c.name: c.holds for c in theorem.evaluate({"eta": 0.1, "L": 1, "mu": 1, "K": 20, "T": 5}).conditions}
    assert sorted(result.values()) == [False, True]  # the 1/(K mu) cap alone is violated, and named


def test_implied_conditions_through_factors_powers_and_the_larger_side():
    strict = Condition.implied_from_latex("c", r"\eta < \frac{1}{L} \min\{1, \frac{1}{K}\}", SRC, SYMBOLS,
                                          names=("eta L", "eta K L"))
    assert [(c.name, c.relation) for c in strict] == [("eta L", sp.Lt(eta, 1 / L)), ("eta K L", sp.Lt(eta, 1 / (K * L)))]
    floor = Condition.implied_from_latex("c", r"\frac{1}{\eta} \ge \max\{4L, K\mu\}", SRC, SYMBOLS)
    assert {c.relation for c in floor} == {sp.Le(4 * L, 1 / eta), sp.Le(K * mu, 1 / eta)}
    inverse = Condition.implied_from_latex("c", r"\eta \le \frac{1}{\max\{4L, K\}}", SRC, SYMBOLS)
    assert {c.rhs for c in inverse} == {1 / (4 * L), 1 / K}
    # a max on the larger side is a disjunction: one condition, kept whole
    (whole,) = Condition.implied_from_latex("c", r"\eta \le \max\{L, K\}", SRC, SYMBOLS)
    assert whole.name == "c" and whole.rhs == sp.Max(L, K)
    with pytest.raises(ValueError, match=r"1 names for the 2 conditions it implies"):
        Condition.implied_from_latex("c", r"\eta \le \min\{L, K\}", SRC, SYMBOLS, names=("one",))


def test_alternatives_refuse_a_factor_of_unknown_sign():
    x = sp.Symbol("x")  # no sign: min(a, b) * x is not min(a x, b x)
    assert alternatives(x * sp.Min(L, K), "min") == [x * sp.Min(L, K)]
    assert set(alternatives(-sp.Max(L, K), "min")) == {-L, -K}
    assert set(alternatives(sp.Min(L, K) + sp.Min(mu, T), "min")) == {L + mu, L + T, K + mu, K + T}


@pytest.mark.parametrize("text, names", [
    (r"\mathcal{O}\left(\frac{1}{T}\right)", r"\\mathcal\{O\}\(\.\.\.\) hides its constants"),
    (r"\tilde{\mathcal{O}}(1/T)", r"\\mathcal\{O\}"),
    (r"\eta \le \frac{1}{\Gamma L}", r"\\Gamma is neither a declared symbol nor a construct"),
    (r"\hat{L} T", r"\\hat\{L\} is not a declared symbol"),
    (r"|L - K|", r"'\|' \(an absolute value or a norm"),
    (r"\min\{L, K", r"never closed"),
])
def test_what_does_not_parse_is_named(text, names):
    with pytest.raises(LatexError, match=names):
        parse(text, SYMBOLS)


def test_tex_drafts_offer_the_implied_conditions_of_a_min():
    from ratecheck.interfaces.tex_drafts import drafts

    tex = (r"\begin{theorem}\label{thm:one} Let \[ \eta \le \min\{\frac{1}{4L}, \frac{1}{K\mu}\}. \]"
           r"Then \[ \mathbb{E} f(x_T) - f^* \le \frac{1}{\eta T}. \]\end{theorem}")
    text = drafts(tex)
    assert '# *Condition.implied_from_latex("condition 1", r"\\eta \\le \\min' in text
    assert '# Bound.from_latex("bound 2", r"\\frac{1}{\\eta T}"' in text
