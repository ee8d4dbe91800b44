"""Goldens of a capped condition term by term (issue #23 item 3): a condition ``lhs <= min(t_1, ..., t_k)`` compared
only at its minimum cannot see an error in a term that does not bind at the reference point, so every term of the
encoded min is compared with its hand value."""

import pytest


def assert_min_terms(theorem, name: str, values: dict, hand: list[float], rel: float = 1e-12) -> None:
    """The encoded condition ``name``'s rhs is a Min whose arguments, evaluated at ``values``, are ``hand`` (any order)."""
    cond = next(c for c in theorem.conditions if c.name == name)
    subs = {s: values[s.name] for s in cond.free_symbols}
    got = _distinct(float(arg.subs(subs)) for arg in cond.rhs.args)
    want = _distinct(hand)  # sympy keeps one copy of equal arguments (c_omega = c_u in Theorem 6)
    assert len(got) == len(want), (theorem.id, name, got, want)
    assert got == pytest.approx(want, rel=rel), (theorem.id, name)


def _distinct(values) -> list[float]:
    out: list[float] = []
    for x in sorted(values):
        if not out or x != pytest.approx(out[-1], rel=1e-12):
            out.append(x)
    return out
