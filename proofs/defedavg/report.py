"""DeFedAvg report page: rates (paper, derived, measured), errata, delays and wall clock."""

from __future__ import annotations

from .claims import T1_SPEEDUP_N, T2_RATE_T, T2_SPEEDUP_N
from .theorems import THEOREM_1, THEOREM_2


# --------------------------------------------------------------------------------------------
# Report: the paper's rate statements next to the sympy-derived and the measured exponents.

_RATE_ROWS = (
    # (paper's statement, theorem, variable, bound version, slope claim measuring it)
    ("Thm 2: M_T = O(1/sqrt(nKT) + 1/(KT)), speedup in n", THEOREM_2, "n", "corrected", T2_SPEEDUP_N),
    ("Thm 2: same, rate in T", THEOREM_2, "T", "corrected", T2_RATE_T),
    ("Thm 1: M_T = O(1/sqrt(nT) + 1/(KT)), speedup in n", THEOREM_1, "n", "stated", T1_SPEEDUP_N),
    ("Thm 1: leading term does not improve with K", THEOREM_1, "K", "stated", None),
)


def report_sections(outcomes) -> list[tuple[str, str]]:
    """Rates (paper, derived, measured) and the errata of spec §4.7 that the claims test."""
    by_id = {o.claim.id: o for o in outcomes}
    lines = ["| statement | derived order (sympy, leading term in T) | measured slope (95% CI) | verdict |",
             "|---|---|---|---|"]
    for text, theorem, var, version, claim in _RATE_ROWS:
        derived = theorem.order(var, version=version, dominant_in="T")
        outcome = by_id.get(claim.id) if claim is not None else None
        fit = outcome.evidence.get("fit") if outcome is not None else None
        measured = f"{fit['slope']:+.3f} [{fit['ci_low']:+.3f}, {fit['ci_high']:+.3f}]" if fit else "not measured"
        verdict = str(outcome.verdict) if outcome is not None else "-"
        lines.append(f"| {text} | {derived} in {var} ({version} bound) | {measured} | {verdict} |")
    errata = [
        "eq. (3): the FedAvg server step has the wrong sign; the package implements w + (eta/n) sum (w_i - w) "
        "(spec §2.4).",
        "eq. (14): the main-text bound lacks L sigma^2 and the appendix bound lacks sigma^2 in the leading "
        "term; tested by defedavg.T2.bound_main_text and defedavg.T2.bound_appendix (expected FAIL).",
        "eq. (46): the last '=' should be '<=': the general form at the schedule gives 10 sqrt(Delta A1/(nKT)), "
        "the stated (12) has 32 (valid, 3.2x loose); checked symbolically in tests/test_defedavg_theory.py.",
        "Theorems 1-2 say 'for T >= 1' but (11)/(13) at the prescribed step sizes force T >= T1_min/T2_min: "
        "the claims report each condition's margin and refuse a verdict where one fails.",
    ]
    return [("Rates: paper, derived, measured", "\n".join(lines)),
            ("Errata of the paper covered here", "\n".join(f"- {e}" for e in errata))]


