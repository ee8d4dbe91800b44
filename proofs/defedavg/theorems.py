"""DeFedAvg's theorems (sympy, sourced): "Achieving Linear Speedup in Asynchronous Federated Learning with Heterogeneous Clients".

Paper: ../shared/seeds/003_2fcc6b9d543c5aab.txt (arXiv:2402.11198v1, Wang, Li, Jin, Zhang 2024).
Spec:  ../shared/spec/defedavg.md (§4.1 Theorem 1, §4.2 Theorem 2, §4.7 errata, §6 test problems).

The paper's delay bound is lambda (``lam``); the package's run parameter for it is the delay schedule.
Theorem symbols: n clients per round, K local steps, T rounds, eta global and etabar local step.
"""

from __future__ import annotations

import sympy as sp

from ratecheck.assumptions import (
    FEDERATED,
    bounded_gradient,
    bounded_variance,
    heterogeneity,
    initial_gap,
    smooth,
)
from ratecheck.theory import Bound, Condition, Source, Theorem

KEY = "defedavg"
TITLE = "DeFedAvg (arXiv:2402.11198): linear speedup in asynchronous FL"
SEED = "003_2fcc6b9d543c5aab.txt (arXiv:2402.11198v1)"


src = Source.of(SEED)  # src("Theorem 2, eq. (14)", note) cites this paper


L, sigma, nu, G, Delta = sp.symbols("L sigma nu G Delta", positive=True)
n, K, T, lam = sp.symbols("n K T lam", positive=True)
eta, etabar = sp.symbols("eta etabar", positive=True)

# --------------------------------------------------------------------------------------------
# Theorem 1 (DeFedAvg-nIID), eqs. (11)-(12); general form from the proof, eq. (46) first line.

A1 = 4 * sigma**2 * L + 2 * L * K * G**2
THEOREM_1 = Theorem(
    requires=FEDERATED.assume(smooth("L"), bounded_variance("sigma"), heterogeneity("nu"), bounded_gradient("G"),
                              initial_gap("Delta")),
    id="defedavg.theorem1",
    title="Theorem 1: DeFedAvg-nIID, non-IID, uniform sampling with replacement",
    source=src("Theorem 1, eqs. (11)-(12)"),
    measure="avg:grad_norm_sq",
    constants=(L, sigma, nu, G, Delta),
    parameters=(n, K, T, lam, eta, etabar),
    assumptions=("A1 L-smooth clients", "A2 unbiased", "A3 variance sigma^2", "A4 delay <= lambda",
                 "A5 heterogeneity nu^2", "A6 E||grad F_i||^2 <= G^2 at iterates"),
    schedule={
        eta: sp.sqrt(4 * n * K * Delta),
        # the LaTeX reads 1/sqrt((4 sigma^2 L + 2 L K G^2) T) K; the proof needs K in the denominator
        etabar: 1 / (K * sp.sqrt(A1 * T)),
    },
    conditions=(
        Condition("etabar <= 1/(8LK)", etabar <= 1 / (8 * L * K), src("Theorem 1, eq. (11)")),
        Condition("eta etabar <= 1/(4LK lam)", eta * etabar <= 1 / (4 * L * K * lam), src("Theorem 1, eq. (11)")),
        Condition(
            "eta etabar <= (2 sigma^2 + G^2 K)/(8 sigma^2 L K lam + 4 L G^2 K^2 lam^2)",
            eta * etabar <= (2 * sigma**2 + G**2 * K) / (8 * sigma**2 * L * K * lam + 4 * L * G**2 * K**2 * lam**2),
            src("Theorem 1, eq. (11)", "second entry of the min"),
        ),
    ),
    bounds=(
        Bound(
            "stated",
            sp.sqrt(256 * Delta * (16 * sigma**2 * L + 8 * L * G**2 * K) / (n * K * T))
            + 8 * L**2 * (sigma**2 + 8 * K * nu**2) / (A1 * K * T),
            src("Theorem 1, eq. (12)"),
            "valid but 3.2x loose in the leading constant: the last '=' of (46) should be '<=' (spec §4.7 item 3)",
        ),
        Bound(
            "general",
            4 * Delta / (K * T * eta * etabar)
            + (16 * sigma**2 * L + 8 * L * G**2 * K) * eta * etabar / n
            + 8 * L**2 * K * (sigma**2 + 8 * K * nu**2) * etabar**2,
            src("proof of Theorem 1, eq. (46) first line", "holds for any step sizes satisfying (11)"),
        ),
    ),
)

# --------------------------------------------------------------------------------------------
# Theorem 2 (DeFedAvg-IID), eqs. (13)-(14) and Appendix A.2.2.

THEOREM_2 = Theorem(
    requires=FEDERATED.assume(smooth("L"), bounded_variance("sigma"), initial_gap("Delta")),
    id="defedavg.theorem2",
    title="Theorem 2: DeFedAvg-IID, first-n arrivals",
    source=src("Theorem 2, eqs. (13)-(14)"),
    measure="avg:grad_norm_sq",
    constants=(L, sigma, Delta),
    parameters=(n, K, T, lam, eta, etabar),
    assumptions=("A1 L-smooth clients", "A2 unbiased", "A3 variance sigma^2", "A4 delay <= lambda"),
    schedule={eta: sp.sqrt(n * K * Delta / 2), etabar: 1 / (K * sp.sqrt(sigma**2 * L * T))},
    conditions=(
        Condition("etabar <= 1/(4 sqrt(3) L K)", etabar <= 1 / (4 * sp.sqrt(3) * L * K), src("Theorem 2, eq. (13)")),
        Condition("eta etabar <= 1/(4LK lam)", eta * etabar <= 1 / (4 * L * K * lam), src("Theorem 2, eq. (13)")),
    ),
    bounds=(
        Bound(
            "main_text",
            sp.sqrt(128 * Delta / (n * K * T)) + 8 * L / (K * T),
            src("Theorem 2, eq. (14), main text"),
            "missing L sigma^2 in the leading term: dimensionally wrong (spec §4.7 item 4)",
            # seed line 281, eq. (14), with F(w^0) - F^* written Delta
            printed=r"\sqrt{\frac{128\Delta}{nKT}}+\frac{8L}{KT}",
        ),
        Bound(
            "appendix",
            sp.sqrt(128 * L * Delta / (n * K * T)) + 8 * L / (K * T),
            src("Appendix A.2.2, end of the proof of Theorem 2"),
            "missing sigma^2 in the leading term (spec §4.7 item 4)",
            # seed line 849, the last line of the proof, with F(w^0) - F^* written Delta
            printed=r"\sqrt{\frac{128L\Delta}{nKT}}+\frac{8L}{KT}",
        ),
        Bound(
            "corrected",
            sp.sqrt(128 * L * sigma**2 * Delta / (n * K * T)) + 8 * L / (K * T),
            src("Appendix A.2.2, general form at the prescribed step sizes", "derived in spec §4.2"),
            "what the proof shows: both halves of the leading term equal sqrt(32 L sigma^2 Delta/(nKT))",
        ),
        Bound(
            "general",
            4 * Delta / (K * T * eta * etabar) + 8 * L * sigma**2 * eta * etabar / n + 8 * L**2 * K * sigma**2 * etabar**2,
            src("Appendix A.2.2, sum of eq. (52) over t", "holds for any step sizes satisfying (13)"),
        ),
    ),
)

THEOREMS = (THEOREM_1, THEOREM_2)




# --------------------------------------------------------------------------------------------
# What the conditions and the bounds imply (spec §4.1-§4.2), derived here rather than typed in.

N_total, eps, delta = sp.symbols("N epsilon delta", positive=True)


def _t_min(theorem: Theorem) -> list[sp.Expr]:
    """Each step-size condition at the prescribed schedule, solved for T (T >= the returned value).

    Every condition has the form lhs <= rhs with lhs decreasing like T^(-1/2) in T, so the boundary
    lhs = rhs has one positive root.
    """
    out = []
    schedule = {sym: expr for sym, expr in theorem.schedule.items()}
    for condition in theorem.conditions:
        lhs = condition.lhs.subs(schedule)
        rhs = condition.rhs.subs(schedule)
        roots = [r for r in sp.solve(sp.Eq(lhs, rhs), T) if r.is_positive is not False]
        out.append(sp.simplify(roots[0]))
    return out


def t1_min() -> sp.Expr:
    """T1_min: the largest T that conditions (11) require at Theorem 1's step sizes (sympy)."""
    return sp.Max(*_t_min(THEOREM_1))


def t2_min() -> sp.Expr:
    """T2_min: the same for conditions (13) at Theorem 2's step sizes."""
    return sp.Max(*_t_min(THEOREM_2))


# the spec's closed forms, to compare with the derivation (tests/test_defedavg_theory.py)
T1_MIN_SPEC = sp.Max(32 * L / (G**2 * K + 2 * sigma**2),
                     32 * n * K * L * Delta * lam**2 / (G**2 * K + 2 * sigma**2),
                     32 * n * K * L * Delta * lam**2 * (G**2 * K * lam + 2 * sigma**2) ** 2 / (G**2 * K + 2 * sigma**2) ** 3)
T2_MIN_SPEC = sp.Max(48 * L / sigma**2, 8 * n * K * L * Delta * lam**2 / sigma**2)


def at_schedule(theorem: Theorem, version: str = "general") -> sp.Expr:
    """A bound with the theorem's step sizes substituted (the general form: what the proof shows)."""
    return sp.simplify(theorem.bound(version).expr.subs(theorem.schedule))


# Theorem 1's general form at its schedule is 10 sqrt(Delta A1/(nKT)) + ...: the stated (12) has 32
T1_AT_SCHEDULE = 10 * sp.sqrt(Delta * A1 / (n * K * T)) + 8 * L**2 * (sigma**2 + 8 * K * nu**2) / (A1 * K * T)


def rate(theorem: Theorem, version: str) -> dict[str, sp.Expr]:
    """The bound at the schedule as a sum of terms, each with its order in n, K and T (sympy).

    Theorem 1 gives O(1/sqrt(nT) + 1/(KT)) when G^2 K dominates sigma^2, Theorem 2
    O(1/sqrt(nKT) + 1/(KT)): the exponents (as each variable -> oo) come out of the expression.
    """
    terms = sp.Add.make_args(theorem.bound(version).expr.subs(theorem.schedule))
    out = {}
    for term in terms:
        orders = tuple(sp.simplify(sp.limit(sp.diff(sp.log(term), v) * v, v, sp.oo)) for v in (n, K, T))
        out[str(term)] = orders
    return out


# Max delay under uniform sampling (the paper's citation [19, Thm 5.2]): order only, constant unknown
P_SELECT = 1 - ((N_total - 1) / N_total) ** n
LAMBDA_WHP_ORDER = (1 / P_SELECT) * (1 + sp.log(N_total * T / delta))
