"""The after-run C_f ball check (issue #10 part 1, spec pitfalls 16 and 21).

A quadratic f has no global gradient bound: the problems take C_f (and the state-dependent zeta_g,
zeta_g*) on a declared ball {||x|| <= R_x, ||y|| <= R_y} (FedBilevel.ball). Whether a run stayed in it is
only known afterwards: every FedBiO-type algorithm records the running maxima of ||x_t^(m)|| and
||y_t^(m)|| (info ``max_x_norm``, ``max_y_norm``; exact runs have no iterates and record nothing). Every
registered FedBiO claim is wrapped by ``ball_checked``: its evidence carries the check per grid point and
its reason says when the iterates left the ball. A claim whose verdict uses constants taken on the ball
(``decisive=True``) is downgraded from PASS to INCONCLUSIVE on such a run; the registered claims compare
exponents and limits that do not involve C_f, so for them leaving the ball is reported, not decisive.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from ratecheck.claims import Claim, PointResult, Verdict, with_gates
from ratecheck.inspection import problem_of


def ball_evidence(points: Sequence[PointResult]) -> dict[str, Any]:
    """Per point: the ball (R_x, R_y) and the largest visited ||x||, ||y|| (None on exact runs)."""
    rows, left, unchecked = [], [], 0
    for p in points:
        info = p.trace.info if p.trace is not None else {}
        problem = problem_of(p.config)
        measured = [info.get("max_x_norm"), info.get("max_y_norm")]
        # exact runs carry no iterates (their monitors come back NaN): nothing to check
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in measured) or not hasattr(problem, "ball"):
            unchecked += 1
            continue
        R_x, R_y = problem.ball
        row = {"value": p.value, "algorithm": p.config.algorithm, "max_x": float(info["max_x_norm"]), "R_x": R_x,
               "max_y": float(info["max_y_norm"]), "R_y": R_y}
        row["inside"] = row["max_x"] <= R_x and row["max_y"] <= R_y
        rows.append(row)
        if not row["inside"]:
            left.append(f"{p.config.algorithm} at {p.value:g}: max ||x|| {row['max_x']:.3g} (R_x {R_x:.3g}), "
                        f"max ||y|| {row['max_y']:.3g} (R_y {R_y:.3g})")
    return {"points": rows, "left": left, "unchecked": unchecked}


@dataclasses.dataclass(frozen=True)
class BallGate:
    """A gate (ratecheck.claims.with_gates): after the claim's own decision, add the ball check (see the
    module docstring); ``decisive`` downgrades a PASS to INCONCLUSIVE when the iterates left the ball."""

    decisive: bool = False

    def __call__(self, claim: Claim, points: Sequence[PointResult], verdict: Verdict, reason: str,
                 evidence: dict[str, Any]) -> tuple[Verdict, str, dict[str, Any]]:
        check = ball_evidence(points)
        evidence = {**evidence, "C_f_ball": check}
        if check["left"]:
            reason = (f"{reason}; the iterates LEFT the ball on which C_f, zeta_g, zeta_g* are taken: "
                      f"{'; '.join(check['left'])}")
            if self.decisive and verdict == Verdict.PASS:
                return Verdict.INCONCLUSIVE, f"constants on the ball do not hold for this run: {reason}", evidence
        return verdict, reason, evidence


def ball_checked(claim: Claim, decisive: bool = False) -> Claim:
    """The same claim (same id and fields) deciding with the after-run ball check as an extra gate."""
    return with_gates(claim, BallGate(decisive))
