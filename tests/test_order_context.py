"""Issue #22 item 5: an order derived with symbols fixed (H = 1) or in a regime (the term that dominates
as T -> oo), with its derivation printed; "linear speedup" without an extra bound version."""

from __future__ import annotations

import pytest
import sympy as sp

from ratecheck.claims.base import ExpectedOrder
from ratecheck.theory import Bound, Source, Theorem

SRC = Source("local_sgd.tex", "Theorem 1, eq. (3)")
D, L, sigma = sp.symbols("D L sigma", positive=True)
M, H, T, eta = sp.symbols("M H T eta", positive=True)
# local SGD on M clients, H local steps, T rounds: optimization, noise (1/M) and client-drift (H - 1) terms
LOCAL_SGD = Theorem(
    id="local_sgd", title="local SGD", source=SRC, measure="gap", constants=(D, L, sigma), parameters=(M, H, T, eta),
    conditions=(), bounds=(Bound("stated", D / (eta * H * T) + eta * sigma**2 / M + eta**2 * L * sigma**2 * (H - 1),
                                 SRC),),
    schedule={eta: sp.sqrt(M / (H * T))})


def test_linear_speedup_is_derived_with_one_local_step_or_as_t_grows():
    # as M -> oo at the prescribed step size the drift term (H - 1) M / (H T) wins: no speedup in that limit
    assert LOCAL_SGD.order("M", version="stated") == 1
    assert LOCAL_SGD.order("M", version="stated", fixed={"H": 1}) == sp.Rational(-1, 2)
    assert LOCAL_SGD.order("M", version="stated", dominant_in="T") == sp.Rational(-1, 2)
    assert LOCAL_SGD.order("T", version="stated", fixed={H: 1}) == sp.Rational(-1, 2)


def test_the_derivation_is_printed_step_by_step():
    steps = str(LOCAL_SGD.order_derivation("M", version="stated", fixed={"H": 1})).splitlines()
    assert steps[0].startswith("local_sgd bound 'stated' (schedule applied): ")
    assert steps[1].startswith("with H = 1: ") and "H" not in steps[1].removeprefix("with H = 1: ")
    assert steps[-1] == "order in M (M d log/dM as M -> oo, the other symbols fixed): -1/2"
    gone = LOCAL_SGD.order_derivation("H", version="stated", use_schedule=False, fixed={"T": "M"})
    assert "with T = M" in str(gone)


def test_fixing_the_variable_itself_or_an_unknown_symbol_is_refused():
    with pytest.raises(ValueError, match="M is the variable of the order"):
        LOCAL_SGD.order("M", version="stated", fixed={"M": 4})
    with pytest.raises(ValueError, match="Q"):
        LOCAL_SGD.order("M", version="stated", fixed={"Q": 1})


def test_an_expected_order_carries_its_context():
    expected = ExpectedOrder(theorem=LOCAL_SGD, var="M", version="stated", fixed={"H": 1})
    assert expected.exponent() == -0.5
    assert "H = 1" in expected.describe()
    assert hash(expected) == hash(ExpectedOrder(theorem=LOCAL_SGD, var="M", version="stated", fixed={"H": 1}))


def test_describe_prints_an_expected_orders_derivation():
    from ratecheck.interfaces.describe import _derivation, render

    steps = _derivation(ExpectedOrder(theorem=LOCAL_SGD, var="M", version="stated", fixed={"H": 1}))
    assert steps[1].startswith("with H = 1: ") and steps[-1].endswith(": -1/2")
    assert _derivation(ExpectedOrder(value=-1.0, why="the paper's remark")) == []
    text = render({"kind": "claim", "name": "c", "derivation": steps})
    assert "expected exponent, derived:\n  local_sgd bound 'stated'" in text
