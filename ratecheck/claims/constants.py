"""Constants claims (issue #23 item 2): the problem constants a paper's theorem bindings read equal an
independent computation, at a few reference instances of the family.

A theorem bound or condition evaluated at a wrong constant (an inflated L, a halved weak-sharpness alpha, a
radius with mu^2 for mu) moves every number the claims read from it, and a one-sided curvature check cannot
see it. Here each constant is recomputed from its assumption's definition in the paper, out of the problem's
own oracles (an exact Hessian assembled column by column from a gradient oracle, finite differences of values,
sampling a noise oracle), never through the family's own constant formula, and compared two-sided.

A constant declared as a sup over a region (a ball or box where the assumption is local) is checked as a bound
(``Independent(bound=True)``): the declared value must not be below the largest value ``sup_over_balls`` finds on
the region, and, with ``tight=d``, the largest found must reach (1 - d) of it. Sampled noise levels are decided at
``SAMPLED_Z`` standard deviations of their estimate (``sampled_tolerance``).

Pieces (ratecheck.claims.compose): the plan ``Instances`` builds each reference instance's problem (no run:
a constant is a property of the instance) and makes one point per (instance, constant); the reading
``AgainstIndependent`` fills a point with the declared value, the independent one and their relative
difference; the rule ``ConstantsAgree`` passes when every relative difference is within its constant's
tolerance and fails naming the constant otherwise. Its power is the relative change of a declared constant
(mode "scale") that turns the verdict.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..seeding import ReplicaStream
from ..trace import RunConfig
from .base import Claim
from .compose import Decision, Estimator, Plan, Points, Reading, Rule
from .model import PointResult, Profile, Verdict
from .power import SCALE, Constraint, power
from .views import Column, Piece, Statistic

# deterministic computations (exact Hessians of quadratics, eigenvalues) agree to round-off: 1e-7 leaves
# room for eigenvalue conditioning (cond <= 1e4 on the reference instances) and sees a 1% error 1e5 times over
ROUND_OFF = 1e-7
# a sampled noise level is decided at SAMPLED_Z standard deviations of its estimate: a correct sigma FAILs with
# probability 5.7e-7 (two-sided normal), at a fixed seed never
SAMPLED_Z = 5.0


@dataclass(frozen=True)
class Independent:
    """How a constant is recomputed: ``compute(problem) -> float`` from the problem's oracles, what it
    computes (``how``: the assumption's definition and the method), and the relative tolerance the
    comparison allows (``ROUND_OFF`` for deterministic computations; a sampled one states its CI in ``how``)."""

    compute: Callable[[Any], float]
    how: str
    rel_tolerance: float = ROUND_OFF
    # the instances where the definition gives the declared value exactly (elsewhere the family declares a
    # bound, e.g. over a ball); None: every instance
    where: Callable[[Any], bool] | None = None
    # a constant declared as a sup over a region: ``compute`` returns the largest value found there (sampled and
    # adversarial points), which must not exceed the declared one by more than ``rel_tolerance``; ``tight`` = d
    # also asks the largest found to reach (1 - d) of the declared value; None: a loose bound by design, whose
    # ratio is reported, not decided
    bound: bool = False
    tight: float | None = None
    # the declared constant this computes, when its key in ``computations`` differs (one constant checked as a value
    # at some instances and as a bound at others needs two keys); None: the key
    constant: str | None = None

    def __post_init__(self) -> None:
        if not (0 < self.rel_tolerance < 1):
            raise ValueError(f"Independent.rel_tolerance = {self.rel_tolerance!r}: must be in (0, 1)")
        if self.tight is not None and not (self.bound and 0 < self.tight < 1):
            raise ValueError(f"Independent.tight = {self.tight!r}: must be in (0, 1), and only for bound=True")

    def band(self) -> tuple[float, float]:
        """The allowed range of declared / independent."""
        if not self.bound:
            return 1 - self.rel_tolerance, 1 + self.rel_tolerance
        return 1 - self.rel_tolerance, (math.inf if self.tight is None else 1 / (1 - self.tight))

    def rule_text(self) -> str:
        if not self.bound:
            return f"|declared - independent| / |independent| <= {self.rel_tolerance:g}"
        text = f"declared >= largest found (1 - {self.rel_tolerance:g})"
        return text + (f", largest found >= (1 - {self.tight:g}) declared" if self.tight is not None else
                       " (a loose bound by design: the ratio is reported)")


def relative_difference(declared: float, independent: float) -> float:
    """|declared - independent| / |independent| (0 when both are 0; inf when only the independent one is)."""
    if declared == independent:
        return 0.0
    return abs(declared - independent) / abs(independent) if independent != 0 else float("inf")


@dataclass(frozen=True)
class Instances(Plan):
    """No run: each grid value names a reference instance (``configure(value, profile)``, whose problem the
    point reads), and each instance gives one point per constant of ``claim.computations``."""

    reads: ClassVar[tuple[str, ...]] = ("computations",)

    def runs(self, claim: Any, profile: Profile) -> list[RunConfig]:
        return []

    def points(self, claim: Any, profile: Profile, traces: Mapping[str, Any]) -> list[PointResult]:
        out = []
        reading = claim._reading()
        index = 0
        for value in claim.values(profile):
            config = claim.configure(value, profile)
            problem = claim.problem_of(config)
            declared = {name: float(c.value) for name, c in problem.constants().items()}
            for name, computation in claim.computations.items():
                if computation.where is not None and not computation.where(problem):
                    continue
                point = PointResult(float(index), config, np.empty(0), 0, stats={"instance": value, "constant": name},
                                    inputs={"problem": problem, "declared": declared})
                reading(claim, point)
                out.append(point)
                index += 1
        return out


class ConstantsTable(Statistic):
    """Points: |declared - independent| / |independent| per (instance, constant), log scale."""

    caption_text = ("Points: the relative difference between each declared constant and its independent computation "
                    "(for a sup over a region, the largest value found there), one per (reference instance, constant).")

    def xlabel(self, claim: Any) -> str:
        return "(reference instance, constant)"

    def y_values(self, o: Any) -> list[float]:
        return [max(float(p.samples[0]), 1e-17) for p in o.points if p.samples.size]

    def scales(self, o: Any, xs: Sequence[float], ys: Sequence[float]) -> tuple[bool, bool]:
        return False, True

    def mean_label(self, claim: Any) -> str:
        return "relative difference"

    def grid_columns(self, claim: Any) -> bool:
        return False  # one deterministic row per (instance, constant): its own columns say it all

    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        x = [p.value for p in o.points]
        ax.plot(x, self.y_values(o), "o", color="C0", ms=5, label="|declared - independent| / |independent|")

    def columns(self, claim: Any) -> list[Column]:
        return [Column("instance", lambda p: p.stats.get("instance")), Column("constant", lambda p: p.stats.get("constant")),
                Column("check", lambda p: p.stats.get("check")), Column("declared", lambda p: p.stats.get("declared")),
                Column("independent", lambda p: p.stats.get("independent")),
                Column("relative difference", lambda p: p.stats.get("relative"))]


@dataclass(frozen=True)
class AgainstIndependent(Reading):
    """The declared constant (the family's, as a binding reads it) against its independent computation."""

    reads: ClassVar[tuple[str, ...]] = ("computations",)
    view: ClassVar[Any] = ConstantsTable()

    def label(self, claim: Any) -> str:
        return "|declared - independent| / |independent|"

    def __call__(self, claim: Any, point: PointResult) -> None:
        name = point.stats["constant"]
        declared_all = point.inputs["declared"]
        computation = claim.computations[name]
        declared_name = computation.constant or name
        declared = float(declared_all[declared_name]) if declared_name in declared_all else float("nan")
        independent = float(computation.compute(point.inputs["problem"]))
        rel = relative_difference(declared, independent) if np.isfinite(declared) else float("inf")
        point.stats.update(declared=declared, independent=independent, relative=rel,
                           check="sup bound" if computation.bound else "value")
        point.samples = np.array([rel])


class ToleranceLines(Piece):
    def draw(self, ax: Any, o: Any, log_y: bool) -> None:
        tols = sorted({c.rel_tolerance for c in o.claim.computations.values()})
        for t in tols:
            ax.axhline(t, color="C3", ls="--", lw=1.5, label=f"tolerance {t:g} (relative)")

    def y_values(self, o: Any) -> list[float]:
        return [c.rel_tolerance for c in o.claim.computations.values()]

    def caption(self, o: Any) -> str:
        return " Dashed: the relative tolerance (round-off for deterministic computations)."

    def facts(self, o: Any) -> list[tuple[str, tuple[Any, ...]]]:
        return [(f"Independent {name}: ", (c.how,)) for name, c in o.claim.computations.items()]


@dataclass(frozen=True)
class ConstantsAgree(Rule):
    """PASS when every declared constant is within its tolerance of its independent computation, FAIL naming
    the first that is not (deterministic: no INCONCLUSIVE)."""

    reads: ClassVar[tuple[str, ...]] = ("computations",)
    view: ClassVar[Any] = ToleranceLines()

    def __call__(self, claim: Any, points: Sequence[PointResult], estimate: Any) -> Decision:
        rows, off, constraints = [], [], []
        for p in points:
            name, s = p.stats["constant"], p.stats
            computation = claim.computations[name]
            tol = computation.rel_tolerance
            ratio = s["declared"] / s["independent"] if s["independent"] else float("nan")
            a, b = computation.band()
            row = {"instance": s["instance"], "constant": name, "declared": s["declared"],
                   "independent": s["independent"], "relative": s["relative"], "tolerance": tol,
                   "kind": "bound" if computation.bound else "value", "ratio": ratio}
            rows.append(row)
            if not computation.bound:
                inside = s["relative"] <= tol
            elif s["independent"] == 0:  # nothing found above 0: any bound >= 0 holds, and 0 is attained
                inside = s["declared"] >= 0 and (computation.tight is None or s["declared"] == 0)
            else:
                inside = bool(a <= ratio <= b)
            if not inside:
                off.append(row)
            if np.isfinite(ratio) and ratio > 0:
                constraints.append(Constraint(ratio, ratio, a, b))
        evidence: dict[str, Any] = {"rows": rows}
        if off:
            worst = max(off, key=lambda r: r["relative"])
            names = ", ".join(sorted({r["constant"] for r in off}))
            computation = claim.computations[worst["constant"]]
            if worst["kind"] == "bound":
                a, b = computation.band()
                test = (f"largest found {worst['independent']:.10g} (declared / largest found {worst['ratio']:.6g} "
                        f"outside [{a:.8g}, {b:.8g}]: {computation.rule_text()})")
            else:
                test = (f"independent {worst['independent']:.10g} (relative difference {worst['relative']:.3g} > "
                        f"tolerance {worst['tolerance']:g})")
            reason = (f"{names} differ from the independent computation: {worst['constant']} declared "
                      f"{worst['declared']:.10g}, {test} at {claim.vary}={worst['instance']}; rule: {computation.how}")
            verdict = Verdict.FAIL
        else:
            values = [r for r in rows if r["kind"] == "value"] or rows
            worst = max(values, key=lambda r: r["relative"] / r["tolerance"])
            reason = (f"{len({r['constant'] for r in values})} constants at {len({r['instance'] for r in rows})} "
                      f"instances agree with their independent computation; largest relative difference "
                      f"{worst['relative']:.3g} ({worst['constant']}, tolerance {worst['tolerance']:g})")
            finest, coarsest = (f(values, key=lambda r: r["tolerance"]) for f in (min, max))
            if coarsest["tolerance"] > finest["tolerance"]:  # the claim's power is its finest constant's
                reason += (f"; a constant alone turns the verdict when off by its tolerance, from "
                           f"{finest['tolerance']:.2g} ({finest['constant']}) to {coarsest['tolerance']:.2g} "
                           f"({coarsest['constant']})")
            bounds = [r for r in rows if r["kind"] == "bound"]
            if bounds:
                loosest = max(bounds, key=lambda r: r["ratio"])
                reason += (f"; {len(bounds)} sup-over-region bounds hold, declared / largest found from "
                           f"{min(r['ratio'] for r in bounds):.4g} to {loosest['ratio']:.4g} ({loosest['constant']})")
            verdict = Verdict.PASS
        if len(constraints) == len(rows):
            evidence["power"] = power(constraints, SCALE, "relative change of a declared constant", verdict)
        return verdict, reason, evidence


@dataclass(frozen=True, kw_only=True)
class ConstantsClaim(Claim):
    """The constants a paper's theorem bindings read equal their independent computations (see module doc).

    ``grid`` names the reference instances (values passed to ``configure``); ``computations`` maps a constant's
    name to its ``Independent`` computation, written from the paper's assumption."""

    computations: Mapping[str, Independent]
    # the problem a configuration names (ratecheck.inspection.problem_of): passed in, since the claims layer
    # sits below the registry that builds problems
    problem_of: Callable[[RunConfig], Any]
    measure: str = "constants"
    vary: str = "instance"
    kind: str = "constants"
    min_replicas: int = 1
    require_conditions: bool = False
    plan: Plan = Instances()
    reading: Reading = AgainstIndependent()
    statistic: Estimator = Points()
    rule: Rule = ConstantsAgree()

    def instances(self, profile: Profile) -> list[RunConfig]:
        """The reference instances' configurations (no run is made of them: the problems are read)."""
        return [self.configure(v, profile) for v in self.values(profile)]

    def _validate(self) -> None:
        if not self.computations:
            raise ValueError(f"constants claim {self.id}: no constant to check")
        bad = [n for n, c in self.computations.items() if not isinstance(c, Independent)]
        if bad:
            raise ValueError(f"constants claim {self.id}: computations of {', '.join(bad)} must be Independent(...)")


# -- computations from oracles (shared by the papers' constants claims) --------------------------------------


def hessian_from_gradients(grad: Callable[[np.ndarray], np.ndarray], dim: int, at: np.ndarray | None = None) -> np.ndarray:
    """The Hessian of a quadratic from its gradient oracle, column by column: H e_j = grad(x + e_j) - grad(x)
    (exact to round-off for a quadratic, whatever the point; symmetrized). ``grad`` maps (k, dim) points to
    (k, dim) gradients."""
    x = np.zeros(dim) if at is None else np.asarray(at, float)
    points = np.vstack([x[None, :], x[None, :] + np.eye(dim)])
    g = np.asarray(grad(points), float)
    H = (g[1:] - g[0]).T
    return (H + H.T) / 2


def positive_eigenvalues(H: np.ndarray, rel_floor: float = 1e-9) -> np.ndarray:
    """The eigenvalues of a symmetric PSD matrix above ``rel_floor`` times the largest (the rest: its null space)."""
    eig = np.linalg.eigvalsh(H)
    return eig[eig > rel_floor * max(float(eig.max()), 0.0)]


def client_gradient(problem: Any, client: int, x: np.ndarray) -> np.ndarray:
    """grad F_i at points x (k, dim) from a federated problem's ``gather`` / ``local_grad`` oracles."""
    batch = problem.gather(np.full((x.shape[0], 1), client))
    return np.asarray(problem.local_grad(batch, x[:, None, :]))[:, 0, :]


def client_hessians(problem: Any) -> np.ndarray:
    """Hess F_i of every client (N, dim, dim), each assembled from its ``local_grad`` (exact for quadratics)."""
    return np.stack([hessian_from_gradients(functools.partial(client_gradient, problem, i), problem.dim)
                     for i in range(problem.num_clients)])


# -- noise levels by sampling ----------------------------------------------------------------------------------


def sampled_tolerance(draws: int, dof: int, z: float = SAMPLED_Z) -> float:
    """The relative tolerance of sigma estimated as sqrt(mean ||xi||^2) over ``draws`` independent draws of Gaussian
    noise whose ||xi||^2 is sigma^2 chi^2_dof / dof (``dof`` independent coordinates of equal variance): the mean's
    relative sd is sqrt(2 / (draws dof)), the square root's half of it (delta method); ``z`` of them."""
    if draws < 1 or dof < 1:
        raise ValueError(f"sampled_tolerance: draws = {draws!r} and dof = {dof!r} must be >= 1")
    return z * math.sqrt(1.0 / (2.0 * draws * dof))


def noise_stream(name: str, streams: int) -> ReplicaStream:
    """A fixed-seed noise stream of its own for the sampled constant ``name`` (seed 0, a run key hashed from the
    name): ``streams`` replica generators, each serving a block of the draws."""
    key = hashlib.sha256(f"constants.{name}".encode()).hexdigest()
    return ReplicaStream(0, key, range(streams), name)


def root_mean_square(xi: np.ndarray, axes: int = 1) -> float:
    """sqrt(mean ||xi||^2): the norm over the last ``axes`` axes (2: Frobenius of matrix noise), the mean over the rest."""
    return float(np.sqrt(np.mean(np.sum(xi**2, axis=tuple(range(-axes, 0))))))


@dataclass(frozen=True, eq=False)
class NoiseSample:
    """Draws of an oracle's noise (stochastic minus exact value): its level sqrt(mean ||xi||^2) (``root_mean_square``)
    and, per coordinate (a client's component or matrix entry), the sample mean and sd over the draws, which the
    unbiasedness claims read (ratecheck.claims.unbiased): one set of draws serves both."""

    level: float
    mean: np.ndarray  # (coordinates,)
    sd: np.ndarray  # (coordinates,), ddof 1
    draws: int


def noise_sample(xi: np.ndarray, by_draw: np.ndarray, axes: int = 1) -> NoiseSample:
    """The summary of noise draws ``xi`` as drawn (its level over the last ``axes`` axes) and ``by_draw``, the same
    values with the draws on the first axis and the coordinates on the others (``tiled_draws``)."""
    flat = by_draw.reshape(by_draw.shape[0], -1)
    return NoiseSample(root_mean_square(xi, axes), flat.mean(axis=0), flat.std(axis=0, ddof=1), flat.shape[0])


def tiled_draws(xi: np.ndarray, clients: int) -> np.ndarray:
    """Draws (streams, copies x clients, ...) made for ``gather(np.tile(arange(clients), (streams, copies)))`` as
    (streams x copies, clients, ...): one row per draw, a client's coordinates apart from another's."""
    return xi.reshape(xi.shape[0] * (xi.shape[1] // clients), clients, *xi.shape[2:])


def per_problem(compute: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``compute(problem)`` once per problem object (held, so its id stays its own; at most 8 at a time): a paper's
    constants and unbiasedness claims read the same draws (problems are built once per configuration:
    ratecheck.inspection.problem_of). A test that patches an oracle must hand the claim new problem objects (a
    subclass instance, ``make_problem``): a cached one keeps the draws of the unpatched oracle."""
    held: dict[int, tuple[Any, Any]] = {}

    @functools.wraps(compute)
    def cached(problem: Any) -> Any:
        entry = held.get(id(problem))
        if entry is None or entry[0] is not problem:
            if len(held) >= 8:
                held.clear()
            entry = held[id(problem)] = (problem, compute(problem))
        return entry[1]
    return cached


# -- constants declared as a sup over a region ------------------------------------------------------------------


def _into_balls(z: np.ndarray, centers: Sequence[np.ndarray], radii: Sequence[float]) -> np.ndarray:
    """Points (k, n) with each block projected onto its ball (feasible whatever an optimizer returned)."""
    out, start = np.array(z, float, copy=True), 0
    for c, r in zip(centers, radii):
        block = out[:, start:start + c.size] - c
        norm = np.linalg.norm(block, axis=1, keepdims=True)
        out[:, start:start + c.size] = c + block * np.minimum(1.0, r / np.maximum(norm, 1e-300))
        start += c.size
    return out


def sup_over_balls(value: Callable[[np.ndarray], np.ndarray], centers: Sequence[np.ndarray], radii: Sequence[float], *,
                   samples: int = 2000, starts: int = 4, seed: int = 0) -> float:
    """The largest ``value`` (points (k, n) -> (k,)) found on the product of balls ||z_b - c_b|| <= r_b (z the blocks
    concatenated): the centres, every block's +-r e_j (the corners of its ball's box) and random boundary points
    with the others at their centres, ``samples`` uniform points and as many on the boundary (a seeded Generator),
    then gradient ascent on ``value`` (scipy SLSQP with the balls as constraints) from the ``starts`` best. Every
    point evaluated is projected into the region, so the result is a value attained there."""
    from scipy.optimize import minimize  # here, not at import (start-up of `ratecheck list`)

    centers = [np.atleast_1d(np.asarray(c, float)) for c in centers]
    radii = [float(r) for r in radii]
    rng = np.random.default_rng(seed)
    base = np.concatenate(centers)
    n = base.size
    points, start = [base[None, :]], 0
    for c, r in zip(centers, radii):  # one block moved to its ball's corners and boundary, the others central
        moves = np.vstack([np.eye(c.size), -np.eye(c.size), rng.standard_normal((4 * c.size, c.size))])
        moves *= r / np.linalg.norm(moves, axis=1, keepdims=True)
        block = np.repeat(base[None, :], moves.shape[0], axis=0)
        block[:, start:start + c.size] += moves
        points.append(block)
        start += c.size
    for boundary in (False, True):  # every block at once: uniform in its ball, or on its sphere
        z, start = np.empty((samples, n)), 0
        for c, r in zip(centers, radii):
            u = rng.standard_normal((samples, c.size))
            u /= np.linalg.norm(u, axis=1, keepdims=True)
            scale = r if boundary else r * rng.uniform(size=(samples, 1)) ** (1.0 / c.size)
            z[:, start:start + c.size] = c + u * scale
            start += c.size
        points.append(z)
    z = _into_balls(np.vstack(points), centers, radii)
    values = np.asarray(value(z), float)
    best = [float(values.max())]
    constraints, start = [], 0
    for c, r in zip(centers, radii):
        sl = slice(start, start + c.size)
        constraints.append({"type": "ineq", "fun": functools.partial(_ball_slack, sl=sl, c=c, r=r),
                            "jac": functools.partial(_ball_slack_gradient, sl=sl, c=c)})
        start += c.size
    step = 1e-6 * max(1.0, max(radii))
    steps = np.vstack([np.eye(n), -np.eye(n)]) * step

    def gradient(x: np.ndarray) -> np.ndarray:  # central differences, the 2n points in one call of ``value``
        v = np.asarray(value(x[None, :] + steps), float)
        return -(v[:n] - v[n:]) / (2 * step)

    for z0 in z[np.argsort(values)[-starts:]]:
        res = minimize(lambda x: -float(value(x[None, :])[0]), z0, jac=gradient, method="SLSQP",
                       constraints=constraints, options={"maxiter": 200, "ftol": 1e-14})
        best.append(float(value(_into_balls(res.x[None, :], centers, radii))[0]))
    return max(best)


def _ball_slack(z: np.ndarray, sl: slice, c: np.ndarray, r: float) -> float:
    return r * r - float(np.sum((z[sl] - c) ** 2))


def _ball_slack_gradient(z: np.ndarray, sl: slice, c: np.ndarray) -> np.ndarray:
    out = np.zeros_like(z)
    out[sl] = -2.0 * (z[sl] - c)
    return out
