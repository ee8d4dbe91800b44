"""ConstantsClaim's sampled noise levels and sup-over-region constants (issue #23 item 2): the rule on bounds, the
sampled tolerance against a simulation, and each paper's claim turned to FAIL by a planted constant (a factor 1.2, a
sigma^2 for sigma, a bound below the largest value found) while it PASSes on the code."""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from ratecheck.claims import PROFILES, ConstantsClaim, Independent, PointResult, Verdict
from ratecheck.claims.constants import ConstantsAgree, relative_difference, sampled_tolerance, sup_over_balls
from ratecheck.inspection import problem_of
from ratecheck.statements import Source
from ratecheck.trace import RunConfig

QUICK = PROFILES["quick"]


def _claim(**computations: Independent) -> ConstantsClaim:
    return ConstantsClaim(id="t.constants", paper="t", title="t", statement="t", source=Source("t", "Assumption 1"),
                          grid={"quick": (0,)}, configure=lambda v, p: RunConfig("a", {}, "quadratic", {}, 1),
                          problem_of=problem_of, computations=computations)


def _decide(claim: ConstantsClaim, declared: dict[str, float], found: dict[str, float]) -> tuple[Verdict, str, Any]:
    config = RunConfig("a", {}, "quadratic", {}, 1)
    points = [PointResult(float(i), config, np.array([relative_difference(declared[n], found[n])]), 0,
                          stats={"instance": 0, "constant": n, "declared": declared[n], "independent": found[n],
                                 "relative": relative_difference(declared[n], found[n])})
              for i, n in enumerate(declared)]
    return ConstantsAgree()(claim, points, points)


def test_a_loose_bound_passes_above_the_largest_found_and_fails_below_it() -> None:
    claim = _claim(G=Independent(lambda p: 1.0, "sup", bound=True))
    verdict, reason, evidence = _decide(claim, {"G": 2.0}, {"G": 1.5})
    assert verdict == Verdict.PASS and "declared / largest found from 1.333 to 1.333 (G)" in reason
    assert evidence["power"]["down"] == pytest.approx(0.25, rel=1e-6)  # 2.0 -> 1.5 turns it
    assert evidence["power"]["up"] == math.inf  # a loose bound cannot see an inflated declaration
    verdict, reason, _ = _decide(claim, {"G": 1.4}, {"G": 1.5})
    assert verdict == Verdict.FAIL and "G declared 1.4, largest found 1.5" in reason


def test_a_tight_bound_fails_when_the_declaration_is_inflated() -> None:
    claim = _claim(C_f=Independent(lambda p: 1.0, "sup", bound=True, tight=0.05))
    assert _decide(claim, {"C_f": 1.04}, {"C_f": 1.0})[0] == Verdict.PASS
    verdict, reason, evidence = _decide(claim, {"C_f": 1.2}, {"C_f": 1.0})
    assert verdict == Verdict.FAIL and "outside [0.9999999, 1.0526316]" in reason
    with pytest.raises(ValueError, match="tight"):
        Independent(lambda p: 1.0, "x", tight=0.1)  # tightness of a value, not a bound
    with pytest.raises(ValueError, match="tight"):
        Independent(lambda p: 1.0, "x", bound=True, tight=1.0)


def test_sampled_tolerance_is_z_standard_deviations_of_the_estimate() -> None:
    """sqrt(mean ||xi||^2) over n draws of Gaussian noise with dof coordinates: its relative sd against the
    formula sqrt(1 / (2 n dof)), by 400 repetitions (the sd's own relative error is about 4%)."""
    rng = np.random.default_rng(3)
    n, dof, sigma = 500, 3, 0.7
    xi = rng.standard_normal((400, n, dof)) * sigma / np.sqrt(dof)
    estimates = np.sqrt(np.mean(np.sum(xi**2, axis=-1), axis=1))
    assert np.std(estimates) / sigma == pytest.approx(sampled_tolerance(n, dof) / 5.0, rel=0.15)
    with pytest.raises(ValueError, match="draws"):
        sampled_tolerance(0, 3)


def test_sup_over_balls_finds_an_attained_sup_and_stays_in_the_region() -> None:
    """sup of ||M z + b|| on a ball is attained on its sphere; a dense sampling of the sphere is below the search."""
    rng = np.random.default_rng(1)
    M, b = rng.standard_normal((3, 3)), rng.standard_normal(3)
    found = sup_over_balls(lambda z: np.linalg.norm(z @ M.T + b, axis=1), [np.zeros(3)], [2.0])
    u = rng.standard_normal((200000, 3))
    dense = np.linalg.norm(2 * u / np.linalg.norm(u, axis=1, keepdims=True) @ M.T + b, axis=1).max()
    assert dense <= found * (1 + 1e-12) and found <= np.linalg.norm(M, 2) * 2 + np.linalg.norm(b)
    # a linear function on a product of balls: the sup is the sum of the blocks' radii times the slopes' norms
    a, c = np.array([3.0, -4.0]), np.array([1.0])
    found = sup_over_balls(lambda z: z[:, :2] @ a + z[:, 2:] @ c, [np.ones(2), np.zeros(1)], [0.5, 2.0])
    assert found == pytest.approx(a.sum() + 0.5 * 5.0 + 2.0, rel=1e-9)


class Planted:
    """A problem with some declared constants replaced (the family's formula bypassed, not edited)."""

    def __init__(self, problem: Any, change: dict[str, Any]) -> None:
        self._problem, self._change = problem, change

    def __getattr__(self, name: str) -> Any:
        return getattr(self._problem, name)

    def constants(self) -> dict[str, Any]:
        table = dict(self._problem.constants())
        return {**table, **{name: dataclasses.replace(table[name], value=fn(float(table[name].value)))
                            for name, fn in self._change.items() if name in table}}


def _claim_of(paper: str) -> ConstantsClaim:
    import importlib

    claims = importlib.import_module(f"ratecheck.proofs.{paper}.constants").CLAIMS
    return claims[0]


def _planted(claim: ConstantsClaim, change: dict[str, Any]) -> ConstantsClaim:
    return dataclasses.replace(claim, problem_of=lambda config: Planted(claim.problem_of(config), change))


def _times(f: float) -> Any:
    return lambda v: f * v


def _squared(v: float) -> float:
    return v * v


# (paper, constant, the planted change, the constant the FAIL names); every sigma planted is != 1 at the instances
PLANTS = [
    ("defedavg", "sigma", _times(1.2), "sigma"),
    ("defedavg", "sigma", _squared, "sigma"),
    ("defedavg", "G", _times(1.2), "G"),  # tight within 5%
    ("defedavg", "G", _times(0.95), "G"),  # below the largest found
    ("defedavg", "nu", _times(1.2), "nu (ball)"),
    ("defedavg", "Delta", _times(1.01), "Delta (min)"),  # also "Delta" at the quadratic instances
    ("defedavg", "L", _times(1.2), "L (sup)"),  # the cosine problem's attained sup (also "L" at the quadratic ones)
    ("fedbio", "sigma_f", _times(1.2), "sigma_f"),
    ("fedbio", "sigma_H", _squared, "sigma_H"),
    ("fedbio", "sigma_J", _times(0.9), "sigma_J"),
    ("fedbio", "sigma", _times(1.1), "sigma"),
    ("fedbio", "C_f", _times(1.2), "C_f"),
    ("fedbio", "zeta_g", _times(0.6), "zeta_g"),  # the family's old zeta_g, without ||B_m - B_j|| R_y, was 0.38-0.77x
    ("fedbio", "zeta_gstar", _times(0.95), "zeta_gstar"),
    ("fedbio", "zeta_f", _times(1.01), "zeta_f"),
    ("fessgda", "sigma", _times(1.2), "sigma"),
    ("fessgda", "sigma", _squared, "sigma"),
    ("fessgda", "sigma_G", _times(1.2), "sigma_G (period)"),  # attained: tight
    ("fessgda", "sigma_G", _times(0.85), "sigma_G (ball)"),  # below the largest found on the ball
    ("fessgda", "l", _times(1.2), "l (sup)"),  # the NC-PL l: within 5% (also "l" at the quadratic instances)
    ("fessgda", "l", _times(0.85), "l (simplex)"),  # below the largest found on the point-wise max
    ("fessgda", "D_Y", _times(1.2), "D_Y"),
    ("simfbo", "sigma_f", _times(1.2), "sigma_f"),
    ("simfbo", "sigma_g", _squared, "sigma_g"),
    ("simfbo", "sigma_gg", _times(1.2), "sigma_gg"),
    ("simfbo", "L_f", _times(1.2), "L_f"),
    ("simfbo", "sigma_gh", _times(0.6), "sigma_gh"),
    ("strfedavg", "sigma_h", _times(1.2), "sigma_h"),
    ("strfedavg", "sigma_f", _squared, "sigma_f"),
]


@pytest.mark.claims
@pytest.mark.parametrize("paper", ["defedavg", "fedbio", "fessgda", "simfbo", "strfedavg"])
def test_the_registered_claims_pass_on_the_code(paper: str) -> None:
    outcome = _claim_of(paper).decide(QUICK, {})
    assert outcome.verdict == Verdict.PASS, outcome.reason


@pytest.mark.claims
@pytest.mark.parametrize(("paper", "constant", "change", "named"), PLANTS,
                         ids=[f"{p}-{c}-{getattr(f, '__name__', '')}{i}" for i, (p, c, f, _) in enumerate(PLANTS)])
def test_a_planted_constant_fails_naming_it(paper: str, constant: str, change: Any, named: str) -> None:
    claim = _claim_of(paper)
    outcome = _planted(claim, {constant: change}).decide(QUICK, {})
    assert outcome.verdict == Verdict.FAIL, outcome.reason
    off = set()
    for row in outcome.evidence["rows"]:
        low, high = claim.computations[row["constant"]].band()
        inside = row["relative"] <= row["tolerance"] if row["kind"] == "value" else low <= row["ratio"] <= high
        if not inside:
            off.add(row["constant"])
    # the planted constant is named, and nothing else is (one constant may be checked under two keys)
    assert named in off and {claim.computations[k].constant or k for k in off} == {constant}, outcome.reason


@pytest.mark.claims
def test_strfedavg_alpha_does_not_read_the_row_space_matrix_its_formula_shares_with_the_value_oracle() -> None:
    """A wrong H_row (the row-space Hessian the family's alpha = lambda_min(H_row)/2 and its value oracle h both
    read) moves the declared alpha and h alike; the independent alpha (midpoint rule on local_grad, range from an
    SVD of the assembled Hessian) does not move, so the claim FAILs on alpha."""
    from ratecheck.proofs.strfedavg import constants as c

    claim = c.CLAIMS[0]
    config = claim.instances(QUICK)[0]
    clean = claim.problem_of(config)
    broken = copy.copy(clean)
    object.__setattr__(broken, "H_row", 1.2 * clean.H_row)
    assert float(broken.constants()["alpha"].value) == pytest.approx(1.2 * float(clean.constants()["alpha"].value))
    assert c.alpha(broken) == pytest.approx(c.alpha(clean), rel=1e-12)  # independent of H_row
    x = np.asarray(clean.x_star)[None, :] + 0.1
    assert float(broken.h_gap(x)[0]) == pytest.approx(1.2 * float(clean.h_gap(x)[0]))  # the value oracle moved too
    outcome = dataclasses.replace(claim, problem_of=lambda cfg: broken if cfg == config else claim.problem_of(cfg)).decide(QUICK, {})
    assert outcome.verdict == Verdict.FAIL and "alpha" in outcome.reason.split(" differ")[0], outcome.reason
