"""Unbiasedness claims: every stochastic oracle a paper's problems expose has the exact oracle as its mean.

Each paper assumes its stochastic gradients (and sampled Hessians, Jacobians, mini-batches) unbiased; the
constants claims check their noise LEVELS by sampling (ratecheck.claims.constants), and a noise whose mean is off
(Rademacher signs -1 with probability 1/4: the sampled Hessian's mean is A + sigma_h/2 I) keeps its level. Here
the same draws (``NoiseSample``: one sampler per noise serves both claims, ``per_problem``) are read for their
MEANS: at every reference instance, for every oracle, the sample mean of (stochastic - exact) per coordinate (a
client's component, a matrix entry) is within K standard errors of 0.

K is Bonferroni's over every coordinate the claim tests (C of them, all oracles and instances): a correct oracle's
coordinate has |z| > K with probability 2 Phi(-K) = FAMILY_WISE / C (normal approximation of a mean over >= 15000
draws), so the claim FAILs a correct code with probability <= FAMILY_WISE = 1e-6 over seeds (and at its fixed seed
never, once it PASSes); the five papers' claims together <= 5e-6. Its power: a bias of K / sqrt(n) sd of a
coordinate's noise (n the draws) turns the verdict, ~0.05 sd at n = 15000, C ~ 100.

Pieces (ratecheck.claims.compose): the plan is the constants claims' ``Instances`` (no run: one point per
(instance, oracle)); the reading ``MeanDeviation`` fills a point with the largest |z| of its coordinates; the rule
``MeansNearZero`` passes when every |z| <= K. Its power is an offset: the bias, in sd of a coordinate's noise, that
added to every coordinate turns the verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .compose import Decision, Plan, Reading, Rule
from .constants import ROUND_OFF, ConstantsClaim, ConstantsTable, Instances, NoiseSample
from .model import PointResult, Verdict
from .power import OFFSET, Constraint, power
from .views import Column, Piece

# the family-wise false-FAIL probability of one claim (Bonferroni over its coordinates)
FAMILY_WISE = 1e-6


@dataclass(frozen=True)
class Unbiased:
    """An oracle's noise drawn at a reference instance: ``sample(problem) -> NoiseSample`` (the draws its noise-level
    constant reads), what it draws (``how``: the oracle, the point, the draws), and the instances it applies to."""

    sample: Callable[[Any], NoiseSample]
    how: str
    where: Callable[[Any], bool] | None = None


def bonferroni_z(coordinates: int, family_wise: float = FAMILY_WISE) -> float:
    """K with P(some of ``coordinates`` independent N(0, 1) has |z| > K) <= ``family_wise``: 2 Phi(-K) = family_wise / C."""
    if coordinates < 1 or not 0 < family_wise < 1:
        raise ValueError(f"bonferroni_z: coordinates = {coordinates!r} must be >= 1, family_wise = {family_wise!r} in (0, 1)")
    from scipy.stats import norm  # here, not at import (start-up of `ratecheck list`)

    return float(norm.isf(family_wise / (2 * coordinates)))


def standardized(sample: NoiseSample) -> tuple[np.ndarray, np.ndarray]:
    """(z, b): per coordinate the mean in standard errors and in sd of the noise. A coordinate whose sd is round-off
    (<= ROUND_OFF times the oracle's level: no noise there, e.g. a matrix entry the noise leaves alone) has z = 0 when
    its mean is round-off too, else +-inf (a deterministic bias): a round-off mean is no evidence of bias."""
    floor = ROUND_OFF * sample.level
    noisy = sample.sd > floor
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(noisy, sample.mean / np.where(noisy, sample.sd, 1.0),
                     np.where(np.abs(sample.mean) <= floor, 0.0, np.sign(sample.mean) * np.inf))
    return b * math.sqrt(sample.draws), b


class BiasTable(ConstantsTable):
    """Points: the largest |mean / standard error| over an oracle's coordinates, per (instance, oracle)."""

    caption_text = ("Points: the largest |sample mean of (stochastic - exact)| over an oracle's coordinates, in standard "
                    "errors, one per (reference instance, oracle).")

    def xlabel(self, claim: Any) -> str:
        return "(reference instance, oracle)"

    def scales(self, o: Any, xs: Sequence[float], ys: Sequence[float]) -> tuple[bool, bool]:
        return False, False

    def mean_label(self, claim: Any) -> str:
        return "largest |z|"

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        ax.plot([p.value for p in o.points], self.y_values(o), "o", color="C0", ms=5, label="largest |mean| / s.e.")

    def columns(self, claim: Any) -> list[Column]:
        return [Column("instance", lambda p: p.stats.get("instance")), Column("oracle", lambda p: p.stats.get("constant")),
                Column("draws", lambda p: p.stats.get("draws")), Column("coordinates", lambda p: p.stats.get("coordinates")),
                Column("largest |z|", lambda p: p.stats.get("z")),
                Column("its mean / sd", lambda p: p.stats.get("bias"))]


@dataclass(frozen=True)
class MeanDeviation(Reading):
    """An oracle's noise draws at an instance: the largest |z| of its coordinates (the mean in standard errors)."""

    reads: ClassVar[tuple[str, ...]] = ("computations",)
    view: ClassVar[Any] = BiasTable()

    def label(self, claim: Any) -> str:
        return "largest |mean of (stochastic - exact)| / standard error"

    def __call__(self, claim: Any, point: PointResult) -> None:
        sample = claim.computations[point.stats["constant"]].sample(point.inputs["problem"])
        z, b = standardized(sample)
        worst = int(np.argmax(np.abs(z)))
        point.stats.update(draws=sample.draws, coordinates=int(z.size), z=float(abs(z[worst])), bias=float(b[worst]),
                           coordinate=worst, highest=float(b.max()), lowest=float(b.min()), level=sample.level)
        point.samples = np.array([abs(z[worst])])


class ThresholdLine(Piece):
    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        ax.axhline(bonferroni_z(_coordinates(o.points)), color="C3", ls="--", lw=1.5,
                   label=f"K (Bonferroni, family-wise {FAMILY_WISE:g})")

    def y_values(self, o: Any) -> list[float]:
        return [bonferroni_z(_coordinates(o.points))] if o.points else []

    def caption(self, o: Any) -> str:
        return f" Dashed: K, Bonferroni's threshold over every coordinate at family-wise false-FAIL {FAMILY_WISE:g}."

    def facts(self, o: Any) -> list[tuple[str, tuple[Any, ...]]]:
        return [(f"Draws of {name}: ", (c.how,)) for name, c in o.claim.computations.items()]


def _coordinates(points: Sequence[PointResult]) -> int:
    return max(1, sum(int(p.stats.get("coordinates", 0)) for p in points))


@dataclass(frozen=True)
class MeansNearZero(Rule):
    """PASS when every oracle's every coordinate has its sample mean within K standard errors of 0 (K: Bonferroni over
    all of them at FAMILY_WISE), FAIL naming the oracles that do not (deterministic at the fixed seed)."""

    reads: ClassVar[tuple[str, ...]] = ("computations",)
    view: ClassVar[Any] = ThresholdLine()

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> Decision:
        K = bonferroni_z(_coordinates(points))
        rows, constraints = [], []
        for p in points:
            s = p.stats
            rows.append({"instance": s["instance"], "oracle": s["constant"], "draws": s["draws"],
                         "coordinates": s["coordinates"], "z": s["z"], "bias": s["bias"], "coordinate": s["coordinate"]})
            edge = K / math.sqrt(s["draws"])  # in sd of the noise
            constraints += [Constraint(s["highest"], s["highest"], -edge, edge), Constraint(s["lowest"], s["lowest"], -edge, edge)]
        off = [r for r in rows if not r["z"] <= K]  # a NaN mean is no evidence of no bias
        coordinates = _coordinates(points)
        if off:
            worst = max(off, key=lambda r: r["z"])
            reason = (f"{', '.join(sorted({r['oracle'] for r in off}))} biased: {worst['oracle']}'s coordinate "
                      f"{worst['coordinate']} has mean {worst['bias']:.4g} sd of its noise, {worst['z']:.3g} standard "
                      f"errors from 0 over {worst['draws']} draws (> K = {K:.3g}, Bonferroni over {coordinates} "
                      f"coordinates at family-wise {FAMILY_WISE:g}) at {claim.vary}={worst['instance']}; draws: "
                      f"{claim.computations[worst['oracle']].how}")
            verdict = Verdict.FAIL
        else:
            worst = max(rows, key=lambda r: r["z"])
            fewest = min(r["draws"] for r in rows)
            reason = (f"{len({r['oracle'] for r in rows})} oracles at {len({r['instance'] for r in rows})} instances "
                      f"unbiased: every one of {coordinates} coordinates within K = {K:.3g} standard errors of 0 "
                      f"(Bonferroni, family-wise false-FAIL {FAMILY_WISE:g}); largest {worst['z']:.3g} "
                      f"({worst['oracle']}); a bias of {K / math.sqrt(fewest):.2g} sd of a coordinate's noise turns the "
                      f"verdict at the fewest draws ({fewest})")
            verdict = Verdict.PASS
        evidence: dict[str, Any] = {"rows": rows, "K": K, "coordinates": coordinates, "family_wise": FAMILY_WISE}
        if rows:
            evidence["power"] = power(constraints, OFFSET, "bias added to every coordinate of every oracle, in sd of "
                                      "the coordinate's noise", verdict)
        return verdict, reason, evidence


@dataclass(frozen=True, kw_only=True)
class UnbiasedClaim(ConstantsClaim):
    """Every stochastic oracle ``computations`` names is unbiased at the reference instances (see module doc);
    ``computations`` maps an oracle's name to its ``Unbiased`` draws."""

    computations: Mapping[str, Unbiased]  # type: ignore[assignment]
    measure: str = "bias"
    kind: str = "unbiased"
    plan: Plan = Instances()
    reading: Reading = MeanDeviation()
    rule: Rule = MeansNearZero()

    def _validate(self) -> None:
        if not self.computations:
            raise ValueError(f"unbiasedness claim {self.id}: no oracle to check")
        bad = [n for n, c in self.computations.items() if not isinstance(c, Unbiased)]
        if bad:
            raise ValueError(f"unbiasedness claim {self.id}: computations of {', '.join(bad)} must be Unbiased(...)")
