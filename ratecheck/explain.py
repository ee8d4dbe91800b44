"""A readable account of a claim's outcome, shared by the CLI, pytest and the report.

Kept apart from the pytest plugin so the command line never needs pytest installed.
"""

from __future__ import annotations

from .claims import Outcome


def describe(outcome: Outcome) -> str:
    """A human-readable account of an outcome: claim, expected, measured, CI, evidence."""
    claim = outcome.claim
    lines = [
        f"claim {claim.id}: {claim.title}",
        f"  paper says: {claim.statement}  [{claim.source}]",
        f"  expected {claim.expect}, measured {outcome.verdict}: {outcome.reason}",
    ]
    if claim.expect_reason:
        lines.append(f"  why this expectation: {claim.expect_reason}")
    fit = outcome.evidence.get("fit")
    if fit:
        lines.append(
            f"  fitted slope {fit['slope']:+.4f}, CI [{fit['ci_low']:+.4f}, {fit['ci_high']:+.4f}], "
            f"R^2 {fit['r2']:.4f}; expected {outcome.evidence['expected_exponent']:+.4f} "
            f"({outcome.evidence['expected_from']}) +- {outcome.evidence['tolerance']}"
        )
    for row in outcome.evidence.get("rows", []):
        if "bound" in row:
            lines.append(
                f"    {claim.vary}={row['value']:g}: mean {row['mean']:.4g} (UCB {row['ucb']:.4g}) "
                f"vs bound {row['bound']:.4g}  ratio {row['ratio']:.3g}"
            )
        elif "distance" in row:
            lines.append(
                f"    {claim.vary}={row['value']:g}: distance {row['distance']:.4g} "
                f"CI [{row['low']:.4g}, {row['high']:.4g}]"
            )
    for p in outcome.points:
        if fit is None and "rows" in outcome.evidence:
            break
        mean = float(p.samples.mean()) if p.samples.size else float("nan")
        broken = [c.name for c in p.evaluation.conditions if not c.holds] if p.evaluation else []
        note = f"; conditions violated: {broken}" if broken else ""
        lines.append(f"    {claim.vary}={p.value:g}: mean {mean:.4g} over {p.samples.size} replicas{note}")
    return "\n".join(lines)
