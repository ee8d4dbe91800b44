"""The report's formula notation: LaTeX that reads like the paper and means what the encoding means."""

from __future__ import annotations

import sympy as sp

from proofs.defedavg.theorems import THEOREM_1, THEOREM_2
from ratecheck.latex import expression
from ratecheck.report.document import formula, latex


def _symbols(expr: sp.Basic) -> dict[str, sp.Symbol]:
    return {s.name: s for s in expr.free_symbols}


def _agrees(expr: sp.Expr, text: str) -> bool:
    """``text`` read back by ratecheck.latex equals ``expr`` at a point where every symbol differs."""
    back = expression(text, _symbols(expr), "printed formula")
    point = {s: sp.Rational(17 + 3 * i, 13) for i, s in enumerate(sorted(expr.free_symbols, key=str))}
    value, read = sp.N(expr.subs(point), 30), sp.N(back.subs(point), 30)
    return abs(value - read) <= sp.Float(1e-20) * abs(value)


def test_defedavg_theorem2_corrected_bound_is_one_root_as_in_the_paper():
    corrected = next(b for b in THEOREM_2.bounds if b.version == "corrected")
    text = latex(corrected.expr)
    assert text == r"\sqrt{\frac{128 \Delta L \sigma^{2}}{K T n}} + \frac{8 L}{K T}"
    assert _agrees(corrected.expr, text)
    assert formula(corrected.expr).math.count("<msqrt>") == 1  # one root in the MathML too


def test_every_defedavg_bound_and_schedule_prints_its_own_value():
    for theorem in (THEOREM_1, THEOREM_2):
        for expr in [b.expr for b in theorem.bounds] + list(theorem.schedule.values()):
            assert _agrees(expr, latex(expr)), latex(expr)


def test_roots_gather_only_what_may_go_under_one_root():
    x, y = sp.symbols("x y", positive=True)
    z = sp.Symbol("z")  # sign unknown: stays outside the root
    assert latex(-8 * sp.sqrt(2 * x / y)) == r"- \sqrt{\frac{128 x}{y}}"
    assert latex(sp.sqrt(x) * sp.sqrt(y) * z) == r"z \sqrt{x y}"
    assert latex(1 / (x * sp.sqrt(2 * y))) == r"\frac{1}{x \sqrt{2 y}}"
    assert latex(sp.sqrt(3) / (12 * x)) == r"\frac{\sqrt{3}}{12 x}"  # one root: sympy's own form
    for expr in (-8 * sp.sqrt(2 * x / y), sp.sqrt(x) * sp.sqrt(y) * z, 1 / (x * sp.sqrt(2 * y)), 3 * x * sp.sqrt(2 / y)):
        assert _agrees(expr, latex(expr))
