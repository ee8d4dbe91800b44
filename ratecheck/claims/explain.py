"""A readable account of a claim's outcome, shared by the CLI, pytest and the report.

Kept apart from the pytest plugin so the command line never needs pytest installed. ``describe``
gives the full account of one outcome; ``observation_lines`` the one-line form of observations
(numbers with no verdict) for a summary under the verdict table.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import Outcome


def _fit_line(outcome: Outcome) -> str | None:
    fit = outcome.evidence.get("fit")
    if not fit:
        return None
    ev = outcome.evidence
    ci = ("deterministic" if fit.get("deterministic") else
          f"{int(round(fit['level'] * 100))}% CI [{fit['ci_low']:+.4f}, {fit['ci_high']:+.4f}]")
    side = ev.get("side", "two-sided")
    cap = {"at_most": "at most", "at_least": "at least"}.get(side, "")
    expected = f"{cap + ' ' if cap else ''}{ev['expected_exponent']:+.4f} ({ev['expected_from']}) +- {ev['tolerance']}"
    curv = fit.get("curvature")
    curv_text = f", local-slope change {curv:+.3f}" if curv is not None else ""
    return (f"  fitted slope {fit['slope']:+.4f}, {ci}, R^2 {fit['r2']:.4f}, {len(fit['x'])} points over "
            f"{fit['decades']:.2f} decades{curv_text}; expected {expected}")


def describe(outcome: Outcome) -> str:
    """A human-readable account of an outcome: claim, expected, measured, CI, evidence."""
    claim = outcome.claim
    lines = [
        f"claim {claim.id}: {claim.title}",
        f"  paper says: {claim.statement}  [{claim.source}]",
    ]
    if outcome.observation:
        lines.append(f"  observation (no verdict): {outcome.reason}")
    else:
        lines.append(f"  expected {claim.expect}, measured {outcome.verdict}: {outcome.reason}")
    if claim.expect_reason:
        lines.append(f"  why this expectation: {claim.expect_reason}")
    if claim.controls is not None:
        controlled = outcome.evidence.get("controlled", {})
        lines.append(f"  negative control of {claim.controls.id}"
                     + (f" (which measured {controlled['verdict']})" if controlled else ""))
    fit_line = _fit_line(outcome)
    if fit_line:
        lines.append(fit_line)
    if outcome.evidence.get("design_reason"):
        lines.append(f"  grid design: {outcome.evidence['design_reason']}")
    rows = outcome.evidence.get("rows", [])
    for row in rows:
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
        elif "rate" in row:
            extra = f", theorem {row['guaranteed']:.4g}" if "guaranteed" in row else ""
            extra += f", spectral limit {row['asymptotic']:.4g}" if "asymptotic" in row else ""
            lines.append(
                f"    {claim.vary}={row['value']:g}: log-contraction/round {row['rate']:.5g} over rounds "
                f"{row['window'][0]:g}-{row['window'][1]:g} vs exact {row['exact']:.5g}{extra}"
            )
    if fit_line is None and not rows:
        for p in outcome.points:
            mean = float(p.samples.mean()) if p.samples.size else float("nan")
            broken = [c.name for c in p.evaluation.conditions if not c.holds] if p.evaluation else []
            note = f"; conditions violated: {broken}" if broken else ""
            lines.append(f"    {claim.vary}={p.value:g}: mean {mean:.4g} over {p.samples.size} replicas{note}")
    return "\n".join(lines)


def observation_lines(outcomes: Sequence[Outcome]) -> list[str]:
    """One line per observation: 'id: quantity: name = value, ...' (for the CLI under its table)."""
    out = []
    for o in outcomes:
        if o.observation:
            values = ", ".join(f"{k} = {v:.4g}" for k, v in o.evidence.get("observed", {}).items())
            out.append(f"{o.claim.id}: {o.evidence.get('quantity', '')}: {values}")
    return out
