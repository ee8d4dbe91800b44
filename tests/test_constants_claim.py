"""ConstantsClaim (issue #23 item 2): its rule on synthetic values, and the papers' independent computations against
values worked out by hand on tiny instances written out here."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from ratecheck.claims import ConstantsClaim, Independent, PointResult, Verdict
from ratecheck.claims.constants import ROUND_OFF, ConstantsAgree, hessian_from_gradients, relative_difference
from ratecheck.inspection import problem_of
from ratecheck.registry import make_problem
from ratecheck.statements import Source
from ratecheck.trace import RunConfig


def _claim(tolerance: float = ROUND_OFF) -> ConstantsClaim:
    return ConstantsClaim(id="t.constants", paper="t", title="t", statement="t", source=Source("t", "Assumption 1"),
                          grid={"quick": (0,)}, configure=lambda v, p: RunConfig("a", {}, "quadratic", {}, 1), problem_of=problem_of,
                          computations={"L": Independent(lambda p: 1.0, "lambda_max", tolerance),
                                        "mu": Independent(lambda p: 1.0, "lambda_min", tolerance)})


def _points(declared: dict[str, float], independent: dict[str, float]) -> list[PointResult]:
    config = RunConfig("a", {}, "quadratic", {}, 1)
    out = []
    for i, name in enumerate(declared):
        rel = relative_difference(declared[name], independent[name])
        out.append(PointResult(float(i), config, np.array([rel]), 0,
                               stats={"instance": 0, "constant": name, "declared": declared[name],
                                      "independent": independent[name], "relative": rel}))
    return out


def test_rule_passes_at_round_off_and_records_its_power() -> None:
    claim = _claim()
    points = _points({"L": 2.0 * (1 + 1e-12), "mu": 0.5}, {"L": 2.0, "mu": 0.5})
    verdict, reason, evidence = ConstantsAgree()(claim, points, points)
    assert verdict == Verdict.PASS, reason
    assert "2 constants" in reason and "tolerance 1e-07" in reason
    power = evidence["power"]
    assert power["mode"] == "scale" and math.isclose(power["detectable"], ROUND_OFF, rel_tol=1e-3)


def test_rule_fails_on_a_one_percent_error_naming_the_constant() -> None:
    claim = _claim()
    points = _points({"L": 2.0, "mu": 0.505}, {"L": 2.0, "mu": 0.5})
    verdict, reason, evidence = ConstantsAgree()(claim, points, points)
    assert verdict == Verdict.FAIL
    assert "mu declared 0.505, independent 0.5" in reason and "> tolerance 1e-07" in reason
    assert "rule: lambda_min" in reason
    assert evidence["power"]["to_fail"] == 0.0


def test_rule_tolerance_is_per_constant() -> None:
    claim = _claim(tolerance=0.02)  # a sampled constant's tolerance: a 1% error is inside it
    points = _points({"L": 2.0, "mu": 0.505}, {"L": 2.0, "mu": 0.5})
    assert ConstantsAgree()(claim, points, points)[0] == Verdict.PASS


def test_relative_difference_edges() -> None:
    assert relative_difference(0.0, 0.0) == 0.0
    assert relative_difference(1e-30, 0.0) == math.inf
    assert relative_difference(1.01, 1.0) == pytest.approx(0.01)


def test_a_claim_without_constants_or_with_a_bare_callable_is_refused() -> None:
    with pytest.raises(ValueError, match="no constant"):
        ConstantsClaim(id="t", paper="t", title="t", statement="t", source=Source("t", "x"), grid={"quick": (0,)},
                       configure=lambda v, p: RunConfig("a", {}, "quadratic", {}, 1), problem_of=problem_of, computations={})
    with pytest.raises(ValueError, match="Independent"):
        ConstantsClaim(id="t", paper="t", title="t", statement="t", source=Source("t", "x"), grid={"quick": (0,)},
                       configure=lambda v, p: RunConfig("a", {}, "quadratic", {}, 1), problem_of=problem_of,
                       computations={"L": lambda p: 1.0})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="rel_tolerance"):
        Independent(lambda p: 1.0, "x", rel_tolerance=0.0)


def test_hessian_from_gradients_of_a_hand_quadratic() -> None:
    H = np.array([[2.0, 1.0], [1.0, 3.0]])
    assert np.allclose(hessian_from_gradients(lambda x: x @ H - np.array([1.0, -2.0]), 2), H, rtol=0, atol=1e-14)


def test_least_squares_constants_by_hand() -> None:
    from ratecheck.problems.least_squares import from_data
    from ratecheck.problems.least_squares_problem import QuadraticOuter
    from ratecheck.proofs.strfedavg import constants as c

    # clients a_1 = (1, 0, 0), a_2 = (0, 2, 0): Hess h_i = diag(1, 0, 0), diag(0, 4, 0); Hess h = diag(1/2, 2, 0)
    A = np.array([[[1.0, 0.0, 0.0]], [[0.0, 2.0, 0.0]]])
    outer = QuadraticOuter(np.diag([0.5, 1.0, 3.0]), np.zeros((2, 3)), np.zeros(2))
    problem = from_data(A, np.array([[1.0], [2.0]]), outer=outer, x0=np.zeros(3))
    assert c.L_h(problem) == pytest.approx(4.0, rel=1e-12)
    assert c.lambda_min_plus(problem) == pytest.approx(0.5, rel=1e-12)
    assert c.lambda_max(problem) == pytest.approx(2.0, rel=1e-12)
    assert c.alpha(problem) == pytest.approx(0.25, rel=1e-12)  # h - h* = 1/2 r^T H r >= 1/4 |r|^2
    assert c.kappa(problem) == pytest.approx(2.0, rel=1e-12)
    assert c.L_f(problem) == pytest.approx(3.0, rel=1e-12)
    assert c.mu_f(problem) == pytest.approx(0.5, rel=1e-12)


def test_quadratic_constants_by_hand() -> None:
    from ratecheck.problems.quadratic import Quadratic
    from ratecheck.proofs.defedavg import constants as c

    per_client = Quadratic(hessians=np.array([np.diag([1.0, 3.0]), np.diag([2.0, 1.0])]),
                           centers=np.array([[1.0, 0.0], [-1.0, 0.0]]), sigma=0.5, x0=np.zeros(2), radius=0.0, spec_params={})
    assert c.L(per_client) == pytest.approx(3.0, rel=1e-12)
    assert c.mu(per_client) == pytest.approx(1.5, rel=1e-12)  # lambda_min(diag(3/2, 2))
    assert c.kappa(per_client) == pytest.approx(2.0, rel=1e-12)
    # sampled: d ||xi||^2 / sigma^2 ~ chi^2_d over SAMPLES draws of N = 2 clients, d = 2: 4 sd of the estimate
    assert c.sigma(per_client) == pytest.approx(0.5, rel=4 * math.sqrt(1 / (2 * c.SAMPLES * 2 * 2)))
    shared = Quadratic(hessians=np.diag([1.0, 3.0]), centers=np.array([[0.0, 1.0], [0.0, -1.0]]), sigma=0.0,
                       x0=np.zeros(2), radius=0.0, spec_params={})
    assert c.nu(shared) == pytest.approx(3.0, rel=1e-12)  # ||H (c_i - c_bar)|| = ||(0, 3)||


def test_bilevel_constants_by_hand() -> None:
    from ratecheck.proofs.fedbio import constants as fb
    from ratecheck.proofs.simfbo import constants as sf

    # A = diag(1/2, 2), B = I: the joint Hessian of g is [[0, -I], [-I, A]], per coordinate (a +- sqrt(a^2 + 4))/2
    problem = make_problem("quadratic_bilevel", {"dim_x": 2, "dim_y": 2, "clients": 2, "a_min": 0.5, "a_max": 2.0,
                                                 "b": 1.0, "lam": 0.5, "sigma_f": 0.0, "sigma_g": 0.0})
    assert sf.mu_g(problem) == pytest.approx(0.5, rel=1e-12)
    assert sf.L_1(problem) == pytest.approx(1 + math.sqrt(2), rel=1e-12)  # > max(1, lam)
    # FedBiO test A: A_m = diag(1, 4), B_m = I, rho = 1
    fedbio = make_problem("fedbio_bilevel", {"test": "A", "clients": 2, "a_min": 1.0, "a_max": 4.0, "b": 1.0, "rho": 1.0})
    assert fb.mu(fedbio) == pytest.approx(1.0, rel=1e-12)
    assert fb.L(fedbio) == pytest.approx(2 + math.sqrt(5), rel=1e-12)
    assert fb.zeta_gyy(fedbio) == 0.0 and fb.zeta_gxy(fedbio) == 0.0  # test A: identical A_m, B_m


def test_minimax_constants_by_hand() -> None:
    from ratecheck.proofs.fessgda import constants as c

    # f = 1/2 x'diag(2, 1)x - 1/2 y'diag(3, 1/2)y (coupling 0, identical clients): l = 3, mu1 = 1, mu2 = 1/2
    problem = make_problem("minimax", {"kind": "quadratic", "a": [2.0, 1.0], "c": [3.0, 0.5], "coupling": 0.0,
                                       "clients": 2, "zeta": 0.0})
    assert c.l(problem) == pytest.approx(3.0, rel=1e-12)
    assert c.mu1(problem) == pytest.approx(1.0, rel=1e-12)
    assert c.mu2(problem) == pytest.approx(0.5, rel=1e-12)
    assert c.sigma_G(problem) == 0.0


@pytest.mark.claims  # decides the registered claims (in well under a second: no run)
def test_registered_claims_pass_and_turn_on_a_one_percent_error() -> None:
    """The papers' constants claims decide from the problems alone (no run): PASS on the code, FAIL naming the
    constant when the declared constants are 1% off (the family's formula is bypassed here, not edited)."""
    from ratecheck.claims import PROFILES
    from ratecheck.proofs.defedavg.constants import CLAIMS as DEFEDAVG
    from ratecheck.proofs.strfedavg.constants import CLAIMS as STRFEDAVG

    quick = PROFILES["quick"]
    for claim in (*STRFEDAVG, *DEFEDAVG):
        assert claim.own_runs(quick) == []
        outcome = claim.decide(quick, {})
        assert outcome.verdict == Verdict.PASS, outcome.reason
    class AlphaOff:  # the problem with its declared alpha 1% off, everything else its own
        def __init__(self, problem: Any) -> None:
            self._problem = problem

        def __getattr__(self, name: str) -> Any:
            return getattr(self._problem, name)

        def constants(self) -> dict[str, Any]:
            table = dict(self._problem.constants())
            return {**table, "alpha": dataclasses.replace(table["alpha"], value=1.01 * float(table["alpha"].value))}

    claim = dataclasses.replace(STRFEDAVG[0], problem_of=lambda config: AlphaOff(STRFEDAVG[0].problem_of(config)))
    outcome = claim.decide(quick, {})
    assert outcome.verdict == Verdict.FAIL and outcome.reason.startswith("alpha differ"), outcome.reason
