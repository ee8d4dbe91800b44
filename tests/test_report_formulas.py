"""The report's formula notation: LaTeX that reads like the paper and means what the encoding means."""

from __future__ import annotations

import sympy as sp

from ratecheck.model.latex import expression
from ratecheck.proofs.defedavg.theorems import THEOREM_1, THEOREM_2
from ratecheck.report.document import formula, latex


def _symbols(expr: sp.Basic) -> dict[str, sp.Symbol]:
    return {s.name: s for s in expr.free_symbols}


def _agrees(expr: sp.Expr, text: str) -> bool:
    """``text`` read back by ratecheck.model.latex equals ``expr`` at a point where every symbol differs."""
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


def _registered_bounds():
    """Every bound of the registered papers' theorems and of their hunts' theorems."""
    from ratecheck.registry import papers

    seen = {}
    for paper in papers().values():
        theorems = list(paper.theorems) + [c.space.theorem for c in paper.claims if getattr(c, "space", None)]
        for theorem in theorems:
            for bound in theorem.bounds:
                seen[(theorem.id, bound.version)] = (theorem, bound)
    return seen


def test_each_printed_form_means_the_encoded_bound():
    """The paper's printed LaTeX, read with the theorem's symbols, equals the encoded bound at a point:
    the text shown as 'paper prints' cannot drift from what is checked."""
    printed = {key: pair for key, pair in _registered_bounds().items() if pair[1].printed}
    assert {("defedavg.theorem2", "main_text"), ("defedavg.theorem2", "appendix")} <= set(printed)
    for (theorem_id, version), (theorem, bound) in printed.items():
        symbols = {s.name: s for s in (*theorem.constants, *theorem.parameters, *bound.expr.free_symbols)}
        back = expression(bound.printed, symbols, f"{theorem_id} bound {version!r}")
        point = {s: sp.Rational(17 + 3 * i, 13) for i, s in enumerate(sorted(symbols.values(), key=str))}
        value, read = sp.N(bound.expr.subs(point), 30), sp.N(back.subs(point), 30)
        assert abs(value - read) <= sp.Float(1e-20) * abs(value), (theorem_id, version, value, read)


def test_from_latex_keeps_the_printed_text_and_old_constructors_work():
    from ratecheck.theory import Bound, Condition, Source

    x, y = sp.symbols("x y", positive=True)
    text = r"\sqrt{\frac{2x}{y}}"
    assert Bound.from_latex("v", text, Source("paper", "eq. (1)"), (x, y)).printed == text
    assert Condition.from_latex("c", r"x \le y", Source("paper", "eq. (1)"), (x, y)).printed == r"x \le y"
    assert Bound("v", x / y, Source("paper", "eq. (1)"), "note").printed == ""


def test_erratum_shows_the_printed_bound_beside_the_encoded_one():
    from ratecheck.registry import papers
    from ratecheck.report.pages import _printed_and_encoded

    claims = {c.id: c for c in papers()["defedavg"].claims}
    for cid in ("defedavg.T2.bound_main_text", "defedavg.hunt.T2_main_text"):
        parts = _printed_and_encoded(claims[cid])
        texts = [getattr(p, "text", p) for p in parts]
        assert r"\sqrt{\frac{128\Delta}{nKT}}+\frac{8L}{KT}" in texts
        assert r"\sqrt{\frac{128 \Delta}{K T n}} + \frac{8 L}{K T}" in texts
        assert all(p.math for p in parts if getattr(p, "code", False))  # both as MathML in HTML
    unprinted = [c for c in claims.values() if c.kind == "bound" and c.version == "corrected"]
    assert unprinted and all(_printed_and_encoded(c) == [] for c in unprinted)  # nothing copied: nothing shown
